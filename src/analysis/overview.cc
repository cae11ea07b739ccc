#include <algorithm>
#include <limits>

#include "stages.h"

namespace torch2pprof::analysis {

OverviewResult Overview(const Events& ev, const std::vector<LaneStacks>& lanes) {
  const Trace& t = ev.trace();
  const TraceModel& m = ev.model();
  OverviewResult r;
  TraceOverview& o = r.overview;
  o.file = t.file;
  o.events = t.stats.events;
  o.phases = t.stats.phases;
  for (size_t i = 0; i < kSkipReasons.size(); ++i) {
    if (t.stats.skipped[i]) o.skipped[kSkipReasons[i].key] = t.stats.skipped[i];
  }
  int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
  for (const Interval& iv : t.intervals) first = std::min(first, iv.start_ns), last = std::max(last, iv.end_ns);
  if (first > last) {  // a trace of memory events only
    for (const MemoryEvent& e : t.memory) first = std::min(first, e.ts_ns), last = std::max(last, e.ts_ns);
  }
  if (first <= last) {
    o.start_ns = first;
    o.span_ns = last - first;
    o.wall_clock_ns = WallClockStart(t, first);
  }
  o.profiler_steps = m.steps.size();
  o.devices = ReadDeviceProperties(t.header);
  DistributedInfo dist = ReadDistributedInfo(t.header);
  o.rank = dist.rank;
  o.world_size = dist.world_size;
  o.backend = dist.backend;

  // Self time per category from the pieces.
  std::vector<int64_t> self(t.strings.size(), 0);
  for (const LaneStacks& ls : lanes) {
    const Lane& lane = t.lanes[ls.lane];
    o.lanes.push_back(
        LaneInfo{lane.pid, lane.tid, lane.thread_name, m.lanes[ls.lane].device, ls.intervals, ls.busy_ns});
    for (const Piece& p : ls.pieces) self[t.intervals[p.interval].cat] += p.self_ns;
  }
  // By category id (a stable order before sorting): a table by string id, not a map
  // looked up per event.
  std::vector<uint64_t> events(t.strings.size(), 0);
  std::vector<int64_t> total(t.strings.size(), 0);
  for (size_t e = 0; e < ev.count(); ++e) {
    const Interval& iv = ev.Iv(e);
    ++events[iv.cat];
    total[iv.cat] += iv.end_ns - iv.start_ns;
  }
  for (uint32_t cat = 0; cat < events.size(); ++cat) {
    if (events[cat] == 0) continue;
    CategoryRow c;
    c.category = std::string(t.strings.Get(cat));
    c.role = m.category_role[cat];
    c.events = events[cat];
    c.total_ns = total[cat];
    c.self_ns = self[cat];
    r.categories.push_back(std::move(c));
  }
  std::stable_sort(r.categories.begin(), r.categories.end(),
                   [](const CategoryRow& x, const CategoryRow& y) { return x.self_ns > y.self_ns; });
  return r;
}

}  // namespace torch2pprof::analysis
