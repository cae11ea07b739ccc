// The slowest steps as timelines for the HTML report: every event of the step on its
// lane, the step's critical path over them and each device gap with its cause, reduced to
// what a page can draw (events too short to see merged into one bar that counts them).
#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

#include "analysis/stages.h"
#include "model/critical_path.h"
#include "model/frame_names.h"

namespace torch2pprof::analysis {

namespace {

// The step's length over this is the shortest bar drawn alone: at the page's closest zoom
// (the step 20 times a 2,000-pixel lane) a pixel.
constexpr int64_t kResolution = 40000;
// Lanes a step's timeline draws at most.
constexpr size_t kMaxLanes = 256;

struct Item {
  int64_t start, end;
  uint32_t depth, name;
};

// Names each once, as the reports write them.
class Names {
 public:
  explicit Names(const Trace& t, std::vector<std::string>& out) : t_(t), out_(out) { out_ = {""}; }
  uint32_t Of(uint32_t id) {
    auto [it, added] = index_.try_emplace(id, static_cast<uint32_t>(out_.size()));
    if (added) out_.push_back(MakeFrame(FrameSystemName(t_.strings.Get(id))).name);
    return it->second;
  }

 private:
  const Trace& t_;
  std::vector<std::string>& out_;
  std::map<uint32_t, uint32_t> index_;
};

// One lane's items (sorted by depth, then start) as bars: a run of items shorter than res,
// each starting within res of the run's end, is one bar counting them.
void Merge(const std::vector<Item>& items, uint32_t lane, int64_t res, std::vector<TimelineBar>& out,
           uint64_t* merged) {
  TimelineBar run;
  int64_t longest = -1;
  auto flush = [&] {
    if (run.count == 0) return;
    out.push_back(run);
    if (run.count > 1) *merged += run.count;
    run.count = 0;
  };
  run.count = 0;
  for (const Item& it : items) {
    const int64_t dur = it.end - it.start;
    if (dur >= res) {
      flush();
      out.push_back({it.start, it.end, lane, it.depth, it.name, 1});
      continue;
    }
    if (run.count && run.depth == it.depth && it.start - run.end_ns < res) {
      run.end_ns = std::max(run.end_ns, it.end);
      ++run.count;
      if (dur > longest) longest = dur, run.name = it.name;
      continue;
    }
    flush();
    run = {it.start, it.end, lane, it.depth, it.name, 1};
    longest = dur;
  }
  flush();
}

}  // namespace

Timelines::Timelines(const Events& ev, const std::vector<LaneStacks>& lanes, const StepWindows& windows, size_t n)
    : ev_(ev), lanes_(lanes), windows_(windows) {
  std::vector<size_t> order(windows.steps.size());
  std::iota(order.begin(), order.end(), size_t{0});
  auto len = [&](size_t k) { return windows.steps[k].end - windows.steps[k].start; };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return len(a) > len(b); });
  order.resize(std::min(n, order.size()));
  slot_.assign(windows.steps.size(), -1);
  for (size_t i = 0; i < order.size(); ++i) slot_[order[i]] = static_cast<int>(i);
  if (order.empty()) return;
  depth_.resize(lanes.size());
  for (size_t i = 0; i < lanes.size(); ++i) {
    const std::vector<Piece>& p = lanes[i].pieces;
    std::vector<uint32_t>& d = depth_[i];
    d.resize(p.size());
    for (size_t k = 0; k < p.size(); ++k) d[k] = p[k].parent < 0 ? 0 : d[static_cast<size_t>(p[k].parent)] + 1;
  }
  for (const uint32_t e : ev.DeviceEvents()) {
    if (ev.Dur(e) > 0) work_[ev.Iv(e).lane].push_back(e);
  }
  for (auto& [lane, items] : work_) {
    std::stable_sort(items.begin(), items.end(), [&](uint32_t a, uint32_t b) {
      return std::tie(ev.Iv(a).start_ns, ev.Iv(a).end_ns) < std::tie(ev.Iv(b).start_ns, ev.Iv(b).end_ns);
    });
  }
}

int Timelines::Slot(size_t step) const { return step < slot_.size() ? slot_[step] : -1; }

size_t Timelines::count() const {
  return static_cast<size_t>(std::count_if(slot_.begin(), slot_.end(), [](int s) { return s >= 0; }));
}

