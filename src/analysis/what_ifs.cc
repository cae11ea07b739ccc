// Each analysed step's dependency graph (model/what_if.h), built from what the critical
// path reads: the host threads' stretches, the device's work, what launched it, what
// a synchronization or a blocking wait waited for. Findings' savings are replays of it.
#include "analysis/what_ifs.h"

#include <algorithm>
#include <cmath>

#include "analysis/critical_reader.h"
#include "model/frame_names.h"

namespace torch2pprof::analysis {

struct WhatIfGraphs::Impl {
  Impl(const Events& ev, const std::vector<LaneStacks>& lanes, const StepWindows& w, const Reader& reader,
       const CriticalPathWalker& walker, bool foreach_optimizer)
      : ev_(ev), w_(w), reader_(reader), foreach_(foreach_optimizer) {
    const Trace& t = ev.trace();
    const TraceModel& m = ev.model();
    timeline_.assign(t.lanes.size(), nullptr);
    stacks_.assign(t.lanes.size(), nullptr);
    for (const LaneStacks& ls : lanes) {
      if (m.lanes[ls.lane].device || !reader.Prepared(ls.lane)) continue;
      stacks_[ls.lane] = &ls;
      if (const HostTimeline* walked = walker.Host(ls.lane)) {
        timeline_[ls.lane] = walked;  // the walks' own: made once
      } else {
        own_.push_back(std::make_unique<HostTimeline>(ls));
        timeline_[ls.lane] = own_.back().get();
      }
    }
    // Each communication kernel's message at the link's bus bandwidth (its best, as the
    // collectives table measures it): what the kernel would take with no peer to wait for.
    const double link = LinkBusBandwidth(CollectiveSizes(ev));
    if (link > 0) {
      for (const CollectiveArgs& c : t.collectives) {
        if (ev.RoleOf(c.interval) != Role::kKernel) continue;
        const Message msg = MessageOf(t, c);
        if (msg.bytes < 0) continue;
        link_ns_.emplace_back(c.interval,
                              static_cast<int64_t>(std::ceil(static_cast<double>(msg.bytes) * msg.bus_factor / link)));
      }
      std::sort(link_ns_.begin(), link_ns_.end());
    }
    device_.resize(t.lanes.size());
    for (const uint32_t e : ev.DeviceEvents()) {
      if (ev.Dur(e) > 0) device_[ev.Iv(e).lane].push_back(e);
    }
    // By start: step_ below is parallel to these, so it follows the sort.
    for (auto& d : device_) {
      std::stable_sort(d.begin(), d.end(),
                       [&](uint32_t a, uint32_t b) { return ev.Iv(a).start_ns < ev.Iv(b).start_ns; });
    }
    // Which lanes each step visits, found once: a thread with work in its host part, a
    // stream with work launched in it (asking every lane at every step is lanes x steps).
    host_of_step_.resize(w.steps.size());
    device_of_step_.resize(w.steps.size());
    std::vector<std::vector<uint32_t>> steps_of_process;
    for (uint32_t k = 0; k < w.steps.size(); ++k) {
      const size_t p = static_cast<size_t>(w.steps[k].process);
      if (p >= steps_of_process.size()) steps_of_process.resize(p + 1);
      steps_of_process[p].push_back(k);
    }
    for (const LaneStacks& ls : lanes) {
      if (!stacks_[ls.lane]) continue;
      const size_t p = static_cast<size_t>(m.lanes[ls.lane].process);
      if (p >= steps_of_process.size()) continue;
      const std::vector<uint32_t>& ks = steps_of_process[p];
      for (const Piece& pc : ls.pieces) {
        if (pc.parent >= 0) continue;
        // The first step whose host part ends after the piece starts; on while they start before it ends.
        auto it = std::upper_bound(ks.begin(), ks.end(), pc.start_ns,
                                   [&](int64_t v, uint32_t k) { return v < HostEnd(w.steps[k]); });
        for (; it != ks.end() && w.steps[*it].start < pc.end_ns; ++it) {
          std::vector<uint32_t>& on = host_of_step_[*it];
          if (on.empty() || on.back() != ls.lane) on.push_back(ls.lane);
        }
      }
    }
    for (uint32_t k = 0; k < w.steps.size(); ++k) {
      std::vector<uint32_t>& on = host_of_step_[k];
      std::sort(on.begin(), on.end());
      on.erase(std::unique(on.begin(), on.end()), on.end());
    }
    step_.resize(t.lanes.size());
    for (size_t lane = 0; lane < device_.size(); ++lane) {
      step_[lane].resize(device_[lane].size());
      for (size_t i = 0; i < device_[lane].size(); ++i) {
        const uint32_t e = device_[lane][i];
        const int64_t k = w.DeviceStep(t, m, e);
        step_[lane][i] = static_cast<int32_t>(k);
        if (k < 0) continue;
        std::vector<uint32_t>& on = device_of_step_[static_cast<size_t>(k)];
        if (on.empty() || on.back() != lane) on.push_back(static_cast<uint32_t>(lane));
      }
    }
    for (auto& on : device_of_step_) {
      std::sort(on.begin(), on.end());
      on.erase(std::unique(on.begin(), on.end()), on.end());
    }
  }

