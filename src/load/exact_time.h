// Exact time: the decimal microseconds of a trace's ts and dur to integer nanoseconds,
// with no floating point on the way.
#pragma once

#include <cstdint>
#include <string_view>

namespace torch2pprof {

// Exact decimal microseconds (JSON number text, e.g. "1712195495519695.8" or "1.5e3")
// to integer nanoseconds, rounding half to even below 1 ns. False if the text is not
// a number or the value does not fit in int64 nanoseconds.
bool ParseMicrosToNanos(std::string_view text, int64_t* out);

}  // namespace torch2pprof
