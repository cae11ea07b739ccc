// The critical path's rules, one small trace each; every segment worked out by hand
// from the times written in the trace (µs).
#include "model/critical_path.h"

#include <gtest/gtest.h>

#include "base/executor.h"
#include "test_util.h"

namespace torch2pprof {
namespace {

using testing::LoadText;

std::string X(const std::string& cat, const std::string& name, int tid, int ts, int dur, int corr = -1) {
  const std::string args = corr >= 0 ? R"({"correlation": )" + std::to_string(corr) + "}" : "{}";
  return R"({"ph": "X", "cat": ")" + cat + R"(", "name": ")" + name + R"(", "pid": 1, "tid": )" + std::to_string(tid) +
         R"(, "ts": )" + std::to_string(ts) + R"(, "dur": )" + std::to_string(dur) + R"(, "args": )" + args + "}";
}

// Device work on stream `stream` of GPU 0.
std::string K(const std::string& cat, const std::string& name, int stream, int ts, int dur, int corr) {
  return R"({"ph": "X", "cat": ")" + cat + R"(", "name": ")" + name + R"(", "pid": 0, "tid": )" +
         std::to_string(stream) + R"(, "ts": )" + std::to_string(ts) + R"(, "dur": )" + std::to_string(dur) +
         R"(, "args": {"device": 0, "stream": )" + std::to_string(stream) + R"(, "correlation": )" +
         std::to_string(corr) + "}}";
}

// A segment as the tests write it: [from, to) in µs from the step's start, where (a thread
// or stream id), the event's name ("-": none), the category.
struct Seg {
  int64_t from, to;
  std::string where, event;
  Bound bound;
  bool operator==(const Seg& o) const {
    return from == o.from && to == o.to && where == o.where && event == o.event && bound == o.bound;
  }
};

std::ostream& operator<<(std::ostream& os, const Seg& s) {
  return os << "[" << s.from << ", " << s.to << ") " << s.where << " " << s.event << " "
            << kBoundNames[static_cast<int>(s.bound)];
}

std::vector<Seg> Walk(const std::string& json, size_t step = 0) {
  const Trace t = LoadText(json);
  const TraceModel m = BuildModel(t);
  const std::vector<LaneStacks> lanes = BuildLanes(t);
  const StepWindows w = FindStepWindows(t, m);
  EXPECT_LT(step, w.steps.size());
  if (step >= w.steps.size()) return {};
  const CriticalPathWalker walker(t, m, lanes, w);
  const StepCriticalPath p = walker.Walk(step);
  std::vector<Seg> out;
  const int64_t start = w.steps[step].start;
  int64_t total = 0;
  for (const CriticalSegment& s : p.segments) {
    out.push_back({(s.start_ns - start) / 1000, (s.end_ns - start) / 1000, t.lanes[s.lane].tid,
                   s.event == CriticalSegment::kNoEvent ? "-" : std::string(t.strings.Get(EventAt(t, s.event).name)),
                   s.bound});
    total += s.end_ns - s.start_ns;
  }
  EXPECT_EQ(total, w.steps[step].end - start);  // the segments tile the step
  EXPECT_EQ(p.length_ns, total);
  return out;
}

std::string Doc(const std::vector<std::string>& events) {
  std::string s = R"({"traceEvents": [)";
  for (const auto& e : events) s += (s.back() == '[' ? "" : ",\n") + e;
  return s + "]}";
}

constexpr Bound kCpu = Bound::kCpu, kCompute = Bound::kGpuCompute, kLaunch = Bound::kLaunch,
                kGap = Bound::kKernelKernel;

// Back from the step's end: the host's last operator, a synchronization that waited for
// the second kernel (its time after the kernel's end is its own), the kernel, the gap after
// the first kernel (it was launched before the first ended: stream order), the first
// kernel, its launch delay (launched on an idle stream), the operator that launched it.
TEST(CriticalPath, LaunchesStreamOrderAndASynchronization) {
  const auto segs = Walk(Doc({
      X("user_annotation", "ProfilerStep#1", 1, 0, 100),
      X("cpu_op", "aten::mm", 1, 10, 20),
      X("cuda_runtime", "cudaLaunchKernel", 1, 15, 5, 1),
      K("kernel", "k1", 7, 25, 35, 1),
      X("cpu_op", "aten::add", 1, 31, 9),
      X("cuda_runtime", "cudaLaunchKernel", 1, 32, 4, 2),
      K("kernel", "k2", 7, 62, 28, 2),
      X("cpu_op", "aten::item", 1, 84, 16),
      X("cuda_runtime", "cudaStreamSynchronize", 1, 85, 13),
  }));
  const std::vector<Seg> want = {
      {0, 10, "1", "ProfilerStep#1", kCpu},
      {10, 15, "1", "aten::mm", kCpu},
      {15, 25, "7", "k1", kLaunch},
      {25, 60, "7", "k1", kCompute},
      {60, 62, "7", "k1", kGap},
      {62, 90, "7", "k2", kCompute},
      {90, 98, "1", "cudaStreamSynchronize", kCpu},
      {98, 100, "1", "aten::item", kCpu},
  };
  EXPECT_EQ(segs, want);
}

// The main thread waits in run_backward while the autograd thread works: the wait goes to
// the working thread at each instant, and is the main thread's own only where no thread
// works (the engine between nodes).
TEST(CriticalPath, AWaitingThreadHandsOverToTheThreadThatWorks) {
  const auto segs = Walk(Doc({
      X("user_annotation", "ProfilerStep#1", 1, 0, 100),
      X("python_function", "<built-in method run_backward of torch._C._EngineBase object at 0x7f00>", 1, 20, 70),
      X("cpu_op", "aten::add", 1, 90, 10),
      X("cpu_op", "MmBackward0", 2, 25, 35),
      X("cuda_runtime", "cudaLaunchKernel", 2, 30, 5, 1),
      K("kernel", "k1", 7, 40, 10, 1),
      X("cpu_op", "AddBackward0", 2, 65, 20),
  }));
  const std::string wait = "<built-in method run_backward of torch._C._EngineBase object at 0x7f00>";
  const std::vector<Seg> want = {
      {0, 20, "1", "ProfilerStep#1", kCpu},    {20, 25, "1", wait, kCpu},          {25, 30, "2", "MmBackward0", kCpu},
      {30, 35, "2", "cudaLaunchKernel", kCpu}, {35, 60, "2", "MmBackward0", kCpu}, {60, 65, "1", wait, kCpu},
      {65, 85, "2", "AddBackward0", kCpu},     {85, 90, "1", wait, kCpu},          {90, 100, "1", "aten::add", kCpu},
  };
  EXPECT_EQ(segs, want);
}

// torch 1.x writes nothing on the main thread during the backward pass: the step's own
// span with nothing under it is no work of its own either.
TEST(CriticalPath, TheStepsOwnSpanGoesToTheThreadThatWorks) {
  const auto segs = Walk(Doc({
      X("user_annotation", "ProfilerStep#1", 1, 0, 100),
      X("cpu_op", "aten::mm", 1, 0, 10),
      X("cpu_op", "aten::step", 1, 90, 10),
      X("cpu_op", "autograd::engine::evaluate_function: MmBackward0", 2, 20, 60),
      X("cuda_runtime", "cudaLaunchKernel", 2, 30, 5, 1),
      K("kernel", "k1", 7, 40, 5, 1),
  }));
  const std::string node = "autograd::engine::evaluate_function: MmBackward0";
  const std::vector<Seg> want = {
      {0, 10, "1", "aten::mm", kCpu},     {10, 20, "1", "ProfilerStep#1", kCpu},
      {20, 30, "2", node, kCpu},          {30, 35, "2", "cudaLaunchKernel", kCpu},
      {35, 80, "2", node, kCpu},          {80, 90, "1", "ProfilerStep#1", kCpu},
      {90, 100, "1", "aten::step", kCpu},
  };
  EXPECT_EQ(segs, want);
}

// A kernel that starts long after the work before it on its stream and after its own
// launch waited for another stream's work (torch 2.x records no stream-wait edge): the gap
// back to that work's end, then that work.
TEST(CriticalPath, ALongGapWaitsForAnotherStream) {
  const auto segs = Walk(Doc({
      X("user_annotation", "ProfilerStep#1", 1, 0, 200),
      X("cpu_op", "aten::a", 1, 5, 33),
      X("cuda_runtime", "cudaLaunchKernel", 1, 10, 5, 1),
      X("cuda_runtime", "cudaLaunchKernel", 1, 20, 5, 2),
      X("cuda_runtime", "cudaLaunchKernel", 1, 30, 5, 3),
      K("kernel", "A", 7, 20, 130, 1),
      K("kernel", "B", 8, 30, 10, 2),
      K("kernel", "C", 8, 160, 30, 3),
      X("cuda_runtime", "cudaDeviceSynchronize", 1, 40, 155),
      X("cpu_op", "aten::b", 1, 195, 5),
  }));
  const std::vector<Seg> want = {
      {0, 5, "1", "ProfilerStep#1", kCpu},
      {5, 10, "1", "aten::a", kCpu},
      {10, 20, "7", "A", kLaunch},
      {20, 150, "7", "A", kCompute},
      {150, 160, "8", "B", kGap},
      {160, 190, "8", "C", kCompute},
      {190, 195, "1", "cudaDeviceSynchronize", kCpu},
      {195, 200, "1", "aten::b", kCpu},
  };
  EXPECT_EQ(segs, want);
}

// A step that ends on the device starts its walk there; a short gap on the stream is the
// stream's own overhead even where another stream's work ended in it.
TEST(CriticalPath, AStepEndingOnTheDeviceAndAShortGap) {
  const auto segs = Walk(Doc({
      X("user_annotation", "ProfilerStep#1", 1, 0, 30),
      X("cuda_runtime", "cudaLaunchKernel", 1, 5, 5, 1),
      X("cuda_runtime", "cudaLaunchKernel", 1, 12, 5, 2),
      X("cuda_runtime", "cudaLaunchKernel", 1, 20, 5, 3),
      K("kernel", "k1", 7, 15, 40, 1),
      K("kernel", "other", 8, 20, 30, 2),
      K("kernel", "k3", 7, 60, 40, 3),
  }));
  const std::vector<Seg> want = {
      {0, 5, "1", "ProfilerStep#1", kCpu}, {5, 15, "7", "k1", kLaunch},    {15, 55, "7", "k1", kCompute},
      {55, 60, "7", "k1", kGap},           {60, 100, "7", "k3", kCompute},
  };
  EXPECT_EQ(segs, want);
}

// The walks on the executor's threads give each step the path Walk gives it.
TEST(CriticalPath, WalkAllGivesEachStepItsPath) {
  std::vector<std::string> ev;
  for (int s = 0; s < 20; ++s) {
    const int t0 = s * 100;
    ev.push_back(X("user_annotation", "ProfilerStep#" + std::to_string(s), 1, t0, 100));
    ev.push_back(X("cuda_runtime", "cudaLaunchKernel", 1, t0 + 10, 5, s + 1));
    ev.push_back(K("kernel", "k", 7, t0 + 20, 10 + s, s + 1));
    ev.push_back(X("cuda_runtime", "cudaDeviceSynchronize", 1, t0 + 25, 74));
  }
  const Trace t = LoadText(Doc(ev));
  const TraceModel m = BuildModel(t);
  const std::vector<LaneStacks> lanes = BuildLanes(t);
  const StepWindows w = FindStepWindows(t, m);
  ASSERT_EQ(w.steps.size(), 20u);
  const CriticalPathWalker walker(t, m, lanes, w);
  Executor ex(4);
  std::vector<StepCriticalPath> got(w.steps.size());
  walker.WalkAll(ex, [&](size_t k, const StepCriticalPath& p) { got[k] = p; });
  for (size_t k = 0; k < w.steps.size(); ++k) {
    const StepCriticalPath one = walker.Walk(k);
    EXPECT_EQ(got[k].length_ns, 100'000);
    ASSERT_EQ(got[k].segments.size(), one.segments.size()) << k;
    for (size_t i = 0; i < one.segments.size(); ++i) {
      EXPECT_EQ(got[k].segments[i].start_ns, one.segments[i].start_ns);
      EXPECT_EQ(got[k].segments[i].event, one.segments[i].event);
    }
    EXPECT_EQ(one.by_bound[static_cast<int>(Bound::kGpuCompute)], static_cast<int64_t>(10 + k) * 1000);
  }
}

// HostTimeline against the rule it stands for, asked naively: the innermost at t is the
// open piece that started last; and a cursor's stretches follow it. Random lanes whose
// pieces nest, or may outlive their parents (the lane builder keeps one piece per
// interval), or have no length.
namespace naive {
// The lane builder's rule: the open piece that started last (pieces are in start order);
// a stretch begins at the latest start or end before t.
Stretch Before(const std::vector<Piece>& p, int64_t t) {
  Stretch s;
  int64_t innermost = -1, since = INT64_MIN;
  for (size_t k = 0; k < p.size(); ++k) {
    if (p[k].start_ns < t && t <= p[k].end_ns) innermost = static_cast<int64_t>(k);
    if (p[k].start_ns < t) since = std::max(since, p[k].start_ns);
    if (p[k].end_ns < t) since = std::max(since, p[k].end_ns);
  }
  if (innermost < 0) {
    s.end = since;
    return s;
  }
  s.found = true;
  s.piece = static_cast<uint32_t>(innermost);
  s.start = since;
  s.end = p[static_cast<size_t>(innermost)].end_ns;
  return s;
}
}  // namespace naive

TEST(HostTimeline, EveryInstantAsTheRuleSaysWithPartialOverlapsAndEmptyPieces) {
  uint64_t seed = 12345;
  auto rnd = [&](int64_t n) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int64_t>((seed >> 33) % static_cast<uint64_t>(n));
  };
  for (int round = 0; round < 300; ++round) {
    LaneStacks lane;
    int64_t start = 0;
    const int n = 1 + static_cast<int>(rnd(30));
    for (int k = 0; k < n; ++k) {
      start += rnd(4);
      Piece pc{};
      pc.start_ns = start;
      pc.end_ns = start + (rnd(5) == 0 ? 0 : rnd(25));
      // Under the piece innermost where it starts (over [start, start + 1ns)).
      const Stretch at = naive::Before(lane.pieces, start + 1);
      pc.parent = at.found ? static_cast<int32_t>(at.piece) : -1;
      // Every other round nested (each piece ends within its parent: the stack's sweep),
      // the rest free (the heaps').
      if (round % 2 == 0 && pc.parent >= 0)
        pc.end_ns = std::min(pc.end_ns, lane.pieces[static_cast<size_t>(pc.parent)].end_ns);
      pc.interval = static_cast<uint32_t>(k);
      lane.pieces.push_back(pc);
    }
    const HostTimeline tl(lane);
    size_t hint = 0;
    for (int64_t t = -2; t <= start + 40; ++t) {
      const Stretch want = naive::Before(lane.pieces, t);
      for (const Stretch& got : {tl.Before(t), tl.Before(t, &hint)}) {
        ASSERT_EQ(got.found, want.found) << "round " << round << " t " << t;
        ASSERT_EQ(got.end, want.end) << "round " << round << " t " << t;
        if (want.found) {
          ASSERT_EQ(got.piece, want.piece) << "round " << round << " t " << t;
          ASSERT_EQ(got.start, want.start) << "round " << round << " t " << t;
        }
      }
      // The cursor from t: each stretch holds, at each of its instants, what Before says
      // just after it.
      HostTimeline::Cursor c(tl, t);
      int64_t at = t;
      for (int k = 0; k < 6 && at <= start + 40; ++k) {
        const Stretch s = c.Next();
        ASSERT_EQ(s.start, at);
        ASSERT_GT(s.end, at);
        for (int64_t u = at; u < std::min(s.end, start + 41); ++u) {
          const Stretch b = naive::Before(lane.pieces, u + 1);
          ASSERT_EQ(s.found, b.found) << "round " << round << " cursor " << t << " at " << u;
          if (b.found) {
            ASSERT_EQ(s.piece, b.piece) << "round " << round << " cursor " << t << " at " << u;
          }
        }
        at = s.end;
      }
    }
  }
}

// And on every host lane of real traces (their pieces outlive parents, are cut at steps,
// clipped to Python parents): every instant where a piece starts or ends, and next to it.
TEST(HostTimeline, EveryBoundaryOfRealLanesAsTheRuleSays) {
  for (const char* name : {"ddp_gloo_2ranks_rank1", "resnet50_dl"}) {
    const Trace t = LoadText(
        testing::Gunzip(testing::ReadFile(std::string(TESTDATA_DIR) + "/real/torch211/" + name + ".pt.trace.json.gz")));
    for (const LaneStacks& lane : BuildLanes(t)) {
      if (lane.pieces.size() > 4000) continue;  // the naive rule is quadratic
      const HostTimeline tl(lane);
      std::vector<int64_t> instants;
      for (const Piece& p : lane.pieces) {
        for (int64_t d : {-1, 0, 1}) instants.push_back(p.start_ns + d), instants.push_back(p.end_ns + d);
      }
      size_t hint = 0;
      for (const int64_t at : instants) {
        const Stretch want = naive::Before(lane.pieces, at), got = tl.Before(at, &hint);
        ASSERT_EQ(got.found, want.found) << name << " lane " << lane.lane << " at " << at;
        ASSERT_EQ(got.end, want.end) << name << " lane " << lane.lane << " at " << at;
        if (want.found) {
          ASSERT_EQ(got.piece, want.piece) << name << " lane " << lane.lane << " at " << at;
          ASSERT_EQ(got.start, want.start) << name << " lane " << lane.lane << " at " << at;
        }
        HostTimeline::Cursor c(tl, at);
        const Stretch s = c.Next(), b = naive::Before(lane.pieces, at + 1);
        ASSERT_EQ(s.found, b.found) << name << " cursor at " << at;
        if (b.found) {
          ASSERT_EQ(s.piece, b.piece) << name << " cursor at " << at;
        }
      }
    }
  }
}

}  // namespace
}  // namespace torch2pprof
