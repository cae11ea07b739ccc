// What analyze and compare find, as plain numbers in nanoseconds: one trace's views
// (Analysis), several ranks side by side (RanksAnalysis), and two runs compared (Comparison).
#pragma once

#include <cstdint>
#include <iterator>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "torch2pprof/events.h"

namespace torch2pprof {

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

// What a stretch of a step's critical path is bound by: HTA's categories
// (hta/analyzers/critical_path_analysis.py, BoundType), their names as HTA writes them.
enum class Bound : uint8_t {
  kKernelKernel,      // gpu_kernel_kernel_overhead: a stream's gap between two of its kernels
  kLaunch,            // gpu_kernel_launch_overhead: device work waiting for its launch
  kDataLoading,       // data_loading: the host inside a DataLoader's next()
  kCpu,               // cpu_bound: the host working (operators, Python, runtime calls) or idle
  kGpuCompute,        // gpu_compute_bound: kernels, copies and sets
  kGpuCommunication,  // gpu_communication_bound: communication kernels
};
inline constexpr int kBounds = 6;
inline constexpr const char* kBoundNames[kBounds] = {
    "gpu_kernel_kernel_overhead", "gpu_kernel_launch_overhead", "data_loading", "cpu_bound",
    "gpu_compute_bound",          "gpu_communication_bound"};

// What held the most of a critical path: an event (by name) in one category, and where
// the code that ran or launched it is (the innermost Python frame "func file:line", else
// the operator; "" when neither is known).
struct CriticalItem {
  std::string name;
  Bound bound = Bound::kCpu;
  std::string where;
  int64_t ns = 0;
};

// One analysed step's critical path (docs/reference.md, "Critical path"): what the step
// waited on, walked back from its end, each nanosecond put down to one event and one
// category; the categories add up to the step's time.
struct CriticalStep {
  std::string step;
  int64_t length_ns = 0;
  int64_t bound_ns[kBounds] = {};
  CriticalItem most;  // the event holding most of it (ns 0: none)
  // The category holding most of the step.
  Bound bound_by() const;
};

// The parts of a step's breakdown in the order they claim its time (docs/tb-semantics.md
// §4), Other last: the one list every stage and output reads.
struct StepPart {
  const char* key;      // "cpu_exec": JSON and CSV write key + "_us", compare names the part so
  const char* heading;  // "cpu exec": text
  int64_t StepRow::*field;
};
inline constexpr StepPart kStepParts[] = {
    {"kernel", "kernel", &StepRow::kernel_ns},       {"memcpy", "memcpy", &StepRow::memcpy_ns},
    {"memset", "memset", &StepRow::memset_ns},       {"communication", "comm", &StepRow::communication_ns},
    {"runtime", "runtime", &StepRow::runtime_ns},    {"dataloader", "dataload", &StepRow::dataloader_ns},
    {"cpu_exec", "cpu exec", &StepRow::cpu_exec_ns}, {"other", "other", &StepRow::other_ns},
};
inline constexpr int kStepPartCount = static_cast<int>(std::size(kStepParts));

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
  // GPU utilization as torch-tb-profiler defines it: window_kernel_ns / window_ns (0
  // without a window). Every output reads it here.
  double utilization() const;
};
// The devices together: their kernels' time in the steps' span over the spans' sum.
double GpuUtilization(const std::vector<GpuRow>& gpus);

// Why a device stream sat idle, as HTA's idle time breakdown splits it
// (hta/analyzers/breakdown_analysis.py, _analyze_idle_time_for_stream): each gap before
// a piece of device work (kernel, memcpy, memset) on a stream, since the stream's work
// before it ended, is host wait when that work's launch call began after that end (the
// CPU launched it too late), kernel wait when the gap is shorter than
// kConsecutiveKernelDelayNs (the cost of launching back to back), else other. The time
// before a stream's first work and after its last is none of them.
inline constexpr int64_t kConsecutiveKernelDelayNs = 30'000;  // HTA's default, 30 us
struct IdleRow {
  std::string device;  // "cuda:0"
  std::string stream;  // the stream lane's tid
  int64_t host_wait_ns = 0, kernel_wait_ns = 0, other_ns = 0;
  uint64_t gaps = 0;    // gaps counted (work after work, with some idle before it)
  int64_t busy_ns = 0;  // union of the stream's device work
  // Of them, the gaps before work of the analysed steps (DeviceStepOf), summed over them.
  int64_t step_host_wait_ns = 0, step_kernel_wait_ns = 0, step_other_ns = 0;
  int64_t idle_ns() const { return host_wait_ns + kernel_wait_ns + other_ns; }
};

