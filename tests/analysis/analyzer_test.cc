// The analyzer on small hand-made traces. The TbPlugin cases are torch-tb-profiler's
// own test cases (tb_plugin/test/test_profiler.py): the same events, and the numbers
// that plugin asserts. The others are edge cases with expectations worked out by hand.
#include "analysis/analyzer.h"

#include <gtest/gtest.h>
#include <algorithm>
#include <stdexcept>

#include "test_util.h"
#include "torch2pprof/report.h"
#include "torch2pprof/stages/trace_loader.h"
#include "torch2pprof/torch2pprof.h"

namespace torch2pprof {
namespace {

constexpr int64_t us = 1000;  // the traces below are in microseconds

using testing::AnalyzeText;

const OperatorRow& Op(const Analysis& a, const std::string& name) {
  for (const OperatorRow& r : a.operators) {
    if (r.name == name) return r;
  }
  static OperatorRow none;
  ADD_FAILURE() << "no operator row " << name;
  return none;
}

// Each event on its own line: {ph X, cat, name, pid, tid, ts, dur, args}.
std::string X(const char* cat, const char* name, const char* tid, int ts, int dur, const std::string& args = "{}") {
  return std::string(R"({"ph": "X", "cat": ")") + cat + R"(", "name": ")" + name + R"(", "pid": )" +
         (std::string(tid).rfind("stream", 0) == 0 ? "0" : "13721") + R"(, "tid": ")" + tid + R"(", "ts": )" +
         std::to_string(ts) + R"(, "dur": )" + std::to_string(dur) + R"(, "args": )" + args + "}";
}

std::string Trace(std::initializer_list<std::string> events) {
  std::string s = "[";
  for (const auto& e : events) s += (s.size() > 1 ? ",\n" : "") + e;
  return s + "]";
}

std::string Ext(int id) { return R"({"External id": )" + std::to_string(id) + "}"; }
std::string Rt(int corr, int ext) {
  return R"({"correlation": )" + std::to_string(corr) + R"(, "external id": )" + std::to_string(ext) + "}";
}
std::string Dev(int corr, int ext, const std::string& more = "") {
  return R"({"correlation": )" + std::to_string(corr) + R"(, "external id": )" + std::to_string(ext) +
         R"(, "device": 0)" + more + "}";
}

void ExpectStep(const StepRow& s, int64_t total, int64_t kernel, int64_t memcpy, int64_t memset, int64_t runtime,
                int64_t dataloader, int64_t cpu, int64_t other) {
  EXPECT_EQ(s.total_ns, total * us) << s.name;
  EXPECT_EQ(s.kernel_ns, kernel * us) << s.name;
  EXPECT_EQ(s.memcpy_ns, memcpy * us) << s.name;
  EXPECT_EQ(s.memset_ns, memset * us) << s.name;
  EXPECT_EQ(s.runtime_ns, runtime * us) << s.name;
  EXPECT_EQ(s.dataloader_ns, dataloader * us) << s.name;
  EXPECT_EQ(s.cpu_exec_ns, cpu * us) << s.name;
  EXPECT_EQ(s.other_ns, other * us) << s.name;
  EXPECT_EQ(s.kernel_ns + s.memcpy_ns + s.memset_ns + s.communication_ns + s.runtime_ns + s.dataloader_ns +
                s.cpu_exec_ns + s.other_ns,
            s.total_ns);
}

TEST(TbPlugin, AllCategories) {
  Analysis a = AnalyzeText(Trace({
      X("Operator", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "123", 100, 180, Ext(2)),
      X("Operator", "aten::to", "123", 200, 60,
        R"({"Input Dims": [[2, 8, 5], [], [], [], [], [], [], []], "External id": 3})"),
      X("Operator", "aten::nll_loss_backward", "456", 340, 70,
        R"({"Input Dims": [[], [32, 1000], [32], [], [], [], []], "External id": 4})"),
      X("Operator", "ProfilerStep#1", "123", 50, 400, Ext(1)),
      X("Memcpy", "Memcpy HtoD (Pageable -> Device)", "stream 7", 405, 10, Dev(334, 4)),
      X("Runtime", "cudaMemcpyAsync", "456", 360, 20, Rt(334, 4)),
      X("Memset", "Memset (Device)", "stream 7", 420, 5, Dev(40344, 4)),
      X("Runtime", "cudaMemsetAsync", "456", 390, 10, Rt(40344, 4)),
      X("Kernel", "void cunn_ClassNLLCriterion_updateGradInput_kernel<float>", "stream 7", 430, 15, Dev(40348, 4)),
      X("Runtime", "cudaLaunchKernel", "456", 405, 5, Rt(40348, 4)),
  }));
  ASSERT_EQ(a.steps.size(), 1u);
  ExpectStep(a.steps[0], 400, 15, 10, 5, 30, 180, 35, 125);
  ASSERT_EQ(a.operators.size(), 2u);  // the DataLoader and the step are no rows
  const OperatorRow& to = Op(a, "aten::to");
  EXPECT_EQ(to.calls, 1u);
  EXPECT_EQ(to.host_total_ns, 60 * us);
  EXPECT_EQ(to.host_self_ns, 60 * us);
  EXPECT_EQ(to.device_total_ns, 0);
  const OperatorRow& nll = Op(a, "aten::nll_loss_backward");
  EXPECT_EQ(nll.host_total_ns, 70 * us);
  EXPECT_EQ(nll.host_self_ns, (70 - 20 - 10 - 5) * us);
  EXPECT_EQ(nll.device_total_ns, 30 * us);
  EXPECT_EQ(nll.device_self_ns, 30 * us);
  ASSERT_EQ(a.kernels.size(), 1u);
  EXPECT_EQ(a.kernels[0].calls, 1u);
  EXPECT_EQ(a.kernels[0].total_ns, 15 * us);
  EXPECT_EQ(a.kernels[0].min_ns, 15 * us);
  EXPECT_EQ(a.kernels[0].max_ns, 15 * us);

  Analysis shaped = AnalyzeText(Trace({X("Operator", "aten::to", "1", 0, 5, R"({"Input Dims": [[2, 8, 5], []]})"),
                                       X("Operator", "aten::to", "1", 10, 5, R"({"Input Dims": [[3]]})"),
                                       X("Operator", "aten::to", "1", 20, 5, R"({"Input Dims": [[2, 8, 5], []]})")}),
                                AnalysisOptions{true});
  ASSERT_EQ(shaped.operators.size(), 2u);
  EXPECT_EQ(shaped.operators[0].input_dims, "[[2, 8, 5], []]");
  EXPECT_EQ(shaped.operators[0].calls, 2u);
}

// Python run inside an operator (torch.compile's generated code, a Triton kernel's
// launcher) is that Python's time, as torch 2.13's key_averages() counts it: the
// operator's self time leaves out its Python children and the runtime calls inside
// them; an operator that outlives a Python function it starts in keeps its row and hangs
// under the operator that holds both; Python outside every operator changes nothing.
TEST(TbPlugin, PythonInsideAnOperatorIsNotItsSelfTime) {
  Analysis a = AnalyzeText(Trace({
      X("python_function", "train.py(3): step", "1", 0, 300),
      X("cpu_op", "## Call CompiledFxGraph g ##", "1", 10, 100),
      X("python_function", "g.py(71): call", "1", 14, 90),
      X("cpu_op", "aten::addmm", "1", 20, 30),
      X("cpu_op", "triton_poi_fused_0", "1", 120, 50, Ext(9)),
      X("python_function", "triton launcher", "1", 125, 40),
      X("cuda_runtime", "cuLaunchKernel", "1", 130, 10, Rt(1, 9)),
      X("cuda_runtime", "cudaMemsetAsync", "1", 166, 2, Rt(2, 9)),
      X("cpu_op", "Torch-Compiled Region", "1", 200, 80),
      X("python_function", "eval_frame.py(1): _fn", "1", 205, 20),
      X("cpu_op", "Pregraph bytecode", "1", 220, 10),
      X("python_function", "after.py(2): f", "1", 240, 10),
  }));
  EXPECT_EQ(Op(a, "## Call CompiledFxGraph g ##").host_self_ns, (100 - 90) * us);
  EXPECT_EQ(Op(a, "aten::addmm").host_self_ns, 30 * us);
  EXPECT_EQ(Op(a, "triton_poi_fused_0").host_self_ns, (50 - 40 - 2) * us);  // the launch is the launcher's
  // The Python function it starts in closes where it begins: both are the region's.
  EXPECT_EQ(Op(a, "Pregraph bytecode").calls, 1u);
  EXPECT_EQ(Op(a, "Torch-Compiled Region").host_self_ns, (80 - 20 - 10 - 10) * us);
}

TEST(TbPlugin, RuntimeBelongsToOperatorByExternalId) {
  // Zero-length launches at the operators' edges: containment cannot tell whose they are.
  Analysis a = AnalyzeText(Trace({
      X("Operator", "aten::mat_mul", "456", 100, 100, Ext(2)),
      X("Operator", "aten::mm", "456", 120, 70, Ext(4)),
      X("Kernel", "k", "stream 7", 130, 5, Dev(334, 4)),
      X("Runtime", "cudaLaunchKernel", "456", 120, 0, Rt(334, 4)),
      X("Kernel", "k", "stream 7", 130, 6, Dev(335, 2)),
      X("Runtime", "cudaLaunchKernel", "456", 120, 0, Rt(335, 2)),
      X("Kernel", "k", "stream 7", 130, 7, Dev(336, 4)),
      X("Runtime", "cudaLaunchKernel", "456", 190, 0, Rt(336, 4)),
      X("Kernel", "k", "stream 7", 130, 8, Dev(337, 2)),
      X("Runtime", "cudaLaunchKernel", "456", 190, 0, Rt(337, 2)),
  }));
  EXPECT_EQ(Op(a, "aten::mat_mul").device_total_ns, (5 + 6 + 7 + 8) * us);
  EXPECT_EQ(Op(a, "aten::mat_mul").device_self_ns, (6 + 8) * us);
  EXPECT_EQ(Op(a, "aten::mm").device_total_ns, (5 + 7) * us);  // a kernel launched by a nested operator
  EXPECT_EQ(Op(a, "aten::mm").device_self_ns, (5 + 7) * us);
  EXPECT_EQ(a.kernels[0].calls, 4u);
}

// An External id on several operators: its runtime calls go to the first of them in lane
// order (lanes as they first appear), then in tree order, however many threads walk the lanes.
TEST(Analyzer, AnExternalIdOnSeveralOperatorsGoesToTheFirst) {
  std::string json = Trace({
      X("Operator", "aten::first_lane", "200", 100, 100, Ext(5)),
      X("Operator", "aten::second_lane", "100", 50, 100, Ext(5)),
      X("Operator", "aten::later_sibling", "200", 300, 50, Ext(5)),
      X("Operator", "aten::earlier_sibling", "200", 250, 40, Ext(6)),
      X("Operator", "aten::other", "200", 350, 10, Ext(6)),
      X("Runtime", "cudaLaunchKernel", "300", 120, 10, Rt(40, 5)),
      X("Kernel", "k", "stream 7", 130, 8, Dev(40, 5)),
      X("Runtime", "cudaLaunchKernel", "300", 260, 5, Rt(41, 6)),
      X("Kernel", "k", "stream 7", 270, 3, Dev(41, 6)),
  });
  for (int threads : {1, 2, 4}) {
    Analysis a = AnalyzeText(json, AnalysisOptions{}, threads);
    EXPECT_EQ(Op(a, "aten::first_lane").device_self_ns, 8 * us) << threads;
    EXPECT_EQ(Op(a, "aten::first_lane").host_self_ns, (100 - 10) * us) << threads;
    EXPECT_EQ(Op(a, "aten::second_lane").device_self_ns, 0) << threads;
    EXPECT_EQ(Op(a, "aten::second_lane").host_self_ns, 100 * us) << threads;
    EXPECT_EQ(Op(a, "aten::later_sibling").device_self_ns, 0) << threads;
    EXPECT_EQ(Op(a, "aten::earlier_sibling").device_self_ns, 3 * us) << threads;
    EXPECT_EQ(Op(a, "aten::earlier_sibling").host_self_ns, (40 - 5) * us) << threads;
    EXPECT_EQ(Op(a, "aten::other").device_self_ns, 0) << threads;
  }
}

TEST(TbPlugin, SameStartOrSameEndNests) {
  for (int mm_start : {100, 130}) {
    Analysis a = AnalyzeText(Trace({X("Operator", "aten::mat_mul", "456", 100, 100, Ext(2)),
                                    X("Operator", "aten::mm", "456", mm_start, 70, Ext(4))}));
    EXPECT_EQ(Op(a, "aten::mat_mul").host_self_ns, 30 * us) << mm_start;
    EXPECT_EQ(Op(a, "aten::mm").host_self_ns, 70 * us) << mm_start;
  }
}

TEST(TbPlugin, RepeatedNestingCollapsesIntoOneCall) {
  Analysis a = AnalyzeText(Trace({
      X("Operator", "aten::mm", "456", 100, 100, Ext(2)),
      X("Operator", "aten::mm", "456", 110, 80, Ext(3)),
      X("Operator", "aten::mm", "456", 120, 60, Ext(4)),
      X("Runtime", "cudaLaunchKernel", "456", 130, 20, Rt(335, 4)),
      X("Kernel", "void gemmSN_TN_kernel_64addr", "stream 7", 220, 8, Dev(335, 4)),
  }));
  ASSERT_EQ(a.operators.size(), 1u);
  EXPECT_EQ(a.operators[0].calls, 1u);
  EXPECT_EQ(a.operators[0].device_self_ns, 8 * us);
  EXPECT_EQ(a.operators[0].host_self_ns, (100 - 20) * us);
}

TEST(TbPlugin, RuntimeWithExternalIdZeroBelongsToNoOperator) {
  Analysis a = AnalyzeText(Trace({
      X("Operator", "aten::mm", "123", 100, 100, Ext(2)),
      X("Runtime", "cudaLaunchKernel", "456", 130, 20, Rt(335, 0)),
      X("Kernel", "void gemmSN_TN_kernel_64addr", "stream 7", 220, 8, Dev(335, 0)),
  }));
  EXPECT_EQ(Op(a, "aten::mm").device_total_ns, 0);
  EXPECT_EQ(Op(a, "aten::mm").device_self_ns, 0);
  EXPECT_EQ(a.kernels[0].calls, 1u);
}

TEST(TbPlugin, RuntimeCalledDirectlyByTheStep) {
  Analysis a = AnalyzeText(Trace({
      X("Operator", "ProfilerStep#1", "456", 100, 300, Ext(2)),
      X("Runtime", "cudaLaunchKernel", "456", 130, 20, Rt(335, 2)),
      X("Kernel", "void gemmSN_TN_kernel_64addr", "stream 7", 220, 8, Dev(335, 2)),
  }));
  ASSERT_EQ(a.steps.size(), 1u);
  ExpectStep(a.steps[0], 300, 8, 0, 0, 20, 0, 0, 300 - 8 - 20);
  EXPECT_TRUE(a.operators.empty());  // the step is no operator
  EXPECT_EQ(a.kernels[0].calls, 1u);
}

TEST(TbPlugin, OneRuntimeLaunchesSeveralKernels) {
  Analysis a = AnalyzeText(Trace({
      X("Operator", "Broadcast", "456", 100, 300, Ext(2)),
      X("Runtime", "cudaLaunchCooperativeKernelMultiDevice", "456", 130, 20, Rt(335, 2)),
      X("Kernel", "ncclBroadcastRingLLKernel_copy_i8(ncclColl)", "stream 13", 160, 120318, Dev(335, 2)),
      X("Kernel", "ncclBroadcastRingLLKernel_copy_i8(ncclColl)", "stream 22", 170, 132800, Dev(335, 2)),
  }));
  EXPECT_EQ(Op(a, "Broadcast").device_total_ns, (120318 + 132800) * us);
  EXPECT_EQ(a.kernels[0].calls, 2u);
}

TEST(TbPlugin, NoProfilerStepMakesTheWholeTraceOneStep) {
  Analysis a = AnalyzeText(Trace({
      X("Operator", "aten::to", "123", 100, 60, Ext(3)),
      X("Operator", "aten::nll_loss_backward", "456", 300, 70, Ext(4)),
      X("Kernel", "void cunn_ClassNLLCriterion_updateGradInput_kernel<float>", "stream 7", 320, 100, Dev(40348, 4)),
      X("Runtime", "cudaLaunchKernel", "456", 310, 20, Rt(40348, 4)),
  }));
  EXPECT_TRUE(a.whole_trace_step);
  ASSERT_EQ(a.steps.size(), 1u);
  ExpectStep(a.steps[0], (320 + 100) - 100, 100, 0, 0, 320 - 310, 0, 60 + (310 - 300), 300 - (100 + 60));
  EXPECT_EQ(Op(a, "aten::nll_loss_backward").host_self_ns, (70 - 20) * us);
  EXPECT_EQ(Op(a, "aten::nll_loss_backward").device_self_ns, 100 * us);
}

TEST(TbPlugin, StepsAreRetimedToTheDeviceWorkTheyLaunched) {
  // GPU work that runs past the CPU step: each step ends when its device work does.
  Analysis a = AnalyzeText(Trace({
      X("Operator", "ProfilerStep#1", "123", 100, 200, Ext(1)),
      X("Operator", "aten::to", "123", 200, 60, Ext(2)),
      X("Operator", "ProfilerStep#2", "123", 350, 150, Ext(3)),
      X("Operator", "aten::mm", "123", 360, 50, Ext(4)),
      X("Memcpy", "Memcpy HtoD (Pageable -> Device)", "stream 7", 280, 40, Dev(334, 2)),
      X("Runtime", "cudaMemcpyAsync", "123", 250, 5, Rt(334, 2)),
      X("Kernel", "void cunn_ClassNLLCriterion_updateGradInput_kernel<float>", "stream 7", 410, 200, Dev(40348, 4)),
      X("Runtime", "cudaLaunchKernel", "123", 400, 5, Rt(40348, 4)),
  }));
  ASSERT_EQ(a.steps.size(), 2u);
  ExpectStep(a.steps[0], 320 - 100, 0, 40, 0, 5, 0, 60 - 5, 200 - 60 - 20);
  ExpectStep(a.steps[1], 610 - 350, 200, 0, 0, 5, 0, 50 - 5, 360 - 350);
  EXPECT_EQ(Op(a, "aten::to").device_total_ns, 40 * us);
  EXPECT_EQ(Op(a, "aten::mm").device_self_ns, 200 * us);
}

TEST(TbPlugin, GpuUtilizationAndOccupancyWeightedByDuration) {
  auto k = [](double blocks, double occ) {
    return R"(, "blocks per SM": )" + std::to_string(blocks) + R"(, "est. achieved occupancy %": )" +
           std::to_string(occ);
  };
  Analysis a = AnalyzeText(Trace({
      X("Operator", "aten::mat_mul", "456", 100, 100, Ext(2)),
      X("Operator", "aten::mm", "456", 120, 70, Ext(4)),
      X("Kernel", "void cunn_kernel<float>", "stream 7", 130, 10, Dev(334, 4, k(0.5, 0.6))),
      X("Runtime", "cudaLaunchKernel", "456", 120, 0, Rt(334, 4)),
      X("Kernel", "void gemmSN_TN_kernel_64addr", "stream 8", 135, 15, Dev(335, 2, k(0.6, 0.1))),
      X("Kernel", "void gemmSN_TN_kernel_64addr", "stream 8", 150, 0, Dev(335, 2, k(0.3, 0.2))),
      X("Runtime", "cudaLaunchKernel", "456", 120, 0, Rt(335, 2)),
      X("Kernel", "void cunn_kernel<float>", "stream 7", 145, 25, Dev(336, 4, k(0.3, 1.0))),
      X("Runtime", "cudaLaunchKernel", "456", 125, 3, Rt(336, 4)),
      X("Kernel", "void cunn_kernel<float>", "stream 7", 200, 20, Dev(337, 2, k(10.5, 0.3))),
      X("Runtime", "cudaLaunchKernel", "456", 195, 1, Rt(337, 2)),
  }));
  // Blocks per SM and occupancy are kept as floats (estimates): compare to 1e-6.
  constexpr double kMetric = 1e-6;
  ASSERT_EQ(a.gpu.size(), 1u);
  EXPECT_EQ(a.gpu[0].window_ns, 120 * us);  // [100, 220]: the whole-trace step, re-timed
  EXPECT_EQ(a.gpu[0].window_kernel_ns, (40 + 20) * us);
  for (const KernelRow& r : a.kernels) {
    if (r.name == "void gemmSN_TN_kernel_64addr") {
      EXPECT_NEAR(r.blocks_per_sm, 0.6, kMetric);  // the zero-length kernel weighs nothing
      EXPECT_NEAR(r.occupancy, 0.1, kMetric);
      EXPECT_EQ(r.calls, 2u);
    } else {
      EXPECT_NEAR(r.blocks_per_sm, (0.5 * 10 + 0.3 * 25 + 10.5 * 20) / (10 + 25 + 20), kMetric);
      EXPECT_NEAR(r.occupancy, (0.6 * 10 + 1.0 * 25 + 0.3 * 20) / (10 + 25 + 20), kMetric);
    }
  }
}

TEST(TbPlugin, KernelsOutsideEveryStepGiveZeroUtilization) {
  Analysis a = AnalyzeText(Trace({
      X("Operator", "aten::mat_mul", "456", 10, 10, Ext(1)),
      X("Operator", "aten::mm", "456", 120, 70, Ext(3)),
      X("Operator", "aten::mm", "456", 220, 20, Ext(4)),
      X("Operator", "ProfilerStep#2", "456", 100, 100, Ext(2)),
      X("Kernel", "k", "stream 7", 60, 20, Dev(334, 1)),
      X("Runtime", "cudaLaunchKernel", "456", 15, 5, Rt(334, 1)),
      X("Kernel", "k", "stream 7", 240, 25, Dev(337, 4)),
      X("Runtime", "cudaLaunchKernel", "456", 230, 10, Rt(337, 4)),
  }));
  ASSERT_EQ(a.gpu.size(), 1u);
  EXPECT_EQ(a.gpu[0].window_kernel_ns, 0);
  EXPECT_EQ(a.gpu[0].window_ns, 100 * us);
}

// ---- edge cases beyond the plugin's tests, by hand

TEST(Analyzer, OverlappingStepsAreCutWhereTheNextStartsAndEachSumsToItsTotal) {
  // Host-only steps of one process that overlap (two threads): the profiler numbers its
  // steps per process, one after another, so the first ends where the second starts
  // (docs/reference.md, "Steps that overlap"); each step's parts sum to it.
  Analysis a = AnalyzeText(Trace({
      X("user_annotation", "ProfilerStep#1", "1", 0, 100),
      X("user_annotation", "ProfilerStep#2", "2", 50, 100),
      X("cpu_op", "aten::add", "1", 40, 30),
      X("cpu_op", "aten::mul", "2", 120, 10),
  }));
  ASSERT_EQ(a.steps.size(), 2u);
  ExpectStep(a.steps[0], 50, 0, 0, 0, 0, 0, 10, 40);        // [40,50) of aten::add
  ExpectStep(a.steps[1], 100, 0, 0, 0, 0, 0, 20 + 10, 70);  // [50,70) of aten::add and aten::mul
}

TEST(Analyzer, NestedStepsNeverGetANegativeTime) {
  // A step nested in another, the inner one launching device work that ends before the
  // outer one's end: re-timed, no step ends before it starts.
  Analysis a = AnalyzeText(Trace({
      X("user_annotation", "ProfilerStep#2", "1", 0, 1000),
      X("user_annotation", "ProfilerStep#3", "1", 100, 100),
      X("cuda_runtime", "cudaLaunchKernel", "1", 20, 5, Rt(1, 0)),
      X("kernel", "k", "stream 7", 30, 900, Dev(1, 0)),
      X("cuda_runtime", "cudaLaunchKernel", "1", 120, 5, Rt(2, 0)),
      X("kernel", "k", "stream 7", 130, 10, Dev(2, 0)),
  }));
  for (const StepRow& s : a.steps) EXPECT_GE(s.total_ns, 0) << s.name;
}

TEST(Analyzer, RuntimeOutsideAnyOperatorAndCommunication) {
  Analysis a = AnalyzeText(Trace({
      X("cpu_op", "ProfilerStep#3", "1", 0, 100),
      X("cuda_runtime", "cudaLaunchKernel", "1", 10, 5, Rt(1, 0)),  // belongs to no operator
      X("kernel", "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)", "stream 7", 20, 30, Dev(1, 0)),
      X("cpu_op", "nccl:all_reduce", "1", 40, 10),
      X("kernel", "void k<float>", "stream 7", 60, 10, Dev(2, 0)),
      X("cuda_runtime", "cudaLaunchKernel", "1", 55, 5, Rt(2, 0)),
  }));
  ASSERT_EQ(a.steps.size(), 1u);
  // communication: nccl kernel [20,50) and nccl:all_reduce [40,50); kernel [60,70).
  EXPECT_EQ(a.steps[0].communication_ns, 30 * us);
  ExpectStep(a.steps[0], 100, 10, 0, 0, 5 + 5, 0, 0, 100 - 30 - 10 - 10);
  EXPECT_EQ(Op(a, "nccl:all_reduce").device_total_ns, 0);
}

TEST(Analyzer, TailStepsWithoutDeviceWorkAreDropped) {
  Analysis a = AnalyzeText(Trace({
      X("cpu_op", "ProfilerStep#1", "1", 0, 100),
      X("cuda_runtime", "cudaLaunchKernel", "1", 10, 5, Rt(1, 0)),
      X("kernel", "k", "stream 7", 20, 30, Dev(1, 0)),
      X("cpu_op", "ProfilerStep#2", "1", 100, 100),
  }));
  ASSERT_EQ(a.steps.size(), 1u);
  EXPECT_EQ(a.steps[0].name, "ProfilerStep#1");
  EXPECT_EQ(a.trace.profiler_steps, 2u);
}

// ---- the model's rules on traces torch 2.x writes (README: differences from the plugin)

TEST(AnalyzerModel, StepsAreTheHostSideProfilerStepsOnly) {
  // torch >= 2.0 writes each ProfilerStep and each collective twice: on the host and,
  // as gpu_user_annotation, on the stream. The device copies are no steps and no operators.
  Analysis a = AnalyzeText(Trace({
      X("user_annotation", "ProfilerStep#1", "1", 0, 100, Ext(1)),
      X("gpu_user_annotation", "ProfilerStep#1", "stream 7", 20, 90, Ext(1)),
      X("user_annotation", "gloo:all_reduce", "1", 30, 20, Ext(2)),
      X("gpu_user_annotation", "gloo:all_reduce", "stream 7", 35, 10, Ext(2)),
      X("cpu_op", "aten::add", "1", 60, 20, Ext(3)),
      X("cuda_runtime", "cudaLaunchKernel", "1", 62, 5, Rt(9, 3)),
      X("kernel", "k", "stream 7", 70, 40, Dev(9, 3)),
  }));
  ASSERT_EQ(a.steps.size(), 1u);
  EXPECT_EQ(a.trace.profiler_steps, 1u);
  // [0,110): kernel [70,110), comm [30,50) on the host, runtime [62,67), cpu exec [60,70) less runtime.
  ExpectStep(a.steps[0], 110, 40, 0, 0, 5, 0, 10 - 5, 110 - 40 - 20 - 5 - 5);
  EXPECT_EQ(a.steps[0].communication_ns, 20 * us);
  ASSERT_EQ(a.operators.size(), 1u);  // annotations are never rows
  EXPECT_EQ(a.operators[0].name, "aten::add");
}

TEST(AnalyzerModel, DataLoaderWrittenAsUserAnnotation) {
  Analysis a = AnalyzeText(Trace({
      X("user_annotation", "ProfilerStep#3", "1", 0, 100),
      X("user_annotation", "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", "1", 0, 30),
      X("cpu_op", "aten::mm", "1", 40, 10),
  }));
  ASSERT_EQ(a.steps.size(), 1u);
  ExpectStep(a.steps[0], 100, 0, 0, 0, 0, 30, 10, 60);
}

TEST(AnalyzerModel, PythonFunctionsHaveNoPartOfTheirOwn) {
  // with_stack must not turn Python overhead into CPU Exec: uncovered Python time is Other.
  Analysis a = AnalyzeText(Trace({
      X("user_annotation", "ProfilerStep#3", "1", 0, 100),
      X("python_function", "train.py(10): step", "1", 0, 100),
      X("cpu_op", "aten::mm", "1", 40, 10),
  }));
  ExpectStep(a.steps[0], 100, 0, 0, 0, 0, 0, 10, 90);
}

TEST(AnalyzerModel, ACollectiveAnnotationAloneIsCommunication) {
  Analysis a = AnalyzeText(Trace({X("user_annotation", "nccl:all_reduce", "1", 10, 50)}));
  EXPECT_TRUE(a.whole_trace_step);
  ASSERT_EQ(a.steps.size(), 1u);
  EXPECT_EQ(a.steps[0].total_ns, 50 * us);
  EXPECT_EQ(a.steps[0].communication_ns, 50 * us);
  EXPECT_TRUE(a.operators.empty());
}

TEST(AnalyzerModel, MtiaDeviceEventsAreKernels) {
  Analysis a = AnalyzeText(Trace({
      X("user_annotation", "ProfilerStep#0", "1", 0, 100),
      X("mtia_runtime", "launch", "1", 10, 5),
      R"({"ph": "s", "cat": "ac2g", "name": "ac2g", "id": 4, "pid": 13721, "tid": "1", "ts": 10})",
      R"({"ph": "f", "cat": "ac2g", "name": "ac2g", "id": 4, "pid": 0, "tid": "stream 3", "ts": 20, "bp": "e"})",
      X("mtia_ccp_events", "pe_exe", "stream 3", 20, 30),
  }));
  ASSERT_EQ(a.steps.size(), 1u);
  ExpectStep(a.steps[0], 100, 30, 0, 0, 5, 0, 0, 65);
  ASSERT_EQ(a.gpu.size(), 1u);
  EXPECT_EQ(a.gpu[0].device, "mtia:0");
  EXPECT_EQ(a.gpu[0].kernel_ns, 30 * us);
}

TEST(AnalyzerModel, AnnotationsInsideAnOperatorAreNotItsSelfTime) {
  // torch.compile: CompiledFunction holds a record_function block that launches
  // Triton kernels. As in torch's own table, the block is the operator's child.
  Analysis a = AnalyzeText(Trace({
      X("cpu_op", "CompiledFunction", "1", 0, 100, Ext(1)),
      X("user_annotation", "## Call CompiledFxGraph abc ##", "1", 10, 80, Ext(2)),
      X("cuda_driver", "cuLaunchKernel", "1", 20, 10, Rt(5, 2)),
      X("kernel", "triton_poi_fused_0", "stream 7", 40, 30, Dev(5, 2)),
  }));
  EXPECT_EQ(Op(a, "CompiledFunction").host_self_ns, 20 * us);
  EXPECT_EQ(Op(a, "CompiledFunction").device_total_ns, 30 * us);
  EXPECT_EQ(Op(a, "CompiledFunction").device_self_ns, 0);
}

TEST(AnalyzerModel, ATraceOfMemoryEventsOnly) {
  // torch-tb-profiler's memory-curve tests: no timed events at all.
  Analysis a = AnalyzeText(Trace({
      R"({"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 10, "args": {"Addr": 1, "Bytes": 100, "Total Allocated": 600, "Device Type": 1, "Device Id": 0}})",
      R"({"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 20, "args": {"Addr": 1, "Bytes": -100, "Total Allocated": 500, "Device Type": 1, "Device Id": 0}})",
  }));
  EXPECT_TRUE(a.steps.empty());
  EXPECT_EQ(a.trace.span_ns, 10 * us);
  ASSERT_EQ(a.memory.size(), 1u);
  EXPECT_EQ(a.memory[0].device, "cuda:0");
  EXPECT_EQ(a.memory[0].peak_bytes, 600);
  EXPECT_EQ(a.memory[0].before_trace_bytes, 500);  // Total Allocated says 500 were there before
}

