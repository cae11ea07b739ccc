// The rules follow torch-tb-profiler as ../shared/docs/tb-semantics.md states them;
// its own test cases are unit tests here (tests/analyzer_test.cc).
#include "torch2pprof/analyzer.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <nlohmann/json.hpp>
#include <unordered_map>

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

Spans Union(Spans v) {
  std::sort(v.begin(), v.end());
  Spans out;
  for (const auto& s : v) {
    if (s.second <= s.first) continue;
    if (!out.empty() && s.first <= out.back().second) {
      out.back().second = std::max(out.back().second, s.second);
    } else {
      out.push_back(s);
    }
  }
  return out;
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

int64_t LengthWithin(const Spans& a, int64_t lo, int64_t hi) { return Length(Intersect(a, {{lo, hi}})); }

// ---- events

struct Ev {
  int64_t start, end;
  uint32_t name, cat, lane, order, link;
  const EventArgs* args;
  Role role;
  int64_t dur() const { return end - start; }
};

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

class Analyzer {
 public:
  Analyzer(const Trace& trace, const std::vector<LaneStacks>& lanes, const AnalyzeOptions& options)
      : t_(trace), lanes_(lanes), options_(options) {}

  Analysis Run() {
    CollectEvents();
    Overview();
    Categories();
    Steps();
    Operators();
    Kernels();
    Gpu();
    Memory();
    Recommend();
    return std::move(a_);
  }

 private:
  std::string_view Name(const Ev& e) const { return t_.strings.Get(e.name); }
  bool IsStep(const Ev& e) const {
    return (e.role == Role::kOperator || e.role == Role::kUserAnnotation) && StartsWith(Name(e), "ProfilerStep#");
  }
  bool IsDataLoader(const Ev& e) const {
    std::string_view n = Name(e);
    return e.role == Role::kOperator && ((StartsWith(n, "enumerate(DataLoader)#") && EndsWith(n, ".__next__")) ||
                                         StartsWith(n, "enumerate(DataPipe)#"));
  }
  bool IsCommunication(const Ev& e) const {
    if (e.role == Role::kKernel) return ContainsNoCase(Name(e), "nccl");
    return (e.role == Role::kOperator || e.role == Role::kUserAnnotation) && IsCommunicationName(Name(e));
  }

  void CollectEvents() {
    std::vector<Role> role_of_cat(t_.strings.size(), Role::kOther);
    std::vector<bool> seen(t_.strings.size(), false);
    auto role = [&](uint32_t cat) {
      if (!seen[cat]) role_of_cat[cat] = RoleOfCategory(t_.strings.Get(cat)), seen[cat] = true;
      return role_of_cat[cat];
    };
    static const EventArgs kNoArgs;
    bool details = t_.args.size() == t_.intervals.size();
    events_.reserve(t_.intervals.size() + t_.zero_length.size());
    for (uint32_t i = 0; i < t_.intervals.size(); ++i) {
      const Interval& iv = t_.intervals[i];
      events_.push_back(Ev{iv.start_ns, iv.end_ns, iv.name, iv.cat, iv.lane, i, iv.link,
                           details ? &t_.args[i] : &kNoArgs, role(iv.cat)});
    }
    for (uint32_t i = 0; i < t_.zero_length.size(); ++i) {
      const Interval& iv = t_.zero_length[i];
      const EventArgs* args = i < t_.zero_length_args.size() ? &t_.zero_length_args[i] : &kNoArgs;
      events_.push_back(Ev{iv.start_ns, iv.end_ns, iv.name, iv.cat, iv.lane,
                           static_cast<uint32_t>(t_.intervals.size() + i), iv.link, args, role(iv.cat)});
    }
    for (size_t i = 0; i < events_.size(); ++i) {
      const Ev& e = events_[i];
      if (e.role == Role::kRuntime && e.link) runtime_of_corr_.emplace(e.link, i);
    }
    launched_by_.assign(events_.size(), -1);
    for (size_t i = 0; i < events_.size(); ++i) {
      const Ev& e = events_[i];
      if (!IsDeviceRole(e.role) || !e.link) continue;
      auto it = runtime_of_corr_.find(e.link);
      if (it != runtime_of_corr_.end()) launched_by_[i] = static_cast<int64_t>(it->second);
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
    std::vector<bool> device_lane(t_.lanes.size(), false);
    for (const Ev& e : events_) {
      if (IsDeviceRole(e.role)) device_lane[e.lane] = true;
      if (IsStep(e)) ++o.profiler_steps;
    }
    for (const LaneStacks& ls : lanes_) {
      const Lane& lane = t_.lanes[ls.lane];
      o.lanes.push_back(LaneInfo{lane.pid, lane.tid, lane.thread_name, device_lane[ls.lane], ls.intervals, ls.busy_ns});
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
    nlohmann::json dist = header("distributedInfo");
    if (dist.is_object()) {
      o.rank = JsonInt(dist, "rank");
      o.world_size = JsonInt(dist, "world_size");
      o.backend = JsonString(dist, "backend");
    }
  }

  void Categories() {
    std::map<uint32_t, CategoryRow> rows;
    for (const Ev& e : events_) {
      CategoryRow& r = rows[e.cat];
      ++r.events;
      r.total_ns += e.dur();
    }
    for (const LaneStacks& ls : lanes_) {
      for (const Piece& p : ls.pieces) rows[t_.intervals[p.interval].cat].self_ns += p.self_ns;
    }
    for (auto& [cat, r] : rows) {
      r.category = std::string(t_.strings.Get(cat));
      r.role = RoleOfCategory(r.category);
      a_.categories.push_back(r);
    }
    std::stable_sort(a_.categories.begin(), a_.categories.end(),
                     [](const CategoryRow& x, const CategoryRow& y) { return x.self_ns > y.self_ns; });
  }

  // ---- steps (tb-semantics §3, §4)

  void Steps() {
    std::vector<const Ev*> steps;
    for (const Ev& e : events_) {
      if (IsStep(e) && e.dur() > 0) steps.push_back(&e);
    }
    std::stable_sort(steps.begin(), steps.end(), [](const Ev* x, const Ev* y) { return x->start < y->start; });
    struct Step {
      std::string name;
      int64_t host_start, host_end, start, end;
      std::vector<size_t> launched;  // device events launched from inside the step
    };
    std::vector<Step> s;
    for (const Ev* e : steps) s.push_back(Step{std::string(Name(*e)), e->start, e->end, e->start, e->end, {}});
    if (s.empty()) {
      int64_t lo = kMax, hi = kMin;
      for (const Ev& e : events_) {
        if (e.role == Role::kOperator || e.role == Role::kPythonFunction)
          lo = std::min(lo, e.start), hi = std::max(hi, e.end);
      }
      if (lo > hi) return;  // no host-side work: no steps
      a_.whole_trace_step = true;
      s.push_back(Step{"(whole trace)", lo, hi, lo, hi, {}});
    }
    std::vector<bool> from_step(events_.size(), false);
    bool any = false;
    for (size_t i = 0; i < events_.size(); ++i) {
      if (launched_by_[i] < 0) continue;
      const Ev& rt = events_[static_cast<size_t>(launched_by_[i])];
      for (Step& st : s) {
        if (rt.start >= st.host_start && rt.end <= st.host_end) {
          st.launched.push_back(i);
          from_step[i] = any = true;
          break;
        }
      }
    }
    if (any) {
      // Steps are re-timed to include the device work they launched.
      int64_t prev_end = kMin;
      for (size_t k = 0; k < s.size(); ++k) {
        Step& st = s[k];
        st.start = std::max(st.host_start, prev_end);
        if (k == 0 && !st.launched.empty()) {
          int64_t device_begins = kMax;
          for (size_t i : st.launched) device_begins = std::min(device_begins, events_[i].start);
          for (size_t i = 0; i < events_.size(); ++i) {
            const Ev& e = events_[i];
            if (IsDeviceRole(e.role) && !from_step[i] && e.end <= device_begins) st.start = std::max(st.start, e.end);
          }
        }
        int64_t device_end = kMin;
        for (size_t i : st.launched) device_end = std::max(device_end, events_[i].end);
        st.end = st.launched.empty() ? std::max(st.host_end, st.start) : std::max(st.host_end, device_end);
        prev_end = st.end;
      }
      // Tail steps the profiler stopped in the middle of carry no (or too little) device work.
      while (!s.empty() && s.back().launched.empty()) s.pop_back();
      if (s.size() >= 2 && s.back().launched.size() * 5 < s[s.size() - 2].launched.size() * 4) s.pop_back();
    }

    Spans role_spans[7];  // Kernel, Memcpy, Memset, Communication, Runtime, DataLoader, CPU Exec
    for (const Ev& e : events_) {
      if (e.dur() <= 0) continue;
      int slot = -1;
      if (IsCommunication(e)) {
        slot = 3;
      } else if (e.role == Role::kKernel) {
        slot = 0;
      } else if (e.role == Role::kMemcpy) {
        slot = 1;
      } else if (e.role == Role::kMemset) {
        slot = 2;
      } else if (e.role == Role::kRuntime) {
        slot = 4;
      } else if (IsDataLoader(e)) {
        slot = 5;
      } else if ((e.role == Role::kOperator || e.role == Role::kPythonFunction || e.role == Role::kUserAnnotation) &&
                 !IsStep(e)) {
        slot = 6;
      }
      if (slot >= 0) role_spans[slot].push_back({e.start, e.end});
    }
    Spans remaining;
    for (const Step& st : s) remaining.push_back({st.start, st.end});
    remaining = Union(remaining);
    Spans claimed[7];
    for (int r = 0; r < 7; ++r) {
      claimed[r] = Intersect(Union(role_spans[r]), remaining);
      remaining = Subtract(remaining, claimed[r]);
    }
    for (const Step& st : s) {
      StepRow row;
      row.name = st.name;
      row.start_ns = st.start;
      row.total_ns = st.end - st.start;
      int64_t* parts[7] = {&row.kernel_ns,  &row.memcpy_ns,     &row.memset_ns,  &row.communication_ns,
                           &row.runtime_ns, &row.dataloader_ns, &row.cpu_exec_ns};
      int64_t sum = 0;
      for (int r = 0; r < 7; ++r) sum += *parts[r] = LengthWithin(claimed[r], st.start, st.end);
      row.other_ns = row.total_ns - sum;
      a_.steps.push_back(row);
    }
    if (!a_.steps.empty()) {
      window_ = {a_.steps.front().start_ns, a_.steps.back().start_ns + a_.steps.back().total_ns};
    }
  }

  // ---- operators (tb-semantics §5)

  // Operator tree nodes link to their first child and next sibling (no per-node
  // containers: a trace has hundreds of thousands of operators).
  struct Node {
    const Ev* ev;
    int first_child = -1, next_sibling = -1, last_child = -1;
    int64_t runtime_ns = 0;   // its own runtime calls
    int64_t launched_ns = 0;  // device time those calls launched (device self)
    bool alive = true;
  };

  bool IsRow(const Ev& e) const {
    std::string_view n = Name(e);
    return !IsStep(e) && !IsDataLoader(e) && !StartsWith(n, "Optimizer.") && n != "DataParallel.forward" &&
           n != "DistributedDataParallel.forward";
  }

  void AddChild(int parent, int child) {
    Node& p = nodes_[static_cast<size_t>(parent)];
    if (p.last_child < 0) {
      p.first_child = child;
    } else {
      nodes_[static_cast<size_t>(p.last_child)].next_sibling = child;
    }
    p.last_child = child;
  }

  void Operators() {
    // Operator nodes per lane, nested by containment; a node that starts inside
    // another and ends after it is left out, as the plugin does.
    std::vector<std::vector<const Ev*>> per_lane(t_.lanes.size());
    for (const Ev& e : events_) {
      bool comm_annotation = e.role == Role::kUserAnnotation && IsCommunicationName(Name(e));
      if (e.role == Role::kOperator || comm_annotation) per_lane[e.lane].push_back(&e);
    }
    std::unordered_map<int64_t, int> node_of_external;
    for (auto& evs : per_lane) {
      std::stable_sort(evs.begin(), evs.end(), [](const Ev* x, const Ev* y) {
        if (x->start != y->start) return x->start < y->start;
        if (x->end != y->end) return x->end > y->end;
        return x->order < y->order;
      });
      std::vector<int> stack;
      for (const Ev* e : evs) {
        while (!stack.empty() && nodes_[static_cast<size_t>(stack.back())].ev->end <= e->start) stack.pop_back();
        if (!stack.empty() && e->end > nodes_[static_cast<size_t>(stack.back())].ev->end) continue;
        int id = static_cast<int>(nodes_.size());
        nodes_.push_back(Node{e});
        if (!stack.empty()) AddChild(stack.back(), id);
        stack.push_back(id);
        if (e->args->external_id > 0) node_of_external.emplace(e->args->external_id, id);
      }
      std::vector<const Ev*>().swap(evs);
    }
    // Device time each runtime call launched, by event index.
    std::vector<int64_t> launched(events_.size(), 0);
    for (size_t i = 0; i < events_.size(); ++i) {
      if (launched_by_[i] >= 0) launched[static_cast<size_t>(launched_by_[i])] += events_[i].dur();
    }
    for (size_t i = 0; i < events_.size(); ++i) {
      const Ev& e = events_[i];
      if (e.role != Role::kRuntime || e.args->external_id <= 0) continue;
      auto it = node_of_external.find(e.args->external_id);
      if (it == node_of_external.end()) continue;
      Node& n = nodes_[static_cast<size_t>(it->second)];
      n.runtime_ns += e.dur();
      n.launched_ns += launched[i];
    }
    // Repeated nesting collapses into the outer call (as PyTorch's profiler does): the
    // parent takes the child's children and runtime calls; its own calls are dropped.
    for (Node& n : nodes_) {
      while (n.alive && n.first_child >= 0 && n.first_child == n.last_child &&
             Name(*nodes_[static_cast<size_t>(n.first_child)].ev) == Name(*n.ev)) {
        Node& c = nodes_[static_cast<size_t>(n.first_child)];
        c.alive = false;
        n.runtime_ns = c.runtime_ns;
        n.launched_ns = c.launched_ns;
        n.first_child = c.first_child;
        n.last_child = c.last_child;
      }
    }
    // Children have larger indexes than their parents: one backward pass computes totals.
    std::vector<int64_t> device_total(nodes_.size(), 0), host_self(nodes_.size(), 0);
    for (size_t k = nodes_.size(); k-- > 0;) {
      Node& n = nodes_[k];
      if (!n.alive) continue;
      int64_t self = n.ev->dur() - n.runtime_ns;
      device_total[k] = n.launched_ns;
      for (int c = n.first_child; c >= 0; c = nodes_[static_cast<size_t>(c)].next_sibling) {
        self -= nodes_[static_cast<size_t>(c)].ev->dur();
        device_total[k] += device_total[static_cast<size_t>(c)];
      }
      host_self[k] = self;
    }
    std::map<std::pair<std::string, std::string>, size_t> row_of;
    for (size_t k = 0; k < nodes_.size(); ++k) {
      const Node& n = nodes_[k];
      if (!n.alive || !IsRow(*n.ev)) continue;
      std::string dims =
          options_.group_by_shape && n.ev->args->input_dims ? std::string(t_.strings.Get(n.ev->args->input_dims)) : "";
      auto [it, added] = row_of.emplace(std::make_pair(std::string(Name(*n.ev)), dims), a_.operators.size());
      if (added) a_.operators.push_back(OperatorRow{it->first.first, dims});
      OperatorRow& r = a_.operators[it->second];
      ++r.calls;
      r.host_total_ns += n.ev->dur();
      r.host_self_ns += host_self[k];
      r.device_total_ns += device_total[k];
      r.device_self_ns += n.launched_ns;
      r.host_max_ns = std::max(r.host_max_ns, n.ev->dur());
    }
    std::stable_sort(a_.operators.begin(), a_.operators.end(),
                     [](const OperatorRow& x, const OperatorRow& y) { return x.host_total_ns > y.host_total_ns; });
  }

  // ---- kernels (§6) and GPUs (§7)

  void Kernels() {
    std::map<uint32_t, size_t> row_of;
    std::vector<double> bw, bsum, ow, osum;
    for (const Ev& e : events_) {
      if (e.role != Role::kKernel) continue;
      auto [it, added] = row_of.emplace(e.name, a_.kernels.size());
      if (added) {
        a_.kernels.push_back(KernelRow{std::string(Name(e)), 0, 0, kMax, 0});
        bw.push_back(0), bsum.push_back(0), ow.push_back(0), osum.push_back(0);
      }
      size_t k = it->second;
      KernelRow& r = a_.kernels[k];
      ++r.calls;
      r.total_ns += e.dur();
      r.min_ns = std::min(r.min_ns, e.dur());
      r.max_ns = std::max(r.max_ns, e.dur());
      a_.kernel_total_ns += e.dur();
      double w = static_cast<double>(e.dur());
      if (e.args->blocks_per_sm >= 0) bw[k] += w, bsum[k] += w * e.args->blocks_per_sm, r.blocks_per_sm = 0;
      if (e.args->occupancy >= 0) ow[k] += w, osum[k] += w * e.args->occupancy, r.occupancy = 0;
    }
    for (size_t k = 0; k < a_.kernels.size(); ++k) {
      KernelRow& r = a_.kernels[k];
      if (r.blocks_per_sm >= 0) r.blocks_per_sm = bw[k] > 0 ? bsum[k] / bw[k] : -1;
      if (r.occupancy >= 0) r.occupancy = ow[k] > 0 ? osum[k] / ow[k] : -1;
    }
    std::stable_sort(a_.kernels.begin(), a_.kernels.end(),
                     [](const KernelRow& x, const KernelRow& y) { return x.total_ns > y.total_ns; });
  }

  int64_t DeviceOf(const Ev& e) const {
    if (t_.lanes[e.lane].device >= 0) return t_.lanes[e.lane].device;
    const std::string& pid = t_.lanes[e.lane].pid;
    char* end = nullptr;
    long long v = std::strtoll(pid.c_str(), &end, 10);
    return end && *end == '\0' && !pid.empty() ? v : -1;
  }

  void Gpu() {
    std::map<int64_t, Spans> busy, kernels;
    std::map<int64_t, std::vector<uint32_t>> streams;
    for (const Ev& e : events_) {
      if (!IsDeviceRole(e.role)) continue;
      int64_t d = DeviceOf(e);
      busy[d].push_back({e.start, e.end});
      if (e.role == Role::kKernel) kernels[d].push_back({e.start, e.end});
      streams[d].push_back(e.lane);
    }
    for (auto& [d, spans] : busy) {
      GpuRow g;
      g.device = d;
      for (const DeviceInfo& info : a_.trace.devices) {
        if (info.id == d) g.name = info.name;
      }
      auto& lanes = streams[d];
      std::sort(lanes.begin(), lanes.end());
      g.streams = static_cast<int>(std::unique(lanes.begin(), lanes.end()) - lanes.begin());
      g.busy_ns = Length(Union(spans));
      Spans k = Union(kernels[d]);
      g.kernel_ns = Length(k);
      g.window_ns = window_.second - window_.first;
      g.window_kernel_ns = g.window_ns > 0 ? LengthWithin(k, window_.first, window_.second) : 0;
      a_.gpu.push_back(g);
    }
  }

  // ---- memory (§8)

  void Memory() {
    if (t_.memory.empty()) return;
    std::map<std::pair<int32_t, int32_t>, std::vector<const MemoryEvent*>> by_device;
    for (const MemoryEvent& m : t_.memory) by_device[{m.device_type, m.device_id}].push_back(&m);
    std::unordered_map<const MemoryEvent*, std::string> owner = AttributeAllocations();
    for (auto& [key, events] : by_device) {
      MemoryRow row;
      row.device_type = key.first;
      row.device_id = key.second;
      std::stable_sort(events.begin(), events.end(),
                       [](const MemoryEvent* x, const MemoryEvent* y) { return x->ts_ns < y->ts_ns; });
      int64_t running = 0;
      std::map<std::string, MemoryOperator> ops;
      for (const MemoryEvent* m : events) {
        if (m->bytes > 0) {
          ++row.allocations;
          row.allocated_bytes += m->bytes;
          MemoryOperator& op = ops[owner[m]];
          ++op.allocations;
          op.bytes += m->bytes;
        } else if (m->bytes < 0) {
          ++row.frees;
          row.freed_bytes -= m->bytes;
        }
        running += m->bytes;
        int64_t level = m->total_allocated >= 0 ? m->total_allocated : running;
        if (m->total_allocated >= 0) row.from_totals = true;
        if (level > row.peak_bytes) row.peak_bytes = level, row.peak_ns = m->ts_ns;
      }
      for (auto& [name, op] : ops) {
        op.name = name;
        row.top_operators.push_back(op);
      }
      std::stable_sort(row.top_operators.begin(), row.top_operators.end(),
                       [](const MemoryOperator& x, const MemoryOperator& y) { return x.bytes > y.bytes; });
      a_.memory.push_back(row);
    }
  }

  // The innermost operator open on each allocation's thread at its time.
  std::unordered_map<const MemoryEvent*, std::string> AttributeAllocations() {
    std::unordered_map<const MemoryEvent*, std::string> owner;
    std::vector<std::vector<const Node*>> ops(t_.lanes.size());
    for (const Node& n : nodes_) {
      if (!IsStep(*n.ev) && n.ev->dur() > 0) ops[n.ev->lane].push_back(&n);  // nodes_ is sorted per lane
    }
    std::vector<std::vector<const MemoryEvent*>> mem(t_.lanes.size());
    for (const MemoryEvent& m : t_.memory) mem[m.lane].push_back(&m);
    for (size_t lane = 0; lane < mem.size(); ++lane) {
      auto& ms = mem[lane];
      std::stable_sort(ms.begin(), ms.end(),
                       [](const MemoryEvent* x, const MemoryEvent* y) { return x->ts_ns < y->ts_ns; });
      std::vector<const Node*> stack;
      size_t next = 0;
      for (const MemoryEvent* m : ms) {
        while (next < ops[lane].size() && ops[lane][next]->ev->start <= m->ts_ns) {
          const Node* n = ops[lane][next++];
          while (!stack.empty() && stack.back()->ev->end <= n->ev->start) stack.pop_back();
          stack.push_back(n);
        }
        while (!stack.empty() && stack.back()->ev->end <= m->ts_ns) stack.pop_back();
        owner[m] = stack.empty() ? "(no operator)" : std::string(Name(*stack.back()->ev));
      }
    }
    return owner;
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
  const std::vector<LaneStacks>& lanes_;
  AnalyzeOptions options_;
  Analysis a_;
  std::vector<Ev> events_;
  std::unordered_map<int64_t, size_t> runtime_of_corr_;
  std::vector<int64_t> launched_by_;  // device event -> index of its runtime event, or -1
  std::vector<Node> nodes_;
  std::pair<int64_t, int64_t> window_{0, 0};
};

}  // namespace

Analysis Analyze(const Trace& trace, const std::vector<LaneStacks>& lanes, const AnalyzeOptions& options) {
  return Analyzer(trace, lanes, options).Run();
}

}  // namespace torch2pprof
