// analyze's views of the host side and the steps, as plain numbers in nanoseconds: the
// trace's lanes, categories, steps with their parts and critical path, operators.
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
// The same in plain words, as the reports say what bounds a step (HTA's name beside).
inline constexpr const char* kBoundWords[kBounds] = {"gaps between kernels", "launches",     "data loading", "the host",
                                                     "device compute",       "communication"};

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
// The event holding most of one step's critical path. Its name and code are indices into
// Analysis::critical_names, each held once however many steps share it (an operator with
// a 1 MiB name spanning 2,000 steps was 2 GiB of copies).
// A name written once a step is cut at kStepNameBytes (at a character's start, then "…"),
// so that the per-step lists of every format stay linear in the trace however long one
// name is; the operator, kernel and critical-path top tables keep whole names.
struct CriticalMost {
  static constexpr size_t kStepNameBytes = 256;
  uint32_t name = 0, where = 0;  // 0: ""
  Bound bound = Bound::kCpu;
  int64_t ns = 0;
};

struct CriticalStep {
  std::string step;
  int64_t length_ns = 0;
  int64_t bound_ns[kBounds] = {};
  int64_t copy_ns = 0;  // of gpu_compute_bound: device copies and sets (HTA counts them as compute)
  CriticalMost most;    // the event holding most of it (ns 0: none)
  // The category holding most of the step.
  Bound bound_by() const;
  // What bounds it in plain words: kBoundWords, with "device copies" for a
  // gpu_compute_bound step whose device time is mostly copies.
  const char* bound_words() const;
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

}  // namespace torch2pprof
