#include "model/critical_path.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <queue>
#include <set>
#include <string_view>
#include <tuple>

#include "model/frame_names.h"
#include "model/innermost.h"

namespace torch2pprof {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

// What is innermost on a device stream at each instant, by the lane builder's rule
// (InnermostClock): stretches in time order; one ends where the next begins or where its
// event ends, whichever is first (12 bytes a stretch).
class Innermost {
 public:
  Innermost(const Trace& t, std::vector<uint32_t> events);
  size_t size() const { return start_.size(); }
  int64_t start(size_t i) const { return start_[i]; }
  int64_t end(size_t i) const {
    const int64_t e = (*intervals_)[key_[i]].end_ns;
    return i + 1 < start_.size() ? std::min(e, start_[i + 1]) : e;
  }
  uint32_t key(size_t i) const { return key_[i]; }
  // The stretch holding instant t (start < t <= end); else covering is false and the
  // result is the last stretch before t (-1: none). *hint: the caller's last answer here.
  int64_t At(int64_t t, bool* covering, size_t* hint) const;

 private:
  const std::vector<Interval>* intervals_ = nullptr;
  std::vector<int64_t> start_;
  std::vector<uint32_t> key_;
};

}  // namespace

HostTimeline::HostTimeline(const LaneStacks& lane) : p_(lane.pieces) {
  // The lane builder's rule: at each instant the innermost is the open piece that started
  // last (pieces are in start order, so the highest index open). It changes only where a
  // piece starts or ends. The builder nests its pieces (it splits partial overlaps), so
  // the open pieces are a chain of ancestors: a stack, whose top ends first.
  const uint32_t n = static_cast<uint32_t>(p_.size());
  bool nested = true;
  for (uint32_t i = 0; i < n && nested; ++i) {
    const int32_t parent = p_[i].parent;
    if (parent >= 0) {
      const Piece& up = p_[static_cast<size_t>(parent)];
      nested = up.start_ns <= p_[i].start_ns && p_[i].end_ns <= up.end_ns;
    }
  }
  if (nested) {
    Sweep();
  } else {
    SweepAny();
  }
}

void HostTimeline::Sweep() {
  // A stretch starts at every start and end, also where the innermost stays (a child
  // ending gives its parent the time again from there); ends at one instant are one
  // stretch, named by the outermost of them, as SweepAny names it.
  const uint32_t n = static_cast<uint32_t>(p_.size());
  from_.reserve(2 * static_cast<size_t>(n));
  piece_.reserve(2 * static_cast<size_t>(n));
  std::vector<uint32_t> open;
  uint32_t s = 0;
  while (s < n || !open.empty()) {
    uint32_t from;
    int64_t at;
    if (s < n && (open.empty() || p_[s].start_ns <= p_[open.back()].end_ns)) {
      from = s << 1;
      at = p_[s].start_ns;
    } else {
      const int64_t end = p_[open.back()].end_ns;
      size_t j = open.size() - 1;
      while (j > 0 && p_[open[j - 1]].end_ns == end) --j;
      from = open[j] << 1 | 1;
      at = end;
    }
    while (!open.empty() && p_[open.back()].end_ns <= at) open.pop_back();
    for (; s < n && p_[s].start_ns == at; ++s) {
      if (p_[s].end_ns > at) open.push_back(s);
    }
    from_.push_back(from);
    piece_.push_back(open.empty() ? kIdle : open.back());
  }
}

void HostTimeline::SweepAny() {
  // Pieces that do not nest (never from the lane builder): holding only the open pieces,
  // by end, to find the next end, and by index, for the innermost, ended ones dropped as
  // they surface.
  using Ending = std::pair<int64_t, uint32_t>;
  std::priority_queue<Ending, std::vector<Ending>, std::greater<Ending>> ending;
  std::priority_queue<uint32_t> open;
  const uint32_t n = static_cast<uint32_t>(p_.size());
  uint32_t s = 0;
  while (s < n || !ending.empty()) {
    uint32_t from;
    if (s < n && (ending.empty() || p_[s].start_ns <= ending.top().first)) {
      from = s << 1;
    } else {
      from = ending.top().second << 1 | 1;
    }
    const int64_t at = (from & 1) ? p_[from >> 1].end_ns : p_[from >> 1].start_ns;
    for (; s < n && p_[s].start_ns == at; ++s) open.push(s), ending.push({p_[s].end_ns, s});
    while (!ending.empty() && ending.top().first <= at) ending.pop();
    while (!open.empty() && p_[open.top()].end_ns <= at) open.pop();
    from_.push_back(from);
    piece_.push_back(open.empty() ? kIdle : open.top());
  }
}

