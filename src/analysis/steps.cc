// Steps follow torch-tb-profiler (tb-semantics §3, §4) with the model's steps
// (host-side ProfilerStep#N only) and launches.
#include <algorithm>
#include <array>
#include <limits>

#include "analysis/spans.h"
#include "analysis/stages.h"
#include "base/executor.h"

namespace torch2pprof::analysis {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

struct StepSpan {
  std::string name;
  int64_t host_start, host_end, start, end;
  uint64_t launched = 0;  // device events launched from inside the step
  int64_t device_begin = kMax, device_end = kMin;
};

}  // namespace

StepsResult Steps(const Events& ev, Executor& ex) {
  const TraceModel& m = ev.model();
  StepsResult result;
  // Each part claims the time of its events no earlier part claimed, in this order;
  // a part's claim is measured per step at once, so only the unclaimed rest is kept.
  // One pass hands each event's span to its part, beside the steps' own pass.
  auto parts = Beside(ex, [&ev] {
    std::array<Spans, kParts> by_part;
    for (size_t e = 0; e < ev.count(); ++e) {
      if (ev.Dur(e) <= 0) continue;
      const int r = ev.PartOf(e);
      if (r >= 0) by_part[static_cast<size_t>(r)].emplace_back(ev.Iv(e).start_ns, ev.Iv(e).end_ns);
    }
    return by_part;
  });
  std::vector<StepSpan> s;
  for (const Step& st : m.steps) {
    s.push_back(StepSpan{std::string(ev.Name(st.event)), st.start_ns, st.end_ns, st.start_ns, st.end_ns});
  }
  if (s.empty()) {
    // The whole trace is one step: from the earliest to the latest host-side work.
    int64_t lo = kMax, hi = kMin;
    for (size_t e = 0; e < ev.count(); ++e) {
      if (ev.IsHostOp(e) || ev.RoleOf(e) == Role::kPythonFunction)
        lo = std::min(lo, ev.Iv(e).start_ns), hi = std::max(hi, ev.Iv(e).end_ns);
    }
    if (lo > hi) return result;  // no host-side work: no steps
    result.whole_trace = true;
    s.push_back(StepSpan{"(whole trace)", lo, hi, lo, hi});
  }
  // Each step's device work: the model's step of each device event (that of its launch,
  // else of the device-side step around it); in a trace without steps, what was launched
  // inside the whole-trace window.
  StepScope scope{s.size(), result.whole_trace, s[0].host_start, s[0].host_end};
  auto step_of = [&](size_t e) { return AnalysedDeviceStep(ev, e, scope); };
  const std::vector<uint32_t>& device = ev.DeviceEvents();
  std::vector<bool> from_step(device.size(), false);  // by position in `device`
  bool any = false;
  for (size_t i = 0; i < device.size(); ++i) {
    int64_t k = step_of(device[i]);
    if (k < 0) continue;
    StepSpan& st = s[static_cast<size_t>(k)];
    const Interval& d = ev.Iv(device[i]);
    ++st.launched;
    st.device_begin = std::min(st.device_begin, d.start_ns);
    st.device_end = std::max(st.device_end, d.end_ns);
    from_step[i] = any = true;
  }
  if (any) {
    // Steps are re-timed to include the device work they launched.
    int64_t prev_end = kMin;
    for (size_t k = 0; k < s.size(); ++k) {
      StepSpan& st = s[k];
      st.start = std::max(st.host_start, prev_end);
      if (k == 0 && st.launched) {
        for (size_t i = 0; i < device.size(); ++i) {
          if (!from_step[i] && ev.Iv(device[i]).end_ns <= st.device_begin)
            st.start = std::max(st.start, ev.Iv(device[i]).end_ns);
        }
      }
      st.end = st.launched ? std::max(st.host_end, st.device_end) : std::max(st.host_end, st.start);
      prev_end = st.end;
    }
    // Tail steps the profiler stopped in the middle of carry no (or too little) device work.
    while (!s.empty() && !s.back().launched) s.pop_back();
    if (s.size() >= 2 && s.back().launched * 5 < s[s.size() - 2].launched * 4) s.pop_back();
  }
  std::vector<bool>().swap(from_step);

  std::array<Spans, kParts> by_part = parts.get();
  for (const StepSpan& st : s) {
    StepRow row;
    row.name = st.name;
    row.start_ns = st.start;
    row.total_ns = st.end - st.start;
    row.other_ns = row.total_ns;
    result.rows.push_back(row);
  }
  Spans remaining;
  for (const StepSpan& st : s) remaining.push_back({st.start, st.end});
  remaining = Union(std::move(remaining));
  for (int r = 0; r < kParts && !remaining.empty(); ++r) {
    Spans claimed = Intersect(Union(std::move(by_part[static_cast<size_t>(r)])), remaining);
    for (StepRow& row : result.rows) {
      int64_t& part_ns = row.*kStepParts[r].field;
      part_ns = LengthWithin(claimed, row.start_ns, row.start_ns + row.total_ns);
      row.other_ns -= part_ns;
    }
    remaining = Subtract(remaining, claimed);
  }
  if (!result.rows.empty()) {
    result.window = {result.rows.front().start_ns, result.rows.back().start_ns + result.rows.back().total_ns};
  }
  scope.steps = result.rows.size();
  result.scope = scope;
  return result;
}

int64_t AnalysedDeviceStep(const Events& ev, size_t e, const StepScope& scope) {
  if (scope.whole_trace) {
    const Launch* l = ev.model().LaunchOf(static_cast<uint32_t>(e));
    return l && l->ts_ns >= scope.host_start && l->ts_ns < scope.host_end ? 0 : -1;
  }
  const int64_t k = DeviceStepIndex(ev, e);
  return k >= 0 && static_cast<size_t>(k) < scope.steps ? k : -1;
}

int64_t AnalysedHostStep(const Events& ev, uint32_t lane, int64_t t, const StepScope& scope) {
  if (scope.whole_trace) return t >= scope.host_start && t < scope.host_end ? 0 : -1;
  const int64_t k = StepIndex(ev, lane, t);
  return k >= 0 && static_cast<size_t>(k) < scope.steps ? k : -1;
}

}  // namespace torch2pprof::analysis