// Copies and sets on a device by kind, as HTA's memory bandwidth summary counts them
// (hta/analyzers/trace_counters.py, get_memory_bw_summary), but by the full name Kineto
// gives the kind ("Memcpy DtoH (Device -> Pageable)"): the memory kind is the point.
struct CopyRow {
  std::string device;  // "cuda:0"
  std::string kind;    // the event's name
  uint64_t count = 0;
  int64_t time_ns = 0;
  uint64_t with_bytes = 0;         // copies whose args carry "bytes"
  int64_t bytes = 0;               // their bytes
  int64_t time_with_bytes_ns = 0;  // their time
  double peak_gb_per_s = 0;        // the most bandwidth of copies of this kind running at once
  // Of them, those of the analysed steps (the step of the copy, AnalysedDeviceStep).
  uint64_t step_count = 0;
  int64_t step_time_ns = 0, step_bytes = 0;
  // Bytes per nanosecond (GB/s) over the copies with bytes; < 0 when none has them.
  double gb_per_s() const {
    return time_with_bytes_ns > 0 ? static_cast<double>(bytes) / static_cast<double>(time_with_bytes_ns) : -1;
  }
  bool pageable() const { return kind.find("Pageable") != std::string::npos; }
};

// Device work by the operator that launched it and the kernel's name (torch-tb-profiler's
// kernel view grouped by "kernel + op name"); copies and sets included.
struct KernelOpRow {
  std::string op;  // the launching operator (operator table's rule); "(no operator)"
  std::string kernel;
  uint64_t calls = 0;
  int64_t total_ns = 0, min_ns = 0, max_ns = 0;
  int64_t bytes = -1;  // copies and sets: the bytes of those that record them; -1 for kernels
  bool tensor_cores = false;
};

// The share of kernel time in kernels that use Tensor Cores (IsTensorCoreKernel), as
// torch-tb-profiler's overview and operator view report it.
struct TensorCoreOp {
  std::string op;
  int64_t kernel_ns = 0, tensor_core_ns = 0;
  bool eligible = false;  // an operator autocast runs in lower precision (matmul, conv, ...)
};
// Collectives by message, from the NCCL kernels that record theirs (torch >= 2.1 writes
// "Collective name", "In msg nelems", "dtype", "Group size" on them): the transfer's
// bandwidth as nccl-tests defines it (doc/PERFORMANCE.md): algorithm bandwidth = message
// bytes / time; bus bandwidth = that times 2(n-1)/n for all-reduce, (n-1)/n for
// all-gather, reduce-scatter and all-to-all, 1 for the rest.
struct CollectiveSizeRow {
  std::string collective;  // as recorded: "allreduce", "allgather", ...
  std::string dtype;       // "Float", "BFloat16", ...
  int32_t group_size = -1;
  int64_t message_bytes = -1;  // per call, as nccl-tests sizes it; -1: unknown dtype
  uint64_t calls = 0;
  int64_t time_ns = 0;  // the kernels' time
  double bus_factor = 1;
  double algbw_gb_per_s() const {
    return message_bytes >= 0 && time_ns > 0
               ? static_cast<double>(message_bytes) * static_cast<double>(calls) / static_cast<double>(time_ns)
               : -1;
  }
  double busbw_gb_per_s() const { return algbw_gb_per_s() < 0 ? -1 : algbw_gb_per_s() * bus_factor; }
};

// A record_function annotation (user_annotation; steps aside), by name: its spans on
// the host, the device time launched inside them, and the backward pass of the
// operators run inside them (autograd runs it on its own thread, after the span).
struct AnnotationRow {
  std::string name;
  uint64_t calls = 0;
  int64_t host_ns = 0;                                   // the spans' durations
  int64_t device_ns = 0;                                 // device time launched by runtime calls inside the spans
  int64_t backward_host_ns = 0, backward_device_ns = 0;  // the linked backward subtrees
};

