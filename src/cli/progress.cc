#include "cli/progress.h"

#include <unistd.h>

#include <cstdio>

#include "torch2pprof/report.h"

namespace torch2pprof::cli {

bool WantProgress(const InputArgs& in) {
  if (in.quiet || in.hosted) return false;
  return in.progress || ::isatty(2);
}

std::string ProgressText(const char* stage, uint64_t read, uint64_t total, double seconds) {
  std::string s = std::string(stage ? stage : "") + "  " + FormatBytes(static_cast<int64_t>(read));
  char b[96];
  if (total > 0) {
    std::snprintf(b, sizeof b, " of %s (%.0f%%)", FormatBytes(static_cast<int64_t>(total)).c_str(),
                  100.0 * static_cast<double>(std::min(read, total)) / static_cast<double>(total));
    s += b;
  }
  double rate = seconds > 0 ? static_cast<double>(read) / seconds : 0;
  if (rate > 0) {
    s += "  " + FormatBytes(static_cast<int64_t>(rate)) + "/s";
  }
  if (total > 0 && rate > 0 && read < total) {
    std::snprintf(b, sizeof b, "  ETA %.0fs", static_cast<double>(total - read) / rate);
    s += b;
  } else {
    std::snprintf(b, sizeof b, "  %.1fs", seconds);
    s += b;
  }
  return s;
}

ProgressLine::ProgressLine(const Progress& progress, int fd, bool show)
    : progress_(progress), fd_(fd), start_(std::chrono::steady_clock::now()) {
  if (show) thread_ = std::thread([this] { Loop(); });
}

ProgressLine::~ProgressLine() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  if (drawn_) {
    const char clear[] = "\r\x1b[K";
    ssize_t ignored = ::write(fd_, clear, sizeof clear - 1);
    (void)ignored;
  }
}

void ProgressLine::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  if (cv_.wait_for(lock, std::chrono::milliseconds(500), [this] { return stop_; })) return;
  do {
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::string line = "\rtorch2pprof: " +
                       ProgressText(progress_.stage.load(std::memory_order_relaxed),
                                    progress_.bytes_read.load(std::memory_order_relaxed),
                                    progress_.bytes_total.load(std::memory_order_relaxed), seconds) +
                       "\x1b[K";
    ssize_t ignored = ::write(fd_, line.data(), line.size());
    (void)ignored;
    drawn_ = true;
  } while (!cv_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stop_; }));
}

}  // namespace torch2pprof::cli