TEST(Analyzer, CategoriesSelfTimeSumsToBusyTime) {
  Analysis a = AnalyzeText(Trace({
      X("cpu_op", "aten::linear", "1", 0, 100),
      X("cpu_op", "aten::addmm", "1", 10, 50),
      X("cuda_runtime", "cudaLaunchKernel", "1", 20, 10),
      X("Kernel", "k", "stream 7", 40, 30),
      X("python_function", "model.py(3): forward", "1", 200, 10),
      X("cpu_op", "aten::empty", "1", 300, 0),
  }));
  std::map<std::string, CategoryRow> by;
  int64_t self = 0;
  for (const CategoryRow& c : a.categories) by[c.category] = c, self += c.self_ns;
  EXPECT_EQ(by["cpu_op"].events, 3u);
  EXPECT_EQ(by["cpu_op"].total_ns, 150 * us);
  EXPECT_EQ(by["cpu_op"].self_ns, (100 - 50 + 50 - 10) * us);
  EXPECT_EQ(by["cuda_runtime"].self_ns, 10 * us);
  EXPECT_EQ(by["Kernel"].role, Role::kKernel);
  int64_t busy = 0;
  for (const LaneInfo& l : a.trace.lanes) busy += l.busy_ns;
  EXPECT_EQ(self, busy);
}

