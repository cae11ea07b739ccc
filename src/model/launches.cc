#include "model/launches.h"

#include <algorithm>
#include <functional>
#include <vector>

#include "base/sorted_runs.h"
#include "model/open_at.h"

namespace torch2pprof {
namespace {

constexpr uint32_t kNone = Launch::kNoEvent;

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

}  // namespace

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

}  // namespace torch2pprof
