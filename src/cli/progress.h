// A one-line progress display on stderr for long work: the stage, bytes read of the
// total, MB/s and ETA, redrawn four times a second and cleared when the work ends.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "cli/commands.h"
#include "torch2pprof/torch2pprof.h"

namespace torch2pprof::cli {

// Whether to show progress: --progress forces it, --quiet silences it, else only when
// stderr is a terminal (never in pipes, CI logs or tests). A hosted run never draws: the
// terminal is the host's.
bool WantProgress(const InputArgs& in);

// The line for a state of the work, e.g. "read and parse  512 MB of 2.05 GB (25%)
// 410 MB/s  ETA 4s"; total 0: unknown.
std::string ProgressText(const char* stage, uint64_t read, uint64_t total, double seconds);

// Draws `progress` on file descriptor fd while alive, from a thread of its own, once the
// work has taken half a second; the destructor stops it and clears the line.
class ProgressLine {
 public:
  ProgressLine(const Progress& progress, int fd, bool show);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

 private:
  void Loop();
  const Progress& progress_;
  int fd_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool drawn_ = false;
  std::thread thread_;
};

// Runs call(options) with a progress line for it on stderr, as --progress and --quiet
// ask; the line is cleared before the result comes back.
template <typename Options, typename Call>
auto WithProgress(Options options, const InputArgs& in, Call call) {
  Progress progress;
  options.progress = &progress;
  ProgressLine line(progress, 2, WantProgress(in));
  return call(options);
}

}  // namespace torch2pprof::cli
