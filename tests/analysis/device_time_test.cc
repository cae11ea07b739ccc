// GPU idle time by cause and launch statistics on hand-made traces, each number worked
// out by hand in the comments (HTA's definitions, docs/reference.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "analysis/analyzer.h"
#include "analysis/stages.h"
#include "test_util.h"
#include "torch2pprof/report.h"
#include "torch2pprof/stages/trace_loader.h"

namespace torch2pprof {
namespace {

constexpr int64_t us = 1000;

using testing::AnalyzeText;

std::string Call(const char* name, int ts, int dur, int corr) {
  return std::string(R"({"ph": "X", "cat": "cuda_runtime", "name": ")") + name + R"(", "pid": 1, "tid": 1, "ts": )" +
         std::to_string(ts) + R"(, "dur": )" + std::to_string(dur) + R"(, "args": {"correlation": )" +
         std::to_string(corr) + "}}";
}
std::string Work(const char* cat, int stream, int ts, int dur, int corr) {
  return std::string(R"({"ph": "X", "cat": ")") + cat + R"(", "name": "k", "pid": 0, "tid": )" +
         std::to_string(stream) + R"(, "ts": )" + std::to_string(ts) + R"(, "dur": )" + std::to_string(dur) +
         R"(, "args": {"device": 0, "stream": )" + std::to_string(stream) +
         (corr ? R"(, "correlation": )" + std::to_string(corr) : std::string()) + "}}";
}

// Stream 7: k1 [100, 200); k2 launched at 150 (before k1 ended), runs [210, 260): a 10 us
// gap under 30 us, kernel wait; k3 launched at 300 (after k2 ended at 260), runs
// [320, 330): 60 us of host wait; k4 has no launch (no correlation), runs [400, 450):
// 70 us, other; k5 inside k4 [410, 420) and k6 [460, 470): k6 starts 10 us after the
// latest end (450), not after k5's 420 (kernel wait 10, not 40). A memcpy on stream 9
// alone: one piece of work, no gap.
TEST(DeviceTime, IdleGapsByCause) {
  Analysis a = AnalyzeText("[" + Call("cudaLaunchKernel", 90, 5, 1) + "," + Work("kernel", 7, 100, 100, 1) + "," +
                           Call("cudaLaunchKernel", 150, 5, 2) + "," + Work("kernel", 7, 210, 50, 2) + "," +
                           Call("cudaLaunchKernel", 300, 5, 3) + "," + Work("kernel", 7, 320, 10, 3) + "," +
                           Work("kernel", 7, 400, 50, 0) + "," + Work("kernel", 7, 410, 10, 0) + "," +
                           Work("kernel", 7, 460, 10, 0) + "," + Call("cudaMemcpyAsync", 100, 20, 9) + "," +
                           Work("gpu_memcpy", 9, 500, 25, 9) + "]");
  ASSERT_EQ(a.idle_time.size(), 2u);
  const IdleRow& s7 = a.idle_time[0];
  EXPECT_EQ(s7.stream, "7");
  EXPECT_EQ(s7.device, "cuda:0");
  EXPECT_EQ(s7.host_wait_ns, 60 * us);
  EXPECT_EQ(s7.kernel_wait_ns, 20 * us);
  EXPECT_EQ(s7.other_ns, 70 * us);
  EXPECT_EQ(s7.gaps, 4u);
  EXPECT_EQ(s7.busy_ns, (100 + 50 + 10 + 50 + 10) * us);
  // No host operator, so no step (not even the whole trace): no gap is in one.
  EXPECT_TRUE(a.steps.empty());
  EXPECT_EQ(s7.step_host_wait_ns + s7.step_kernel_wait_ns + s7.step_other_ns, 0);
  const IdleRow& s9 = a.idle_time[1];
  EXPECT_EQ(s9.stream, "9");
  EXPECT_EQ(s9.idle_ns(), 0);
  EXPECT_EQ(s9.busy_ns, 25 * us);

  // Launches: the three cudaLaunchKernel and the cudaMemcpyAsync (k4-k6 have none).
  // Delays: k1 100-95 = 5, k2 210-155 = 55, k3 320-305 = 15, memcpy 500-120 = 380 us.
  // Calls 5, 5, 5, 20 us; device times 100, 50, 10, 25 us.
  const LaunchStats& l = a.kernel_launches;
  EXPECT_EQ(l.count, 4u);
  EXPECT_EQ(l.launch_delay.p50, 15 * us);  // nearest rank: the 2nd of 4
  EXPECT_EQ(l.launch_delay.p90, 380 * us);
  EXPECT_EQ(l.launch_delay.max, 380 * us);
  EXPECT_EQ(l.launch_delay.mean, (5 + 55 + 15 + 380) * us / 4);
  EXPECT_EQ(l.cpu_duration.p50, 5 * us);
  EXPECT_EQ(l.gpu_duration.p50, 25 * us);
  EXPECT_EQ(l.long_delays, 1u);    // 380 > 100
  EXPECT_EQ(l.slow_launches, 0u);  // no call over 50
  EXPECT_EQ(l.short_kernels, 0u);  // no device time under its call

  // Queue on stream 7: +1 at 90, -1 at 100, +1 at 150, -1 at 210, +1 at 300, -1 at 320:
  // 1 0 1 0 1 0, mean 0.5, max 1; on stream 9: 1 0.
  ASSERT_EQ(a.queue_length.size(), 2u);
  EXPECT_EQ(a.queue_length[0].launches, 3u);
  EXPECT_DOUBLE_EQ(a.queue_length[0].mean, 0.5);
  EXPECT_EQ(a.queue_length[0].length.max, 1);
  EXPECT_EQ(a.queue_length[0].length.p50, 0);
  EXPECT_EQ(a.queue_length[1].stream, "9");
  EXPECT_EQ(a.queue_length[1].launches, 1u);

  const std::string json = RenderJson(a, ReportOptions{});
  EXPECT_NE(json.find("\"idle_time\": ["), std::string::npos);
  EXPECT_NE(json.find("\"host_wait_us\": 60"), std::string::npos);
  EXPECT_NE(json.find("\"kernel_launches\": {"), std::string::npos);
  EXPECT_NE(json.find("\"launch_delay_us\": {"), std::string::npos);
  EXPECT_NE(json.find("\"p99\": 380"), std::string::npos);
  ReportOptions csv;
  csv.table = "idle_time";
  EXPECT_EQ(RenderCsv(a, csv).substr(0, 0x8a),
            "device,stream,busy_us,idle_us,host_wait_us,kernel_wait_us,other_us,host_wait_per_step_us,"
            "kernel_wait_per_step_us,other_per_step_us,gaps\n"
            "cu");
  csv.table = "kernel_launches";
  EXPECT_NE(RenderCsv(a, csv).find("launch_delay,4,"), std::string::npos);
  const std::string text = RenderText(a, ReportOptions{});
  EXPECT_NE(text.find("GPU idle time by cause"), std::string::npos);
  EXPECT_NE(text.find("Kernel launches (4 launch calls"), std::string::npos);
}

// 101 launches with delays from a fixed generator: each percentile is the nearest rank of
// the delays sorted here, and the mean their integer mean.
TEST(DeviceTime, LaunchDelayPercentilesAreNearestRanks) {
  std::vector<int64_t> delays;
  std::string json = "[";
  uint64_t x = 12345;
  for (int i = 0; i < 101; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const int d = static_cast<int>((x >> 33) % 900);
    delays.push_back(d * us);
    json += (i ? "," : "") + Call("cudaLaunchKernel", 1000 * i, 2, i + 1) + "," +
            Work("kernel", 7, 1000 * i + 2 + d, 1, i + 1);
  }
  const LaunchStats l = AnalyzeText(json + "]").kernel_launches;
  std::vector<int64_t> sorted = delays;
  std::sort(sorted.begin(), sorted.end());
  auto rank = [&](size_t q) { return sorted[(sorted.size() * q + 99) / 100 - 1]; };
  ASSERT_EQ(l.count, 101u);
  EXPECT_EQ(l.launch_delay.p50, rank(50));
  EXPECT_EQ(l.launch_delay.p90, rank(90));
  EXPECT_EQ(l.launch_delay.p99, rank(99));
  EXPECT_EQ(l.launch_delay.max, sorted.back());
  int64_t sum = 0;
  for (int64_t d : delays) sum += d;
  EXPECT_EQ(l.launch_delay.mean, sum / 101);
}

// A launch that enters the queue at the instant the work before it starts: the work
// leaves first. +1 at 0, -1 and +1 at 10, -1 at 20: levels 1 0 1 0 (max 1), not 1 2 1 0.
TEST(DeviceTime, QueueAtOneInstantWorkLeavesBeforeALaunchEnters) {
  Analysis a = AnalyzeText("[" + Call("cudaLaunchKernel", 0, 1, 1) + "," + Work("kernel", 7, 10, 5, 1) + "," +
                           Call("cudaLaunchKernel", 10, 1, 2) + "," + Work("kernel", 7, 20, 5, 2) + "]");
  ASSERT_EQ(a.queue_length.size(), 1u);
  EXPECT_EQ(a.queue_length[0].launches, 2u);
  EXPECT_EQ(a.queue_length[0].length.max, 1);
  EXPECT_DOUBLE_EQ(a.queue_length[0].mean, 0.5);
}

// A CPU-only trace: neither view.
TEST(DeviceTime, NoDeviceNoViews) {
  Analysis a = AnalyzeText(R"([{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 0,
                                "dur": 10}])");
  EXPECT_TRUE(a.idle_time.empty());
  EXPECT_EQ(a.kernel_launches.count, 0u);
  EXPECT_EQ(RenderText(a, ReportOptions{}).find("Kernel launches"), std::string::npos);
}

}  // namespace
}  // namespace torch2pprof

