// The module view: convert's call tree (backward under forward, waits out of the host
// time) as the model's modules — each nn.Module instance under the instance that called
// it, its classes — and its Python functions.
#include <algorithm>
#include <map>
#include <unordered_map>

#include "analysis/stages.h"
#include "convert/aggregator.h"

namespace torch2pprof::analysis {
namespace {

constexpr std::string_view kModulePrefix = "nn.Module: ";

// "Linear_12" -> "Linear": the class of a module instance.
std::string_view ClassOf(std::string_view instance) {
  size_t us = instance.rfind('_');
  if (us == std::string_view::npos || us + 1 == instance.size()) return instance;
  for (size_t i = us + 1; i < instance.size(); ++i) {
    if (instance[i] < '0' || instance[i] > '9') return instance;
  }
  return instance.substr(0, us);
}

// Per tree node of the profile: its own and its subtree's calls, work and gpu.
struct NodeValues {
  std::vector<int64_t> own_calls, own_work, own_gpu, sub_work, sub_gpu;
};

NodeValues Values(const Profile& p) {
  auto column = [&](const char* type) -> int {
    for (size_t k = 0; k < p.sample_types.size(); ++k) {
      if (p.sample_types[k].type == type) return static_cast<int>(k);
    }
    return -1;
  };
  const int calls = column("calls"), work = column("work"), gpu = column("gpu");
  const size_t n = p.tree.size();
  NodeValues v{std::vector<int64_t>(n), std::vector<int64_t>(n), std::vector<int64_t>(n), std::vector<int64_t>(n),
               std::vector<int64_t>(n)};
  for (const Sample& s : p.samples) {
    v.own_calls[s.node] += s.values[static_cast<size_t>(calls)];
    v.own_work[s.node] += s.values[static_cast<size_t>(work)];
    if (gpu >= 0) v.own_gpu[s.node] += s.values[static_cast<size_t>(gpu)];
  }
  v.sub_work = v.own_work, v.sub_gpu = v.own_gpu;
  // A child is always added after its parent: one pass from the back sums subtrees.
  for (size_t i = n; i-- > 1;) {
    v.sub_work[p.tree[i].parent] += v.sub_work[i];
    v.sub_gpu[p.tree[i].parent] += v.sub_gpu[i];
  }
  return v;
}

// Orders the tree depth first, each node's children by the cost (device time where the
// trace has any, else host time), and writes its depth.
std::vector<ModuleNode> Ordered(std::vector<ModuleNode> nodes, bool by_device) {
  auto cost = [by_device](const ModuleNode& m) { return by_device ? m.device_total_ns : m.host_total_ns; };
  std::vector<std::vector<uint32_t>> children(nodes.size() + 1);  // the last: top-level modules
  for (uint32_t i = 0; i < nodes.size(); ++i)
    children[nodes[i].parent < 0 ? nodes.size() : static_cast<size_t>(nodes[i].parent)].push_back(i);
  for (auto& c : children) {
    std::stable_sort(c.begin(), c.end(), [&](uint32_t a, uint32_t b) { return cost(nodes[a]) > cost(nodes[b]); });
  }
  std::vector<ModuleNode> out;
  std::vector<int32_t> index(nodes.size(), -1);
  std::vector<std::pair<size_t, size_t>> stack = {{nodes.size(), 0}};  // (node, next child)
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next == children[node].size()) {
      stack.pop_back();
      continue;
    }
    uint32_t c = children[node][next++];
    index[c] = static_cast<int32_t>(out.size());
    out.push_back(nodes[c]);
    out.back().parent = node == nodes.size() ? -1 : index[node];
    out.back().depth = static_cast<int>(stack.size()) - 1;
    stack.push_back({c, 0});
  }
  return out;
}

// Classes: their instances together, a total once per stack (an instance inside
// another of its class counts in the outer one's).
std::vector<ModuleClassRow> Classes(const std::vector<ModuleNode>& tree) {
  std::vector<ModuleClassRow> classes;
  std::map<std::string, uint32_t> class_of;
  for (size_t i = 0; i < tree.size(); ++i) {
    const ModuleNode& m = tree[i];
    auto [it, added] = class_of.emplace(m.module_class, static_cast<uint32_t>(classes.size()));
    if (added) {
      classes.emplace_back();
      classes.back().name = m.module_class;
    }
    ModuleClassRow& c = classes[it->second];
    bool inside = false;
    for (int32_t up = m.parent; up >= 0 && !inside; up = tree[static_cast<size_t>(up)].parent)
      inside = tree[static_cast<size_t>(up)].module_class == m.module_class;
    ++c.instances;
    c.calls += m.calls;
    c.host_self_ns += m.host_self_ns, c.device_self_ns += m.device_self_ns;
    if (!inside) c.host_total_ns += m.host_total_ns, c.device_total_ns += m.device_total_ns;
  }
  return classes;
}

}  // namespace

