// Sorting what is already a few sorted runs: events in file order, which Kineto writes
// per thread in a handful of runs sorted by start (gpt2_big's main thread: three).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace torch2pprof {

// Sorts [first, last) by less, a strict total order, so the result is the one std::sort
// gives, if it is at most max_runs ascending runs; else leaves it as it is and returns
// false. The runs are merged, which is linear; std::sort's introsort meets such input
// with bad pivots and ends in its heapsort fallback (4% of a convert's samples). Merging
// takes a buffer of the smaller run (std::inplace_merge's own, or none if that
// allocation fails).
template <typename It, typename Less>
bool TrySortRuns(It first, It last, Less less, size_t max_runs = 16) {
  std::vector<It> ends;
  for (It it = first; it != last;) {
    It next = it + 1;
    while (next != last && !less(*next, *(next - 1))) ++next;
    ends.push_back(next);
    if (ends.size() > max_runs) return false;
    it = next;
  }
  // Each run merges into the sorted prefix before it: few runs, so the prefix's
  // re-reading costs little.
  for (size_t k = 1; k < ends.size(); ++k) std::inplace_merge(first, ends[k - 1], ends[k], less);
  return true;
}

// The same, with more than max_runs runs sorted by std::sort.
template <typename It, typename Less>
void SortRuns(It first, It last, Less less, size_t max_runs = 16) {
  if (!TrySortRuns(first, last, less, max_runs)) std::sort(first, last, less);
}

}  // namespace torch2pprof
