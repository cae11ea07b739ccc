#include "model/step_windows.h"

#include <algorithm>
#include <limits>

namespace torch2pprof {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

bool IsHostWork(Role r) { return r == Role::kOperator || r == Role::kUserAnnotation || r == Role::kPythonFunction; }

}  // namespace

int64_t StepWindows::DeviceStep(const Trace& t, const TraceModel& m, size_t e) const {
  if (whole_trace) {
    const Launch* l = m.LaunchOf(static_cast<uint32_t>(e));
    return l && l->ts_ns >= host_start && l->ts_ns < host_end ? 0 : -1;
  }
  if (m.steps.empty()) return -1;
  const Step* s = m.DeviceStepOf(static_cast<uint32_t>(e), EventAt(t, e));
  const int64_t k = s ? s - m.steps.data() : -1;
  return k >= 0 && static_cast<size_t>(k) < steps.size() ? k : -1;
}

int64_t StepWindows::HostStep(const TraceModel& m, uint32_t lane, int64_t at) const {
  if (whole_trace) return at >= host_start && at < host_end ? 0 : -1;
  const Step* s = m.StepAt(lane, at);
  const int64_t k = s ? s - m.steps.data() : -1;
  return k >= 0 && static_cast<size_t>(k) < steps.size() ? k : -1;
}

StepWindows FindStepWindows(const Trace& t, const TraceModel& m) {
  StepWindows w;
  std::vector<StepWindow>& s = w.steps;
  for (const Step& st : m.steps) {
    StepWindow sw;
    sw.name = std::string(t.strings.Get(t.intervals[st.event].name));
    sw.host_start = sw.start = st.start_ns;
    sw.host_end = sw.end = st.end_ns;
    sw.lane = t.intervals[st.event].lane;
    sw.process = st.process;
    s.push_back(std::move(sw));
  }
  const size_t events = EventCount(t);
  if (s.empty()) {
    // The whole trace is one step: from the earliest to the latest host-side work, on the
    // lane that has most of it. Work has time: zero-length events, which only analyze
    // loads, would make convert's step another.
    int64_t lo = kMax, hi = kMin;
    std::vector<int64_t> busy(t.lanes.size(), 0);
    for (const Interval& iv : t.intervals) {
      if (!IsHostWork(m.RoleOf(iv))) continue;
      lo = std::min(lo, iv.start_ns), hi = std::max(hi, iv.end_ns);
      busy[iv.lane] += iv.end_ns - iv.start_ns;
    }
    if (lo > hi) return w;  // no host-side work: no steps
    w.whole_trace = true;
    w.host_start = lo, w.host_end = hi;
    StepWindow sw;
    sw.name = "(whole trace)";
    sw.host_start = sw.start = lo;
    sw.host_end = sw.end = hi;
    sw.lane = static_cast<uint32_t>(std::max_element(busy.begin(), busy.end()) - busy.begin());
    sw.process = m.lanes[sw.lane].process;
    s.push_back(std::move(sw));
  }
  // Each step's device work: the model's step of each device event (that of its launch,
  // else of the device-side step around it); in a trace without steps, what was launched
  // inside the whole-trace window.
  std::vector<uint32_t> device;
  for (size_t e = 0; e < events; ++e) {
    if (IsDeviceRole(m.RoleOf(EventAt(t, e)))) device.push_back(static_cast<uint32_t>(e));
  }
  std::vector<int64_t> device_begin(s.size(), kMax), device_end(s.size(), kMin);
  std::vector<bool> from_step(device.size(), false);  // by position in `device`
  bool any = false;
  for (size_t i = 0; i < device.size(); ++i) {
    const int64_t k = w.DeviceStep(t, m, device[i]);
    if (k < 0) continue;
    const Interval& d = EventAt(t, device[i]);
    ++s[static_cast<size_t>(k)].launched;
    device_begin[static_cast<size_t>(k)] = std::min(device_begin[static_cast<size_t>(k)], d.start_ns);
    device_end[static_cast<size_t>(k)] = std::max(device_end[static_cast<size_t>(k)], d.end_ns);
    from_step[i] = any = true;
  }
  if (!any) return w;
  // Steps are re-timed to include the device work they launched.
  int64_t prev_end = kMin;
  for (size_t k = 0; k < s.size(); ++k) {
    StepWindow& st = s[k];
    st.start = std::max(st.host_start, prev_end);
    if (k == 0 && st.launched) {
      for (size_t i = 0; i < device.size(); ++i) {
        const Interval& d = EventAt(t, device[i]);
        if (!from_step[i] && d.end_ns <= device_begin[0]) st.start = std::max(st.start, d.end_ns);
      }
    }
    // Never before its start: device work launched in it may end before the previous step's.
    st.end = std::max(st.launched ? std::max(st.host_end, device_end[k]) : st.host_end, st.start);
    prev_end = st.end;
  }
  // Tail steps the profiler stopped in the middle of carry no (or too little) device work.
  while (!s.empty() && !s.back().launched) s.pop_back();
  if (s.size() >= 2 && s.back().launched * 5 < s[s.size() - 2].launched * 4) s.pop_back();
  return w;
}

}  // namespace torch2pprof
