#include "torch2pprof/aggregator.h"

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <stdexcept>
#include <unordered_map>

#include "torch2pprof/version.h"

namespace torch2pprof {
namespace {

bool IsHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Python paths are long and mostly the same prefix; the readable name keeps what
// follows the last site-packages/ (the module path), the full path stays in filename.
std::string_view ShortPath(std::string_view path) {
  for (std::string_view marker : {"site-packages/", "dist-packages/"}) {
    size_t at = path.rfind(marker);
    if (at != std::string_view::npos) return path.substr(at + marker.size());
  }
  return path;
}

// pprof's symbolizer "simplifies" every function whose name equals its system name
// and looks like demangled C++ (has <>[] or ::): it deletes each balanced (...) and
// <...>. Trace names such as "<built-in method add_ of Tensor object>" would become
// empty, "Memcpy HtoD (Pageable -> Device)" would merge with its Pinned twin, and
// template instantiations of one kernel would merge. So such a frame gets a name
// that differs from its system name, which pprof then shows as it is.
bool LooksLikeCpp(std::string_view s) {
  if (s.find(".<") != std::string_view::npos || s.find("]).") != std::string_view::npos) return false;
  return s.find_first_of("<>[]") != std::string_view::npos || s.find("::") != std::string_view::npos;
}

std::string RemoveMatching(std::string s, char open, char close) {
  int depth = 0;
  size_t first = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == open) {
      if (++depth == 1) first = i;
    } else if (s[i] == close) {
      if (--depth < 0) return s;
      if (depth == 0) {
        s.erase(first, i + 1 - first);
        i = first - 1;  // wraps to first after ++i; s[first] is the next unseen char
      }
    }
  }
  return s;
}

// "void k<4, F<float> >(int, F<float>)" -> "void k<4, F<float> >": the parameter list of
// a C++ signature, which directly follows an identifier or a template's '>'.
std::string_view WithoutParameters(std::string_view s) {
  if (s.empty() || s.back() != ')') return s;
  int depth = 0;
  for (size_t i = s.size(); i-- > 0;) {
    if (s[i] == ')') {
      ++depth;
    } else if (s[i] == '(' && --depth == 0) {
      if (i == 0) return s;
      char c = s[i - 1];
      bool ident = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '>';
      return ident ? s.substr(0, i) : s;
    }
  }
  return s;
}

std::string ReadableName(const std::string& system_name) {
  if (!LooksLikeCpp(system_name)) return system_name;
  if (RemoveMatching(RemoveMatching(system_name, '(', ')'), '<', '>') == system_name) return system_name;
  std::string_view short_name = WithoutParameters(system_name);
  if (short_name.size() != system_name.size()) return std::string(short_name);
  return system_name + " ";  // any difference stops pprof's rewrite; this one is invisible
}

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

}  // namespace

std::string FrameSystemName(std::string_view name) {
  std::string out;
  size_t from = 0;
  for (;;) {
    size_t at = name.find(" at 0x", from);
    size_t digits = at == std::string_view::npos ? 0 : at + 6;
    size_t stop = digits;
    while (stop < name.size() && IsHex(name[stop])) ++stop;
    if (at == std::string_view::npos) break;
    if (stop == digits) {  // " at 0x" without hex digits is not an address
      out.append(name.substr(from, digits - from));
      from = digits;
      continue;
    }
    out.append(name.substr(from, at - from));
    from = stop;
  }
  out.append(name.substr(from));
  return out;
}

Frame MakeFrame(std::string_view system_name) {
  Frame f;
  f.system_name = std::string(system_name);
  f.name = ReadableName(f.system_name);
  // Kineto's Python frames: "path/to/file.py(123): func". The path may itself
  // contain ".py(", so the last match that parses wins, as a greedy regex would.
  if (system_name.find('\n') != std::string_view::npos) return f;
  size_t at = system_name.size();
  while (at > 0) {
    at = system_name.rfind(".py(", at - 1);
    if (at == std::string_view::npos) break;
    size_t d = at + 4, e = d;
    while (e < system_name.size() && IsDigit(system_name[e])) ++e;
    if (e == d || e - d > 18 || system_name.substr(e, 3) != "): ") continue;
    std::string_view path = system_name.substr(0, at + 3);
    std::string_view func = system_name.substr(e + 3);
    f.filename = std::string(path);
    f.line = std::stoll(std::string(system_name.substr(d, e - d)));
    f.name = std::string(func) + " " + std::string(ShortPath(path)) + ":" + std::to_string(f.line);
    if (f.name == f.system_name) f.name += " ";
    break;
  }
  return f;
}

