#include "analysis/spans.h"

#include <algorithm>
#include <functional>

#include "base/sorted_runs.h"

namespace torch2pprof::analysis {

Spans Union(Spans v) {
  // Spans come in file order: a few sorted runs (one per thread, as Kineto writes them)
  // merge in linear time; more, runs of nearly sorted starts that would drive std::sort's
  // introsort into its heapsort fallback, take a merge sort.
  if (!TrySortRuns(v.begin(), v.end(), std::less<>())) std::stable_sort(v.begin(), v.end());
  size_t n = 0;
  for (const auto& s : v) {
    if (s.second <= s.first) continue;
    if (n > 0 && s.first <= v[n - 1].second) {
      v[n - 1].second = std::max(v[n - 1].second, s.second);
    } else {
      v[n++] = s;
    }
  }
  v.resize(n);
  return v;
}

int64_t Length(const Spans& a) {
  int64_t n = 0;
  for (const auto& s : a) n += s.second - s.first;
  return n;
}

Spans Intersect(const Spans& a, const Spans& b) {
  Spans out;
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    int64_t lo = std::max(a[i].first, b[j].first), hi = std::min(a[i].second, b[j].second);
    if (lo < hi) out.emplace_back(lo, hi);
    (a[i].second < b[j].second ? i : j)++;
  }
  return out;
}

Spans Subtract(const Spans& a, const Spans& b) {
  Spans out;
  size_t j = 0;
  for (auto s : a) {
    while (j < b.size() && b[j].second <= s.first) ++j;
    for (size_t k = j; k < b.size() && b[k].first < s.second; ++k) {
      if (b[k].first > s.first) out.emplace_back(s.first, b[k].first);
      s.first = std::max(s.first, b[k].second);
    }
    if (s.first < s.second) out.push_back(s);
  }
  return out;
}

int64_t LengthWithin(const Spans& a, int64_t lo, int64_t hi) {
  auto it = std::partition_point(a.begin(), a.end(), [&](const auto& s) { return s.second <= lo; });
  int64_t n = 0;
  for (; it != a.end() && it->first < hi; ++it) n += std::min(it->second, hi) - std::max(it->first, lo);
  return n;
}

}  // namespace torch2pprof::analysis
