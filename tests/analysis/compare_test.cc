// compare: rule parsing, the bootstrap, matching by name, and when rules fire; by hand.
#include "torch2pprof/compare.h"
#include "analysis/statistics.h"
#include "torch2pprof/analysis.h"

#include <gtest/gtest.h>

#include "torch2pprof/error.h"

namespace torch2pprof {
namespace {

TEST(Compare, RulesParse) {
  Rule r = ParseRule("step_time>+5%");
  EXPECT_EQ(r.metric, "step_time");
  EXPECT_EQ(r.op, ">");
  EXPECT_TRUE(r.relative);
  EXPECT_EQ(r.threshold, 5);
  r = ParseRule("memory_peak>=+100MiB");
  EXPECT_EQ(r.op, ">=");
  EXPECT_FALSE(r.relative);
  EXPECT_EQ(r.threshold, 100.0 * 1024 * 1024);
  r = ParseRule("op:aten::*mm>2ms");
  EXPECT_EQ(r.metric, "op:aten::*mm");
  EXPECT_EQ(r.threshold, 2e6);
  r = ParseRule("gpu_util<-0.05");
  EXPECT_EQ(r.op, "<");
  EXPECT_EQ(r.threshold, -0.05);
  EXPECT_EQ(ParseRule("kernel:*gemm*<=1.5us").threshold, 1500);
  EXPECT_EQ(ParseRule("op_device:aten::mm>+10%").metric, "op_device:aten::mm");
  EXPECT_EQ(ParseRule("op_host:aten::mm>1us").threshold, 1000);
  for (const char* bad : {"step_time", "step_time>", "step_time>5x", "memory_peak>5ms", "gpu_util>5MiB", "bogus>1",
                          ">5%", "op:>1ms", "step_time>abc", "step_time>+5", "memory_peak>+100", "op:x>2"}) {
    try {
      ParseRule(bad);
      ADD_FAILURE() << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), Error::Kind::kUsage) << bad;
      EXPECT_NE(e.message().find(bad), std::string::npos) << e.message();
    }
  }
  try {  // a number without a unit: the message suggests the percentage
    ParseRule("step_time>+5");
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("write +5% for a share of the base value, or +5ms"), std::string::npos) << e.message();
  }
}

TEST(Compare, BootstrapTellsChangeFromNoise) {
  std::vector<int64_t> a = {100, 104, 98, 101, 99, 102, 100, 97, 103, 101}, same = a,
                       shifted = {130, 135, 128, 131, 129, 132, 130, 133, 131, 134};
  Significance s = Bootstrap(a, same, 'm', 1);
  EXPECT_TRUE(s.assessed);
  EXPECT_FALSE(s.significant);
  EXPECT_LE(s.low, 0);
  EXPECT_GE(s.high, 0);
  s = Bootstrap(a, shifted, 'm', 1);
  EXPECT_TRUE(s.significant);
  EXPECT_GT(s.low, 0);
  // Every resampled median of the shifted run is at least 128 and of the base at most 104.
  EXPECT_GE(s.low, 128 - 104);
  EXPECT_LE(s.high, 135 - 97);
  // Overlapping spreads: no verdict of change.
  EXPECT_FALSE(Bootstrap({100, 150, 90, 140, 120, 95, 145, 105, 130, 110},
                         {110, 145, 95, 150, 100, 135, 90, 125, 140, 115}, 'a', 1)
                   .significant);
  // Under ten steps a run the interval means little (a resampled median of three steps
  // takes one of three values): not assessed, however clear the shift looks.
  EXPECT_FALSE(Bootstrap({100, 101, 99}, {150, 151, 149}, 'm', 1).assessed);
  EXPECT_FALSE(Bootstrap(a, {150, 151, 149, 150, 152, 148, 151, 150, 149}, 'm', 1).assessed);
  EXPECT_FALSE(Bootstrap({100}, {200, 210}, 'm', 1).assessed);
  // The same seed, the same interval.
  EXPECT_EQ(Bootstrap(a, shifted, 'a', 7).low, Bootstrap(a, shifted, 'a', 7).low);
}

Analysis MakeRun(std::vector<int64_t> steps, int64_t mm_per_step, bool with_extra, int64_t peak) {
  Analysis a;
  for (size_t k = 0; k < steps.size(); ++k) {
    StepRow s;
    s.name = "ProfilerStep#" + std::to_string(k);
    s.total_ns = steps[k];
    s.kernel_ns = steps[k] / 2;
    s.other_ns = steps[k] - s.kernel_ns;
    a.steps.push_back(s);
  }
  OperatorRow mm;
  mm.name = "aten::mm";
  mm.calls = steps.size();
  mm.host_total_ns = mm_per_step * static_cast<int64_t>(steps.size());
  for (uint32_t k = 0; k < steps.size(); ++k) mm.step_host_total.Add(k, mm_per_step);
  a.operators.push_back(mm);
  if (with_extra) {
    OperatorRow extra;
    extra.name = "aten::extra";
    extra.calls = 1;
    a.operators.push_back(extra);
  }
  MemoryRow m;
  m.device = "cuda:0";
  m.peak_bytes = peak;
  a.memory.push_back(m);
  return a;
}