namespace torch2pprof {
namespace {

std::string Op(const char* name, int ts, int dur, int external, int tid = 1) {
  return std::string(R"({"ph": "X", "cat": "cpu_op", "name": ")") + name + R"(", "pid": 1, "tid": )" +
         std::to_string(tid) + R"(, "ts": )" + std::to_string(ts) + R"(, "dur": )" + std::to_string(dur) +
         R"(, "args": {"External id": )" + std::to_string(external) + "}}";
}
std::string Runtime(const char* name, int ts, int dur, int corr, int external) {
  return std::string(R"({"ph": "X", "cat": "cuda_runtime", "name": ")") + name + R"(", "pid": 1, "tid": 1, "ts": )" +
         std::to_string(ts) + R"(, "dur": )" + std::to_string(dur) + R"(, "args": {"correlation": )" +
         std::to_string(corr) + R"(, "External id": )" + std::to_string(external) + "}}";
}
std::string Copy(const char* name, int ts, int dur, int corr, int64_t bytes) {
  return std::string(R"({"ph": "X", "cat": "gpu_memcpy", "name": ")") + name + R"(", "pid": 0, "tid": 9, "ts": )" +
         std::to_string(ts) + R"(, "dur": )" + std::to_string(dur) + R"(, "args": {"device": 0, "stream": 9)" +
         (corr ? R"(, "correlation": )" + std::to_string(corr) : std::string()) +
         (bytes >= 0 ? R"(, "bytes": )" + std::to_string(bytes) : std::string()) + "}}";
}
std::string Kernel(const std::string& name, int ts, int dur, int corr) {
  return R"({"ph": "X", "cat": "kernel", "name": ")" + name + R"(", "pid": 0, "tid": 7, "ts": )" + std::to_string(ts) +
         R"(, "dur": )" + std::to_string(dur) + R"(, "args": {"device": 0, "stream": 7, "correlation": )" +
         std::to_string(corr) + "}}";
}

// DtoH pageable: c1 [100, 200) 1,000,000 B (10 GB/s), c2 [150, 250) 2,000,000 B (20 GB/s,
// with c1 30 GB/s at once), c3 [250, 300) 500,000 B (10 GB/s; it starts as c2 ends: not at
// once), c4 [400, 450) without bytes. Bandwidth over c1-c3: 3.5e6 B / 250 us = 14 GB/s.
// HtoD pinned: h1 [500, 510) 1,000,000 B: 100 GB/s. aten::copy_ launched c1 and c2; c3 and
// h1 have no operator (their calls carry no External id an operator claims).
TEST(DeviceTime, CopiesByKindWithBandwidth) {
  const char* d2h = "Memcpy DtoH (Device -> Pageable)";
  Analysis a = AnalyzeText("[" + Op("aten::copy_", 50, 100, 5) + "," + Runtime("cudaMemcpyAsync", 60, 5, 1, 5) + "," +
                           Runtime("cudaMemcpyAsync", 70, 5, 2, 5) + "," + Runtime("cudaMemcpyAsync", 240, 5, 3, 0) +
                           "," + Copy(d2h, 100, 100, 1, 1000000) + "," + Copy(d2h, 150, 100, 2, 2000000) + "," +
                           Copy(d2h, 250, 50, 3, 500000) + "," + Copy(d2h, 400, 50, 0, -1) + "," +
                           Copy("Memcpy HtoD (Pinned -> Device)", 500, 10, 0, 1000000) + "]");
  ASSERT_EQ(a.copies.size(), 2u);
  const CopyRow& p = a.copies[0];
  EXPECT_EQ(p.kind, d2h);
  EXPECT_EQ(p.device, "cuda:0");
  EXPECT_EQ(p.count, 4u);
  EXPECT_EQ(p.with_bytes, 3u);
  EXPECT_EQ(p.bytes, 3500000);
  EXPECT_EQ(p.time_ns, 300 * us);
  EXPECT_EQ(p.time_with_bytes_ns, 250 * us);
  EXPECT_DOUBLE_EQ(p.gb_per_s(), 14.0);
  EXPECT_DOUBLE_EQ(p.peak_gb_per_s, 30.0);
  EXPECT_TRUE(p.pageable());
  EXPECT_DOUBLE_EQ(a.copies[1].gb_per_s(), 100.0);
  EXPECT_FALSE(a.copies[1].pageable());
  // By launching operator: c1 and c2 under aten::copy_, the rest under none.
  ASSERT_FALSE(a.kernels_by_operator.empty());
  const KernelOpRow& top = a.kernels_by_operator[0];
  EXPECT_EQ(top.op, "aten::copy_");
  EXPECT_EQ(top.kernel, d2h);
  EXPECT_EQ(top.calls, 2u);
  EXPECT_EQ(top.bytes, 3000000);
  EXPECT_EQ(top.total_ns, 200 * us);
  const std::string json = RenderJson(a, ReportOptions{});
  EXPECT_NE(json.find("\"gb_per_s\": 14,"), std::string::npos) << json;
  EXPECT_NE(json.find("\"bytes\": 3500000,"), std::string::npos);
  ReportOptions csv;
  csv.table = "copies";
  // The one step is aten::copy_'s span [50, 150): c1 and c2 were launched in it.
  EXPECT_EQ(p.step_count, 2u);
  EXPECT_EQ(p.step_time_ns, 200 * us);
  EXPECT_EQ(p.step_bytes, 3000000);
  const std::string table = RenderCsv(a, csv);
  EXPECT_EQ(table.substr(0, table.find('\n', table.find('\n') + 1)),
            "device,kind,count,bytes,time_us,gb_per_s,peak_gb_per_s,with_bytes,count_per_step,time_per_step_us,"
            "bytes_per_step\n"
            "cuda:0,Memcpy DtoH (Device -> Pageable),4,3500000,300,14,30,3,2,200,3000000");
  // The pageable copies are a finding. The one step is aten::copy_'s span [50, 150)
  // re-timed to the end of the copies it launched: [50, 250). Walked back from c2's end:
  // c2 [150, 250) and c1 [100, 150) (c2 started later: from 150 it is the innermost),
  // c1's wait for its launch [60, 100), then aten::copy_ [50, 60): 100 + 50 + 40 of the
  // pageable copies on the critical path, 10 of the operator. Its saving is the replay's:
  // pinned, c1 runs at twice the bandwidth [100, 150), c2 (which began 50 us before c1's
  // end) at 100 for 50: the step ends at 150, not 250.
  const Recommendation* pageable = nullptr;
  for (const Recommendation& r : a.recommendations) pageable = r.finding == Finding::kPageableCopies ? &r : pageable;
  ASSERT_NE(pageable, nullptr);
  EXPECT_EQ(pageable->cause_ns, 190 * us);
  EXPECT_EQ(pageable->saving_ns, 100 * us);
  EXPECT_EQ(pageable->what_if, "pinned");
  EXPECT_NE(RecommendationText(a, *pageable).find("2 Memcpy DtoH (Device -> Pageable) on cuda:0 (200us at 14.0 GB/s)"),
            std::string::npos)
      << RecommendationText(a, *pageable);
  EXPECT_NE(RecommendationText(a, *pageable).find("in aten::copy_"), std::string::npos)
      << RecommendationText(a, *pageable);
  ASSERT_EQ(a.critical_path.size(), 1u);
  EXPECT_EQ(a.critical_path[0].length_ns, 200 * us);
  EXPECT_EQ(a.critical_path[0].bound_ns[static_cast<int>(Bound::kGpuCompute)], 150 * us);
  // HTA's gpu_compute_bound holds the copies: in plain words, the step is bound by them.
  EXPECT_EQ(a.critical_path[0].copy_ns, 150 * us);
  EXPECT_STREQ(a.critical_path[0].bound_words(), "device copies");
  EXPECT_EQ(a.critical_path[0].bound_ns[static_cast<int>(Bound::kLaunch)], 40 * us);
  EXPECT_EQ(a.critical_path[0].bound_ns[static_cast<int>(Bound::kCpu)], 10 * us);
}

std::string Step(int dur) {
  return R"({"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": )" +
         std::to_string(dur) + "}";
}

const Recommendation* FindingById(const Analysis& a, const std::string& id) {
  for (const Recommendation& r : a.recommendations) {
    if (r.id() == id) return &r;
  }
  return nullptr;
}

// aten::mm launches an FP32 xmma GEMM (ffma: CUDA cores) [30, 230); aten::addmm an nvjet
// GEMM (Tensor Cores) [230, 330); aten::add an elementwise kernel [340, 390). Kernel time
// 350 us, 100 on Tensor Cores. aten::_local_scalar_dense (.item()) waits 80 us in
// cudaStreamSynchronize, within the step of 1000 us.
TEST(DeviceTime, TensorCoresKernelsByOperatorAndSynchronizations) {
  const std::string fp32 = "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize256x128x8_stage3_ffma_execute_kernel";
  Analysis a = AnalyzeText(
      "[" + Step(1000) + "," + Op("aten::mm", 10, 100, 1) + "," + Runtime("cudaLaunchKernel", 20, 5, 1, 1) + "," +
      Kernel(fp32, 30, 200, 1) + "," + Op("aten::addmm", 115, 50, 2) + "," + Runtime("cudaLaunchKernel", 120, 5, 2, 2) +
      "," + Kernel("nvjet_sm90_tst_128x128_64x6_2x1_v_bz_NNT", 230, 100, 2) + "," + Op("aten::add", 300, 50, 3) + "," +
      Runtime("cudaLaunchKernel", 310, 5, 3, 3) + "," + Kernel("vectorized_elementwise_kernel", 340, 50, 3) + "," +
      Op("aten::_local_scalar_dense", 400, 100, 4) + "," + Runtime("cudaStreamSynchronize", 410, 80, 4, 4) + "]");
  const TensorCoreUse& tc = a.tensor_cores;
  EXPECT_EQ(tc.kernel_ns, 350 * us);
  EXPECT_EQ(tc.tensor_core_ns, 100 * us);
  EXPECT_DOUBLE_EQ(tc.kernel_time_share(), 100.0 / 350.0);
  ASSERT_EQ(tc.ops.size(), 3u);
  EXPECT_EQ(tc.ops[0].op, "aten::mm");
  EXPECT_TRUE(tc.ops[0].eligible);
  EXPECT_EQ(tc.ops[0].tensor_core_ns, 0);
  EXPECT_EQ(tc.ops[1].op, "aten::addmm");
  EXPECT_EQ(tc.ops[1].tensor_core_ns, 100 * us);
  EXPECT_FALSE(tc.ops[2].eligible);  // aten::add
  ASSERT_EQ(a.kernels_by_operator.size(), 3u);
  EXPECT_EQ(a.kernels_by_operator[0].op, "aten::mm");
  EXPECT_EQ(a.kernels_by_operator[0].kernel, fp32);
  EXPECT_FALSE(a.kernels_by_operator[0].tensor_cores);
  EXPECT_TRUE(a.kernels_by_operator[1].tensor_cores);
  EXPECT_EQ(a.kernels_by_operator[1].bytes, -1);
  ASSERT_EQ(a.synchronizations.size(), 1u);
  EXPECT_EQ(a.synchronizations[0].call, "cudaStreamSynchronize");
  EXPECT_EQ(a.synchronizations[0].op, "aten::_local_scalar_dense");
  EXPECT_EQ(a.synchronizations[0].total_ns, 80 * us);
  // The host is the long pole: the device's work [30, 390) ends long before the step, and
  // the synchronization waits for nothing (k3 ended at 390, before it began). Walked back
  // from 1000 on the host: the step's own time (no operator open: 500 + 50 + 135 + 5 + 10
  // = 700), the operators' (10 + 10 + 35 + 10 + 40 + 5 + 85 + 10 = 205), the wait's own
  // 80 and three launch calls of 5. The FP32 matmul is off the critical path: no Tensor
  // Core finding, whatever its time.
  // The savings are replays. Without the launch calls and the Python: the host runs the
  // operators (205) and the wait (80), 285 in all; k1 starts 5 us after its call as it did
  // [15, 215), k2 queues behind it [215, 315), k3 after its recorded 10 us gap [325, 375):
  // the step ends at 375, 625 sooner. The operators at half their time: 102.5 sooner (the
  // device is far ahead). Without the wait: its 80.
  ASSERT_EQ(a.critical_path.size(), 1u);
  EXPECT_EQ(a.critical_path[0].bound_ns[static_cast<int>(Bound::kCpu)], 1000 * us);
  ASSERT_EQ(a.recommendations.size(), 3u) << RecommendationText(a, a.recommendations[0]);
  EXPECT_EQ(a.recommendations[0].finding, Finding::kLaunchBound);
  EXPECT_EQ(a.recommendations[0].saving_ns, 625 * us);
  EXPECT_EQ(a.recommendations[1].finding, Finding::kHostBound);
  EXPECT_EQ(a.recommendations[1].saving_ns, 102500);
  EXPECT_EQ(a.recommendations[2].finding, Finding::kSynchronizations);
  EXPECT_EQ(a.recommendations[2].saving_ns, 80 * us);
  EXPECT_NE(RecommendationText(a, a.recommendations[2]).find("cudaStreamSynchronize under aten::_local_scalar_dense"),
            std::string::npos);
  const std::string json = RenderJson(a, ReportOptions{});
  EXPECT_NE(json.find("\"kernel_time_share\": 0.285714"), std::string::npos) << json;
  EXPECT_NE(json.find("\"saving_us\": 625,"), std::string::npos) << json;
  EXPECT_NE(json.find("\"what_if\": \"cuda_graphs\""), std::string::npos);

  // The synchronization waits for the FP32 matmul [30, 430): the path goes through it.
  // Walked back: the step's own [500, 1000), the operator after the wait [440, 500), the
  // wait's own [430, 440), the matmul [30, 430), its wait for its launch [20, 30),
  // aten::mm [10, 20), the step [0, 10).
  Analysis c =
      AnalyzeText("[" + Step(1000) + "," + Op("aten::mm", 10, 100, 1) + "," + Runtime("cudaLaunchKernel", 20, 5, 1, 1) +
                  "," + Kernel(fp32, 30, 400, 1) + "," + Op("aten::_local_scalar_dense", 400, 100, 4) + "," +
                  Runtime("cudaStreamSynchronize", 410, 30, 4, 4) + "]");
  ASSERT_EQ(c.critical_path.size(), 1u);
  EXPECT_EQ(c.critical_path[0].bound_ns[static_cast<int>(Bound::kGpuCompute)], 400 * us);
  EXPECT_EQ(c.critical_path[0].bound_ns[static_cast<int>(Bound::kLaunch)], 10 * us);
  EXPECT_EQ(c.critical_path[0].bound_ns[static_cast<int>(Bound::kCpu)], 590 * us);
  // But the matmul's 400 us on the path are not what the step would lose at half of it:
  // the host runs 290 us of its own Python [110, 400) beside it. Replayed at half: the
  // matmul ends at 230, the wait (from 410) 10 us after it began as it did, at 420: the
  // step ends 20 us sooner, not 200.
  const Recommendation* tc_finding = FindingById(c, "tensor_cores");
  ASSERT_NE(tc_finding, nullptr);
  EXPECT_EQ(tc_finding->cause_ns, 400 * us);
  EXPECT_EQ(tc_finding->saving_ns, 20 * us);
  EXPECT_EQ(tc_finding->what_if, "tf32");
  // No deviceProperties: the advice says what it depends on.
  EXPECT_NE(RecommendationText(c, *tc_finding).find("compute capability 8.0 or later, which the trace does not say"),
            std::string::npos)
      << RecommendationText(c, *tc_finding);
  // Without the wait: the operator after it starts at 410, the step's own 500 after it:
  // the wait's 30 us. Without the launch call and the Python: aten::mm's 10 and 85 us, the
  // kernel 5 us after its call [15, 415), the wait until 10 us after it (425), the
  // operator's 60: 485, 515 sooner. Operators at half their time: aten::mm's halves move
  // the kernel 5 us earlier (the wait ends at 435) and the 60 after the wait become 30:
  // 35 sooner.
  ASSERT_NE(FindingById(c, "synchronizations"), nullptr);
  EXPECT_EQ(FindingById(c, "synchronizations")->saving_ns, 30 * us);
  ASSERT_NE(FindingById(c, "launch_bound"), nullptr);
  EXPECT_EQ(FindingById(c, "launch_bound")->saving_ns, 515 * us);
  ASSERT_NE(FindingById(c, "host_bound"), nullptr);
  EXPECT_EQ(FindingById(c, "host_bound")->saving_ns, 35 * us);
  // Together: 70 us of operators at half (35), no Python, launch or wait: aten::mm's 5
  // puts the kernel at [10, 410); the 5 of aten::_local_scalar_dense before the wait,
  // which now waits for nothing, and the 30 after it end the host at 45; the kernel at
  // half [10, 210) ends the step. What remains is the kernel's own 200.
  EXPECT_EQ(c.what_if.step_ns, 1000 * us);
  EXPECT_EQ(c.what_if.together_ns, 210 * us);
  EXPECT_EQ(c.what_if.device_ns, 200 * us);
  EXPECT_EQ(c.what_if.changes, 4u);

  // The same with Tensor Core kernels for the matmul: no Tensor Core finding.
  Analysis b = AnalyzeText(
      "[" + Step(1000) + "," + Op("aten::mm", 10, 100, 1) + "," + Runtime("cudaLaunchKernel", 20, 5, 1, 1) + "," +
      Kernel("sm90_xmma_gemm_bf16bf16", 30, 400, 1) + "," + Op("aten::_local_scalar_dense", 400, 100, 4) + "," +
      Runtime("cudaStreamSynchronize", 410, 30, 4, 4) + "]");
  EXPECT_EQ(b.tensor_cores.tensor_core_ns, 400 * us);
  EXPECT_EQ(FindingById(b, "tensor_cores"), nullptr);
}

// Tensor Core kernels by name (each pattern's source: kernel_ops.cc), the ones the H100 and
// A100 libraries write among them, and the FP32 ones that only look like them.
TEST(DeviceTime, TensorCoreKernelNames) {
  for (const char* tc : {"sdpa_sm80_flash_fprop_wmma_f16_knob_3_64x64x16_4x1x1_kernel0_0",
                         "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_4x1x1_kernel0_0",
                         "cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_26_64x64x64_kernel0_0",
                         "nvjet_sm90_tst_128x128_64x6_2x1_v_bz_NNT",
                         "void cutlass::Kernel2<cutlass_80_tensorop_s16816gemm_f16_128x64_64x6_nt_align8>(Params)",
                         "sm90_xmma_fprop_implicit_gemm_f16f16_f16f32_f32_nhwckrsc_nhwc_tilesize128x128x64",
                         "fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel)",
                         "void nvcuda_wmma_gemm_kernel<half>(int)", "ampere_bf16_s16816gemm_bf16_128x128_ldg8_relu",
                         // Float memory-efficient attention on sm80 and later: 3xTF32 on the Tensor Cores.
                         "fmha_cutlassF_f32_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<float, "
                         "cutlass::arch::Sm80>)",
                         "fmha_cutlassB_f32_aligned_64x64_k65536_sm80(PyTorchMemEffAttention::AttentionBackwardKernel)",
                         // AMD's MFMA GEMMs (the MI250 sample's).
                         "Cijk_Ailk_Bjlk_SB_Bias_AS_SAV_UserArgs_MT64x16x16_MI16x16x1_SN_LDSB0_AFC1",
                         "Cijk_Alik_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0"}) {
    EXPECT_TRUE(analysis::IsTensorCoreKernel(tc)) << tc;
  }
  for (const char* cuda_cores :
       {"sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x64x8_stage3_warpsize2x2x1_ffma_aligna4_execute_kernel",
        "fmha_cutlassF_f32_aligned_64x64_rf_sm75(PyTorchMemEffAttention::AttentionKernel<float, cutlass::arch::Sm75>)",
        "fmha_cutlassF_f32_aligned_32x128_gmem_sm50(PyTorchMemEffAttention::AttentionKernel)",
        "fmha_cutlassB_f32_aligned_64x64_k64_sm70(PyTorchMemEffAttention::AttentionBackwardKernel)",
        "Cijk_Ailk_Bljk_SB_MT64x64x8_SN_1LDSB0_APM1",  // Tensile FP32 without a matrix instruction
        "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x256_8x4_nt_align1>(Params)",
        "void gemmSN_TN_kernel<float, 128, 16, 2, 4, 10, 11, false>(Params)", "vectorized_elementwise_kernel"}) {
    EXPECT_FALSE(analysis::IsTensorCoreKernel(cuda_cores)) << cuda_cores;
  }
}

// What the GPU can do decides the precision advice: TF32 and bfloat16 from compute
// capability 8.0 on, FP16 on 7.x (a V100), nothing before (no Tensor Cores).
TEST(DeviceTime, TensorCoreAdviceFollowsTheComputeCapability) {
  const std::string fp32 = "sm70_xmma_gemm_f32f32_f32f32_f32_nn_n_ffma_execute_kernel";
  auto trace = [&](const char* major, const char* minor) {
    return AnalyzeText(std::string(R"({"deviceProperties": [{"id": 0, "name": "GPU", "computeMajor": )") + major +
                       R"(, "computeMinor": )" + minor + R"(}], "traceEvents": [)" + Step(1000) + "," +
                       Op("aten::mm", 10, 100, 1) + "," + Runtime("cudaLaunchKernel", 20, 5, 1, 1) + "," +
                       Kernel(fp32, 30, 400, 1) + "," + Op("aten::_local_scalar_dense", 400, 100, 4) + "," +
                       Runtime("cudaStreamSynchronize", 410, 30, 4, 4) + "]}");
  };
  const Analysis volta = trace("7", "0"), hopper = trace("9", "0");
  const Recommendation* v100 = FindingById(volta, "tensor_cores");
  ASSERT_NE(v100, nullptr);
  EXPECT_NE(RecommendationText(volta, *v100).find("torch.float16"), std::string::npos)
      << RecommendationText(volta, *v100);
  EXPECT_EQ(RecommendationText(volta, *v100).find("bfloat16)"), std::string::npos) << RecommendationText(volta, *v100);
  EXPECT_EQ(RecommendationText(volta, *v100).find("allow_tf32"), std::string::npos) << RecommendationText(volta, *v100);
  const Recommendation* h100 = FindingById(hopper, "tensor_cores");
  ASSERT_NE(h100, nullptr);
  EXPECT_NE(RecommendationText(hopper, *h100).find("allow_tf32"), std::string::npos)
      << RecommendationText(hopper, *h100);
  EXPECT_EQ(FindingById(trace("6", "1"), "tensor_cores"), nullptr);  // Pascal: no Tensor Cores
}

// Ten launches 100 us apart, each call 10 us and its kernel 2 us (or 20): the device waits
// on the host, and the host is the critical path: the step's own time (no operator open)
// 900 us and the ten calls' 100 us. With each call inside an operator of 30 us, 20 of each
// are the operators'.
TEST(DeviceTime, LaunchBoundAndHostBound) {
  auto trace = [&](int kernel_us, bool ops) {
    std::string t = "[" + Step(1000);
    for (int i = 0; i < 10; ++i) {
      if (ops) t += "," + Op("aten::k", 100 * i + 5, 30, i + 1);
      t += "," + Runtime("cudaLaunchKernel", 100 * i + 10, 10, i + 1, ops ? i + 1 : 0) + "," +
           Kernel("k", 100 * i + 25, kernel_us, i + 1);
    }
    return AnalyzeText(t + "]");
  };
  Analysis a = trace(2, false);
  const Recommendation* l = FindingById(a, "launch_bound");
  ASSERT_NE(l, nullptr);
  // Replayed without the calls and the Python: each kernel 5 us after its call, one after
  // the other: 5 + 10 x 2 = 25 us remain of the step's 1000.
  EXPECT_EQ(l->saving_ns, 975 * us);
  EXPECT_NE(RecommendationText(a, *l).find("10 of 10 launches"), std::string::npos) << RecommendationText(a, *l);
  EXPECT_EQ(FindingById(a, "host_bound"), nullptr);
  // Kernels longer than their calls: the launch statistic is no evidence, and is not said.
  const Analysis many = trace(20, false);
  EXPECT_EQ(RecommendationText(many, *FindingById(many, "launch_bound")).find("launches run shorter"),
            std::string::npos);
  Analysis b = trace(2, true);
  ASSERT_NE(FindingById(b, "launch_bound"), nullptr);
  EXPECT_EQ(FindingById(b, "launch_bound")->saving_ns, 800 * us);
  // The operators' own 200 us at half: 100 sooner (the host is the step's bound).
  const Recommendation* h = FindingById(b, "host_bound");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->cause_ns, 200 * us);
  EXPECT_EQ(h->saving_ns, 100 * us);
  EXPECT_NE(RecommendationText(b, *h).find("aten::k"), std::string::npos) << RecommendationText(b, *h);
}

// Without ProfilerStep the one step is the host-side work's span, [0, 500) here: of the
// nine 98 us host waits, those before the kernels launched inside it (the 2nd to 5th)
// are the step's.
TEST(DeviceTime, IdleInTheWholeTraceStep) {
  std::string t = "[" + Op("aten::work", 0, 500, 0);
  for (int i = 0; i < 10; ++i) {
    t += "," + Runtime("cudaLaunchKernel", 100 * i + 10, 10, i + 1, 0) + "," + Kernel("k", 100 * i + 25, 2, i + 1);
  }
  Analysis a = AnalyzeText(t + "]");
  ASSERT_TRUE(a.whole_trace_step);
  ASSERT_EQ(a.idle_time.size(), 1u);
  EXPECT_EQ(a.idle_time[0].host_wait_ns, 9 * 98 * us);
  EXPECT_EQ(a.idle_time[0].step_host_wait_ns, 4 * 98 * us);
}

// Python frames in the trace (with_stack=True): a caveat, last and with no saving; a
// kernel without a correlation belongs to no operator; a step without DataLoader time
// raises no dataloader finding.
TEST(DeviceTime, WithStackCaveatAndWorkWithoutALaunch) {
  auto trace = [&](bool python) {
    return AnalyzeText(
        "[" + Step(1000) + "," + Op("aten::mm", 10, 100, 1) + "," + Runtime("cudaLaunchKernel", 20, 5, 1, 1) + "," +
        Kernel("sm80_xmma_gemm_f32f32_ffma", 30, 900, 1) + "," +
        R"({"ph": "X", "cat": "kernel", "name": "orphan", "pid": 0, "tid": 7, "ts": 940, "dur": 5, "args": {}})" +
        (python ? std::string(",") +
                      R"({"ph": "X", "cat": "python_function", "name": "train.py(3): step", "pid": 1, "tid": 1,
                          "ts": 0, "dur": 1000, "args": {"Python id": 1, "Python parent id": null}})"
                : std::string()) +
        "]");
  };
  Analysis a = trace(true);
  ASSERT_GE(a.recommendations.size(), 2u);
  // The host never waits for the 900 us kernel: the Python step after aten::mm is the path.
  EXPECT_EQ(a.recommendations.front().finding, Finding::kLaunchBound);
  EXPECT_EQ(a.recommendations.back().finding, Finding::kWithStack);
  EXPECT_EQ(a.recommendations.back().saving_ns, 0);
  EXPECT_EQ(FindingById(a, "dataloader"), nullptr);
  Analysis b = trace(false);
  EXPECT_EQ(FindingById(b, "with_stack"), nullptr);
  ASSERT_EQ(b.kernels_by_operator.size(), 2u);
  EXPECT_EQ(b.kernels_by_operator[1].op, "(no operator)");
  EXPECT_EQ(b.kernels_by_operator[1].kernel, "orphan");
  EXPECT_EQ(b.tensor_cores.kernel_ns, 905 * us);
}

// gloo with a GPU in the trace: a finding with the critical path's time in the collective
// (gloo runs it on the host: 400 us of the path) and no saving (nothing is simulated: the
// remedy moves it to another backend); nccl: none.
TEST(DeviceTime, GlooWithCudaTensors) {
  auto trace = [&](const char* backend) {
    return AnalyzeText(std::string(R"({"distributedInfo": {"backend": ")") + backend +
                       R"(", "rank": 0, "world_size": 2}, "traceEvents": [)" + Step(1000) + "," +
                       Op("gloo:all_reduce", 100, 400, 9) + "," + Runtime("cudaLaunchKernel", 600, 5, 1, 0) + "," +
                       Kernel("k", 610, 300, 1) + "]}");
  };
  const Analysis gloo = trace("gloo"), nccl = trace("nccl");
  const Recommendation* g = FindingById(gloo, "gloo_cuda");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->saving_ns, 0);
  EXPECT_EQ(g->cause_ns, 400 * us);
  EXPECT_NE(RecommendationText(gloo, *g).find("runs them on the host"), std::string::npos)
      << RecommendationText(gloo, *g);
  EXPECT_EQ(FindingById(nccl, "gloo_cuda"), nullptr);
}

