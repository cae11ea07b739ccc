#include "model/build.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <unordered_map>

#include "base/executor.h"
#include "base/saturate.h"
#include "base/sorted_runs.h"
#include "model/backward.h"
#include "model/frame_names.h"
#include "model/launches.h"
#include "model/open_at.h"

namespace torch2pprof {
namespace {

constexpr uint32_t kNone = Launch::kNoEvent;

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool EndsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}
// Case-insensitive substring test without a lowered copy.
bool ContainsNoCase(std::string_view s, std::string_view lower_needle) {
  auto it = std::search(s.begin(), s.end(), lower_needle.begin(), lower_needle.end(),
                        [](char c, char n) { return std::tolower(static_cast<unsigned char>(c)) == n; });
  return it != s.end();
}

bool IsCommunicationName(std::string_view name) {
  for (std::string_view prefix : {"nccl:", "gloo:"}) {
    if (!StartsWith(name, prefix)) continue;
    std::string_view op = name.substr(prefix.size());
    for (std::string_view c : {"broadcast", "reduce", "all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                               "all_gather_into_tensor", "reduce_scatter_tensor", "send", "recv"}) {
      if (op == c) return true;
    }
  }
  return false;
}

// torch's DeviceType numbering, as [memory] events write it. HIP is named cuda, as torch
// names ROCm devices and as their streams are.
std::string DeviceTypeName(int32_t type) {
  static const char* const kTypes[] = {"cpu",  "cuda", "mkldnn", "opengl", "opencl", "ideep", "cuda",
                                       "fpga", "maia", "xla",    "vulkan", "metal",  "xpu",   "mps",
                                       "meta", "hpu",  "ve",     "lazy",   "ipu",    "mtia",  "privateuseone"};
  return type >= 0 && type < static_cast<int32_t>(std::size(kTypes)) ? kTypes[type]
                                                                     : "device_type_" + std::to_string(type);
}

bool ParseInt(const std::string& s, int64_t* out) {
  if (s.empty() || s.size() > 18) return false;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  int64_t v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = s[0] == '-' ? -v : v;
  return true;
}

void Classify(const Trace& t, TraceModel& m) {
  m.category_role.assign(t.strings.size(), Role::kOther);
  m.name_flags.assign(t.strings.size(), 0);
  std::vector<uint8_t> seen(t.strings.size(), 0);  // 1: as category, 2: as name
  for (size_t e = 0; e < EventCount(t); ++e) {
    const Interval& iv = EventAt(t, e);
    if (!(seen[iv.cat] & 1)) m.category_role[iv.cat] = RoleOfCategory(t.strings.Get(iv.cat)), seen[iv.cat] |= 1;
    if (!(seen[iv.name] & 2)) m.name_flags[iv.name] = NameFlags(t.strings.Get(iv.name)), seen[iv.name] |= 2;
  }
}

void ClassifyLanes(const Trace& t, TraceModel& m) {
  m.lanes.assign(t.lanes.size(), LaneRole{});
  std::unordered_map<std::string, int32_t> process_of;
  for (size_t l = 0; l < t.lanes.size(); ++l) {
    auto [it, added] = process_of.emplace(t.lanes[l].pid, static_cast<int32_t>(process_of.size()));
    m.lanes[l].process = it->second;
  }
  m.process_steps.assign(process_of.size(), {});
  std::vector<uint8_t> mtia(t.lanes.size(), 0);
  // Per lane: 1 it runs autograd nodes, 2 it calls run_backward; by process, the threads
  // that run nodes.
  std::vector<uint8_t> engine(t.lanes.size(), 0);
  std::vector<int32_t> node_lanes(process_of.size(), 0);
  for (size_t e = 0; e < EventCount(t); ++e) {
    const Interval& iv = EventAt(t, e);
    if (m.Has(iv, kBackwardNodeName) && !(engine[iv.lane] & 1)) {
      engine[iv.lane] |= 1;
      ++node_lanes[static_cast<size_t>(m.lanes[iv.lane].process)];
    }
    if (m.Has(iv, kRunBackwardName)) engine[iv.lane] |= 2;
    Role r = m.RoleOf(iv);
    if (!IsDeviceRole(r) && r != Role::kDeviceAnnotation) continue;
    m.lanes[iv.lane].device = true;
    if (ContainsNoCase(t.strings.Get(iv.cat), "mtia")) mtia[iv.lane] = 1;
  }
  for (size_t l = 0; l < t.lanes.size(); ++l) {
    LaneRole& lane = m.lanes[l];
    lane.runs_own_backward = engine[l] == 3 && node_lanes[static_cast<size_t>(lane.process)] == 1;
    if (!lane.device) continue;
    int64_t pid = -1;
    lane.device_id = t.lanes[l].device >= 0 ? t.lanes[l].device : ParseInt(t.lanes[l].pid, &pid) ? pid : -1;
    // MTIA's events say mtia in their category; every other device is named cuda.
    lane.device_name = DeviceName(mtia[l] ? "mtia" : "cuda", lane.device_id);
  }
}

// deviceProperties entries name no type: an id's type is that of the streams with that id.
void NameDevices(const Trace& t, TraceModel& m) {
  m.devices = ReadDeviceProperties(t.header);
  for (DeviceInfo& d : m.devices) {
    if (d.id < 0) continue;
    std::string_view type = "cuda";
    for (const LaneRole& lane : m.lanes) {
      if (lane.device && lane.device_id == d.id) {
        type = std::string_view(lane.device_name).substr(0, lane.device_name.find(':'));
        break;
      }
    }
    d.device = DeviceName(type, d.id);
  }
}

void FindSpan(const Trace& t, TraceModel& m) {
  for (const Interval& iv : t.intervals)
    m.start_ns = std::min(m.start_ns, iv.start_ns), m.end_ns = std::max(m.end_ns, iv.end_ns);
  if (m.start_ns > m.end_ns) {
    for (const MemoryEvent& e : t.memory)
      m.start_ns = std::min(m.start_ns, e.ts_ns), m.end_ns = std::max(m.end_ns, e.ts_ns);
  }
}

void FindSteps(const Trace& t, TraceModel& m) {
  for (uint32_t i = 0; i < t.intervals.size(); ++i) {
    const Interval& iv = t.intervals[i];
    if (!m.IsStep(iv) || m.lanes[iv.lane].device) continue;
    m.steps.push_back(Step{StepNumber(t.strings.Get(iv.name)), i, m.lanes[iv.lane].process, iv.start_ns, iv.end_ns});
  }
  std::stable_sort(m.steps.begin(), m.steps.end(),
                   [](const Step& a, const Step& b) { return a.start_ns < b.start_ns; });
  // A step ends where the next one of its process starts (docs/reference.md, "Steps that
  // overlap"): the profiler's steps follow one another, and nested or overlapping ones
  // would count an instant in several steps, give a step a negative time once re-timed,
  // and make every question "which step holds t" walk them all.
  std::vector<int64_t> last(m.process_steps.size(), -1);  // by process: its latest step so far
  for (uint32_t k = 0; k < m.steps.size(); ++k) {
    int64_t& prev = last[static_cast<size_t>(m.steps[k].process)];
    if (prev >= 0 && m.steps[static_cast<size_t>(prev)].end_ns > m.steps[k].start_ns) {
      m.steps[static_cast<size_t>(prev)].end_ns = m.steps[k].start_ns;
      ++m.steps_cut;
    }
    prev = k;
  }
  for (uint32_t k = 0; k < m.steps.size(); ++k) {
    auto& p = m.process_steps[static_cast<size_t>(m.steps[k].process)];
    p.max_end.push_back(std::max(p.max_end.empty() ? INT64_MIN : p.max_end.back(), m.steps[k].end_ns));
    p.steps.push_back(k);
  }
}

// The device-side copies of host steps: a device annotation named ProfilerStep#N whose
// launch (its host twin, by External id) is a step event.
std::vector<DeviceStepSpan> FindDeviceSteps(const Trace& t, const TraceModel& m) {
  std::vector<uint32_t> order(m.steps.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return m.steps[a].event < m.steps[b].event; });
  std::vector<DeviceStepSpan> out;
  for (const Launch& l : m.launches) {
    const Interval& iv = EventAt(t, l.device_event);
    if (m.RoleOf(iv) != Role::kDeviceAnnotation || !m.Has(iv, kStepName) || l.host_event == Launch::kNoEvent) continue;
    auto it = std::lower_bound(order.begin(), order.end(), l.host_event,
                               [&](uint32_t k, uint32_t e) { return m.steps[k].event < e; });
    if (it == order.end() || m.steps[*it].event != l.host_event) continue;
    out.push_back(DeviceStepSpan{iv.lane, iv.start_ns, iv.end_ns, *it});
  }
  std::sort(out.begin(), out.end(), [](const DeviceStepSpan& a, const DeviceStepSpan& b) {
    return a.lane != b.lane ? a.lane < b.lane : a.start_ns < b.start_ns;
  });
  return out;
}

std::vector<MemoryTimeline> BuildMemory(const Trace& t) {
  std::vector<MemoryTimeline> timelines;
  std::map<std::pair<int32_t, int32_t>, std::vector<uint32_t>> by_device;
  for (uint32_t i = 0; i < t.memory.size(); ++i)
    by_device[{t.memory[i].device_type, t.memory[i].device_id}].push_back(i);
  for (auto& [key, device_events] : by_device) {
    MemoryTimeline tl;
    tl.device_type = key.first;
    tl.device_id = key.second;
    tl.device = key.first == 0 ? "cpu" : DeviceName(DeviceTypeName(key.first), key.second);
    std::stable_sort(device_events.begin(), device_events.end(),
                     [&](uint32_t x, uint32_t y) { return t.memory[x].ts_ns < t.memory[y].ts_ns; });
    tl.events = std::move(device_events);
    std::vector<int64_t> levels = MemoryLevels(t, tl);
    int64_t peak = std::numeric_limits<int64_t>::min();
    for (size_t k = 0; k < tl.events.size(); ++k) {
      const MemoryEvent& e = t.memory[tl.events[k]];
      if (e.bytes > 0) ++tl.allocations, tl.allocated_bytes = SaturatingAdd(tl.allocated_bytes, e.bytes, &tl.saturated);
      if (e.bytes < 0) ++tl.frees, tl.freed_bytes = SaturatingSub(tl.freed_bytes, e.bytes, &tl.saturated);
      if (e.total_allocated >= 0) tl.from_totals = true;
      if (levels[k] > peak) peak = levels[k], tl.peak = k;
    }
    const std::vector<uint32_t>& events = tl.events;
    tl.peak_bytes = peak;
    tl.peak_ns = t.memory[events[tl.peak]].ts_ns;
    // What the trace's own allocations hold at the peak: frees matched by address;
    // an allocation without an address never ends.
    std::unordered_map<uint64_t, uint32_t> live;
    for (size_t k = 0; k <= tl.peak; ++k) {
      const MemoryEvent& e = t.memory[events[k]];
      if (e.bytes > 0 && !e.addr) {
        tl.live_at_peak.push_back(events[k]);
      } else if (e.bytes > 0) {
        live[e.addr] = events[k];
      } else if (e.bytes < 0 && e.addr) {
        live.erase(e.addr);
      }
    }
    for (const auto& [addr, i] : live) tl.live_at_peak.push_back(i);
    std::sort(tl.live_at_peak.begin(), tl.live_at_peak.end());
    for (uint32_t i : tl.live_at_peak)
      tl.live_at_peak_bytes = SaturatingAdd(tl.live_at_peak_bytes, t.memory[i].bytes, &tl.saturated);
    if (tl.from_totals) {
      tl.before_trace_bytes = std::max<int64_t>(0, SaturatingSub(tl.peak_bytes, tl.live_at_peak_bytes, &tl.saturated));
    }
    timelines.push_back(std::move(tl));
  }
  return timelines;
}

}  // namespace

