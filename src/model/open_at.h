// What is open at an instant on a lane, the one rule every stage asks: the model (which
// op a flow starts or ends in), convert (where an allocation or a zero-length launch
// hangs) and analyze (which operator allocated).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace torch2pprof {

// An event [start, end) holds instant t when start <= t < end: at an instant where one
// event ends and the next begins, the one beginning holds it. A zero-length event holds
// its own instant.
inline bool Holds(int64_t start, int64_t end, int64_t t) { return start <= t && (t < end || start == t); }

// Visits each query instant with the stack of events that hold it, outermost first (the
// innermost, last, started last). `events` come by start, an enclosing event before those
// inside it (the lane builder's order); queries by time. span(e) is e's {start, end}.
template <typename Span, typename Query, typename Visit>
void SweepOpen(const std::vector<uint32_t>& events, Span span, const std::vector<std::pair<int64_t, Query>>& queries,
               Visit visit) {
  std::vector<uint32_t> stack;
  size_t next = 0;
  for (const auto& [ts, q] : queries) {
    for (; next < events.size() && span(events[next]).first <= ts; ++next) {
      const uint32_t e = events[next];
      const int64_t start = span(e).first;
      // What ended before e began (a zero-length event ends where it begins) is left.
      while (!stack.empty() && span(stack.back()).second <= start) stack.pop_back();
      stack.push_back(e);
    }
    while (!stack.empty() && !Holds(span(stack.back()).first, span(stack.back()).second, ts)) stack.pop_back();
    visit(q, stack);
  }
}

}  // namespace torch2pprof