// Host calls that wait for the device (cudaStreamSynchronize, a synchronous
// cudaMemcpy, ...), by call and the operator that made it: while one waits, the host
// launches nothing, and the device's queue drains.
struct SyncRow {
  std::string call, op;  // op: the operator table's rule; "(no operator)"
  uint64_t count = 0;
  int64_t total_ns = 0;
};

struct TensorCoreUse {
  int64_t kernel_ns = 0, tensor_core_ns = 0;
  std::vector<TensorCoreOp> ops;  // by kernel time
  double kernel_time_share() const {
    return kernel_ns > 0 ? static_cast<double>(tensor_core_ns) / static_cast<double>(kernel_ns) : 0;
  }
};

// A distribution by the nearest-rank rule: each percentile is a value some launch had.
struct Percentiles {
  int64_t p50 = 0, p90 = 0, p99 = 0, max = 0;
  int64_t mean = 0;  // rounded down
};

// Kernel launches as HTA's launch statistics (hta/analyzers/cuda_kernel_analysis.py,
// cuda_kernel_launch_stats): each device event launched by a launch call — the calls HTA's
// get_runtime_launch_events_mask names: cudaLaunchKernel(ExC), the driver's
// cuLaunchKernel(Ex) (Triton's kernels under torch.compile; HTA's launch statistics name
// only the runtime's), cudaMemcpyAsync, cudaMemsetAsync, MTIA's and ROCm's — with the
// call's duration, the device event's, and the launch delay: from the call's end to the
// device event's start, 0 when it started sooner.
inline constexpr int64_t kSlowLaunchNs = 50'000;  // HTA's runtime_cutoff
inline constexpr int64_t kLongDelayNs = 100'000;  // HTA's launch_delay_cutoff
struct LaunchStats {
  uint64_t count = 0;
  uint64_t step_count = 0;  // of them, launches of device work in the analysed steps
  Percentiles launch_delay, cpu_duration, gpu_duration;
  uint64_t short_kernels = 0;  // device events shorter than their launch call
  uint64_t slow_launches = 0;  // launch calls longer than kSlowLaunchNs
  uint64_t long_delays = 0;    // launch delays longer than kLongDelayNs
};

// The launch queue of a stream as HTA's queue length (hta/analyzers/trace_counters.py,
// get_queue_length_summary): work launched and not yet started, one more when a launch
// call begins, one less when its work starts; the distribution is over those changes.
struct QueueRow {
  std::string device, stream;
  uint64_t launches = 0;
  Percentiles length;  // of the queue's length after each change (mean rounded down)
  double mean = 0;     // exact mean over the changes, as HTA's describe()
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
  // What acting on it could save per step at most: the time its cause takes (the
  // rule of each is in docs/reference.md); recommendations come by it, largest first.
  int64_t saving_ns = 0;
};

// A profile's call tree as the HTML report draws it (a flame graph): each node's
// inclusive value per sample type. Nodes that hold less than `fold_share` of every
// type's total are folded into their parents (whose values keep them).
struct FlameGraph {
  std::vector<std::string> types, units;    // e.g. "gpu", "nanoseconds"
  std::vector<std::string> names;           // frame names
  std::vector<uint32_t> parent;             // by node; node 0 is the root (its own parent)
  std::vector<uint32_t> name;               // by node: index into names (the root: 0, unused)
  std::vector<std::vector<int64_t>> total;  // by type, then by node: the inclusive value
  uint64_t folded = 0;                      // nodes folded into their parents
  double fold_share = 0;
  bool empty() const { return parent.size() <= 1; }
};