std::vector<int64_t> MemoryLevels(const Trace& t, const MemoryTimeline& tl) {
  std::vector<int64_t> levels;
  levels.reserve(tl.events.size());
  int64_t running = 0;
  uint64_t saturated = 0;  // counted in BuildMemory's pass
  for (uint32_t i : tl.events) {
    const MemoryEvent& e = t.memory[i];
    running = SaturatingAdd(running, e.bytes, &saturated);
    levels.push_back(e.total_allocated >= 0 ? e.total_allocated : running);
  }
  return levels;
}

uint8_t NameFlags(std::string_view n) {
  uint8_t f = 0;
  if (StepNumber(n) >= 0) f |= kStepName;
  if ((StartsWith(n, "enumerate(DataLoader)#") && EndsWith(n, ".__next__")) || StartsWith(n, "enumerate(DataPipe)#"))
    f |= kDataLoaderName;
  if (IsCommunicationName(n)) f |= kCommName;
  if (ContainsNoCase(n, "nccl")) f |= kNcclName;
  if (StartsWith(n, "Optimizer.") || n == "DataParallel.forward" || n == "DistributedDataParallel.forward")
    f |= kWrapperName;
  if (StartsWith(n, kBackwardNodePrefix)) f |= kBackwardNodeName;
  if (StartsWith(n, kRunBackwardFrame.substr(0, kRunBackwardFrame.size() - 1)) &&
      FrameSystemName(n) == kRunBackwardFrame)
    f |= kRunBackwardName;
  return f;
}

