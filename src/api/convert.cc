// Convert: traces (and the profiles convert wrote) to one profile, or a memory snapshot to
// bytes by allocation stack; each input opened once and routed by what it is.
#include <sys/stat.h>

#include "analysis/ranks.h"
#include "api/call.h"
#include "convert/aggregator.h"
#include "convert/snapshot_profile.h"
#include "load/input.h"
#include "load/profile_reader.h"
#include "load/snapshot.h"
#include "model/frame_names.h"
#include "model/lane_builder.h"
#include "model/memory_replay.h"
#include "torch2pprof/stages/trace_model.h"
#include "torch2pprof/torch2pprof.h"

namespace torch2pprof {

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

namespace api {
namespace {

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

// --sample-type, checked before anything is written: the value folded stacks and pstats
// carry; a pprof profile holds that type alone, and only the samples that have some of
// it, so that pprof's -traces, -tags and -peek of the value show what has it (a CPU
// sample carries no device time at all).
void ApplySampleType(const ConvertOptions& options, Profile& profile) {
  if (options.sample_type.empty()) return;
  const size_t column = SampleTypeIndex(profile, options.sample_type);
  if (options.format != OutputFormat::kPprof) return;
  profile.default_sample_type = options.sample_type;
  profile.sample_types = {profile.sample_types[column]};
  size_t kept = 0;
  for (Sample& s : profile.samples) {
    const int64_t v = s.values[column];
    if (v == 0) continue;
    s.values = {v};
    // Moving a sample onto itself empties it (until the first drop, kept is s's index).
    if (&profile.samples[kept] != &s) profile.samples[kept] = std::move(s);
    ++kept;
  }
  profile.samples.resize(kept);
  profile.comments.push_back("--sample-type " + options.sample_type +
                             ": this value alone, samples without it left out");
}

// A memory snapshot: bytes by allocation stack (docs/reference.md, "Memory snapshots").
void ConvertSnapshot(const ConvertOptions& options, Input& input, Stages& stages, ConvertResult& result) {
  if (options.format == OutputFormat::kPstats) {
    throw Error(Error::Kind::kUsage, "", -1,
                "pstats holds call times: a memory snapshot converts to pprof (.pb.gz) or folded stacks (.folded)");
  }
  stages.Begin("read and parse");
  const MemorySnapshot snapshot = ReadSnapshot(input.source(), input.name(), options.max_snapshot_items);
  stages.Begin("aggregate");
  SnapshotProfileOptions profile_options;
  profile_options.all_frames = options.all_frames;
  const std::vector<DevicePeak> peaks = DevicePeaks(snapshot);
  result.profile = SnapshotProfile(snapshot, peaks, profile_options);
  for (const DevicePeak& peak : peaks) {
    if (!peak.consistent) result.warnings.push_back("warning: " + DisagreeLine(DeviceName("cuda", peak.device)));
  }
  ApplySampleType(options, result.profile);
  WriteOutput(options, result.profile, stages);
}

// A profile of another tool's stacks (ReadInto::kOwnProfile), alone: its frames named as
// convert names an event's (FrameSystemName, MakeFrame: no addresses; a Python frame gets
// its file, line and function).
void ConvertOwnProfile(const ConvertOptions& options, Profile profile, Stages& stages, ConvertResult& result) {
  for (Frame& f : profile.frames) f = MakeFrame(FrameSystemName(f.system_name));
  result.profile = std::move(profile);
  ApplySampleType(options, result.profile);
  WriteOutput(options, result.profile, stages);
}

// Traces and profiles, one or merged: each input routed by what it is as it is opened.
void ConvertStages(const ConvertOptions& options, Stages& stages, ConvertResult& result) {
  if (options.inputs.empty()) throw Error(Error::Kind::kUsage, "", -1, "convert needs an input");
  std::atomic<uint64_t>* bytes_read = TrackProgress(options.progress, options.inputs);
  const bool merged = options.inputs.size() > 1;
  if (merged) CheckDistinctInputs(options.inputs);
  // The call's threads, all of them: nothing below starts another.
  Executor ex(Threads(options.threads));
  AggregateOptions aggregate;
  aggregate.thread_stacks = options.thread_stacks;
  aggregate.rank_labels = merged;
  aggregate.step_labels = options.step_labels;
  aggregate.max_depth = options.max_depth;
  aggregate.critical = options.critical || options.sample_type == "critical";
  Aggregator aggregator(aggregate);
  std::vector<int64_t> ranks;
  std::vector<LoadOptions> loads;
  for (const std::string& input : options.inputs) {
    loads.push_back(LoadOptionsOf(input, ex.threads(), options.strict, options.allow_truncated, bytes_read));
    loads.back().details = false;  // convert reads no arguments
    loads.back().max_depth = options.max_depth;
  }
  auto check = [&](const Input& in) {
    in.Expect("convert");
    if (merged && (in.kind() == InputKind::kSnapshot || ReadingOf(in.kind()).into == ReadInto::kOwnProfile)) {
      ThrowInput(
          in.name(), -1,
          std::string(InputKindName(in.kind())) + " converts alone (convert IN OUT), not merged with other inputs");
    }
  };
  bool alone = false;
  stages.Begin("read and parse");
  LoadEach(loads, ex, check, [&](LoadedInput& in) {
    stages.file = in.file;
    if (in.kind == InputKind::kSnapshot) {
      alone = true;
      return ConvertSnapshot(options, *in.input, stages, result);
    }
    const ReadInto into = ReadingOf(in.kind).into;
    if (into == ReadInto::kOwnProfile) {
      alone = true;
      return ConvertOwnProfile(options, std::move(in.profile), stages, result);
    }
    if (into == ReadInto::kProfile) {
      stages.Begin("aggregate");
      for (int64_t rank : aggregator.AddProfile(in.profile, in.file)) ranks.push_back(rank);
      stages.Begin("read and parse");
      return;
    }
    Trace& trace = in.trace;
    AcceptTrace(trace, stages, &result.warnings);
    ModelAndStacks built = BuildModelAndStacks(trace, ex, !merged, aggregate, stages);
    for (std::string& w : ModelWarnings(built.model)) result.warnings.push_back(std::move(w));
    stages.Begin("aggregate");
    aggregator.Add(trace, built.model, built.lanes, ex);
    ranks.push_back(ReadDistributedInfo(trace.header).rank);
    stages.Begin("read and parse");
  });
  if (alone) return;
  stages.Begin("aggregate");
  if (merged) {  // ranks label samples apart
    bool replaced = false;
    ranks = RanksOrPositions(std::move(ranks), &replaced);
    if (replaced) result.warnings.push_back(kRanksArePositions);
  }
  if (aggregator.saturated()) result.warnings.push_back(SaturatedWarning(aggregator.saturated()));
  if (aggregator.folded_stacks()) {
    result.warnings.push_back("warning: " + std::to_string(aggregator.folded_stacks()) + " stacks are deeper than " +
                              std::to_string(options.max_depth) + " frames: their deeper frames fold into one " +
                              kDeeperFramesName + " frame, with their time (--max-depth)");
  }
  result.profile = std::move(aggregator).Finish(merged ? ranks : std::vector<int64_t>{});
  ApplySampleType(options, result.profile);
  WriteOutput(options, result.profile, stages);
}

}  // namespace
}  // namespace api

ConvertResult Convert(const ConvertOptions& options) {
  return api::RunStages<ConvertResult>(
      options.progress, options.inputs.empty() ? "" : options.inputs[0],
      [&](api::Stages& stages, ConvertResult& result) { api::ConvertStages(options, stages, result); });
}

}  // namespace torch2pprof
