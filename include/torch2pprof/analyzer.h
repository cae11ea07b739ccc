// Stage 4 (analyze): the views torch-tb-profiler taught users — step breakdown,
// operators, kernels, GPU use, memory — plus advice, as plain numbers in nanoseconds.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "torch2pprof/lane_builder.h"
#include "torch2pprof/trace.h"
#include "torch2pprof/trace_model.h"

namespace torch2pprof {

struct AnalysisOptions {
  bool group_by_shape = false;  // operators grouped by name and Input Dims
  int threads = 1;              // lanes walked in parallel; the result never depends on it
  bool per_step = false;        // also each operator's and kernel's time per analysed step (compare)
};

struct LaneInfo {
  std::string pid, tid, name;  // name: thread_name, or empty
  bool device = false;         // a GPU (or other device) stream
  uint64_t intervals = 0;
  int64_t busy_ns = 0;
};

struct TraceOverview {
  std::string file;
  int64_t start_ns = 0;       // first start of any timed event
  int64_t span_ns = 0;        // first start to last end
  int64_t wall_clock_ns = 0;  // wall-clock time of start_ns, 0 when unknown
  uint64_t events = 0;
  std::map<std::string, uint64_t> phases;
  std::vector<LaneInfo> lanes;
  std::vector<DeviceInfo> devices;     // from deviceProperties
  int64_t rank = -1, world_size = -1;  // from distributedInfo
  std::string backend;
  uint64_t profiler_steps = 0;              // host-side ProfilerStep#N events found
  std::map<std::string, uint64_t> skipped;  // events without time, by reason key
};

struct CategoryRow {
  std::string category;  // as written ("" when the event had none)
  Role role = Role::kOther;
  uint64_t events = 0;   // X events, zero-length ones included
  int64_t total_ns = 0;  // summed durations
  int64_t self_ns = 0;   // summed self time (lane stacks); sums to the busy time over categories
};

// A step and its breakdown; the parts sum to total_ns.
struct StepRow {
  std::string name;
  int64_t start_ns = 0, total_ns = 0;
  int64_t kernel_ns = 0, memcpy_ns = 0, memset_ns = 0, communication_ns = 0, runtime_ns = 0, dataloader_ns = 0,
          cpu_exec_ns = 0, other_ns = 0;
};

struct OperatorRow {
  std::string name;
  std::string input_dims;  // with group_by_shape
  uint64_t calls = 0;
  int64_t host_total_ns = 0, host_self_ns = 0, device_total_ns = 0, device_self_ns = 0;
  int64_t host_max_ns = 0;  // longest single call
  // With AnalysisOptions::per_step, by analysed step (the step whose window holds the call's
  // start): host total and device total. Calls outside every step count in no step.
  std::vector<int64_t> step_host_total_ns, step_device_total_ns;
};

struct KernelRow {
  std::string name;
  uint64_t calls = 0;
  int64_t total_ns = 0, min_ns = 0, max_ns = 0;
  double blocks_per_sm = -1;           // weighted by duration; < 0 when the trace has none
  double occupancy = -1;               // est. achieved occupancy %, weighted by duration
  std::vector<int64_t> step_total_ns;  // with AnalysisOptions::per_step: by the step it was launched in
};

struct GpuRow {
  std::string device;  // "cuda:0"
  int64_t device_id = -1;
  std::string name;  // from deviceProperties
  int streams = 0;
  int64_t busy_ns = 0;           // union of its kernels, memcpys and memsets
  int64_t kernel_ns = 0;         // union of its kernels
  int64_t window_ns = 0;         // the steps' span the utilization is over
  int64_t window_kernel_ns = 0;  // union of its kernels inside that span
};

struct MemoryOperator {
  std::string name;
  uint64_t allocations = 0;
  int64_t bytes = 0;
};

// A stretch of a device's memory timeline: the highest and the last level in it.
struct MemoryBucket {
  int64_t start_ns = 0, end_ns = 0;  // [start, end)
  int64_t max_bytes = 0, end_bytes = 0;
};

struct MemoryRow {
  std::string device;  // "cpu", "cuda:0"
  uint64_t allocations = 0, frees = 0;
  int64_t allocated_bytes = 0, freed_bytes = 0;
  int64_t peak_bytes = 0;                     // max Total Allocated, or of the running sum of Bytes
  int64_t peak_ns = 0;                        // when it peaked
  bool from_totals = false;                   // peak read from "Total Allocated"
  int64_t before_trace_bytes = 0;             // of the peak: allocated before the trace began
  std::vector<MemoryOperator> top_operators;  // by allocated bytes
  // Allocated bytes over time, for charts: kMemoryBuckets equal stretches from the first
  // event to the last; the peak's bucket has max_bytes == peak_bytes.
  std::vector<MemoryBucket> timeline;
};
inline constexpr int kMemoryBuckets = 480;

// A Python function, a module instance (nn.Module: Linear_0) or a module class (Linear)
// by inclusive time, with the backward moved under the forward op that created it
// (convert's default stacks): torch-tb-profiler's module view without lost operators.
struct ModuleRow {
  std::string name;             // "forward torch/nn/modules/linear.py:125", "nn.Module: Linear_0", "Linear"
  std::string kind;             // "python", "module", "module class"
  std::string file;             // Python frames: the source file
  int64_t line = 0;             // and line
  uint64_t calls = 0;           // python_function events (instances of the class together)
  int64_t host_total_ns = 0;    // CPU time under it, waits left out (convert's work); once per stack
  int64_t host_self_ns = 0;     // of which its own
  int64_t device_total_ns = 0;  // device time launched under it, backward included
};

struct Recommendation {
  std::string id;    // stable key, e.g. "dataloader"
  std::string text;  // the advice with the numbers that triggered it
};

struct Analysis {
  TraceOverview trace;
  std::vector<CategoryRow> categories;  // by self time
  std::vector<StepRow> steps;
  bool whole_trace_step = false;       // no ProfilerStep: one step over the trace
  std::vector<OperatorRow> operators;  // by host total
  std::vector<KernelRow> kernels;      // by total
  int64_t kernel_total_ns = 0;         // summed kernel durations
  std::vector<GpuRow> gpu;
  std::vector<MemoryRow> memory;
  std::vector<ModuleRow> modules;  // by host total
  std::vector<Recommendation> recommendations;
};

// trace must be loaded with LoadOptions::details, and model built from it. Works lane by
// lane over the loaded intervals: beyond them it holds a few bytes per event, never a copy.
Analysis Analyze(const Trace& trace, const TraceModel& model, const AnalysisOptions& options = {});
// The same with the trace's uncut stacks (BuildLanes with default BuildOptions but
// threads) already built, for example beside the model; they are freed on the way.
Analysis Analyze(const Trace& trace, const TraceModel& model, std::vector<LaneStacks> lanes,
                 const AnalysisOptions& options);

}  // namespace torch2pprof