// Over 100 lines: the step's drawing in the order the page needs it (lanes, bars, the
// critical path, gaps), each part bounded by the lanes and the resolution the one before
// it chose.
StepTimeline Timelines::Of(size_t step, const StepCriticalPath& path, size_t max_bars) const {
  const Trace& t = ev_.trace();
  const TraceModel& m = ev_.model();
  const StepWindow& w = windows_.steps[step];
  StepTimeline out;
  out.step = w.name;
  out.start_ns = w.start;
  out.length_ns = w.end - w.start;
  Names names(t, out.names);
  // Each lane with something in the step, host threads first, in the trace's lane order.
  std::vector<std::vector<Item>> by_lane(t.lanes.size());
  std::vector<uint32_t> events;  // an interval that ended after its parent is two pieces: one event
  for (size_t i = 0; i < lanes_.size(); ++i) {
    const LaneStacks& ls = lanes_[i];
    for (size_t k = 0; k < ls.pieces.size(); ++k) {
      const Piece& p = ls.pieces[k];
      if (p.end_ns <= w.start || p.start_ns >= w.end) continue;
      events.push_back(p.interval);  // drawn or not: `events` counts the step's
      by_lane[ls.lane].push_back({std::max(p.start_ns, w.start) - w.start, std::min(p.end_ns, w.end) - w.start,
                                  depth_[i][k], names.Of(EventAt(t, p.interval).name)});
    }
  }
  // The lanes drawn: those the critical path runs on, then those with most events, at
  // most kMaxLanes (a trace of a million threads makes no page of a million lanes).
  std::vector<char> on_path(t.lanes.size(), 0), keep(t.lanes.size(), 0);
  for (const CriticalSegment& s : path.segments) on_path[s.lane] = 1;
  std::vector<uint32_t> candidates;
  for (uint32_t l = 0; l < t.lanes.size(); ++l) {
    if (!by_lane[l].empty() || on_path[l]) candidates.push_back(l);
  }
  if (candidates.size() > kMaxLanes) {
    std::stable_sort(candidates.begin(), candidates.end(), [&](uint32_t a, uint32_t b) {
      return std::make_tuple(-on_path[a], -static_cast<int64_t>(by_lane[a].size())) <
             std::make_tuple(-on_path[b], -static_cast<int64_t>(by_lane[b].size()));
    });
    out.lanes_left_out = candidates.size() - kMaxLanes;
    candidates.resize(kMaxLanes);
  }
  for (const uint32_t l : candidates) keep[l] = 1;
  std::vector<int64_t> lane_of(t.lanes.size(), -1);
  std::vector<uint32_t> shown;
  for (int device = 0; device < 2; ++device) {
    for (uint32_t l = 0; l < t.lanes.size(); ++l) {
      if (m.lanes[l].device != (device == 1) || !keep[l]) continue;
      lane_of[l] = static_cast<int64_t>(out.lanes.size());
      shown.push_back(l);
      TimelineLane lane;
      const Lane& tl = t.lanes[l];
      if (m.lanes[l].device) {
        lane.name = (m.lanes[l].device_name.empty() ? tl.pid : m.lanes[l].device_name) + " stream " + tl.tid;
        lane.device = true;
      } else {
        lane.name = tl.thread_name.empty() ? "thread " + tl.tid : tl.thread_name;  // Kineto's: "thread 439 (python3)"
      }
      for (const Item& it : by_lane[l]) lane.depth = std::max(lane.depth, it.depth + 1);
      out.lanes.push_back(std::move(lane));
    }
  }
  for (const uint32_t l : shown) {
    std::stable_sort(by_lane[l].begin(), by_lane[l].end(), [](const Item& a, const Item& b) {
      return std::tie(a.depth, a.start) < std::tie(b.depth, b.start);
    });
  }
  std::sort(events.begin(), events.end());
  out.events = static_cast<uint64_t>(std::unique(events.begin(), events.end()) - events.begin());
  // The finest resolution whose bars fit: doubled until they do.
  for (int64_t res = std::max<int64_t>(out.length_ns / kResolution, 1);; res *= 2) {
    out.bars.clear();
    out.merged = 0;
    for (const uint32_t l : shown) {
      Merge(by_lane[l], static_cast<uint32_t>(lane_of[l]), res, out.bars, &out.merged);
      if (out.bars.size() > max_bars) break;
    }
    if (out.bars.size() <= max_bars || res > out.length_ns) break;
  }
  // The critical path: a stretch per event; consecutive stretches on a lane too short to
  // draw, one (named by the longest) until it is long enough.
  const int64_t res = std::max<int64_t>(out.length_ns / kResolution, 1);
  int64_t longest = 0;
  for (const CriticalSegment& s : path.segments) {
    const int64_t a = std::max(s.start_ns, w.start) - w.start, b = std::min(s.end_ns, w.end) - w.start;
    if (b <= a || lane_of[s.lane] < 0) continue;
    const uint32_t lane = static_cast<uint32_t>(lane_of[s.lane]);
    const uint32_t name = s.event == CriticalSegment::kNoEvent ? 0 : names.Of(EventAt(t, s.event).name);
    const uint32_t kind = static_cast<uint32_t>(s.bound);
    if (!out.critical.empty()) {
      TimelineSpan& last = out.critical.back();
      const bool same = last.name == name && last.kind == kind;
      const bool tiny = b - a < res && last.end_ns - last.start_ns < res;
      if (last.lane == lane && last.end_ns == a && (same || tiny)) {
        last.end_ns = b;
        if (!same) {
          ++last.count;
          if (b - a > longest) longest = b - a, last.name = name, last.kind = kind;
        }
        continue;
      }
    }
    out.critical.push_back({a, b, lane, kind, name, 1});
    longest = b - a;
  }
  // Bounded as the bars are: past max_bars stretches (a path that changes lanes at every
  // short event), consecutive ones shorter than a doubling resolution become one, on the
  // lane of the longest, whatever their lanes.
  for (int64_t coarse = res * 2; out.critical.size() > max_bars && coarse <= out.length_ns; coarse *= 2) {
    std::vector<TimelineSpan> merged;
    int64_t longest_here = 0;
    for (const TimelineSpan& c : out.critical) {
      const int64_t len = c.end_ns - c.start_ns;
      if (!merged.empty() && len < coarse && merged.back().end_ns - merged.back().start_ns < coarse &&
          merged.back().end_ns == c.start_ns) {
        TimelineSpan& last = merged.back();
        last.end_ns = c.end_ns;
        last.count += c.count;
        if (len > longest_here) longest_here = len, last.lane = c.lane, last.kind = c.kind, last.name = c.name;
        continue;
      }
      merged.push_back(c);
      longest_here = len;
    }
    out.critical = std::move(merged);
  }
  // Each stream's gaps between its work in the step, by IdleRow's rule; with the event the
  // critical path held longest meanwhile (what the step waited on instead).
  for (const uint32_t l : shown) {
    auto it = work_.find(l);
    if (it == work_.end()) continue;
    int64_t end = INT64_MIN;
    for (const uint32_t e : it->second) {
      const Interval& iv = EventAt(t, e);
      if (iv.start_ns >= w.end) break;
      if (end != INT64_MIN && iv.start_ns > end && iv.start_ns > w.start) {
        TimelineSpan g;
        g.start_ns = std::max(end, w.start) - w.start;
        g.end_ns = iv.start_ns - w.start;
        g.lane = static_cast<uint32_t>(lane_of[l]);
        g.kind = static_cast<uint32_t>(IdleCauseOf(m, e, end, iv.start_ns));
        int64_t best = 0;
        auto c = std::lower_bound(out.critical.begin(), out.critical.end(), g.start_ns,
                                  [](const TimelineSpan& s, int64_t at) { return s.end_ns <= at; });
        for (; c != out.critical.end() && c->start_ns < g.end_ns; ++c) {
          const int64_t over = std::min(c->end_ns, g.end_ns) - std::max(c->start_ns, g.start_ns);
          if (over > best && c->name) best = over, g.name = c->name;
        }
        out.gaps.push_back(g);
      }
      end = std::max(end, iv.end_ns);
    }
  }
  // Bounded as the bars are: the longest gaps (a step of tiny kernels has a gap between
  // each two), kept in time order.
  if (out.gaps.size() > max_bars) {
    std::stable_sort(out.gaps.begin(), out.gaps.end(), [](const TimelineSpan& x, const TimelineSpan& y) {
      return x.end_ns - x.start_ns > y.end_ns - y.start_ns;
    });
    out.gaps.resize(max_bars);
    std::sort(out.gaps.begin(), out.gaps.end(), [](const TimelineSpan& x, const TimelineSpan& y) {
      return std::tie(x.lane, x.start_ns) < std::tie(y.lane, y.start_ns);
    });
  }
  return out;
}

}  // namespace torch2pprof::analysis