namespace {

constexpr int kCalls = 0, kWall = 1;

// "cpu", "cuda:0", or "type 2:0" for other device types of [memory] events.
std::string MemoryDevice(const MemoryEvent& m) {
  if (m.device_type == 0) return "cpu";
  return (m.device_type == 1 ? std::string("cuda:") : "type " + std::to_string(m.device_type) + ":") +
         std::to_string(m.device_id);
}

// Where something was launched from: a call-tree node, its step, its thread.
struct Launch {
  uint32_t node;
  int32_t step;
  uint32_t lane;
};

// Launches by key (correlation + 1, or flow id): a sorted vector, a third of a hash
// map's memory; the first entry of a key wins, as a map's emplace would.
template <typename Key>
class LaunchIndex {
 public:
  void Add(Key key, const Launch& launch) { entries_.push_back({key, static_cast<uint32_t>(entries_.size()), launch}); }
  void Seal() {
    std::sort(entries_.begin(), entries_.end(),
              [](const Entry& x, const Entry& y) { return x.key != y.key ? x.key < y.key : x.order < y.order; });
  }
  const Launch* Find(Key key) const {
    auto it = std::lower_bound(entries_.begin(), entries_.end(), key, [](const Entry& e, Key k) { return e.key < k; });
    return it != entries_.end() && it->key == key ? &it->launch : nullptr;
  }

 private:
  struct Entry {
    Key key;
    uint32_t order;
    Launch launch;
  };
  std::vector<Entry> entries_;
};

class ProfileBuilder {
 public:
  explicit ProfileBuilder(Profile* p) : p_(*p) { p_.tree.push_back(TreeNode{0, 0}); }

  // The trace whose events come next; rank < 0: no rank label.
  void Begin(const Trace& trace, int64_t rank) {
    t_ = &trace;
    rank_ = rank;
    frame_of_name_.assign(trace.strings.size(), -1);
    label_index_.clear();
    label_keys_.assign(p_.label_sets.size(), LabelKey{~0u, 0, 0, 0});  // earlier traces' sets never match
  }

  uint32_t Frame(uint32_t name) {
    if (frame_of_name_[name] < 0)
      frame_of_name_[name] = static_cast<int32_t>(FrameFor(FrameSystemName(t_->strings.Get(name))));
    return static_cast<uint32_t>(frame_of_name_[name]);
  }

  uint32_t FrameFor(const std::string& system_name) {
    auto [it, inserted] = frame_index_.emplace(system_name, static_cast<uint32_t>(p_.frames.size()));
    if (inserted) p_.frames.push_back(MakeFrame(system_name));
    return it->second;
  }

  uint32_t Node(uint32_t parent, uint32_t frame) {
    auto [it, inserted] =
        child_.emplace((static_cast<uint64_t>(parent) << 32) | frame, static_cast<uint32_t>(p_.tree.size()));
    if (inserted) p_.tree.push_back(TreeNode{parent, frame});
    return it->second;
  }

  // Labels: the thread's pid, tid and name, the step, and for device samples the
  // device and stream the work ran on.
  uint32_t Labels(uint32_t lane, int64_t step, int64_t device_lane = -1, const std::string& memory_device = "") {
    // Called per piece: an integer key, not a string. Memory devices are few: numbered.
    int32_t memory = -1;
    if (!memory_device.empty()) {
      auto [m, added] = memory_ids_.emplace(memory_device, static_cast<int32_t>(memory_ids_.size()));
      memory = m->second;
    }
    uint64_t key = (static_cast<uint64_t>(lane) << 32) ^
                   (static_cast<uint64_t>(static_cast<uint32_t>(step)) * 0x9E3779B97F4A7C15ULL) ^
                   (static_cast<uint64_t>(device_lane + 1) << 40) ^ (static_cast<uint64_t>(memory + 1) << 52);
    LabelKey full{lane, step, device_lane, memory};
    auto range = label_index_.equal_range(key);
    for (auto it = range.first; it != range.second; ++it) {
      if (label_keys_[it->second] == full) return it->second;
    }
    uint32_t id = static_cast<uint32_t>(p_.label_sets.size());
    label_index_.emplace(key, id);
    label_keys_.push_back(full);
    const Lane& l = t_->lanes[lane];
    std::vector<Label> labels = {{"pid", l.pid, 0, false}, {"tid", l.tid, 0, false}};
    if (rank_ >= 0) labels.push_back({"rank", "", rank_, true});
    if (!l.thread_name.empty()) labels.push_back({"thread", l.thread_name, 0, false});
    if (step >= 0) labels.push_back({"step", "", step, true});
    if (device_lane >= 0) {
      const Lane& d = t_->lanes[static_cast<size_t>(device_lane)];
      labels.push_back({"device", d.device >= 0 ? std::to_string(d.device) : d.pid, 0, false});
      labels.push_back({"stream", d.tid, 0, false});
    }
    if (!memory_device.empty()) labels.push_back({"device", memory_device, 0, false});
    p_.label_sets.push_back(std::move(labels));
    return id;
  }