TEST(Compare, MatchesByNameAndComparesPerStep) {
  Analysis base = MakeRun({100, 102, 98, 101, 99, 100, 103, 97, 100, 101}, 10, true, 1000),
           next = MakeRun({150, 149, 151, 150, 152, 148, 150, 151, 149, 150, 152, 148}, 12, false, 1000);
  Comparison c = Compare(base, next);
  EXPECT_EQ(c.base_steps.median_ns, 100);
  EXPECT_EQ(c.next_steps.median_ns, 150);
  EXPECT_EQ(c.step_median.change(), 50);
  EXPECT_TRUE(c.step_significance.significant);
  ASSERT_EQ(c.operators.size(), 2u);
  const OperatorChange& mm = c.operators[0].name == "aten::mm" ? c.operators[0] : c.operators[1];
  const OperatorChange& extra = c.operators[0].name == "aten::extra" ? c.operators[0] : c.operators[1];
  EXPECT_EQ(mm.status, "changed");
  EXPECT_EQ(mm.host_total.base, 10);  // per step, whatever the runs' lengths
  EXPECT_EQ(mm.host_total.next, 12);
  EXPECT_EQ(mm.base_calls, 1.0);
  EXPECT_EQ(extra.status, "removed");
}

TEST(Compare, TheThresholdDecidesAndTheNoiseIsShownBeside) {
  Analysis base = MakeRun({100, 102, 98}, 10, false, 1000);
  CompareOptions o;
  o.rules = {ParseRule("step_time>+5%"), ParseRule("memory_peak>+100B"), ParseRule("op:aten::m?>+1ns"),
             ParseRule("op:nothing*>+0ns")};
  // 50% slower, 200 bytes more at the peak, mm 2 ns more per step.
  Comparison c = Compare(base, MakeRun({150, 151, 149}, 12, false, 1200), o);
  ASSERT_EQ(c.rules.size(), 4u);
  EXPECT_TRUE(c.rules[0].fired);
  EXPECT_NEAR(c.rules[0].change, 50, 1e-9);
  EXPECT_TRUE(c.rules[1].fired);  // one value per run: the threshold decides
  EXPECT_EQ(c.rules[1].change, 200);
  EXPECT_TRUE(c.rules[2].fired);  // every step exactly 2 ns more: no spread, a change
  EXPECT_FALSE(c.rules[3].matched);
  EXPECT_FALSE(c.rules[3].fired);
  EXPECT_TRUE(c.regressed);
  EXPECT_TRUE(c.rules[1].one_value);
  EXPECT_EQ(c.rules[0].base_steps, 3u);
  EXPECT_FALSE(c.step_significance.assessed);  // 3 steps a run: the noise is not judged
  // 1% slower with steps that vary by 5%: within the noise, and the threshold decides.
  Analysis noisy = MakeRun({100, 105, 95, 102, 98, 104, 96, 101, 99, 103}, 10, false, 1000);
  Analysis slower = MakeRun({101, 106, 96, 103, 99, 105, 97, 102, 100, 104}, 10, false, 1000);
  o.rules = {ParseRule("step_time>+0.5%")};
  Comparison fired = Compare(noisy, slower, o);
  EXPECT_FALSE(fired.step_significance.significant);
  EXPECT_TRUE(fired.regressed);
  // Noise-aware: held back, with the steps a run would tell it from this spread.
  o.noise_aware = true;
  Comparison held = Compare(noisy, slower, o);
  EXPECT_FALSE(held.regressed);
  ASSERT_EQ(held.rules.size(), 1u);
  EXPECT_TRUE(held.rules[0].crossed);
  EXPECT_FALSE(held.rules[0].fired);
  EXPECT_GT(held.rules[0].steps_needed, 10u);
  // One step a run: nothing to judge by; the threshold decides by default, noise-aware holds.
  o.noise_aware = false;
  EXPECT_TRUE(Compare(MakeRun({100}, 10, false, 1000), MakeRun({150}, 10, false, 1000), o).regressed);
  o.noise_aware = true;
  Comparison one = Compare(MakeRun({100}, 10, false, 1000), MakeRun({150}, 10, false, 1000), o);
  EXPECT_FALSE(one.regressed);
  EXPECT_TRUE(one.rules[0].crossed);
  EXPECT_EQ(one.rules[0].steps_needed, 0u);
}

TEST(Compare, AnOpRuleReadsTheHostAndTheDeviceTotal) {
  // The GEMM's kernels 50% slower, its host time the same: op: fires on the device side.
  Analysis base = MakeRun({100, 100, 100}, 10, false, 1000), next = MakeRun({100, 100, 100}, 10, false, 1000);
  for (uint32_t k = 0; k < 3; ++k) {
    base.operators[0].step_device_total.Add(k, 40);
    next.operators[0].step_device_total.Add(k, 60);
  }
  CompareOptions o;
  o.rules = {ParseRule("op:aten::mm>+10%"), ParseRule("op_host:aten::mm>+10%"), ParseRule("op_device:aten::mm>+10%")};
  Comparison c = Compare(base, next, o);
  EXPECT_TRUE(c.rules[0].fired);
  EXPECT_EQ(c.rules[0].side, "device");
  EXPECT_NEAR(c.rules[0].change, 50, 1e-9);
  EXPECT_FALSE(c.rules[1].fired);
  EXPECT_TRUE(c.rules[2].fired);
}

TEST(Compare, NoChangeIsNeverSignificant) {
  CompareOptions o;
  o.rules = {ParseRule("memory_peak>-1%"), ParseRule("step_time>-1%")};
  Analysis same = MakeRun({100, 100, 100}, 10, false, 1000);
  Comparison c = Compare(same, same, o);
  for (const RuleResult& r : c.rules) {
    EXPECT_EQ(r.change, 0) << r.rule.text;
    EXPECT_FALSE(r.significance.significant) << r.rule.text;
  }
}

}  // namespace
}  // namespace torch2pprof
