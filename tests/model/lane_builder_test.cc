// Nesting by time containment, tie rules, and the splitting of partial overlaps;
// expectations computed by hand from the intervals in each test.
#include "model/lane_builder.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <stdexcept>
#include <thread>

#include "test_util.h"

namespace torch2pprof {
namespace {

using testing::LoadText;

// "name[start,end) self=N parent=name" per piece, in order.
std::vector<std::string> Describe(const Trace& t, const LaneStacks& ls) {
  std::vector<std::string> out;
  for (const Piece& p : ls.pieces) {
    std::string parent =
        p.parent < 0 ? "-" : std::string(t.strings.Get(t.intervals[ls.pieces[p.parent].interval].name));
    out.push_back(std::string(t.strings.Get(t.intervals[p.interval].name)) + "[" + std::to_string(p.start_ns / 1000) +
                  "," + std::to_string(p.end_ns / 1000) + ") self=" + std::to_string(p.self_ns / 1000) +
                  " parent=" + parent + (p.first ? "" : " (rest)"));
  }
  return out;
}

std::string X(const char* name, int ts, int dur, int tid = 1) {
  return std::string(R"({"ph": "X", "name": ")") + name + R"(", "pid": 1, "tid": )" + std::to_string(tid) +
         ", \"ts\": " + std::to_string(ts) + ", \"dur\": " + std::to_string(dur) + "}";
}

std::string Trace_(std::initializer_list<std::string> events) {
  std::string s = "[";
  for (const auto& e : events) s += (s.size() > 1 ? "," : "") + e;
  return s + "]";
}

TEST(LaneBuilder, NestsByContainmentRegardlessOfFileOrder) {
  Trace t = LoadText(Trace_({X("child", 2, 3), X("parent", 0, 10), X("sibling", 6, 2), X("next", 12, 1)}));
  auto lanes = BuildLanes(t);
  ASSERT_EQ(lanes.size(), 1u);
  EXPECT_EQ(Describe(t, lanes[0]), (std::vector<std::string>{
                                       "parent[0,10) self=5 parent=-",
                                       "child[2,5) self=3 parent=parent",
                                       "sibling[6,8) self=2 parent=parent",
                                       "next[12,13) self=1 parent=-",
                                   }));
  EXPECT_EQ(lanes[0].busy_ns, 11000);
  EXPECT_EQ(lanes[0].intervals, 4u);
  EXPECT_EQ(lanes[0].partial_overlaps, 0u);
}

TEST(LaneBuilder, IdenticalIntervalsNestInFileOrder) {
  // Kineto writes the caller first: aten::to, then aten::_to_copy with the same interval.
  Trace t = LoadText(Trace_({X("aten::to", 5, 4), X("aten::_to_copy", 5, 4), X("aten::copy_", 5, 4)}));
  auto lanes = BuildLanes(t);
  EXPECT_EQ(Describe(t, lanes[0]), (std::vector<std::string>{
                                       "aten::to[5,9) self=0 parent=-",
                                       "aten::_to_copy[5,9) self=0 parent=aten::to",
                                       "aten::copy_[5,9) self=4 parent=aten::_to_copy",
                                   }));
}

TEST(LaneBuilder, TouchingIntervalsAreSiblings) {
  Trace t = LoadText(Trace_({X("a", 0, 5), X("b", 5, 5)}));
  auto lanes = BuildLanes(t);
  EXPECT_EQ(Describe(t, lanes[0]), (std::vector<std::string>{"a[0,5) self=5 parent=-", "b[5,10) self=5 parent=-"}));
}

TEST(LaneBuilder, APartialOverlapGoesOnWhereItsCallerEnds) {
  // parent [0,10); straddler [8,15) starts inside it and ends after it; inner [9,12)
  // inside the straddler; late [14,20) starts inside the straddler's rest and outlives it.
  // At every instant the time is the latest-started open interval's; an interval that
  // outlives its caller goes on from the caller's end as one more piece, under what then
  // outlasts it (here nothing: the root).
  Trace t = LoadText(
      Trace_({X("parent", 0, 10), X("child", 2, 4), X("straddler", 8, 7), X("inner", 9, 3), X("late", 14, 6)}));
  auto lanes = BuildLanes(t);
  EXPECT_EQ(Describe(t, lanes[0]), (std::vector<std::string>{
                                       "parent[0,10) self=4 parent=-",
                                       "child[2,6) self=4 parent=parent",
                                       "straddler[8,10) self=1 parent=parent",
                                       "inner[9,12) self=3 parent=straddler",  // it does not outlive its caller
                                       "straddler[10,15) self=2 parent=- (rest)",
                                       "late[14,15) self=1 parent=straddler",
                                       "late[15,20) self=5 parent=- (rest)",
                                   }));
  EXPECT_EQ(lanes[0].busy_ns, 20000);  // union [0,20)
  int64_t self = 0;
  for (const Piece& p : lanes[0].pieces) self += p.self_ns;
  EXPECT_EQ(self, lanes[0].busy_ns);
  EXPECT_EQ(lanes[0].partial_overlaps, 2u);  // straddler, late
}

TEST(LaneBuilder, ARestGoesUnderTheInnermostIntervalThatOutlastsIt) {
  // outer [0,100) holds mid [10,30) holds caller [12,20); x [15,40) outlives the caller
  // and mid: from 20 on it is under outer, which outlasts it.
  Trace t = LoadText(Trace_({X("outer", 0, 100), X("mid", 10, 20), X("caller", 12, 8), X("x", 15, 25)}));
  EXPECT_EQ(Describe(t, BuildLanes(t)[0]), (std::vector<std::string>{
                                               "outer[0,100) self=70 parent=-",
                                               "mid[10,30) self=2 parent=outer",
                                               "caller[12,20) self=3 parent=mid",
                                               "x[15,20) self=5 parent=caller",
                                               "x[20,40) self=20 parent=outer (rest)",
                                           }));
}

TEST(LaneBuilder, KernelsOverlappingOnOneStream) {
  Trace t = LoadText(Trace_({X("k1", 100, 10, 7), X("k2", 105, 10, 7), X("k3", 108, 1, 7)}));
  auto lanes = BuildLanes(t);
  EXPECT_EQ(Describe(t, lanes[0]), (std::vector<std::string>{
                                       "k1[100,110) self=5 parent=-",
                                       "k2[105,110) self=4 parent=k1",
                                       "k3[108,109) self=1 parent=k2",
                                       "k2[110,115) self=5 parent=- (rest)",
                                   }));
  EXPECT_EQ(lanes[0].busy_ns, 15000);
}

TEST(LaneBuilder, AStaircaseOfOverlapsCostsAtMostTwoPiecesAnInterval) {
  // Interval k is [k, 2k+1): each starts inside the one before and ends after it, and
  // about k/2 are open at once. Splitting at every end inside an interval made n^2/4
  // pieces; here at most two an interval, and the self times still add up to the lane's
  // busy time.
  std::string json = "[";
  const int n = 20000;
  for (int k = 0; k < n; ++k) json += (k ? "," : "") + X("s", k, k + 1);
  Trace t = LoadText(json + "]");
  auto lanes = BuildLanes(t);
  ASSERT_EQ(lanes.size(), 1u);
  EXPECT_LE(lanes[0].pieces.size(), static_cast<size_t>(2 * n));
  int64_t self = 0;
  for (const Piece& p : lanes[0].pieces) self += p.self_ns;
  EXPECT_EQ(self, lanes[0].busy_ns);
  EXPECT_EQ(lanes[0].busy_ns, int64_t{2 * (n - 1) + 1} * 1000);  // [0, 2n-1)
}

TEST(LaneBuilder, StacksOfIntervalsThatAreNotIdenticalNeverDependOnFileOrder) {
  // P, A and B overlapping in every way, written in every order: the same pieces.
  std::vector<std::string> events = {X("P", 0, 10), X("A", 2, 9), X("B", 2, 12), X("C", 5, 5), X("D", 5, 8)};
  std::sort(events.begin(), events.end());
  std::vector<std::string> first;
  do {
    Trace t = LoadText("[" + events[0] + "," + events[1] + "," + events[2] + "," + events[3] + "," + events[4] + "]");
    std::vector<std::string> got = Describe(t, BuildLanes(t)[0]);
    if (first.empty()) first = got;
    EXPECT_EQ(got, first);
  } while (std::next_permutation(events.begin(), events.end()));
}

TEST(LaneBuilder, CutsEndEveryOpenPieceAndItGoesOn) {
  // outer [0,20) holds mid [2,12) which holds leaf [4,8); a cut at 6 and one at 15,
  // and a sibling [16,18) after the second cut; lane 2 has no cuts.
  Trace t =
      LoadText(Trace_({X("outer", 0, 20), X("mid", 2, 10), X("leaf", 4, 4), X("sib", 16, 2), X("other", 0, 20, 2)}));
  BuildOptions options;
  options.cuts = {{6000, 15000}};  // lane 0 only
  auto lanes = BuildLanes(t, options);
  EXPECT_EQ(Describe(t, lanes[0]), (std::vector<std::string>{
                                       "outer[0,6) self=2 parent=-",
                                       "mid[2,6) self=2 parent=outer",
                                       "leaf[4,6) self=2 parent=mid",
                                       "outer[6,15) self=3 parent=- (rest)",
                                       "mid[6,12) self=4 parent=outer (rest)",
                                       "leaf[6,8) self=2 parent=mid (rest)",
                                       "outer[15,20) self=3 parent=- (rest)",
                                       "sib[16,18) self=2 parent=outer",
                                   }));
  EXPECT_EQ(lanes[0].busy_ns, 20000);
  EXPECT_EQ(lanes[0].intervals, 4u);
  EXPECT_EQ(lanes[0].partial_overlaps, 0u);
  EXPECT_EQ(Describe(t, lanes[1]), (std::vector<std::string>{"other[0,20) self=20 parent=-"}));
  // Cuts outside every piece, or at a piece's own ends, change nothing.
  options.cuts = {{0, 20000, 30000}};
  EXPECT_EQ(Describe(t, BuildLanes(t, options)[0]), Describe(t, BuildLanes(t)[0]));
}

TEST(LaneBuilder, DeepNestingNeedsNoRecursion) {
  // 100,000 levels on one lane: each interval one microsecond inside the previous.
  const int depth = 100000;
  std::string s = "[";
  for (int i = 0; i < depth; ++i) s += (i ? "," : "") + X("f", i, 2 * (depth - i) + 1);
  Trace t = LoadText(s + "]");
  auto lanes = BuildLanes(t);
  ASSERT_EQ(lanes[0].pieces.size(), static_cast<size_t>(depth));
  EXPECT_EQ(lanes[0].pieces.back().parent, depth - 2);
  EXPECT_EQ(lanes[0].busy_ns, (2LL * depth + 1) * 1000);
}

TEST(LaneBuilder, LanesAreIndependentAndThreadsDoNotChangeTheResult) {
  std::string s = "[";
  // Lanes of different sizes, the largest last: threads take them largest first, the
  // result stays in lane order.
  for (int lane = 0; lane < 8; ++lane) {
    for (int i = 0; i < 10 + 20 * lane; ++i) s += (s.size() > 1 ? "," : "") + X("op", i * 3 + lane, 4 + (i % 3), lane);
  }
  Trace t = LoadText(s + "]");
  Executor ex(4);
  auto one = BuildLanes(t);
  auto four = BuildLanes(t, BuildOptions{}, ex);
  ASSERT_EQ(one.size(), 8u);
  ASSERT_EQ(four.size(), 8u);
  for (size_t i = 0; i < one.size(); ++i) {
    EXPECT_EQ(one[i].lane, t.lanes.size() - 8 + i);
    EXPECT_EQ(one[i].intervals, 10 + 20 * i);
    EXPECT_EQ(one[i].lane, four[i].lane);
    EXPECT_EQ(Describe(t, one[i]), Describe(t, four[i]));
    EXPECT_EQ(one[i].busy_ns, four[i].busy_ns);
  }
}

TEST(LaneBuilder, APartBesideRunsOnceOnTheSameThreadsAndChangesNothing) {
  std::string s = "[";
  for (int lane = 0; lane < 5; ++lane) {
    for (int i = 0; i < 40 + 30 * lane; ++i) s += (s.size() > 1 ? "," : "") + X("op", i * 3 + lane, 4 + (i % 3), lane);
  }
  Trace t = LoadText(s + "]");
  const auto alone = BuildLanes(t);
  for (int threads : {1, 2, 3, 8}) {
    Executor ex(threads);
    std::atomic<int> runs{0};
    auto lanes = BuildLanes(t, BuildOptions{}, ex, [&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));  // longer than the lanes
      ++runs;
    });
    EXPECT_EQ(runs, 1) << threads << " threads";
    ASSERT_EQ(lanes.size(), alone.size());
    for (size_t i = 0; i < lanes.size(); ++i) {
      EXPECT_EQ(lanes[i].lane, alone[i].lane);
      EXPECT_EQ(Describe(t, lanes[i]), Describe(t, alone[i])) << threads << " threads, lane " << i;
    }
    // A part that fails fails the build, whichever thread ran it.
    EXPECT_THROW(BuildLanes(t, BuildOptions{}, ex, [] { throw std::runtime_error("the model failed"); }),
                 std::runtime_error);
  }
}

}  // namespace
}  // namespace torch2pprof