  void Add(uint32_t node, uint32_t labels, int index, int64_t value) {
    auto [it, inserted] =
        sample_.emplace((static_cast<uint64_t>(node) << 32) | labels, static_cast<uint32_t>(p_.samples.size()));
    if (inserted) p_.samples.push_back(Sample{node, labels, std::vector<int64_t>(p_.sample_types.size(), 0)});
    p_.samples[it->second].values[static_cast<size_t>(index)] += value;
  }

 private:
  const Trace* t_ = nullptr;
  int64_t rank_ = -1;
  Profile& p_;
  std::vector<int32_t> frame_of_name_;
  std::unordered_map<std::string, uint32_t> frame_index_;
  std::unordered_map<uint64_t, uint32_t> child_;
  struct LabelKey {
    uint32_t lane;
    int64_t step;
    int64_t device_lane;
    int32_t memory;
    bool operator==(const LabelKey& o) const {
      return lane == o.lane && step == o.step && device_lane == o.device_lane && memory == o.memory;
    }
  };
  std::unordered_multimap<uint64_t, uint32_t> label_index_;  // hash of a LabelKey -> label set
  std::vector<LabelKey> label_keys_;                         // per label set of this trace
  std::unordered_map<std::string, int32_t> memory_ids_;
  std::unordered_map<uint64_t, uint32_t> sample_;
};

// Roles by category id, worked out once per category actually used.
class RoleCache {
 public:
  explicit RoleCache(const Trace& trace) : trace_(trace), known_(trace.strings.size(), -1) {}
  Role Of(uint32_t cat) {
    if (known_[cat] < 0) known_[cat] = static_cast<int8_t>(RoleOfCategory(trace_.strings.Get(cat)));
    return static_cast<Role>(known_[cat]);
  }

 private:
  const Trace& trace_;
  std::vector<int8_t> known_;
};

// N of "ProfilerStep#N", or -1.
int64_t StepNumber(std::string_view name) {
  constexpr std::string_view kPrefix = "ProfilerStep#";
  if (name.substr(0, kPrefix.size()) != kPrefix || name.size() == kPrefix.size() || name.size() > kPrefix.size() + 18) {
    return -1;
  }
  int64_t n = 0;
  for (char c : name.substr(kPrefix.size())) {
    if (!IsDigit(c)) return -1;
    n = n * 10 + (c - '0');
  }
  return n;
}

}  // namespace