int64_t HostTimeline::StretchBefore(int64_t t, size_t* hint) const {
  // The last stretch starting before t: a few steps from the hint, else searched.
  if (hint && *hint < from_.size()) {
    int64_t at = static_cast<int64_t>(*hint);
    for (int step = 0; step < 16 && at >= 0; ++step) {
      const size_t u = static_cast<size_t>(at);
      if (stretch_start(u) >= t) {
        --at;
      } else if (u + 1 < from_.size() && stretch_start(u + 1) < t) {
        ++at;
      } else {
        return at;
      }
    }
    if (at < 0) return -1;
  }
  const int64_t i = static_cast<int64_t>(FirstFrom(t)) - 1;
  if (hint) *hint = static_cast<size_t>(std::max<int64_t>(i, 0));
  return i;
}

size_t HostTimeline::FirstFrom(int64_t t) const {
  size_t lo = 0, hi = from_.size();  // the first stretch starting at or after t
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (stretch_start(mid) < t) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

Stretch HostTimeline::Before(int64_t t, size_t* hint) const {
  Stretch s;
  const int64_t i = StretchBefore(t, hint);
  if (hint && i >= 0) *hint = static_cast<size_t>(i);
  if (i < 0) {
    s.end = kMin;
    return s;
  }
  const size_t u = static_cast<size_t>(i);
  if (piece_[u] == kIdle) {
    s.end = stretch_start(u);
    return s;
  }
  s.found = true;
  s.piece = piece_[u];
  s.start = stretch_start(u);
  s.end = p_[piece_[u]].end_ns;
  return s;
}

HostTimeline::Cursor::Cursor(const HostTimeline& tl, int64_t t) : tl_(tl), at_(t) {
  // The stretch holding [t, t + 1ns): the last starting at or before t.
  i_ = static_cast<int64_t>(tl.FirstFrom(t == std::numeric_limits<int64_t>::max() ? t : t + 1)) - 1;
}

Stretch HostTimeline::Cursor::Next() {
  Stretch s;
  s.start = at_;
  if (i_ < 0) {
    s.end = tl_.from_.empty() ? std::numeric_limits<int64_t>::max() : tl_.stretch_start(0);
  } else {
    const size_t u = static_cast<size_t>(i_);
    s.end = tl_.stretch_end(u);
    if (tl_.piece_[u] != kIdle) {
      s.found = true;
      s.piece = tl_.piece_[u];
    }
  }
  // The last stretch lasts to the end of time: the cursor stays in it.
  if (i_ + 1 < static_cast<int64_t>(tl_.from_.size())) ++i_;
  at_ = s.end;
  return s;
}

Innermost::Innermost(const Trace& t, std::vector<uint32_t> events) : intervals_(&t.intervals) {
  // In start order, an enclosing event before those it holds (equal starts: the later is
  // the deeper).
  std::stable_sort(events.begin(), events.end(), [&](uint32_t a, uint32_t b) {
    return std::tie(t.intervals[a].start_ns, a) < std::tie(t.intervals[b].start_ns, b);
  });
  struct Open {
    int64_t end_ns;
    uint32_t event;
  };
  InnermostClock<Open> clock;
  int64_t last_end = kMin;
  auto credit = [&](const Open& o, int64_t ns) {
    const int64_t from = clock.now();
    if (!key_.empty() && key_.back() == o.event && last_end == from) {
      last_end = from + ns;  // the same event on: one stretch
      return;
    }
    start_.push_back(from);
    key_.push_back(o.event);
    last_end = from + ns;
  };
  for (const uint32_t e : events) {
    clock.AdvanceTo(t.intervals[e].start_ns, credit);
    clock.Push(Open{t.intervals[e].end_ns, e});
  }
  clock.Finish(credit);
}

int64_t Innermost::At(int64_t t, bool* covering, size_t* hint) const {
  for (size_t i : {*hint, *hint - 1}) {
    if (i < start_.size() && start_[i] < t && (i + 1 == start_.size() || start_[i + 1] >= t)) {
      *hint = i;
      *covering = end(i) >= t;
      return static_cast<int64_t>(i);
    }
  }
  auto it = std::lower_bound(start_.begin(), start_.end(), t);  // the first stretch starting at or after t
  if (it == start_.begin()) {
    *covering = false;
    return -1;
  }
  const int64_t i = (it - start_.begin()) - 1;
  *hint = static_cast<size_t>(i);
  *covering = end(static_cast<size_t>(i)) >= t;
  return i;
}

struct CriticalPathWalker::Impl {
  struct End {
    int64_t end;
    uint32_t event, lane;
  };

  // One walk's own state: its segments, its window's start, and where it last looked on
  // each lane.
  struct State {
    std::vector<CriticalSegment> out;  // latest first
    int64_t lo = 0;
    std::vector<size_t> hint;  // by lane
    End waited{};
  };

  Impl(const Trace& t, const TraceModel& m, const std::vector<LaneStacks>& lanes, const StepWindows& w)
      : t_(t), m_(m), lanes_(lanes), w_(w) {
    stacks_of_.assign(t.lanes.size(), -1);
    for (size_t i = 0; i < lanes.size(); ++i) stacks_of_[lanes[i].lane] = static_cast<int64_t>(i);
    host_.resize(t.lanes.size());
    data_loader_.resize(t.lanes.size());
    device_.resize(t.lanes.size());
    std::vector<std::vector<uint32_t>> on(t.lanes.size());
    last_.assign(w.steps.size(), -1);
    for (uint32_t e = 0; e < t.intervals.size(); ++e) {
      const Interval& iv = t.intervals[e];
      if (!IsDeviceRole(m.RoleOf(iv))) continue;
      on[iv.lane].push_back(e);
      ends_.push_back(End{iv.end_ns, e, iv.lane});
      // Each step's last device work: where a step ends on the device, its walk starts there.
      const int64_t k = w.DeviceStep(t, m, e);
      if (k < 0) continue;
      int64_t& l = last_[static_cast<size_t>(k)];
      if (l < 0 || iv.end_ns > t.intervals[static_cast<size_t>(l)].end_ns) l = e;
    }
    for (size_t l = 0; l < on.size(); ++l) {
      if (!on[l].empty()) device_[l] = std::make_unique<Innermost>(t, std::move(on[l]));
    }
    std::sort(ends_.begin(), ends_.end(), [](const End& a, const End& b) { return a.end < b.end; });
    BuildLaunchTree();
    // What each runtime call launched: a synchronous copy waits for its own copy.
    for (const Launch& l : m.launches) {
      if (l.host_event != Launch::kNoEvent) launched_.push_back({l.host_event, l.device_event});
      if (stacks_of_[l.lane] >= 0) launching_.push_back(l.lane);
    }
    std::sort(launched_.begin(), launched_.end());
    std::sort(launching_.begin(), launching_.end());
    launching_.erase(std::unique(launching_.begin(), launching_.end()), launching_.end());
    // The host lanes a walk visits: those that launch device work, and the steps' own.
    wait_.assign(t.strings.size(), 0);
    std::vector<int8_t> name_seen(t.strings.size(), 0);
    auto prepare = [&](uint32_t lane) {
      if (stacks_of_[lane] < 0 || host_[lane]) return;
      const LaneStacks& ls = lanes_[static_cast<size_t>(stacks_of_[lane])];
      host_[lane] = std::make_unique<HostTimeline>(ls);
      // Which pieces lie in a DataLoader's next(), and which names are blocking waits
      // (the thread waits for another: run_backward, a queue's get, a lock).
      std::vector<bool>& dl = data_loader_[lane];
      dl.assign(ls.pieces.size(), false);
      for (size_t p = 0; p < ls.pieces.size(); ++p) {
        const Interval& iv = t_.intervals[ls.pieces[p].interval];
        const Role r = m_.RoleOf(iv);
        dl[p] = ((r == Role::kOperator || r == Role::kUserAnnotation) && m_.Has(iv, kDataLoaderName)) ||
                (ls.pieces[p].parent >= 0 && dl[static_cast<size_t>(ls.pieces[p].parent)]);
        if (!name_seen[iv.name]) {
          name_seen[iv.name] = 1;
          wait_[iv.name] = IsBlockingWaitEvent(t_.strings.Get(iv.name)) ? 1 : 0;
        }
      }
    };
    for (uint32_t lane : launching_) prepare(lane);
    for (const StepWindow& sw : w.steps) prepare(sw.lane);
    BuildWorkers();
  }

  size_t steps() const { return w_.steps.size(); }

  StepCriticalPath Walk(size_t k, State& st) const {
    const StepWindow& w = w_.steps[k];
    st.out.clear();
    if (st.hint.size() != t_.lanes.size()) st.hint.assign(t_.lanes.size(), 0);
    st.lo = w.start;
    int64_t t = w.end;
    uint32_t lane = w.lane;
    bool on_device = false;
    const int64_t last = last_[k];
    if (last >= 0 && t_.intervals[static_cast<size_t>(last)].end_ns >= w.end) {
      lane = t_.intervals[static_cast<size_t>(last)].lane;
      on_device = true;
    }
    int stuck = 0;  // moves between lanes at one instant: a cycle is cut after a few
    while (t > st.lo) {
      const int64_t before = t;
      if (on_device) {
        DeviceStep(st, w, &lane, &t, &on_device);
      } else {
        HostStep(st, &lane, &t, &on_device, stuck >= 3, w.lane);
      }
      stuck = t < before ? 0 : stuck + 1;
      if (stuck > 8) {  // nothing explains the time: the step's own thread's
        Emit(st, st.lo, t, w.lane, CriticalSegment::kNoEvent, -1, Bound::kCpu);
        break;
      }
    }
    StepCriticalPath path;
    for (auto it = st.out.rbegin(); it != st.out.rend(); ++it) {
      if (!path.segments.empty()) {
        CriticalSegment& back = path.segments.back();
        if (back.end_ns == it->start_ns && back.lane == it->lane && back.event == it->event &&
            back.piece == it->piece && back.bound == it->bound) {
          back.end_ns = it->end_ns;
          continue;
        }
      }
      path.segments.push_back(*it);
    }
    for (const CriticalSegment& s : path.segments) {
      path.length_ns += s.end_ns - s.start_ns;
      path.by_bound[static_cast<int>(s.bound)] += s.end_ns - s.start_ns;
    }
    return path;
  }

  const HostTimeline* Host(uint32_t lane) const { return host_[lane].get(); }

  const LaneStacks* StacksOf(uint32_t lane) const {
    return stacks_of_[lane] >= 0 ? &lanes_[static_cast<size_t>(stacks_of_[lane])] : nullptr;
  }

 private:
  static void Emit(State& st, int64_t start, int64_t end, uint32_t lane, uint32_t event, int32_t piece, Bound bound) {
    start = std::max(start, st.lo);
    if (start < end) st.out.push_back(CriticalSegment{start, end, lane, event, piece, bound});
  }

  // The device event that ended last in (after, upto], on a lane other than `except`
  // (UINT32_MAX: any), launched before `launched_before` (kMin: any); else nullptr. A
  // synchronization that spans many steps would look at every event launched since it
  // began: blocks of events whose launches all came later are skipped by launch_min_.
  const End* LastEnd(int64_t after, int64_t upto, uint32_t except, int64_t launched_before) const {
    size_t i = static_cast<size_t>(
        std::upper_bound(ends_.begin(), ends_.end(), upto, [](int64_t v, const End& e) { return v < e.end; }) -
        ends_.begin());
    while (i > 0) {
      if (launched_before != kMin && i % kBlock == 0) {
        // Into the block before: the last block with a launch early enough, if any.
        const int64_t b = LastBlockLaunchedBefore(i / kBlock, launched_before);
        if (b < 0) return nullptr;
        i = std::min(ends_.size(), static_cast<size_t>(b + 1) * kBlock);
      }
      const End& e = ends_[--i];
      if (e.end <= after) return nullptr;
      if (e.lane == except) continue;
      if (launched_before != kMin && LaunchTs(e.event) >= launched_before) continue;
      return &e;
    }
    return nullptr;
  }

  int64_t LaunchTs(uint32_t event) const {
    const Launch* l = m_.LaunchOf(event);
    return l ? l->ts_ns : kMin;
  }

  // launch_min_: a tree over blocks of kBlock events of ends_ (1 the root, node n's
  // children 2n and 2n + 1), each node the earliest launch under it (kMin: one without).
  void BuildLaunchTree() {
    const size_t blocks = (ends_.size() + kBlock - 1) / kBlock;
    leaves_ = 1;
    while (leaves_ < blocks) leaves_ *= 2;
    launch_min_.assign(2 * leaves_, std::numeric_limits<int64_t>::max());
    for (size_t i = 0; i < ends_.size(); ++i) {
      int64_t& m = launch_min_[leaves_ + i / kBlock];
      m = std::min(m, LaunchTs(ends_[i].event));
    }
    for (size_t n = leaves_ - 1; n >= 1; --n) launch_min_[n] = std::min(launch_min_[2 * n], launch_min_[2 * n + 1]);
  }

  // The last block before block `b` holding an event launched before `t`; -1: none.
  int64_t LastBlockLaunchedBefore(size_t b, int64_t t) const {
    if (b == 0) return -1;
    size_t n = leaves_ + b - 1;
    while (launch_min_[n] >= t) {
      while (n % 2 == 0) n /= 2;  // up to the first subtree that has one to its left
      if (n == 1) return -1;
      --n;
    }
    while (n < leaves_) n = launch_min_[2 * n + 1] < t ? 2 * n + 1 : 2 * n;
    return static_cast<int64_t>(n - leaves_);
  }

  // The device work a host call at [call_start, t] waited for, or nullptr: a
  // synchronization waits for the last work to end while it ran; a copy call for its own copy.
  const End* WaitedFor(State& st, uint32_t call, int64_t t) const {
    const Interval& iv = t_.intervals[call];
    if (m_.RoleOf(iv) != Role::kRuntime) return nullptr;
    const std::string_view name = t_.strings.Get(iv.name);
    if (IsSyncCall(name)) return LastEnd(iv.start_ns, t, UINT32_MAX, iv.start_ns);
    if (name.find("emcpy") == std::string_view::npos) return nullptr;  // Memcpy, memcpy
    auto it = std::lower_bound(launched_.begin(), launched_.end(), std::make_pair(call, uint32_t{0}));
    const End* best = nullptr;
    for (; it != launched_.end() && it->first == call; ++it) {
      const Interval& d = EventAt(t_, it->second);
      if (d.end_ns > iv.start_ns && d.end_ns <= t && (!best || d.end_ns > best->end)) {
        st.waited = End{d.end_ns, it->second, d.lane};
        best = &st.waited;
      }
    }
    return best;
  }

  // Whether a thread whose innermost piece is this one does no work of its own: a
  // blocking wait, or the step's own span with nothing under it (it marks time; torch 1.x
  // records nothing on the main thread while the autograd thread runs the backward pass).
  bool Idle(const LaneStacks& ls, uint32_t piece) const {
    const Interval& iv = t_.intervals[ls.pieces[piece].interval];
    return m_.Waits(iv, wait_[iv.name] == 1) || m_.Has(iv, kStepName);
  }

  // Whether `lane` works at t: a piece open there that is not idle.
  bool Works(State& st, uint32_t lane, int64_t t) const {
    const HostTimeline* tl = Host(lane);
    if (!tl) return false;
    const Stretch s = tl->Before(t, &st.hint[lane]);
    return s.found && !Idle(*StacksOf(lane), s.piece);
  }

  // Who of a process's launching threads works when, merged (asking each thread at each
  // wait cost threads x waits): state j holds over (at[j], at[j + 1]].
  struct Workers {
    std::vector<int64_t> at;
    std::vector<uint32_t> count;  // threads working
    std::vector<uint32_t> first;  // the lowest lane working (UINT32_MAX: none)
    // The latest state up to j with two or more working; with one; with one that is not
    // the one of `one[j]`'s state (-1: none).
    std::vector<int32_t> many, one, other_one;
  };

  void BuildWorkers() {
    workers_.resize(m_.process_steps.size());
    std::vector<std::vector<std::pair<int64_t, int64_t>>> changes(workers_.size());  // (time, +-(lane + 1))
    for (const uint32_t lane : launching_) {
      const HostTimeline* tl = Host(lane);
      const size_t process = static_cast<size_t>(m_.lanes[lane].process);
      if (!tl || process >= changes.size()) continue;
      const LaneStacks& ls = *StacksOf(lane);
      const int64_t id = static_cast<int64_t>(lane) + 1;
      bool working = false;
      for (size_t i = 0; i < tl->stretches(); ++i) {
        const uint32_t piece = tl->stretch_piece(i);
        const bool w = piece != HostTimeline::kIdle && !Idle(ls, piece);
        if (w != working) changes[process].push_back({tl->stretch_start(i), w ? id : -id});
        working = w;
      }
    }
    for (size_t p = 0; p < workers_.size(); ++p) {
      std::vector<std::pair<int64_t, int64_t>>& c = changes[p];
      std::sort(c.begin(), c.end());
      Workers& w = workers_[p];
      std::set<uint32_t> on;
      for (size_t i = 0; i < c.size();) {
        const int64_t at = c[i].first;
        for (; i < c.size() && c[i].first == at; ++i) {
          const uint32_t lane = static_cast<uint32_t>(std::abs(c[i].second) - 1);
          if (c[i].second > 0) {
            on.insert(lane);
          } else {
            on.erase(lane);
          }
        }
        const int32_t j = static_cast<int32_t>(w.at.size());
        const uint32_t n = static_cast<uint32_t>(on.size());
        w.at.push_back(at);
        w.count.push_back(n);
        w.first.push_back(on.empty() ? UINT32_MAX : *on.begin());
        const int32_t many = n >= 2 ? j : (j ? w.many.back() : -1);
        const int32_t prev_one = j ? w.one.back() : -1, prev_other = j ? w.other_one.back() : -1;
        int32_t one = prev_one, other_one = prev_other;
        if (n == 1) {
          one = j;
          if (prev_one >= 0 && w.first[static_cast<size_t>(prev_one)] != w.first.back()) other_one = prev_one;
        }
        w.many.push_back(many);
        w.one.push_back(one);
        w.other_one.push_back(other_one);
      }
    }
  }

  // The state of `w` holding instant t (over (t - 1ns, t]), -1: before the first.
  static int64_t StateAt(const Workers& w, int64_t t) {
    return (std::lower_bound(w.at.begin(), w.at.end(), t) - w.at.begin()) - 1;
  }

  // Another thread of the process that works at t, where this one waits or has nothing
  // open: the threads that launch device work first (the lowest lane), then the step's
  // own; UINT32_MAX: none.
  uint32_t Busy(State& st, uint32_t lane, int64_t t, uint32_t step_lane) const {
    const size_t process = static_cast<size_t>(m_.lanes[lane].process);
    if (process < workers_.size()) {
      const Workers& w = workers_[process];
      const int64_t j = StateAt(w, t);
      if (j >= 0) {
        const size_t u = static_cast<size_t>(j);
        // This thread waits at t, so it is not among those working.
        if (w.count[u] > 0 && w.first[u] != lane) return w.first[u];
      }
    }
    return step_lane != lane && Works(st, step_lane, t) ? step_lane : UINT32_MAX;
  }

  // The latest instant up to t at which another thread of the process (one that launches
  // device work, or the step's own) worked: a wait or a gap on this thread is put down to
  // it only back to there. kMin: none.
  int64_t LastBusyEnd(State& st, uint32_t lane, int64_t t, uint32_t step_lane) const {
    const int32_t process = m_.lanes[lane].process;
    int64_t last = kMin;
    if (static_cast<size_t>(process) < workers_.size()) {
      const Workers& w = workers_[static_cast<size_t>(process)];
      const int64_t j = StateAt(w, t);
      if (j >= 0) {
        const size_t u = static_cast<size_t>(j);
        if (w.count[u] >= 2 || (w.count[u] == 1 && w.first[u] != lane)) return t;
        const int32_t one = w.one[u];
        const int32_t k =
            std::max(w.many[u], one >= 0 && w.first[static_cast<size_t>(one)] != lane ? one : w.other_one[u]);
        // State k ended where the next began.
        if (k >= 0) last = w.at[static_cast<size_t>(k) + 1];
      }
    }
    // The step's own thread, where it launches nothing: back over its waits and idle time.
    if (step_lane != lane && m_.lanes[step_lane].process == process &&
        !std::binary_search(launching_.begin(), launching_.end(), step_lane)) {
      if (const HostTimeline* tl = Host(step_lane)) {
        const LaneStacks& ls = *StacksOf(step_lane);
        int64_t at = t;
        for (int looked = 0; looked < 256 && at > last; ++looked) {
          const Stretch s = tl->Before(at, &st.hint[step_lane]);
          if (!s.found) {
            at = s.end;
          } else if (Idle(ls, s.piece)) {
            at = s.start;
          } else {
            last = std::max(last, at);
            break;
          }
        }
      }
    }
    return last;
  }

  void HostStep(State& st, uint32_t* lane, int64_t* t, bool* on_device, bool no_jump, uint32_t step_lane) const {
    const HostTimeline* tl = Host(*lane);
    Stretch here;
    if (tl) {
      here = tl->Before(*t, &st.hint[*lane]);
    } else {
      here.end = kMin;
    }
    const LaneStacks* ls = StacksOf(*lane);
    const bool idle = !here.found || Idle(*ls, here.piece);
    if (idle && !no_jump) {
      // The thread waits, or has nothing open: the step goes on where a thread works.
      const uint32_t other = Busy(st, *lane, *t, step_lane);
      if (other != UINT32_MAX) {
        *lane = other;
        return;
      }
      if (!here.found && *lane != step_lane) {
        *lane = step_lane;
        return;
      }
    }
    // Idle time is this thread's only back to when another stopped working.
    const int64_t others = idle ? LastBusyEnd(st, *lane, *t, step_lane) : kMin;
    if (!here.found) {
      // Nothing open on the thread: its own time, no event to put it down to.
      const int64_t from = std::max(here.end == kMin ? st.lo : here.end, others);
      Emit(st, from, *t, *lane, CriticalSegment::kNoEvent, -1, Bound::kCpu);
      *t = std::max(from, st.lo);
      return;
    }
    const uint32_t piece = here.piece;
    const uint32_t event = ls->pieces[piece].interval;
    if (!no_jump) {
      if (const End* d = WaitedFor(st, event, *t)) {
        // The host waited in the call until the device finished d: the time after d's end
        // is the call's own, the time before is the device's.
        Emit(st, d->end, *t, *lane, event, static_cast<int32_t>(piece), Bound::kCpu);
        *t = std::max(d->end, st.lo);
        *lane = d->lane;
        *on_device = true;
        return;
      }
    }
    const Bound bound = data_loader_[*lane][piece] ? Bound::kDataLoading : Bound::kCpu;
    const int64_t from = std::max(here.start, others);
    Emit(st, from, *t, *lane, event, static_cast<int32_t>(piece), bound);
    *t = std::max(from, st.lo);
  }

  void DeviceStep(State& st, const StepWindow& w, uint32_t* lane, int64_t* t, bool* on_device) const {
    const Innermost* leaves = device_[*lane].get();
    bool covering = false;
    const int64_t k = leaves ? leaves->At(*t, &covering, &st.hint[*lane]) : -1;
    if (!covering) {  // the stream idled: what happened then was the host's
      *lane = w.lane;
      *on_device = false;
      return;
    }
    const uint32_t e = leaves->key(static_cast<size_t>(k));
    const int64_t start = leaves->start(static_cast<size_t>(k));
    const Interval& d = t_.intervals[e];
    const bool comm = m_.RoleOf(d) == Role::kKernel && m_.Has(d, kNcclName);
    Emit(st, start, *t, *lane, e, -1, comm ? Bound::kGpuCommunication : Bound::kGpuCompute);
    *t = std::max(start, st.lo);
    if (*t <= st.lo || start != d.start_ns) return;
    // Why it started then: the later of its launch and the end of the work before it on
    // the stream.
    int64_t prev_end = kMin;
    uint32_t prev = UINT32_MAX;
    if (k > 0 && leaves->end(static_cast<size_t>(k - 1)) <= *t) {
      prev_end = leaves->end(static_cast<size_t>(k - 1));
      prev = leaves->key(static_cast<size_t>(k - 1));
    }
    const Launch* l = m_.LaunchOf(e);
    const int64_t ready_launch = l ? l->ts_ns : kMin;
    if (l && ready_launch >= prev_end) {
      // It waited for the host to launch it: the launch's delay, then the host before it.
      Emit(st, ready_launch, *t, *lane, e, -1, Bound::kLaunch);
      *t = std::max(std::min(ready_launch, *t), st.lo);
      *lane = l->lane;
      *on_device = false;
      return;
    }
    if (prev == UINT32_MAX) {  // no launch and nothing before it: the host's time
      *lane = w.lane;
      *on_device = false;
      return;
    }
    if (*t - prev_end > kStreamWaitNs) {
      // A long gap no launch explains: work on another stream it waited for.
      if (const End* x = LastEnd(prev_end, *t, *lane, kMin)) {
        Emit(st, x->end, *t, *lane, prev, -1, Bound::kKernelKernel);
        *t = std::max(x->end, st.lo);
        *lane = x->lane;
        return;
      }
    }
    Emit(st, prev_end, *t, *lane, prev, -1, Bound::kKernelKernel);
    *t = std::max(prev_end, st.lo);
  }

  const Trace& t_;
  const TraceModel& m_;
  const std::vector<LaneStacks>& lanes_;
  const StepWindows& w_;
  std::vector<int64_t> stacks_of_;                       // by lane: index into lanes_, or -1
  std::vector<std::unique_ptr<HostTimeline>> host_;      // by lane: launching and step lanes
  std::vector<std::vector<bool>> data_loader_;           // by lane, by piece: inside a DataLoader
  std::vector<std::unique_ptr<Innermost>> device_;       // by lane
  std::vector<End> ends_;                                // device events by end
  std::vector<int64_t> last_;                            // by step: its last device event, or -1
  std::vector<std::pair<uint32_t, uint32_t>> launched_;  // (runtime call, device event), sorted
  std::vector<uint32_t> launching_;                      // host lanes that launch device work
  std::vector<int8_t> wait_;                             // by name id: a blocking wait
  std::vector<Workers> workers_;                         // by process
  static constexpr size_t kBlock = 16;
  std::vector<int64_t> launch_min_;  // see BuildLaunchTree
  size_t leaves_ = 1;
};

CriticalPathWalker::CriticalPathWalker(const Trace& t, const TraceModel& m, const std::vector<LaneStacks>& lanes,
                                       const StepWindows& windows)
    : impl_(std::make_unique<Impl>(t, m, lanes, windows)) {}
CriticalPathWalker::~CriticalPathWalker() = default;
size_t CriticalPathWalker::steps() const { return impl_->steps(); }
StepCriticalPath CriticalPathWalker::Walk(size_t step) const {
  Impl::State st;
  return impl_->Walk(step, st);
}
void CriticalPathWalker::WalkAll(Executor& ex, const std::function<void(size_t, const StepCriticalPath&)>& each) const {
  // Steps in blocks, a walk state per block.
  const size_t n = impl_->steps(), block = 8;
  ParallelFor(ex, (n + block - 1) / block, [&](size_t b) {
    Impl::State st;
    for (size_t k = b * block; k < std::min(n, (b + 1) * block); ++k) each(k, impl_->Walk(k, st));
  });
}
const HostTimeline* CriticalPathWalker::Host(uint32_t lane) const { return impl_->Host(lane); }
const LaneStacks* CriticalPathWalker::StacksOf(uint32_t lane) const { return impl_->StacksOf(lane); }

}  // namespace torch2pprof
