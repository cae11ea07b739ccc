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

// The first event with each key, found by binary search.
class FirstByKey {
 public:
  void Add(uint64_t key, uint32_t event) { entries_.push_back({key, event}); }
  void Seal() {
    SortRuns(entries_.begin(), entries_.end(), std::less<>());
    entries_.erase(
        std::unique(entries_.begin(), entries_.end(), [](const auto& x, const auto& y) { return x.first == y.first; }),
        entries_.end());
  }
  uint32_t Find(uint64_t key) const {
    auto it = std::lower_bound(entries_.begin(), entries_.end(), std::make_pair(key, uint32_t{0}));
    return it != entries_.end() && it->first == key ? it->second : kNone;
  }

 private:
  std::vector<std::pair<uint64_t, uint32_t>> entries_;
};

// Stack order of a lane: by start, then longest first, then event number.
void SortByStack(const Trace& t, std::vector<uint32_t>& events) {
  SortRuns(events.begin(), events.end(), [&](uint32_t x, uint32_t y) {
    const Interval &a = EventAt(t, x), &b = EventAt(t, y);
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    if (a.end_ns != b.end_ns) return a.end_ns > b.end_ns;
    return x < y;
  });
}

// The SequenceMark of an interval in O(1), for the sweep that asks level by level
// outward: a bit per interval and a count per 64 of them (Trace::sequence is in interval
// order, one mark per interval at most). A binary search per question took a third of
// the backward links' time; an index per interval would cost 4 bytes each.
class MarkIndex {
 public:
  explicit MarkIndex(const Trace& t) : bits_((t.intervals.size() + 63) / 64, 0), before_(bits_.size(), 0) {
    for (const SequenceMark& s : t.sequence) bits_[s.interval >> 6] |= uint64_t{1} << (s.interval & 63);
    uint32_t n = 0;
    for (size_t w = 0; w < bits_.size(); ++w)
      before_[w] = n, n += static_cast<uint32_t>(__builtin_popcountll(bits_[w]));
  }
  const SequenceMark* Find(const Trace& t, uint32_t interval) const {
    const uint64_t word = bits_[interval >> 6], bit = uint64_t{1} << (interval & 63);
    if (!(word & bit)) return nullptr;
    return &t.sequence[before_[interval >> 6] + static_cast<uint32_t>(__builtin_popcountll(word & (bit - 1)))];
  }