TEST(Analyzer, MemoryPeaksAndAllocatingOperators) {
  Analysis a = AnalyzeText(Trace({
      X("cpu_op", "aten::empty", "1", 0, 10),
      X("cpu_op", "aten::add", "1", 20, 10),
      R"({"ph": "i", "s": "t", "name": "[memory]", "pid": 13721, "tid": "1", "ts": 5, "args": {"Addr": 1000, "Bytes": 512, "Total Allocated": 512, "Device Type": 1, "Device Id": 0}})",
      R"({"ph": "i", "s": "t", "name": "[memory]", "pid": 13721, "tid": "1", "ts": 25, "args": {"Addr": 2000, "Bytes": 256, "Total Allocated": 768, "Device Type": 1, "Device Id": 0}})",
      R"({"ph": "i", "s": "t", "name": "[memory]", "pid": 13721, "tid": "1", "ts": 40, "args": {"Addr": 1000, "Bytes": -512, "Total Allocated": 256, "Device Type": 1, "Device Id": 0}})",
      R"({"ph": "i", "s": "t", "name": "[memory]", "pid": 13721, "tid": "1", "ts": 45, "args": {"Addr": 77, "Bytes": 64, "Device Type": 0, "Device Id": -1}})",
  }));
  ASSERT_EQ(a.memory.size(), 2u);
  const MemoryRow& cpu = a.memory[0];
  EXPECT_EQ(cpu.device, "cpu");
  EXPECT_EQ(cpu.peak_bytes, 64);
  EXPECT_FALSE(cpu.from_totals);
  ASSERT_EQ(cpu.top_operators.size(), 1u);
  EXPECT_EQ(cpu.top_operators[0].name, "(no operator)");
  const MemoryRow& gpu = a.memory[1];
  EXPECT_EQ(gpu.device, "cuda:0");
  EXPECT_EQ(gpu.allocations, 2u);
  EXPECT_EQ(gpu.allocated_bytes, 768);
  EXPECT_EQ(gpu.frees, 1u);
  EXPECT_EQ(gpu.freed_bytes, 512);
  EXPECT_EQ(gpu.peak_bytes, 768);
  EXPECT_EQ(gpu.peak_ns, 25 * us);
  ASSERT_EQ(gpu.top_operators.size(), 2u);
  EXPECT_EQ(gpu.top_operators[0].name, "aten::empty");
  EXPECT_EQ(gpu.top_operators[0].bytes, 512);
  EXPECT_EQ(gpu.top_operators[1].name, "aten::add");

  // The chart's buckets: 480 equal stretches over [5us, 40us], each with its highest level.
  ASSERT_EQ(gpu.timeline.size(), static_cast<size_t>(kMemoryBuckets));
  EXPECT_EQ(gpu.timeline.front().start_ns, 5 * us);
  EXPECT_EQ(gpu.timeline.back().end_ns, 40 * us + 1);
  auto at = [&](int64_t t) -> const MemoryBucket& {
    for (const MemoryBucket& b : gpu.timeline) {
      if (b.start_ns <= t && t < b.end_ns) return b;
    }
    throw std::runtime_error("no bucket");
  };
  for (size_t i = 1; i < gpu.timeline.size(); ++i) EXPECT_EQ(gpu.timeline[i].start_ns, gpu.timeline[i - 1].end_ns);
  EXPECT_EQ(at(5 * us).max_bytes, 512);
  EXPECT_EQ(at(at(25 * us).start_ns - 1).max_bytes, 512);  // the stretch before
  EXPECT_EQ(at(25 * us).max_bytes, 768);
  EXPECT_EQ(at(39 * us).end_bytes, 768);
  EXPECT_EQ(at(40 * us).max_bytes, 768);  // 768 until the free in the same stretch
  EXPECT_EQ(at(40 * us).end_bytes, 256);
  int64_t highest = 0;
  for (const MemoryBucket& b : gpu.timeline) highest = std::max(highest, b.max_bytes);
  EXPECT_EQ(highest, gpu.peak_bytes);
  // A timeline shorter than 480 ns has one bucket per nanosecond.
  ASSERT_EQ(cpu.timeline.size(), 1u);
  EXPECT_EQ(cpu.timeline[0].max_bytes, 64);
}

