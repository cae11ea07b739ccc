#include "analysis/statistics.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace torch2pprof {
namespace {

constexpr int kResamples = 5000;
// Steps a run's resamples draw at most: beyond, each resample draws this many (an m-out-of-n
// bootstrap) and its deviation is scaled by sqrt(m / n), the statistic's spread at n, so
// that the work is bounded however many steps a run has (a trace of 100,000 steps took
// minutes when every resample drew them all).
constexpr size_t kMaxDraws = 1000;

// splitmix64: a small, seedable generator, so that the same inputs give the same report.
struct Random {
  uint64_t state;
  uint64_t Next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  size_t Below(size_t n) { return static_cast<size_t>(Next() % n); }
};

double MedianInPlace(std::vector<double>& v) {
  size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  double hi = v[mid];
  if (v.size() % 2) return hi;
  double lo = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lo + hi) / 2;
}

double Statistic(std::vector<double>& v, char statistic) {
  if (statistic == 'm') return MedianInPlace(v);
  double sum = 0;
  for (double x : v) sum += x;
  return sum / static_cast<double>(v.size());
}

}  // namespace

int64_t Median(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const int64_t hi = v[mid];
  if (v.size() % 2) return hi;
  const int64_t lo = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return lo + (hi - lo) / 2;
}

double Median(std::vector<double> v) { return v.empty() ? 0 : MedianInPlace(v); }

Significance Bootstrap(const std::vector<int64_t>& base, const std::vector<int64_t>& next, char statistic,
                       uint64_t seed) {
  Significance s;
  if (base.size() < kMinSteps || next.size() < kMinSteps) return s;
  s.assessed = true;
  Random rng{seed};
  auto as_double = [](const std::vector<int64_t>& v) { return std::vector<double>(v.begin(), v.end()); };
  std::vector<double> whole_a = as_double(base), whole_b = as_double(next);
  const double stat_a = Statistic(whole_a, statistic), stat_b = Statistic(whole_b, statistic);
  std::vector<double> diffs(kResamples), a(std::min(base.size(), kMaxDraws)), b(std::min(next.size(), kMaxDraws));
  const double scale_a = std::sqrt(static_cast<double>(a.size()) / static_cast<double>(base.size()));
  const double scale_b = std::sqrt(static_cast<double>(b.size()) / static_cast<double>(next.size()));
  for (int r = 0; r < kResamples; ++r) {
    for (double& x : a) x = static_cast<double>(base[rng.Below(base.size())]);
    for (double& x : b) x = static_cast<double>(next[rng.Below(next.size())]);
    // b* - a*, each deviation scaled where a resample draws fewer than all steps.
    auto at_n = [](double resampled, double whole, double scale) {
      return scale == 1 ? resampled : whole + scale * (resampled - whole);
    };
    diffs[static_cast<size_t>(r)] =
        at_n(Statistic(b, statistic), stat_b, scale_b) - at_n(Statistic(a, statistic), stat_a, scale_a);
  }
  std::sort(diffs.begin(), diffs.end());
  s.low = diffs[static_cast<size_t>(kResamples * 0.025)];
  s.high = diffs[static_cast<size_t>(kResamples * 0.975) - 1];
  s.significant = s.low > 0 || s.high < 0;
  return s;
}

}  // namespace torch2pprof
