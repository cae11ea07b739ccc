// The repair of python_function spans that outlive their Python parent; by hand.
#include "load/python_spans.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "convert/aggregator.h"
#include "test_util.h"
#include "torch2pprof/output.h"
#include "torch2pprof/stages/trace_loader.h"

namespace torch2pprof {
namespace {

constexpr uint32_t kNone = PythonSpan::kNotAnInterval;

TEST(PythonSpans, AChildThatOutlivesItsParentEndsWithIt) {
  // root [0,100); mid [10,50) under it; late [20,187) under mid (lm_compile's __exit__);
  // after [60,70) under mid starts after mid's end; its child goes with it.
  std::vector<PythonSpan> spans = {
      {0, 0, 1, -1, 0, 100}, {0, 1, 2, 1, 10, 50}, {0, 2, 3, 2, 20, 187}, {0, 3, 4, 2, 60, 70}, {0, 4, 5, 4, 61, 62},
  };
  PythonRepair r = RepairPythonSpans(spans);
  EXPECT_EQ(r.clipped, (std::vector<std::pair<uint32_t, int64_t>>{{2, 50}}));
  EXPECT_EQ(r.dropped, (std::vector<uint32_t>{3, 4}));
}

TEST(PythonSpans, ParentsAreRepairedBeforeTheirChildrenAtAnyDepth) {
  // A chain listed children first: each clip runs down the chain.
  std::vector<PythonSpan> spans;
  const int depth = 50000;
  for (int i = depth - 1; i >= 0; --i) {
    spans.push_back({0, static_cast<uint32_t>(i), i + 1, i == 0 ? -1 : i, i, i == 0 ? 10 : 1000000 + i});
  }
  PythonRepair r = RepairPythonSpans(spans);
  // Spans 1..9 end at 10 (the root's end); 10 and deeper start at or after it: dropped.
  EXPECT_EQ(r.clipped.size(), 9u);
  for (const auto& [i, end] : r.clipped) EXPECT_EQ(end, 10) << i;
  EXPECT_EQ(r.dropped.size(), static_cast<size_t>(depth - 10));
}

TEST(PythonSpans, ParentsAreFoundOnTheSameLaneOnly) {
  // Python id 1 on lane 0 and on lane 1; the child on lane 1 belongs to lane 1's.
  std::vector<PythonSpan> spans = {{0, 0, 1, -1, 0, 10}, {1, 1, 1, -1, 0, 100}, {1, 2, 2, 1, 50, 60}};
  PythonRepair r = RepairPythonSpans(spans);
  EXPECT_TRUE(r.clipped.empty());
  EXPECT_TRUE(r.dropped.empty());
}

// Ids are looked up in a table when a lane's ids are dense (Kineto's 1, 2, 3, ...) and
// in a map when they are not: the same spans with ids spread out repair the same way,
// and in both the last span written with an id is the parent.
TEST(PythonSpans, DenseAndSparseIdsRepairAlike) {
  auto spans_with = [](int64_t scale) {
    auto id = [&](int64_t i) { return i < 0 ? i : i * scale; };
    return std::vector<PythonSpan>{
        {0, 0, id(1), id(-1), 0, 100}, {0, 1, id(2), id(1), 10, 50}, {0, 2, id(3), id(2), 20, 187},
        {0, 3, id(4), id(2), 60, 70},  {0, 4, id(5), id(4), 61, 62}, {1, 5, id(1), id(-1), 0, 30},
        {1, 6, id(1), id(-1), 40, 45}, {1, 7, id(6), id(1), 41, 90},  // lane 1: id 1 twice, the later one is the parent
    };
  };
  PythonRepair dense = RepairPythonSpans(spans_with(1));
  PythonRepair sparse = RepairPythonSpans(spans_with(int64_t{1} << 40));
  std::vector<std::pair<uint32_t, int64_t>> clipped = {{2, 50}, {7, 45}};
  EXPECT_EQ(dense.clipped, clipped);
  EXPECT_EQ(dense.dropped, (std::vector<uint32_t>{3, 4}));
  EXPECT_EQ(sparse.clipped, dense.clipped);
  EXPECT_EQ(sparse.dropped, dense.dropped);
}

// The same forest of spans under three numberings of its ids: one run per lane
// (Kineto's), a few runs per lane far apart (threads that take turns; tiled traces: a
// table in blocks), and ids spread thin (a map). Every repair is the same.
TEST(PythonSpans, IdsInRunsOrSpreadRepairAsDenseOnes) {
  std::mt19937 rng(11);
  constexpr int kLanes = 3, kPerLane = 20000;
  struct Span {
    uint32_t lane;
    int k, parent;  // per lane; parent -1: a root
    int64_t start, end;
  };
  std::vector<Span> forest;
  std::vector<std::vector<size_t>> of_lane(kLanes);
  for (int i = 0; i < kLanes * kPerLane; ++i) {
    const uint32_t lane = rng() % kLanes;
    auto& mine = of_lane[lane];
    const int k = static_cast<int>(mine.size());
    const int parent = k == 0 || rng() % 8 == 0 ? -1 : static_cast<int>(rng() % static_cast<unsigned>(k));
    const int64_t start = parent < 0
                              ? int64_t{k} * 1000
                              : forest[mine[static_cast<size_t>(parent)]].start + static_cast<int64_t>(rng() % 500);
    forest.push_back({lane, k, parent, start, start + 1 + static_cast<int64_t>(rng() % 700)});  // some outlive it
    mine.push_back(forest.size() - 1);
  }
  auto numbered = [&](auto id) {
    std::vector<PythonSpan> spans;
    for (size_t i = 0; i < forest.size(); ++i) {
      const Span& f = forest[i];
      spans.push_back({f.lane, static_cast<uint32_t>(i), id(f.k), f.parent < 0 ? -1 : id(f.parent), f.start, f.end});
    }
    return spans;
  };
  PythonRepair dense = RepairPythonSpans(numbered([](int k) { return int64_t{k} + 1; }));
  PythonRepair runs = RepairPythonSpans(numbered([](int k) { return int64_t{k} + 1 + (k / 5000) * 3'000'007; }));
  PythonRepair spread = RepairPythonSpans(numbered([](int k) { return (int64_t{k} + 1) << 30; }));
  // By hand: parents come before their children, so one pass in order repairs them.
  std::vector<std::pair<uint32_t, int64_t>> clipped;
  std::vector<uint32_t> dropped;
  std::vector<int64_t> end(forest.size());
  constexpr int64_t kDropped = INT64_MIN;
  for (size_t i = 0; i < forest.size(); ++i) {
    const Span& f = forest[i];
    end[i] = f.end;
    if (f.parent >= 0) {
      const int64_t pe = end[of_lane[f.lane][static_cast<size_t>(f.parent)]];
      if (pe == kDropped || f.start >= pe) {
        end[i] = kDropped;
      } else {
        end[i] = std::min(f.end, pe);
      }
    }
    if (end[i] == kDropped) {
      dropped.push_back(static_cast<uint32_t>(i));
    } else if (end[i] != f.end) {
      clipped.push_back({static_cast<uint32_t>(i), end[i]});
    }
  }
  ASSERT_GT(clipped.size(), 1000u);
  ASSERT_GT(dropped.size(), 1000u);
  EXPECT_EQ(dense.clipped, clipped);
  EXPECT_EQ(dense.dropped, dropped);
  EXPECT_EQ(runs.clipped, dense.clipped);
  EXPECT_EQ(runs.dropped, dense.dropped);
  EXPECT_EQ(spread.clipped, dense.clipped);
  EXPECT_EQ(spread.dropped, dense.dropped);
}

TEST(PythonSpans, AParentThatIsNoIntervalStillBounds) {
  // A zero-length parent ends where it starts: its children are dropped.
  std::vector<PythonSpan> spans = {{0, kNone, 1, -1, 5, 5}, {0, 0, 2, 1, 5, 9}};
  PythonRepair r = RepairPythonSpans(spans);
  EXPECT_EQ(r.dropped, (std::vector<uint32_t>{0}));
}

TEST(PythonSpans, ACycleOfParentIdsEnds) {
  // Each names the other as parent: the walk ends, taking the one where it closes the
  // cycle (the second) as a root; the first then ends inside it and keeps its end.
  std::vector<PythonSpan> spans = {{0, 0, 1, 2, 0, 10}, {0, 1, 2, 1, 0, 20}};
  PythonRepair r = RepairPythonSpans(spans);
  EXPECT_TRUE(r.clipped.empty());
  EXPECT_TRUE(r.dropped.empty());
}

TEST(PythonSpans, TheLoaderRepairsCountsAndWarns) {
  Trace t = testing::LoadText(R"json([
    {"ph": "X", "cat": "python_function", "name": "a.py(1): f", "pid": 1, "tid": 1, "ts": 0, "dur": 10, "args": {"Python id": 1, "Python parent id": null}},
    {"ph": "X", "cat": "python_function", "name": "a.py(2): g", "pid": 1, "tid": 1, "ts": 5, "dur": 100, "args": {"Python id": 2, "Python parent id": 1}},
    {"ph": "X", "cat": "python_function", "name": "a.py(3): h", "pid": 1, "tid": 1, "ts": 12, "dur": 3, "args": {"Python id": 3, "Python parent id": 1}},
    {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans", "tid": "PyTorch Profiler", "ts": 0, "dur": 200}])json");
  ASSERT_EQ(t.intervals.size(), 2u);
  EXPECT_EQ(t.intervals[1].end_ns, 10000);  // g ends with f
  EXPECT_EQ(t.stats.python_clipped, 1u);
  EXPECT_EQ(t.stats.skipped[static_cast<int>(Skip::kPythonAfterParent)], 1u);
  EXPECT_EQ(t.stats.skipped[static_cast<int>(Skip::kProfilerSpan)], 1u);
  std::vector<std::string> w = LoadWarnings(t);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("2 python_function events outlived their Python parent: 1 now end with it, 1 that began "
                      "after it were dropped"),
            std::string::npos)
      << w[0];
  // The profile says so too, and no rest of g becomes a root frame.
  auto d = testing::DecodeProfile(Gzip(EncodeProfile(Aggregate(t))));
  bool said = false;
  for (const std::string& c : d.comments)
    said |= c.find("clipped to their Python parent's end: 1") != std::string::npos;
  EXPECT_TRUE(said);
  EXPECT_EQ(d.stacks.size(), 2u);  // f, f;g
}

}  // namespace
}  // namespace torch2pprof