struct Analysis {
  TraceOverview trace;
  std::vector<CategoryRow> categories;  // by self time
  std::vector<StepRow> steps;
  bool whole_trace_step = false;            // no ProfilerStep: one step over the trace
  std::vector<CriticalStep> critical_path;  // by step, parallel to steps
  std::vector<CriticalItem> critical_top;   // over all steps: the events holding most, at most 20
  std::vector<OperatorRow> operators;       // by host total
  std::vector<KernelRow> kernels;           // by total
  int64_t kernel_total_ns = 0;              // summed kernel durations
  std::vector<GpuRow> gpu;
  std::vector<IdleRow> idle_time;  // by device, then stream
  LaunchStats kernel_launches;
  std::vector<QueueRow> queue_length;            // by device, then stream
  std::vector<CopyRow> copies;                   // by device, then time
  std::vector<KernelOpRow> kernels_by_operator;  // by total
  TensorCoreUse tensor_cores;
  std::vector<SyncRow> synchronizations;            // within the analysed steps, by total
  std::vector<AnnotationRow> annotations;           // by host time
  std::vector<CollectiveSizeRow> collective_sizes;  // by time
  std::vector<MemoryRow> memory;
  // Depth first, a module's children by device total (host total in a trace without device time).
  std::vector<ModuleNode> modules;
  std::vector<ModuleClassRow> module_classes;       // by device self (host self without device time)
  std::vector<PythonFunctionRow> python_functions;  // by host self
  std::vector<Recommendation> recommendations;
  // convert's profile as a flame graph: device time, the critical path, host work and
  // memory in use at the peak, each under its stacks (AnalyzeOptions::flame_graph).
  FlameGraph flame;
  // Sums that reached the largest 64-bit value and were held there, where a hostile
  // trace's durations or sizes add up past it (analyze warns).
  uint64_t saturated = 0;
};

// ---- memory snapshots (AnalyzeSnapshot in torch2pprof.h)

// Bytes live at a moment by the code that allocated them: the innermost Python frame of
// the block's stack ("function file:line"), else the backward node or operator
// (docs/reference.md), else "[no stack recorded]". A block allocated before the recorded
// window and freed after the moment has only its free's stack: "[before the window;
// freed at] " and the site of the free.
struct SnapshotSite {
  std::string site;
  int64_t bytes = 0;
  int64_t blocks = 0;
};

// An out-of-memory event of the ring (action oom).
struct SnapshotOom {
  int64_t entry = 0;  // its index in the device's ring
  int64_t time_us = 0;
  int64_t requested_bytes = 0;
  int64_t device_free_bytes = -1;   // what the device had free; -1 not recorded
  int64_t allocated_bytes = 0;      // replayed at the event
  std::vector<SnapshotSite> sites;  // live at the event, most bytes first (see kOomSites)
};
// Out-of-memory events of a device whose live blocks are read out (each is a replay of
// the device's ring): the first and the last kOomSites / 2; those between keep their numbers.
inline constexpr size_t kOomSites = 64;

// Allocated and reserved bytes after a stretch of the ring, for the timeline.
struct SnapshotLevel {
  int64_t time_us = 0;
  int64_t allocated_bytes = 0;  // the highest level in the stretch
  int64_t reserved_bytes = 0;
};

struct SnapshotDevice {
  std::string device;  // "cuda:0"
  // At the dump, as torch's _memory_viz segment summary (segsum) counts, except that
  // blocks whose free waits for their stream are pending, not free:
  int64_t segments = 0;
  int64_t reserved_bytes = 0;      // the segments' total_size
  int64_t allocated_bytes = 0;     // active_allocated blocks, the bytes asked for
  int64_t rounding_bytes = 0;      // their size beyond it: internal fragmentation
  int64_t pending_free_bytes = 0;  // active_pending_free blocks
  int64_t free_bytes = 0;          // inactive blocks: cached, free to reuse (external fragmentation)
  int64_t largest_free_bytes = 0;  // the largest inactive block: the most one allocation gets without a new segment
  // The recorded window (the device's ring of allocator actions):
  int64_t ring_entries = 0, allocs = 0, frees = 0, segment_allocs = 0, segment_frees = 0;
  int64_t first_time_us = 0, last_time_us = 0;
  int64_t peak_bytes = 0;   // allocated, bytes asked for
  int64_t peak_entry = -1;  // the ring entry after which it holds; -1 before the ring
  int64_t peak_time_us = 0;
  int64_t before_bytes = 0;              // allocated before the ring's first entry
  bool consistent = true;                // the ring and the segments agree
  std::vector<SnapshotSite> peak_sites;  // live at the peak, most bytes first
  std::vector<SnapshotOom> ooms;
  std::vector<SnapshotLevel> timeline;  // at most a few thousand stretches, in time order
};