  // The host's part of a step ends where its ProfilerStep does; after it, the step is the
  // device finishing what it launched.
  static int64_t HostEnd(const StepWindow& w) { return std::min(w.end, std::max(w.host_end, w.start)); }

  // A node being built: the graph's node and where it came from.
  struct Built {
    uint32_t event = kNoId;  // the host piece's or the device work's event
    int32_t piece = -1;
    // Work, or a wait's two nodes: its head where it began (what it wakes starts there)
    // and its tail, the next node, whose own time ends no earlier than what it waited for.
    enum Part : uint8_t { kWork, kHead, kTail } part = kWork;
  };

  // Over 100 lines: the step's graph built in one place, host nodes then device nodes then
  // their edges, each stage reading the node indexes the one before it made.
  StepGraph Build(size_t k, std::vector<WhatIfGraphs::Waited>* waited) const {
    const TraceModel& m = ev_.model();
    const StepWindow& w = w_.steps[k];
    StepGraph g;
    g.start = w.start;
    std::vector<Built> from;
    std::vector<WhatEdge> edges;
    auto node = [&](int64_t a, int64_t b, int64_t own, uint32_t tags, uint32_t lane, Built bt) {
      g.nodes.push_back(WhatNode{a, b, own, tags, lane, false, lane == w.lane || (tags & kTagDevice) != 0});
      from.push_back(bt);
      return static_cast<uint32_t>(g.nodes.size() - 1);
    };
    // Host: each thread of the step's process, its stretches within the step; the step's
    // own thread first (other threads are woken by it).
    std::vector<uint32_t> host = host_of_step_[k];
    if (stacks_[w.lane] && !std::binary_search(host.begin(), host.end(), w.lane)) host.push_back(w.lane);
    std::sort(host.begin(), host.end());
    // By lane (host lanes in order): its nodes [first, last).
    std::vector<std::pair<size_t, size_t>> ranges(host.size(), {0, 0});
    auto index_of = [&](uint32_t lane) -> int64_t {
      auto it = std::lower_bound(host.begin(), host.end(), lane);
      return it != host.end() && *it == lane ? it - host.begin() : -1;
    };
    auto range_of = [&](uint32_t lane) -> std::pair<size_t, size_t> {
      const int64_t i = index_of(lane);
      return i < 0 ? std::pair<size_t, size_t>{0, 0} : ranges[static_cast<size_t>(i)];
    };
    std::vector<uint32_t> order = host;  // the step's own thread first: the others are woken by it
    std::stable_partition(order.begin(), order.end(), [&](uint32_t l) { return l == w.lane; });
    // Tail nodes of blocking waits on threads, and whether the wait is run_backward's,
    // which waits for the threads that run the autograd engine's nodes and no other.
    std::vector<std::pair<uint32_t, bool>> waits;
    std::vector<std::pair<uint32_t, uint32_t>> syncs;  // (tail node, call event)
    int64_t launch_calls = 0, launch_ns = 0;
    for (const uint32_t lane : order) {
      const HostTimeline& tl = *timeline_[lane];
      const LaneStacks& ls = *stacks_[lane];
      const Reader::PieceInfo& info = reader_.Info(ls);
      const bool own_lane = lane == w.lane;
      const size_t mine = static_cast<size_t>(index_of(lane));
      ranges[mine].first = g.nodes.size();
      HostTimeline::Cursor cur(tl, w.start);
      int64_t at = w.start;
      int64_t prev = -1;              // the lane's last node
      int64_t idle_from = INT64_MIN;  // where an idle stretch of a thread other than the step's began
      const int64_t host_end = HostEnd(w);
      while (at < host_end) {
        const Stretch s = cur.Next();
        const int64_t until = std::min(s.end, host_end);
        if (until <= at) {
          at = std::max(at, until);
          if (s.end >= host_end) break;
          continue;
        }
        const int64_t a = at;
        at = until;
        if (!s.found) {
          if (own_lane) {
            const uint32_t v =
                node(a, until, until - a, until - a <= kPythonGapNs ? uint32_t{kTagPython} : 0u, lane, {});
            if (prev >= 0) edges.push_back({static_cast<uint32_t>(prev), v, 0, false, false});
            prev = v;
          } else {
            idle_from = a;  // waiting for work: woken by the step's thread below
          }
          continue;
        }
        const uint32_t piece = s.piece;
        const uint32_t e = ls.pieces[piece].interval;
        const Interval& iv = ev_.Iv(e);
        uint32_t tags = 0;
        bool waits_thread = false, sync = false;
        const uint8_t kind = reader_.KindOf(iv.name);
        const Role r = ev_.RoleOf(e);
        if (info.compiling[piece]) {
          tags = kTagInit;  // whatever it does there (waits for its compile workers too)
        } else if (info.fsdp[piece]) {
          tags = kTagFsdp;  // its collectives and waits too: with one rank they wait for no one
        } else if (info.data_loader[piece]) {
          tags = kTagDataLoader;
        } else if (info.communication[piece]) {
          tags = kTagCommunication;
        } else if (reader_.Waits(e)) {
          if (kind & Reader::kSleepName) {
            tags = kTagSleep;
          } else {
            tags = kTagThreadWait;
            waits_thread = true;
          }
        } else if (r == Role::kRuntime) {
          if (kind & Reader::kSyncName) {
            sync = true;
            tags = reader_.CopyOwnSync(ls, static_cast<int32_t>(piece)) ? kTagCopyCall : kTagSync;
          } else if (reader_.IsPageableCopyCall(e)) {
            sync = true;
            tags = kTagCopyCall;
          } else if (iv.end_ns - iv.start_ns >= kInitCallNs) {
            tags = kTagInit;
          } else {
            tags = kTagLaunch;
            ++launch_calls, launch_ns += iv.end_ns - iv.start_ns;
          }
        } else if (ev_.IsOperatorRow(e)) {
          tags = reader_.IsHostCompute(ls, static_cast<int32_t>(piece)) ? 0u : uint32_t{kTagOperator};
        } else if (until - a <= kPythonGapNs) {
          tags = kTagPython;  // a Python function's own time, a step's or an annotation's, between operators
        }
        if (foreach_ && info.optimizer[piece] && !(tags & (kTagSync | kTagCopyCall | kTagThreadWait | kTagSleep)))
          tags |= kTagOptimizer;
        const Built bt{e, static_cast<int32_t>(piece), Built::kWork};
        if (waits_thread || sync) {
          // A wait: a head where it began (what it wakes starts from there), then its own
          // time, which ends no earlier than what it waited for (edges below).
          const uint32_t h = node(a, a, 0, tags, lane, {e, static_cast<int32_t>(piece), Built::kHead});
          if (prev >= 0) edges.push_back({static_cast<uint32_t>(prev), h, 0, false, false});
          const uint32_t v = node(a, until, until - a, tags, lane, {e, static_cast<int32_t>(piece), Built::kTail});
          edges.push_back({h, v, 0, false, false});
          prev = v;
          if (waits_thread) waits.push_back({v, m.Has(iv, kRunBackwardName)});
          if (sync) syncs.push_back({v, e});
          continue;
        }
        if (prev >= 0 && idle_from == INT64_MIN && !(tags & (kTagLaunch | kTagInit))) {
          // The same work on after a child (an operator's own time around a nested
          // operator, Python around Python): one node, as no edge tells them apart.
          WhatNode& last = g.nodes[static_cast<size_t>(prev)];
          if (last.tags == tags && last.end == a && from[static_cast<size_t>(prev)].part == Built::kWork) {
            last.end = until;
            last.own += until - a;
            continue;
          }
        }
        const uint32_t v = node(a, until, until - a, tags, lane, bt);
        if (prev >= 0) {
          int64_t lag = 0;
          if (idle_from != INT64_MIN) {
            // Woken after an idle stretch: by what the step's thread began then, else as recorded.
            const int64_t waker = own_lane ? -1 : Waker(g, from, range_of(w.lane), a);
            if (waker >= 0) {
              edges.push_back(
                  {static_cast<uint32_t>(waker), v, a - g.nodes[static_cast<size_t>(waker)].start, true, false, false});
            } else {
              lag = a - idle_from;
            }
          }
          edges.push_back({static_cast<uint32_t>(prev), v, lag, false, false});
        } else if (!own_lane) {
          const int64_t waker = Waker(g, from, range_of(w.lane), a);
          if (waker >= 0)
            edges.push_back(
                {static_cast<uint32_t>(waker), v, a - g.nodes[static_cast<size_t>(waker)].start, true, false, false});
        }
        idle_from = INT64_MIN;
        prev = v;
      }
      ranges[mine].second = g.nodes.size();
    }
    if (launch_calls > 0)
      g.launch_call_ns = static_cast<uint32_t>(std::min<int64_t>(launch_ns / launch_calls, 1000000));

    // Device: the work of the step on each stream, and what ran there before it began.
    std::vector<uint32_t> by_end;  // device nodes
    for (const uint32_t lane : device_of_step_[k]) {
      const std::vector<uint32_t>& d = device_[lane];
      // From the last work that began before the step (it may run into it).
      auto it =
          std::lower_bound(d.begin(), d.end(), w.start, [&](uint32_t e, int64_t v) { return ev_.Iv(e).start_ns < v; });
      if (it != d.begin()) --it;
      int64_t prev = -1;
      for (; it != d.end() && ev_.Iv(*it).start_ns < w.end; ++it) {
        const uint32_t e = *it;
        const Interval& iv = ev_.Iv(e);
        const bool before = iv.start_ns < w.start;
        if (before && iv.end_ns <= w.start) continue;
        if (!before && step_[lane][static_cast<size_t>(it - d.begin())] != static_cast<int32_t>(k)) continue;
        uint32_t tags = kTagDevice;
        if (ev_.RoleOf(e) == Role::kKernel) {
          if (ev_.Has(e, kNcclName)) tags |= kTagCommunication;
          if (reader_.IsFp32Matmul(e)) tags |= kTagFp32Matmul;
        } else if (reader_.IsPageableCopy(e)) {
          tags |= kTagPageableCopy;
        }
        const uint32_t v = node(iv.start_ns, iv.end_ns, iv.end_ns - iv.start_ns, tags, static_cast<uint32_t>(lane),
                                Built{e, -1, Built::kWork});
        if (before) g.nodes[v].fixed = true, g.nodes[v].ends_step = false;
        if (tags & kTagCommunication) {
          auto at = std::lower_bound(link_ns_.begin(), link_ns_.end(), std::make_pair(e, INT64_MIN));
          if (at != link_ns_.end() && at->first == e) g.nodes[v].link_ns = at->second;
        }
        by_end.push_back(v);
        const Launch* l = m.LaunchOf(e);
        const int64_t prev_end = prev >= 0 ? g.nodes[static_cast<size_t>(prev)].end : INT64_MIN;
        const bool by_launch = l && l->ts_ns >= prev_end;
        if (prev >= 0) {
          int64_t lag = 0;
          const int64_t gap = iv.start_ns - prev_end;
          if (!by_launch) {
            // Queued: it began as the work before it ended (or, where it overlapped that
            // work, as far before its end as recorded).
            if (gap <= kStreamWaitNs) {
              lag = gap;
            } else if (const int64_t x = LastDeviceEnd(g, by_end, from, prev_end, iv.start_ns,
                                                       static_cast<uint32_t>(lane), l ? l->ts_ns + 1 : INT64_MIN);
                       x >= 0) {
              // A long gap no launch explains: another stream's work it waited for.
              edges.push_back(
                  {static_cast<uint32_t>(x), v, iv.start_ns - g.nodes[static_cast<size_t>(x)].end, false, false});
            } else {
              lag = gap;
            }
          }
          edges.push_back({static_cast<uint32_t>(prev), v, lag, false, false});
        }
        if (l && !before) {
          // A call that waits (a synchronous copy) launches from where it began.
          const int64_t call = Waker(g, from, range_of(l->lane), l->ts_ns);
          if (call >= 0) {
            const WhatNode& c = g.nodes[static_cast<size_t>(call)];
            // Launched as the call ran: it starts as far into the call as it did; queued
            // behind other work: no earlier than the call's end.
            const int64_t lag = by_launch ? std::max<int64_t>(iv.start_ns - c.start, 0) : c.end - c.start;
            edges.push_back({static_cast<uint32_t>(call), v, lag, true, false, true});
            if (g.nodes[static_cast<size_t>(call)].tags & kTagOptimizer) g.nodes[v].tags |= kTagOptimizerKernel;
          }
        }
        prev = v;
      }
    }
    std::sort(by_end.begin(), by_end.end(), [&](uint32_t a, uint32_t b) { return g.nodes[a].end < g.nodes[b].end; });
    std::vector<std::pair<uint32_t, uint32_t>> device_node;  // (event, node)
    for (const uint32_t v : by_end) device_node.push_back({from[v].event, v});
    std::sort(device_node.begin(), device_node.end());
    // A synchronization ends when the device work it waited for ends; a copy call when its copy does.
    for (const auto& [v, call] : syncs) {
      WhatNode& n = g.nodes[v];
      int64_t d = -1;
      if (reader_.KindOf(ev_.Iv(call).name) & Reader::kSyncName)
        d = LastDeviceEnd(g, by_end, from, n.start, n.end, UINT32_MAX, n.start);
      // A copy call waits for its own copy.
      for (const uint32_t x : reader_.LaunchedBy(call)) {
        auto at = std::lower_bound(device_node.begin(), device_node.end(), std::make_pair(x, uint32_t{0}));
        if (at == device_node.end() || at->first != x) continue;
        const WhatNode& c = g.nodes[at->second];
        if (c.end > n.start && c.end <= n.end && (d < 0 || c.end > g.nodes[static_cast<size_t>(d)].end)) d = at->second;
      }
      if (d < 0) continue;
      if (g.nodes[static_cast<size_t>(d)].tags & kTagPageableCopy) n.tags = (n.tags & ~kTagSync) | kTagCopyCall;
      n.own = std::max<int64_t>(n.end - g.nodes[static_cast<size_t>(d)].end, 0);
      edges.push_back({static_cast<uint32_t>(d), v, n.own, false, true});
    }
    // A blocking wait ends when what it waited for on another thread did. run_backward
    // waits for the threads that run autograd nodes, not one that merely ran meanwhile
    // (woke from a sleep); where no thread names its nodes (no evaluate_function
    // events), for any.
    auto runs_nodes = [&](uint32_t lane) { return reader_.Info(*stacks_[lane]).runs_backward; };
    for (const auto& [v, backward] : waits) {
      WhatNode& n = g.nodes[v];
      const bool engine_named = backward && std::any_of(host.begin(), host.end(), [&](uint32_t lane) {
                                  return lane != n.lane && runs_nodes(lane);
                                });
      int64_t best = -1;
      for (const uint32_t lane : host) {
        if (lane == n.lane || (engine_named && !runs_nodes(lane))) continue;
        const auto [lo, hi] = range_of(lane);
        // The last working node that ended within the wait.
        size_t i = static_cast<size_t>(std::upper_bound(g.nodes.begin() + static_cast<std::ptrdiff_t>(lo),
                                                        g.nodes.begin() + static_cast<std::ptrdiff_t>(hi), n.end,
                                                        [](int64_t v2, const WhatNode& x) { return v2 < x.end; }) -
                                       g.nodes.begin());
        for (int looked = 0; i > lo && looked < 8; ++looked) {
          const WhatNode& x = g.nodes[--i];
          if (x.end <= n.start) break;
          if (x.tags & (kTagThreadWait | kTagSleep) || from[i].part == Built::kHead) continue;
          if (best < 0 || x.end > g.nodes[static_cast<size_t>(best)].end) best = static_cast<int64_t>(i);
          break;
        }
      }
      if (best < 0) continue;  // waited for no thread here (another process): its time stays
      if (waited && n.lane == w.lane) {
        // What the thread the step's own waited for did meanwhile.
        const uint32_t other = g.nodes[static_cast<size_t>(best)].lane;
        const LaneStacks& ols = *stacks_[other];
        const std::pair<size_t, size_t> r = range_of(other);
        for (size_t i = r.first; i < r.second; ++i) {
          const WhatNode& x = g.nodes[i];
          if (x.end <= n.start || x.start >= n.end || from[i].piece < 0 || from[i].part == Built::kHead ||
              (x.tags & (kTagThreadWait | kTagSleep)))
            continue;
          const Code c = reader_.CodeOf(ols, from[i].piece);
          waited->push_back({other, c.python ? c.python : c.op, std::min(x.end, n.end) - std::max(x.start, n.start)});
        }
      }
      n.own = std::max<int64_t>(n.end - g.nodes[static_cast<size_t>(best)].end, 0);
      edges.push_back({static_cast<uint32_t>(best), v, n.own, false, true});
    }
    Order(&g, std::move(edges));
    return g;
  }