namespace {

// Values are summed in a fixed layout while traces are added; Aggregator::Finish
// drops the columns no trace had (gpu without device work, memory without [memory] events).
constexpr int kGpu = 2, kAllocObjects = 3, kLayoutSize = 7;

struct Added {
  int64_t first, last;  // time span of the trace's intervals (first > last: none)
  bool device;          // it has device work
};

// Adds one trace's samples to the profile b builds.
Added AddTrace(const Trace& trace, const std::vector<LaneStacks>& lanes, ProfileBuilder& b) {
  RoleCache roles(trace);
  auto role = [&](const Interval& iv) { return roles.Of(iv.cat); };
  bool has_device = std::any_of(trace.intervals.begin(), trace.intervals.end(),
                                [&](const Interval& iv) { return IsDeviceRole(role(iv)); });

  // Launch points that are no intervals: zero-length launch calls and flow starts.
  enum class Kind { kLaunch, kFlow, kMemory };
  struct Point {
    int64_t ts;
    size_t index;  // into trace.zero_length, trace.flows or trace.memory
    Kind kind;
  };
  std::vector<std::vector<Point>> points(trace.lanes.size());
  for (size_t i = 0; i < trace.zero_length.size(); ++i) {
    const Interval& z = trace.zero_length[i];
    if (z.link && !IsDeviceRole(role(z))) points[z.lane].push_back({z.start_ns, i, Kind::kLaunch});
  }
  for (size_t i = 0; i < trace.flows.size(); ++i) {
    if (trace.flows[i].phase == 's') points[trace.flows[i].lane].push_back({trace.flows[i].ts_ns, i, Kind::kFlow});
  }
  for (size_t i = 0; i < trace.memory.size(); ++i)
    points[trace.memory[i].lane].push_back({trace.memory[i].ts_ns, i, Kind::kMemory});
  std::vector<Launch> at_memory(trace.memory.size(), Launch{0, -1, 0});
  LaunchIndex<uint32_t> launch_of_link;
  LaunchIndex<uint64_t> launch_of_flow;

  std::vector<uint32_t> node_of_piece;
  std::vector<int64_t> step_of_piece;
  int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
  for (const LaneStacks& ls : lanes) {
    node_of_piece.resize(ls.pieces.size());
    step_of_piece.resize(ls.pieces.size());
    for (size_t i = 0; i < ls.pieces.size(); ++i) {
      const Piece& pc = ls.pieces[i];
      const Interval& iv = trace.intervals[pc.interval];
      uint32_t parent = pc.parent < 0 ? 0 : node_of_piece[static_cast<size_t>(pc.parent)];
      int64_t step = StepNumber(trace.strings.Get(iv.name));
      if (step < 0) step = pc.parent < 0 ? -1 : step_of_piece[static_cast<size_t>(pc.parent)];
      uint32_t node = b.Node(parent, b.Frame(iv.name));
      node_of_piece[i] = node;
      step_of_piece[i] = step;
      first = std::min(first, pc.start_ns);
      last = std::max(last, pc.end_ns);
      if (pc.first && iv.link && !IsDeviceRole(role(iv)))
        launch_of_link.Add(iv.link, Launch{node, static_cast<int32_t>(step), ls.lane});
      if (pc.self_ns == 0 && !pc.first) continue;
      uint32_t labels = b.Labels(ls.lane, step);
      if (pc.first) b.Add(node, labels, kCalls, 1);
      b.Add(node, labels, kWall, pc.self_ns);
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
      uint32_t node = c < 0 ? 0 : node_of_piece[static_cast<size_t>(c)];
      int64_t step = c < 0 ? -1 : step_of_piece[static_cast<size_t>(c)];
      if (pt.kind == Kind::kFlow) {
        launch_of_flow.Add(trace.flows[pt.index].id, Launch{node, static_cast<int32_t>(step), ls.lane});
      } else if (pt.kind == Kind::kMemory) {
        at_memory[pt.index] = Launch{node, static_cast<int32_t>(step), ls.lane};
      } else {
        const Interval& z = trace.zero_length[pt.index];
        launch_of_link.Add(z.link, Launch{b.Node(node, b.Frame(z.name)), static_cast<int32_t>(step), ls.lane});
      }
    }
    pts.clear();
  }
  for (size_t lane = 0; lane < points.size(); ++lane) {
    for (const Point& pt : points[lane]) {  // lanes without intervals: launched from the root
      if (pt.kind == Kind::kFlow) {
        launch_of_flow.Add(trace.flows[pt.index].id, Launch{0, -1, static_cast<uint32_t>(lane)});
      } else if (pt.kind == Kind::kMemory) {
        at_memory[pt.index] = Launch{0, -1, static_cast<uint32_t>(lane)};
      } else {
        const Interval& z = trace.zero_length[pt.index];
        launch_of_link.Add(z.link, Launch{b.Node(0, b.Frame(z.name)), -1, static_cast<uint32_t>(lane)});
      }
    }
  }

  launch_of_link.Seal();
  launch_of_flow.Seal();
  if (has_device) {
    // Flow ends bind to the device event on their lane that starts at, or encloses, them.
    std::vector<std::vector<uint32_t>> device_on_lane(trace.lanes.size());
    for (uint32_t i = 0; i < trace.intervals.size(); ++i) {
      if (IsDeviceRole(role(trace.intervals[i]))) device_on_lane[trace.intervals[i].lane].push_back(i);
    }
    for (auto& v : device_on_lane) {
      std::stable_sort(v.begin(), v.end(), [&](uint32_t x, uint32_t y) {
        return trace.intervals[x].start_ns < trace.intervals[y].start_ns;
      });
    }
    std::unordered_map<uint32_t, uint64_t> flow_of_device;
    for (const Flow& f : trace.flows) {
      if (f.phase != 'f') continue;
      const auto& v = device_on_lane[f.lane];
      auto it = std::upper_bound(v.begin(), v.end(), f.ts_ns,
                                 [&](int64_t ts, uint32_t i) { return ts < trace.intervals[i].start_ns; });
      if (it == v.begin()) continue;
      uint32_t d = *(it - 1);
      if (trace.intervals[d].start_ns == f.ts_ns || trace.intervals[d].end_ns > f.ts_ns)
        flow_of_device.emplace(d, f.id);
    }
    for (uint32_t i = 0; i < trace.intervals.size(); ++i) {
      const Interval& d = trace.intervals[i];
      if (!IsDeviceRole(role(d))) continue;
      const Launch* launch = nullptr;
      if (d.link) launch = launch_of_link.Find(d.link);
      if (!launch) {
        if (auto f = flow_of_device.find(i); f != flow_of_device.end()) launch = launch_of_flow.Find(f->second);
      }
      if (launch) {
        b.Add(b.Node(launch->node, b.Frame(d.name)), b.Labels(launch->lane, launch->step, d.lane), kGpu,
              d.end_ns - d.start_ns);
      } else {
        const Lane& dl = trace.lanes[d.lane];
        std::string where = "device " + (dl.device >= 0 ? std::to_string(dl.device) : dl.pid) + " stream " + dl.tid +
                            " (no launch found)";
        b.Add(b.Node(b.Node(0, b.FrameFor(where)), b.Frame(d.name)), b.Labels(d.lane, -1, d.lane), kGpu,
              d.end_ns - d.start_ns);
      }
    }
  }

  // An allocation with nothing open on its thread still needs a stack.
  auto MemoryNode = [&](const Launch& at) { return at.node ? at.node : b.Node(0, b.FrameFor("(outside any event)")); };
  if (!trace.memory.empty()) {
    // Allocations where they happened; and, per device, what was still allocated at
    // the moment the allocated total peaked (frees matched by address).
    std::map<std::pair<int32_t, int32_t>, std::vector<size_t>> by_device;
    for (size_t i = 0; i < trace.memory.size(); ++i) {
      by_device[{trace.memory[i].device_type, trace.memory[i].device_id}].push_back(i);
    }
    for (auto& [device, events] : by_device) {
      std::stable_sort(events.begin(), events.end(),
                       [&](size_t x, size_t y) { return trace.memory[x].ts_ns < trace.memory[y].ts_ns; });
      std::string name = MemoryDevice(trace.memory[events.front()]);
      int64_t running = 0, peak = std::numeric_limits<int64_t>::min();
      size_t peak_at = 0;
      for (size_t k = 0; k < events.size(); ++k) {
        const MemoryEvent& m = trace.memory[events[k]];
        running += m.bytes;
        int64_t level = m.total_allocated >= 0 ? m.total_allocated : running;
        if (level > peak) peak = level, peak_at = k;
        if (m.bytes <= 0) continue;
        const Launch& at = at_memory[events[k]];
        uint32_t labels = b.Labels(at.lane, at.step, -1, name);
        b.Add(MemoryNode(at), labels, kAllocObjects, 1);
        b.Add(MemoryNode(at), labels, kAllocObjects + 1, m.bytes);
      }
      std::unordered_map<uint64_t, size_t> live;  // address -> allocating event
      std::vector<size_t> unaddressed;            // allocations without an address never end
      for (size_t k = 0; k <= peak_at; ++k) {
        const MemoryEvent& m = trace.memory[events[k]];
        if (m.bytes > 0) {
          if (m.addr)
            live[m.addr] = events[k];
          else
            unaddressed.push_back(events[k]);
        } else if (m.bytes < 0 && m.addr) {
          live.erase(m.addr);
        }
      }
      std::vector<size_t> at_peak = unaddressed;
      for (const auto& [addr, i] : live) at_peak.push_back(i);
      std::sort(at_peak.begin(), at_peak.end());  // file order: deterministic samples
      for (size_t i : at_peak) {
        const Launch& at = at_memory[i];
        uint32_t labels = b.Labels(at.lane, at.step, -1, name);
        b.Add(MemoryNode(at), labels, kAllocObjects + 2, 1);
        b.Add(MemoryNode(at), labels, kAllocObjects + 3, trace.memory[i].bytes);
      }
    }
  }

  return Added{first, last, has_device};
}

}  // namespace