TEST(Analyzer, RecommendationsCarryTheirNumbers) {
  // A step that is 60% DataLoader and a GPU busy 10% of it.
  Analysis a = AnalyzeText(Trace({
      X("cpu_op", "ProfilerStep#1", "1", 0, 1000),
      X("cpu_op", "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "1", 0, 600),
      X("cuda_runtime", "cudaLaunchKernel", "1", 700, 5, Rt(1, 0)),
      X("kernel", "k", "stream 7", 710, 100, Dev(1, 0)),
  }));
  // The critical path, walked back from 1000 on the host: the step's own time [705, 1000)
  // and [600, 700), the launch call [700, 705), the DataLoader [0, 600). The kernel ends
  // before the step does: off the path.
  ASSERT_EQ(a.recommendations.size(), 2u);
  EXPECT_EQ(a.recommendations[0].finding, Finding::kDataLoader);
  EXPECT_EQ(a.recommendations[0].saving_ns, 600 * 1000);
  EXPECT_NE(RecommendationText(a, a.recommendations[0]).find("60.0%"), std::string::npos)
      << RecommendationText(a, a.recommendations[0]);
  EXPECT_NE(RecommendationText(a, a.recommendations[0]).find("Load batches in worker processes"), std::string::npos);
  EXPECT_EQ(a.recommendations[1].finding, Finding::kLaunchBound);
  // Replayed without the launch call and the step's own Python: the host reaches the
  // launch at 600 (the DataLoader's end), the kernel starts 5 us after the call's end as
  // it did (its launch latency) and runs its 100: the step ends at 705, 295 sooner. The
  // kernel's own time remains.
  EXPECT_EQ(a.recommendations[1].saving_ns, 295 * 1000);
  EXPECT_EQ(a.recommendations[1].what_if, "cuda_graphs");
  // A DataLoader with worker processes already: the next step instead.
  Analysis w = AnalyzeText(Trace({
      X("cpu_op", "ProfilerStep#1", "1", 0, 1000),
      X("cpu_op", "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", "1", 0, 600),
  }));
  ASSERT_FALSE(w.recommendations.empty());
  EXPECT_EQ(w.recommendations[0].finding, Finding::kDataLoader);
  EXPECT_NE(RecommendationText(w, w.recommendations[0]).find("already loads in worker processes"), std::string::npos);
  EXPECT_EQ(RecommendationText(w, w.recommendations[0]).find("Load batches in worker processes"), std::string::npos);
}

// Found by fuzzing: header values of unexpected types are ignored, not thrown about.
TEST(Analyzer, HeaderValuesOfWrongTypesAreIgnored) {
  Analysis a = AnalyzeText(R"({"deviceProperties": [{"id": "0", "name": 7, "totalGlobalMem": "big", "numSms": 1e30,
      "computeMajor": [8]}, 3, {"id": 1, "name": "A100", "computeMajor": 8, "computeMinor": 0}],
      "distributedInfo": {"rank": "3", "world_size": -1.5e30, "backend": {}},
      "traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 5}]})");
  ASSERT_EQ(a.trace.devices.size(), 2u);
  EXPECT_EQ(a.trace.devices[0].id, -1);
  EXPECT_EQ(a.trace.devices[0].name, "");
  EXPECT_EQ(a.trace.devices[0].compute, "");
  EXPECT_EQ(a.trace.devices[1].name, "A100");
  EXPECT_EQ(a.trace.devices[1].compute, "8.0");
  EXPECT_EQ(a.trace.rank, -1);
  EXPECT_EQ(a.trace.backend, "");
}

