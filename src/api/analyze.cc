// Analyze and its map and reduce: one input routed by what it is (a trace, a memory
// snapshot, a rank summary), several ranks side by side, and Summarize for the map.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>

#include "analysis/analyzer.h"
#include "analysis/ranks.h"
#include "analysis/snapshot_analysis.h"
#include "analysis/timeline_trace.h"
#include "api/call.h"
#include "convert/aggregator.h"
#include "convert/snapshot_profile.h"
#include "load/input.h"
#include "load/snapshot.h"
#include "load/summary_file.h"
#include "model/memory_replay.h"
#include "report/flame_graph.h"
#include "torch2pprof/torch2pprof.h"

namespace torch2pprof {
namespace api {
namespace {

// One rank's trace reduced to its summary, as analyze over ranks and summarize both do;
// with `flame`, its profile as a flame graph of at most max_nodes frames too.
RankSummary SummarizeTrace(const Trace& trace, Executor& ex, Stages& stages, bool flame = false) {
  if (!flame) {
    stages.Begin("model");
    TraceModel model = BuildModel(trace, ex);
    stages.Begin("analyze");
    Analysis analysis = Analyze(trace, model, AnalysisOptions{}, ex);
    return SummarizeRank(trace, model, analysis);
  }
  stages.Begin("model and stacks");
  ModelAndStacks built = BuildModelBesideStacks(trace, ex);
  stages.Begin("profile");
  FlameGraph graph = FlameOf(AggregateUncut(trace, built.model, built.lanes, FlameGraphAggregate(false), ex),
                             TypeList(kRankFlameTypes), 0.002, kRankProfileNodes);
  stages.Begin("analyze");
  Analysis analysis = Analyze(trace, built.model, std::move(built.lanes), AnalysisOptions{}, ex);
  RankSummary out = SummarizeRank(trace, built.model, analysis);
  out.flame = std::move(graph);
  return out;
}

SnapshotAnalysis AnalyzeSnapshotInput(Input& input, uint64_t max_items, bool flame, Stages& stages,
                                      std::vector<std::string>* warnings) {
  stages.Begin("read and parse");
  const MemorySnapshot snapshot = ReadSnapshot(input.source(), input.name(), max_items);
  stages.Begin("analyze");
  SnapshotAnalysis analysis = AnalyzeMemorySnapshot(snapshot);
  if (flame) {
    const Profile profile = SnapshotProfile(snapshot, DevicePeaks(snapshot), SnapshotProfileOptions{});
    analysis.flame = FlameOf(profile, TypeList(kSnapshotFlameTypes));
  }
  for (const SnapshotDevice& d : analysis.devices) {
    if (!d.consistent) warnings->push_back("warning: " + DisagreeLine(d.device));
  }
  return analysis;
}

// Ranks: traces are summarised as they load, summaries read as they are, each kept in
// input order, so that a report from summaries is the report from their traces.
RanksAnalysis AnalyzeRanksStages(const std::vector<std::string>& inputs, const std::vector<std::string>& names,
                                 const LoadOptions& base, double threshold, Executor& ex, Stages& stages,
                                 std::vector<std::string>* all_warnings, bool flame = false) {
  const size_t n = inputs.size();
  std::vector<RankSummary> ranks(n);
  std::vector<std::vector<std::string>> warnings(n);
  std::vector<LoadOptions> loads(n, base);
  for (size_t i = 0; i < n; ++i) {
    loads[i].path = inputs[i];
    loads[i].threads = 1;  // the traces load side by side; each is analysed on what is left
  }
  auto check = [&](const Input& in) {
    in.Expect("analyze");
    if (n > 1 && in.kind() == InputKind::kSnapshot) {
      ThrowInput(in.name(), -1, "a memory snapshot is analysed alone (analyze SNAPSHOT), not as a rank");
    }
  };
  stages.Begin("read and parse");
  size_t next = 0;
  LoadEach(loads, ex, check, [&](LoadedInput& in) {
    const size_t slot = next++;
    stages.file = in.file;
    if (in.kind == InputKind::kSummary) {
      stages.Begin("read summaries");
      SummaryFile s = ReadSummary(in.input->source());
      ranks[slot] = std::move(s.summary);
      if (slot < names.size() && !names[slot].empty()) ranks[slot].file = names[slot];
      warnings[slot] = std::move(s.warnings);
    } else {
      AcceptTrace(in.trace, stages, &warnings[slot]);
      ranks[slot] = SummarizeTrace(in.trace, ex, stages, flame);
    }
    stages.Begin("read and parse");
  });
  for (std::vector<std::string>& w : warnings) {
    for (std::string& line : w) all_warnings->push_back(std::move(line));
  }
  stages.Begin("across ranks");
  RanksAnalysis analysis = AnalyzeAcrossRanks(std::move(ranks), threshold, flame);
  if (analysis.ranks_are_positions) all_warnings->push_back(kRanksArePositions);
  return analysis;
}

void AnalyzeStages(const AnalyzeOptions& options, Stages& stages, AnalyzeResult& result) {
  Executor ex(Threads(options.threads));
  std::atomic<uint64_t>* bytes_read = TrackProgress(options.progress, {options.input});
  Input input(options.input, bytes_read);
  input.Expect("analyze");
  result.kind = input.kind();
  if (options.on_input_kind) options.on_input_kind(input.kind());
  if (!options.timeline.empty() && input.kind() != InputKind::kTrace) {
    throw Error(Error::Kind::kUsage, "", -1, "--timeline goes with a trace");
  }
  if (input.kind() == InputKind::kSnapshot) {
    result.snapshot =
        AnalyzeSnapshotInput(input, options.max_snapshot_items, options.flame_graph, stages, &result.warnings);
    return;
  }
  if (input.kind() == InputKind::kSummary) {  // a rank's part of the report over ranks, even alone
    stages.Begin("read summaries");
    SummaryFile s = ReadSummary(input.source());
    result.warnings = std::move(s.warnings);
    std::vector<RankSummary> ranks;
    ranks.push_back(std::move(s.summary));
    stages.Begin("across ranks");
    result.ranks = AnalyzeAcrossRanks(std::move(ranks), options.straggler_threshold, options.flame_graph);
    if (result.ranks.ranks_are_positions) result.warnings.push_back(kRanksArePositions);
    return;
  }
  Trace trace = LoadTraceInCall(
      input, LoadOptionsOf(options.input, ex.threads(), options.strict, options.allow_truncated, bytes_read), ex,
      stages, &result.warnings);
  stages.Begin("model and stacks");
  ModelAndStacks built = BuildModelBesideStacks(trace, ex);
  for (std::string& w : ModelWarnings(built.model)) result.warnings.push_back(std::move(w));
  FlameGraph flame;
  if (options.flame_graph) {  // convert's profile, from the lanes before the analysis takes them
    stages.Begin("profile");
    flame = FlameOf(AggregateUncut(trace, built.model, built.lanes, FlameGraphAggregate(true), ex),
                    TypeList(kTraceFlameTypes));
  }
  // The timeline's file is opened before the work, so that a refused name costs nothing.
  std::optional<OutputFile> timeline;
  analysis::CriticalPaths paths;
  if (!options.timeline.empty()) {
    WriteOptions write;
    write.inputs = {options.input};
    write.force = options.force;
    write.remove_on_signal = options.remove_output_on_signal;
    timeline.emplace(options.timeline, write);
  }
  stages.Begin("analyze");
  AnalysisOptions analysis{options.group_by_shape, options.per_step, options.timeline_steps};
  if (timeline) analysis.paths = &paths;
  result.analysis = Analyze(trace, built.model, std::move(built.lanes), analysis, ex);
  if (timeline) {
    stages.Begin("write timeline");
    analysis::WriteTimelineTrace(trace, paths, options.input, [&](std::string_view part) { timeline->Write(part); });
    timeline->Commit();
  }
  result.analysis.flame = std::move(flame);
  if (result.analysis.saturated) result.warnings.push_back(SaturatedWarning(result.analysis.saturated));
}

void SummarizeStages(const SummarizeOptions& options, Stages& stages, SummarizeResult& result) {
  Executor ex(Threads(options.threads));
  if (options.output.empty()) {
    throw Error(Error::Kind::kUsage, "", -1, "summarize needs an output (NAME.summary.json, or '-')");
  }
  std::atomic<uint64_t>* bytes_read = TrackProgress(options.progress, {options.input});
  Input input(options.input, bytes_read);
  input.Expect("summarize");
  Trace trace = LoadTraceInCall(
      input, LoadOptionsOf(options.input, ex.threads(), options.strict, options.allow_truncated, bytes_read), ex,
      stages, &result.warnings);
  result.summary = SummarizeTrace(trace, ex, stages, true);  // with its profile: the HTML over ranks draws it
  stages.Begin("write");
  WriteOptions write;
  write.inputs = {options.input};
  write.force = options.force;
  write.remove_on_signal = options.remove_output_on_signal;
  WriteOutputFile(options.output, EncodeSummary(SummaryFile{result.summary, result.warnings}), write);
}

}  // namespace
}  // namespace api

AnalyzeResult Analyze(const AnalyzeOptions& options) {
  return api::RunStages<AnalyzeResult>(
      options.progress, options.input,
      [&](api::Stages& stages, AnalyzeResult& result) { api::AnalyzeStages(options, stages, result); });
}

AnalyzeSnapshotResult AnalyzeSnapshot(const AnalyzeSnapshotOptions& options) {
  return api::RunStages<AnalyzeSnapshotResult>(
      options.progress, options.input, [&](api::Stages& stages, AnalyzeSnapshotResult& result) {
        Input input(options.input, api::TrackProgress(options.progress, {options.input}));
        input.Expect("analyze");
        if (input.kind() != InputKind::kSnapshot) {
          ThrowInput(input.name(), -1, std::string(InputKindName(input.kind())) + ", not a memory snapshot");
        }
        result.analysis = api::AnalyzeSnapshotInput(input, options.max_snapshot_items, false, stages, &result.warnings);
      });
}

AnalyzeRanksResult AnalyzeRanks(const AnalyzeRanksOptions& options) {
  return api::RunStages<AnalyzeRanksResult>(
      options.progress, options.inputs.empty() ? "" : options.inputs[0],
      [&](api::Stages& stages, AnalyzeRanksResult& result) {
        if (options.inputs.empty()) throw Error(Error::Kind::kUsage, "", -1, "analyze needs an input");
        Executor ex(api::Threads(options.threads));
        api::CheckDistinctInputs(options.inputs);
        const LoadOptions settings = api::LoadOptionsOf("", 1, options.strict, options.allow_truncated,
                                                        api::TrackProgress(options.progress, options.inputs));
        result.analysis = api::AnalyzeRanksStages(options.inputs, options.names, settings, options.threshold, ex,
                                                  stages, &result.warnings, options.flame_graph);
      });
}

SummarizeResult Summarize(const SummarizeOptions& options) {
  return api::RunStages<SummarizeResult>(
      options.progress, options.input,
      [&](api::Stages& stages, SummarizeResult& result) { api::SummarizeStages(options, stages, result); });
}

namespace {

bool EndsWith(const std::string& s, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// The N of a file named PREFIX.stepN.SUFFIX (what on_trace_ready writes for the profiler
// cycle that ended at step N; PREFIX.stepN.partial.SUFFIX for one the profiler's stop cut
// short); N -1 for any other name.
struct Cycle {
  int64_t step = -1;
  bool partial = false;
};
Cycle CycleOf(const std::string& name) {
  Cycle cycle;
  for (size_t at = name.find(".step"); at != std::string::npos; at = name.find(".step", at + 1)) {
    size_t i = at + 5, digits = 0;
    int64_t n = 0;
    while (i < name.size() && name[i] >= '0' && name[i] <= '9' && digits < 18) n = n * 10 + (name[i++] - '0'), ++digits;
    if (digits > 0 && i < name.size() && name[i] == '.') cycle = {n, name.compare(i, 9, ".partial.") == 0};
  }
  return cycle;
}

struct Found {
  std::string name;  // in the directory
  std::string stem;  // the name less .pt.trace.json[.gz], .summary.json or .json[.gz]
  bool summary = false, torch_name = false;
};

}  // namespace

DirectoryInputs InputsOfDirectory(const std::string& dir) {
  std::vector<Found> found;
  DIR* d = ::opendir(dir.c_str());
  if (!d) ThrowInput(dir, -1, std::string("cannot open directory: ") + std::strerror(errno));
  const std::string prefix = dir + (EndsWith(dir, "/") ? "" : "/");
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    struct stat st;
    if (::stat((prefix + name).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    for (const char* suffix : {".summary.json", ".pt.trace.json", ".pt.trace.json.gz", ".json", ".json.gz"}) {
      if (!EndsWith(name, suffix)) continue;
      const std::string ext = suffix;
      found.push_back({name, name.substr(0, name.size() - ext.size()), ext == ".summary.json",
                       ext.find(".pt.trace") != std::string::npos});
      break;
    }
  }
  ::closedir(d);
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) { return a.name < b.name; });
  DirectoryInputs out;
  // Profiler cycles: where every file names one, the last complete cycle is the one
  // analysed (a partial one only where there is no other).
  std::vector<Cycle> cycles;
  for (const Found& f : found) cycles.push_back(CycleOf(f.name));
  if (!found.empty() && std::all_of(cycles.begin(), cycles.end(), [](const Cycle& c) { return c.step >= 0; })) {
    const bool complete = std::any_of(cycles.begin(), cycles.end(), [](const Cycle& c) { return !c.partial; });
    std::vector<int64_t> distinct;
    for (const Cycle& c : cycles) distinct.push_back(c.step);
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    int64_t chosen = -1;
    for (const Cycle& c : cycles) {
      if (!(complete && c.partial)) chosen = std::max(chosen, c.step);
    }
    if (distinct.size() > 1) {
      std::vector<Found> last;
      for (size_t i = 0; i < found.size(); ++i) {
        if (cycles[i].step == chosen && !(complete && cycles[i].partial)) last.push_back(found[i]);
      }
      found = std::move(last);
      std::string steps;
      for (int64_t c : distinct) steps += (steps.empty() ? "" : ", ") + std::to_string(c);
      out.notes.push_back("note: " + dir + " holds " + std::to_string(distinct.size()) +
                          " profiler cycles (ending at steps " + steps + "); analysing the last" +
                          (complete ? " complete" : "") + " one, step " + std::to_string(chosen) +
                          " (name its files to analyse another)");
    }
  }
  // Traces: torch's *.pt.trace.json[.gz] where there are any, else every *.json[.gz].
  const bool torch_names = std::any_of(found.begin(), found.end(), [](const Found& f) { return f.torch_name; });
  std::vector<const Found*> traces, summaries;
  for (const Found& f : found) {
    if (f.summary) {
      summaries.push_back(&f);
    } else if (f.torch_name || !torch_names) {
      traces.push_back(&f);
    }
  }
  // A summary stands for the trace of its stem (the reduce then reads a few KB a rank),
  // and is reported under the trace's name; alone, a rank's trace is read for the full
  // report. Summaries whose trace is gone stand for themselves.
  std::vector<std::string> stems;
  for (const Found& f : found) stems.push_back(f.stem);
  std::sort(stems.begin(), stems.end());
  const bool several = std::unique(stems.begin(), stems.end()) - stems.begin() > 1;
  for (const Found* t : traces) {
    auto s = std::find_if(summaries.begin(), summaries.end(), [&](const Found* x) { return x && x->stem == t->stem; });
    if (s != summaries.end() && several) {
      out.inputs.push_back(prefix + (*s)->name);
      out.names.push_back(prefix + t->name);
    } else {
      out.inputs.push_back(prefix + t->name);
      out.names.push_back("");
    }
    if (s != summaries.end()) *s = nullptr;
  }
  for (const Found* s : summaries) {
    if (!s) continue;
    out.inputs.push_back(prefix + s->name);
    out.names.push_back("");
  }
  if (out.inputs.empty()) {
    ThrowInput(dir, -1, "no traces in this directory (*.pt.trace.json[.gz], else *.json[.gz], or *.summary.json)");
  }
  return out;
}

}  // namespace torch2pprof
