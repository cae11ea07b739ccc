// The model stage: what the loaded trace means, decided once for every output — roles,
// steps, launches, devices, forward/backward links and the memory timeline — as plain data.
//
// A stage header: for tools that read traces themselves. Unlike torch2pprof.h and the
// headers it includes, it carries no stability promise: it changes with the stages.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "torch2pprof/stages/trace.h"

namespace torch2pprof {

// Facts about an event name, worked out once per name.
enum NameFlag : uint8_t {
  kStepName = 1,           // ProfilerStep#N
  kDataLoaderName = 2,     // enumerate(DataLoader)#....__next__, enumerate(DataPipe)#...
  kCommName = 4,           // nccl:/gloo: collectives (all_reduce, broadcast, ...)
  kNcclName = 8,           // contains "nccl" in any case: communication kernels are found by name
  kWrapperName = 16,       // Optimizer.*, DataParallel.forward, DistributedDataParallel.forward
  kBackwardNodeName = 32,  // autograd::engine::evaluate_function: Node, a node the autograd engine runs
  kRunBackwardName = 64,   // the engine's run_backward, on the thread that called backward()
};
uint8_t NameFlags(std::string_view name);
// N of "ProfilerStep#N", or -1.
int64_t StepNumber(std::string_view name);

// A lane as the outputs see it.
struct LaneRole {
  int32_t process = 0;      // pids numbered in order of first appearance; steps are per process
  bool device = false;      // a device stream: it has device work or device annotations
  int64_t device_id = -1;   // args.device of its work, else its pid when that is a number
  std::string device_name;  // "cuda:0", "mtia:17"; empty for host lanes
  // It calls run_backward and runs autograd nodes, and no other thread of its process
  // runs any: the engine ran the backward on the thread that called backward() (a
  // CPU-only backward). Its run_backward is then the engine's own time, no wait (Waits).
  bool runs_own_backward = false;
};

// A profiler step: a host-side ProfilerStep#N (cpu_op or user_annotation). Its window
// [start_ns, end_ns) holds the step's time on every thread of its process.
struct Step {
  int64_t number = 0;
  uint32_t event = 0;  // the ProfilerStep interval
  int32_t process = 0;
  int64_t start_ns = 0, end_ns = 0;
};

// Where device work (or a device annotation) was launched from.
struct Launch {
  static constexpr uint32_t kNoEvent = UINT32_MAX;
  uint32_t device_event = 0;  // event number (EventAt) of the device work
  uint32_t host_event = 0;    // the launching host event (runtime call; for a device annotation its host
                              // annotation), or kNoEvent: a flow start outside any runtime call
  uint32_t lane = 0;          // the lane it was launched from
  int64_t ts_ns = 0;          // when: the host event's start, or the flow start
};

// A backward node (with its evaluate_function wrapper: the outermost event of the
// autograd thread's subtree) and the forward op that created it.
struct BackwardLink {
  uint32_t backward = 0;  // interval: the root of the backward subtree
  uint32_t forward = 0;   // interval: the forward op
  bool by_flow = false;   // found by a fwdbwd flow (else by Sequence number)
};

// One device's [memory] events in time order, and its peak, defined once.
struct MemoryTimeline {
  int32_t device_type = -1, device_id = -1;
  std::string device;            // "cpu", "cuda:0", ...
  std::vector<uint32_t> events;  // indexes into Trace::memory, by time (file order at equal times)
  uint64_t allocations = 0, frees = 0;
  int64_t allocated_bytes = 0, freed_bytes = 0;
  bool from_totals = false;  // levels are "Total Allocated" (else the running sum of Bytes)
  int64_t peak_bytes = 0;    // the highest level; its first occurrence is the peak
  size_t peak = 0;           // position in events of the peak
  int64_t peak_ns = 0;
  std::vector<uint32_t> live_at_peak;  // allocations (Trace::memory) live at the peak, file order
  int64_t live_at_peak_bytes = 0;      // their bytes
  // Allocated before the trace began and still live at the peak: peak_bytes minus what
  // the trace's own allocations hold there (0 without Total Allocated).
  int64_t before_trace_bytes = 0;
  uint64_t saturated = 0;  // byte sums that reached the 64-bit limit and were held there
};

// A step written again on a device stream (torch >= 2.0: ProfilerStep#N as a
// gpu_user_annotation), tied to its host step by External id: the step of device work
// that has no launch.
struct DeviceStepSpan {
  uint32_t lane = 0;
  int64_t start_ns = 0, end_ns = 0;
  uint32_t step = 0;  // index into TraceModel::steps
};

struct TraceModel {
  // The trace's time: the first start and the last end of its intervals (of its [memory]
  // events, in a trace of those only); start_ns > end_ns when it has neither.
  int64_t start_ns = INT64_MAX, end_ns = INT64_MIN;
  // The header's deviceProperties, each named by DeviceName as its streams are.
  std::vector<DeviceInfo> devices;
  std::vector<Role> category_role;           // by string id; valid for the categories of events
  std::vector<uint8_t> name_flags;           // NameFlag bits by string id; valid for the names of events
  std::vector<LaneRole> lanes;               // parallel to Trace::lanes
  std::vector<Step> steps;                   // by start, then file order; within a process they never overlap
  uint64_t steps_cut = 0;                    // steps that ran past the next step's start, cut there
  std::vector<Launch> launches;              // by device_event; device work with no launch found has none
  std::vector<BackwardLink> backward;        // by backward
  std::vector<MemoryTimeline> memory;        // by (device_type, device_id)
  std::vector<DeviceStepSpan> device_steps;  // by lane, then start
  // Per process: indexes into steps by start, and the running maximum of their ends.
  struct ProcessSteps {
    std::vector<uint32_t> steps;
    std::vector<int64_t> max_end;
  };
  std::vector<ProcessSteps> process_steps;