std::string Nccl(const char* collective, int ts, int dur, int64_t in, int64_t out, const char* dtype, int group) {
  return std::string(R"({"ph": "X", "cat": "kernel", "name": "ncclKernel", "pid": 0, "tid": 7, "ts": )") +
         std::to_string(ts) + R"(, "dur": )" + std::to_string(dur) +
         R"(, "args": {"device": 0, "stream": 7, "Collective name": ")" + collective + R"(", "In msg nelems": )" +
         std::to_string(in) + R"(, "Out msg nelems": )" + std::to_string(out) + R"(, "Group size": )" +
         std::to_string(group) + R"(, "dtype": ")" + dtype + R"("}})";
}

// nccl-tests' sizes and factors on 4 ranks: all-reduce of 1M floats (4 MB) in 100 us:
// algbw 40 GB/s, busbw x 2*3/4 = 60; all-gather of 1M out elements (the gathered output)
// of BFloat16 (2 MB) in 50 us: 40, x 3/4 = 30; an unknown dtype: no bandwidth. The host
// span of record_param_comms (a cpu_op with the same args) is no transfer time.
TEST(DeviceTime, CollectiveSizesAndBandwidth) {
  Analysis a =
      AnalyzeText("[" + Nccl("allreduce", 0, 100, 1000000, 1000000, "Float", 4) + "," +
                  Nccl("allreduce", 200, 100, 1000000, 1000000, "Float", 4) + "," +
                  Nccl("_allgather_base", 400, 50, 250000, 1000000, "BFloat16", 4) + "," +
                  Nccl("broadcast", 500, 10, 10, 10, "Mystery", 4) + "," +
                  R"({"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1, "ts": 0, "dur": 900,
          "args": {"Collective name": "allreduce", "In msg nelems": 5, "Out msg nelems": 5, "Group size": 4,
          "dtype": "Float"}})" +
                  "]");
  ASSERT_EQ(a.collective_sizes.size(), 3u);
  const CollectiveSizeRow& ar = a.collective_sizes[0];
  EXPECT_EQ(ar.collective, "allreduce");
  EXPECT_EQ(ar.calls, 2u);
  EXPECT_EQ(ar.message_bytes, 4000000);
  EXPECT_EQ(ar.time_ns, 200 * us);
  EXPECT_DOUBLE_EQ(ar.algbw_gb_per_s(), 40.0);
  EXPECT_DOUBLE_EQ(ar.busbw_gb_per_s(), 60.0);
  const CollectiveSizeRow& ag = a.collective_sizes[1];
  EXPECT_EQ(ag.collective, "_allgather_base");
  EXPECT_EQ(ag.message_bytes, 2000000);
  EXPECT_DOUBLE_EQ(ag.algbw_gb_per_s(), 40.0);
  EXPECT_DOUBLE_EQ(ag.busbw_gb_per_s(), 30.0);
  EXPECT_EQ(a.collective_sizes[2].message_bytes, -1);
  EXPECT_LT(a.collective_sizes[2].algbw_gb_per_s(), 0);
  ReportOptions csv;
  csv.table = "collective_sizes";
  EXPECT_EQ(RenderCsv(a, csv).substr(0, 151),
            "collective,dtype,group_size,message_bytes,calls,time_us,algbw_gb_per_s,busbw_gb_per_s\n"
            "allreduce,Float,4,4000000,2,200,40,60\n_allgather_base,BFloat16,4,");
}

