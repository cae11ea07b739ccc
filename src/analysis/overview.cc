#include <algorithm>
#include <limits>
#include <map>

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
  std::map<uint32_t, CategoryRow> rows;  // by category id: a stable order before sorting
  for (size_t e = 0; e < ev.count(); ++e) {
    CategoryRow& c = rows[ev.Iv(e).cat];
    ++c.events;
    c.total_ns += ev.Dur(e);
  }
  for (auto& [cat, c] : rows) c.self_ns = self[cat];
  for (auto& [cat, c] : rows) {
    c.category = std::string(t.strings.Get(cat));
    c.role = m.category_role[cat];
    r.categories.push_back(c);
  }
  std::stable_sort(r.categories.begin(), r.categories.end(),
                   [](const CategoryRow& x, const CategoryRow& y) { return x.self_ns > y.self_ns; });
  return r;
}

}  // namespace torch2pprof::analysis
