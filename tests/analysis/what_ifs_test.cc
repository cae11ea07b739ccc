// Findings as what-ifs on small traces: the cause each reads from the events, the change
// it simulates and the saving of the replay, worked out by hand from the times (us).
#include "analysis/what_ifs.h"

#include <gtest/gtest.h>

#include <string>

#include "analysis/analyzer.h"
#include "test_util.h"
#include "torch2pprof/report.h"

namespace torch2pprof {
namespace {

constexpr int64_t us = 1000;

using testing::AnalyzeText;

std::string EventOn(int tid, const char* cat, const std::string& name, int ts, int dur,
                    const std::string& args = "{}") {
  return std::string(R"({"ph": "X", "cat": ")") + cat + R"(", "name": ")" + name + R"(", "pid": 1, "tid": )" +
         std::to_string(tid) + R"(, "ts": )" + std::to_string(ts) + R"(, "dur": )" + std::to_string(dur) +
         R"(, "args": )" + args + "}";
}
std::string Event(const char* cat, const std::string& name, int ts, int dur, const std::string& args = "{}") {
  return EventOn(1, cat, name, ts, dur, args);
}
std::string Step(int dur) { return Event("cpu_op", "ProfilerStep#1", 0, dur); }
std::string Op(const char* name, int ts, int dur) { return Event("cpu_op", name, ts, dur); }
std::string Python(const char* name, int ts, int dur) { return Event("python_function", name, ts, dur); }
std::string Call(const char* name, int ts, int dur, int corr) {
  return Event("cuda_runtime", name, ts, dur, R"({"correlation": )" + std::to_string(corr) + "}");
}
std::string Device(const char* cat, const char* name, int ts, int dur, int corr, int stream = 7) {
  return std::string(R"({"ph": "X", "cat": ")") + cat + R"(", "name": ")" + name + R"(", "pid": 0, "tid": )" +
         std::to_string(stream) + R"(, "ts": )" + std::to_string(ts) + R"(, "dur": )" + std::to_string(dur) +
         R"(, "args": {"device": 0, "stream": )" + std::to_string(stream) + R"(, "correlation": )" +
         std::to_string(corr) + "}}";
}

const Recommendation* FindingById(const Analysis& a, const std::string& id) {
  for (const Recommendation& r : a.recommendations) {
    if (r.id() == id) return &r;
  }
  return nullptr;
}

std::string All(const Analysis& a) {
  std::string out;
  for (const Recommendation& r : a.recommendations) out += std::string(r.id()) + ": " + RecommendationText(a, r) + "\n";
  return out;
}

// time.sleep in the step: its own finding with the caller's file:line, and nothing else
// waits on it, so the replay saves exactly the sleep. No device: no device advice.
TEST(WhatIfs, SleepIsItsOwnCauseAndSavesItself) {
  const Analysis a = AnalyzeText("[" + Step(1000) + "," + Python("train.py(12): step", 50, 900) + "," +
                                 Python("<built-in function sleep>", 100, 600) + "," + Op("aten::mm", 800, 100) + "]");
  const Recommendation* s = FindingById(a, "sleep");
  ASSERT_NE(s, nullptr) << All(a);
  EXPECT_EQ(s->saving_ns, 600 * us);
  EXPECT_EQ(s->what_if, "no_sleep");
  EXPECT_EQ(s->cause, "sleep");
  EXPECT_NE(RecommendationText(a, *s).find("step train.py:12"), std::string::npos) << RecommendationText(a, *s);
  EXPECT_EQ(a.recommendations[0].finding, Finding::kSleep);
  for (const Recommendation& r : a.recommendations) {
    EXPECT_NE(r.finding, Finding::kLaunchBound) << All(a);  // no device: no launch or graph advice
    EXPECT_NE(r.finding, Finding::kTensorCores);
    EXPECT_NE(r.finding, Finding::kSynchronizations);
  }
}

// run_backward waits for the thread that runs the autograd engine's nodes, not for
// whichever thread last ran meanwhile: a background thread (tid 3) that wakes from a
// sleep at 850, after the engine's last node (800), while the step's thread is still in
// run_backward [100, 900), is no cause of the step's, and its sleep saves nothing (the
// lock scenario's twin of bench/scenarios.py). With the nodes on the engine's thread
// (tid 2) the step waits for that thread; with them on the step's own (a CPU-only
// backward) run_backward waits for no thread: its own time is the engine's.
TEST(WhatIfs, RunBackwardWaitsForTheEnginesThreadAlone) {
  const std::string run_backward = "<built-in method run_backward of torch._C._EngineBase object at 0x7f00>";
  const std::string node = "autograd::engine::evaluate_function: MmBackward0";
  const std::string background = EventOn(3, "python_function", "bg.py(5): loop", 0, 1000) + "," +
                                 EventOn(3, "python_function", "<built-in function sleep>", 10, 840) + "," +
                                 EventOn(3, "python_function", "<built-in function sleep>", 855, 140);
  for (const int engine : {2, 1}) {
    const Analysis a =
        AnalyzeText("[" + Step(1000) + "," + Op("aten::mm", 20, 60) + "," + Python(run_backward.c_str(), 100, 800) +
                    "," + EventOn(engine, "cpu_op", node, 150, 250) + "," + EventOn(engine, "cpu_op", node, 450, 350) +
                    "," + Op("aten::add", 920, 60) + "," + background + "]");
    SCOPED_TRACE(engine == 2 ? "the engine's own thread" : "the step's thread runs the nodes");
    EXPECT_EQ(FindingById(a, "sleep"), nullptr) << All(a);
    const Recommendation* w = FindingById(a, "thread_wait");
    if (engine == 2) {
      ASSERT_NE(w, nullptr) << All(a);
      ASSERT_FALSE(w->waited.empty());
      EXPECT_EQ(w->waited[0].name.rfind("thread 2", 0), 0u) << w->waited[0].name;
    } else {
      EXPECT_EQ(w, nullptr) << All(a);
      ASSERT_FALSE(a.trace.lanes.empty());
      EXPECT_EQ(a.trace.lanes[0].work_ns, 1000 * us);  // run_backward's own time is work too
    }
  }
}

// A trace that names no autograd node (no evaluate_function wrapper) does not say which
// thread is the engine's: run_backward then waits for the last thread that worked in it.
TEST(WhatIfs, RunBackwardWithNoNodeNamedWaitsForAnyThread) {
  const std::string run_backward = "<built-in method run_backward of torch._C._EngineBase object at 0x7f00>";
  const Analysis a =
      AnalyzeText("[" + Step(1000) + "," + Op("aten::mm", 20, 60) + "," + Python(run_backward.c_str(), 100, 800) + "," +
                  EventOn(2, "cpu_op", "MmBackward0", 150, 650) + "," + Op("aten::add", 920, 60) + "]");
  const Recommendation* w = FindingById(a, "thread_wait");
  ASSERT_NE(w, nullptr) << All(a);
  ASSERT_FALSE(w->waited.empty()) << All(a);
  EXPECT_EQ(w->waited[0].name.rfind("thread 2", 0), 0u) << w->waited[0].name;
}

// A synchronization inside aten::copy_ that waits for the operator's own pageable copy is
// the copy's: the copy finding, not .item() advice. Host: the step's own [0, 100), the
// operator [100, 110), the copy call [110, 115), [115, 116), the sync [116, 390) (the copy
// [120, 380) ends 10 us before it), the operator [390, 400), the step [400, 420). Pinned
// and non_blocking: the copy [120, 250), the sync a launch's time (5: no launch call in
// the trace to measure) [116, 121), the operator's 10, the step's 20: the host is done at
// 151, and the step when its copy is, at 250. Saves 170.
TEST(WhatIfs, ACopysOwnSynchronizationIsTheCopys) {
  const Analysis a = AnalyzeText("[" + Step(420) + "," + Op("aten::copy_", 100, 300) + "," +
                                 Call("cudaMemcpyAsync", 110, 5, 1) + "," + Call("cudaStreamSynchronize", 116, 274, 2) +
                                 "," + Device("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 120, 260, 1) + "]");
  const Recommendation* p = FindingById(a, "pageable_copies");
  ASSERT_NE(p, nullptr) << All(a);
  EXPECT_EQ(p->what_if, "pinned");
  EXPECT_EQ(p->saving_ns, 170 * us);
  EXPECT_EQ(FindingById(a, "synchronizations"), nullptr) << All(a);
}

// Two all-reduces of two ranks on one stream, the host waiting for both: 64 MiB in 10 ms
// (6.7 GB/s of bus bandwidth) and 128 MiB in 4 ms (33.6 GB/s, the link's best). At the
// link's rate the first takes 2 ms: the step, 14.3 ms, ends 8 ms sooner.
std::string Nccl(int ts, int dur, int corr, int64_t nelems) {
  return R"({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "pid": 0, "tid": 7, "ts": )" +
         std::to_string(ts) + R"(, "dur": )" + std::to_string(dur) +
         R"(, "args": {"device": 0, "stream": 7, "correlation": )" + std::to_string(corr) +
         R"(, "Collective name": "allreduce", "In msg nelems": )" + std::to_string(nelems) + R"(, "Out msg nelems": )" +
         std::to_string(nelems) + R"(, "Group size": 2, "dtype": "Float"}})";
}
TEST(WhatIfs, CollectivesWaitingForPeersAtTheLinksBandwidth) {
  const Analysis a =
      AnalyzeText("[" + Step(14300) + "," + Call("cudaLaunchKernel", 100, 10, 1) + "," +
                  Call("cudaLaunchKernel", 120, 10, 2) + "," + Call("cudaStreamSynchronize", 200, 14010, 3) + "," +
                  Nccl(200, 10000, 1, 16 << 20) + "," + Nccl(10200, 4000, 2, 32 << 20) + "]");
  const Recommendation* c = FindingById(a, "communication_wait");
  ASSERT_NE(c, nullptr) << All(a);
  EXPECT_EQ(c->what_if, "link_bandwidth");
  EXPECT_EQ(c->saving_ns, 8000 * us);
  EXPECT_EQ(FindingById(a, "communication"), nullptr) << All(a);  // said once, by the replay
  const std::string text = RecommendationText(a, *c);
  EXPECT_NE(text.find("33.6 GB/s"), std::string::npos) << text;
}

// A runtime call of 250 ms that launches nothing starts something up: "profile after
// warm-up", never launch advice; leaving it out saves it.
TEST(WhatIfs, OneTimeInitialisationIsWarmUp) {
  const Analysis a =
      AnalyzeText("[" + Step(300000) + "," + Call("cudaFree", 100, 250000, 9) + "," +
                  Call("cudaLaunchKernel", 250200, 10, 1) + "," + Device("kernel", "k", 250220, 40000, 1) + "]");
  const Recommendation* w = FindingById(a, "warmup");
  ASSERT_NE(w, nullptr) << All(a);
  EXPECT_EQ(w->what_if, "no_init");
  EXPECT_EQ(w->saving_ns, 250000 * us);
  EXPECT_NE(RecommendationText(a, *w).find("cudaFree"), std::string::npos) << RecommendationText(a, *w);
  EXPECT_EQ(a.recommendations[0].finding, Finding::kWarmup);
}

// An unfused optimizer step: its host time at a tenth. Host: the step [0, 100), then in
// Optimizer.step [100, 900): its own 10, the operator 390, the launch 10, the operator
// 380, its own 10 (800); the step [900, 1000). At a tenth: 80, so the host ends at 280;
// the kernel (20 us after its call began, 10 after it ended) is done long before.
TEST(WhatIfs, AForeachOptimizerMadeFused) {
  const Analysis a =
      AnalyzeText("[" + Step(1000) + "," + Event("user_annotation", "Optimizer.step#AdamW.step", 100, 800) + "," +
                  Op("aten::_foreach_mul_", 110, 780) + "," + Call("cudaLaunchKernel", 500, 10, 1) + "," +
                  Device("kernel", "multi_tensor_apply_kernel", 520, 10, 1) + "]");
  const Recommendation* f = FindingById(a, "fused_optimizer");
  ASSERT_NE(f, nullptr) << All(a);
  EXPECT_EQ(f->what_if, "fused_optimizer");
  EXPECT_EQ(f->saving_ns, 720 * us);
  EXPECT_NE(RecommendationText(a, *f).find("fused=True"), std::string::npos);
  // Already fused: no such finding.
  const Analysis fused =
      AnalyzeText("[" + Step(1000) + "," + Event("user_annotation", "Optimizer.step#AdamW.step", 100, 800) + "," +
                  Op("aten::_fused_adamw_", 110, 780) + "," + Call("cudaLaunchKernel", 500, 10, 1) + "," +
                  Device("kernel", "fused_adam_kernel", 520, 10, 1) + "]");
  EXPECT_EQ(FindingById(fused, "fused_optimizer"), nullptr) << All(fused);
}

// Where the trace replays CUDA graphs, no finding says to capture them: the host time
// outside the replays is Python to cut (what_if no_python). Host: the step's own [0, 600),
// the graph launch [600, 610), the step [610, 1000); the replayed GEMM [620, 700) in FP32
// is on the Tensor Cores' list of levers even with no launching operator.
TEST(WhatIfs, NoGraphAdviceWhereGraphsReplay) {
  const Analysis a = AnalyzeText("[" + Step(1000) + "," + Call("cudaGraphLaunch", 600, 10, 1) + "," +
                                 Device("kernel", "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_ffma_kernel", 620, 300, 1) +
                                 "," + Call("cudaStreamSynchronize", 900, 30, 2) + "]");
  for (const Recommendation& r : a.recommendations) {
    EXPECT_NE(r.what_if, "cuda_graphs") << All(a);
    EXPECT_EQ(RecommendationText(a, r).find("Capture"), std::string::npos) << All(a);
  }
  // The sync [900, 930) waits for the GEMM [620, 920): at half it ends at 770 and the sync
  // 10 us after it began (its own time after the GEMM's end): 910, then the step's own
  // [930, 1000) 70: 980. Saves 20.
  const Recommendation* tc = FindingById(a, "tensor_cores");
  ASSERT_NE(tc, nullptr) << All(a);
  EXPECT_EQ(tc->saving_ns, 20 * us);
}

// The analysed steps' replay as recorded is the recorded steps: the graph explains them.
TEST(WhatIfs, TheUnchangedReplayIsTheRecordedStep) {
  const Analysis a =
      AnalyzeText("[" + Step(1000) + "," + Op("aten::mm", 10, 100) + "," + Call("cudaLaunchKernel", 20, 5, 1) + "," +
                  Device("kernel", "k", 30, 400, 1) + "," + Call("cudaStreamSynchronize", 410, 30, 2) + "]");
  ASSERT_EQ(a.critical_path.size(), 1u);
  EXPECT_EQ(a.what_if.step_ns, a.critical_path[0].length_ns);
}

}  // namespace
}  // namespace torch2pprof