struct SnapshotAnalysis {
  std::string file;
  std::vector<SnapshotDevice> devices;
  bool overflowed = false;  // allocator_settings' trace_alloc_overflowed
  FlameGraph flame;         // memory by stack (AnalyzeOptions::flame_graph)
};

// ---- analyze over several ranks

// A collective by name: host-side nccl:/gloo: operations (kind "host") or
// communication kernels (kind "kernel").
struct CollectiveStat {
  std::string name;
  std::string kind;
  uint64_t calls = 0;
  int64_t total_ns = 0;
};

// One call of a collective, as a rank ran it in its analysed steps. Calls are matched
// across ranks by their collective (kind and name) and their position among the rank's
// calls of it, in time order: the k-th gloo:all_reduce of every rank is one instance.
struct CollectiveCall {
  uint32_t collective = 0;  // index into RankSummary::collectives
  int64_t start_ns = 0, dur_ns = 0;
};

struct RankSummary {
  std::string file;
  int64_t rank = -1, world_size = -1;  // distributedInfo; -1 when absent
  std::string backend;
  std::vector<StepRow> steps;  // the analysed steps and their breakdown
  int64_t step_median_ns = 0, step_min_ns = 0, step_max_ns = 0;
  StepRow mean_step;  // each part's mean over the steps (name "mean")
  // The device's time as HTA's temporal breakdown and comm/compute overlap see it,
  // over the rank's device work (kernels, memcpy, memset on every device and stream):
  int64_t gpu_span_ns = 0;        // first start to last end
  int64_t gpu_idle_ns = 0;        // the span less the union of all device work
  int64_t compute_ns = 0;         // union of kernels that are not communication
  int64_t non_compute_ns = 0;     // union of all device work less compute: communication, memcpy, memset
  int64_t comm_kernel_ns = 0;     // union of communication kernels
  int64_t overlap_ns = 0;         // of comm_kernel_ns, the time some compute kernel also ran
  int64_t communication_ns = 0;   // the step breakdown's communication part over all steps
  int64_t gpu_window_ns = 0;      // the steps' span summed over devices
  double gpu_utilization = 0;     // GpuUtilization of the rank's devices
  int64_t memory_peak_bytes = 0;  // highest device peak (cpu when there is no device)
  std::string memory_device;
  std::vector<CollectiveStat> collectives;  // by kind, then name
  std::vector<CollectiveCall> calls;        // in the analysed steps, in time order
  // The trace's times plus this are wall-clock ns since the epoch, where the trace has a
  // wall clock (baseTimeNanoseconds, or epoch timestamps): arrivals compare across ranks.
  bool wall_clock = false;
  int64_t wall_clock_offset_ns = 0;
  // The communication kernels that record their message (NCCL's): the bytes they moved as
  // nccl-tests' bus bandwidth counts them (message bytes x calls x its bus factor) and
  // their time; 0 where none records one (gloo).
  int64_t bus_bytes = 0, bus_time_ns = 0;
};

struct CollectiveRow {
  std::string name, kind;
  std::vector<uint64_t> calls;        // per rank, in RanksAnalysis::ranks order
  std::vector<int64_t> total_ns;      // per rank
  int64_t min_ns = 0, max_ns = 0;     // of total_ns
  size_t min_rank = 0, max_rank = 0;  // indexes into ranks: least time (usually the last to arrive) and most
};

// Step N on every rank that has it.
struct StepAlignment {
  std::string name;
  std::vector<int64_t> total_ns;    // per rank; -1 where the rank has no such step
  size_t slowest = 0, fastest = 0;  // indexes into ranks
  int64_t spread_ns = 0;            // slowest less fastest
};

