#include "torch2pprof/aggregator.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <stdexcept>

#include "frame_names.h"
#include "profile_builder.h"
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
       " lanes; partial overlaps split: " + std::to_string(partial);
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

// The call-tree node of every piece, by lane as in `lanes`. Unless thread_stacks, a
// backward subtree hangs under the forward op that created it, below a "[backward] X"
// frame: a node may then depend on a piece of another lane, so nodes are resolved with
// an explicit stack (forward ops are on any lane, stacks thousands deep). A link that
// would make a cycle (a forward op inside its own backward's subtree) is not followed.
std::vector<std::vector<uint32_t>> PieceNodes(const Trace& t, const TraceModel& m, const std::vector<LaneStacks>& lanes,
                                              bool thread_stacks, ProfileBuilder& b) {
  constexpr uint32_t kUnset = UINT32_MAX, kVisiting = UINT32_MAX - 1;
  std::vector<std::vector<uint32_t>> nodes(lanes.size());
  for (size_t l = 0; l < lanes.size(); ++l) nodes[l].assign(lanes[l].pieces.size(), kUnset);
  // Backward roots by interval, and where each one's forward op first piece is.
  struct Link {
    uint32_t backward, forward;
    uint32_t lane = kUnset, piece = kUnset;  // the forward op's first piece
    uint32_t frame = 0;                      // "[backward] X"
    bool ok = true;
  };
  std::vector<Link> links;
  if (!thread_stacks) {
    for (const BackwardLink& bl : m.backward) links.push_back(Link{bl.backward, bl.forward});
  }
  std::vector<std::pair<uint32_t, uint32_t>> forward_of;  // (forward interval, link), sorted
  for (uint32_t k = 0; k < links.size(); ++k) {
    forward_of.push_back({links[k].forward, k});
    links[k].frame = b.FrameFor(BackwardFrameName(t.strings.Get(t.intervals[links[k].backward].name)));
  }
  std::sort(forward_of.begin(), forward_of.end());
  // Few intervals are either: a bit per interval spares the searches for the rest.
  std::vector<bool> is_forward(t.intervals.size()), is_backward(t.intervals.size());
  for (const Link& k : links) is_forward[k.forward] = true, is_backward[k.backward] = true;
  if (!links.empty()) {
    for (uint32_t l = 0; l < lanes.size(); ++l) {
      const auto& pieces = lanes[l].pieces;
      for (uint32_t p = 0; p < pieces.size(); ++p) {
        if (!pieces[p].first || !is_forward[pieces[p].interval]) continue;
        auto it = std::lower_bound(forward_of.begin(), forward_of.end(), std::make_pair(pieces[p].interval, 0u));
        for (; it != forward_of.end() && it->first == pieces[p].interval; ++it) {
          links[it->second].lane = l, links[it->second].piece = p;
        }
      }
    }
  }
  auto link_of = [&](uint32_t interval) -> Link* {  // links are sorted by backward
    if (!is_backward[interval]) return nullptr;
    auto it = std::lower_bound(links.begin(), links.end(), interval,
                               [](const Link& k, uint32_t i) { return k.backward < i; });
    return it != links.end() && it->backward == interval && it->ok && it->lane != kUnset ? &*it : nullptr;
  };
  using PieceRef = std::pair<uint32_t, uint32_t>;  // (lane, piece)
  std::vector<PieceRef> work;                      // a path of dependencies, resolved from the back
  // The piece at `from` in work depends on a piece still on the path: a cycle, made by a
  // link. The first link on the path from there stops being followed, and what was
  // pushed because of it is resolved afresh.
  auto break_cycle = [&](size_t from, PieceRef dep) {
    for (size_t j = from; j < work.size(); ++j) {
      PieceRef next = j + 1 < work.size() ? work[j + 1] : dep;
      Link* link = link_of(lanes[work[j].first].pieces[work[j].second].interval);
      if (!link || PieceRef{link->lane, link->piece} != next) continue;
      link->ok = false;
      for (size_t k = j; k < work.size(); ++k) nodes[work[k].first][work[k].second] = kUnset;
      work.resize(j + 1);
      return;
    }
  };
  for (uint32_t l0 = 0; l0 < lanes.size(); ++l0) {
    std::vector<uint32_t>& lane_nodes = nodes[l0];
    for (uint32_t p0 = 0; p0 < lanes[l0].pieces.size(); ++p0) {
      if (lane_nodes[p0] != kUnset) continue;
      // Most pieces follow no link and their parent, earlier in depth-first order, has
      // its node: the node is made here, as the path below would make it.
      const Piece& first = lanes[l0].pieces[p0];
      if (links.empty() || !is_backward[first.interval]) {
        uint32_t parent = first.parent < 0 ? 0 : lane_nodes[static_cast<size_t>(first.parent)];
        if (parent < kVisiting) {
          lane_nodes[p0] = b.Node(parent, b.Frame(t.intervals[first.interval].name));
          continue;
        }
      }
      work.push_back({l0, p0});
      while (!work.empty()) {
        auto [l, p] = work.back();
        uint32_t& node = nodes[l][p];
        if (node < kVisiting) {
          work.pop_back();
          continue;
        }
        const Piece& pc = lanes[l].pieces[p];
        Link* link = links.empty() ? nullptr : link_of(pc.interval);
        uint32_t parent = 0;
        if (link || pc.parent >= 0) {
          PieceRef dep = link ? PieceRef{link->lane, link->piece} : PieceRef{l, static_cast<uint32_t>(pc.parent)};
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
          parent = link ? b.Node(at, link->frame) : at;
        }
        node = b.Node(parent, b.Frame(t.intervals[pc.interval].name));
        work.pop_back();
      }
    }
  }
  return nodes;
}

