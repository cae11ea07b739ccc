// The operator table follows torch-tb-profiler (tb-semantics §5), with two differences
// (docs/reference.md): host user annotations are tree nodes, never rows, so the time of a
// record_function block inside an operator is not that operator's self time; and so are
// Python functions that run inside an operator (torch.compile's generated code under
// `## Call CompiledFxGraph`, an autograd Function's Python): torch's key_averages()
// counts their time as theirs, not the operator's.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <optional>
#include <unordered_map>

#include "analysis/stages.h"
#include "base/executor.h"
#include "base/flat_map.h"
#include "base/saturate.h"
#include "base/sorted_runs.h"
#include "model/open_at.h"

namespace torch2pprof::analysis {
namespace {

// Operator tree nodes link to their first child and next sibling (no per-node
// containers: a lane has hundreds of thousands of operators).
struct Node {
  uint32_t ev;
  int32_t first_child = -1, next_sibling = -1, last_child = -1;
  int64_t runtime_ns = 0;   // its own runtime calls
  int64_t launched_ns = 0;  // device time those calls launched (device self)
  bool alive = true;
  bool python_child = false;  // a Python function is among its children
  uint32_t external = kNone;  // its External id's first runtime call in ByExternal, if any
  static constexpr uint32_t kNone = ~uint32_t{0};
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

// Runtime calls with an External id, as (id, event) sorted.
std::vector<std::pair<int64_t, uint32_t>> ByExternal(const Events& ev) {
  std::vector<std::pair<int64_t, uint32_t>> out;
  for (size_t e = 0; e < ev.count(); ++e) {
    if (ev.RoleOf(e) == Role::kRuntime && ev.Args(e).external_id > 0)
      out.push_back({ev.Args(e).external_id, static_cast<uint32_t>(e)});
  }
  SortRuns(out.begin(), out.end(), std::less<>());
  return out;
}

// The first of the (id, event) pairs sorted in v whose id is not less than `id`, as
// std::lower_bound finds it, but searched from `hint` outward by doubling steps: a lane's
// operators carry External ids that mostly grow with their start, so the next one is
// near the last one found.
size_t LowerBoundFrom(const std::vector<std::pair<int64_t, uint32_t>>& v, int64_t id, size_t hint) {
  size_t lo = 0, hi = v.size();
  if (hint < v.size() && v[hint].first < id) {
    lo = hint + 1;
    for (size_t step = 1;; step *= 2) {
      const size_t p = hint + step;
      if (p >= v.size()) break;
      if (v[p].first >= id) {
        hi = p;
        break;
      }
      lo = p + 1;
    }
  } else {
    hi = std::min(hint, v.size());  // v[hi] >= id, or hi is the end
    for (size_t step = 1;; step *= 2) {
      if (step > hi) break;
      const size_t p = hi - step;
      if (v[p].first < id) {
        lo = p + 1;
        break;
      }
      hi = p;
    }
  }
  return static_cast<size_t>(
      std::lower_bound(v.begin() + static_cast<ptrdiff_t>(lo), v.begin() + static_cast<ptrdiff_t>(hi), id,
                       [](const std::pair<int64_t, uint32_t>& a, int64_t x) { return a.first < x; }) -
      v.begin());
}

// Each allocation on a lane goes to the innermost operator (a cpu_op, no step) open at its time.
// The owners are `ops`, the lane's tree nodes that are operators (steps, annotations
// and zero-length events are not), in tree order.
void AttributeAllocations(const Events& ev, const std::vector<uint32_t>& ops, const uint32_t* first,
                          const uint32_t* last, std::vector<uint32_t>& owners) {
  if (first == last) return;
  const Trace& t = ev.trace();
  std::vector<std::pair<int64_t, uint32_t>> allocations;
  for (const uint32_t* m = first; m != last; ++m) allocations.push_back({t.memory[*m].ts_ns, *m});
  std::stable_sort(allocations.begin(), allocations.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  auto span = [&](uint32_t e) { return std::pair{ev.Iv(e).start_ns, ev.Iv(e).end_ns}; };
  SweepOpen(ops, span, allocations, [&](uint32_t m, const std::vector<uint32_t>& stack) {
    owners[m] = stack.empty() ? kNoOwner : ev.Iv(stack.back()).name;
  });
}

// One lane's operator tree, and its rows in the order their keys first appear on it.
struct LaneOps {
  std::vector<Node> nodes;
  std::vector<uint64_t> keys;  // by row
  std::vector<OperatorRow> rows;
  std::vector<std::pair<uint32_t, uint32_t>> launchers;  // (runtime call, operator name id)
  std::vector<uint32_t> owner_ops;                       // the operators allocations may go to
  uint64_t saturated = 0;
};

// A lane's operators as a tree, nested by containment; a node that starts inside another
// and ends after it is left out, as the plugin does. Where Python functions are among
// them, torch's own tree decides (EventList._build_tree in torch/autograd/profiler_util.py):
// a Python function, or an operator that outlives only Python functions, closes what it
// outlives and hangs under the first open node that holds it; so Python never costs an
// operator its row, and torch's key_averages() and analyze agree on self times.
template <typename It>
void Nest(const Events& ev, It begin, It end, std::vector<Node>* out) {
  std::vector<uint32_t> evs(begin, end);
  SortRuns(evs.begin(), evs.end(), [&](uint32_t x, uint32_t y) {
    const Interval &a = ev.Iv(x), &b = ev.Iv(y);
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    if (a.end_ns != b.end_ns) return a.end_ns > b.end_ns;
    return x < y;
  });
  // Nested by containment; a node that starts inside another and ends after it is
  // left out, as the plugin does.
  std::vector<Node>& nodes = *out;
  nodes.reserve(evs.size());
  std::vector<int32_t> stack;
  for (uint32_t e : evs) {
    while (!stack.empty() && ev.Iv(nodes[static_cast<size_t>(stack.back())].ev).end_ns <= ev.Iv(e).start_ns)
      stack.pop_back();
    auto end_of = [&](int32_t id) { return ev.Iv(nodes[static_cast<size_t>(id)].ev).end_ns; };
    if (!stack.empty() && ev.Iv(e).end_ns > end_of(stack.back())) {
      size_t j = stack.size();  // the open ones it outlives: stack[j..]
      while (j > 0 && end_of(stack[j - 1]) < ev.Iv(e).end_ns) --j;
      auto python = [&](int32_t id) { return ev.RoleOf(nodes[static_cast<size_t>(id)].ev) == Role::kPythonFunction; };
      const bool close = ev.RoleOf(e) == Role::kPythonFunction ||
                         std::all_of(stack.begin() + static_cast<ptrdiff_t>(j), stack.end(), python);
      if (!close) continue;
      stack.resize(j);
    }
    int32_t id = static_cast<int32_t>(nodes.size());
    nodes.push_back(Node{e});
    if (!stack.empty()) AddChild(nodes, stack.back(), id);
    stack.push_back(id);
  }
}

// The Python functions of a lane (in `py`) that lie inside one of its operators (`nodes`,
// nested, in start order): one merge of the two in start order, the open operators on
// a stack. Eager code has none; compiled graphs and autograd Functions run Python there.
std::vector<uint32_t> PythonInsideOperators(const Events& ev, const std::vector<Node>& nodes, const uint32_t* first,
                                            const uint32_t* last) {
  std::vector<uint32_t> py(first, last), out;
  if (py.empty() || nodes.empty()) return out;
  SortRuns(py.begin(), py.end(), [&](uint32_t x, uint32_t y) { return ev.Iv(x).start_ns < ev.Iv(y).start_ns; });
  std::vector<int64_t> open_ends;  // of the operators open at the merge's instant, outermost first
  size_t k = 0;
  for (const uint32_t p : py) {
    const Interval& iv = ev.Iv(p);
    for (; k < nodes.size() && ev.Iv(nodes[k].ev).start_ns <= iv.start_ns; ++k) {
      const Interval& op = ev.Iv(nodes[k].ev);
      while (!open_ends.empty() && open_ends.back() <= op.start_ns) open_ends.pop_back();
      open_ends.push_back(op.end_ns);
    }
    while (!open_ends.empty() && open_ends.back() <= iv.start_ns) open_ends.pop_back();
    // Nested operators end no later than their parents: the outermost open one holds p
    // if any does (Nest leaves p out where it overlaps one inside).
    if (!open_ends.empty() && iv.end_ns <= open_ends.front() && ev.Dur(p) > 0) out.push_back(p);
  }
  return out;
}

// n's Python children, to ask whether an event lies inside one: their starts in order, and
// the latest end among those starting up to each (siblings may overlap where torch's rule
// closed one early), so that a question is one search however many children there are.
struct PythonChildren {
  uint32_t lane = 0;
  std::vector<int64_t> start, end_max;
  PythonChildren(const Events& ev, const std::vector<Node>& nodes, const Node& n) : lane(ev.Iv(n.ev).lane) {
    for (int32_t c = n.first_child; c >= 0; c = nodes[static_cast<size_t>(c)].next_sibling) {
      const uint32_t e = nodes[static_cast<size_t>(c)].ev;
      if (ev.RoleOf(e) != Role::kPythonFunction) continue;
      start.push_back(ev.Iv(e).start_ns);  // children come in start order
      end_max.push_back(std::max(end_max.empty() ? INT64_MIN : end_max.back(), ev.Iv(e).end_ns));
    }
  }
  bool Holds(const Interval& iv) const {
    if (iv.lane != lane) return false;
    const size_t k = static_cast<size_t>(std::upper_bound(start.begin(), start.end(), iv.start_ns) - start.begin());
    return k > 0 && end_max[k - 1] >= iv.end_ns;
  }
};

// Repeated nesting collapses into the outer call (as PyTorch's profiler does): the
// parent takes the child's children and runtime calls; its own calls are dropped. Then
// each node's device total and host self time.
void Totals(const Events& ev, std::vector<Node>& nodes, std::vector<int64_t>* device_total_out,
            std::vector<int64_t>* host_self_out) {
  for (Node& n : nodes) {
    while (n.alive && n.first_child >= 0 && n.first_child == n.last_child &&
           ev.Iv(nodes[static_cast<size_t>(n.first_child)].ev).name == ev.Iv(n.ev).name) {
      Node& c = nodes[static_cast<size_t>(n.first_child)];
      c.alive = false;
      n.runtime_ns = c.runtime_ns;
      n.launched_ns = c.launched_ns;
      n.first_child = c.first_child;
      n.last_child = c.last_child;
    }
  }
  // Children have larger indexes than their parents: one backward pass computes totals.
  std::vector<int64_t>& device_total = *device_total_out;
  std::vector<int64_t>& host_self = *host_self_out;
  device_total.assign(nodes.size(), 0), host_self.assign(nodes.size(), 0);
  for (size_t k = nodes.size(); k-- > 0;) {
    const Node& n = nodes[k];
    if (!n.alive) continue;
    int64_t self = ev.Dur(n.ev) - n.runtime_ns;
    device_total[k] = n.launched_ns;
    for (int32_t c = n.first_child; c >= 0; c = nodes[static_cast<size_t>(c)].next_sibling) {
      self -= ev.Dur(nodes[static_cast<size_t>(c)].ev);
      device_total[k] += device_total[static_cast<size_t>(c)];
    }
    host_self[k] = self;
  }
}

// A lane's operator rows, by (name, Input Dims) where group_by_shape.
void Rows(const Events& ev, const std::vector<Node>& nodes, const std::vector<int64_t>& device_total,
          const std::vector<int64_t>& host_self, bool group_by_shape, const StepScope* per_step, LaneOps* lane_out) {
  LaneOps& out = *lane_out;
  FlatIndexMap row_of;  // (name id, Input Dims id) -> row
  for (size_t k = 0; k < nodes.size(); ++k) {
    const Node& n = nodes[k];
    if (!n.alive || !ev.IsOperatorRow(n.ev)) continue;
    uint32_t dims = group_by_shape ? ev.Args(n.ev).input_dims : 0;
    uint64_t key = uint64_t{ev.Iv(n.ev).name} << 32 | dims;
    auto [row, added] = row_of.Emplace(key, static_cast<uint32_t>(out.rows.size()));
    if (added) {
      out.keys.push_back(key);
      out.rows.emplace_back();
    }
    OperatorRow& r = out.rows[row];
    ++r.calls;
    uint64_t* sat = &out.saturated;
    r.host_total_ns = SaturatingAdd(r.host_total_ns, ev.Dur(n.ev), sat);
    r.host_self_ns = SaturatingAdd(r.host_self_ns, host_self[k], sat);
    r.device_total_ns = SaturatingAdd(r.device_total_ns, device_total[k], sat);
    r.device_self_ns = SaturatingAdd(r.device_self_ns, n.launched_ns, sat);
    r.host_max_ns = std::max(r.host_max_ns, ev.Dur(n.ev));
    if (per_step) {
      int64_t step = AnalysedHostStep(ev, ev.Iv(n.ev).lane, ev.Iv(n.ev).start_ns, *per_step);
      if (step >= 0) {
        r.step_host_total.Add(static_cast<uint32_t>(step), ev.Dur(n.ev));
        r.step_device_total.Add(static_cast<uint32_t>(step), device_total[k]);
      }
    }
  }
}

// The lanes' rows in lane order: a row is where its key first appears, as one walk
// over the lanes makes them; its sums are integers, in any order the same.
void MergeLanes(const Trace& t, std::vector<LaneOps>& by_lane, OperatorsResult* out) {
  OperatorsResult& result = *out;
  std::unordered_map<uint64_t, size_t> row_of;
  for (LaneOps& lane : by_lane) {
    result.saturated += lane.saturated;
    result.launchers.insert(result.launchers.end(), lane.launchers.begin(), lane.launchers.end());
    for (size_t i = 0; i < lane.rows.size(); ++i) {
      const uint64_t key = lane.keys[i];
      OperatorRow& part = lane.rows[i];
      auto [it, added] = row_of.try_emplace(key, result.rows.size());
      if (added) {
        part.name = std::string(t.strings.Get(static_cast<uint32_t>(key >> 32)));
        part.input_dims = std::string(t.strings.Get(static_cast<uint32_t>(key)));
        result.rows.push_back(std::move(part));
        continue;
      }
      OperatorRow& r = result.rows[it->second];
      r.calls += part.calls;
      uint64_t* sat = &result.saturated;
      r.host_total_ns = SaturatingAdd(r.host_total_ns, part.host_total_ns, sat);
      r.host_self_ns = SaturatingAdd(r.host_self_ns, part.host_self_ns, sat);
      r.device_total_ns = SaturatingAdd(r.device_total_ns, part.device_total_ns, sat);
      r.device_self_ns = SaturatingAdd(r.device_self_ns, part.device_self_ns, sat);
      r.host_max_ns = std::max(r.host_max_ns, part.host_max_ns);
      r.step_host_total.Merge(part.step_host_total);
      r.step_device_total.Merge(part.step_device_total);
    }
  }
}

}  // namespace

OperatorsResult Operators(const Events& ev, bool group_by_shape, const StepScope* per_step, Executor& ex) {
  const Trace& t = ev.trace();
  const size_t lanes = t.lanes.size();
  OperatorsResult result;
  // Runtime calls by External id: all of an id's calls go to the first node with it, in
  // lane order and then tree order. Each lane offers its nodes; the least (lane, node) wins.
  auto by_external_part = Beside(ex, [&ev] { return ByExternal(ev); });
  Groups ops = GroupBy(ev.count(), lanes, [&](size_t e) { return ev.IsHostOp(e) ? int64_t{ev.Iv(e).lane} : -1; });
  Groups mem = GroupBy(t.memory.size(), lanes, [&](size_t m) { return int64_t{t.memory[m].lane}; });
  Groups py = GroupBy(ev.count(), lanes,
                      [&](size_t e) { return ev.RoleOf(e) == Role::kPythonFunction ? int64_t{ev.Iv(e).lane} : -1; });
  result.owners.assign(t.memory.size(), kNoOwner);
  const std::vector<std::pair<int64_t, uint32_t>> by_external = by_external_part.get();
  std::vector<std::atomic<uint64_t>> claimed(by_external.size());
  for (std::atomic<uint64_t>& c : claimed) c.store(~uint64_t{0}, std::memory_order_relaxed);
  std::vector<LaneOps> by_lane(lanes);
  ParallelFor(ex, lanes, [&](size_t lane) {
    std::vector<Node>& nodes = by_lane[lane].nodes;
    Nest(ev, ops.begin(lane), ops.end(lane), &nodes);
    const std::vector<uint32_t> inside = PythonInsideOperators(ev, nodes, py.begin(lane), py.end(lane));
    if (!inside.empty()) {  // nested again with them, as nodes that are never rows
      std::vector<uint32_t> all(ops.begin(lane), ops.end(lane));
      all.insert(all.end(), inside.begin(), inside.end());
      nodes.clear();
      Nest(ev, all.begin(), all.end(), &nodes);
      for (Node& n : nodes) {
        for (int32_t c = n.first_child; c >= 0 && !n.python_child; c = nodes[static_cast<size_t>(c)].next_sibling)
          n.python_child = ev.RoleOf(nodes[static_cast<size_t>(c)].ev) == Role::kPythonFunction;
      }
    }
    if (mem.begin(lane) != mem.end(lane)) {
      for (const Node& n : nodes) {
        if (ev.RoleOf(n.ev) == Role::kOperator && !ev.IsStep(n.ev) && ev.Dur(n.ev) > 0)
          by_lane[lane].owner_ops.push_back(n.ev);
      }
    }
    for (size_t k = 0, hint = 0; k < nodes.size(); ++k) {
      const int64_t external_id = ev.Args(nodes[k].ev).external_id;
      if (external_id <= 0) continue;
      hint = LowerBoundFrom(by_external, external_id, hint);
      if (hint == by_external.size() || by_external[hint].first != external_id) continue;
      nodes[k].external = static_cast<uint32_t>(hint);
      const uint64_t mine = uint64_t{lane} << 32 | k;
      std::atomic<uint64_t>& c = claimed[nodes[k].external];
      for (uint64_t now = c.load(std::memory_order_relaxed); mine < now;) {
        if (c.compare_exchange_weak(now, mine, std::memory_order_relaxed)) break;
      }
    }
  });
  // Each lane's rows, and beside them its allocations' owners.
  ParallelFor(ex, 2 * lanes, [&](size_t part) {
    if (part >= lanes) {
      const size_t lane = part - lanes;
      AttributeAllocations(ev, by_lane[lane].owner_ops, mem.begin(lane), mem.end(lane), result.owners);
      std::vector<uint32_t>().swap(by_lane[lane].owner_ops);
      return;
    }
    const size_t lane = part;
    std::vector<Node>& nodes = by_lane[lane].nodes;
    for (size_t k = 0; k < nodes.size(); ++k) {
      Node& n = nodes[k];
      if (n.external == Node::kNone ||
          claimed[n.external].load(std::memory_order_relaxed) != (uint64_t{lane} << 32 | k))
        continue;
      const int64_t external_id = by_external[n.external].first;
      std::optional<PythonChildren> python;
      if (n.python_child) python.emplace(ev, nodes, n);
      for (size_t i = n.external; i < by_external.size() && by_external[i].first == external_id; ++i) {
        // A call inside one of its Python children is that child's time, not the
        // operator's (a Triton kernel's launcher under its `triton_*` operator).
        if (!python || !python->Holds(ev.Iv(by_external[i].second))) n.runtime_ns += ev.Dur(by_external[i].second);
        n.launched_ns += ev.LaunchedBy(by_external[i].second);
        by_lane[lane].launchers.emplace_back(by_external[i].second, ev.Iv(n.ev).name);
      }
    }
    std::vector<int64_t> device_total, host_self;
    Totals(ev, nodes, &device_total, &host_self);
    LaneOps& out = by_lane[lane];
    Rows(ev, nodes, device_total, host_self, group_by_shape, per_step, &out);
    std::vector<Node>().swap(nodes);
  });
  MergeLanes(t, by_lane, &result);
  std::sort(result.launchers.begin(), result.launchers.end());
  for (OperatorRow& r : result.rows) r.step_host_total.Finish(), r.step_device_total.Finish();
  std::stable_sort(result.rows.begin(), result.rows.end(),
                   [](const OperatorRow& x, const OperatorRow& y) { return x.host_total_ns > y.host_total_ns; });
  return result;
}

}  // namespace torch2pprof::analysis