// Over 100 lines: one depth-first walk over the profile's tree; every part of it reads
// and moves the one stack of module instances the walk keeps.
ModulesResult Modules(const Events& ev, const std::vector<LaneStacks>& lanes, Executor& ex) {
  AggregateOptions options;
  options.labels = false;  // one sample per stack: only the tree is needed
  options.memory = false;
  Profile p = Aggregate(ev.trace(), ev.model(), lanes, options, ex);
  const NodeValues v = Values(p);
  const size_t n = p.tree.size();
  ModulesResult result;
  // Per frame: the module instance it is (its name), or a Python function (its row).
  std::vector<std::string_view> instance(p.frames.size());
  std::vector<int32_t> python_row(p.frames.size(), -1);
  std::unordered_map<std::string, uint32_t> python_of;
  for (size_t f = 0; f < p.frames.size(); ++f) {
    const Frame& frame = p.frames[f];
    std::string_view system = frame.system_name;
    if (system.substr(0, kModulePrefix.size()) == kModulePrefix) {
      instance[f] = system.substr(kModulePrefix.size());
    } else if (!frame.filename.empty()) {
      auto [it, added] = python_of.emplace(frame.name, static_cast<uint32_t>(result.python.size()));
      if (added) {
        result.python.emplace_back();
        result.python.back().name = frame.name;
        result.python.back().file = frame.filename;
        result.python.back().line = frame.line;
      }
      python_row[f] = static_cast<int32_t>(it->second);
    }
  }
  // Depth first over the profile's tree, keeping the module instance each node runs in:
  // an instance is keyed by its caller instance and its name, so the model's tree comes
  // out as it was called. A module's own time is that of the nodes whose innermost module
  // it is; its total and a Python function's count once per stack however often they recur.
  std::vector<ModuleNode> nodes;
  std::map<std::pair<int32_t, std::string_view>, int32_t> node_of;
  std::vector<std::vector<uint32_t>> children(n);
  for (size_t i = 1; i < n; ++i) children[p.tree[i].parent].push_back(static_cast<uint32_t>(i));
  std::vector<int32_t> module_at(n, -1);  // by profile node: its innermost module
  std::vector<uint32_t> module_open, python_open(result.python.size(), 0);
  struct Visit {
    uint32_t node;
    size_t next;
    bool entered_module;
  };
  std::vector<Visit> stack = {{0, 0, false}};
  while (!stack.empty()) {
    Visit& at = stack.back();
    const uint32_t node = at.node;
    if (at.next == 0 && node != 0) {
      const uint32_t frame = p.tree[node].frame;
      int32_t module = module_at[p.tree[node].parent];
      if (!instance[frame].empty() && (module < 0 || nodes[static_cast<size_t>(module)].name != instance[frame])) {
        auto [it, added] = node_of.emplace(std::make_pair(module, instance[frame]), static_cast<int32_t>(nodes.size()));
        if (added) {
          nodes.emplace_back();
          nodes.back().name = std::string(instance[frame]);
          nodes.back().module_class = std::string(ClassOf(instance[frame]));
          nodes.back().parent = module;
        }
        module = it->second;
        if (module_open.size() < nodes.size()) module_open.resize(nodes.size(), 0);
        ModuleNode& m = nodes[static_cast<size_t>(module)];
        if (module_open[static_cast<size_t>(module)]++ == 0)
          m.host_total_ns += v.sub_work[node], m.device_total_ns += v.sub_gpu[node];
        at.entered_module = true;
      }
      module_at[node] = module;
      if (module >= 0) {
        ModuleNode& m = nodes[static_cast<size_t>(module)];
        if (!instance[frame].empty()) m.calls += static_cast<uint64_t>(v.own_calls[node]);
        m.host_self_ns += v.own_work[node], m.device_self_ns += v.own_gpu[node];
      }
      if (python_row[frame] >= 0) {
        PythonFunctionRow& r = result.python[static_cast<size_t>(python_row[frame])];
        if (python_open[static_cast<size_t>(python_row[frame])]++ == 0)
          r.host_total_ns += v.sub_work[node], r.device_total_ns += v.sub_gpu[node];
        r.host_self_ns += v.own_work[node];
        r.calls += static_cast<uint64_t>(v.own_calls[node]);
      }
    }
    if (at.next < children[node].size()) {
      uint32_t child = children[node][at.next++];
      stack.push_back({child, 0, false});
      continue;
    }
    if (node != 0) {
      const uint32_t frame = p.tree[node].frame;
      if (at.entered_module) --module_open[static_cast<size_t>(module_at[node])];
      if (python_row[frame] >= 0) --python_open[static_cast<size_t>(python_row[frame])];
    }
    stack.pop_back();
  }
  const bool by_device = std::any_of(nodes.begin(), nodes.end(), [](const ModuleNode& m) { return m.device_total_ns; });
  result.tree = Ordered(std::move(nodes), by_device);
  result.classes = Classes(result.tree);
  auto self = [by_device](const ModuleClassRow& c) { return by_device ? c.device_self_ns : c.host_self_ns; };
  std::stable_sort(result.classes.begin(), result.classes.end(),
                   [&](const ModuleClassRow& x, const ModuleClassRow& y) { return self(x) > self(y); });
  std::stable_sort(
      result.python.begin(), result.python.end(),
      [](const PythonFunctionRow& x, const PythonFunctionRow& y) { return x.host_self_ns > y.host_self_ns; });
  return result;
}

}  // namespace torch2pprof::analysis
