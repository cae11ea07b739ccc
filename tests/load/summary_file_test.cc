// Rank summaries, the map's output: every field survives the file exactly, equal
// summaries are equal bytes, and whatever is not a summary of this format is refused
// with the file named.
#include "load/summary_file.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "base/magic.h"
#include "torch2pprof/error.h"

namespace torch2pprof {
namespace {

SummaryFile Full() {
  SummaryFile f;
  RankSummary& r = f.summary;
  r.file = "dir/rank \"7\"\n.json";
  r.rank = 7, r.world_size = 1024, r.backend = "nccl";
  for (int k = 0; k < 3; ++k) {
    StepRow s;
    s.name = "ProfilerStep#" + std::to_string(k);
    s.start_ns = 1'790'857'026'000'000'000 + k * 1'000'001;
    s.total_ns = 1'000'001;
    int64_t v = 11;
    for (const StepPart& p : kStepParts) s.*p.field = v++ * (k + 1);
    r.steps.push_back(s);
  }
  r.mean_step = r.steps[1];
  r.mean_step.name = "mean", r.mean_step.start_ns = 0;
  r.step_median_ns = 1'000'001, r.step_min_ns = 999'999, r.step_max_ns = 1'000'003;
  r.gpu_span_ns = 31, r.gpu_idle_ns = 32, r.compute_ns = 33, r.non_compute_ns = 34, r.comm_kernel_ns = 35;
  r.overlap_ns = 36, r.communication_ns = 37, r.gpu_window_ns = 38;
  r.gpu_utilization = 0.1 + 0.2;  // not the shortest decimal: must still come back exactly
  r.memory_peak_bytes = int64_t{1} << 40, r.memory_device = "cuda:3";
  r.collectives = {{"nccl:all_reduce", "host", 6, 600}, {"ncclDevKernel_AllReduce_Sum_f32", "kernel", 6, 500}};
  r.calls = {{0, -5, 100}, {1, 1'790'857'026'000'000'000, 0}, {0, 7, 250}};
  r.wall_clock = true, r.wall_clock_offset_ns = -4'551'175'426'518'934;
  f.warnings = {"warning: 3 events skipped", "ünïcode"};
  FlameGraph& g = r.flame;  // all -> a -> b, all -> c
  g.types = {"gpu", "work"}, g.units = {"nanoseconds", "nanoseconds"};
  g.names = {"", "a \"q\"", "b", "c"};
  g.parent = {0, 0, 1, 0}, g.name = {0, 1, 2, 3};
  g.total = {{30, 20, 5, 10}, {7, 3, 1, 4}};
  g.folded = 9, g.fold_share = 0.002;
  return f;
}

void ExpectSame(const RankSummary& a, const RankSummary& b) {
  EXPECT_EQ(a.file, b.file);
  EXPECT_EQ(a.rank, b.rank);
  EXPECT_EQ(a.world_size, b.world_size);
  EXPECT_EQ(a.backend, b.backend);
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (size_t i = 0; i <= a.steps.size(); ++i) {
    const StepRow& x = i < a.steps.size() ? a.steps[i] : a.mean_step;
    const StepRow& y = i < b.steps.size() ? b.steps[i] : b.mean_step;
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.start_ns, y.start_ns);
    EXPECT_EQ(x.total_ns, y.total_ns);
    for (const StepPart& p : kStepParts) EXPECT_EQ(x.*p.field, y.*p.field) << p.key;
  }
  EXPECT_EQ(a.step_median_ns, b.step_median_ns);
  EXPECT_EQ(a.step_min_ns, b.step_min_ns);
  EXPECT_EQ(a.step_max_ns, b.step_max_ns);
  EXPECT_EQ(a.gpu_span_ns, b.gpu_span_ns);
  EXPECT_EQ(a.gpu_idle_ns, b.gpu_idle_ns);
  EXPECT_EQ(a.compute_ns, b.compute_ns);
  EXPECT_EQ(a.non_compute_ns, b.non_compute_ns);
  EXPECT_EQ(a.comm_kernel_ns, b.comm_kernel_ns);
  EXPECT_EQ(a.overlap_ns, b.overlap_ns);
  EXPECT_EQ(a.communication_ns, b.communication_ns);
  EXPECT_EQ(a.gpu_window_ns, b.gpu_window_ns);
  EXPECT_EQ(a.gpu_utilization, b.gpu_utilization);  // bit for bit
  EXPECT_EQ(a.memory_peak_bytes, b.memory_peak_bytes);
  EXPECT_EQ(a.memory_device, b.memory_device);
  EXPECT_EQ(a.wall_clock, b.wall_clock);
  EXPECT_EQ(a.wall_clock_offset_ns, b.wall_clock_offset_ns);
  ASSERT_EQ(a.collectives.size(), b.collectives.size());
  for (size_t i = 0; i < a.collectives.size(); ++i) {
    EXPECT_EQ(a.collectives[i].name, b.collectives[i].name);
    EXPECT_EQ(a.collectives[i].kind, b.collectives[i].kind);
    EXPECT_EQ(a.collectives[i].calls, b.collectives[i].calls);
    EXPECT_EQ(a.collectives[i].total_ns, b.collectives[i].total_ns);
  }
  EXPECT_EQ(a.flame.types, b.flame.types);
  EXPECT_EQ(a.flame.units, b.flame.units);
  EXPECT_EQ(a.flame.names, b.flame.names);
  EXPECT_EQ(a.flame.parent, b.flame.parent);
  EXPECT_EQ(a.flame.name, b.flame.name);
  EXPECT_EQ(a.flame.total, b.flame.total);
  EXPECT_EQ(a.flame.folded, b.flame.folded);
  EXPECT_EQ(a.flame.fold_share, b.flame.fold_share);
  ASSERT_EQ(a.calls.size(), b.calls.size());
  for (size_t i = 0; i < a.calls.size(); ++i) {
    EXPECT_EQ(a.calls[i].collective, b.calls[i].collective);
    EXPECT_EQ(a.calls[i].start_ns, b.calls[i].start_ns);
    EXPECT_EQ(a.calls[i].dur_ns, b.calls[i].dur_ns);
  }
}

TEST(SummaryFile, EveryFieldComesBackExactlyAndEncodesAgainToTheSameBytes) {
  SummaryFile f = Full();
  std::string text = EncodeSummary(f);
  EXPECT_EQ(text.rfind("{\"torch2pprof_summary\":1,", 0), 0u);
  EXPECT_TRUE(StartsLikeSummary(text));
  EXPECT_TRUE(StartsLikeSummary("  \n{ \"torch2pprof_summary\": 1}"));
  EXPECT_FALSE(StartsLikeSummary("{\"traceEvents\": []}"));
  EXPECT_FALSE(StartsLikeSummary(""));
  SummaryFile back = DecodeSummary("s.json", text);
  ExpectSame(f.summary, back.summary);
  EXPECT_EQ(back.warnings, f.warnings);
  EXPECT_EQ(EncodeSummary(back), text);
  // Without a wall clock: null, and back as none.
  f.summary.wall_clock = false;
  text = EncodeSummary(f);
  EXPECT_NE(text.find("\"wall_clock_offset_ns\":null"), std::string::npos);
  EXPECT_FALSE(DecodeSummary("s.json", text).summary.wall_clock);
}

std::string ErrorOf(const std::string& text) {
  try {
    DecodeSummary("bad.summary.json", text);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::kInput);
    return e.what();
  }
  return "(no error)";
}

