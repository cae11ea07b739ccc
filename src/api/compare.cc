// Compare: two runs, each read once (a pipe too), analysed per step, and with a diff
// output their profiles kept for the pprof diff; two traces or two memory snapshots.
#include <algorithm>
#include <memory>

#include "analysis/analyzer.h"
#include "analysis/snapshot_analysis.h"
#include "api/call.h"
#include "convert/aggregator.h"
#include "convert/snapshot_profile.h"
#include "load/input.h"
#include "load/snapshot.h"
#include "model/memory_replay.h"
#include "report/flame_graph.h"
#include "torch2pprof/torch2pprof.h"

namespace torch2pprof {
namespace api {
namespace {

struct Run {
  Analysis analysis;
  SnapshotAnalysis snapshot;
  Profile profile;  // with a diff output
};

Run TraceRun(const CompareRunsOptions& options, Input& input, std::atomic<uint64_t>* bytes_read, Executor& ex,
             Stages& stages, std::vector<std::string>* warnings) {
  Run run;
  Trace trace = LoadTraceInCall(
      input, LoadOptionsOf(input.name(), ex.threads(), options.strict, options.allow_truncated, bytes_read), ex, stages,
      warnings);
  stages.Begin("model and stacks");
  ModelAndStacks built = BuildModelBesideStacks(trace, ex);
  for (std::string& w : ModelWarnings(built.model)) warnings->push_back(std::move(w));
  if (!options.diff_output.empty() || options.flame_graph) {
    // The profile convert would write (its defaults and --critical: the steps' path is
    // what a regression most often moves), from the same load.
    stages.Begin("aggregate");
    AggregateOptions aggregate;
    aggregate.critical = true;
    run.profile = AggregateUncut(trace, built.model, built.lanes, aggregate, ex);
  }
  stages.Begin("analyze");
  run.analysis = Analyze(trace, built.model, std::move(built.lanes), AnalysisOptions{options.group_by_shape, true}, ex);
  if (run.analysis.saturated) warnings->push_back(SaturatedWarning(run.analysis.saturated));
  return run;
}

Run SnapshotRun(const CompareRunsOptions& options, Input& input, Stages& stages, std::vector<std::string>* warnings) {
  Run run;
  stages.Begin("read and parse");
  const MemorySnapshot snapshot = ReadSnapshot(input.source(), input.name(), options.max_snapshot_items);
  stages.Begin("analyze");
  run.snapshot = AnalyzeMemorySnapshot(snapshot);
  for (const SnapshotDevice& d : run.snapshot.devices) {
    if (!d.consistent) warnings->push_back("warning: " + DisagreeLine(d.device));
  }
  if (!options.diff_output.empty() || options.flame_graph) {
    stages.Begin("aggregate");
    run.profile = SnapshotProfile(snapshot, DevicePeaks(snapshot), SnapshotProfileOptions{});
  }
  return run;
}

void CompareStages(const CompareRunsOptions& options, Stages& stages, CompareRunsResult& result) {
  if (!options.diff_output.empty() && FormatForPath(options.diff_output) != OutputFormat::kPprof) {
    throw Error(Error::Kind::kUsage, "", -1,
                "compare -o writes a pprof diff: name it .pb.gz (got " + options.diff_output + ")");
  }
  if (options.base == "-" && options.next == "-") {
    throw Error(Error::Kind::kUsage, "", -1, "standard input ('-') can be one of the two runs, not both");
  }
  Executor ex(Threads(options.threads));
  std::atomic<uint64_t>* bytes_read = TrackProgress(options.progress, {options.base, options.next});
  // Both opened first, so that a mismatch is said before either is read.
  std::unique_ptr<Input> inputs[2] = {std::make_unique<Input>(options.base, bytes_read),
                                      std::make_unique<Input>(options.next, bytes_read)};
  for (const auto& in : inputs) in->Expect("compare");
  if (inputs[0]->kind() != inputs[1]->kind()) {
    const Input& snapshot = inputs[0]->kind() == InputKind::kSnapshot ? *inputs[0] : *inputs[1];
    // Each input is fine alone: the pair is what the command line got wrong (exit 2).
    throw Error(Error::Kind::kUsage, snapshot.name(), -1,
                "a memory snapshot compares with a memory snapshot, not with a trace");
  }
  result.kind = inputs[0]->kind();
  if (options.on_input_kind) options.on_input_kind(result.kind);
  // One run at a time: its analysis (and with a diff output its profile) stays, its
  // trace does not.
  Run runs[2];
  for (int i = 0; i < 2; ++i) {
    Input& in = *inputs[i];
    stages.file = in.name();
    runs[i] = result.kind == InputKind::kSnapshot ? SnapshotRun(options, in, stages, &result.warnings)
                                                  : TraceRun(options, in, bytes_read, ex, stages, &result.warnings);
    inputs[i].reset();
  }
  stages.Begin("compare");
  Profile diff;
  if (result.kind == InputKind::kSnapshot) {
    result.snapshots = CompareSnapshots(runs[0].snapshot, runs[1].snapshot, options.compare);
    if (!options.diff_output.empty()) diff = DiffProfile(runs[0].profile, runs[1].profile);
    if (options.flame_graph) {
      result.snapshots.flame = DiffFlameOf(runs[0].profile, runs[1].profile, TypeList(kSnapshotFlameTypes));
    }
  } else {
    result.comparison = Compare(runs[0].analysis, runs[1].analysis, options.compare);
    // Per step, as the report: runs of 3 and of 50 steps then differ only where a step does.
    auto steps = [](const Analysis& a) { return static_cast<uint64_t>(std::max<size_t>(1, a.steps.size())); };
    if (!options.diff_output.empty() || options.flame_graph) {
      const Profile base = PerStepProfile(std::move(runs[0].profile), steps(runs[0].analysis));
      const Profile next = PerStepProfile(std::move(runs[1].profile), steps(runs[1].analysis));
      if (!options.diff_output.empty()) diff = DiffProfile(base, next);
      if (options.flame_graph) result.comparison.flame = DiffFlameOf(base, next, TypeList(kCompareFlameTypes));
    }
  }
  if (!options.diff_output.empty()) {
    stages.Begin("encode and write");
    WriteOptions write;
    write.inputs = {options.base, options.next};
    write.force = options.force;
    write.remove_on_signal = options.remove_output_on_signal;
    WriteOutputFile(options.diff_output, Gzip(EncodeProfile(diff)), write);
  }
}

}  // namespace
}  // namespace api

CompareRunsResult Compare(const CompareRunsOptions& options) {
  return api::RunStages<CompareRunsResult>(
      options.progress, options.base,
      [&](api::Stages& stages, CompareRunsResult& result) { api::CompareStages(options, stages, result); });
}

}  // namespace torch2pprof
