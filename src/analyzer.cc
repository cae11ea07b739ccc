// The rules follow torch-tb-profiler as ../shared/docs/tb-semantics.md states them;
// its own test cases are unit tests here (tests/analyzer_test.cc).
#include "torch2pprof/analyzer.h"

#include <algorithm>
#include <cctype>
#include <future>
#include <limits>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "torch2pprof/lane_builder.h"

namespace torch2pprof {
namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

// Case-insensitive substring test without a lowered copy (runs per kernel event).
bool ContainsNoCase(std::string_view s, std::string_view lower_needle) {
  auto it = std::search(s.begin(), s.end(), lower_needle.begin(), lower_needle.end(),
                        [](char c, char n) { return std::tolower(static_cast<unsigned char>(c)) == n; });
  return it != s.end();
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool EndsWith(std::string_view s, std::string_view p) {
  return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

// ---- sets of time as sorted, disjoint [start, end) spans

using Spans = std::vector<std::pair<int64_t, int64_t>>;

// In place: the spans of a role can be most of the trace's events.
Spans Union(Spans v) {
  std::sort(v.begin(), v.end());
  size_t n = 0;
  for (const auto& s : v) {
    if (s.second <= s.first) continue;
    if (n > 0 && s.first <= v[n - 1].second) {
      v[n - 1].second = std::max(v[n - 1].second, s.second);
    } else {
      v[n++] = s;
    }
  }
  v.resize(n);
  return v;
}

int64_t Length(const Spans& a) {
  int64_t n = 0;
  for (const auto& s : a) n += s.second - s.first;
  return n;
}

Spans Intersect(const Spans& a, const Spans& b) {
  Spans out;
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    int64_t lo = std::max(a[i].first, b[j].first), hi = std::min(a[i].second, b[j].second);
    if (lo < hi) out.push_back({lo, hi});
    (a[i].second < b[j].second ? i : j)++;
  }
  return out;
}

Spans Subtract(const Spans& a, const Spans& b) {
  Spans out;
  size_t j = 0;
  for (auto s : a) {
    while (j < b.size() && b[j].second <= s.first) ++j;
    for (size_t k = j; k < b.size() && b[k].first < s.second; ++k) {
      if (b[k].first > s.first) out.push_back({s.first, b[k].first});
      s.first = std::max(s.first, b[k].second);
    }
    if (s.first < s.second) out.push_back(s);
  }
  return out;
}

// Length of a within [lo, hi), found by binary search (runs once per step).
int64_t LengthWithin(const Spans& a, int64_t lo, int64_t hi) {
  auto it = std::partition_point(a.begin(), a.end(), [&](const auto& s) { return s.second <= lo; });
  int64_t n = 0;
  for (; it != a.end() && it->first < hi; ++it) n += std::min(it->second, hi) - std::max(it->first, lo);
  return n;
}

// ---- names and roles, classified once per string id (not per event)

bool IsCommunicationName(std::string_view name) {
  for (std::string_view prefix : {"nccl:", "gloo:"}) {
    if (!StartsWith(name, prefix)) continue;
    std::string_view op = name.substr(prefix.size());
    for (std::string_view c : {"broadcast", "reduce", "all_reduce", "all_gather", "reduce_scatter"}) {
      if (op == c) return true;
    }
  }
  return false;
}

enum NameFlag : uint8_t {
  kStepName = 1,         // ProfilerStep#N
  kDataLoaderName = 2,   // enumerate(DataLoader)#...__next__, enumerate(DataPipe)#...
  kCommName = 4,         // nccl:all_reduce, gloo:broadcast, ...
  kNcclName = 8,         // a kernel name containing "nccl"
  kNotOperatorRow = 16,  // wrappers the operator table leaves out
};

uint8_t FlagsOf(std::string_view n) {
  uint8_t f = 0;
  if (StartsWith(n, "ProfilerStep#")) f |= kStepName;
  if ((StartsWith(n, "enumerate(DataLoader)#") && EndsWith(n, ".__next__")) || StartsWith(n, "enumerate(DataPipe)#"))
    f |= kDataLoaderName;
  if (IsCommunicationName(n)) f |= kCommName;
  if (ContainsNoCase(n, "nccl")) f |= kNcclName;
  if (StartsWith(n, "Optimizer.") || n == "DataParallel.forward" || n == "DistributedDataParallel.forward")
    f |= kNotOperatorRow;
  return f;
}

// Header values of the wrong type are ignored, never thrown about.
std::string JsonString(const nlohmann::json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int64_t JsonInt(const nlohmann::json& o, const char* key, int64_t fallback = -1) {
  auto it = o.find(key);
  if (it == o.end() || !it->is_number()) return fallback;
  if (it->is_number_float()) {
    double d = it->get<double>();
    return d >= -9.2e18 && d <= 9.2e18 ? static_cast<int64_t>(d) : fallback;
  }
  if (it->is_number_unsigned()) {
    uint64_t u = it->get<uint64_t>();
    return u <= static_cast<uint64_t>(kMax) ? static_cast<int64_t>(u) : fallback;
  }
  return it->get<int64_t>();
}

// Indexes [0, n) of items grouped by key (a counting sort): the members of key k
// are index[first[k] .. first[k + 1]), in increasing order.
struct Groups {
  std::vector<size_t> first;
  std::vector<uint32_t> index;
  const uint32_t* begin(size_t k) const { return index.data() + first[k]; }
  const uint32_t* end(size_t k) const { return index.data() + first[k + 1]; }
};

template <typename KeyOf>  // KeyOf(i) -> key in [0, keys), or -1 to leave i out
Groups GroupBy(size_t n, size_t keys, KeyOf key_of) {
  Groups g;
  g.first.assign(keys + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    int64_t k = key_of(i);
    if (k >= 0) ++g.first[static_cast<size_t>(k) + 1];
  }
  for (size_t k = 0; k < keys; ++k) g.first[k + 1] += g.first[k];
  g.index.resize(g.first[keys]);
  std::vector<size_t> next(g.first.begin(), g.first.end() - 1);
  for (size_t i = 0; i < n; ++i) {
    int64_t k = key_of(i);
    if (k >= 0) g.index[next[static_cast<size_t>(k)]++] = static_cast<uint32_t>(i);
  }
  return g;
}

// Events are numbered over the trace as loaded: the intervals in file order, then
// the zero-length X events. Nothing is copied per event; what a stage needs beyond
// the trace is an index or a sum, built by that stage and dropped after it.
class Analyzer {
 public:
  Analyzer(const Trace& trace, const AnalyzeOptions& options)
      : t_(trace),
        options_(options),
        n_(trace.intervals.size()),
        count_(trace.intervals.size() + trace.zero_length.size()),
        details_(trace.args.size() == trace.intervals.size()) {}

  Analysis Run() {
    Classify();
    LinkLaunches();
    WalkLanes();
    Overview();
    Categories();
    // Steps and the operator tree read the trace and write separate parts of the
    // analysis: with threads, side by side; without, steps run at get().
    auto steps = std::async(options_.threads > 1 ? std::launch::async : std::launch::deferred, [this] { Steps(); });
    Operators();
    Kernels();
    steps.get();
    Gpu();  // its utilization is over the steps' window
    Memory();
    Recommend();
    return std::move(a_);
  }

 private:
  static constexpr uint32_t kNoOwner = std::numeric_limits<uint32_t>::max();

  const Interval& Iv(size_t e) const { return e < n_ ? t_.intervals[e] : t_.zero_length[e - n_]; }
  const EventArgs& Args(size_t e) const {
    static const EventArgs kNoArgs;
    if (e < n_) return details_ ? t_.args[e] : kNoArgs;
    return e - n_ < t_.zero_length_args.size() ? t_.zero_length_args[e - n_] : kNoArgs;
  }
  int64_t Dur(size_t e) const { return Iv(e).end_ns - Iv(e).start_ns; }
  Role RoleOf(size_t e) const { return roles_[Iv(e).cat]; }
  std::string_view Name(size_t e) const { return t_.strings.Get(Iv(e).name); }
  bool Has(size_t e, uint8_t flag) const { return (flags_[Iv(e).name] & flag) != 0; }

  bool IsStep(size_t e) const {
    Role r = RoleOf(e);
    return (r == Role::kOperator || r == Role::kUserAnnotation) && Has(e, kStepName);
  }
  bool IsDataLoader(size_t e) const { return RoleOf(e) == Role::kOperator && Has(e, kDataLoaderName); }
  bool IsCommunication(size_t e) const {
    Role r = RoleOf(e);
    if (r == Role::kKernel) return Has(e, kNcclName);
    return (r == Role::kOperator || r == Role::kUserAnnotation) && Has(e, kCommName);
  }
  // A node of the operator tree: operators, and communication annotations.
  bool IsOperatorNode(size_t e) const {
    Role r = RoleOf(e);
    return r == Role::kOperator || (r == Role::kUserAnnotation && Has(e, kCommName));
  }
  bool IsRow(size_t e) const { return !IsStep(e) && !IsDataLoader(e) && !Has(e, kNotOperatorRow); }

  void Classify() {
    roles_.assign(t_.strings.size(), Role::kOther);
    std::vector<bool> seen(t_.strings.size(), false);
    for (size_t e = 0; e < count_; ++e) {
      uint32_t cat = Iv(e).cat;
      if (!seen[cat]) roles_[cat] = RoleOfCategory(t_.strings.Get(cat)), seen[cat] = true;
    }
    flags_.resize(t_.strings.size());
    for (uint32_t id = 0; id < t_.strings.size(); ++id) flags_[id] = FlagsOf(t_.strings.Get(id));
    lane_device_.resize(t_.lanes.size());
    for (size_t l = 0; l < t_.lanes.size(); ++l) lane_device_[l] = DeviceOfLane(t_.lanes[l]);
  }

  // ---- launches: which runtime call launched each device event (by correlation)

  // The first runtime call in event order with each correlation, sorted by it.
  struct Launch {
    uint32_t link;
    uint32_t event;
  };

  void LinkLaunches() {
    for (size_t e = 0; e < count_; ++e) {
      if (RoleOf(e) == Role::kRuntime && Iv(e).link) launches_.push_back({Iv(e).link, static_cast<uint32_t>(e)});
    }
    std::sort(launches_.begin(), launches_.end(),
              [](const Launch& x, const Launch& y) { return x.link != y.link ? x.link < y.link : x.event < y.event; });
    launches_.erase(std::unique(launches_.begin(), launches_.end(),
                                [](const Launch& x, const Launch& y) { return x.link == y.link; }),
                    launches_.end());
    launches_.shrink_to_fit();
    launched_ns_.assign(launches_.size(), 0);
    for (size_t e = 0; e < count_; ++e) {
      int64_t k = LaunchSlot(e);
      if (k >= 0) launched_ns_[static_cast<size_t>(k)] += Dur(e);
    }
  }

  // Slot in launches_ of the runtime call with correlation link, or -1.
  int64_t SlotOfLink(uint32_t link) const {
    if (!link) return -1;
    auto it = std::lower_bound(launches_.begin(), launches_.end(), link,
                               [](const Launch& l, uint32_t v) { return l.link < v; });
    return it != launches_.end() && it->link == link ? it - launches_.begin() : -1;
  }
  // Slot of the runtime call that launched device event e, or -1.
  int64_t LaunchSlot(size_t e) const { return IsDeviceRole(RoleOf(e)) ? SlotOfLink(Iv(e).link) : -1; }
  // Device time runtime call e launched (its device self time).
  int64_t LaunchedBy(size_t e) const {
    int64_t k = SlotOfLink(Iv(e).link);
    return k >= 0 && launches_[static_cast<size_t>(k)].event == e ? launched_ns_[static_cast<size_t>(k)] : 0;
  }

  // ---- lane stacks: self time by category without keeping a piece per interval

  void WalkLanes() {
    std::vector<uint32_t> cat_slot(t_.strings.size(), kNoOwner);
    for (size_t e = 0; e < n_; ++e) {
      uint32_t cat = t_.intervals[e].cat;
      if (cat_slot[cat] == kNoOwner) cat_slot[cat] = static_cast<uint32_t>(cats_.size()), cats_.push_back(cat);
    }
    // Each lane is walked by one thread; its sums are its own.
    std::vector<std::vector<int64_t>> self(t_.lanes.size());
    BuildOptions build{options_.threads, [&](const LaneStacks& lane, const Piece& p) {
                         auto& sums = self[lane.lane];
                         if (sums.empty()) sums.assign(cats_.size(), 0);
                         sums[cat_slot[t_.intervals[p.interval].cat]] += p.self_ns;
                       }};
    lanes_ = BuildLanes(t_, build);
    cat_self_.assign(cats_.size(), 0);
    for (const auto& sums : self) {
      for (size_t k = 0; k < sums.size(); ++k) cat_self_[k] += sums[k];
    }
  }

  void Overview() {
    TraceOverview& o = a_.trace;
    o.file = t_.file;
    o.events = t_.stats.events;
    o.phases = t_.stats.phases;
    for (size_t i = 0; i < kSkipReasons.size(); ++i) {
      if (t_.stats.skipped[i]) o.skipped[kSkipReasons[i].key] = t_.stats.skipped[i];
    }
    int64_t first = kMax, last = kMin;
    for (const Interval& iv : t_.intervals) first = std::min(first, iv.start_ns), last = std::max(last, iv.end_ns);
    if (first <= last) {
      o.start_ns = first;
      o.span_ns = last - first;
      o.wall_clock_ns = WallClockStart(t_, first);
    }
    device_lane_.assign(t_.lanes.size(), false);
    for (size_t e = 0; e < count_; ++e) {
      if (IsDeviceRole(RoleOf(e))) device_lane_[Iv(e).lane] = true;
      if (IsStep(e)) ++o.profiler_steps;
    }
    for (const LaneStacks& ls : lanes_) {
      const Lane& lane = t_.lanes[ls.lane];
      o.lanes.push_back(
          LaneInfo{lane.pid, lane.tid, lane.thread_name, device_lane_[ls.lane], ls.intervals, ls.busy_ns});
    }
    auto header = [&](const char* key) -> nlohmann::json {
      auto it = t_.header.raw.find(key);
      if (it == t_.header.raw.end()) return nullptr;
      return nlohmann::json::parse(it->second, nullptr, false);
    };
    nlohmann::json props = header("deviceProperties");
    if (props.is_array()) {
      for (const auto& d : props) {
        if (!d.is_object()) continue;
        DeviceInfo info;
        info.id = JsonInt(d, "id");
        info.name = JsonString(d, "name");
        info.total_memory = JsonInt(d, "totalGlobalMem");
        info.sms = JsonInt(d, "numSms");
        if (JsonInt(d, "computeMajor") >= 0) {
          info.compute =
              std::to_string(JsonInt(d, "computeMajor")) + "." + std::to_string(JsonInt(d, "computeMinor", 0));
        }
        o.devices.push_back(info);
      }
    }
    DistributedInfo dist = ReadDistributedInfo(t_.header);
    o.rank = dist.rank;
    o.world_size = dist.world_size;
    o.backend = dist.backend;
  }

  void Categories() {
    std::map<uint32_t, CategoryRow> rows;  // by category id: a stable order before sorting
    for (size_t e = 0; e < count_; ++e) {
      CategoryRow& r = rows[Iv(e).cat];
      ++r.events;
      r.total_ns += Dur(e);
    }
    for (size_t k = 0; k < cats_.size(); ++k) rows[cats_[k]].self_ns += cat_self_[k];
    for (auto& [cat, r] : rows) {
      r.category = std::string(t_.strings.Get(cat));
      r.role = roles_[cat];
      a_.categories.push_back(r);
    }
    std::stable_sort(a_.categories.begin(), a_.categories.end(),
                     [](const CategoryRow& x, const CategoryRow& y) { return x.self_ns > y.self_ns; });
  }

  // ---- steps (tb-semantics §3, §4)

  struct Step {
    std::string name;
    int64_t host_start, host_end, start, end;
    uint64_t launched = 0;  // device events launched from inside the step
    int64_t device_begin = kMax, device_end = kMin;
  };

  // Slot of the device work's breakdown part (Kernel, Memcpy, Memset, Communication,
  // Runtime, DataLoader, CPU Exec), or -1.
  int BreakdownSlot(size_t e) const {
    Role r = RoleOf(e);
    if (IsCommunication(e)) return 3;
    if (r == Role::kKernel) return 0;
    if (r == Role::kMemcpy) return 1;
    if (r == Role::kMemset) return 2;
    if (r == Role::kRuntime) return 4;
    if (IsDataLoader(e)) return 5;
    if ((r == Role::kOperator || r == Role::kPythonFunction || r == Role::kUserAnnotation) && !IsStep(e)) return 6;
    return -1;
  }

  void Steps() {
    std::vector<uint32_t> step_events;
    for (size_t e = 0; e < count_; ++e) {
      if (IsStep(e) && Dur(e) > 0) step_events.push_back(static_cast<uint32_t>(e));
    }
    std::stable_sort(step_events.begin(), step_events.end(),
                     [&](uint32_t x, uint32_t y) { return Iv(x).start_ns < Iv(y).start_ns; });
    std::vector<Step> s;
    for (uint32_t e : step_events) {
      const Interval& iv = Iv(e);
      s.push_back(Step{std::string(Name(e)), iv.start_ns, iv.end_ns, iv.start_ns, iv.end_ns});
    }
    if (s.empty()) {
      int64_t lo = kMax, hi = kMin;
      for (size_t e = 0; e < count_; ++e) {
        Role r = RoleOf(e);
        if (r == Role::kOperator || r == Role::kPythonFunction)
          lo = std::min(lo, Iv(e).start_ns), hi = std::max(hi, Iv(e).end_ns);
      }
      if (lo > hi) return;  // no host-side work: no steps
      a_.whole_trace_step = true;
      s.push_back(Step{"(whole trace)", lo, hi, lo, hi});
    }
    // The first step (in start order) whose host span holds the launching call: steps
    // are sorted by start, so with the running maximum of their ends it is a binary search.
    std::vector<int64_t> max_end(s.size());
    for (size_t k = 0; k < s.size(); ++k) max_end[k] = std::max(k ? max_end[k - 1] : kMin, s[k].host_end);
    auto step_of = [&](const Interval& rt) -> int64_t {
      size_t k = static_cast<size_t>(std::lower_bound(max_end.begin(), max_end.end(), rt.end_ns) - max_end.begin());
      return k < s.size() && s[k].host_start <= rt.start_ns ? static_cast<int64_t>(k) : -1;
    };
    std::vector<bool> from_step(count_, false);
    bool any = false;
    for (size_t e = 0; e < count_; ++e) {
      int64_t slot = LaunchSlot(e);
      if (slot < 0) continue;
      int64_t k = step_of(Iv(launches_[static_cast<size_t>(slot)].event));
      if (k < 0) continue;
      Step& st = s[static_cast<size_t>(k)];
      ++st.launched;
      st.device_begin = std::min(st.device_begin, Iv(e).start_ns);
      st.device_end = std::max(st.device_end, Iv(e).end_ns);
      from_step[e] = any = true;
    }
    if (any) {
      // Steps are re-timed to include the device work they launched.
      int64_t prev_end = kMin;
      for (size_t k = 0; k < s.size(); ++k) {
        Step& st = s[k];
        st.start = std::max(st.host_start, prev_end);
        if (k == 0 && st.launched) {
          for (size_t e = 0; e < count_; ++e) {
            if (IsDeviceRole(RoleOf(e)) && !from_step[e] && Iv(e).end_ns <= st.device_begin)
              st.start = std::max(st.start, Iv(e).end_ns);
          }
        }
        st.end = st.launched ? std::max(st.host_end, st.device_end) : std::max(st.host_end, st.start);
        prev_end = st.end;
      }
      // Tail steps the profiler stopped in the middle of carry no (or too little) device work.
      while (!s.empty() && !s.back().launched) s.pop_back();
      if (s.size() >= 2 && s.back().launched * 5 < s[s.size() - 2].launched * 4) s.pop_back();
    }
    std::vector<bool>().swap(from_step);

    // Each part claims the time of its events no earlier part claimed, in this order;
    // a part's claim is measured per step at once, so only the unclaimed rest is kept.
    std::vector<int8_t> slot(count_);
    for (size_t e = 0; e < count_; ++e) slot[e] = static_cast<int8_t>(Dur(e) > 0 ? BreakdownSlot(e) : -1);
    for (const Step& st : s) {
      StepRow row;
      row.name = st.name;
      row.start_ns = st.start;
      row.total_ns = st.end - st.start;
      row.other_ns = row.total_ns;
      a_.steps.push_back(row);
    }
    Spans remaining;
    for (const Step& st : s) remaining.push_back({st.start, st.end});
    remaining = Union(std::move(remaining));
    for (int r = 0; r < 7 && !remaining.empty(); ++r) {
      Spans spans;
      spans.reserve(static_cast<size_t>(std::count(slot.begin(), slot.end(), r)));
      for (size_t e = 0; e < count_; ++e) {
        if (slot[e] == r) spans.push_back({Iv(e).start_ns, Iv(e).end_ns});
      }
      Spans claimed = Intersect(Union(std::move(spans)), remaining);
      for (StepRow& row : a_.steps) {
        int64_t* parts[7] = {&row.kernel_ns,  &row.memcpy_ns,     &row.memset_ns,  &row.communication_ns,
                             &row.runtime_ns, &row.dataloader_ns, &row.cpu_exec_ns};
        *parts[r] = LengthWithin(claimed, row.start_ns, row.start_ns + row.total_ns);
        row.other_ns -= *parts[r];
      }
      remaining = Subtract(remaining, claimed);
    }
    if (!a_.steps.empty()) {
      window_ = {a_.steps.front().start_ns, a_.steps.back().start_ns + a_.steps.back().total_ns};
    }
  }

  // ---- operators (tb-semantics §5), one lane at a time

  // Operator tree nodes link to their first child and next sibling (no per-node
  // containers: a lane has hundreds of thousands of operators).
  struct Node {
    uint32_t ev;
    int32_t first_child = -1, next_sibling = -1, last_child = -1;
    int64_t runtime_ns = 0;   // its own runtime calls
    int64_t launched_ns = 0;  // device time those calls launched (device self)
    bool alive = true;
  };

  void AddChild(std::vector<Node>& nodes, int32_t parent, int32_t child) {
    Node& p = nodes[static_cast<size_t>(parent)];
    if (p.last_child < 0) {
      p.first_child = child;
    } else {
      nodes[static_cast<size_t>(p.last_child)].next_sibling = child;
    }
    p.last_child = child;
  }

  void Operators() {
    const size_t lanes = t_.lanes.size();
    Groups ops = GroupBy(count_, lanes, [&](size_t e) { return IsOperatorNode(e) ? int64_t{Iv(e).lane} : -1; });
    Groups mem = GroupBy(t_.memory.size(), lanes, [&](size_t m) { return int64_t{t_.memory[m].lane}; });
    // Runtime calls by External id: all of an id's calls go to the first node with it.
    std::vector<std::pair<int64_t, uint32_t>> by_external;  // (External id, runtime event), sorted
    for (size_t e = 0; e < count_; ++e) {
      if (RoleOf(e) == Role::kRuntime && Args(e).external_id > 0)
        by_external.push_back({Args(e).external_id, static_cast<uint32_t>(e)});
    }
    std::sort(by_external.begin(), by_external.end());
    std::vector<bool> claimed(by_external.size(), false);
    auto claim = [&](int64_t external_id, Node& n) {
      auto lo = std::lower_bound(by_external.begin(), by_external.end(), std::make_pair(external_id, uint32_t{0}));
      size_t k = static_cast<size_t>(lo - by_external.begin());
      if (lo == by_external.end() || lo->first != external_id || claimed[k]) return;
      claimed[k] = true;
      for (auto it = lo; it != by_external.end() && it->first == external_id; ++it) {
        n.runtime_ns += Dur(it->second);
        n.launched_ns += LaunchedBy(it->second);
      }
    };
    std::unordered_map<uint64_t, size_t> row_of;  // (name id, Input Dims id) -> row
    owner_.assign(t_.memory.size(), kNoOwner);
    std::vector<Node> nodes;
    std::vector<int64_t> device_total, host_self;
    for (size_t lane = 0; lane < lanes; ++lane) {
      std::vector<uint32_t> evs(ops.begin(lane), ops.end(lane));
      std::sort(evs.begin(), evs.end(), [&](uint32_t x, uint32_t y) {
        const Interval &a = Iv(x), &b = Iv(y);
        if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
        if (a.end_ns != b.end_ns) return a.end_ns > b.end_ns;
        return x < y;
      });
      // Nested by containment; a node that starts inside another and ends after it is
      // left out, as the plugin does.
      nodes.clear();
      nodes.reserve(evs.size());
      std::vector<int32_t> stack;
      for (uint32_t e : evs) {
        while (!stack.empty() && Iv(nodes[static_cast<size_t>(stack.back())].ev).end_ns <= Iv(e).start_ns)
          stack.pop_back();
        if (!stack.empty() && Iv(e).end_ns > Iv(nodes[static_cast<size_t>(stack.back())].ev).end_ns) continue;
        int32_t id = static_cast<int32_t>(nodes.size());
        nodes.push_back(Node{e});
        if (Args(e).external_id > 0) claim(Args(e).external_id, nodes.back());
        if (!stack.empty()) AddChild(nodes, stack.back(), id);
        stack.push_back(id);
      }
      std::vector<uint32_t>().swap(evs);
      // Repeated nesting collapses into the outer call (as PyTorch's profiler does): the
      // parent takes the child's children and runtime calls; its own calls are dropped.
      for (Node& n : nodes) {
        while (n.alive && n.first_child >= 0 && n.first_child == n.last_child &&
               Iv(nodes[static_cast<size_t>(n.first_child)].ev).name == Iv(n.ev).name) {
          Node& c = nodes[static_cast<size_t>(n.first_child)];
          c.alive = false;
          n.runtime_ns = c.runtime_ns;
          n.launched_ns = c.launched_ns;
          n.first_child = c.first_child;
          n.last_child = c.last_child;
        }
      }
      // Children have larger indexes than their parents: one backward pass computes totals.
      device_total.assign(nodes.size(), 0);
      host_self.assign(nodes.size(), 0);
      for (size_t k = nodes.size(); k-- > 0;) {
        const Node& n = nodes[k];
        if (!n.alive) continue;
        int64_t self = Dur(n.ev) - n.runtime_ns;
        device_total[k] = n.launched_ns;
        for (int32_t c = n.first_child; c >= 0; c = nodes[static_cast<size_t>(c)].next_sibling) {
          self -= Dur(nodes[static_cast<size_t>(c)].ev);
          device_total[k] += device_total[static_cast<size_t>(c)];
        }
        host_self[k] = self;
      }
      for (size_t k = 0; k < nodes.size(); ++k) {
        const Node& n = nodes[k];
        if (!n.alive || !IsRow(n.ev)) continue;
        uint32_t dims = options_.group_by_shape ? Args(n.ev).input_dims : 0;
        uint64_t key = uint64_t{Iv(n.ev).name} << 32 | dims;
        auto [it, added] = row_of.emplace(key, a_.operators.size());
        if (added) a_.operators.push_back(OperatorRow{std::string(Name(n.ev)), std::string(t_.strings.Get(dims))});
        OperatorRow& r = a_.operators[it->second];
        ++r.calls;
        r.host_total_ns += Dur(n.ev);
        r.host_self_ns += host_self[k];
        r.device_total_ns += device_total[k];
        r.device_self_ns += n.launched_ns;
        r.host_max_ns = std::max(r.host_max_ns, Dur(n.ev));
      }
      AttributeAllocations(nodes, mem.begin(lane), mem.end(lane));
    }
    std::stable_sort(a_.operators.begin(), a_.operators.end(),
                     [](const OperatorRow& x, const OperatorRow& y) { return x.host_total_ns > y.host_total_ns; });
  }

  // Each allocation on this lane goes to the innermost operator open at its time.
  void AttributeAllocations(const std::vector<Node>& nodes, const uint32_t* first, const uint32_t* last) {
    if (first == last) return;
    std::vector<uint32_t> ms(first, last);
    std::stable_sort(ms.begin(), ms.end(),
                     [&](uint32_t x, uint32_t y) { return t_.memory[x].ts_ns < t_.memory[y].ts_ns; });
    std::vector<uint32_t> stack;  // events, innermost last
    size_t next = 0;
    auto usable = [&](const Node& n) { return !IsStep(n.ev) && Dur(n.ev) > 0; };
    for (uint32_t m : ms) {
      int64_t ts = t_.memory[m].ts_ns;
      for (; next < nodes.size() && Iv(nodes[next].ev).start_ns <= ts; ++next) {
        if (!usable(nodes[next])) continue;
        uint32_t e = nodes[next].ev;
        while (!stack.empty() && Iv(stack.back()).end_ns <= Iv(e).start_ns) stack.pop_back();
        stack.push_back(e);
      }
      while (!stack.empty() && Iv(stack.back()).end_ns <= ts) stack.pop_back();
      owner_[m] = stack.empty() ? kNoOwner : Iv(stack.back()).name;
    }
  }

  // ---- kernels (§6) and GPUs (§7)

  void Kernels() {
    std::unordered_map<uint32_t, size_t> row_of;
    std::vector<double> bw, bsum, ow, osum;
    for (size_t e = 0; e < count_; ++e) {
      if (RoleOf(e) != Role::kKernel) continue;
      auto [it, added] = row_of.emplace(Iv(e).name, a_.kernels.size());
      if (added) {
        a_.kernels.push_back(KernelRow{std::string(Name(e)), 0, 0, kMax, 0});
        bw.push_back(0), bsum.push_back(0), ow.push_back(0), osum.push_back(0);
      }
      size_t k = it->second;
      KernelRow& r = a_.kernels[k];
      int64_t dur = Dur(e);
      ++r.calls;
      r.total_ns += dur;
      r.min_ns = std::min(r.min_ns, dur);
      r.max_ns = std::max(r.max_ns, dur);
      a_.kernel_total_ns += dur;
      double w = static_cast<double>(dur);
      const EventArgs& args = Args(e);
      if (args.blocks_per_sm >= 0) bw[k] += w, bsum[k] += w * args.blocks_per_sm, r.blocks_per_sm = 0;
      if (args.occupancy >= 0) ow[k] += w, osum[k] += w * args.occupancy, r.occupancy = 0;
    }
    for (size_t k = 0; k < a_.kernels.size(); ++k) {
      KernelRow& r = a_.kernels[k];
      if (r.blocks_per_sm >= 0) r.blocks_per_sm = bw[k] > 0 ? bsum[k] / bw[k] : -1;
      if (r.occupancy >= 0) r.occupancy = ow[k] > 0 ? osum[k] / ow[k] : -1;
    }
    std::stable_sort(a_.kernels.begin(), a_.kernels.end(),
                     [](const KernelRow& x, const KernelRow& y) { return x.total_ns > y.total_ns; });
  }

  // args.device of the lane's device events, else its pid when that is a number.
  static int64_t DeviceOfLane(const Lane& lane) {
    if (lane.device >= 0) return lane.device;
    char* end = nullptr;
    long long v = std::strtoll(lane.pid.c_str(), &end, 10);
    return end && *end == '\0' && !lane.pid.empty() ? v : -1;
  }

  void Gpu() {
    std::map<int64_t, int> streams;  // device -> lanes with device work
    for (size_t l = 0; l < t_.lanes.size(); ++l) {
      if (device_lane_[l]) ++streams[lane_device_[l]];
    }
    for (const auto& [d, stream_count] : streams) {
      GpuRow g;
      g.device = d;
      for (const DeviceInfo& info : a_.trace.devices) {
        if (info.id == d) g.name = info.name;
      }
      g.streams = stream_count;
      Spans busy, kernels;
      for (size_t e = 0; e < count_; ++e) {
        Role r = RoleOf(e);
        if (!IsDeviceRole(r) || lane_device_[Iv(e).lane] != d) continue;
        busy.push_back({Iv(e).start_ns, Iv(e).end_ns});
        if (r == Role::kKernel) kernels.push_back(busy.back());
      }
      g.busy_ns = Length(Union(std::move(busy)));
      Spans k = Union(std::move(kernels));
      g.kernel_ns = Length(k);
      g.window_ns = window_.second - window_.first;
      g.window_kernel_ns = g.window_ns > 0 ? LengthWithin(k, window_.first, window_.second) : 0;
      a_.gpu.push_back(g);
    }
  }

  // ---- memory (§8)

  void Memory() {
    if (t_.memory.empty()) return;
    std::map<std::pair<int32_t, int32_t>, std::vector<uint32_t>> by_device;
    for (uint32_t m = 0; m < t_.memory.size(); ++m) {
      by_device[{t_.memory[m].device_type, t_.memory[m].device_id}].push_back(m);
    }
    for (auto& [key, events] : by_device) {
      MemoryRow row;
      row.device_type = key.first;
      row.device_id = key.second;
      std::stable_sort(events.begin(), events.end(),
                       [&](uint32_t x, uint32_t y) { return t_.memory[x].ts_ns < t_.memory[y].ts_ns; });
      int64_t running = 0;
      std::map<std::string_view, MemoryOperator> ops;
      for (uint32_t i : events) {
        const MemoryEvent& m = t_.memory[i];
        if (m.bytes > 0) {
          ++row.allocations;
          row.allocated_bytes += m.bytes;
          MemoryOperator& op = ops[owner_[i] == kNoOwner ? "(no operator)" : t_.strings.Get(owner_[i])];
          ++op.allocations;
          op.bytes += m.bytes;
        } else if (m.bytes < 0) {
          ++row.frees;
          row.freed_bytes -= m.bytes;
        }
        running += m.bytes;
        int64_t level = m.total_allocated >= 0 ? m.total_allocated : running;
        if (m.total_allocated >= 0) row.from_totals = true;
        if (level > row.peak_bytes) row.peak_bytes = level, row.peak_ns = m.ts_ns;
      }
      for (auto& [name, op] : ops) {
        op.name = std::string(name);
        row.top_operators.push_back(op);
      }
      std::stable_sort(row.top_operators.begin(), row.top_operators.end(),
                       [](const MemoryOperator& x, const MemoryOperator& y) { return x.bytes > y.bytes; });
      a_.memory.push_back(row);
    }
  }

  // ---- advice

  void Recommend() {
    int64_t total = 0, dataloader = 0, memcpy = 0, comm = 0, runtime = 0, kernel = 0;
    for (const StepRow& s : a_.steps) {
      total += s.total_ns, dataloader += s.dataloader_ns, memcpy += s.memcpy_ns, comm += s.communication_ns;
      runtime += s.runtime_ns, kernel += s.kernel_ns;
    }
    auto pct = [&](int64_t part) {
      return total > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(total) : 0;
    };
    auto add = [&](const char* id, std::string text) { a_.recommendations.push_back({id, std::move(text)}); };
    auto fmt = [](double v) {
      char b[32];
      std::snprintf(b, sizeof b, "%.1f", v);
      return std::string(b);
    };
    size_t n = a_.steps.size();
    if (total > 0 && pct(dataloader) > 10) {
      add("dataloader", "DataLoader takes " + fmt(pct(dataloader)) + "% of step time over " + std::to_string(n) +
                            " steps: load batches in worker processes (DataLoader(num_workers>0, pin_memory=True, "
                            "persistent_workers=True)) so the next batch is ready before the step needs it.");
    }
    uint64_t kernel_calls = 0;
    for (const KernelRow& k : a_.kernels) kernel_calls += k.calls;
    double mean_kernel_us =
        kernel_calls ? static_cast<double>(a_.kernel_total_ns) / static_cast<double>(kernel_calls) / 1000 : 0;
    if (total > 0 && pct(runtime) > 15 && kernel_calls > 0 && mean_kernel_us < 20) {
      add("launch_bound", "Kernel launches (Runtime) take " + fmt(pct(runtime)) +
                              "% of step time and the mean kernel runs " + fmt(mean_kernel_us) + " us over " +
                              std::to_string(kernel_calls) +
                              " kernels: the steps are launch-bound; capture them with CUDA graphs or "
                              "torch.compile(mode=\"reduce-overhead\"), and fuse small operations.");
    }
    if (total > 0 && pct(memcpy) > 10) {
      add("memcpy",
          "Memory copies take " + fmt(pct(memcpy)) +
              "% of step time: keep tensors on the device, copy from "
              "pinned memory with non_blocking=True, and avoid .item(), .cpu() and .tolist() inside the step.");
    }
    if (total > 0 && pct(comm) > 30) {
      add("communication",
          "Communication takes " + fmt(pct(comm)) +
              "% of step time: overlap it with computation "
              "(DDP bucket_cap_mb, no_sync() for gradient accumulation) or give each rank more work per step.");
    }
    for (const GpuRow& g : a_.gpu) {
      if (g.window_ns <= 0 || g.kernel_ns == 0) continue;
      double util = 100.0 * static_cast<double>(g.window_kernel_ns) / static_cast<double>(g.window_ns);
      if (util < 50) {
        add("gpu_utilization", "GPU " + std::to_string(g.device) + " runs kernels " + fmt(util) +
                                   "% of the profiled steps: it waits on the host; see which part of the step "
                                   "breakdown is not Kernel (CPU Exec, DataLoader, Runtime, Other) and shrink it, "
                                   "or raise the batch size.");
      }
    }
  }

  const Trace& t_;
  AnalyzeOptions options_;
  const size_t n_;      // intervals; events from n_ on are the zero-length ones
  const size_t count_;  // all events
  const bool details_;  // args were kept for every interval
  Analysis a_;
  std::vector<Role> roles_;           // by category string id
  std::vector<uint8_t> flags_;        // NameFlag bits by name string id
  std::vector<int64_t> lane_device_;  // device of each lane's device work, or -1
  std::vector<bool> device_lane_;     // lanes with device work
  std::vector<Launch> launches_;
  std::vector<int64_t> launched_ns_;  // parallel to launches_: device time each launched
  std::vector<LaneStacks> lanes_;     // totals only: no pieces kept
  std::vector<uint32_t> cats_;        // category ids of intervals, first-seen order
  std::vector<int64_t> cat_self_;     // parallel to cats_
  std::vector<uint32_t> owner_;       // per memory event: name id of its operator, or kNoOwner
  std::pair<int64_t, int64_t> window_{0, 0};
};

}  // namespace

Analysis Analyze(const Trace& trace, const AnalyzeOptions& options) { return Analyzer(trace, options).Run(); }

}  // namespace torch2pprof