// Lanes are walked in parallel; the numbers never depend on how many threads walk them.
TEST(Analyzer, ThreadsDoNotChangeTheAnalysis) {
  for (const char* name :
       {"kineto__resnet50_num_workers_4__worker0.pt.trace.json.gz",
        "hta__mtia_inference_trace__mtia_inference_rank_0.json.gz", "torch113__mlp_two_threads.pt.trace.json"}) {
    torch2pprof::Trace trace = LoadTrace(LoadOptions{std::string(TESTDATA_DIR) + "/real/" + name, 1, true});
    Executor ex(4);
    std::string one = RenderJson(Analyze(trace, BuildModel(trace), AnalysisOptions{}), ReportOptions{0, 0, ""});
    std::string four = RenderJson(Analyze(trace, BuildModel(trace), AnalysisOptions{}, ex), ReportOptions{0, 0, ""});
    EXPECT_EQ(one, four) << name;
    EXPECT_GT(one.size(), 500u) << name;  // a real report, not an empty one
    // The command's path builds the stacks beside the model, on the threads.
    for (int threads : {1, 2, 3}) {
      AnalyzeOptions options;
      options.input = std::string(TESTDATA_DIR) + "/real/" + name;
      options.threads = threads;
      EXPECT_EQ(RenderJson(Analyze(options).analysis, ReportOptions{0, 0, ""}), one) << name << " " << threads;
    }
  }
}