int64_t StepNumber(std::string_view name) {
  constexpr std::string_view kPrefix = "ProfilerStep#";
  if (!StartsWith(name, kPrefix) || name.size() == kPrefix.size() || name.size() > kPrefix.size() + 18) return -1;
  int64_t n = 0;
  for (char c : name.substr(kPrefix.size())) {
    if (c < '0' || c > '9') return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

bool TraceModel::IsStep(const Interval& iv) const {
  Role r = RoleOf(iv);
  return (r == Role::kOperator || r == Role::kUserAnnotation) && Has(iv, kStepName);
}

const Step* TraceModel::StepAt(uint32_t lane, int64_t t) const {
  if (lanes[lane].device) return nullptr;
  const ProcessSteps& p = process_steps[static_cast<size_t>(lanes[lane].process)];
  // Steps rarely overlap; where they do, the latest one that started wins.
  size_t k = static_cast<size_t>(std::upper_bound(p.steps.begin(), p.steps.end(), t,
                                                  [&](int64_t x, uint32_t s) { return x < steps[s].start_ns; }) -
                                 p.steps.begin());
  while (k > 0 && p.max_end[k - 1] > t) {
    const Step& s = steps[p.steps[--k]];
    if (s.end_ns > t) return &s;
  }
  return nullptr;
}

const Launch* TraceModel::LaunchOf(uint32_t e) const {
  auto it = std::lower_bound(launches.begin(), launches.end(), e,
                             [](const Launch& l, uint32_t x) { return l.device_event < x; });
  return it != launches.end() && it->device_event == e ? &*it : nullptr;
}

const Step* TraceModel::DeviceStepOf(uint32_t e, const Interval& iv) const {
  if (const Launch* l = LaunchOf(e)) return StepOf(*l);
  // The span that started last at or before it on its lane (spans of one stream do not nest).
  auto it = std::upper_bound(device_steps.begin(), device_steps.end(), std::make_pair(iv.lane, iv.start_ns),
                             [](const std::pair<uint32_t, int64_t>& x, const DeviceStepSpan& s) {
                               return x.first != s.lane ? x.first < s.lane : x.second < s.start_ns;
                             });
  if (it == device_steps.begin()) return nullptr;
  --it;
  return it->lane == iv.lane && it->end_ns > iv.start_ns ? &steps[it->step] : nullptr;
}

std::vector<std::vector<int64_t>> TraceModel::StepBoundaries() const {
  std::vector<std::vector<int64_t>> by_process(process_steps.size());
  for (size_t p = 0; p < process_steps.size(); ++p) {
    auto& cuts = by_process[p];
    for (uint32_t k : process_steps[p].steps) cuts.push_back(steps[k].start_ns), cuts.push_back(steps[k].end_ns);
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  }
  std::vector<std::vector<int64_t>> out(lanes.size());
  for (size_t l = 0; l < lanes.size(); ++l) {
    if (!lanes[l].device) out[l] = by_process[static_cast<size_t>(lanes[l].process)];
  }
  return out;
}

bool IsSyncCall(std::string_view name) {
  static constexpr std::string_view kCalls[] = {
      "cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cudaMemcpy",
      "cuStreamSynchronize",   "cuCtxSynchronize",      "cuEventSynchronize",   "cuMemcpyDtoH_v2",
      "hipStreamSynchronize",  "hipDeviceSynchronize",  "hipEventSynchronize",  "hipMemcpy"};
  return std::find(std::begin(kCalls), std::end(kCalls), name) != std::end(kCalls);
}

bool IsGraphLaunchCall(std::string_view name) {
  return name == "cudaGraphLaunch" || name == "cuGraphLaunch" || name == "hipGraphLaunch";
}

std::string DeviceName(std::string_view type, int64_t id) {
  return id >= 0 ? std::string(type) + ":" + std::to_string(id) : std::string(type);
}

TraceModel BuildModel(const Trace& trace, int threads) {
  Executor ex(std::min(threads, 2));
  return BuildModel(trace, ex);
}

TraceModel BuildModel(const Trace& trace, Executor& ex) {
  TraceModel m;
  Classify(trace, m);
  ClassifyLanes(trace, m);
  NameDevices(trace, m);
  FindSpan(trace, m);
  FindSteps(trace, m);
  // Launches, backward links and memory read only the above: side by side. The backward
  // links cost the most (about half of the model on a with_stack trace).
  auto backward = Beside(ex, [&] { return FindBackward(trace, m); });
  std::vector<Launch> launches = FindLaunches(trace, m);
  std::vector<MemoryTimeline> memory = BuildMemory(trace);
  m.backward = backward.get();
  m.launches = std::move(launches);
  m.memory = std::move(memory);
  m.device_steps = FindDeviceSteps(trace, m);
  return m;
}

}  // namespace torch2pprof