// A rank whose median step or compute time is more than the threshold above the ranks'
// median (pipeline stages, uneven shards): not the straggler, which others wait for.
struct SlowRank {
  size_t rank = 0;                      // index into ranks
  std::string metric;                   // "step_time" (median step) or "compute" (compute kernel time)
  int64_t value_ns = 0, median_ns = 0;  // the rank's, and the median over ranks
  double excess = 0;                    // value / median - 1
  std::string part;                     // the step part most above the ranks' median ("kernel", ...)
  int64_t part_delta_ns = 0;            // by how much, per step
};

// A rank's time inside collectives split as torch-tb-profiler's distributed view split
// communication into synchronizing and transfer, for each instance matched on every
// rank. Where the ranks' clocks compare (RanksAnalysis::waits_from_arrivals), a rank
// waits from its arrival until the last rank arrives; else the shortest rank's time is
// transfer and each rank's time beyond it is waiting. The wait sits at the instance's
// start; times are of the union over the instances, so concurrent collectives' waits
// count once.
struct CollectiveWait {
  int64_t wait_ns = 0, transfer_ns = 0;  // per analysed step
  uint64_t instances = 0;                // matched on every rank
};

// The rank the others wait for: it arrives last at the collectives, so it waits least,
// while the others wait for it; its own step spends the difference elsewhere. In
// synchronous data parallelism every rank's step time is the same, so this, not step
// time, is how a late rank shows.
struct Straggler {
  size_t rank = 0;              // index into ranks
  std::vector<size_t> waiters;  // the ranks that wait for it, by index
  int64_t waited_ns = 0;        // the waiters' median wait beyond its own, per step
  std::string collective;       // where they wait most ("gloo:all_reduce")
  std::string part;             // its step part most above the other ranks' median
  int64_t part_delta_ns = 0;    // by how much, per step
};

// One number of the rank table over all ranks: what the text shows past a handful of
// ranks instead of a row per rank.
struct RankSpread {
  enum Unit { kNanoseconds, kBytes, kFraction };
  std::string key;      // the rank table's JSON name without its unit ("step_median", "wait")
  std::string heading;  // text
  Unit unit = kNanoseconds;
  double min = 0, median = 0, p90 = 0, max = 0;  // p90: the nearest-rank 90th percentile
  size_t min_rank = 0, max_rank = 0;             // indexes into ranks: the first with the extreme
};

struct RanksAnalysis {
  std::vector<RankSummary> ranks;    // by rank
  bool ranks_are_positions = false;  // RanksOrPositions replaced given ranks
  double threshold = 0.05;
  int64_t median_step_ns = 0, median_compute_ns = 0;  // medians over ranks
  std::vector<CollectiveWait> waits;                  // by rank
  // Waits from arrival times: every rank's trace has a wall clock, and in every matched
  // instance the last rank arrived before any rank's call ended (a collective cannot end
  // before all arrive: clocks that say otherwise are skewed). Else from durations.
  bool waits_from_arrivals = false;
  std::vector<RankSpread> spreads;    // the rank table's numbers over the ranks
  std::vector<Straggler> stragglers;  // the rank the others wait for, by arrival, where there is one
  std::vector<SlowRank> slow_ranks;   // slower in step time or compute (pipeline, uneven shards), largest excess first
  std::vector<CollectiveRow> collectives;  // by spread (max - min), largest first
  std::vector<StepAlignment> steps;        // in step order
  // What to change across the ranks, largest saving per step first: the straggler,
  // communication and what limits it, ranks whose steps are slower (docs/reference.md).
  std::vector<Recommendation> recommendations;
};

// ---- compare: two runs

// A value in both runs. Times are per step where the name says so.
struct Delta {
  int64_t base = 0, next = 0;
  int64_t change() const { return next - base; }
  // (next - base) / base; 0 when base is 0 and next is too, +inf-like 1e300 when only base is.
  double relative() const;
};

// Whether a change is more than the step-to-step spread: a 95% bootstrap interval of the
// change of the statistic over the per-step values (5000 resamples, fixed seed).
struct Significance {
  bool assessed = false;     // both runs have at least 10 steps (the bootstrap's floor)
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
};
// Rules: memory_peak only (the largest device peak of each); others are Error (kUsage).
SnapshotComparison CompareSnapshots(const SnapshotAnalysis& base, const SnapshotAnalysis& next,
                                    const CompareOptions& options = {});

}  // namespace torch2pprof