struct Aggregator::State {
  Profile p;
  ProfileBuilder b{&p};
  bool rank_labels = false;
  bool has_device = false, has_memory = false;
  int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
  int64_t time_nanos = 0;
  struct Input {
    std::string file, summary, skipped;
  };
  std::vector<Input> inputs;
};

Aggregator::Aggregator(bool rank_labels) : s_(std::make_unique<State>()) {
  s_->rank_labels = rank_labels;
  s_->p.sample_types = {{"calls", "count"},         {"wall", "nanoseconds"},  {"gpu", "nanoseconds"},
                        {"alloc_objects", "count"}, {"alloc_space", "bytes"}, {"inuse_objects", "count"},
                        {"inuse_space", "bytes"}};
}
Aggregator::~Aggregator() = default;
Aggregator::Aggregator(Aggregator&&) noexcept = default;
Aggregator& Aggregator::operator=(Aggregator&&) noexcept = default;

void Aggregator::Add(const Trace& trace, const std::vector<LaneStacks>& lanes) {
  State& s = *s_;
  // The rank label holds the input's position until Finish knows the ranks.
  s.b.Begin(trace, s.rank_labels ? static_cast<int64_t>(s.inputs.size()) : -1);
  Added added = AddTrace(trace, lanes, s.b);
  s.has_device |= added.device;
  s.has_memory |= !trace.memory.empty();
  if (added.first <= added.last && added.first < s.first) s.time_nanos = WallClockStart(trace, added.first);
  s.first = std::min(s.first, added.first);
  s.last = std::max(s.last, added.last);
  std::string skipped = "skipped: " + std::to_string(trace.stats.skipped_total());
  for (size_t i = 0; i < kSkipReasons.size(); ++i) {
    if (trace.stats.skipped[i]) {
      skipped += std::string(", ") + kSkipReasons[i].key + " " + std::to_string(trace.stats.skipped[i]);
    }
  }
  if (trace.stats.repaired) skipped += "; repaired " + std::to_string(trace.stats.repaired);
  s.inputs.push_back({trace.file, Summary(trace, lanes), skipped});
}

