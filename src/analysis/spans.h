// Sets of time as sorted, disjoint [start, end) spans: what the step breakdown and GPU
// utilization measure with.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace torch2pprof::analysis {

using Spans = std::vector<std::pair<int64_t, int64_t>>;

// Sorted, merged; empty spans dropped. In place: a role's spans can be most of the events.
Spans Union(Spans v);
int64_t Length(const Spans& a);
Spans Intersect(const Spans& a, const Spans& b);
Spans Subtract(const Spans& a, const Spans& b);
// Length of a within [lo, hi), by binary search.
int64_t LengthWithin(const Spans& a, int64_t lo, int64_t hi);

}  // namespace torch2pprof::analysis
