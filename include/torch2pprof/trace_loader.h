// Stage 1: reads a Chrome/Kineto trace (.json or gzip by magic bytes, file or stdin)
// as a stream and returns its timed intervals, lanes and header, times exact in ns.
#pragma once

#include <string>

#include "torch2pprof/trace.h"

namespace torch2pprof {

struct LoadOptions {
  std::string path;      // a file, or "-" for standard input
  int threads = 1;       // > 1: read and parse on two threads; the result never depends on it
  bool details = false;  // also keep args, zero-length X events and [memory] events (analyze)
};

// Throws Error (kind kInput) naming the file and the byte offset of bad input.
Trace LoadTrace(const LoadOptions& options);

// Exact decimal microseconds (JSON number text, e.g. "1712195495519695.8" or "1.5e3")
// to integer nanoseconds, rounding half to even below 1 ns. False if the text is not
// a number or the value does not fit in int64 nanoseconds.
bool ParseMicrosToNanos(std::string_view text, int64_t* out);

}  // namespace torch2pprof
