// Union against a count of covered instants on a small grid: the oracle never sorts, so
// it holds for the merge of a few sorted runs and for the merge sort of many alike.
#include "analysis/spans.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace torch2pprof::analysis {
namespace {

constexpr int64_t kGrid = 600;

// `runs` ascending runs of spans, one after another (as a trace's lanes come in file
// order), some empty or reversed (dropped by Union).
Spans MakeRuns(std::mt19937_64& rng, int runs, int per_run) {
  Spans v;
  for (int r = 0; r < runs; ++r) {
    int64_t start = static_cast<int64_t>(rng() % 50);
    for (int i = 0; i < per_run && start < kGrid; ++i) {
      const int64_t len = static_cast<int64_t>(rng() % 30) - 3;  // a few empty or reversed
      v.emplace_back(start, start + len);
      start += static_cast<int64_t>(rng() % 20);
    }
  }
  return v;
}

TEST(Spans, UnionCoversWhatItsSpansCoverWhateverTheirRuns) {
  std::mt19937_64 rng(7);
  for (int runs : {1, 2, 5, 16, 17, 40, 300}) {
    for (int trial = 0; trial < 20; ++trial) {
      const Spans v = MakeRuns(rng, runs, 1 + static_cast<int>(rng() % 40));
      std::vector<bool> covered(kGrid + 64, false);
      for (const auto& [s, e] : v) {
        for (int64_t t = s; t < e; ++t) covered[static_cast<size_t>(t)] = true;
      }
      const Spans u = Union(v);
      std::vector<bool> from_union(kGrid + 64, false);
      for (size_t i = 0; i < u.size(); ++i) {
        ASSERT_LT(u[i].first, u[i].second) << "runs " << runs;
        if (i > 0) {
          ASSERT_LT(u[i - 1].second, u[i].first) << "sorted, disjoint, not touching";
        }
        for (int64_t t = u[i].first; t < u[i].second; ++t) from_union[static_cast<size_t>(t)] = true;
      }
      ASSERT_EQ(from_union, covered) << "runs " << runs << " trial " << trial;
    }
  }
}

}  // namespace
}  // namespace torch2pprof::analysis