// HTA's kernel breakdown on one device, two streams: computation [100, 300) on 7 and
// [250, 350) on 9 (their union [100, 350)), NCCL [320, 420) on 7, a copy [400, 500) on 9,
// computation again [600, 610). Swept: [100, 320) and [600, 610) computation alone (230),
// [320, 350) with NCCL (30), [350, 400) NCCL alone (50), [400, 420) NCCL with the copy
// (20), [420, 500) the copy alone (80); the gap [500, 600) is no one's. Busy: 410.
TEST(DeviceTime, KernelTypesSweptOverTheDevicesStreams) {
  Analysis a = AnalyzeText("[" + Work("kernel", 7, 100, 200, 0) + "," + Work("kernel", 9, 250, 100, 0) + "," +
                           Nccl("allreduce", 320, 100, 10, 10, "Float", 2) + "," + Work("gpu_memcpy", 9, 400, 100, 0) +
                           "," + Work("kernel", 7, 600, 10, 0) + "]");
  std::vector<std::pair<std::string, int64_t>> got;
  for (const KernelTypeRow& r : a.kernel_types) {
    got.emplace_back(r.type, r.time_ns);
    EXPECT_EQ(r.busy_ns, 410 * us);
    EXPECT_EQ(r.device, a.gpu.at(0).device);
  }
  const std::vector<std::pair<std::string, int64_t>> want = {{"COMPUTATION", 230 * us},
                                                             {"MEMORY", 80 * us},
                                                             {"COMMUNICATION", 50 * us},
                                                             {"COMPUTATION overlapping COMMUNICATION", 30 * us},
                                                             {"COMMUNICATION overlapping MEMORY", 20 * us}};
  EXPECT_EQ(got, want);
  EXPECT_EQ(a.gpu.at(0).busy_ns, 410 * us);
  ReportOptions csv;
  csv.table = "kernel_types";
  EXPECT_EQ(RenderCsv(a, csv).substr(0, 48), "device,type,time_us,share,busy_us\ncuda:0,COMPUTA");
  EXPECT_NE(RenderText(a, {}).find("COMMUNICATION overlapping MEMORY"), std::string::npos);
}

