// The module view: convert's call tree (backward under forward, waits out of the host
// time) summed per Python function, module instance and module class.
#include <algorithm>
#include <unordered_map>

#include "stages.h"
#include "torch2pprof/aggregator.h"

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

}  // namespace

std::vector<ModuleRow> Modules(const Events& ev, const std::vector<LaneStacks>& lanes, int threads) {
  AggregateOptions options;
  options.labels = false;  // one sample per stack: only the tree is needed
  options.memory = false;
  options.threads = threads;
  Profile p = Aggregate(ev.trace(), ev.model(), lanes, options);
  auto column = [&](const char* type) -> int {
    for (size_t k = 0; k < p.sample_types.size(); ++k) {
      if (p.sample_types[k].type == type) return static_cast<int>(k);
    }
    return -1;
  };
  const int calls = column("calls"), work = column("work"), gpu = column("gpu");
  const size_t n = p.tree.size();
  std::vector<int64_t> own_calls(n, 0), own_work(n, 0), sub_work(n, 0), sub_gpu(n, 0);
  for (const Sample& s : p.samples) {
    own_calls[s.node] += s.values[static_cast<size_t>(calls)];
    own_work[s.node] += s.values[static_cast<size_t>(work)];
    sub_work[s.node] += s.values[static_cast<size_t>(work)];
    if (gpu >= 0) sub_gpu[s.node] += s.values[static_cast<size_t>(gpu)];
  }
  // A child is always added after its parent: one pass from the back sums subtrees.
  for (size_t i = n; i-- > 1;) {
    sub_work[p.tree[i].parent] += sub_work[i];
    sub_gpu[p.tree[i].parent] += sub_gpu[i];
  }
  // Rows per frame group: each Python frame, each module instance and its class.
  std::vector<ModuleRow> rows;
  std::unordered_map<std::string, uint32_t> row_of;
  std::vector<std::vector<uint32_t>> groups(p.frames.size());
  auto row = [&](const std::string& name, const char* kind) {
    auto [it, added] = row_of.emplace(std::string(kind) + '\n' + name, static_cast<uint32_t>(rows.size()));
    if (added) {
      rows.emplace_back();
      rows.back().name = name;
      rows.back().kind = kind;
    }
    return it->second;
  };
  for (size_t f = 0; f < p.frames.size(); ++f) {
    const Frame& frame = p.frames[f];
    std::string_view system = frame.system_name;
    if (system.substr(0, kModulePrefix.size()) == kModulePrefix) {
      std::string_view instance = system.substr(kModulePrefix.size());
      groups[f] = {row(frame.system_name, "module"), row(std::string(ClassOf(instance)), "module class")};
    } else if (!frame.filename.empty()) {
      uint32_t r = row(frame.name, "python");
      rows[r].file = frame.filename;
      rows[r].line = frame.line;
      groups[f] = {r};
    }
  }
  // Depth first; a group's total counts once per stack however often it recurs on it.
  std::vector<std::vector<uint32_t>> children(n);
  for (size_t i = 1; i < n; ++i) children[p.tree[i].parent].push_back(static_cast<uint32_t>(i));
  std::vector<uint32_t> on_path(rows.size(), 0);
  std::vector<std::pair<uint32_t, size_t>> stack = {{0, 0}};  // (node, next child)
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (next == 0 && node != 0) {
      for (uint32_t g : groups[p.tree[node].frame]) {
        ModuleRow& r = rows[g];
        if (on_path[g]++ == 0) r.host_total_ns += sub_work[node], r.device_total_ns += sub_gpu[node];
        r.host_self_ns += own_work[node];
        r.calls += static_cast<uint64_t>(own_calls[node]);
      }
    }
    if (next < children[node].size()) {
      uint32_t child = children[node][next++];
      stack.push_back({child, 0});
      continue;
    }
    if (node != 0) {
      for (uint32_t g : groups[p.tree[node].frame]) --on_path[g];
    }
    stack.pop_back();
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const ModuleRow& x, const ModuleRow& y) { return x.host_total_ns > y.host_total_ns; });
  return rows;
}

}  // namespace torch2pprof::analysis