TEST(Analyzer, RolesFromOldAndNewSpellings) {
  EXPECT_EQ(RoleOfCategory("cpu_op"), Role::kOperator);
  EXPECT_EQ(RoleOfCategory("Operator"), Role::kOperator);
  EXPECT_EQ(RoleOfCategory("Runtime"), Role::kRuntime);
  EXPECT_EQ(RoleOfCategory("cuda_driver"), Role::kRuntime);
  EXPECT_EQ(RoleOfCategory("Kernel"), Role::kKernel);
  EXPECT_EQ(RoleOfCategory("Memcpy"), Role::kMemcpy);
  EXPECT_EQ(RoleOfCategory("gpu_memset"), Role::kMemset);
  EXPECT_EQ(RoleOfCategory("user_annotation"), Role::kUserAnnotation);
  EXPECT_EQ(RoleOfCategory("gpu_user_annotation"), Role::kDeviceAnnotation);
  EXPECT_EQ(RoleOfCategory("mtia_ccp_events"), Role::kKernel);
  EXPECT_EQ(RoleOfCategory(""), Role::kOperator);  // torch 1.13 writes no category
  EXPECT_EQ(RoleOfCategory("python_function"), Role::kPythonFunction);
  EXPECT_EQ(RoleOfCategory("cuda_sync"), Role::kOther);
}

}  // namespace
}  // namespace torch2pprof

