#include <algorithm>
#include <limits>

#include "analysis/stages.h"
#include "base/saturate.h"
#include "model/frame_names.h"
#include "model/innermost.h"

namespace torch2pprof::analysis {

// Over 100 lines: one pass per lane over its pieces, reading busy time, work and each
// category's self and covered time from the same piece as it passes.
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
  if (m.start_ns <= m.end_ns) {
    o.start_ns = m.start_ns;
    o.span_ns = m.end_ns - m.start_ns;
    o.wall_clock_ns = WallClockStart(t, m.start_ns);
  }
  o.profiler_steps = m.steps.size();
  o.devices = m.devices;
  DistributedInfo dist = ReadDistributedInfo(t.header);
  o.rank = dist.rank;
  o.world_size = dist.world_size;
  o.backend = dist.backend;

  // Per lane: busy and work, and each category's self time and the time its events
  // cover. A device lane is busy while it runs device work (kernels, memcpys, memsets):
  // the self time of a device annotation around them (ProfilerStep#N on the stream) is
  // the device idling, and counts for nothing.
  const size_t names = t.strings.size();
  std::vector<int8_t> wait(names, -1);  // by name id: a blocking wait (IsBlockingWaitEvent), once known
  std::vector<int64_t> self(names, 0), covered(names, 0);
  for (const LaneStacks& ls : lanes) {
    const Lane& lane = t.lanes[ls.lane];
    const bool device = m.lanes[ls.lane].device;
    LaneInfo info{lane.pid, lane.tid, lane.thread_name, device, ls.intervals, ls.busy_ns, -1};
    // Categories' covered time: pieces come by start, so each category's union is one
    // sweep (a piece of a split interval continues where the one before it ended).
    std::vector<std::pair<uint32_t, int64_t>> covered_to;  // (category, end of its union so far)
    auto cover = [&](uint32_t cat, int64_t start, int64_t end) {
      auto it = std::find_if(covered_to.begin(), covered_to.end(), [cat](const auto& c) { return c.first == cat; });
      if (it == covered_to.end()) it = covered_to.insert(covered_to.end(), {cat, start});
      if (end > it->second) covered[cat] += end - std::max(start, it->second), it->second = end;
    };
    if (device) {
      // The stream is busy while it runs device work; that time goes to the innermost
      // device event by the stack walk's rule, on the device work alone: an annotation's
      // own time around the kernels (ProfilerStep#N) is the device idling.
      struct Work {
        int64_t end_ns;
        uint32_t cat;
      };
      InnermostClock<Work> clock;
      int64_t busy = 0;
      auto credit = [&](const Work& w, int64_t ns) { self[w.cat] += ns, busy += ns; };
      for (const Piece& p : ls.pieces) {
        const Interval& iv = t.intervals[p.interval];
        cover(iv.cat, p.start_ns, p.end_ns);
        if (!p.first || !IsDeviceRole(m.RoleOf(iv))) continue;
        clock.AdvanceTo(iv.start_ns, credit);
        clock.Push(Work{iv.end_ns, iv.cat});
      }
      clock.Finish(credit);
      info.busy_ns = busy;
    } else {
      int64_t work = 0;
      bool overhead = !ls.pieces.empty();  // the lane holds the profiler's own overhead events alone
      for (const Piece& p : ls.pieces) {
        const Interval& iv = t.intervals[p.interval];
        overhead = overhead && t.strings.Get(iv.cat) == "overhead";
        cover(iv.cat, p.start_ns, p.end_ns);
        self[iv.cat] += p.self_ns;
        if (wait[iv.name] < 0) wait[iv.name] = IsBlockingWaitEvent(t.strings.Get(iv.name));
        if (!m.Waits(iv, wait[iv.name] == 1)) work += p.self_ns;
      }
      info.work_ns = work;
      if (info.name.empty() && overhead) info.name = "(the profiler's own overhead)";
    }
    o.lanes.push_back(std::move(info));
  }
  // By category id (a stable order before sorting): a table by string id, not a map
  // looked up per event.
  std::vector<uint64_t> events(names, 0);
  std::vector<int64_t> total(names, 0);
  for (size_t e = 0; e < ev.count(); ++e) {
    const Interval& iv = ev.Iv(e);
    ++events[iv.cat];
    total[iv.cat] = SaturatingAdd(total[iv.cat], iv.end_ns - iv.start_ns, &r.saturated);
  }
  for (uint32_t cat = 0; cat < events.size(); ++cat) {
    if (events[cat] == 0) continue;
    CategoryRow c;
    c.category = std::string(t.strings.Get(cat));
    c.role = m.category_role[cat];
    c.events = events[cat];
    c.total_ns = total[cat];
    c.covered_ns = covered[cat];
    c.self_ns = self[cat];
    r.categories.push_back(std::move(c));
  }
  std::stable_sort(r.categories.begin(), r.categories.end(),
                   [](const CategoryRow& x, const CategoryRow& y) { return x.self_ns > y.self_ns; });
  return r;
}

}  // namespace torch2pprof::analysis