Profile Aggregator::Finish(const std::vector<int64_t>& ranks) && {
  State& s = *s_;
  if (s.rank_labels && ranks.size() != s.inputs.size()) {
    throw std::logic_error("Aggregator::Finish: one rank per trace added");
  }
  Profile p = std::move(s.p);
  std::vector<int> keep = {0, 1};
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
  if (s.rank_labels) {
    for (auto& labels : p.label_sets) {
      for (Label& label : labels) {
        if (label.key == "rank") label.num = ranks[static_cast<size_t>(label.num)];
      }
    }
  }
  p.default_sample_type = "wall";
  p.period_type = {"wall", "nanoseconds"};
  p.period = 1;
  for (size_t i = 0; i < s.inputs.size(); ++i) {
    std::string who = s.rank_labels ? " (rank " + std::to_string(ranks[i]) + ")" : "";
    p.comments.push_back(std::string("torch2pprof ") + kVersion + " convert " + s.inputs[i].file + who);
    p.comments.push_back(std::move(s.inputs[i].summary));
    p.comments.push_back(std::move(s.inputs[i].skipped));
  }
  if (s.first <= s.last) {
    p.duration_nanos = s.last - s.first;
    p.time_nanos = s.time_nanos;
  }
  return p;
}

Profile Aggregate(const Trace& trace, const std::vector<LaneStacks>& lanes) {
  Aggregator a(false);
  a.Add(trace, lanes);
  return std::move(a).Finish();
}

}  // namespace torch2pprof