namespace torch2pprof {
namespace {

TEST(AnalyzerModules, ModulesAndPythonFramesWithTheirBackward) {
  // Two Linear instances, one inside the other's module frame (recursion of the class);
  // the backward of the inner one's op, on the autograd thread, counts to both.
  Analysis a = AnalyzeText(Trace({
      X("python_function", "nn.Module: Linear_0", "1", 0, 100),
      X("python_function", "torch/nn/modules/linear.py(125): forward", "1", 5, 90),
      X("python_function", "nn.Module: Linear_1", "1", 10, 50),
      X("cpu_op", "aten::addmm", "1", 20, 20, R"({"Sequence number": 5, "Fwd thread id": 0, "External id": 9})"),
      X("cuda_runtime", "cudaLaunchKernel", "1", 25, 5, Rt(1, 9)),
      X("kernel", "gemm", "stream 7", 30, 10, Dev(1, 9)),
      X("cpu_op", "AddmmBackward0", "2", 200, 30, R"({"Sequence number": 5, "Fwd thread id": 1, "External id": 10})"),
      X("cuda_runtime", "cudaLaunchKernel", "2", 205, 5, Rt(2, 10)),
      X("kernel", "gemm_bwd", "stream 7", 210, 15, Dev(2, 10)),
      X("python_function", "<built-in method acquire of _thread.lock object>", "1", 60, 20),
  }));
  // The tree: Linear_1 under Linear_0, which called it.
  ASSERT_EQ(a.modules.size(), 2u);
  const ModuleNode& outer = a.modules[0];
  const ModuleNode& inner = a.modules[1];
  EXPECT_EQ(outer.name, "Linear_0");
  EXPECT_EQ(outer.module_class, "Linear");
  EXPECT_EQ(outer.parent, -1);
  EXPECT_EQ(inner.name, "Linear_1");
  EXPECT_EQ(inner.parent, 0);
  EXPECT_EQ(inner.depth, 1);
  // Linear_1: its 50 us (addmm inside) and the backward of its op on the autograd thread.
  EXPECT_EQ(inner.calls, 1u);
  EXPECT_EQ(inner.host_total_ns, (50 + 30) * us);
  EXPECT_EQ(inner.host_self_ns, (50 + 30) * us);
  EXPECT_EQ(inner.device_total_ns, (10 + 15) * us);
  EXPECT_EQ(inner.device_self_ns, (10 + 15) * us);
  // Linear_0: 100 us less the 20 us wait, plus the backward; its own is what Linear_1 is not.
  EXPECT_EQ(outer.host_total_ns, (100 - 20 + 30) * us);
  EXPECT_EQ(outer.host_self_ns, (100 - 20 + 30 - 80) * us);
  EXPECT_EQ(outer.device_total_ns, 25 * us);
  EXPECT_EQ(outer.device_self_ns, 0);
  // The class counts both instances, its total once per stack though one holds the other.
  ASSERT_EQ(a.module_classes.size(), 1u);
  const ModuleClassRow& cls = a.module_classes[0];
  EXPECT_EQ(cls.instances, 2u);
  EXPECT_EQ(cls.calls, 2u);
  EXPECT_EQ(cls.host_total_ns, (100 - 20 + 30) * us);
  EXPECT_EQ(cls.host_self_ns, (100 - 20 + 30) * us);
  EXPECT_EQ(cls.device_total_ns, 25 * us);
  EXPECT_EQ(cls.device_self_ns, 25 * us);
  ASSERT_FALSE(a.python_functions.empty());
  const PythonFunctionRow& fwd = a.python_functions[0];
  EXPECT_EQ(fwd.name, "forward torch/nn/modules/linear.py:125");
  EXPECT_EQ(fwd.file, "torch/nn/modules/linear.py");
  EXPECT_EQ(fwd.line, 125);
  EXPECT_EQ(fwd.host_self_ns, (90 - 50 - 20) * us);
}

TEST(AnalyzerModules, TheCallSpineIsNoModuleAndChildrenComeByCost) {
  // A model with two layers under the spine of Python frames that call them; the second
  // layer launches more device work and comes first among its siblings.
  Analysis a = AnalyzeText(Trace({
      X("python_function", "train.py(10): step", "1", 0, 300),
      X("python_function", "torch/nn/modules/module.py(1783): _call_impl", "1", 1, 298),
      X("python_function", "nn.Module: Model_0", "1", 2, 296),
      X("python_function", "nn.Module: Linear_0", "1", 10, 40),
      X("cpu_op", "aten::mm", "1", 15, 20, R"({"External id": 1})"),
      X("cuda_runtime", "cudaLaunchKernel", "1", 16, 5, Rt(1, 1)),
      X("kernel", "gemm", "stream 7", 30, 5, Dev(1, 1)),
      X("python_function", "nn.Module: GELU_0", "1", 60, 40),
      X("cpu_op", "aten::gelu", "1", 65, 20, R"({"External id": 2})"),
      X("cuda_runtime", "cudaLaunchKernel", "1", 66, 5, Rt(2, 2)),
      X("kernel", "gelu", "stream 7", 80, 50, Dev(2, 2)),
  }));
  ASSERT_EQ(a.modules.size(), 3u);
  EXPECT_EQ(a.modules[0].name, "Model_0");
  EXPECT_EQ(a.modules[1].name, "GELU_0");  // 50 us of device time before Linear_0's 5
  EXPECT_EQ(a.modules[2].name, "Linear_0");
  EXPECT_EQ(a.modules[1].parent, 0);
  EXPECT_EQ(a.modules[2].parent, 0);
  EXPECT_EQ(a.modules[0].device_self_ns, 0);
  ASSERT_EQ(a.module_classes.size(), 3u);
  EXPECT_EQ(a.module_classes[0].name, "GELU");  // by device self: the leaf layers lead
  EXPECT_EQ(a.module_classes[0].device_self_ns, 50 * us);
  EXPECT_EQ(a.module_classes[1].name, "Linear");
  for (const ModuleNode& m : a.modules) EXPECT_EQ(m.name.find("_call_impl"), std::string::npos);
}

}  // namespace
}  // namespace torch2pprof