 private:
  // The node of a lane's range [first, last) holding instant t (start <= t < end), or -1.
  static int64_t NodeAt(const StepGraph& g, std::pair<size_t, size_t> r, int64_t t) {
    auto b = g.nodes.begin() + static_cast<std::ptrdiff_t>(r.first);
    auto e = g.nodes.begin() + static_cast<std::ptrdiff_t>(r.second);
    auto it = std::upper_bound(b, e, t, [](int64_t v, const WhatNode& n) { return v < n.start; });
    if (it == b) return -1;
    --it;
    return it->end > t || it->start == t ? it - g.nodes.begin() : -1;
  }

  // What woke a thread at t: the step's thread's node then; for a wait, where it began
  // (the wait's own end may wait for the very thread it woke).
  static int64_t Waker(const StepGraph& g, const std::vector<Built>& from, std::pair<size_t, size_t> r, int64_t t) {
    const int64_t n = NodeAt(g, r, t);
    return n >= 0 && from[static_cast<size_t>(n)].part == Built::kTail ? n - 1 : n;
  }

  // The device node that ended last in (after, upto], not on `except`, launched before
  // `launched_before` where given (the walker's rule for a synchronization); -1: none.
  int64_t LastDeviceEnd(const StepGraph& g, const std::vector<uint32_t>& by_end, const std::vector<Built>& from,
                        int64_t after, int64_t upto, uint32_t except, int64_t launched_before = INT64_MIN) const {
    auto it =
        std::upper_bound(by_end.begin(), by_end.end(), upto, [&](int64_t v, uint32_t n) { return v < g.nodes[n].end; });
    for (int looked = 0; it != by_end.begin() && looked < 4096; ++looked) {
      const uint32_t n = *--it;
      if (g.nodes[n].end <= after) break;
      if (g.nodes[n].lane == except) continue;
      if (launched_before != INT64_MIN) {
        const Launch* l = ev_.model().LaunchOf(from[n].event);
        if (l && l->ts_ns >= launched_before) continue;
      }
      return n;
    }
    return -1;
  }

