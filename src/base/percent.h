// A part as a percentage of a whole, 0 where there is no whole: one rule for the findings'
// thresholds (analysis/advice) and the shares their sentences state (report/).
#pragma once

#include <cstdint>

namespace torch2pprof {

inline double Percent(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0;
}

}  // namespace torch2pprof
