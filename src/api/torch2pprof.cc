#include "torch2pprof/torch2pprof.h"

#include <dirent.h>
#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <thread>

#include "analysis/analyzer.h"
#include "analysis/ranks.h"
#include "analysis/snapshot_analysis.h"
#include "analysis/summary_file.h"
#include "base/executor.h"
#include "convert/aggregator.h"
#include "convert/snapshot_profile.h"
#include "load/loader.h"
#include "load/snapshot.h"
#include "model/build.h"
#include "model/lane_builder.h"
#include "torch2pprof/output.h"

namespace torch2pprof {
namespace {

// Stage by stage: wall time, and CPU time of the whole process (all its threads).
class Stages {
 public:
  Stages(std::vector<StageTime>* out, Progress* progress) : out_(*out), progress_(progress) {}
  ~Stages() { End(); }
  void Begin(const char* stage) {
    End();
    stage_ = stage;
    if (progress_) progress_->stage.store(stage, std::memory_order_relaxed);
    wall_ = std::chrono::steady_clock::now();
    cpu_ = Cpu();
  }
  void End() {
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
  const char* current() const { return stage_ ? stage_ : "starting"; }
  // The trace the stages work on now, for a message that names it.
  std::string file;
  // The current stage loaded a trace.
  void Loaded(const LoadStats& stats) {
    json_bytes_ += stats.json_bytes;
    cut_on_workers_ += stats.cut_on_workers;
  }

 private:
  static double Cpu() {
    timespec t{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
  }
  static int64_t PeakRss() {  // VmHWM of /proc/self/status, in bytes; 0 where there is none
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
  std::vector<StageTime>& out_;
  Progress* progress_;
  const char* stage_ = nullptr;
  uint64_t json_bytes_ = 0, cut_on_workers_ = 0;  // loaded in the current stage
  std::chrono::steady_clock::time_point wall_;
  double cpu_ = 0;
};

std::string SaturatedWarning(uint64_t n) {
  return "warning: " + std::to_string(n) +
         " sums of durations or bytes passed the largest 64-bit value and were held there (the trace's times or "
         "sizes are not what a profiler writes)";
}

// A call: its result, its stages timed (and shown through `progress`), and out of memory
// named with the file and the stage (the machine's limit is no fault of the input, but it
// is where the input was too large).
template <typename Result, typename Body>
Result RunStages(Progress* progress, const std::string& file, Body body) {
  Result result;
  Stages stages(&result.stages, progress);
  stages.file = file;
  try {
    body(stages, result);
  } catch (const std::bad_alloc&) {
    throw Error(Error::Kind::kInput, stages.file, -1,
                std::string("out of memory while ") + stages.current() +
                    ": the trace needs more memory than this process may have (ulimit -v, the cgroup, the machine)");
  }
  return result;
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

const char kRanksArePositions[] =
    "warning: distributedInfo.rank is missing or repeated; ranks are the inputs' positions";

// The traces of several ranks are different files: one given twice (by another name too:
// a link, ./x) would be a rank of its own, a copy that hides the others' differences.
void CheckDistinctInputs(const std::vector<std::string>& inputs) {
  std::map<std::pair<dev_t, ino_t>, size_t> seen;
  for (size_t i = 0; i < inputs.size(); ++i) {
    struct stat st;
    if (inputs[i] == "-" && inputs.size() > 1) {
      throw Error(Error::Kind::kUsage, "", -1, "standard input ('-') can be one trace of one, not of several");
    }
    if (::stat(inputs[i].c_str(), &st) != 0) continue;  // the load names a missing file
    auto [it, added] = seen.emplace(std::make_pair(st.st_dev, st.st_ino), i);
    if (!added) {
      throw Error(Error::Kind::kUsage, inputs[i], -1,
                  "the same trace is given twice (inputs " + std::to_string(it->second + 1) + " and " +
                      std::to_string(i + 1) + "); each rank is one file");
    }
  }
}

// Sets the progress's total from the inputs, and returns the counter the loads add to.
std::atomic<uint64_t>* TrackProgress(Progress* progress, const std::vector<std::string>& inputs) {
  if (!progress) return nullptr;
  progress->bytes_total = InputBytes(inputs);
  return &progress->bytes_read;
}

// analyze reads traces and summaries; a profile given to it gets a line that says so, not
// a JSON error at its first byte.
void NotAProfile(const std::string& input) {
  if (input != "-" && LooksLikeProfile(input)) {
    ThrowInput(input, -1,
               "a pprof profile: analyze, compare and summarize read traces (go tool pprof reads profiles, and "
               "convert -o merges them)");
  }
}

void NeedEvents(const Trace& trace) {
  if (trace.intervals.empty() && trace.zero_length.empty() && trace.memory.empty()) {
    ThrowInput(trace.file, -1,
               "the trace has no timed events (X events with dur > 0 or B/E pairs) and no [memory] events among its " +
                   std::to_string(trace.stats.events) + " events");
  }
}

struct ModelAndStacks {
  TraceModel model;
  std::vector<LaneStacks> lanes;
};

// The model, and beside it the uncut stacks (they need no model): analyze's, and
// convert's unless step labels cut them. The model is one more part for the lane
// builder's threads, not a thread of its own: the main thread's lane alone is often
// longer than the model, and a model on a thread of its own had left the lanes to one
// thread. The model's own part (the backward links) runs where a thread is free, else on
// the model's.
ModelAndStacks BuildModelBesideStacks(const Trace& trace, Executor& ex) {
  ModelAndStacks out;
  out.lanes = BuildLanes(trace, BuildOptions{}, ex, [&] { out.model = BuildModel(trace, ex); });
  return out;
}

// The model, and the stacks convert aggregates. The stacks need the model only for the
// step bounds they are cut at when samples get step labels: with threads they are built
// uncut beside the model, and again, cut, in the case the model then turns step labels
// on (a trace of at most kAutoStepLabels steps; the uncut build ran on idle cores).
// With several inputs the other threads are loading the next ones: one after the other.
ModelAndStacks BuildModelAndStacks(const Trace& trace, Executor& ex, bool one_input, const AggregateOptions& aggregate,
                                   Stages& stages) {
  ModelAndStacks out;
  if (!one_input || ex.threads() < 2 || aggregate.step_labels == StepLabels::kOn) {
    stages.Begin("model");
    out.model = BuildModel(trace, ex);
    stages.Begin("stacks");
    out.lanes = BuildLanes(trace, ConvertBuildOptions(out.model, aggregate), ex);
    return out;
  }
  stages.Begin("model and stacks");
  out = BuildModelBesideStacks(trace, ex);
  if (StepLabelsOn(aggregate, out.model)) {
    stages.Begin("stacks");
    std::vector<LaneStacks>().swap(out.lanes);
    out.lanes = BuildLanes(trace, ConvertBuildOptions(out.model, aggregate), ex);
  }
  return out;
}

}  // namespace

OutputFormat FormatForPath(const std::string& path) {
  auto ends = [&](const std::string& ext) {
    return path.size() >= ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0;
  };
  if (ends(".folded")) return OutputFormat::kFolded;
  if (ends(".prof") || ends(".pstats")) return OutputFormat::kPstats;
  if (ends(".pb.gz") || ends(".pb") || ends(".pprof") || ends(".pprof.gz") || ends(".gz")) return OutputFormat::kPprof;
  // Standard output, a device or a pipe, and a name without an extension: pprof.
  struct stat st;
  const std::string base = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  if (path == "-" || base.find('.') == std::string::npos ||
      (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))) {
    return OutputFormat::kPprof;
  }
  // out.json or out.svg would silently get a gzipped profile under a name that says otherwise.
  throw Error(Error::Kind::kUsage, "", -1,
              "the output name " + path +
                  " says no format this writes: name it .pb.gz (pprof), .folded (folded stacks) or .prof/.pstats "
                  "(pstats), or give --format pprof|folded|pstats");
}

int DefaultThreads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

namespace {

// The profile to options.output, in its format, atomically.
void WriteOutput(const ConvertOptions& options, const Profile& profile, Stages& stages) {
  if (options.output.empty()) return;
  stages.Begin("encode and write");
  WriteOptions write;
  write.inputs = options.inputs;
  write.force = options.force;
  write.remove_on_signal = options.remove_output_on_signal;
  OutputFile out(options.output, write);
  if (options.format == OutputFormat::kFolded) {
    WriteFolded(profile, options.sample_type, options.folded_root, [&](std::string_view part) { out.Write(part); });
  } else {
    out.Write(options.format == OutputFormat::kPstats ? WritePstats(profile, options.sample_type)
                                                      : Gzip(EncodeProfile(profile)));
  }
  out.Commit();
}

// The sample type asked for is checked before anything is written; for pprof it is the
// type pprof shows first.
void ApplySampleType(const ConvertOptions& options, Profile& profile) {
  if (options.sample_type.empty()) return;
  SampleTypeIndex(profile, options.sample_type);
  if (options.format == OutputFormat::kPprof) profile.default_sample_type = options.sample_type;
}

// A memory snapshot: bytes by allocation stack (docs/reference.md, "Memory snapshots").
void ConvertSnapshot(const ConvertOptions& options, Stages& stages, ConvertResult& result,
                     std::atomic<uint64_t>* bytes_read) {
  if (options.format == OutputFormat::kPstats) {
    throw Error(Error::Kind::kUsage, "", -1,
                "pstats holds call times: a memory snapshot converts to pprof (.pb.gz) or folded stacks (.folded)");
  }
  stages.Begin("read and parse");
  const MemorySnapshot snapshot = LoadSnapshot(options.inputs[0], bytes_read);
  stages.Begin("aggregate");
  SnapshotProfileOptions profile_options;
  profile_options.all_frames = options.all_frames;
  const std::vector<DevicePeak> peaks = DevicePeaks(snapshot);
  result.profile = SnapshotProfile(snapshot, peaks, profile_options);
  for (const DevicePeak& peak : peaks) {
    if (!peak.consistent) result.warnings.push_back("warning: " + DisagreeLine("cuda:" + std::to_string(peak.device)));
  }
  ApplySampleType(options, result.profile);
  WriteOutput(options, result.profile, stages);
}

void ConvertStages(const ConvertOptions& options, Stages& stages, ConvertResult& result) {
  std::atomic<uint64_t>* bytes_read = TrackProgress(options.progress, options.inputs);
  for (const std::string& input : options.inputs) {
    if (!LooksLikeSnapshot(input)) continue;
    if (options.inputs.size() > 1) {
      throw Error(Error::Kind::kUsage, input, -1,
                  "a memory snapshot converts alone (convert SNAPSHOT OUT), not merged with other inputs");
    }
    return ConvertSnapshot(options, stages, result, bytes_read);
  }
  // The call's threads, all of them: nothing below starts another.
  Executor ex(options.threads > 0 ? options.threads : DefaultThreads());
  const bool merged = options.inputs.size() > 1;
  if (merged) CheckDistinctInputs(options.inputs);
  AggregateOptions aggregate;
  aggregate.thread_stacks = options.thread_stacks;
  aggregate.rank_labels = merged;
  aggregate.step_labels = options.step_labels;
  aggregate.max_depth = options.max_depth;
  Aggregator aggregator(aggregate);
  std::vector<int64_t> ranks;
  std::vector<LoadOptions> loads;
  // Profiles that convert wrote merge beside the traces, each in its place among the
  // inputs (the ranks of unranked inputs are positions).
  std::vector<bool> is_profile;
  for (const std::string& input : options.inputs) {
    is_profile.push_back(input != "-" && LooksLikeProfile(input));
    if (is_profile.back()) continue;
    // One input reads and parses on all threads; several are read side by side.
    loads.push_back(LoadOptions{input, ex.threads(), false, options.strict, options.allow_truncated, bytes_read});
  }
  size_t next_input = 0;
  auto add_profiles = [&](size_t until) {  // the profiles among the inputs before `until`
    for (; next_input < until; ++next_input) {
      if (!is_profile[next_input]) continue;
      stages.file = options.inputs[next_input];
      stages.Begin("read profiles");
      Profile p = ReadProfile(options.inputs[next_input]);
      stages.Begin("aggregate");
      for (int64_t rank : aggregator.AddProfile(p, options.inputs[next_input])) ranks.push_back(rank);
    }
  };
  auto next_trace = [&] {
    while (next_input < is_profile.size() && is_profile[next_input]) add_profiles(next_input + 1);
    return next_input++;
  };
  stages.Begin("read and parse");
  LoadEach(loads, ex, [&](Trace& trace) {
    next_trace();
    stages.file = trace.file;
    NeedEvents(trace);
    stages.Loaded(trace.stats);
    for (std::string& w : LoadWarnings(trace)) result.warnings.push_back(std::move(w));
    ModelAndStacks built = BuildModelAndStacks(trace, ex, !merged, aggregate, stages);
    stages.Begin("aggregate");
    aggregator.Add(trace, built.model, built.lanes, ex);
    ranks.push_back(ReadDistributedInfo(trace.header).rank);
    stages.Begin("read and parse");
  });
  add_profiles(options.inputs.size());
  stages.Begin("aggregate");
  if (merged) {  // ranks label samples apart
    bool replaced = false;
    ranks = RanksOrPositions(std::move(ranks), &replaced);
    if (replaced) result.warnings.push_back(kRanksArePositions);
  }
  if (aggregator.saturated()) result.warnings.push_back(SaturatedWarning(aggregator.saturated()));
  if (aggregator.folded_stacks()) {
    result.warnings.push_back("warning: " + std::to_string(aggregator.folded_stacks()) + " stacks are deeper than " +
                              std::to_string(options.max_depth) +
                              " frames: their deeper frames fold into one [deeper frames truncated] frame, with "
                              "their time (--max-depth)");
  }
  result.profile = std::move(aggregator).Finish(merged ? ranks : std::vector<int64_t>{});
  ApplySampleType(options, result.profile);
  WriteOutput(options, result.profile, stages);
}

}  // namespace

AnalyzeSnapshotResult AnalyzeSnapshot(const AnalyzeSnapshotOptions& options) {
  return RunStages<AnalyzeSnapshotResult>(
      options.progress, options.input, [&](Stages& stages, AnalyzeSnapshotResult& result) {
        std::atomic<uint64_t>* bytes_read = TrackProgress(options.progress, {options.input});
        stages.Begin("read and parse");
        const MemorySnapshot snapshot = LoadSnapshot(options.input, bytes_read);
        stages.Begin("analyze");
        result.analysis = AnalyzeMemorySnapshot(snapshot);
        for (const SnapshotDevice& d : result.analysis.devices) {
          if (!d.consistent) result.warnings.push_back("warning: " + DisagreeLine(d.device));
        }
      });
}

ConvertResult Convert(const ConvertOptions& options) {
  return RunStages<ConvertResult>(
      options.progress, options.inputs.empty() ? "" : options.inputs[0],
      [&](Stages& stages, ConvertResult& result) { ConvertStages(options, stages, result); });
}

namespace {

// One rank's trace reduced to its summary, as analyze over ranks and summarize both do.
RankSummary SummarizeTrace(const Trace& trace, Executor& ex, Stages& stages) {
  stages.Begin("model");
  TraceModel model = BuildModel(trace, ex);
  stages.Begin("analyze");
  Analysis analysis = Analyze(trace, model, AnalysisOptions{}, ex);
  return SummarizeRank(trace, model, analysis);
}

// A summary's first bytes say what it is, whatever its name.
SummaryFile ReadSummary(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) ThrowInput(path, -1, std::string("cannot open: ") + std::strerror(errno));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) ThrowInput(path, -1, std::string("cannot read: ") + std::strerror(errno));
  return DecodeSummary(path, text);
}

void AnalyzeRanksStages(const AnalyzeRanksOptions& options, Stages& stages, AnalyzeRanksResult& result) {
  Executor ex(options.threads > 0 ? options.threads : DefaultThreads());
  CheckDistinctInputs(options.inputs);
  // Summaries (the map's output) are read as they are; traces are summarised here. Either
  // way each input gives its summary and warnings, kept in input order, so that a report
  // from summaries is the report from their traces.
  const size_t n = options.inputs.size();
  std::vector<RankSummary> ranks(n);
  std::vector<std::vector<std::string>> warnings(n);
  std::vector<std::string> traces;
  std::vector<size_t> trace_slot;
  stages.Begin("read summaries");
  for (size_t i = 0; i < n; ++i) {
    if (!LooksLikeSummaryFile(options.inputs[i])) {
      NotAProfile(options.inputs[i]);
      traces.push_back(options.inputs[i]);
      trace_slot.push_back(i);
      continue;
    }
    stages.file = options.inputs[i];
    SummaryFile s = ReadSummary(options.inputs[i]);
    ranks[i] = std::move(s.summary);
    warnings[i] = std::move(s.warnings);
  }
  std::atomic<uint64_t>* bytes_read = TrackProgress(options.progress, traces);
  std::vector<LoadOptions> loads;
  for (const std::string& input : traces) {
    loads.push_back(LoadOptions{input, 1, /*details=*/true, options.strict, options.allow_truncated, bytes_read});
  }
  stages.Begin("read and parse");
  // The traces are loaded side by side on the call's threads; each is analysed on what is
  // left (the calling thread, until the last loads are done). LoadEach hands them over in order.
  size_t next = 0;
  LoadEach(loads, ex, [&](Trace& trace) {
    const size_t slot = trace_slot[next++];
    stages.file = trace.file;
    NeedEvents(trace);
    stages.Loaded(trace.stats);
    warnings[slot] = LoadWarnings(trace);
    ranks[slot] = SummarizeTrace(trace, ex, stages);
    stages.Begin("read and parse");
  });
  for (std::vector<std::string>& w : warnings) {
    for (std::string& line : w) result.warnings.push_back(std::move(line));
  }
  stages.Begin("across ranks");
  result.analysis = AnalyzeAcrossRanks(std::move(ranks), options.threshold);
  if (result.analysis.ranks_are_positions) result.warnings.push_back(kRanksArePositions);
}

void SummarizeStages(const SummarizeOptions& options, Stages& stages, SummarizeResult& result) {
  Executor ex(options.threads > 0 ? options.threads : DefaultThreads());
  if (options.output.empty())
    throw Error(Error::Kind::kUsage, "", -1, "summarize needs an output (-o NAME.summary.json)");
  std::atomic<uint64_t>* bytes_read = TrackProgress(options.progress, {options.input});
  NotAProfile(options.input);
  stages.Begin("read and parse");
  Trace trace = LoadTrace(
      LoadOptions{options.input, ex.threads(), /*details=*/true, options.strict, options.allow_truncated, bytes_read},
      ex);
  NeedEvents(trace);
  stages.Loaded(trace.stats);
  result.warnings = LoadWarnings(trace);
  result.summary = SummarizeTrace(trace, ex, stages);
  stages.Begin("write");
  WriteOptions write;
  write.inputs = {options.input};
  write.force = options.force;
  write.remove_on_signal = options.remove_output_on_signal;
  WriteOutputFile(options.output, EncodeSummary(SummaryFile{result.summary, result.warnings}), write);
}

}  // namespace

SummarizeResult Summarize(const SummarizeOptions& options) {
  return RunStages<SummarizeResult>(options.progress, options.input, [&](Stages& stages, SummarizeResult& result) {
    SummarizeStages(options, stages, result);
  });
}

AnalyzeRanksResult AnalyzeRanks(const AnalyzeRanksOptions& options) {
  return RunStages<AnalyzeRanksResult>(
      options.progress, options.inputs.empty() ? "" : options.inputs[0],
      [&](Stages& stages, AnalyzeRanksResult& result) { AnalyzeRanksStages(options, stages, result); });
}

std::vector<std::string> TracesInDirectory(const std::string& dir) {
  std::vector<std::string> traces, json;
  DIR* d = ::opendir(dir.c_str());
  if (!d) ThrowInput(dir, -1, std::string("cannot open directory: ") + std::strerror(errno));
  auto ends = [](const std::string& s, const char* ext) {
    size_t n = std::strlen(ext);
    return s.size() >= n && s.compare(s.size() - n, n, ext) == 0;
  };
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    std::string path = dir + (ends(dir, "/") ? "" : "/") + name;
    struct stat st;
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    if (ends(name, ".pt.trace.json") || ends(name, ".pt.trace.json.gz")) traces.push_back(path);
    if (ends(name, ".json") || ends(name, ".json.gz")) json.push_back(path);
  }
  ::closedir(d);
  std::vector<std::string>& out = traces.empty() ? json : traces;
  if (out.empty()) ThrowInput(dir, -1, "no traces in this directory (*.pt.trace.json[.gz], else *.json[.gz])");
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

void AnalyzeStages(const AnalyzeOptions& options, Stages& stages, AnalyzeResult& result) {
  Executor ex(options.threads > 0 ? options.threads : DefaultThreads());
  std::atomic<uint64_t>* bytes_read = TrackProgress(options.progress, {options.input});
  NotAProfile(options.input);
  stages.Begin("read and parse");
  Trace trace = LoadTrace(
      LoadOptions{options.input, ex.threads(), /*details=*/true, options.strict, options.allow_truncated, bytes_read},
      ex);
  NeedEvents(trace);
  stages.Loaded(trace.stats);
  result.warnings = LoadWarnings(trace);
  stages.Begin("model and stacks");
  ModelAndStacks built = BuildModelBesideStacks(trace, ex);
  stages.Begin("analyze");
  result.analysis = Analyze(trace, built.model, std::move(built.lanes),
                            AnalysisOptions{options.group_by_shape, options.per_step}, ex);
  if (result.analysis.saturated) result.warnings.push_back(SaturatedWarning(result.analysis.saturated));
}

}  // namespace

AnalyzeResult Analyze(const AnalyzeOptions& options) {
  return RunStages<AnalyzeResult>(options.progress, options.input, [&](Stages& stages, AnalyzeResult& result) {
    AnalyzeStages(options, stages, result);
  });
}

}  // namespace torch2pprof
