// What compare finds between two runs (Compare in torch2pprof.h): each value in both, the
// change and its noise, and which --fail-on rules fired; traces and memory snapshots alike.
#pragma once

#include <cstdint>
#include <iterator>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "torch2pprof/analysis.h"
#include "torch2pprof/snapshot.h"

namespace torch2pprof {

// A value in both runs. Times are per step where the name says so.
struct Delta {
  int64_t base = 0, next = 0;
  int64_t change() const { return next - base; }
  // (next - base) / base; 0 when base is 0 and next is too, +inf-like 1e300 when only base is.
  double relative() const;
};

// Steps a run needs before its noise is judged. A percentile bootstrap of a median or a
// mean holds its 95% coverage only from about ten values: below, a resampled median of
// three steps takes one of three values, and an interval from it would call noise a
// change. Fewer steps leave the change unassessed (the report says so).
inline constexpr size_t kMinSteps = 10;

// Whether a change is more than the step-to-step spread: a 95% bootstrap interval of the
// change of the statistic over the per-step values (5000 resamples, fixed seed).
struct Significance {
  bool assessed = false;     // both runs have at least kMinSteps steps (the bootstrap's floor)
  bool significant = false;  // assessed and the interval excludes 0
  double low = 0, high = 0;  // the interval of the change (ns or the value's unit)
};

struct StepSummary {
  uint64_t steps = 0;
  int64_t median_ns = 0, min_ns = 0, max_ns = 0;
};

struct PartChange {
  std::string part;  // kernel, memcpy, ..., other
  Delta mean_ns;     // mean per step
  Significance significance;
};

struct OperatorChange {
  std::string name, input_dims;
  std::string status;                                      // "changed", "added" (new run only), "removed" (base only)
  double base_calls = 0, next_calls = 0;                   // per step
  Delta host_total, host_self, device_total, device_self;  // ns per step
};

struct KernelChange {
  std::string name;
  std::string status;
  double base_calls = 0, next_calls = 0;  // per step
  Delta total;                            // ns per step
  Delta mean;                             // ns per call
};

struct DeviceChange {
  std::string device;
  double base_utilization = 0, next_utilization = 0;  // kernel time in the steps' span / the span
  Delta kernel;                                       // ns per step
};

struct MemoryChange {
  std::string device;
  Delta peak_bytes;
};

// A --fail-on rule: METRIC OP THRESHOLD, e.g. "step_time>+5%", "memory_peak>+100MiB".
struct Rule {
  std::string text;  // as given
  // step_time, kernel_time, comm_time, memory_peak, gpu_util, kernel:GLOB, op:GLOB (the
  // operators' host or device total per step, whichever crosses), op_host:GLOB, op_device:GLOB
  std::string metric;
  std::string op;  // >, >=, <, <=
  double threshold = 0;
  bool relative = false;  // a percentage of the base value, else in the metric's unit (ns, bytes, fraction)
};
// Throws Error (kUsage) with what is wrong; a number without a unit is wrong for a time
// or a size (the message suggests the percentage).
Rule ParseRule(const std::string& text);

struct RuleResult {
  Rule rule;
  double base = 0, next = 0;                // the metric in each run (ns, bytes or a fraction)
  double change = 0;                        // in the rule's terms: percent, or the unit
  std::string side;                         // op: which total decided, "host" or "device"; else empty
  Significance significance;                // of the change, over the per-step values
  bool one_value = false;                   // the metric is one value a run (memory_peak, gpu_util): no spread
  uint64_t base_steps = 0, next_steps = 0;  // the measurements behind each run's value
  bool matched = true;                      // op:/kernel: globs that match nothing in either run never cross
  bool crossed = false;                     // the change is past the threshold
  bool fired = false;
  // A rule that crossed and did not fire (noise_aware): the steps a run would tell a change
  // of the threshold's size from this spread (0: unknown, or too few steps to judge).
  uint64_t steps_needed = 0;
};

struct CompareOptions {
  std::vector<Rule> rules;
  // A rule that crossed fires only when its change is told from the step-to-step noise
  // (the bootstrap interval excludes 0); by default the threshold alone decides.
  bool noise_aware = false;
};

struct Comparison {
  std::string base_file, next_file;
  StepSummary base_steps, next_steps;
  bool base_whole_trace = false, next_whole_trace = false;
  Delta step_median;  // ns
  Significance step_significance;
  std::vector<PartChange> parts;
  Delta communication;                    // ns per step (the Communication part)
  std::vector<OperatorChange> operators;  // by the larger absolute change of host or device total per step
  std::vector<KernelChange> kernels;      // by absolute change of total per step
  std::vector<DeviceChange> devices;
  std::vector<MemoryChange> memory;
  std::vector<RuleResult> rules;
  bool regressed = false;  // a rule fired
  // Both runs' profiles per step as one differential flame graph (CompareRunsOptions::flame_graph).
  FlameGraph flame;
};

// base and next come from Analyze with AnalysisOptions::per_step (and the same grouping).
Comparison Compare(const Analysis& base, const Analysis& next, const CompareOptions& options = {});

// Two memory snapshots: each device's peak, reserved and allocated bytes, and the bytes
// live at the peak by site (summed over the devices).
struct SnapshotDeviceChange {
  std::string device;
  Delta peak_bytes, reserved_bytes, allocated_bytes;  // allocated and reserved at the dump
};
struct SiteChange {
  std::string site;
  Delta bytes;  // live at the peak
};
struct SnapshotComparison {
  std::string base_file, next_file;
  std::vector<SnapshotDeviceChange> devices;
  std::vector<SiteChange> sites;  // by the size of the change, largest first; unchanged ones left out
  std::vector<RuleResult> rules;
  bool regressed = false;
  FlameGraph flame;  // both snapshots' profiles as one differential flame graph, when asked
};
// Rules: memory_peak only (the largest device peak of each); others are Error (kUsage).
SnapshotComparison CompareSnapshots(const SnapshotAnalysis& base, const SnapshotAnalysis& next,
                                    const CompareOptions& options = {});

}  // namespace torch2pprof