 private:
  std::vector<uint64_t> bits_;
  std::vector<uint32_t> before_;  // marks in the words before
};

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
  for (size_t e = 0; e < EventCount(t); ++e) {
    const Interval& iv = EventAt(t, e);
    Role r = m.RoleOf(iv);
    if (!IsDeviceRole(r) && r != Role::kDeviceAnnotation) continue;
    m.lanes[iv.lane].device = true;
    if (ContainsNoCase(t.strings.Get(iv.cat), "mtia")) mtia[iv.lane] = 1;
  }
  for (size_t l = 0; l < t.lanes.size(); ++l) {
    LaneRole& lane = m.lanes[l];
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

// Launches: by correlation (runtime call and device work), by External id (a device
// annotation and its host annotation), else by an ac2g flow whose end is bound to the
// device event starting at or enclosing it, launched where the flow starts.
std::vector<Launch> FindLaunches(const Trace& t, const TraceModel& m) {
  std::vector<Launch> launches;
  const size_t count = EventCount(t);
  FirstByKey by_correlation, by_external;
  std::vector<std::vector<uint32_t>> device_on_lane(t.lanes.size()), runtime_on_lane(t.lanes.size());
  bool any_device = false;
  for (uint32_t e = 0; e < count; ++e) {
    const Interval& iv = EventAt(t, e);
    Role r = m.RoleOf(iv);
    if (IsDeviceRole(r) || r == Role::kDeviceAnnotation) {
      device_on_lane[iv.lane].push_back(e);
      any_device = true;
    } else if (r == Role::kUserAnnotation) {
      if (iv.link) by_external.Add(iv.link, e);
    } else {
      if (iv.link) by_correlation.Add(iv.link, e);
      if (r == Role::kRuntime) runtime_on_lane[iv.lane].push_back(e);
    }
  }
  if (!any_device) return launches;
  by_correlation.Seal();
  by_external.Seal();
  // The host twin of each device event, by correlation (device work) or External id
  // (device annotations): in most traces every one has it, and the flows are not needed.
  std::vector<std::pair<uint32_t, uint32_t>> host_of;  // (device event, host event or kNone)
  bool any_missing = false;
  for (uint32_t e = 0; e < count; ++e) {
    const Interval& d = EventAt(t, e);
    Role r = m.RoleOf(d);
    bool device_work = IsDeviceRole(r);
    if (!device_work && r != Role::kDeviceAnnotation) continue;
    uint32_t host = kNone;
    if (d.link) host = device_work ? by_correlation.Find(d.link) : by_external.Find(d.link);
    host_of.push_back({e, host});
    any_missing |= host == kNone;
  }

  // Flow starts by id (the first one wins), and flow ends bound to device events.
  FirstByKey flow_start;
  std::unordered_map<uint32_t, uint32_t> flow_of_device;  // device event -> index into t.flows of its 's'
  if (any_missing) {
    auto by_start = [&](uint32_t x, uint32_t y) {
      const Interval &a = EventAt(t, x), &b = EventAt(t, y);
      return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : x < y;
    };
    for (auto& v : device_on_lane) std::sort(v.begin(), v.end(), by_start);
    for (auto& v : runtime_on_lane) std::sort(v.begin(), v.end(), by_start);
    for (uint32_t k = 0; k < t.flows.size(); ++k) {
      const Flow& f = t.flows[k];
      if (f.kind == FlowKind::kLaunch && f.phase == 's') flow_start.Add(f.id, k);
    }
    flow_start.Seal();
    for (const Flow& f : t.flows) {
      if (f.kind != FlowKind::kLaunch || f.phase != 'f') continue;
      const auto& v = device_on_lane[f.lane];
      auto it = std::upper_bound(v.begin(), v.end(), f.ts_ns,
                                 [&](int64_t ts, uint32_t e) { return ts < EventAt(t, e).start_ns; });
      if (it == v.begin()) continue;
      const Interval& d = EventAt(t, *(it - 1));
      uint32_t s = flow_start.Find(f.id);
      if (s != kNone && Holds(d.start_ns, d.end_ns, f.ts_ns)) flow_of_device.emplace(*(it - 1), s);
    }
  }
  // The runtime call open at a flow start on its lane, if any.
  auto runtime_at = [&](uint32_t lane, int64_t ts) -> uint32_t {
    const auto& v = runtime_on_lane[lane];
    auto it =
        std::upper_bound(v.begin(), v.end(), ts, [&](int64_t x, uint32_t e) { return x < EventAt(t, e).start_ns; });
    for (int back = 0; back < 2 && it != v.begin(); ++back) {
      const Interval& r = EventAt(t, *--it);
      if (Holds(r.start_ns, r.end_ns, ts)) return *it;
    }
    return kNone;
  };

  for (auto [e, host] : host_of) {
    if (host != kNone) {
      const Interval& h = EventAt(t, host);
      launches.push_back(Launch{e, host, h.lane, h.start_ns});
      continue;
    }
    auto f = flow_of_device.find(e);
    if (f == flow_of_device.end()) continue;
    const Flow& s = t.flows[f->second];
    launches.push_back(Launch{e, runtime_at(s.lane, s.ts_ns), s.lane, s.ts_ns});
  }
  return launches;
}

// Backward nodes and the forward ops that created them: by fwdbwd flow (the "s" on the
// forward op, the "f" at the backward node's start), else by Sequence number — the
// latest forward op with the backward's number that started before it, on the forward
// thread when flows tell which lane that is, else on any thread of the same process.
std::vector<BackwardLink> FindBackward(const Trace& t, const TraceModel& m) {
  std::vector<BackwardLink> links;  // by backward, once sorted
  if (t.sequence.empty()) return links;
  const MarkIndex marks(t);
  auto mark_of = [&](uint32_t interval) { return marks.Find(t, interval); };
  // Operators per lane in stack order, and the instants to ask about.
  std::vector<std::vector<uint32_t>> ops(t.lanes.size());
  for (uint32_t i = 0; i < t.intervals.size(); ++i) {
    if (m.RoleOf(t.intervals[i]) == Role::kOperator) ops[t.intervals[i].lane].push_back(i);
  }
  for (auto& v : ops) SortByStack(t, v);
  // Queries: flow starts (forward side), flow ends (backward side), backward-marked ops.
  enum Kind : uint32_t { kFlowStart = 0, kFlowEnd = 1, kMarked = 2 };
  std::vector<std::vector<std::pair<int64_t, uint32_t>>> queries(t.lanes.size());
  auto query = [](uint32_t index, Kind k) { return index << 2 | k; };
  for (uint32_t k = 0; k < t.flows.size(); ++k) {
    const Flow& f = t.flows[k];
    if (f.kind == FlowKind::kForwardBackward)
      queries[f.lane].push_back({f.ts_ns, query(k, f.phase == 's' ? kFlowStart : kFlowEnd)});
  }
  for (const SequenceMark& s : t.sequence) {
    if (s.fwd_thread > 0)
      queries[t.intervals[s.interval].lane].push_back({t.intervals[s.interval].start_ns, query(s.interval, kMarked)});
  }
  // The root of a backward subtree: from an op, outward while the enclosing op carries
  // the same backward mark (the evaluate_function wrapper carries its node's).
  auto root_of = [&](const std::vector<uint32_t>& stack, size_t at) -> uint32_t {
    const SequenceMark* mark = mark_of(stack[at]);
    if (!mark || mark->fwd_thread <= 0) return stack[at];
    while (at > 0) {
      const SequenceMark* outer = mark_of(stack[at - 1]);
      if (!outer || outer->sequence != mark->sequence || outer->fwd_thread != mark->fwd_thread) break;
      --at;
    }
    return stack[at];
  };
  // (flow id, forward op) and (flow id, backward root) in the sweep's order; an id's first
  // counts (vectors sorted afterwards: a hash map made a node per flow, tens of thousands).
  std::vector<std::pair<uint64_t, uint32_t>> forward_of_flow, backward_of_flow;
  std::vector<uint32_t> roots;  // backward roots by Sequence number
  for (size_t lane = 0; lane < t.lanes.size(); ++lane) {
    auto& q = queries[lane];
    if (q.empty()) continue;
    // Flow ends, flow starts and marked ops, each in time order: std::sort's pivots drove
    // such input into its heapsort fallback, where a merge sort takes the runs as they are.
    std::stable_sort(q.begin(), q.end());
    auto span = [&](uint32_t e) { return std::pair{EventAt(t, e).start_ns, EventAt(t, e).end_ns}; };
    SweepOpen(ops[lane], span, q, [&](uint32_t code, const std::vector<uint32_t>& stack) {
      uint32_t index = code >> 2;
      switch (code & 3) {
        case kFlowStart:
          if (!stack.empty()) forward_of_flow.push_back({t.flows[index].id, stack.back()});
          break;
        case kFlowEnd:
          if (!stack.empty()) backward_of_flow.push_back({t.flows[index].id, root_of(stack, stack.size() - 1)});
          break;
        default: {
          auto at = std::find(stack.begin(), stack.end(), index);
          if (at != stack.end() && root_of(stack, static_cast<size_t>(at - stack.begin())) == index)
            roots.push_back(index);
          break;
        }
      }
    });
  }
  std::vector<bool> linked(t.intervals.size());  // by backward root: has its link
  std::map<int32_t, uint32_t> lane_of_fwd_thread;
  // In the order of the flows' ids (Kineto numbers them in order): where several flows
  // end at one backward root, the first gives its forward op (and the forward thread's lane).
  auto first_by_id = [](std::vector<std::pair<uint64_t, uint32_t>>& v) {
    std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    v.erase(std::unique(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first == b.first; }), v.end());
  };
  first_by_id(forward_of_flow);
  first_by_id(backward_of_flow);
  auto f = forward_of_flow.begin();
  for (const auto& [id, backward] : backward_of_flow) {
    while (f != forward_of_flow.end() && f->first < id) ++f;
    if (f == forward_of_flow.end() || f->first != id) continue;
    if (!linked[backward]) links.push_back(BackwardLink{backward, f->second, true});
    linked[backward] = true;
    if (const SequenceMark* mark = mark_of(backward))
      lane_of_fwd_thread.emplace(mark->fwd_thread, t.intervals[f->second].lane);
  }
  // Forward ops by (sequence, start).
  struct Forward {
    int64_t sequence, start;
    uint32_t interval;
    bool operator<(const Forward& o) const {
      return sequence != o.sequence ? sequence < o.sequence
             : start != o.start     ? start < o.start
                                    : interval < o.interval;
    }
  };
  std::vector<Forward> forwards;
  for (const SequenceMark& s : t.sequence) {
    if (s.fwd_thread == 0) forwards.push_back({s.sequence, t.intervals[s.interval].start_ns, s.interval});
  }
  std::sort(forwards.begin(), forwards.end());
  for (uint32_t root : roots) {
    if (linked[root]) continue;
    const SequenceMark* mark = mark_of(root);
    const Interval& b = t.intervals[root];
    auto known = lane_of_fwd_thread.find(mark->fwd_thread);
    auto lo = std::lower_bound(forwards.begin(), forwards.end(), Forward{mark->sequence, INT64_MIN, 0});
    auto hi = std::lower_bound(forwards.begin(), forwards.end(), Forward{mark->sequence, b.start_ns, 0});
    for (auto it = hi; it != lo;) {
      const Interval& f = t.intervals[(--it)->interval];
      bool lane_ok = known != lane_of_fwd_thread.end() ? f.lane == known->second
                                                       : m.lanes[f.lane].process == m.lanes[b.lane].process;
      if (lane_ok) {
        linked[root] = true;
        links.push_back(BackwardLink{root, it->interval, false});
        break;
      }
    }
  }
  std::sort(links.begin(), links.end(),
            [](const BackwardLink& a, const BackwardLink& b) { return a.backward < b.backward; });
  return links;
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
