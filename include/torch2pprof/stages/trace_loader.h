// The load stage: reads a Chrome/Kineto trace (.json or gzip by magic bytes, file or stdin)
// as a stream and returns its timed intervals, lanes and header, times exact in ns.
//
// A stage header: for tools that read traces themselves. Unlike torch2pprof.h and the
// headers it includes, it carries no stability promise: it changes with the stages.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "torch2pprof/profile.h"
#include "torch2pprof/stages/trace.h"

namespace torch2pprof {

struct LoadOptions {
  std::string path;              // a file, or "-" for standard input
  int threads = 1;               // > 1: read, cut and parse on worker threads; the result never depends on it
  bool details = false;          // also keep args, zero-length X events and [memory] events (analyze)
  bool strict = false;           // an event that cannot be read is an error, not a counted skip
  bool allow_truncated = false;  // a trace cut off mid-write keeps its complete events
  // Where given, bytes of the file as stored (compressed, for .json.gz) are added as they
  // are read: a progress display reads it from another thread.
  std::atomic<uint64_t>* bytes_read = nullptr;
  // With threads > 1, the bytes of plain text a worker reads and cuts at a time; 0: one
  // read's worth (512 KiB). Tests and the fuzzer cut small ranges to reach every edge.
  size_t range_bytes = 0;
  // Profiles that convert wrote, read beside traces (convert -o): frames a stack keeps.
  uint32_t max_depth = kDefaultMaxDepth;
};

// Loads a trace held in memory (tests, the fuzzer); `name` stands for the file in errors.
Trace LoadTraceFromMemory(std::string_view data, const std::string& name, const LoadOptions& options);

// Throws Error (kind kInput) naming the file and the byte offset of bad input.
Trace LoadTrace(const LoadOptions& options);

// Loads several traces on `workers` threads and hands each to `use` in the order
// given, with at most `workers` traces in memory (the one in use included): merging
// many ranks needs memory for a few traces, not all. The first input in that order
// that fails to load (or whose `use` throws) ends it with that error; an input that is
// no trace (a snapshot, a profile, a summary) is such an error.
void LoadEach(const std::vector<LoadOptions>& inputs, int workers, const std::function<void(Trace&)>& use);

// One line per thing the user should know about a load that succeeded: events
// skipped as unreadable (count, reasons, first byte offsets), events repaired, a
// truncated end. Each line starts with the file name.
std::vector<std::string> LoadWarnings(const Trace& trace);

}  // namespace torch2pprof