namespace torch2pprof {
namespace {

TEST(AnalyzerLanes, AStreamIsBusyWhileItRunsDeviceWorkAndAThreadWorksWhenNotWaiting) {
  // The stream's ProfilerStep annotation spans 100 us around 30 us of kernels: its self
  // time is the device idling, in no busy time, no work and no category's self time.
  Analysis a = AnalyzeText(Trace({
      X("user_annotation", "ProfilerStep#1", "1", 0, 200, Ext(1)),
      X("cuda_runtime", "cudaLaunchKernel", "1", 10, 5, Rt(1, 2)),
      X("python_function", "<built-in method acquire of _thread.lock object>", "1", 50, 40),
      X("gpu_user_annotation", "ProfilerStep#1", "stream 7", 20, 100, Ext(1)),
      X("kernel", "k1", "stream 7", 30, 10, Dev(1, 2)),
      X("kernel", "k2", "stream 7", 60, 20, Dev(2, 2)),
  }));
  ASSERT_EQ(a.trace.lanes.size(), 2u);
  const LaneInfo& cpu = a.trace.lanes[0];
  const LaneInfo& stream = a.trace.lanes[1];
  EXPECT_FALSE(cpu.device);
  EXPECT_EQ(cpu.busy_ns, 200 * us);
  EXPECT_EQ(cpu.work_ns, (200 - 40) * us);  // the lock wait is left out
  EXPECT_TRUE(stream.device);
  EXPECT_EQ(stream.busy_ns, 30 * us);
  EXPECT_EQ(stream.work_ns, -1);
  ASSERT_EQ(a.gpu.size(), 1u);
  EXPECT_EQ(a.gpu[0].busy_ns, stream.busy_ns);
  int64_t self = 0;
  for (const CategoryRow& c : a.categories) {
    self += c.self_ns;
    if (c.category == "gpu_user_annotation") {
      EXPECT_EQ(c.self_ns, 0);
      EXPECT_EQ(c.covered_ns, 100 * us);
      EXPECT_EQ(c.total_ns, 100 * us);
    }
    if (c.category == "kernel") {
      EXPECT_EQ(c.self_ns, 30 * us);
    }
  }
  EXPECT_EQ(self, cpu.busy_ns + stream.busy_ns);
}

TEST(AnalyzerLanes, ACategoryCoversTheUnionOfItsEventsNotTheirSum) {
  // Nested Python frames: 100 + 80 + 30 us of durations cover 100 us of the thread.
  Analysis a = AnalyzeText(Trace({
      X("python_function", "a.py(1): f", "1", 0, 100),
      X("python_function", "a.py(2): g", "1", 10, 80),
      X("python_function", "a.py(3): h", "1", 20, 30),
      X("python_function", "a.py(4): h", "2", 50, 60),
      X("cpu_op", "aten::mm", "1", 200, 10),
  }));
  for (const CategoryRow& c : a.categories) {
    if (c.category == "python_function") {
      EXPECT_EQ(c.total_ns, (100 + 80 + 30 + 60) * us);
      EXPECT_EQ(c.covered_ns, (100 + 60) * us);
    }
  }
}

TEST(AnalyzerKernels, AnOccupancyOfZeroIsNoEstimate) {
  // Kineto writes 0 where CUPTI gives no estimate; the weighted mean leaves those out.
  Analysis a = AnalyzeText(Trace({
      X("kernel", "nvjet", "stream 7", 0, 10, R"({"device": 0, "est. achieved occupancy %": 0})"),
      X("kernel", "k", "stream 7", 20, 10, R"({"device": 0, "est. achieved occupancy %": 50})"),
      X("kernel", "k", "stream 7", 40, 30, R"({"device": 0, "est. achieved occupancy %": 0})"),
      X("kernel", "k", "stream 7", 80, 30, R"({"device": 0, "est. achieved occupancy %": 100})"),
  }));
  for (const KernelRow& k : a.kernels) {
    if (k.name == "nvjet") {
      EXPECT_LT(k.occupancy, 0);
    } else {
      EXPECT_DOUBLE_EQ(k.occupancy, (10 * 50 + 30 * 100) / 40.0);
    }
  }
}

TEST(AnalyzerMemory, OperatorsRankByWhatTheyHoldAtThePeak) {
  // aten::empty allocates most over the trace but frees it all before the peak; aten::mm
  // holds 30 bytes there.
  Analysis a = AnalyzeText(Trace({
      X("cpu_op", "aten::empty", "1", 0, 10),
      X("cpu_op", "aten::mm", "1", 20, 10),
      R"({"ph": "i", "name": "[memory]", "pid": 13721, "tid": "1", "ts": 1, "args": {"Device Type": 1, "Device Id": 0, "Addr": 1, "Bytes": 100}})",
      R"({"ph": "i", "name": "[memory]", "pid": 13721, "tid": "1", "ts": 2, "args": {"Device Type": 1, "Device Id": 0, "Addr": 1, "Bytes": -100}})",
      R"({"ph": "i", "name": "[memory]", "pid": 13721, "tid": "1", "ts": 21, "args": {"Device Type": 1, "Device Id": 0, "Addr": 2, "Bytes": 30}})",
  }));
  ASSERT_EQ(a.memory.size(), 1u);
  const MemoryRow& m = a.memory[0];
  EXPECT_EQ(m.peak_bytes, 100);  // the first allocation is the peak ...
  ASSERT_EQ(m.top_operators.size(), 2u);
  EXPECT_EQ(m.top_operators[0].name, "aten::empty");  // ... and aten::empty holds it there
  EXPECT_EQ(m.top_operators[0].live_bytes, 100);
  EXPECT_EQ(m.top_operators[1].name, "aten::mm");
  EXPECT_EQ(m.top_operators[1].live_bytes, 0);
  EXPECT_EQ(m.top_operators[1].bytes, 30);
}

}  // namespace
}  // namespace torch2pprof

namespace torch2pprof {
namespace {

// record_function("block") [0, 100) on thread 1 around aten::addmm, whose kernel runs
// 10 us; nested "inner" [20, 45) around it too. The addmm's backward runs on thread 2 at
// 200 for 30 us and launches 15 us. "after" [300, 310) launches nothing. Each
// annotation: its spans, the device time launched inside, the linked backward.
TEST(Analyzer, AnnotationsWithTheirBackward) {
  Analysis a = AnalyzeText(Trace({
      X("user_annotation", "block", "1", 0, 100),
      X("user_annotation", "inner", "1", 20, 25),
      X("cpu_op", "aten::addmm", "1", 22, 20, R"({"Sequence number": 5, "Fwd thread id": 0, "External id": 9})"),
      X("cuda_runtime", "cudaLaunchKernel", "1", 25, 5, Rt(1, 9)),
      X("kernel", "gemm", "stream 7", 30, 10, Dev(1, 9)),
      X("cpu_op", "AddmmBackward0", "2", 200, 30, R"({"Sequence number": 5, "Fwd thread id": 1, "External id": 10})"),
      X("cuda_runtime", "cudaLaunchKernel", "2", 205, 5, Rt(2, 10)),
      X("kernel", "gemm_bwd", "stream 7", 210, 15, Dev(2, 10)),
      X("user_annotation", "after", "1", 300, 10),
  }));
  ASSERT_EQ(a.annotations.size(), 3u);
  const AnnotationRow& block = a.annotations[0];
  EXPECT_EQ(block.name, "block");
  EXPECT_EQ(block.calls, 1u);
  EXPECT_EQ(block.host_ns, 100 * us);
  EXPECT_EQ(block.device_ns, 10 * us);
  EXPECT_EQ(block.backward_host_ns, 30 * us);
  EXPECT_EQ(block.backward_device_ns, 15 * us);
  const AnnotationRow& inner = a.annotations[1];
  EXPECT_EQ(inner.name, "inner");
  EXPECT_EQ(inner.host_ns, 25 * us);
  EXPECT_EQ(inner.device_ns, 10 * us);
  EXPECT_EQ(inner.backward_device_ns, 15 * us);
  const AnnotationRow& after = a.annotations[2];
  EXPECT_EQ(after.host_ns, 10 * us);
  EXPECT_EQ(after.device_ns + after.backward_host_ns + after.backward_device_ns, 0);
  ReportOptions csv;
  csv.table = "annotations";
  EXPECT_EQ(RenderCsv(a, csv),
            "name,calls,host_us,device_us,backward_host_us,backward_device_us\n"
            "block,1,100,10,30,15\n"
            "inner,1,25,10,30,15\n"
            "after,1,10,0,0,0\n");
}

}  // namespace
}  // namespace torch2pprof