// HTA's temporal breakdown of the same device: its span [100, 610) is 510; computation ran
// 230 alone and 30 with NCCL (260), other work the rest of the busy 410 (150), and the gap
// [500, 600) is idle (100). NCCL's [320, 420) ran beside computation over [320, 350): 30 of 100.
TEST(DeviceTime, TemporalBreakdownSplitsTheDevicesSpan) {
  Analysis a = AnalyzeText("[" + Work("kernel", 7, 100, 200, 0) + "," + Work("kernel", 9, 250, 100, 0) + "," +
                           Nccl("allreduce", 320, 100, 10, 10, "Float", 2) + "," + Work("gpu_memcpy", 9, 400, 100, 0) +
                           "," + Work("kernel", 7, 600, 10, 0) + "]");
  ASSERT_EQ(a.temporal_breakdown.size(), 1u);
  const TemporalRow& r = a.temporal_breakdown[0];
  EXPECT_EQ(r.device, a.gpu.at(0).device);
  EXPECT_EQ(r.span_ns, 510 * us);
  EXPECT_EQ(r.compute_ns, 260 * us);
  EXPECT_EQ(r.non_compute_ns, 150 * us);
  EXPECT_EQ(r.idle_ns, 100 * us);
  EXPECT_EQ(r.comm_ns, 100 * us);
  EXPECT_EQ(r.overlap_ns, 30 * us);
  ReportOptions csv;
  csv.table = "temporal_breakdown";
  EXPECT_EQ(RenderCsv(a, csv),
            "device,span_us,compute_us,compute_share,non_compute_us,non_compute_share,idle_us,idle_share,comm_us,"
            "overlap_us,overlap_share\n"
            "cuda:0,510,260,0.509804,150,0.294118,100,0.196078,100,30,0.3\n");
}

}  // namespace
}  // namespace torch2pprof
