// GPU idle time by cause and launch statistics on hand-made traces, each number worked
// out by hand in the comments (HTA's definitions, docs/reference.md).
#include <gtest/gtest.h>

#include "analysis/analyzer.h"
#include "test_util.h"
#include "torch2pprof/report.h"
#include "torch2pprof/stages/trace_loader.h"

namespace torch2pprof {
namespace {

constexpr int64_t us = 1000;

Analysis AnalyzeText(const std::string& json) {
  testing::TempDir dir;
  Trace trace = LoadTrace(LoadOptions{dir.Write("t.json", json), 1, true});
  return Analyze(trace, BuildModel(trace));
}

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
  EXPECT_EQ(RenderCsv(a, csv).substr(0, 74),
            "device,stream,busy_us,idle_us,host_wait_us,kernel_wait_us,other_us,gaps\n"
            "cu");
  csv.table = "kernel_launches";
  EXPECT_NE(RenderCsv(a, csv).find("launch_delay,4,"), std::string::npos);
  const std::string text = RenderText(a, ReportOptions{});
  EXPECT_NE(text.find("GPU idle time by cause"), std::string::npos);
  EXPECT_NE(text.find("Kernel launches (4 launch calls"), std::string::npos);
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