  Role RoleOf(const Interval& iv) const { return category_role[iv.cat]; }
  bool Has(const Interval& iv, NameFlag f) const { return (name_flags[iv.name] & f) != 0; }
  // Whether an event whose name is a blocking wait (IsBlockingWaitEvent) waits for another
  // thread here: every one but run_backward on a thread that runs its nodes itself.
  bool Waits(const Interval& iv, bool blocking_wait_name) const {
    return blocking_wait_name && !(Has(iv, kRunBackwardName) && lanes[iv.lane].runs_own_backward);
  }
  // A host-side ProfilerStep#N event.
  bool IsStep(const Interval& iv) const;
  // The step whose window holds instant t on a lane, or nullptr (device lanes have none).
  const Step* StepAt(uint32_t lane, int64_t t) const;
  // The launch of device event e (event number), or nullptr.
  const Launch* LaunchOf(uint32_t e) const;
  // The step a launch happened in, or nullptr.
  const Step* StepOf(const Launch& l) const { return StepAt(l.lane, l.ts_ns); }
  // The step of an event on a device stream (event number: device work, a device
  // annotation, anything on the stream), decided here for every output: the step its
  // launch happened in; without a launch, the step whose device-side ProfilerStep span
  // holds its start; else none.
  const Step* DeviceStepOf(uint32_t e, const Interval& iv) const;
  // By lane: sorted instants where a step of its process begins or ends (none on device
  // lanes). BuildOptions::cuts: the stack builder splits pieces there, so that each lies in one step.
  std::vector<std::vector<int64_t>> StepBoundaries() const;
};

// Runtime and driver calls that block the host until the device has done its work
// (cudaStreamSynchronize, cudaDeviceSynchronize, cudaEventSynchronize, cudaMemcpy and their
// driver and HIP names): analyze's synchronizations and the critical path's host waits.
bool IsSyncCall(std::string_view name);
// A runtime call that replays a captured graph (cudaGraphLaunch, cuGraphLaunch,
// hipGraphLaunch): the trace uses CUDA graphs already.
bool IsGraphLaunchCall(std::string_view name);

// A device's name, the one rule for every output ("cuda:0", "mtia:17"; the type alone
// without an id): streams, memory timelines and deviceProperties are named by it, so that
// the three join. torch names ROCm devices cuda, and so does this.
std::string DeviceName(std::string_view type, int64_t id);

// Builds the model of a loaded trace. External ids of annotations are read from
// Interval::link (see trace.h); everything else from the trace's side tables. With
// threads > 1 its independent parts run side by side (on two threads); the model is the same.
TraceModel BuildModel(const Trace& trace, int threads = 1);

// A device's allocated bytes after each of its timeline's events (parallel to tl.events):
// "Total Allocated" where the event has it, else the running sum of Bytes.
std::vector<int64_t> MemoryLevels(const Trace& trace, const MemoryTimeline& tl);

}  // namespace torch2pprof