TEST(SummaryFile, AnythingElseIsAnErrorThatSaysWhat) {
  const std::string good = EncodeSummary(Full());
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  // Cut short: the byte where the JSON stops making sense.
  std::string cut = ErrorOf(good.substr(0, 100));
  EXPECT_NE(cut.find("bad.summary.json"), std::string::npos) << cut;
  EXPECT_NE(cut.find("byte 100"), std::string::npos) << cut;
  EXPECT_NE(ErrorOf("[1, 2]").find("no \"torch2pprof_summary\""), std::string::npos);
  EXPECT_NE(ErrorOf(replaced("\"torch2pprof_summary\":1", "\"torch2pprof_summary\":2")).find("format 2"),
            std::string::npos);
  EXPECT_NE(ErrorOf(replaced("\"gpu_idle_ns\":32", "\"gpu_idle_ns\":-32")).find("gpu_idle_ns"), std::string::npos);
  EXPECT_NE(ErrorOf(replaced("\"gpu_idle_ns\":32", "\"gpu_idle_ns\":3.5")).find("not a whole number"),
            std::string::npos);
  EXPECT_NE(ErrorOf(replaced("\"gpu_idle_ns\":32", "\"gpu_idle_ns\":18446744073709551615")).find("out of range"),
            std::string::npos);
  EXPECT_NE(ErrorOf(replaced("\"gpu_idle_ns\":32,", "")).find("has no \"gpu_idle_ns\""), std::string::npos);
  EXPECT_NE(ErrorOf(replaced("[0,-5,100]", "[2,-5,100]")).find("call 0's collective"), std::string::npos);
  EXPECT_NE(ErrorOf(replaced("[0,-5,100]", "[0,-5]")).find("call 0 is not"), std::string::npos);
  EXPECT_NE(ErrorOf(replaced("\"backend\":\"nccl\"", "\"backend\":7")).find("\"backend\" is not a string"),
            std::string::npos);
  // A number past a double's range is a parse failure of its own in nlohmann (found by
  // the fuzzer: it escaped as an uncaught exception).
  EXPECT_NE(ErrorOf(replaced("\"gpu_idle_ns\":32", "\"gpu_idle_ns\":1E999")).find("beyond a double's range"),
            std::string::npos);
  // A profile that is no tree, or names what it does not hold, never reaches the page.
  EXPECT_NE(ErrorOf(replaced("\"parent\":[0,0,1,0]", "\"parent\":[0,0,3,0]")).find("does not come before it"),
            std::string::npos);
  EXPECT_NE(ErrorOf(replaced("\"name\":[0,1,2,3]", "\"name\":[0,1,2,9]")).find("name index"), std::string::npos);
  EXPECT_NE(ErrorOf(replaced("[30,20,5,10]", "[30,20,5]")).find("one value a node"), std::string::npos);
  EXPECT_NE(ErrorOf(replaced("[30,20,5,10]", "[30,-20,5,10]")).find("out of range"), std::string::npos);
  // A finding's title is written from its id: an id no finding has is refused, not printed.
  const std::string top = "\"top_finding\":\"" + Full().summary.top_finding + "\"";
  EXPECT_NE(ErrorOf(replaced(top, "\"top_finding\":\"no_such_finding\"")).find("no finding's id"), std::string::npos);
  // Sums that could pass 64 bits in the reduce are refused here.
  EXPECT_NE(ErrorOf(replaced("[0,7,250]", "[0,7,1125899906842624]")).find("sum past"), std::string::npos);
}

}  // namespace
}  // namespace torch2pprof
