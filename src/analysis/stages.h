// analyze's stages: each takes what it reads as arguments and returns its part of the
// Analysis; analyzer.cc wires them (steps on a thread of its own).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "analysis/analyzer.h"
#include "analysis/events.h"
#include "analysis/spans.h"
#include "analysis/timeline_trace.h"
#include "model/lane_builder.h"
#include "model/step_windows.h"
#include "model/what_if.h"

namespace torch2pprof {
struct StepCriticalPath;
}

namespace torch2pprof::analysis {

// Overview of the trace and self time per category, from the lanes' pieces.
struct OverviewResult {
  TraceOverview overview;
  std::vector<CategoryRow> categories;
  uint64_t saturated = 0;  // sums held at the 64-bit limit
};
OverviewResult Overview(const Events& ev, const std::vector<LaneStacks>& lanes);

// The module tree, its classes and the Python functions, from convert's call tree over
// the lanes' pieces.
struct ModulesResult {
  std::vector<ModuleNode> tree;
  std::vector<ModuleClassRow> classes;
  std::vector<PythonFunctionRow> python;
};
ModulesResult Modules(const Events& ev, const std::vector<LaneStacks>& lanes, Executor& ex);

// Which steps are analysed, for the stages that count by step after Steps.
struct StepScope {
  size_t steps = 0;          // analysed: the first this many of the model's steps
  bool whole_trace = false;  // no ProfilerStep: one step, the host-side work's span
  int64_t host_start = 0, host_end = 0;
};
// The analysed step (an index into StepsResult::rows) of device event e, or -1: the
// model's rule (DeviceStepOf); without steps, work launched inside the host-side span.
int64_t AnalysedDeviceStep(const Events& ev, size_t e, const StepScope& scope);
// Which steps are analysed, from the windows alone: known before the step breakdown, so
// the views that run beside it count per step by the same rule.
StepScope ScopeOf(const StepWindows& windows);
// The same for an instant on a host lane.
int64_t AnalysedHostStep(const Events& ev, uint32_t lane, int64_t t, const StepScope& scope);

// Why a stream sat idle before device event e, since its work before ended at idle_from
// (IdleRow's rule, HTA's): the idle time table and the timeline's gaps both ask this.
inline IdleCause IdleCauseOf(const TraceModel& m, size_t e, int64_t idle_from, int64_t start) {
  const Launch* l = m.LaunchOf(static_cast<uint32_t>(e));
  if (l && l->ts_ns > idle_from) return IdleCause::kHostWait;
  return start - idle_from < kConsecutiveKernelDelayNs ? IdleCause::kKernelWait : IdleCause::kOther;
}

// The critical path's time by the cause a finding names (Recommend): every nanosecond of
// the analysed steps goes to one, so findings that claim causes never share a microsecond.
enum Cause : int {
  kGpuWork,         // device work no finding claims: kernels, pinned copies
  kTensorCores,     // matmul and convolution kernels in FP32, off the Tensor Cores (IsFp32MatmulKernel)
  kPageableCopy,    // copies to or from pageable memory, and the host's synchronous copy calls
  kCommunication,   // communication kernels
  kLaunchOverhead,  // device work waiting for its launch, gaps between kernels, the host's launch calls
  kPythonOverhead,  // the host in Python with no operator open, or with nothing open
  kHostOps,         // the host in operators (CPU exec)
  kSyncWait,        // the host in synchronizations (their own time: the device's is its work)
  kDataLoaderWait,  // the host in a DataLoader's next()
  kSleep,           // the host in time.sleep
  kThreadWait,      // the host in a blocking wait for another thread or process (join, lock, queue, pipe)
  kInit,            // one-time initialisation: a runtime call of kInitCallNs or more
  kOptimizer,       // the host in an optimizer's step (Optimizer.step#...)
  kHostCompute,     // no device: the host computing in an operator (kHostComputeNs of own time or more)
  kFsdp,            // FSDP's own work (FSDP::/fsdp:: events and what they hold) where the world has one rank
  kCauses
};

// A runtime call this long that neither synchronizes nor copies starts something up (the
// CUDA context, a library handle, a module load): one-time work, not launch overhead.
inline constexpr int64_t kInitCallNs = 100 * 1000 * 1000;

struct CauseTime {
  int64_t ns = 0;
  std::map<std::string, int64_t> names;  // event (frame name) -> ns
  std::map<std::string, int64_t> where;  // code: innermost Python frame, else operator -> ns
};

// A device stream's waits for the host within the analysed steps, and what the launching
// thread was doing over them, by the cause it would be (host causes only).
struct HostWait {
  std::string device, stream;
  int64_t ns = 0;
  std::array<int64_t, kCauses> by_cause{};
  std::array<std::map<std::string, int64_t>, kCauses> where;
};

struct CriticalResult {
  std::vector<CriticalStep> steps;  // parallel to the analysed steps
  std::vector<std::string> names;   // CriticalStep::most's names, each once ([0] is "")
  std::vector<CriticalItem> top;
  std::array<CauseTime, kCauses> causes;
  int64_t total_ns = 0;                 // the steps' time, all of it on the paths
  int64_t device_ns = 0;                // the device's time on the paths
  std::vector<HostWait> host_waits;     // by time, most first
  std::vector<StepTimeline> timelines;  // the slowest steps, slowest first
  // The what-ifs (model/what_if.h) over the analysed steps: each change alone, and those
  // that save enough (kWhatIfShare of the steps) applied together: the findings' changes.
  struct WhatIfs {
    uint32_t simulated = 0;                     // changes that fit the trace (WhatIf bits)
    std::array<int64_t, kWhatIfs> saving_ns{};  // each alone, summed over the steps
    uint32_t together = 0;                      // the changes applied together
    int64_t replay_ns = 0;                      // the steps replayed unchanged
    int64_t together_ns = 0;                    // the steps replayed with `together`
    int64_t together_device_ns = 0;             // the device's work in those (its union)
    bool foreach_optimizer = false;             // optimizer steps that are not fused
    // What the steps' blocking waits waited for: the threads, and the code they ran then.
    std::map<std::string, int64_t> waited_threads, waited_code;
  } what_ifs;
};
// A change saves enough to be a finding at this share of the steps' time.
inline constexpr double kWhatIfShare = 0.02;
// Reads the lanes' pieces: run before they are freed. The steps are walked on the
// executor's threads; the result never depends on how many.
// With timeline_steps, the slowest that many steps as timelines too.
// With paths, every step's critical path kept there.
CriticalResult Critical(const Events& ev, const std::vector<LaneStacks>& lanes, const StepWindows& windows,
                        Executor& ex, size_t timeline_steps = 0, CriticalPaths* paths = nullptr);

// The slowest `n` analysed steps as timelines (Analysis::timelines): made once, then
// asked for each of those steps with its critical path as the walks reach it (from any
// thread: Of reads only).
class Timelines {
 public:
  Timelines(const Events& ev, const std::vector<LaneStacks>& lanes, const StepWindows& windows, size_t n);
  // Where step's timeline goes among the slowest (0: the slowest), -1: none.
  int Slot(size_t step) const;
  size_t count() const;
  // At most max_bars bars and gaps each, however many events the step has.
  StepTimeline Of(size_t step, const StepCriticalPath& path, size_t max_bars = 20000) const;

