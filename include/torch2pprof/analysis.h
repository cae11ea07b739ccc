// What analyze finds in one trace, as plain numbers in nanoseconds (Analysis): the views of
// host_views.h and device_views.h, memory, modules and recommendations. Ranks: ranks.h.
#pragma once

#include <cstdint>
#include <iterator>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "torch2pprof/device_views.h"
#include "torch2pprof/events.h"
#include "torch2pprof/host_views.h"

namespace torch2pprof {

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

// Allocated bytes by the code that allocated them over time (as torch's _memory_viz
// "Active Memory Timeline" stacks them): one series per site, parallel to a timeline
// (SnapshotDevice::timeline, MemoryRow::timeline), each point the site's bytes where the
// stretch's total is highest, so that the series add up to the timeline's bytes there.
struct SiteSeries {
  std::string site;  // a snapshot: as SnapshotSite names it; a trace: the operator; or the constants below
  std::vector<std::string> stack;  // a snapshot: its largest allocation's stack, innermost first, frames as code
  std::vector<int64_t> bytes;      // by timeline point
  int64_t peak_bytes = 0;          // at the device's peak
};
inline constexpr const char kOtherSites[] = "[other sites]";
inline constexpr const char kBeforeWindow[] = "[allocated before the window]";  // a snapshot
inline constexpr const char kBeforeTrace[] = "[allocated before the trace]";    // a trace
inline constexpr size_t kSiteSeries = 12;  // sites with a series of their own, at most

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
  // By the operator that allocated (top_operators' names): the kSiteSeries holding most at
  // the peak, the others, what was allocated before the trace; parallel to timeline, each
  // bucket at its highest total (max_bytes).
  std::vector<SiteSeries> site_timeline;
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

// A name and the time it holds: the evidence a finding lists, largest first.
struct NamedTime {
  std::string name;
  int64_t ns = 0;
};

// What the trace already does and what its GPU can, so that no finding suggests a remedy
// in use or one the hardware lacks.
struct TraceContext {
  bool compiled = false;          // torch.compile: CompiledFunction, Torch-Compiled Region, CompiledFxGraph
  uint64_t compiled_regions = 0;  // "Torch-Compiled Region" spans: one per compiled graph run
  bool cuda_graphs = false;       // graph launches (cudaGraphLaunch, cuGraphLaunch, hipGraphLaunch)
  bool low_precision = false;     // kernels in FP16 or BF16 (autocast or a half model)
  bool pinned = false;            // copies from or to pinned memory
  bool workers = false;           // a DataLoader with worker processes (_MultiProcessingDataLoaderIter)
  int compute_major = -1, compute_minor = -1;  // the devices' lowest compute capability; -1 unknown
  std::string gpu;                             // its name
  // A generation loop: the top module's forward runs kMinTokens or more times a step with
  // no backward in the trace (a token each); 0 otherwise.
  uint64_t tokens_per_step = 0;
  std::string token_module;  // that module: "GPT2LMHeadModel_0"
};
inline constexpr uint64_t kMinTokens = 4;

// The stream that waited longest for the host (at least 20% of the steps), and what the
// launching thread did in those gaps: the finding for the largest activity says so.
struct HostWaitEvidence {
  std::string device, stream;
  int64_t ns = 0;
  std::vector<NamedTime> activity;  // the host's activities in the gaps, up to 4
  std::vector<NamedTime> code;      // where the largest ran, up to 2
};

// Every finding analyze makes about one trace, in the order of kFindingIds. A new finding
// is a value here, its id there, the rule that decides it (analysis/advice.cc) and its
// title and sentence (a row of report/recommendation_text.cc's table, which fails to
// compile without one).
enum class Finding : uint8_t {
  kPageableCopies,
  kSynchronizations,
  kTensorCores,
  kLaunchBound,
  kHostBound,
  kFusedOptimizer,
  kDataLoader,
  kSleep,
  kWarmup,
  kFsdpSingleRank,
  kCommunicationWait,
  kThreadWait,
  kGlooCuda,
  kCommunication,
  kWithStack,
  kCount
};
// Each finding's id: the stable key of JSON, CSV and summaries, by Finding.
inline constexpr std::string_view kFindingIds[] = {
    "pageable_copies",    "synchronizations", "tensor_cores", "launch_bound",  "host_bound",
    "fused_optimizer",    "dataloader",       "sleep",        "warmup",        "fsdp_single_rank",
    "communication_wait", "thread_wait",      "gloo_cuda",    "communication", "with_stack"};
static_assert(std::size(kFindingIds) == static_cast<size_t>(Finding::kCount));
inline std::string_view FindingId(Finding f) { return kFindingIds[static_cast<size_t>(f)]; }
// The finding with that id; Finding::kCount where none has it (a newer writer's summary).
inline Finding FindingOf(std::string_view id) {
  for (size_t i = 0; i < std::size(kFindingIds); ++i) {
    if (kFindingIds[i] == id) return static_cast<Finding>(i);
  }
  return Finding::kCount;
}

// A finding of one trace: the evidence its sentence is written from (report.h's
// RecommendationText writes it, with the Analysis's views: copies, synchronizations,
// launches, steps, context). docs/reference.md, "Recommendations", has each rule.
struct Recommendation {
  Finding finding = Finding::kWithStack;
  std::string_view id() const { return FindingId(finding); }  // its stable key: "dataloader"
  // What acting on it saves a step (the mean over the analysed steps): the steps' dependency
  // graph replayed without the cause (`what_if`) against the graph replayed as recorded.
  // 0: a finding that explains (its cause_ns) with no change to simulate. Recommendations
  // come by it, largest first.
  int64_t saving_ns = 0;
  std::string what_if;                   // the change simulated: "pinned", "no_sync", ... ("": none)
  std::string cause;                     // what the trace shows the code doing: "pageable_copy", "sleep", ...
  int64_t cause_ns = 0;                  // the critical-path time its causes hold, a step
  int64_t launch_ns = 0, python_ns = 0;  // launch_bound: launch overhead, Python with no operator
  // communication_wait: the collectives' bus bandwidth (GB/s), all of them together, and
  // the link's as they show it (the best of a message size; collectives.cc).
  double bus_gb_per_s = 0, link_gb_per_s = 0;
  std::vector<NamedTime> names;        // what holds that time (operators, kernels), up to 3
  std::vector<NamedTime> code;         // where it ran (Python lines, else operators), up to 3
  std::vector<NamedTime> waited;       // thread_wait: the threads waited for, and the code they ran then
  std::vector<NamedTime> waited_code;  // (each up to 3, a step)
  bool explains_wait = false;          // it explains `wait`, the stream's wait for the host
  HostWaitEvidence wait;
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
  // A differential graph (compare): `total` is the new run's, this the base run's (by
  // type, then node; frames matched by name from the root). Empty for one run.
  std::vector<std::vector<int64_t>> base;
  uint64_t folded = 0;  // nodes folded into their parents
  double fold_share = 0;
  bool empty() const { return parent.size() <= 1; }
};

// One step drawn as a timeline (the HTML report's): its events as bars on their lanes,
// its critical path over them, and each gap on a device stream with its cause. Bounded:
// events too short to see at the page's closest zoom are drawn merged, one bar that
// counts them; analyze --timeline writes them all.
struct TimelineLane {
  std::string name;  // "thread 4821 (python)", "cuda:0 stream 7"
  bool device = false;
  uint32_t depth = 0;  // nesting levels drawn
};
struct TimelineBar {
  int64_t start_ns = 0, end_ns = 0;  // from the step's start, clipped to the step
  uint32_t lane = 0, depth = 0;      // depth 0: outermost
  uint32_t name = 0;                 // index into StepTimeline::names
  uint32_t count = 1;                // more than 1: that many events merged (name: the longest's)
};
struct TimelineSpan {
  int64_t start_ns = 0, end_ns = 0;  // from the step's start
  uint32_t lane = 0;
  uint32_t kind = 0;   // critical: the Bound; gap: the IdleCause
  uint32_t name = 0;   // critical: the event; gap: the event the critical path was on meanwhile (0: none)
  uint32_t count = 1;  // critical: stretches merged into this one (too short to draw)
};
// Why a stream sat idle (IdleRow's rule, decided once by IdleCauseOf).
enum class IdleCause : uint8_t { kHostWait, kKernelWait, kOther };
inline constexpr const char* kIdleCauseNames[] = {"host wait", "kernel wait", "other"};
struct StepTimeline {
  std::string step;       // "ProfilerStep#7"
  int64_t start_ns = 0;   // the step's start, on the trace's clock
  int64_t length_ns = 0;  // its time (StepRow::total_ns)
  std::vector<TimelineLane> lanes;
  std::vector<std::string> names;      // [0] is ""
  std::vector<TimelineBar> bars;       // by lane, depth, start
  std::vector<TimelineSpan> critical;  // the critical path, in time order, tiling the step
  std::vector<TimelineSpan> gaps;      // device streams' idle stretches between their work
  uint64_t events = 0, merged = 0;     // events in the step; of them, drawn merged into a bar that counts them
  uint64_t lanes_left_out = 0;         // lanes with events in the step not drawn (past 256: the fewest events)
};

// The findings' changes replayed together on every analysed step's graph: what the steps
// would take with all of them, and what remains.
struct WhatIfTotal {
  uint64_t steps = 0;
  int64_t step_ns = 0;      // a step as the graph replays it unchanged (the mean)
  int64_t together_ns = 0;  // a step with every finding's change applied (the mean)
  int64_t device_ns = 0;    // of which the device's own work (its union, the mean)
  uint32_t changes = 0;     // how many changes
};

// What analyze finds in one trace: the views that read only the events (EventViews,
// device_views.h), and the rest here.
struct Analysis : EventViews {
  TraceOverview trace;
  std::vector<CategoryRow> categories;  // by self time
  std::vector<StepRow> steps;
  bool whole_trace_step = false;            // no ProfilerStep: one step over the trace
  std::vector<CriticalStep> critical_path;  // by step, parallel to steps
  std::vector<CriticalItem> critical_top;   // over all steps: the events holding most, at most 20
  std::vector<std::string> critical_names;  // CriticalMost's names and code, each once; [0] is ""
  std::vector<OperatorRow> operators;       // by host total
  std::vector<KernelRow> kernels;           // by total
  int64_t kernel_total_ns = 0;              // summed kernel durations
  std::vector<GpuRow> gpu;
  std::vector<KernelOpRow> kernels_by_operator;  // by total
  TensorCoreUse tensor_cores;
  std::vector<SyncRow> synchronizations;  // within the analysed steps, by total
  std::vector<MemoryRow> memory;
  // Depth first, a module's children by device total (host total in a trace without device time).
  std::vector<ModuleNode> modules;
  std::vector<ModuleClassRow> module_classes;       // by device self (host self without device time)
  std::vector<PythonFunctionRow> python_functions;  // by host self
  TraceContext context;                             // what the trace already does, read by the recommendations
  std::vector<Recommendation> recommendations;
  WhatIfTotal what_if;
  // convert's profile as a flame graph: device time, the critical path, host work and
  // memory in use at the peak, each under its stacks (AnalyzeOptions::flame_graph).
  FlameGraph flame;
  // The slowest analysed steps as timelines, slowest first (AnalyzeOptions::timeline_steps).
  std::vector<StepTimeline> timelines;
  // Sums that reached the largest 64-bit value and were held there, where a hostile
  // trace's durations or sizes add up past it (analyze warns).
  uint64_t saturated = 0;
};

}  // namespace torch2pprof