  // Nodes renumbered so that every edge goes forward (Kahn's order, nodes with nothing
  // before them taken in the order they were made), edges by their node: linear.
  static void Order(StepGraph* g, std::vector<WhatEdge> edges) {
    const size_t n = g->nodes.size();
    // The edges out of each node, and into each (counts, then offsets: no list per node).
    std::vector<uint32_t> out_at(n + 1, 0), in_at(n + 1, 0), indeg(n, 0);
    for (const WhatEdge& e : edges) ++out_at[e.from + 1], ++in_at[e.to + 1], ++indeg[e.to];
    for (size_t v = 0; v < n; ++v) out_at[v + 1] += out_at[v], in_at[v + 1] += in_at[v];
    std::vector<uint32_t> out(edges.size()), in(edges.size());
    {
      std::vector<uint32_t> o(out_at.begin(), out_at.end() - 1), i(in_at.begin(), in_at.end() - 1);
      for (uint32_t k = 0; k < edges.size(); ++k) out[o[edges[k].from]++] = k, in[i[edges[k].to]++] = k;
    }
    std::vector<uint32_t> order, place(n, UINT32_MAX);
    order.reserve(n);
    for (uint32_t v = 0; v < n; ++v) {
      if (indeg[v] == 0) order.push_back(v);
    }
    size_t next = 0, unplaced_from = 0;
    while (order.size() < n) {
      if (next == order.size()) {
        // A cycle (a hostile trace): the first node left goes next, its edges in dropped.
        ++g->cycles;
        while (place[unplaced_from] != UINT32_MAX || indeg[unplaced_from] == 0) ++unplaced_from;
        indeg[unplaced_from] = 0;
        order.push_back(static_cast<uint32_t>(unplaced_from));
      }
      const uint32_t v = order[next++];
      place[v] = static_cast<uint32_t>(next - 1);
      for (uint32_t k = out_at[v]; k < out_at[v + 1]; ++k) {
        const uint32_t to = edges[out[k]].to;
        if (indeg[to] > 0 && --indeg[to] == 0) order.push_back(to);
      }
    }
    for (; next < order.size(); ++next) place[order[next]] = static_cast<uint32_t>(next);
    std::vector<WhatNode> nodes(n);
    for (size_t i = 0; i < n; ++i) nodes[i] = g->nodes[order[i]];
    g->nodes = std::move(nodes);
    g->edges.clear();
    g->edges.reserve(edges.size());
    for (size_t i = 0; i < n; ++i) {
      const uint32_t v = order[i];
      for (uint32_t k = in_at[v]; k < in_at[v + 1]; ++k) {
        WhatEdge e = edges[in[k]];
        e.from = place[e.from], e.to = static_cast<uint32_t>(i);
        if (e.from < e.to) g->edges.push_back(e);  // an edge of a broken cycle goes
      }
    }
  }

