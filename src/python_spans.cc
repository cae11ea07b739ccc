#include "python_spans.h"

#include "flat_map.h"

namespace torch2pprof {

PythonRepair RepairPythonSpans(const std::vector<PythonSpan>& spans) {
  constexpr int64_t kDropped = INT64_MIN, kUnknown = INT64_MAX;
  auto key = [](uint32_t lane, int64_t id) { return (static_cast<uint64_t>(lane) << 40) ^ static_cast<uint64_t>(id); };
  FlatIndexMap by_id;  // (lane, Python id) -> span; the last one written wins
  by_id.Reserve(spans.size());
  for (size_t i = spans.size(); i-- > 0;) {
    if (spans[i].id >= 0) by_id.Emplace(key(spans[i].lane, spans[i].id), static_cast<uint32_t>(i));
  }
  auto parent_of = [&](size_t i) -> int64_t {
    if (spans[i].parent < 0) return -1;
    uint32_t p = by_id.Find(key(spans[i].lane, spans[i].parent));
    return p == FlatIndexMap::kNone || p == i ? -1 : static_cast<int64_t>(p);
  };
  // end[i]: the repaired end (kDropped when nothing is left), filled parents first
  // with an explicit stack: Python stacks can be thousands of frames deep.
  std::vector<int64_t> end(spans.size(), kUnknown);
  std::vector<uint8_t> on_path(spans.size(), 0);
  std::vector<size_t> path;
  for (size_t root = 0; root < spans.size(); ++root) {
    if (end[root] != kUnknown) continue;
    path.push_back(root);
    on_path[root] = 1;
    while (!path.empty()) {
      size_t i = path.back();
      int64_t p = parent_of(i);
      if (p >= 0 && on_path[static_cast<size_t>(p)]) p = -1;  // a cycle: i is treated as a root
      if (p >= 0 && end[static_cast<size_t>(p)] == kUnknown) {
        path.push_back(static_cast<size_t>(p));
        on_path[static_cast<size_t>(p)] = 1;
        continue;
      }
      int64_t e = spans[i].end_ns;
      if (p >= 0) {
        int64_t pe = end[static_cast<size_t>(p)];
        if (pe == kDropped || spans[i].start_ns >= pe) {
          e = kDropped;
        } else if (e > pe) {
          e = pe;
        }
      }
      end[i] = e;
      on_path[i] = 0;
      path.pop_back();
    }
  }
  PythonRepair r;
  for (size_t i = 0; i < spans.size(); ++i) {
    if (spans[i].interval == PythonSpan::kNotAnInterval) continue;
    if (end[i] == kDropped) {
      r.dropped.push_back(spans[i].interval);
    } else if (end[i] != spans[i].end_ns) {
      r.clipped.push_back({spans[i].interval, end[i]});
    }
  }
  return r;
}

}  // namespace torch2pprof
