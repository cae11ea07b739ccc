#include "torch2pprof/aggregator.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <future>
#include <limits>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <unordered_map>

#include "base/parallel_for.h"
#include "base/sorted_runs.h"
#include "base/utf8.h"
#include "convert/frame_names.h"
#include "convert/profile_builder.h"
#include "torch2pprof/version.h"

namespace torch2pprof {
namespace {

// Values are summed in a fixed layout while traces are added; Aggregator::Finish
// drops the columns no trace had (gpu without device work, memory without [memory] events).
constexpr int kCalls = 0, kWall = 1, kWork = 2, kGpu = 3, kAllocObjects = 4, kLayoutSize = 8;
constexpr uint32_t kNoEvent = Launch::kNoEvent;

// Where something happened in the call tree: a node and the thread.
struct Place {
  uint32_t node = 0;
  uint32_t lane = ProfileBuilder::kNoLane;
};

struct Added {
  int64_t first, last;  // time span of the trace's intervals (first > last: none)
  bool device;          // it has device work
  uint64_t saturated;   // device sums held at the 64-bit limit
};

std::string Summary(const Trace& trace, const std::vector<LaneStacks>& lanes) {
  std::string s = "events: " + std::to_string(trace.stats.events) + " (";
  bool first = true;
  for (const auto& [ph, n] : trace.stats.phases) {
    s += (first ? "" : ", ") + ph + " " + std::to_string(n);
    first = false;
  }
  uint64_t partial = 0;
  for (const auto& l : lanes) partial += l.partial_overlaps;
  s += "); intervals: " + std::to_string(trace.intervals.size()) + " on " + std::to_string(lanes.size()) +
       " lanes; intervals that outlive their caller: " + std::to_string(partial);
  return s;
}

std::string Skipped(const Trace& trace) {
  std::string s = "skipped: " + std::to_string(trace.stats.skipped_total());
  for (size_t i = 0; i < kSkipReasons.size(); ++i) {
    if (trace.stats.skipped[i])
      s += std::string(", ") + kSkipReasons[i].key + " " + std::to_string(trace.stats.skipped[i]);
  }
  if (trace.stats.repaired) s += "; repaired " + std::to_string(trace.stats.repaired);
  if (trace.stats.python_clipped) {
    s += "; python_function events clipped to their Python parent's end: " + std::to_string(trace.stats.python_clipped);
  }
  return s;
}

// Lanes' pieces are folded in segments (AggregateOptions::fold_segment pieces), each into
// a tree of its own, side by side on the threads; the segments' trees, a few thousand
// nodes where the lanes have hundreds of thousands of pieces, then join the profile's
// one at a time in lane and piece order, so that its nodes, frames and samples come in
// the order one walk over the pieces makes them.
constexpr uint32_t kNone = UINT32_MAX;

// Backward roots by interval, and where each one's forward op first piece is.
struct Link {
  uint32_t backward, forward;
  uint32_t lane = kNone, piece = kNone;  // the forward op's first piece
  uint32_t frame = 0;                    // "[backward] X"
  bool ok = true;                        // false once it would make a cycle
};

// A node of a segment's tree: under a node of the segment (or the root), with an event
// name. A backward root follows a link instead (that of its first piece): it hangs
// under the forward op, or, where the link would make a cycle, under `parent`. An import
// stands for a piece of an earlier segment of the lane (a parent of the segment's first
// pieces): it has no frame.
struct LocalNode {
  uint32_t parent;  // a node of the segment, or kNone: the root
  uint32_t name;    // StringTable id
  uint32_t link;    // index into the links, or kNone
  uint32_t import;  // the piece an import stands for, or kNone
};

struct LocalSample {
  uint32_t node;
  int64_t step;
  int64_t calls, wall;
};

struct Segment {
  uint32_t lane;                                         // index into the lanes
  uint32_t begin, end;                                   // its pieces
  std::vector<LocalNode> nodes;                          // in the order of their first piece
  std::vector<LocalSample> samples;                      // in the order of their first piece
  std::vector<std::pair<uint32_t, uint32_t>> launchers;  // (launcher slot, node)
  bool backward_roots = false;                           // it waits for the forward stacks
  int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
};

// The lanes' pieces cut into segments every `size` pieces (at fixed places, never by
// threads), and one table of each piece's node in its segment's tree, lane after lane.
struct Folds {
  uint32_t size;
  std::vector<Segment> segments;
  std::vector<uint32_t> first_segment;  // by lane (index into the lanes), and one past the last
  std::vector<uint32_t> table;
  std::vector<size_t> lane_at;  // where each lane's pieces start in the table