// Adds one trace's samples to the profile b builds.
Added AddTrace(const Trace& t, const TraceModel& m, const std::vector<LaneStacks>& lanes,
               const AggregateOptions& options, ProfileBuilder& b) {
  const size_t n = t.intervals.size();
  const bool step_labels = StepLabelsOn(options, m);
  auto step_at = [&](uint32_t lane, int64_t ts) -> int64_t {
    const Step* s = step_labels ? m.StepAt(lane, ts) : nullptr;
    return s ? s->number : -1;
  };
  auto step_of = [&](const Launch& l) -> int64_t {
    const Step* s = step_labels ? m.StepOf(l) : nullptr;
    return s ? s->number : -1;
  };
  // Host events that launched device work, and where in the tree each was.
  std::vector<uint32_t> launchers;
  for (const Launch& l : m.launches) {
    if (l.host_event != kNoEvent) launchers.push_back(l.host_event);
  }
  std::sort(launchers.begin(), launchers.end());
  launchers.erase(std::unique(launchers.begin(), launchers.end()), launchers.end());
  std::vector<bool> is_launcher(n);  // a bit per interval spares most searches
  for (uint32_t e : launchers) {
    if (e < n) is_launcher[e] = true;
  }
  auto launcher_slot = [&](uint32_t e) -> int64_t {
    if (e < n && !is_launcher[e]) return -1;
    auto it = std::lower_bound(launchers.begin(), launchers.end(), e);
    return it != launchers.end() && *it == e ? it - launchers.begin() : -1;
  };
  std::vector<Place> launcher_place(launchers.size());
  std::vector<Place> flow_place(m.launches.size());  // launches from a flow start outside any runtime call
  std::vector<Place> memory_place(t.memory.size());

  // Instants that are no intervals, placed at what was open on their lane then.
  enum class Kind { kZeroLength, kFlow, kMemory };
  struct Point {
    int64_t ts;
    uint32_t index;  // into launchers, m.launches or t.memory
    Kind kind;
  };
  std::vector<std::vector<Point>> points(t.lanes.size());
  for (uint32_t k = 0; k < launchers.size(); ++k) {
    if (launchers[k] >= n)
      points[EventAt(t, launchers[k]).lane].push_back({EventAt(t, launchers[k]).start_ns, k, Kind::kZeroLength});
  }
  for (uint32_t k = 0; k < m.launches.size(); ++k) {
    if (m.launches[k].host_event == kNoEvent)
      points[m.launches[k].lane].push_back({m.launches[k].ts_ns, k, Kind::kFlow});
  }
  for (uint32_t i = 0; i < t.memory.size(); ++i)
    points[t.memory[i].lane].push_back({t.memory[i].ts_ns, i, Kind::kMemory});
  auto place_point = [&](const Point& pt, uint32_t lane, uint32_t node) {
    if (pt.kind == Kind::kZeroLength) {
      launcher_place[pt.index] = Place{b.Node(node, b.Frame(EventAt(t, launchers[pt.index]).name)), lane};
    } else if (pt.kind == Kind::kFlow) {
      flow_place[pt.index] = Place{node, lane};
    } else {
      memory_place[pt.index] = Place{node, lane};
    }
  };

  std::vector<std::vector<uint32_t>> piece_nodes = PieceNodes(t, m, lanes, options.thread_stacks, b);
  std::vector<int64_t> step_of_piece;  // device lanes': their pieces' steps, for their children
  int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
  for (size_t li = 0; li < lanes.size(); ++li) {
    const LaneStacks& ls = lanes[li];
    const std::vector<uint32_t>& node_of_piece = piece_nodes[li];
    const bool device_lane = m.lanes[ls.lane].device;
    if (device_lane) step_of_piece.resize(ls.pieces.size());
    for (size_t i = 0; i < ls.pieces.size(); ++i) {
      const Piece& pc = ls.pieces[i];
      uint32_t node = node_of_piece[i];
      // Host pieces lie in one step window (BuildLanes cut them at the steps' bounds);
      // device pieces take the step their work was launched in.
      int64_t step = -1;
      if (!device_lane) {
        step = step_at(ls.lane, pc.start_ns);
      } else if (const Launch* l = m.LaunchOf(pc.interval)) {
        step = step_of(*l);
      } else if (pc.parent >= 0) {
        step = step_of_piece[static_cast<size_t>(pc.parent)];
      }
      if (device_lane) step_of_piece[i] = step;
      first = std::min(first, pc.start_ns);
      last = std::max(last, pc.end_ns);
      if (pc.first) {
        int64_t slot = launcher_slot(pc.interval);
        if (slot >= 0) launcher_place[static_cast<size_t>(slot)] = Place{node, ls.lane};
      }
      if (pc.self_ns == 0 && !pc.first) continue;
      uint32_t sample = b.Sample(node, b.Labels(ls.lane, step));
      if (pc.first) b.Add(sample, kCalls, 1);
      b.Add(sample, kWall, pc.self_ns);
      if (!b.IsWait(node)) b.Add(sample, kWork, pc.self_ns);
    }
    // What was open at each point: the last piece started at or before it, or the
    // innermost of its ancestors still open (pieces are in depth-first order).
    auto& pts = points[ls.lane];
    std::sort(pts.begin(), pts.end(), [](const Point& x, const Point& y) { return x.ts < y.ts; });
    size_t k = 0;
    for (const Point& pt : pts) {
      while (k < ls.pieces.size() && ls.pieces[k].start_ns <= pt.ts) ++k;
      int64_t c = static_cast<int64_t>(k) - 1;
      while (c >= 0 && ls.pieces[static_cast<size_t>(c)].end_ns <= pt.ts) c = ls.pieces[static_cast<size_t>(c)].parent;
      place_point(pt, ls.lane, c < 0 ? 0 : node_of_piece[static_cast<size_t>(c)]);
    }
    pts.clear();
    std::vector<uint32_t>().swap(piece_nodes[li]);
  }
  for (uint32_t lane = 0; lane < points.size(); ++lane) {
    for (const Point& pt : points[lane]) place_point(pt, lane, 0);  // lanes without intervals: the root
  }

  // Device work under the stack that launched it, labelled with the launching thread
  // and step and with the device and stream it ran on.
  bool has_device = false;
  for (uint32_t i = 0; i < n; ++i) {
    const Interval& d = t.intervals[i];
    if (!IsDeviceRole(m.RoleOf(d))) continue;
    has_device = true;
    const Launch* l = m.LaunchOf(i);
    if (l) {
      const Place& at = l->host_event == kNoEvent ? flow_place[static_cast<size_t>(l - m.launches.data())]
                                                  : launcher_place[static_cast<size_t>(launcher_slot(l->host_event))];
      b.Add(b.Node(at.node, b.Frame(d.name)), b.Labels(at.lane, step_of(*l), d.lane), kGpu, d.end_ns - d.start_ns);
    } else {
      const LaneRole& dl = m.lanes[d.lane];
      std::string where = (dl.device_name.empty() ? "device " + t.lanes[d.lane].pid : dl.device_name) + " stream " +
                          t.lanes[d.lane].tid + " (no launch found)";
      b.Add(b.Node(b.Node(0, b.FrameFor(where)), b.Frame(d.name)), b.Labels(d.lane, -1, d.lane), kGpu,
            d.end_ns - d.start_ns);
    }
  }

  // Allocations where they happened; and, per device, what was still allocated when the
  // allocated total peaked, with what was allocated before the trace began on a frame of its own.
  for (size_t k = 0; k < m.memory.size(); ++k) {
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
  return Added{first, last, has_device};
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
  explicit State(const AggregateOptions& o) : options(o), b(&p, o.max_depth) {}
  bool has_device = false, has_memory = false;
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
  s.has_memory |= !trace.memory.empty();
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
    if (tl.before_trace_bytes > 0) input.notes.push_back(MemoryNote(tl));
  }
  s.inputs.push_back(std::move(input));
}

uint64_t Aggregator::folded_stacks() const { return s_->b.folds(); }

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
  if (!s.inputs.empty()) {
    const std::string& first = s.inputs[0].file;
    p.source_file = first.substr(first.find_last_of('/') == std::string::npos ? 0 : first.find_last_of('/') + 1);
    if (s.inputs.size() > 1) p.source_file += " and " + std::to_string(s.inputs.size() - 1) + " more";
  }
  for (size_t i = 0; i < s.inputs.size(); ++i) {
    std::string who = s.options.rank_labels ? " (rank " + std::to_string(ranks[i]) + ")" : "";
    p.comments.push_back(std::string("torch2pprof ") + kVersion + " convert " + s.inputs[i].file + who);
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
  TraceModel model = BuildModel(trace);
  return Aggregate(trace, model, BuildLanes(trace, ConvertBuildOptions(model, threads)));
}

}  // namespace torch2pprof
