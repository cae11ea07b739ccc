// A repair rule of the loader: python_function spans that outlive their Python parent.
// Kineto sometimes records a Python call's end long after its caller returned.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace torch2pprof {

// A python_function X event as read: its lane, "Python id", "Python parent id" and
// time. `interval` is its index in Trace::intervals, or kNotAnInterval (dur <= 0).
struct PythonSpan {
  static constexpr uint32_t kNotAnInterval = UINT32_MAX;
  uint32_t lane;
  uint32_t interval;
  int64_t id;      // -1: none
  int64_t parent;  // -1: none (a root)
  int64_t start_ns, end_ns;
};

struct PythonRepair {
  std::vector<std::pair<uint32_t, int64_t>> clipped;  // (interval, its new end)
  std::vector<uint32_t> dropped;                      // intervals to remove
};

// The rule: a span that ends after its parent (the span with the parent's Python id on
// the same lane; the last such span in file order) ends at the parent's end; one that
// starts at or after that end is dropped. Parents are repaired before their children,
// so a repair runs down a whole chain. A cycle of parent ids is broken where found.
PythonRepair RepairPythonSpans(const std::vector<PythonSpan>& spans);

}  // namespace torch2pprof