  Folds(const std::vector<LaneStacks>& lanes, uint32_t segment_size) : size(segment_size) {
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
  uint32_t& At(uint32_t lane, uint32_t piece) { return table[lane_at[lane] + piece]; }
  // A piece's segment and, once folded, its node in the segment's tree.
  std::pair<uint32_t, uint32_t> Of(uint32_t lane, uint32_t piece) const {
    return {first_segment[lane] + piece / size, table[lane_at[lane] + piece]};
  }
};

// The host events that launched device work, sorted: a launcher's slot is its index.
struct Launchers {
  std::vector<uint32_t> events;
  std::vector<bool> is;  // a bit per interval spares most searches
  Launchers(const TraceModel& m, size_t intervals) : is(intervals) {
    for (const Launch& l : m.launches) {
      if (l.host_event != kNoEvent) events.push_back(l.host_event);
    }
    SortRuns(events.begin(), events.end(), std::less<>());
    events.erase(std::unique(events.begin(), events.end()), events.end());
    for (uint32_t e : events) {
      if (e < intervals) is[e] = true;
    }
  }
  // The slot of a launching event (an interval, or a zero-length event past them), else -1.
  int64_t SlotOf(uint32_t e) const {
    if (e < is.size() && !is[e]) return -1;
    auto it = std::lower_bound(events.begin(), events.end(), e);
    return it != events.end() && *it == e ? it - events.begin() : -1;
  }
};

// Event names as the frames they become: names that FrameSystemName changes (step
// numbers, addresses) are keyed by what it makes of them, others by their string id.
// Made once per trace and read by every segment: a table per segment, as long as the
// trace's string table, cost lanes x names (a million lanes: minutes of memset).
class FrameKeys {
 public:
  explicit FrameKeys(const Trace& t) : of_name_(t.strings.size(), kNone) {
    std::unordered_map<std::string, uint32_t> canonical;
    for (const Interval& iv : t.intervals) {
      uint32_t& key = of_name_[iv.name];
      if (key != kNone) continue;
      std::string_view text = t.strings.Get(iv.name);
      std::string frame = FrameSystemName(text);
      key = frame == text ? iv.name : 0x80000000u | canonical.emplace(std::move(frame), canonical.size()).first->second;
    }
  }
  uint32_t operator()(uint32_t name) const { return of_name_[name]; }

