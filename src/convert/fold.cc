#include "convert/fold.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <unordered_map>

#include "base/flat_map.h"
#include "base/sorted_runs.h"
#include "model/frame_names.h"

namespace torch2pprof {

Folds::Folds(const std::vector<LaneStacks>& lanes, uint32_t segment_size) : size(segment_size) {
  size_t at = 0;
  for (uint32_t l = 0; l < lanes.size(); ++l) {
    first_segment.push_back(static_cast<uint32_t>(segments.size()));
    lane_at.push_back(at);
    const uint32_t n = static_cast<uint32_t>(lanes[l].pieces.size());
    for (uint32_t b = 0; b < n; b += std::min(size, n - b)) {
      segments.emplace_back();
      segments.back().lane = l, segments.back().begin = b, segments.back().end = b + std::min(size, n - b);
    }
    at += n;
  }
  first_segment.push_back(static_cast<uint32_t>(segments.size()));
  table.resize(at);
}

Launchers::Launchers(const TraceModel& m, size_t intervals) : is(intervals) {
  for (const Launch& l : m.launches) {
    if (l.host_event != Launch::kNoEvent) events.push_back(l.host_event);
  }
  SortRuns(events.begin(), events.end(), std::less<>());
  events.erase(std::unique(events.begin(), events.end()), events.end());
  for (uint32_t e : events) {
    if (e < intervals) is[e] = true;
  }
}

int64_t Launchers::SlotOf(uint32_t e) const {
  if (e < is.size() && !is[e]) return -1;
  auto it = std::lower_bound(events.begin(), events.end(), e);
  return it != events.end() && *it == e ? it - events.begin() : -1;
}

FrameKeys::FrameKeys(const Trace& t) : of_name_(t.strings.size(), kNone) {
  std::unordered_map<std::string, uint32_t> canonical;
  for (const Interval& iv : t.intervals) {
    uint32_t& key = of_name_[iv.name];
    if (key != kNone) continue;
    std::string_view text = t.strings.Get(iv.name);
    std::string frame = FrameSystemName(text);
    key = frame == text ? iv.name : 0x80000000u | canonical.emplace(std::move(frame), canonical.size()).first->second;
  }
}

namespace {

// What every segment reads: the trace, its model, and where links and launchers are.
struct FoldInput {
  const Trace& t;
  const TraceModel& m;
  const std::vector<LaneStacks>& lanes;
  const std::vector<Link>& links;  // sorted by backward
  const std::vector<bool>& is_backward;
  const Launchers& launchers;
  bool step_labels;
  // By link: its forward op's stack (ForwardStacks); empty where a link makes a cycle.
  // Found beside the fold: only a segment with a backward root waits for it.
  const Pending<std::vector<uint32_t>>& forward_stacks;
  const FrameKeys& frame_keys;
};

// The link a piece's interval follows (kNone: none, or its forward op was not found).
// links are sorted by backward; is_backward has a bit per interval.
inline uint32_t LinkOf(const std::vector<Link>& links, const std::vector<bool>& is_backward, uint32_t interval) {
  if (links.empty() || !is_backward[interval]) return kNone;
  auto it =
      std::lower_bound(links.begin(), links.end(), interval, [](const Link& k, uint32_t i) { return k.backward < i; });
  return it != links.end() && it->backward == interval && it->lane != kNone ? static_cast<uint32_t>(it - links.begin())
                                                                            : kNone;
}

// By link, a number for the names on its forward op's stack, from the lane's root down
// (through the forward ops of backward roots on it): two links with the same number
// hang their backward roots under the same node. Empty where a link would make a cycle
// (a forward op inside its own backward's subtree): ResolveNodes then drops one.
std::vector<uint32_t> ForwardStacks(const Trace& t, const std::vector<LaneStacks>& lanes,
                                    const std::vector<Link>& links, const std::vector<bool>& is_backward,
                                    const Folds& folds, const FrameKeys& frame_key) {
  if (links.empty()) return {};
  constexpr uint32_t kUnknown = kNone, kVisiting = kNone - 1;
  FlatIndexMap stacks;  // (stack above + 1, backward root?, name) -> stack
  // By lane and piece: its stack once known, kUnknown or kVisiting before. A table of
  // its own: the fold writes its nodes into the folds' table meanwhile.
  std::vector<uint32_t> table(folds.table.size(), kUnknown);
  auto at = [&](uint32_t lane, uint32_t piece) -> uint32_t& { return table[folds.lane_at[lane] + piece]; };
  std::vector<std::pair<uint32_t, uint32_t>> work;
  std::vector<uint32_t> out(links.size(), kNone);
  for (size_t k = 0; k < links.size(); ++k) {
    if (links[k].lane == kNone) continue;
    work.push_back({links[k].lane, links[k].piece});
    while (!work.empty()) {
      auto [l, p] = work.back();
      uint32_t& stack = at(l, p);
      if (stack < kVisiting) {
        work.pop_back();
        continue;
      }
      const Piece& pc = lanes[l].pieces[p];
      const uint32_t link = LinkOf(links, is_backward, pc.interval);
      uint32_t above = kNone;  // the root
      if (link != kNone || pc.parent >= 0) {
        std::pair<uint32_t, uint32_t> dep = link != kNone ? std::make_pair(links[link].lane, links[link].piece)
                                                          : std::make_pair(l, static_cast<uint32_t>(pc.parent));
        uint32_t d = at(dep.first, dep.second);
        if (d == kUnknown) {
          at(l, p) = kVisiting;
          work.push_back(dep);
          continue;
        }
        if (d == kVisiting) return {};  // a cycle
        above = d;
      }
      // A backward root by its name as written: its "[backward] X" frame is that name's.
      const uint32_t name = t.intervals[pc.interval].name;
      const uint64_t id = uint64_t{above + 1} << 32 | (link != kNone ? uint64_t{1} << 63 | name : frame_key(name));
      at(l, p) = stacks.Emplace(id, static_cast<uint32_t>(stacks.size())).first;
      work.pop_back();
    }
    out[k] = at(links[k].lane, links[k].piece);
  }
  return out;
}

// A segment's tree, its samples (by node and step) and where its launchers are; the node
// of each of its pieces goes to node_of_piece[piece - begin].
void Fold(const FoldInput& in, Segment& s, uint32_t* node_of_piece) {
  const LaneStacks& ls = in.lanes[s.lane];
  const bool device_lane = in.m.lanes[ls.lane].device;
  FlatIndexMap child, imports, backward_roots, samples;
  // The samples of the segment's first step (every sample without step labels) by node:
  // a table, where the map's probe cost most of the fold's time per piece. Later steps
  // use the map.
  std::vector<uint32_t> first_step_sample;
  const FrameKeys& frame_key = in.frame_keys;
  std::vector<int64_t> steps;                     // the segment's steps, for the samples' keys
  const std::vector<uint32_t>* stacks = nullptr;  // the forward stacks, at the first backward root
  auto add_node = [&](FlatIndexMap& map, uint64_t key, LocalNode n) {
    auto [node, inserted] = map.Emplace(key, static_cast<uint32_t>(s.nodes.size()));
    if (inserted) s.nodes.push_back(n);
    return node;
  };
  for (uint32_t i = s.begin; i < s.end; ++i) {
    const Piece& pc = ls.pieces[i];
    uint32_t parent = kNone;
    if (pc.parent >= 0) {
      uint32_t q = static_cast<uint32_t>(pc.parent);
      parent = q >= s.begin ? node_of_piece[q - s.begin] : add_node(imports, q, LocalNode{kNone, 0, kNone, q});
    }
    const uint32_t name = in.t.intervals[pc.interval].name;
    const uint32_t link = LinkOf(in.links, in.is_backward, pc.interval);
    const uint64_t up = static_cast<uint64_t>(parent + 1) << 32;  // the root's kNone + 1 is 0
    uint32_t node;
    if (link == kNone) {
      node = add_node(child, up | frame_key(name), LocalNode{parent, name, kNone, kNone});
    } else {
      // A backward root hangs under its forward op's stack: roots of every step whose
      // forward ops had the same stack are one node (where links make a cycle, one each).
      if (!stacks) stacks = &in.forward_stacks.Shared();  // once a segment: finds them, or waits while they are found
      const uint64_t key = stacks->empty() ? up | link : uint64_t{(*stacks)[link]} << 32 | name;
      node = add_node(backward_roots, key, LocalNode{parent, name, link, kNone});
    }
    node_of_piece[i - s.begin] = node;
    // Host pieces lie in one step window (BuildLanes cut them at the steps' bounds);
    // device pieces take the model's step of their event.
    int64_t step = -1;
    if (in.step_labels) {
      step = device_lane ? StepNumber(in.m.DeviceStepOf(pc.interval, in.t.intervals[pc.interval]))
                         : StepNumber(in.m.StepAt(ls.lane, pc.start_ns));
    }
    if (pc.first) {
      int64_t slot = in.launchers.SlotOf(pc.interval);
      if (slot >= 0) s.launchers.push_back({static_cast<uint32_t>(slot), node});
    }
    if (pc.self_ns == 0 && !pc.first) continue;
    uint32_t step_index = static_cast<uint32_t>(std::find(steps.begin(), steps.end(), step) - steps.begin());
    if (step_index == steps.size()) steps.push_back(step);
    const uint32_t next = static_cast<uint32_t>(s.samples.size());
    uint32_t k;
    if (step_index == 0) {
      if (node >= first_step_sample.size()) first_step_sample.resize(s.nodes.size(), kNone);
      uint32_t& slot = first_step_sample[node];
      k = slot == kNone ? (slot = next) : slot;
    } else {
      k = samples.Emplace(static_cast<uint64_t>(node) << 32 | step_index, next).first;
    }
    if (k == next) s.samples.push_back(LocalSample{node, step, 0, 0});
    s.samples[k].calls += pc.first;
    s.samples[k].wall += pc.self_ns;
  }
}

// The backward roots, sorted by interval, each with its "[backward] X" frame and its
// forward op's first piece (looked for on the threads); is_backward gets a bit per
// interval. None with thread_stacks.
std::vector<Link> FindLinks(const Trace& t, const TraceModel& m, const std::vector<LaneStacks>& lanes,
                            std::vector<Segment>& segments, const AggregateOptions& options, ProfileBuilder& b,
                            std::vector<bool>* is_backward, Executor& ex) {
  const size_t n = t.intervals.size();
  std::vector<Link> links;
  is_backward->assign(n, false);
  if (options.thread_stacks || m.backward.empty()) return links;
  for (const BackwardLink& bl : m.backward) links.push_back(Link{bl.backward, bl.forward});
  std::vector<std::pair<uint32_t, uint32_t>> forward_of;  // (forward interval, link), sorted
  std::unordered_map<uint32_t, uint32_t> backward_frame;  // by name: the same few in every step
  for (uint32_t k = 0; k < links.size(); ++k) {
    forward_of.push_back({links[k].forward, k});
    const uint32_t name = t.intervals[links[k].backward].name;
    auto it = backward_frame.find(name);
    if (it == backward_frame.end())
      it = backward_frame.emplace(name, b.FrameFor(BackwardFrameName(t.strings.Get(name)))).first;
    links[k].frame = it->second;
  }
  std::sort(forward_of.begin(), forward_of.end());
  // Few intervals are either: a bit per interval spares the searches for the rest.
  std::vector<bool> is_forward(n);
  for (const Link& k : links) is_forward[k.forward] = true, (*is_backward)[k.backward] = true;
  std::vector<std::vector<uint32_t>> forward_pieces(segments.size());  // first pieces of forward ops
  ParallelFor(ex, segments.size(), [&](size_t g) {
    Segment& sg = segments[g];
    const auto& pieces = lanes[sg.lane].pieces;
    for (uint32_t p = sg.begin; p < sg.end; ++p) {
      if (!pieces[p].first) continue;
      if (is_forward[pieces[p].interval]) forward_pieces[g].push_back(p);
      sg.backward_roots = sg.backward_roots || (*is_backward)[pieces[p].interval];
    }
  });
  for (size_t g = 0; g < segments.size(); ++g) {
    for (uint32_t p : forward_pieces[g]) {
      const uint32_t interval = lanes[segments[g].lane].pieces[p].interval;
      auto it = std::lower_bound(forward_of.begin(), forward_of.end(), std::make_pair(interval, 0u));
      for (; it != forward_of.end() && it->first == interval; ++it) {
        links[it->second].lane = segments[g].lane, links[it->second].piece = p;
      }
    }
  }
  return links;
}

// The profile's node of every segment's node, made in the order one walk over the
// pieces, lane after lane, makes them. Unless thread_stacks, a backward subtree hangs
// under the forward op that created it, below a "[backward] X" frame: a node may then
// depend on a piece of another lane, so nodes are resolved with an explicit stack
// (forward ops are on any lane, stacks thousands deep). A link that would make a cycle
// (a forward op inside its own backward's subtree) is not followed.
std::vector<std::vector<uint32_t>> ResolveNodes(const Folds& folds, std::vector<Link>& links, ProfileBuilder& b) {
  const std::vector<Segment>& segments = folds.segments;
  constexpr uint32_t kUnset = UINT32_MAX, kVisiting = UINT32_MAX - 1;
  std::vector<std::vector<uint32_t>> nodes(segments.size());
  for (size_t g = 0; g < segments.size(); ++g) nodes[g].assign(segments[g].nodes.size(), kUnset);
  using Ref = std::pair<uint32_t, uint32_t>;  // (segment, node)
  auto ref_of_piece = [&](uint32_t lane, uint32_t piece) -> Ref { return folds.Of(lane, piece); };
  auto forward_of = [&](const LocalNode& n) -> const Link* {
    return n.link != kNone && links[n.link].ok ? &links[n.link] : nullptr;
  };
  std::vector<Ref> work;  // a path of dependencies, resolved from the back
  // The node at `from` in work depends on a node still on the path: a cycle, made by a
  // link. The first link on the path from there stops being followed, and what was
  // pushed because of it is resolved afresh.
  auto break_cycle = [&](size_t from, Ref dep) {
    for (size_t j = from; j < work.size(); ++j) {
      Ref next = j + 1 < work.size() ? work[j + 1] : dep;
      const Link* link = forward_of(segments[work[j].first].nodes[work[j].second]);
      if (!link || ref_of_piece(link->lane, link->piece) != next) continue;
      links[static_cast<size_t>(link - links.data())].ok = false;
      for (size_t k = j; k < work.size(); ++k) nodes[work[k].first][work[k].second] = kUnset;
      work.resize(j + 1);
      return;
    }
  };
  for (uint32_t g0 = 0; g0 < segments.size(); ++g0) {
    const Segment& s0 = segments[g0];
    std::vector<uint32_t>& own = nodes[g0];
    for (uint32_t k0 = 0; k0 < s0.nodes.size(); ++k0) {
      if (own[k0] != kUnset) continue;
      // Most nodes follow no link and their parent, made before them, has its node: the
      // node is made here, as the path below would make it.
      const LocalNode& n0 = s0.nodes[k0];
      if (n0.import == kNone && n0.link == kNone) {
        uint32_t parent = n0.parent == kNone ? 0 : own[n0.parent];
        if (parent < kVisiting) {
          own[k0] = b.Node(parent, b.Frame(n0.name));
          continue;
        }
      }
      work.push_back({g0, k0});
      while (!work.empty()) {
        auto [g, k] = work.back();
        uint32_t& node = nodes[g][k];
        if (node < kVisiting) {
          work.pop_back();
          continue;
        }
        const LocalNode& n = segments[g].nodes[k];
        const Link* link = forward_of(n);
        uint32_t parent = 0;
        if (n.import != kNone || link || n.parent != kNone) {
          Ref dep = n.import != kNone ? ref_of_piece(segments[g].lane, n.import)
                    : link            ? ref_of_piece(link->lane, link->piece)
                                      : Ref{g, n.parent};
          uint32_t at = nodes[dep.first][dep.second];
          if (at == kUnset) {
            node = kVisiting;
            work.push_back(dep);
            continue;
          }
          if (at == kVisiting) {
            break_cycle(static_cast<size_t>(std::find(work.begin(), work.end(), dep) - work.begin()), dep);
            continue;
          }
          if (n.import != kNone) {
            node = at;
            work.pop_back();
            continue;
          }
          parent = link ? b.Node(at, link->frame) : at;
        }
        node = b.Node(parent, b.Frame(n.name));
        work.pop_back();
      }
    }
  }
  return nodes;
}

}  // namespace

FoldedLanes FoldLanes(const Trace& t, const TraceModel& m, const std::vector<LaneStacks>& lanes,
                      const AggregateOptions& options, bool step_labels, const FrameKeys& frame_keys,
                      const std::function<const Launchers&()>& launchers, ProfileBuilder& b, Executor& ex) {
  FoldedLanes out{Folds(lanes, options.fold_segment), {}, {}};
  Folds& folds = out.folds;
  std::vector<Segment>& segments = folds.segments;
  std::vector<bool> is_backward;
  out.links = FindLinks(t, m, lanes, segments, options, b, &is_backward, ex);
  const std::vector<Link>& links = out.links;
  // Found by the fold's first item (below), or by the first segment that needs them.
  const Pending<std::vector<uint32_t>> forward_stacks{std::function<std::vector<uint32_t>()>(
      [&] { return ForwardStacks(t, lanes, links, is_backward, folds, frame_keys); })};
  const FoldInput fold{t, m, lanes, links, is_backward, launchers(), step_labels, forward_stacks, frame_keys};
  // The forward stacks first, then the segments without backward roots, then those that
  // wait for the forward stacks (so that no thread waits for them while others fold). As
  // the fold's first item, the forward stacks take one of the call's threads, not one more.
  std::vector<uint32_t> order(segments.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_partition(order.begin(), order.end(), [&](uint32_t g) { return !segments[g].backward_roots; });
  ParallelFor(ex, order.size() + 1, [&](size_t k) {
    if (k == 0) {
      forward_stacks.Shared();
      return;
    }
    Segment& sg = segments[order[k - 1]];
    Fold(fold, sg, &folds.At(sg.lane, sg.begin));
  });
  out.nodes = ResolveNodes(folds, out.links, b);
  return out;
}

}  // namespace torch2pprof
