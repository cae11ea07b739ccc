#include "api/call.h"

#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <thread>

#include "model/lane_builder.h"

namespace torch2pprof::api {
namespace {

double Cpu() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

int64_t PeakRss() {  // VmHWM of /proc/self/status, in bytes; 0 where there is none
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return 0;
  char line[256];
  long long kb = 0;
  while (std::fgets(line, sizeof line, f)) {
    if (std::sscanf(line, "VmHWM: %lld kB", &kb) == 1) break;
  }
  std::fclose(f);
  return kb * 1024;
}

// The inputs' sizes as stored, for progress; 0 when one is unknown (stdin, a pipe).
uint64_t InputBytes(const std::vector<std::string>& inputs) {
  uint64_t total = 0;
  for (const std::string& in : inputs) {
    struct stat st;
    if (in == "-" || ::stat(in.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    total += static_cast<uint64_t>(st.st_size);
  }
  return total;
}

}  // namespace

void Stages::Begin(const char* stage) {
  End();
  stage_ = stage;
  if (progress_) progress_->stage.store(stage, std::memory_order_relaxed);
  wall_ = std::chrono::steady_clock::now();
  cpu_ = Cpu();
}

void Stages::End() {
  if (!stage_) return;
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_).count();
  double cpu = Cpu() - cpu_;
  int64_t rss = PeakRss();
  auto s = std::find_if(out_.begin(), out_.end(), [&](const StageTime& t) { return t.stage == stage_; });
  if (s == out_.end()) s = out_.insert(out_.end(), StageTime{stage_});
  s->wall_seconds += wall, s->cpu_seconds += cpu, s->peak_rss_bytes = rss;
  s->json_bytes += json_bytes_, s->cut_on_workers += cut_on_workers_;
  json_bytes_ = cut_on_workers_ = 0;
  stage_ = nullptr;
}

void ThrowOutOfMemory(const Stages& stages) {
  throw Error(Error::Kind::kInput, stages.file, -1,
              std::string("out of memory while ") + stages.current() +
                  ": the input needs more memory than this process may have (ulimit -v, the cgroup, the machine)");
}

std::vector<std::string> ModelWarnings(const TraceModel& m) {
  if (m.steps_cut == 0) return {};
  return {"warning: " + std::to_string(m.steps_cut) +
          " ProfilerSteps ran past the start of the next step of their process (nested or overlapping): each "
          "was cut where the next one starts"};
}

std::string SaturatedWarning(uint64_t n) {
  return "warning: " + std::to_string(n) +
         " sums of durations or bytes passed the largest 64-bit value and were held there (the trace's times or "
         "sizes are not what a profiler writes)";
}

const char kRanksArePositions[] =
    "warning: distributedInfo.rank is missing or repeated; ranks are the inputs' positions";

void CheckDistinctInputs(const std::vector<std::string>& inputs) {
  std::map<std::pair<dev_t, ino_t>, size_t> seen;
  for (size_t i = 0; i < inputs.size(); ++i) {
    struct stat st;
    if (inputs[i] == "-" && inputs.size() > 1) {
      throw Error(Error::Kind::kUsage, "", -1, "standard input ('-') can be one input of one, not of several");
    }
    // Pipes and FIFOs are distinct streams, whatever node they share (process substitution
    // gives each its own): only files can be given twice.
    if (::stat(inputs[i].c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    auto [it, added] = seen.emplace(std::make_pair(st.st_dev, st.st_ino), i);
    if (!added) {
      throw Error(Error::Kind::kUsage, inputs[i], -1,
                  "the same trace is given twice (inputs " + std::to_string(it->second + 1) + " and " +
                      std::to_string(i + 1) + "); each rank is one file");
    }
  }
}

std::atomic<uint64_t>* TrackProgress(Progress* progress, const std::vector<std::string>& inputs) {
  if (!progress) return nullptr;
  progress->bytes_total = InputBytes(inputs);
  return &progress->bytes_read;
}

void NeedEvents(const Trace& trace) {
  if (trace.intervals.empty() && trace.zero_length.empty() && trace.memory.empty()) {
    ThrowInput(trace.file, -1,
               "the trace has no timed events (X events with dur > 0 or B/E pairs) and no [memory] events among its " +
                   std::to_string(trace.stats.events) + " events");
  }
}

int Threads(int threads) { return threads > 0 ? threads : DefaultThreads(); }

LoadOptions LoadOptionsOf(const std::string& path, int threads, bool strict, bool allow_truncated,
                          std::atomic<uint64_t>* bytes_read) {
  LoadOptions o;
  o.path = path;
  o.threads = threads;
  o.details = true;
  o.strict = strict;
  o.allow_truncated = allow_truncated;
  o.bytes_read = bytes_read;
  return o;
}

void AcceptTrace(const Trace& trace, Stages& stages, std::vector<std::string>* warnings) {
  NeedEvents(trace);
  stages.Loaded(trace.stats);
  for (std::string& w : LoadWarnings(trace)) warnings->push_back(std::move(w));
}

Trace LoadTraceInCall(Input& input, const LoadOptions& options, Executor& ex, Stages& stages,
                      std::vector<std::string>* warnings) {
  stages.Begin("read and parse");
  Trace trace = LoadTrace(input.source(), options, ex);
  AcceptTrace(trace, stages, warnings);
  return trace;
}

// The model is one more part for the lane builder's threads, not a thread of its own: the
// main thread's lane alone is often longer than the model, and a model on a thread of its
// own had left the lanes to one thread. The model's own part (the backward links) runs
// where a thread is free, else on the model's.
ModelAndStacks BuildModelBesideStacks(const Trace& trace, Executor& ex) {
  ModelAndStacks out;
  out.lanes = BuildLanes(trace, BuildOptions{}, ex, [&] { out.model = BuildModel(trace, ex); });
  return out;
}

}  // namespace torch2pprof::api

namespace torch2pprof {
int DefaultThreads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }
}  // namespace torch2pprof
