// analyze across ranks on hand-made traces: comm/compute overlap and HTA's temporal
// breakdown on one rank, and an 8-rank job in which rank 5 is slow, with every
// expected number worked out by hand in the comments.
#include "analysis/ranks.h"

#include <gtest/gtest.h>

#include <sstream>

#include "analysis/analyzer.h"
#include "test_util.h"
#include "torch2pprof/report.h"
#include "torch2pprof/stages/trace_loader.h"
#include "torch2pprof/torch2pprof.h"

namespace torch2pprof {
namespace {

constexpr int64_t us = 1000;  // the traces below are in microseconds

std::string X(const char* cat, const std::string& name, int tid, int64_t ts, int64_t dur,
              const std::string& args = "{}") {
  bool device = cat == std::string("kernel") || cat == std::string("gpu_memcpy");
  return std::string(R"({"ph": "X", "cat": ")") + cat + R"(", "name": ")" + name + R"(", "pid": )" +
         (device ? "0" : "100") + R"(, "tid": )" + std::to_string(tid) + R"(, "ts": )" + std::to_string(ts) +
         R"(, "dur": )" + std::to_string(dur) + R"(, "args": )" + args + "}";
}
std::string Corr(int c, bool device) {
  return R"({"correlation": )" + std::to_string(c) + (device ? R"(, "device": 0, "stream": 7})" : "}");
}

RankSummary Summarize(const std::string& json) {
  testing::TempDir dir;
  Trace trace = LoadTrace(LoadOptions{dir.Write("t.json", json), 1, true});
  TraceModel model = BuildModel(trace);
  return SummarizeRank(trace, model, Analyze(trace, model));
}

TEST(Ranks, OverlapAndTemporalBreakdownAsHtaDefinesThem) {
  // comm [0,10) on stream 8; compute [5,8) on 7 and [7,15) on 9; a memcpy [20,25).
  RankSummary r =
      Summarize("[" + X("kernel", "ncclKernel_AllReduce_RING", 8, 0, 10) + "," + X("kernel", "gemm", 7, 5, 3) + "," +
                X("kernel", "relu", 9, 7, 8) + "," + X("gpu_memcpy", "Memcpy HtoD", 7, 20, 5) + "]");
  EXPECT_EQ(r.gpu_span_ns, 25 * us);     // 0 to 25
  EXPECT_EQ(r.gpu_idle_ns, 5 * us);      // [15,20)
  EXPECT_EQ(r.compute_ns, 10 * us);      // [5,15)
  EXPECT_EQ(r.non_compute_ns, 10 * us);  // [0,5) of comm and the memcpy
  EXPECT_EQ(r.comm_kernel_ns, 10 * us);
  EXPECT_EQ(r.overlap_ns, 5 * us);  // [5,10): 50% of the communication
  ASSERT_EQ(r.collectives.size(), 1u);
  EXPECT_EQ(r.collectives[0].kind, "kernel");
  EXPECT_EQ(r.collectives[0].total_ns, 10 * us);
}

// Rank r of the 8-rank job: three 1000us steps (1250us on the slow rank), each with a
// gemm (500us; 750us slow), a host nccl:all_reduce (150us; 30us on the slow rank, which
// arrives last and waits least) and its kernel (120us; 40us).
std::string RankTrace(int rank, bool slow) {
  std::string ev;
  auto add = [&](const std::string& e) { ev += (ev.empty() ? "" : ",\n") + e; };
  for (int k = 0; k < 3; ++k) {
    int64_t s = k * 2000, step = slow ? 1250 : 1000, gemm = slow ? 750 : 500, c = slow ? 1000 : 800;
    add(X("cpu_op", "ProfilerStep#" + std::to_string(k + 1), 1, s, step));
    add(X("cuda_runtime", "cudaLaunchKernel", 1, s + 10, 5, Corr(10 * k + 1, false)));
    add(X("kernel", "gemm", 7, s + 20, gemm, Corr(10 * k + 1, true)));
    add(X("cpu_op", "nccl:all_reduce", 1, s + c, slow ? 30 : 150));
    add(X("cuda_runtime", "cudaLaunchKernel", 1, s + c + 5, 5, Corr(10 * k + 2, false)));
    add(X("kernel", "ncclKernel_AllReduce", 8, s + c + 10, slow ? 40 : 120, Corr(10 * k + 2, true)));
  }
  return R"({"distributedInfo": {"backend": "nccl", "rank": )" + std::to_string(rank) +
         R"(, "world_size": 8}, "traceEvents": [)" + ev + "]}";
}

TEST(Ranks, EightRanksOneSlow) {
  testing::TempDir dir;
  AnalyzeRanksOptions options;
  for (int r = 7; r >= 0; --r) {  // given in reverse: reported by rank
    options.inputs.push_back(dir.Write("rank" + std::to_string(r) + ".json", RankTrace(r, r == 5)));
  }
  options.threads = 3;
  AnalyzeRanksResult result = AnalyzeRanks(options);
  const RanksAnalysis& a = result.analysis;
  ASSERT_EQ(a.ranks.size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    const RankSummary& r = a.ranks[i];
    bool slow = i == 5;
    EXPECT_EQ(r.rank, static_cast<int64_t>(i));
    EXPECT_EQ(r.world_size, 8);
    ASSERT_EQ(r.steps.size(), 3u);
    EXPECT_EQ(r.step_median_ns, (slow ? 1250 : 1000) * us);
    EXPECT_EQ(r.mean_step.kernel_ns, (slow ? 750 : 500) * us);
    EXPECT_EQ(r.compute_ns, (slow ? 2250 : 1500) * us);  // 3 gemms
    EXPECT_EQ(r.comm_kernel_ns, (slow ? 120 : 360) * us);
    EXPECT_EQ(r.overlap_ns, 0);
    // From the first gemm (20us) to the last nccl kernel's end: 4000 + 1050 or 4000 + 930.
    EXPECT_EQ(r.gpu_span_ns, (slow ? 5030 : 4910) * us);
    EXPECT_EQ(r.gpu_idle_ns, (slow ? 5030 - 3 * 790 : 4910 - 3 * 620) * us);
  }
  // Medians over ranks: the lower middle of seven normal ranks and one slow.
  EXPECT_EQ(a.median_step_ns, 1000 * us);
  EXPECT_EQ(a.median_compute_ns, 1500 * us);
  // Largest excess first: compute (+50%), then the median step (+25%).
  ASSERT_EQ(a.slow_ranks.size(), 2u);
  EXPECT_EQ(a.slow_ranks[1].rank, 5u);
  EXPECT_EQ(a.slow_ranks[1].metric, "step_time");
  EXPECT_DOUBLE_EQ(a.slow_ranks[1].excess, 0.25);
  EXPECT_EQ(a.slow_ranks[1].part, "kernel");
  EXPECT_EQ(a.slow_ranks[1].part_delta_ns, 250 * us);
  EXPECT_EQ(a.slow_ranks[0].rank, 5u);
  EXPECT_EQ(a.slow_ranks[0].metric, "compute");
  EXPECT_DOUBLE_EQ(a.slow_ranks[0].excess, 0.5);
  // Collectives, by spread: the host all_reduce (450us vs 90us), then its kernel (360 vs 120).
  ASSERT_EQ(a.collectives.size(), 2u);
  EXPECT_EQ(a.collectives[0].kind, "host");
  EXPECT_EQ(a.collectives[0].name, "nccl:all_reduce");
  EXPECT_EQ(a.collectives[0].min_rank, 5u);  // arrived last, waited least
  EXPECT_EQ(a.collectives[0].min_ns, 90 * us);
  EXPECT_EQ(a.collectives[0].max_ns, 450 * us);
  EXPECT_EQ(a.collectives[0].calls, std::vector<uint64_t>(8, 3));
  EXPECT_EQ(a.collectives[1].kind, "kernel");
  EXPECT_EQ(a.collectives[1].max_ns - a.collectives[1].min_ns, 240 * us);
  // Waits: each step's host all_reduce (150us; 30 on rank 5) and its kernel (120us; 40)
  // are instances on every rank; beyond rank 5's, the others wait 120us at [800, 920) and
  // 80us at [810, 890) of each step: 120us per step as their union. Transfer: host
  // [920, 950) and kernel [890, 930): 60us; rank 5's [1000, 1030) and [1010, 1050): 50us.
  ASSERT_EQ(a.waits.size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(a.waits[i].wait_ns, i == 5 ? 0 : 120 * us) << i;
    EXPECT_EQ(a.waits[i].transfer_ns, (i == 5 ? 50 : 60) * us) << i;
    EXPECT_EQ(a.waits[i].instances, 6u) << i;
  }
  // So rank 5 is late: the seven others wait 120us per step for it (over 5% of the 1000us
  // median step), most in the host all_reduce, and its own step spends it in kernels.
  ASSERT_EQ(a.stragglers.size(), 1u);
  EXPECT_EQ(a.stragglers[0].rank, 5u);
  EXPECT_EQ(a.stragglers[0].waiters, (std::vector<size_t>{0, 1, 2, 3, 4, 6, 7}));
  EXPECT_EQ(a.stragglers[0].waited_ns, 120 * us);
  EXPECT_EQ(a.stragglers[0].collective, "nccl:all_reduce");
  EXPECT_EQ(a.stragglers[0].part, "kernel");
  EXPECT_EQ(a.stragglers[0].part_delta_ns, 250 * us);
  // Step N on every rank: rank 5 is 250us slower each time.
  ASSERT_EQ(a.steps.size(), 3u);
  for (int k = 0; k < 3; ++k) {
    const StepAlignment& s = a.steps[k];
    EXPECT_EQ(s.name, "ProfilerStep#" + std::to_string(k + 1));
    EXPECT_EQ(s.slowest, 5u);
    EXPECT_EQ(s.fastest, 0u);
    EXPECT_EQ(s.spread_ns, 250 * us);
  }
  // The same analysis on one thread; and the reports agree with it.
  options.threads = 1;
  EXPECT_EQ(RenderRanksJson(AnalyzeRanks(options).analysis, ReportOptions{0, 0, ""}),
            RenderRanksJson(a, ReportOptions{0, 0, ""}));
  std::string csv = RenderRanksCsv(a, ReportOptions{0, 0, "step_alignment"});
  EXPECT_NE(csv.find("ProfilerStep#2,5,1250\n"), std::string::npos) << csv;
  EXPECT_THROW(RenderRanksCsv(a, ReportOptions{0, 0, "operators"}), Error);
}

// Characters, not bytes: the text uses "…".
size_t Columns(const std::string& line) {
  size_t n = 0;
  for (unsigned char c : line) n += (c & 0xC0) != 0x80;
  return n;
}

TEST(Ranks, PastAHandfulOfRanksTheTextShowsSpreads) {
  // 40 ranks, rank 5 slow as above: the text shows each number's spread, not 40 rows;
  // JSON keeps every rank.
  testing::TempDir dir;
  AnalyzeRanksOptions options;
  for (int r = 0; r < 40; ++r) {
    options.inputs.push_back(dir.Write("rank" + std::to_string(r) + ".json", RankTrace(r, r == 5)));
  }
  const RanksAnalysis a = AnalyzeRanks(options).analysis;
  ASSERT_EQ(a.ranks.size(), 40u);
  const RankSpread* step = nullptr;
  for (const RankSpread& sp : a.spreads) {
    if (sp.key == "step_median") step = &sp;
  }
  ASSERT_NE(step, nullptr);
  EXPECT_EQ(step->min, 1000 * us);
  EXPECT_EQ(step->min_rank, 0u);  // the first with the least
  EXPECT_EQ(step->median, 1000 * us);
  EXPECT_EQ(step->p90, 1000 * us);  // the 36th of 40 sorted values
  EXPECT_EQ(step->max, 1250 * us);
  EXPECT_EQ(step->max_rank, 5u);
  ASSERT_EQ(a.stragglers.size(), 1u);
  EXPECT_EQ(a.stragglers[0].waiters.size(), 39u);
  const std::string text = RenderRanksText(a, ReportOptions{});
  std::istringstream lines(text);
  size_t rows = 0;
  for (std::string line; std::getline(lines, line);) {
    EXPECT_LE(Columns(line), 120u) << line;
    rows += line.rfind("  rank ", 0) == 0;
  }
  EXPECT_EQ(rows, 6u) << text;  // the first three files and the last three
  EXPECT_NE(text.find("Ranks (40 ranks"), std::string::npos) << text;
  EXPECT_NE(text.find("39 ranks wait 120us per step for it"), std::string::npos) << text;
  EXPECT_NE(text.find("median step      1.00ms     0  1.00ms  1.00ms  1.25ms     5\n"), std::string::npos) << text;
  const std::string json = RenderRanksJson(a, ReportOptions{0, 0, ""});
  EXPECT_NE(json.find(options.inputs[39]), std::string::npos);
}

TEST(Ranks, WithoutDistributedInfoRanksAreThePositions) {
  testing::TempDir dir;
  std::string plain = "[" + X("kernel", "gemm", 7, 0, 10) + "]";
  AnalyzeRanksOptions options;
  options.inputs = {dir.Write("b.json", plain), dir.Write("a.json", plain)};
  AnalyzeRanksResult r = AnalyzeRanks(options);
  ASSERT_EQ(r.analysis.ranks.size(), 2u);
  EXPECT_EQ(r.analysis.ranks[0].rank, 0);
  EXPECT_EQ(r.analysis.ranks[0].file, options.inputs[0]);
  EXPECT_EQ(r.analysis.ranks[1].rank, 1);
  EXPECT_TRUE(r.analysis.slow_ranks.empty());
  EXPECT_TRUE(r.analysis.stragglers.empty());  // no collectives: nobody waits
}

// Three ranks in one all-reduce: rank 0 arrives at 0 and leaves at 100, rank 1 at 60 and
// 110, rank 2 at 80 and 100 (ns on the wall clock). By arrivals the last rank arrives at
// 80: waits 80, 20, 0 and transfers 20, 30, 20. By durations the shortest call (20) is
// transfer: waits 80, 30, 0. A clock skewed by 50 ns puts rank 2's arrival (130) after
// the others left (100): no collective ends before all arrive, so durations decide.
std::vector<RankSummary> ThreeInOneAllReduce(bool wall_clock, int64_t skew) {
  const int64_t arrive[] = {0, 60, 80}, dur[] = {100, 50, 20};
  std::vector<RankSummary> ranks(3);
  for (int i = 0; i < 3; ++i) {
    RankSummary& r = ranks[i];
    r.rank = i;
    r.steps.push_back(StepRow{"ProfilerStep#1", 0, 1000});
    r.step_median_ns = r.step_min_ns = r.step_max_ns = 1000;
    r.collectives.push_back(CollectiveStat{"gloo:all_reduce", "host", 1, dur[i]});
    // Each trace's own clock starts elsewhere; the offset brings it to the wall clock.
    const int64_t offset = 1'790'000'000'000'000'000 + 1000 * i + (i == 2 ? skew : 0);
    r.calls.push_back(CollectiveCall{0, 1'790'000'000'000'000'000 + arrive[i] - offset + (i == 2 ? skew : 0), dur[i]});
    r.wall_clock = wall_clock;
    r.wall_clock_offset_ns = offset;
  }
  return ranks;
}

TEST(Ranks, ArrivalsDecideWhereTheClocksCompare) {
  auto waits = [](const RanksAnalysis& a) {
    std::vector<std::pair<int64_t, int64_t>> w;
    for (const CollectiveWait& x : a.waits) w.push_back({x.wait_ns, x.transfer_ns});
    return w;
  };
  RanksAnalysis by_arrival = AnalyzeAcrossRanks(ThreeInOneAllReduce(true, 0));
  EXPECT_TRUE(by_arrival.waits_from_arrivals);
  EXPECT_EQ(waits(by_arrival), (std::vector<std::pair<int64_t, int64_t>>{{80, 20}, {20, 30}, {0, 20}}));
  RanksAnalysis by_duration = AnalyzeAcrossRanks(ThreeInOneAllReduce(false, 0));
  EXPECT_FALSE(by_duration.waits_from_arrivals);
  EXPECT_EQ(waits(by_duration), (std::vector<std::pair<int64_t, int64_t>>{{80, 20}, {30, 20}, {0, 20}}));
  RanksAnalysis skewed = AnalyzeAcrossRanks(ThreeInOneAllReduce(true, 50));
  EXPECT_FALSE(skewed.waits_from_arrivals);
  EXPECT_EQ(waits(skewed), waits(by_duration));
  // The text and JSON say which.
  EXPECT_NE(RenderRanksText(by_arrival, ReportOptions{}).find("by the traces' wall clocks"), std::string::npos);
  EXPECT_NE(RenderRanksText(skewed, ReportOptions{}).find("the clocks do not compare"), std::string::npos);
  EXPECT_NE(RenderRanksJson(by_arrival, ReportOptions{}).find("\"waits_from\": \"arrivals\""), std::string::npos);
  EXPECT_NE(RenderRanksJson(skewed, ReportOptions{}).find("\"waits_from\": \"durations\""), std::string::npos);
}

}  // namespace
}  // namespace torch2pprof
