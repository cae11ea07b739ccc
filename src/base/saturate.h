// Sums a hostile trace could push past 64 bits (durations of nested events, bytes of
// many allocations) stop at the largest value instead of wrapping to a negative one.
// Each time that happens is counted, and the command warns how often.
#pragma once

#include <cstdint>
#include <limits>

namespace torch2pprof {

inline int64_t SaturatingAdd(int64_t a, int64_t b, uint64_t* saturated) {
  int64_t sum;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  ++*saturated;
  return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

inline int64_t SaturatingSub(int64_t a, int64_t b, uint64_t* saturated) {
  int64_t diff;
  if (!__builtin_sub_overflow(a, b, &diff)) return diff;
  ++*saturated;
  return b < 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
}

}  // namespace torch2pprof
