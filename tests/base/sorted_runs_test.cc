// SortRuns merges a few sorted runs; its result must be std::sort's for a total order,
// and stable_sort's where keys tie (runs keep equal elements in input order).
#include "base/sorted_runs.h"

#include <gtest/gtest.h>

#include <random>
#include <utility>
#include <vector>

namespace torch2pprof {
namespace {

// `runs` ascending runs of random values, concatenated; keys from a small range so
// that many tie, each tagged with its input position.
std::vector<std::pair<int, int>> Runs(std::mt19937& rng, int runs, int per_run, int keys) {
  std::vector<std::pair<int, int>> v;
  for (int r = 0; r < runs; ++r) {
    std::vector<int> run(static_cast<size_t>(per_run));
    for (int& x : run) x = static_cast<int>(rng() % static_cast<unsigned>(keys));
    std::sort(run.begin(), run.end());
    for (int x : run) v.push_back({x, static_cast<int>(v.size())});
  }
  return v;
}

TEST(SortRuns, FewRunsGiveStableSortsOrder) {
  std::mt19937 rng(7);
  auto by_key = [](const std::pair<int, int>& a, const std::pair<int, int>& b) { return a.first < b.first; };
  for (int runs : {1, 2, 3, 5, 16}) {
    for (int keys : {3, 1000}) {
      auto v = Runs(rng, runs, 200, keys);
      auto want = v;
      std::stable_sort(want.begin(), want.end(), by_key);
      SortRuns(v.begin(), v.end(), by_key);
      EXPECT_EQ(v, want) << runs << " runs, " << keys << " keys";
    }
  }
}

TEST(SortRuns, ManyRunsAndTotalOrdersGiveSortsOrder) {
  std::mt19937 rng(11);
  for (int runs : {3, 17, 400}) {  // past max_runs: std::sort itself
    auto v = Runs(rng, runs, 50, 1000000);
    auto want = v;
    std::sort(want.begin(), want.end());
    SortRuns(v.begin(), v.end(), std::less<>());
    EXPECT_EQ(v, want) << runs << " runs";
  }
  std::vector<int> empty, one = {5};
  SortRuns(empty.begin(), empty.end(), std::less<>());
  SortRuns(one.begin(), one.end(), std::less<>());
  EXPECT_TRUE(empty.empty());
  EXPECT_EQ(one, std::vector<int>{5});
}

}  // namespace
}  // namespace torch2pprof