  const Events& ev_;
  const StepWindows& w_;
  const Reader& reader_;
  bool foreach_;
  std::vector<std::pair<uint32_t, int64_t>> link_ns_;  // (communication kernel, its time at the link's rate), sorted
  std::vector<const HostTimeline*> timeline_;          // by lane: the host lanes of stepping processes
  std::vector<std::unique_ptr<HostTimeline>> own_;     // those the walks have none of
  std::vector<const LaneStacks*> stacks_;              // by lane
  std::vector<std::vector<uint32_t>> host_of_step_;    // by step: the host lanes with work in its host part
  std::vector<std::vector<uint32_t>> device_of_step_;  // by step: the streams with work launched in it
  std::vector<std::vector<uint32_t>> device_;          // by lane: device work by start
  std::vector<std::vector<int32_t>> step_;             // by lane, parallel to device_: its analysed step, or -1
};

}  // namespace torch2pprof::analysis

namespace torch2pprof::analysis {

WhatIfGraphs::WhatIfGraphs(const Events& ev, const std::vector<LaneStacks>& lanes, const StepWindows& windows,
                           const Reader& reader, const CriticalPathWalker& walker, bool foreach_optimizer)
    : impl_(std::make_unique<Impl>(ev, lanes, windows, reader, walker, foreach_optimizer)) {}
WhatIfGraphs::~WhatIfGraphs() = default;
StepGraph WhatIfGraphs::Build(size_t step, std::vector<Waited>* waited) const { return impl_->Build(step, waited); }

}  // namespace torch2pprof::analysis
