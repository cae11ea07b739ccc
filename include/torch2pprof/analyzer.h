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
  // A CPU thread: the union of its intervals. A device stream: the union of its device
  // work (kernels, memcpys, memsets); annotations around it are no work.
  int64_t busy_ns = 0;
  // A CPU thread: busy less the time whose innermost event is a blocking wait (convert's
  // work on the lane). -1 on device streams, whose time is device time (convert's gpu).
  int64_t work_ns = -1;
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
  uint64_t events = 0;     // X events, zero-length ones included
  int64_t total_ns = 0;    // summed durations (nested events count each time)
  int64_t covered_ns = 0;  // time covered by its events: their union per lane, summed over lanes
  // Self time (lane stacks), summing to the lanes' busy time over categories: on device
  // streams only device work has any (a device annotation's self time is the device idling).
  int64_t self_ns = 0;
};

// A step and its breakdown; the parts sum to total_ns.
struct StepRow {
  std::string name;
  int64_t start_ns = 0, total_ns = 0;
  int64_t kernel_ns = 0, memcpy_ns = 0, memset_ns = 0, communication_ns = 0, runtime_ns = 0, dataloader_ns = 0,
          cpu_exec_ns = 0, other_ns = 0;
};

// A row's time per analysed step, where it is not 0, by step: a row that runs in few of
// many steps costs its steps, not rows x steps (a trace of 100,000 steps).
class StepSeries {
 public:
  void Add(uint32_t step, int64_t ns);  // in any order; Finish sorts and merges
  void Merge(const StepSeries& other);
  void Finish();
  void DropFrom(uint32_t steps);  // entries of step >= steps
  int64_t At(uint32_t step) const;
  // Adds the value of every step into by_step[step] (which has a slot per step).
  void AddTo(std::vector<int64_t>* by_step) const;
  const std::vector<std::pair<uint32_t, int64_t>>& entries() const { return v_; }

 private:
  std::vector<std::pair<uint32_t, int64_t>> v_;
};

struct OperatorRow {
  std::string name;
  std::string input_dims;  // with group_by_shape
  uint64_t calls = 0;
  int64_t host_total_ns = 0, host_self_ns = 0, device_total_ns = 0, device_self_ns = 0;
  int64_t host_max_ns = 0;  // longest single call
  // With AnalysisOptions::per_step, by analysed step (the step whose window holds the call's
  // start): host total and device total. Calls outside every step count in no step.
  StepSeries step_host_total, step_device_total;
};

struct KernelRow {
  std::string name;
  uint64_t calls = 0;
  int64_t total_ns = 0, min_ns = 0, max_ns = 0;
  double blocks_per_sm = -1;  // weighted by duration; < 0 when the trace has none
  double occupancy = -1;      // est. achieved occupancy %, weighted by duration
  StepSeries step_total;      // with AnalysisOptions::per_step: by the step of each kernel (DeviceStepOf)
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

// The operator that allocated (the innermost operator open on the allocating thread).
struct MemoryOperator {
  std::string name;
  uint64_t allocations = 0;  // over the trace
  int64_t bytes = 0;
  uint64_t live_allocations = 0;  // of them, still allocated at the device's peak
  int64_t live_bytes = 0;
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
  std::vector<MemoryOperator> top_operators;  // by bytes live at the peak, then by allocated bytes
  // Allocated bytes over time, for charts: kMemoryBuckets equal stretches from the first
  // event to the last; the peak's bucket has max_bytes == peak_bytes.
  std::vector<MemoryBucket> timeline;
};
inline constexpr int kMemoryBuckets = 480;
// A device whose peak is below this (a few CPU scalars) gets a line, not a table or a chart.
inline constexpr int64_t kSmallMemory = 1 << 20;

// The model's modules (torch-tb-profiler's module view, without lost operators): each
// nn.Module instance under the instance that called it, from convert's default stacks,
// so a module's time holds its backward (moved under the forward op that created it).
// Host time is convert's work (waits left out); device time, what was launched under it.
struct ModuleNode {
  std::string name;          // the instance: "Linear_0" (from the frame "nn.Module: Linear_0")
  std::string module_class;  // "Linear"
  int32_t parent = -1;       // index into Analysis::modules of its caller module, -1 at the top
  int depth = 0;             // 0 at the top
  uint64_t calls = 0;
  int64_t host_total_ns = 0, device_total_ns = 0;  // under it, once per stack
  int64_t host_self_ns = 0, device_self_ns = 0;    // of which not under a child module
};

// A module class: its instances together; the total counts an instance inside another
// instance of its class once.
struct ModuleClassRow {
  std::string name;  // "Linear"
  uint64_t instances = 0, calls = 0;
  int64_t host_total_ns = 0, device_total_ns = 0;
  int64_t host_self_ns = 0, device_self_ns = 0;  // not under a child module
};

// A Python function (python_function frames, with_stack), by its own host time.
struct PythonFunctionRow {
  std::string name;  // "forward torch/nn/modules/linear.py:125"
  std::string file;  // the source file
  int64_t line = 0;
  uint64_t calls = 0;
  int64_t host_total_ns = 0, host_self_ns = 0;  // once per stack; self: frames below left out
  int64_t device_total_ns = 0;
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
  // Depth first, a module's children by device total (host total in a trace without device time).
  std::vector<ModuleNode> modules;
  std::vector<ModuleClassRow> module_classes;       // by device self (host self without device time)
  std::vector<PythonFunctionRow> python_functions;  // by host self
  std::vector<Recommendation> recommendations;
  // Sums that reached the largest 64-bit value and were held there, where a hostile
  // trace's durations or sizes add up past it (analyze warns).
  uint64_t saturated = 0;
};

// trace must be loaded with LoadOptions::details, and model built from it. Works lane by
// lane over the loaded intervals: beyond them it holds a few bytes per event, never a copy.
Analysis Analyze(const Trace& trace, const TraceModel& model, const AnalysisOptions& options = {});
// The same with the trace's uncut stacks (BuildLanes with default BuildOptions but
// threads) already built, for example beside the model; they are freed on the way.
Analysis Analyze(const Trace& trace, const TraceModel& model, std::vector<LaneStacks> lanes,
                 const AnalysisOptions& options);

}  // namespace torch2pprof
