// The statistics analyze, ranks and compare report, each defined once: the median, and the
// bootstrap interval of a change.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "torch2pprof/analysis.h"
#include "torch2pprof/compare.h"

namespace torch2pprof {

// The median as numpy and torch compute it: the middle value, or with an even count the
// mean of the two middle ones (here rounded toward the lower); 0 for none.
int64_t Median(std::vector<int64_t> v);
// The same on doubles, unrounded (the bootstrap's resamples).
double Median(std::vector<double> v);

// The nearest-rank percentile (q in 1..100) of values sorted ascending, not empty: the
// smallest value with at least q% of the values at or below it, so always one measured.
// Its index in the n values sorted (n > 0).
inline size_t NearestRankIndex(size_t n, size_t q) {
  const size_t rank = (n * q + 99) / 100;
  return (rank < 1 ? 1 : rank) - 1;
}
// The upper median's index, n / 2: at least half of n sorted values are at or above it
// (the ranks' step alignment keeps the rows at least half the ranks have).
inline size_t UpperMedianIndex(size_t n) { return n / 2; }
template <typename T>
T NearestRank(const std::vector<T>& sorted, size_t q) {
  return sorted[NearestRankIndex(sorted.size(), q)];
}

// A 95% bootstrap interval of the change of a statistic ('m' the median, 'a' the mean)
// from base's per-step values to next's: a fixed number of resamples from a seeded
// generator, so the same values give the same interval. Unassessed below kMinSteps.
Significance Bootstrap(const std::vector<int64_t>& base, const std::vector<int64_t>& next, char statistic,
                       uint64_t seed);

}  // namespace torch2pprof