 private:
  std::vector<uint32_t> of_name_;
};

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
  HugeVector<uint32_t> table(folds.table.size(), kUnknown);
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

// A step's number, or -1 for none.
int64_t Number(const Step* step) { return step ? step->number : -1; }

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
      step = device_lane ? Number(in.m.DeviceStepOf(pc.interval, in.t.intervals[pc.interval]))
                         : Number(in.m.StepAt(ls.lane, pc.start_ns));
    }
    s.first = std::min(s.first, pc.start_ns);
    s.last = std::max(s.last, pc.end_ns);
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
                            std::vector<bool>* is_backward) {
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
  ParallelFor(segments.size(), options.threads, [&](size_t g) {
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

// Device work under the stack that launched it (place_of: where a launch was), labelled
// with the launching thread and step and with the device and stream it ran on. Summed
// per range of intervals on the threads, by what decides its sample; then added range
// after range, each sum where its first interval is, as one walk over the intervals
// would add them. Returns whether there was any.
bool AddDeviceWork(const Trace& t, const TraceModel& m, const AggregateOptions& options, bool step_labels,
                   const FrameKeys& frame_key, uint64_t* saturated_sums,
                   const std::function<const Place&(const Launch&)>& place_of, ProfileBuilder& b) {
  auto step_of = [&](uint32_t e) -> int64_t { return step_labels ? Number(m.DeviceStepOf(e, t.intervals[e])) : -1; };
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
  ParallelFor(ranges, options.threads, [&](size_t r) {
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

// An instant that is no interval, placed at what was open on its lane then.
struct Point {
  enum Kind : uint8_t { kZeroLength, kFlow, kMemory };
  int64_t ts;
  uint32_t index;  // into launchers, m.launches or t.memory
  Kind kind;
};

struct Points {
  Launchers launchers;
  std::vector<std::vector<Point>> by_lane;  // by time on lanes with pieces, else as found
};

Points FindPoints(const Trace& t, const TraceModel& m, const std::vector<LaneStacks>& lanes, bool memory) {
  Points out{Launchers(m, t.intervals.size()), std::vector<std::vector<Point>>(t.lanes.size())};
  const std::vector<uint32_t>& launchers = out.launchers.events;
  auto& points = out.by_lane;
  for (uint32_t k = 0; k < launchers.size(); ++k) {
    if (launchers[k] >= t.intervals.size())
      points[EventAt(t, launchers[k]).lane].push_back({EventAt(t, launchers[k]).start_ns, k, Point::kZeroLength});
  }
  for (uint32_t k = 0; k < m.launches.size(); ++k) {
    if (m.launches[k].host_event == kNoEvent)
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

// Adds one trace's samples to the profile b builds.
Added AddTrace(const Trace& t, const TraceModel& m, const std::vector<LaneStacks>& lanes,
               const AggregateOptions& options, ProfileBuilder& b) {
  const bool step_labels = StepLabelsOn(options, m);
  auto step_at = [&](uint32_t lane, int64_t ts) -> int64_t { return step_labels ? Number(m.StepAt(lane, ts)) : -1; };
  // Host events that launched device work, and the instants that are no intervals, by
  // lane and time: found beside the links and forward stacks, which do not need them.
  auto found_points = Beside(options.threads, [&] { return FindPoints(t, m, lanes, options.memory); });
  // The pieces: folded segment by segment on the threads, the segments' trees joined to
  // the profile's in piece order, then their samples lane after lane, and each lane's
  // points once its pieces have their nodes.
  Folds folds(lanes, options.fold_segment);
  std::vector<Segment>& segments = folds.segments;
  const FrameKeys frame_keys(t);
  std::vector<bool> is_backward;
  std::vector<Link> links = FindLinks(t, m, lanes, segments, options, b, &is_backward);
  // Found by the fold's first item (below), or by the first segment that needs them.
  const Pending<std::vector<uint32_t>> forward_stacks =
      Beside(1, [&] { return ForwardStacks(t, lanes, links, is_backward, folds, frame_keys); });
  Points found = found_points.get();
  const Launchers& launcher_slots = found.launchers;
  const std::vector<uint32_t>& launchers = launcher_slots.events;
  auto launcher_slot = [&](uint32_t e) { return launcher_slots.SlotOf(e); };
  std::vector<std::vector<Point>>& points = found.by_lane;
  std::vector<Place> launcher_place(launchers.size());
  std::vector<Place> flow_place(m.launches.size());  // launches from a flow start outside any runtime call
  std::vector<Place> memory_place(t.memory.size());
  auto place_point = [&](const Point& pt, uint32_t lane, uint32_t node) {
    if (pt.kind == Point::kZeroLength) {
      launcher_place[pt.index] = Place{b.Node(node, b.Frame(EventAt(t, launchers[pt.index]).name)), lane};
    } else if (pt.kind == Point::kFlow) {
      flow_place[pt.index] = Place{node, lane};
    } else {
      memory_place[pt.index] = Place{node, lane};
    }
  };
  const FoldInput fold{t, m, lanes, links, is_backward, launcher_slots, step_labels, forward_stacks, frame_keys};
  // The forward stacks first, then the segments without backward roots, then those that
  // wait for the forward stacks (gpt2_big at two threads: both threads had waited 3.5
  // ms). As the fold's first item, the forward stacks take one of the command's threads,
  // not one more: a third busy thread on two cores can be left on one core's queue while
  // the other idles, for a scheduler tick (seen: the fold's second thread started 2 ms late).
  std::vector<uint32_t> order(segments.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_partition(order.begin(), order.end(), [&](uint32_t g) { return !segments[g].backward_roots; });
  ParallelFor(order.size() + 1, options.threads, [&](size_t k) {
    if (k == 0) {
      forward_stacks.Shared();
      return;
    }
    Segment& sg = segments[order[k - 1]];
    Fold(fold, sg, &folds.At(sg.lane, sg.begin));
  });
  std::vector<std::vector<uint32_t>> nodes = ResolveNodes(folds, links, b);
  int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
  for (uint32_t li = 0; li < lanes.size(); ++li) {
    const LaneStacks& ls = lanes[li];
    // A device lane's time is device time (the gpu samples, under the launching stacks):
    // its own samples count in wall, never in work, where the self time of a device
    // annotation (ProfilerStep#N on the stream) would be the device idling.
    const bool work = !m.lanes[ls.lane].device;
    for (uint32_t g = folds.first_segment[li]; g < folds.first_segment[li + 1]; ++g) {
      const Segment& sg = segments[g];
      first = std::min(first, sg.first);
      last = std::max(last, sg.last);
      for (auto [slot, k] : sg.launchers) launcher_place[slot] = Place{nodes[g][k], ls.lane};
      for (const LocalSample& ss : sg.samples) {
        uint32_t node = nodes[g][ss.node];
        uint32_t sample = b.Sample(node, b.Labels(ls.lane, ss.step));
        b.Add(sample, kCalls, ss.calls);
        b.Add(sample, kWall, ss.wall);
        if (work && !b.IsWait(node)) b.Add(sample, kWork, ss.wall);
      }
    }
    auto node_of_piece = [&](size_t piece) {
      auto [g, k] = folds.Of(li, static_cast<uint32_t>(piece));
      return nodes[g][k];
    };
    // What was open at each point: the last piece started at or before it, or the
    // innermost of its ancestors still open (pieces are in depth-first order).
    auto& pts = points[ls.lane];
    size_t k = 0;
    for (const Point& pt : pts) {
      while (k < ls.pieces.size() && ls.pieces[k].start_ns <= pt.ts) ++k;
      int64_t c = static_cast<int64_t>(k) - 1;
      while (c >= 0 && ls.pieces[static_cast<size_t>(c)].end_ns <= pt.ts) c = ls.pieces[static_cast<size_t>(c)].parent;
      place_point(pt, ls.lane, c < 0 ? 0 : node_of_piece(static_cast<size_t>(c)));
    }
    pts.clear();
  }
  for (uint32_t lane = 0; lane < points.size(); ++lane) {
    for (const Point& pt : points[lane]) place_point(pt, lane, 0);  // lanes without intervals: the root
  }

  uint64_t saturated = 0;
  for (const MemoryTimeline& tl : m.memory) saturated += tl.saturated;
  const bool has_device = AddDeviceWork(
      t, m, options, step_labels, frame_keys, &saturated,
      [&](const Launch& l) -> const Place& {
        return l.host_event == kNoEvent ? flow_place[static_cast<size_t>(&l - m.launches.data())]
                                        : launcher_place[static_cast<size_t>(launcher_slot(l.host_event))];
      },
      b);

  // Allocations where they happened; and, per device, what was still allocated when the
  // allocated total peaked, with what was allocated before the trace began on a frame of its own.
  for (size_t k = 0; options.memory && k < m.memory.size(); ++k) {
    const MemoryTimeline& tl = m.memory[k];
    auto add = [&](uint32_t i, int column) {
      const MemoryEvent& e = t.memory[i];
      Place at = memory_place[i];
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
  if (first > last) {  // a trace of memory events only
    for (const MemoryEvent& e : t.memory) first = std::min(first, e.ts_ns), last = std::max(last, e.ts_ns);
  }
  return Added{first, last, has_device, saturated};
}

// One comment line per device whose peak holds memory the trace did not allocate.
std::string MemoryNote(const MemoryTimeline& tl) {
  return "memory " + tl.device + ": peak " + std::to_string(tl.peak_bytes) + " bytes (Total Allocated), of which " +
         std::to_string(tl.before_trace_bytes) +
         " bytes were allocated before the trace began (inuse_space frame [allocated before the trace began])";
}

}  // namespace

struct Aggregator::State {
  Profile p;
  AggregateOptions options;
  ProfileBuilder b;
  explicit State(const AggregateOptions& o) : options(o), b(&p, o.max_depth) {
    options.fold_segment = std::max(1u, options.fold_segment);
  }
  bool has_device = false, has_memory = false;
  uint64_t saturated = 0;  // the traces' sums held at the 64-bit limit, beyond the builder's
  int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
  int64_t time_nanos = 0;
  struct Input {
    std::string file, summary, skipped;
    std::vector<std::string> notes;
  };
  std::vector<Input> inputs;
};

Aggregator::Aggregator(const AggregateOptions& options) : s_(std::make_unique<State>(options)) {
  s_->b.set_labels(options.labels);
  s_->p.sample_types = {{"calls", "count"},         {"wall", "nanoseconds"},    {"work", "nanoseconds"},
                        {"gpu", "nanoseconds"},     {"alloc_objects", "count"}, {"alloc_space", "bytes"},
                        {"inuse_objects", "count"}, {"inuse_space", "bytes"}};
}
Aggregator::~Aggregator() = default;
Aggregator::Aggregator(Aggregator&&) noexcept = default;
Aggregator& Aggregator::operator=(Aggregator&&) noexcept = default;

void Aggregator::Add(const Trace& trace, const TraceModel& model, const std::vector<LaneStacks>& lanes) {
  State& s = *s_;
  // The rank label holds the input's position until Finish knows the ranks.
  s.b.Begin(trace, model, s.options.rank_labels ? static_cast<int64_t>(s.inputs.size()) : -1);
  Added added = AddTrace(trace, model, lanes, s.options, s.b);
  s.has_device |= added.device;
  s.saturated += added.saturated;
  s.has_memory |= s.options.memory && !trace.memory.empty();
  if (added.first <= added.last && added.first < s.first) s.time_nanos = WallClockStart(trace, added.first);
  s.first = std::min(s.first, added.first);
  s.last = std::max(s.last, added.last);
  State::Input input{trace.file, Summary(trace, lanes), Skipped(trace), {}};
  if (!model.steps.empty()) {
    input.notes.push_back(StepLabelsOn(s.options, model)
                              ? "step labels: on (" + std::to_string(model.steps.size()) + " steps)"
                              : "step labels: off (" + std::to_string(model.steps.size()) +
                                    " steps; --step-labels on adds them, one sample per stack and step)");
  }
  for (const MemoryTimeline& tl : model.memory) {
    if (s.options.memory && tl.before_trace_bytes > 0) input.notes.push_back(MemoryNote(tl));
  }
  s.inputs.push_back(std::move(input));
}

uint64_t Aggregator::folded_stacks() const { return s_->b.folds(); }
uint64_t Aggregator::saturated() const { return s_->saturated + s_->b.saturated(); }

Profile Aggregator::Finish(const std::vector<int64_t>& ranks) && {
  State& s = *s_;
  if (s.options.rank_labels && ranks.size() != s.inputs.size()) {
    throw std::logic_error("Aggregator::Finish: one rank per trace added");
  }
  Profile p = std::move(s.p);
  std::vector<int> keep = {kCalls, kWall, kWork};
  if (s.has_device) keep.push_back(kGpu);
  if (s.has_memory) {
    for (int k = kAllocObjects; k < kLayoutSize; ++k) keep.push_back(k);
  }
  std::vector<ValueType> types;
  for (int k : keep) types.push_back(p.sample_types[static_cast<size_t>(k)]);
  p.sample_types = std::move(types);
  for (Sample& sample : p.samples) {
    std::vector<int64_t> values;
    values.reserve(keep.size());
    for (int k : keep) values.push_back(sample.values[static_cast<size_t>(k)]);
    sample.values = std::move(values);
  }
  if (s.options.rank_labels) {
    for (auto& labels : p.label_sets) {
      for (Label& label : labels) {
        if (label.key == "rank") label.num = ranks[static_cast<size_t>(label.num)];
      }
    }
  }
  p.default_sample_type = "work";
  p.period_type = {"wall", "nanoseconds"};
  p.period = 1;
  // The inputs' file names, not their paths: a profile is shared, and pprof prints its
  // comments at the top of every view.
  auto base = [](const std::string& path) {
    return VisibleText(path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1));
  };
  if (!s.inputs.empty()) {
    p.source_file = base(s.inputs[0].file);
    if (s.inputs.size() > 1) p.source_file += " and " + std::to_string(s.inputs.size() - 1) + " more";
  }
  for (size_t i = 0; i < s.inputs.size(); ++i) {
    std::string who = s.options.rank_labels ? " (rank " + std::to_string(ranks[i]) + ")" : "";
    p.comments.push_back(std::string("torch2pprof ") + kVersion + " convert " + base(s.inputs[i].file) + who);
    p.comments.push_back(std::move(s.inputs[i].summary));
    p.comments.push_back(std::move(s.inputs[i].skipped));
    for (std::string& note : s.inputs[i].notes) p.comments.push_back(std::move(note));
  }
  if (s.b.folds()) {
    p.comments.push_back(std::to_string(s.b.folds()) + " stacks deeper than " + std::to_string(s.options.max_depth) +
                         " frames: their deeper frames fold into [deeper frames truncated]");
  }
  if (s.first <= s.last) {
    p.duration_nanos = s.last - s.first;
    p.time_nanos = s.time_nanos;
  }
  return p;
}

Profile Aggregate(const Trace& trace, const TraceModel& model, const std::vector<LaneStacks>& lanes,
                  const AggregateOptions& options) {
  Aggregator a(options);
  a.Add(trace, model, lanes);
  return std::move(a).Finish();
}

bool StepLabelsOn(const AggregateOptions& options, const TraceModel& model) {
  if (!options.labels) return false;
  if (options.step_labels == StepLabels::kAuto) return model.steps.size() <= kAutoStepLabels;
  return options.step_labels == StepLabels::kOn;
}

BuildOptions ConvertBuildOptions(const TraceModel& model, int threads, const AggregateOptions& options) {
  BuildOptions build;
  build.threads = threads;
  if (StepLabelsOn(options, model)) build.cuts = model.StepBoundaries();
  return build;
}

Profile Aggregate(const Trace& trace, int threads) {
  TraceModel model = BuildModel(trace, threads);
  AggregateOptions options;
  options.threads = threads;
  return Aggregate(trace, model, BuildLanes(trace, ConvertBuildOptions(model, threads, options)), options);
}

}  // namespace torch2pprof
