#include "convert/attribution.h"

#include <algorithm>
#include <string>
#include <tuple>

#include "base/flat_map.h"
#include "base/saturate.h"
#include "base/sum_table.h"
#include "model/critical_path.h"
#include "model/open_at.h"
#include "model/step_windows.h"

namespace torch2pprof {

Points FindPoints(const Trace& t, const TraceModel& m, const std::vector<LaneStacks>& lanes, bool memory) {
  Points out{Launchers(m, t.intervals.size()), std::vector<std::vector<Point>>(t.lanes.size())};
  const std::vector<uint32_t>& launchers = out.launchers.events;
  auto& points = out.by_lane;
  for (uint32_t k = 0; k < launchers.size(); ++k) {
    if (launchers[k] >= t.intervals.size())
      points[EventAt(t, launchers[k]).lane].push_back({EventAt(t, launchers[k]).start_ns, k, Point::kZeroLength});
  }
  for (uint32_t k = 0; k < m.launches.size(); ++k) {
    if (m.launches[k].host_event == Launch::kNoEvent)
      points[m.launches[k].lane].push_back({m.launches[k].ts_ns, k, Point::kFlow});
  }
  for (uint32_t i = 0; memory && i < t.memory.size(); ++i)
    points[t.memory[i].lane].push_back({t.memory[i].ts_ns, i, Point::kMemory});
  // A lane without pieces places its points at the root in the order found, and a
  // zero-length launcher's frame is made there: that order is kept.
  for (const LaneStacks& ls : lanes) {
    std::vector<Point>& pts = points[ls.lane];
    std::sort(pts.begin(), pts.end(), [](const Point& x, const Point& y) { return x.ts < y.ts; });
  }
  return out;
}

Places AddLanes(const Trace& t, const TraceModel& m, const std::vector<LaneStacks>& lanes, const FoldedLanes& folded,
                Points& points, ProfileBuilder& b) {
  const std::vector<uint32_t>& launchers = points.launchers.events;
  Places places{std::vector<Place>(launchers.size()), std::vector<Place>(m.launches.size()),
                std::vector<Place>(t.memory.size())};
  auto place_point = [&](const Point& pt, uint32_t lane, uint32_t node) {
    if (pt.kind == Point::kZeroLength) {
      places.launcher[pt.index] = Place{b.Node(node, b.Frame(EventAt(t, launchers[pt.index]).name)), lane};
    } else if (pt.kind == Point::kFlow) {
      places.flow[pt.index] = Place{node, lane};
    } else {
      places.memory[pt.index] = Place{node, lane};
    }
  };
  const Folds& folds = folded.folds;
  for (uint32_t li = 0; li < lanes.size(); ++li) {
    const LaneStacks& ls = lanes[li];
    // A device lane's time is device time (the gpu samples, under the launching stacks):
    // its own samples count in wall, never in work, where the self time of a device
    // annotation (ProfilerStep#N on the stream) would be the device idling.
    const bool work = !m.lanes[ls.lane].device, own_backward = m.lanes[ls.lane].runs_own_backward;
    for (uint32_t g = folds.first_segment[li]; g < folds.first_segment[li + 1]; ++g) {
      const Segment& sg = folds.segments[g];
      for (auto [slot, k] : sg.launchers) places.launcher[slot] = Place{folded.nodes[g][k], ls.lane};
      for (const LocalSample& ss : sg.samples) {
        uint32_t node = folded.nodes[g][ss.node];
        uint32_t sample = b.Sample(node, b.Labels(ls.lane, ss.step));
        b.Add(sample, kCalls, ss.calls);
        b.Add(sample, kWall, ss.wall);
        if (work && !b.IsWait(node, own_backward)) b.Add(sample, kWork, ss.wall);
      }
    }
    // What was open at each point (Holds): the last piece started at or before it, or the
    // innermost of its ancestors that holds it (pieces are in depth-first order).
    auto& pts = points.by_lane[ls.lane];
    size_t k = 0;
    for (const Point& pt : pts) {
      while (k < ls.pieces.size() && ls.pieces[k].start_ns <= pt.ts) ++k;
      int64_t c = static_cast<int64_t>(k) - 1;
      auto holds = [&](int64_t p) {
        return Holds(ls.pieces[static_cast<size_t>(p)].start_ns, ls.pieces[static_cast<size_t>(p)].end_ns, pt.ts);
      };
      while (c >= 0 && !holds(c)) c = ls.pieces[static_cast<size_t>(c)].parent;
      place_point(pt, ls.lane, c < 0 ? 0 : folded.NodeOf(li, static_cast<uint32_t>(c)));
    }
    pts.clear();
  }
  for (uint32_t lane = 0; lane < points.by_lane.size(); ++lane) {
    for (const Point& pt : points.by_lane[lane]) place_point(pt, lane, 0);  // lanes without intervals: the root
  }
  return places;
}

bool AddDeviceWork(const Trace& t, const TraceModel& m, const AggregateOptions& options, bool step_labels,
                   const FrameKeys& frame_key, const Points& points, const Places& places, uint64_t* saturated_sums,
                   ProfileBuilder& b, Executor& ex) {
  auto place_of = [&](const Launch& l) -> const Place& {
    return l.host_event == Launch::kNoEvent
               ? places.flow[static_cast<size_t>(&l - m.launches.data())]
               : places.launcher[static_cast<size_t>(points.launchers.SlotOf(l.host_event))];
  };
  auto step_of = [&](uint32_t e) -> int64_t {
    return step_labels ? StepNumber(m.DeviceStepOf(e, t.intervals[e])) : -1;
  };
  struct DeviceSum {
    uint32_t interval;  // the first
    const Launch* launch;
    uint32_t lane, device_lane;  // lane: the launching thread (kNone: no launch)
    int64_t step;
    uint32_t next;  // another sum of the same node and frame, or kNone
    int64_t ns;
  };
  const size_t n = t.intervals.size();
  const size_t ranges = (n + options.fold_segment - 1) / options.fold_segment;
  std::vector<std::vector<DeviceSum>> device_sums(ranges);
  std::vector<uint64_t> saturated(ranges, 0);  // per range: sums held at the 64-bit limit
  ParallelFor(ex, ranges, [&](size_t r) {
    FlatIndexMap sites;  // (launching node, frame) -> its first sum; the others follow `next`
    std::vector<DeviceSum>& sums = device_sums[r];
    const uint32_t begin = static_cast<uint32_t>(r * options.fold_segment);
    const uint32_t end = static_cast<uint32_t>(std::min(n, (r + 1) * options.fold_segment));
    // Launches are sorted by device event, as the intervals are walked: LaunchOf, in step.
    auto launch = std::lower_bound(m.launches.begin(), m.launches.end(), begin,
                                   [](const Launch& l, uint32_t e) { return l.device_event < e; });
    for (uint32_t i = begin; i < end; ++i) {
      const Interval& d = t.intervals[i];
      if (!IsDeviceRole(m.RoleOf(d))) continue;
      while (launch != m.launches.end() && launch->device_event < i) ++launch;
      const Launch* l = launch != m.launches.end() && launch->device_event == i ? &*launch : nullptr;
      uint32_t node = kNone, lane = kNone;
      const int64_t step = step_of(i);
      if (l) {
        const Place& at = place_of(*l);
        node = at.node, lane = at.lane;
      }
      const uint32_t fresh = static_cast<uint32_t>(sums.size());
      auto [k, inserted] = sites.Emplace(uint64_t{node} << 32 | frame_key(d.name), fresh);
      if (!inserted) {
        const uint32_t first = k;
        while (k != kNone && !(sums[k].lane == lane && sums[k].step == step && sums[k].device_lane == d.lane))
          k = sums[k].next;
        if (k == kNone) {
          k = fresh;
          sums.push_back(DeviceSum{i, l, lane, d.lane, step, sums[first].next, 0});
          sums[first].next = fresh;
        }
      } else {
        sums.push_back(DeviceSum{i, l, lane, d.lane, step, kNone, 0});
      }
      sums[k].ns = SaturatingAdd(sums[k].ns, d.end_ns - d.start_ns, &saturated[r]);
    }
  });
  for (uint64_t n : saturated) *saturated_sums += n;
  bool any = false;
  for (const std::vector<DeviceSum>& sums : device_sums) {
    for (const DeviceSum& sum : sums) {
      any = true;
      const Interval& d = t.intervals[sum.interval];
      if (const Launch* l = sum.launch) {
        const Place& at = place_of(*l);
        b.Add(b.Node(at.node, b.Frame(d.name)), b.Labels(at.lane, sum.step, d.lane), kGpu, sum.ns);
      } else {
        const LaneRole& dl = m.lanes[d.lane];
        std::string where = (dl.device_name.empty() ? "device " + t.lanes[d.lane].pid : dl.device_name) + " stream " +
                            t.lanes[d.lane].tid + " (no launch found)";
        b.Add(b.Node(b.Node(0, b.FrameFor(where)), b.Frame(d.name)), b.Labels(d.lane, sum.step, d.lane), kGpu, sum.ns);
      }
    }
  }
  return any;
}

bool AddCritical(const Trace& t, const TraceModel& m, const std::vector<LaneStacks>& lanes, const FoldedLanes& folded,
                 const Points& points, const Places& places, bool step_labels, ProfileBuilder& b, Executor& ex) {
  const StepWindows windows = FindStepWindows(t, m);
  if (windows.steps.empty()) return false;
  const CriticalPathWalker walker(t, m, lanes, windows);
  std::vector<uint32_t> index_of(t.lanes.size(), kNone);  // by lane: its index in lanes
  for (size_t i = 0; i < lanes.size(); ++i) index_of[lanes[i].lane] = static_cast<uint32_t>(i);
  // A step's path summed by what its samples are: a host stretch by its piece's node
  // (kNone: nothing open) and thread, device work by its event and what bound it.
  struct Sum {
    uint32_t what, lane;  // host: node and thread; device: event and kNone
    Bound bound;
    int64_t ns;
  };
  auto sum_up = [&](const StepCriticalPath& path) {
    SumTable sums;  // by (lane, what), bound
    for (const CriticalSegment& s : path.segments) {
      const bool host = s.bound == Bound::kCpu || s.bound == Bound::kDataLoading;
      const uint32_t what = !host          ? s.event
                            : s.piece >= 0 ? folded.NodeOf(index_of[s.lane], static_cast<uint32_t>(s.piece))
                                           : kNone;
      const uint32_t lane = host ? s.lane : kNone;
      const Bound bound = host ? Bound::kCpu : s.bound;
      sums.Add({uint64_t{lane} << 32 | what, static_cast<uint64_t>(bound)}, s.end_ns - s.start_ns);
    }
    std::vector<Sum> out;
    for (const auto& [k, ns] : sums.Sorted()) {
      out.push_back(Sum{static_cast<uint32_t>(k.hi), static_cast<uint32_t>(k.hi >> 32), static_cast<Bound>(k.lo), ns});
    }
    return out;
  };
  // The critical samples are the samples the same work has (its stack, its labels): the
  // frames say what bound the time — device work under its launch, its wait for the launch
  // and the stream's gap after it below it, host work where it ran — and no sample is
  // added for it. Steps are walked on the threads a block at a time and added in order.
  const uint32_t idle = b.FrameFor("[no event on the thread]");
  const uint32_t launch_wait = b.FrameFor("[waiting for its launch]");
  const uint32_t gap_after = b.FrameFor("[stream gap after it]");
  const size_t n = windows.steps.size(), block = 4 * static_cast<size_t>(ex.threads());
  std::vector<std::vector<Sum>> sums(block);
  for (size_t first = 0; first < n; first += block) {
    const size_t count = std::min(block, n - first);
    ParallelFor(ex, count, [&](size_t i) { sums[i] = sum_up(walker.Walk(first + i)); });
    for (size_t i = 0; i < count; ++i) {
      const size_t k = first + i;
      const int64_t step = step_labels && !windows.whole_trace ? m.steps[k].number : -1;
      for (const Sum& s : sums[i]) {
        if (s.lane != kNone) {
          b.Add(s.what != kNone ? s.what : b.Node(0, idle), b.Labels(s.lane, step), kCritical, s.ns);
          continue;
        }
        const Interval& d = t.intervals[s.what];
        const Launch* l = m.LaunchOf(s.what);
        uint32_t node, lane;
        if (l) {
          const Place& at = l->host_event == Launch::kNoEvent
                                ? places.flow[static_cast<size_t>(l - m.launches.data())]
                                : places.launcher[static_cast<size_t>(points.launchers.SlotOf(l->host_event))];
          node = b.Node(at.node, b.Frame(d.name)), lane = at.lane;
        } else {
          const LaneRole& dl = m.lanes[d.lane];
          std::string where = (dl.device_name.empty() ? "device " + t.lanes[d.lane].pid : dl.device_name) + " stream " +
                              t.lanes[d.lane].tid + " (no launch found)";
          node = b.Node(b.Node(0, b.FrameFor(where)), b.Frame(d.name)), lane = d.lane;
        }
        if (s.bound == Bound::kLaunch) node = b.Node(node, launch_wait);
        if (s.bound == Bound::kKernelKernel) node = b.Node(node, gap_after);
        b.Add(node, b.Labels(lane, step, d.lane), kCritical, s.ns);
      }
      std::vector<Sum>().swap(sums[i]);
    }
  }
  return true;
}

void AddMemory(const Trace& t, const TraceModel& m, bool step_labels, const Places& places, ProfileBuilder& b) {
  auto step_at = [&](uint32_t lane, int64_t ts) -> int64_t {
    return step_labels ? StepNumber(m.StepAt(lane, ts)) : -1;
  };
  for (size_t k = 0; k < m.memory.size(); ++k) {
    const MemoryTimeline& tl = m.memory[k];
    auto add = [&](uint32_t i, int column) {
      const MemoryEvent& e = t.memory[i];
      Place at = places.memory[i];
      // An allocation with nothing open on its thread still needs a stack.
      uint32_t node = at.node ? at.node : b.Node(0, b.FrameFor("(outside any event)"));
      uint32_t sample = b.Sample(node, b.Labels(at.lane, step_at(at.lane, e.ts_ns), -1, static_cast<int32_t>(k)));
      b.Add(sample, column, 1);
      b.Add(sample, column + 1, e.bytes);
    };
    for (uint32_t i : tl.events) {
      if (t.memory[i].bytes > 0) add(i, kAllocObjects);
    }
    for (uint32_t i : tl.live_at_peak) add(i, kAllocObjects + 2);
    if (tl.before_trace_bytes > 0) {
      b.Add(b.Node(0, b.FrameFor("[allocated before the trace began]")),
            b.Labels(ProfileBuilder::kNoLane, -1, -1, static_cast<int32_t>(k)), kAllocObjects + 3,
            tl.before_trace_bytes);
    }
  }
}

}  // namespace torch2pprof
