// Steps follow torch-tb-profiler (tb-semantics §3, §4) with the model's steps
// (host-side ProfilerStep#N only) and launches.
#include <algorithm>
#include <array>

#include "analysis/spans.h"
#include "analysis/stages.h"
#include "base/executor.h"

namespace torch2pprof::analysis {

namespace {

// An event on a device stream as an index into the model's steps, by the model's one rule
// (DeviceStepOf; 0 when the trace has none), or -1: read only through the scope below.
int64_t DeviceStepIndex(const Events& ev, size_t e) {
  const TraceModel& m = ev.model();
  if (m.steps.empty()) return 0;
  const Step* s = m.DeviceStepOf(static_cast<uint32_t>(e), ev.Iv(e));
  return s ? s - m.steps.data() : -1;
}

// The same for an instant on a host lane (StepAt).
int64_t StepIndex(const Events& ev, uint32_t lane, int64_t t) {
  const TraceModel& m = ev.model();
  if (m.steps.empty()) return 0;
  const Step* s = m.StepAt(lane, t);
  return s ? s - m.steps.data() : -1;
}

}  // namespace

StepScope ScopeOf(const StepWindows& windows) {
  if (windows.steps.empty()) return StepScope{};
  return StepScope{windows.steps.size(), windows.whole_trace, windows.steps[0].host_start, windows.steps[0].host_end};
}

StepsResult Steps(const Events& ev, StepWindows windows, Executor& ex) {
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
  result.windows = std::move(windows);
  const std::vector<StepWindow>& s = result.windows.steps;
  std::array<Spans, kParts> by_part = parts.get();
  if (s.empty()) return result;
  result.whole_trace = result.windows.whole_trace;
  for (const StepWindow& st : s) {
    StepRow row;
    row.name = st.name;
    row.start_ns = st.start;
    row.total_ns = st.end - st.start;
    row.other_ns = row.total_ns;
    result.rows.push_back(row);
  }
  Spans remaining;
  for (const StepWindow& st : s) remaining.push_back({st.start, st.end});
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
  result.window = {result.rows.front().start_ns, result.rows.back().start_ns + result.rows.back().total_ns};
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