 private:
  const Events& ev_;
  const std::vector<LaneStacks>& lanes_;
  const StepWindows& windows_;
  std::vector<int> slot_;
  std::vector<std::vector<uint32_t>> depth_;        // by LaneStacks, by piece
  std::map<uint32_t, std::vector<uint32_t>> work_;  // a stream's device work, by start
};

// Steps and their breakdown (tb-semantics §3, §4).
struct StepsResult {
  StepWindows windows;  // the analysed steps' time (model/step_windows.h)
  std::vector<StepRow> rows;
  bool whole_trace = false;                  // no ProfilerStep: one step over the trace
  std::pair<int64_t, int64_t> window{0, 0};  // first step start to last step end
};
StepsResult Steps(const Events& ev, StepWindows windows, Executor& ex);

// The operator table (§5), and for each [memory] event the name id of the operator
// open on its thread when it happened (kNoOwner: none).
inline constexpr uint32_t kNoOwner = UINT32_MAX;
struct OperatorsResult {
  std::vector<OperatorRow> rows;
  std::vector<uint32_t> owners;
  // Each runtime call an operator claimed (its device time is the operator's device
  // self), with the operator's name id, by call: the launching operator of device work.
  std::vector<std::pair<uint32_t, uint32_t>> launchers;
  uint64_t saturated = 0;  // sums held at the 64-bit limit
};
// per_step (null: none): fill the rows' per-step totals, by the analysed step of each
// call (AnalysedHostStep), the rule every per-step value follows.
// Lanes side by side on the executor's threads; the rows never depend on how many.
OperatorsResult Operators(const Events& ev, bool group_by_shape, const StepScope* per_step, Executor& ex);

// Kernels by name (§6), and their summed duration; per-step totals as Operators'
// (AnalysedDeviceStep).
std::vector<KernelRow> Kernels(const Events& ev, int64_t* total_ns, const StepScope* per_step, uint64_t* saturated);

// Per device: busy and kernel time, and kernel time within the steps' window (§7).
std::vector<GpuRow> Gpus(const Events& ev, const std::vector<DeviceInfo>& devices, std::pair<int64_t, int64_t> window);

// Per device stream: its idle time by cause (IdleRow), in all and in the analysed steps.
std::vector<IdleRow> IdleTime(const Events& ev, const StepScope& scope);

// Per device: its copies and sets by kind (CopyRow).
std::vector<CopyRow> Copies(const Events& ev, const StepScope& scope);

// Whether a kernel runs on Tensor Cores, by its name: torch-tb-profiler's list and the
// names of later GPUs (docs/reference.md).
bool IsTensorCoreKernel(std::string_view name);
// Whether an operator runs in lower precision under autocast, so that its kernels can use
// Tensor Cores (torch-tb-profiler's allowlist, docs/reference.md).
bool IsTensorCoreEligible(std::string_view op);

// Whether a kernel is a matmul or convolution in FP32 off the Tensor Cores: its launching
// operator is one autocast lowers (IsTensorCoreEligible) where it has one, else its name
// says GEMM or convolution (a CUDA graph's replay has no launching operator). The
// critical path's kTensorCores and the what-ifs' kTagFp32Matmul both read it (Reader).
bool IsFp32MatmulKernel(std::string_view kernel, std::string_view launching_op);

// The name id of the operator that claimed runtime call e (OperatorsResult::launchers), or
// UINT32_MAX: the launching operator of device work, decided by the operator table.
uint32_t OperatorOf(const std::vector<std::pair<uint32_t, uint32_t>>& launchers, uint32_t e);

// Device work by launching operator and name, and the Tensor Core share overall and per
// operator, from the operators' launchers (OperatorsResult).
struct KernelOpsResult {
  std::vector<KernelOpRow> rows;
  TensorCoreUse tensor_cores;
};
KernelOpsResult KernelsByOperator(const Events& ev, const std::vector<std::pair<uint32_t, uint32_t>>& launchers);

// Collectives by message from the device kernels that record theirs (CollectiveSizeRow).
std::vector<CollectiveSizeRow> CollectiveSizes(const Events& ev);
// A collective's message as nccl-tests sizes it (bytes -1: unknown dtype or size), and
// its bus factor: 2(n-1)/n for all-reduce, (n-1)/n for all-gather, reduce-scatter and
// all-to-all, 1 for the rest.
struct Message {
  int64_t bytes = -1;
  double bus_factor = 1;
};
Message MessageOf(const Trace& t, const CollectiveArgs& c);
// The link's bus bandwidth as the trace shows it (GB/s, = bytes/ns): the best of its
// message sizes of 1 MiB or more, else of any; -1 where none of two ranks or more is known.
double LinkBusBandwidth(const std::vector<CollectiveSizeRow>& rows);

// Time per record_function annotation, host and device, backward included (AnnotationRow).
std::vector<AnnotationRow> Annotations(const Events& ev);

// Host calls within the analysed steps that wait for the device, by call and launching
// operator (SyncRow).
std::vector<SyncRow> Synchronizations(const Events& ev, const std::vector<std::pair<uint32_t, uint32_t>>& launchers,
                                      const StepScope& scope);

// The launches of device work and their delays (LaunchStats).
LaunchStats KernelLaunches(const Events& ev, const StepScope& scope);

// Per device stream: its launch queue (QueueRow).
std::vector<QueueRow> QueueLength(const Events& ev);

// Per device: its time by the kernel types that ran (KernelTypeRow).
std::vector<KernelTypeRow> KernelTypes(const Events& ev);
// Per device: its span split into computation, other work and idle, and its
// communication's overlap with computation (TemporalRow).
std::vector<TemporalRow> TemporalBreakdown(const Events& ev);
// TemporalRow's rule over a set of device work (its device left empty): all of it, its
// computation kernels and its communication kernels, each as spans in any order.
TemporalRow SplitDeviceTime(Spans all, Spans compute, Spans comm);

// Per device: the model's memory timeline and the operators that allocated most (§8).
std::vector<MemoryRow> Memory(const Events& ev, const std::vector<uint32_t>& owners);

// The devices' lowest compute capability ("9.0" in deviceProperties) and that GPU's name;
// -1 where none says.
struct Compute {
  int major = -1, minor = -1;
  std::string gpu;
};
Compute LowestCompute(const std::vector<DeviceInfo>& devices);

// The views that read only the events and which steps are analysed (nothing another view
// makes): a row each, run side by side by Analyze once the step rows are taken. A new view
// of this kind is its row type and EventViews field (device_views.h), its function above
// and its row here, and its report entry (report/analysis_report.cc's kViews).
struct EventView {
  void (*run)(Analysis& a, const Events& ev, const StepScope& scope);
};
template <auto Field, auto Of>
void RunEventView(Analysis& a, const Events& ev, const StepScope& scope) {
  if constexpr (std::is_invocable_v<decltype(Of), const Events&, const StepScope&>) {
    a.*Field = Of(ev, scope);
  } else {
    a.*Field = Of(ev);
  }
}
inline constexpr EventView kEventViews[] = {
    {RunEventView<&Analysis::annotations, Annotations>},
    {RunEventView<&Analysis::idle_time, IdleTime>},
    {RunEventView<&Analysis::queue_length, QueueLength>},
    {RunEventView<&Analysis::copies, Copies>},
    {RunEventView<&Analysis::collective_sizes, CollectiveSizes>},
    {RunEventView<&Analysis::kernel_launches, KernelLaunches>},
    {RunEventView<&Analysis::kernel_types, KernelTypes>},
    {RunEventView<&Analysis::temporal_breakdown, TemporalBreakdown>},
};

// What the trace already does (compiled, graphed, low precision, pinned, workers) and the
// devices' lowest compute capability: read from the views above (copies, devices).
TraceContext ContextOf(const Analysis& a, const Events& ev);
// Findings: a change that saves enough (its saving the replay's, CriticalResult::what_ifs)
// or a cause that explains enough, with the evidence of the causes on the critical paths,
// per step over the analysis's steps (a.critical_path). Their sentences: report.h's
// RecommendationText.
std::vector<Recommendation> Recommend(const Analysis& a, const CriticalResult& critical);
// The findings' changes together, per step over `steps` (WhatIfTotal).
WhatIfTotal TotalOf(const CriticalResult& critical, size_t steps);

}  // namespace torch2pprof::analysis
