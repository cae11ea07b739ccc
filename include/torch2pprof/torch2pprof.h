// torch2pprof as a library, one call each: PyTorch profiler traces to a pprof profile
// (Convert) or to analyze's report (Analyze). The stage headers it includes are the parts.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "torch2pprof/aggregator.h"
#include "torch2pprof/analyzer.h"
#include "torch2pprof/compare.h"
#include "torch2pprof/error.h"
#include "torch2pprof/folded_writer.h"
#include "torch2pprof/profile.h"
#include "torch2pprof/pstats_writer.h"

namespace torch2pprof {

// Wall and CPU time (all threads) of one stage of a call, for --stats.
struct StageTime {
  std::string stage;
  double wall_seconds = 0;
  double cpu_seconds = 0;
  int64_t peak_rss_bytes = 0;  // the process's peak resident memory when the stage ended (Linux)
};

enum class OutputFormat {
  kPprof,   // gzipped profile.proto
  kFolded,  // folded stacks (folded_writer.h)
  kPstats,  // Python's pstats (pstats_writer.h)
};
// The format an output file's name asks for: ".folded" folded stacks, ".prof" and
// ".pstats" pstats, else pprof.
OutputFormat FormatForPath(const std::string& path);

struct ConvertOptions {
  std::vector<std::string> inputs;  // traces (.json, .json.gz, "-" for stdin); several: one profile, labelled rank
  std::string output;               // also write the profile here (.pb.gz, atomically; "-" stdout); "" none
  int threads = 0;                  // 0: all cores; the output never depends on it
  bool strict = false;              // an unreadable event is an error
  bool allow_truncated = false;     // a trace cut off mid-write keeps its complete events
  bool thread_stacks = false;       // stacks as each thread ran them (AggregateOptions)
  StepLabels step_labels = StepLabels::kAuto;
  uint32_t max_depth = 2048;  // frames per stack; deeper ones fold into one (AggregateOptions)
  OutputFormat format = OutputFormat::kPprof;
  std::string sample_type;  // the value written: kFolded "" the profile's default, kPstats "" wall
  FoldedRoot folded_root = FoldedRoot::kThread;
};

struct ConvertResult {
  Profile profile;
  std::vector<std::string> warnings;  // one line each (skipped events, repairs, ranks)
  std::vector<StageTime> stages;
};

// Throws Error: kInput for unreadable traces, kOutput when the output cannot be written.
ConvertResult Convert(const ConvertOptions& options);

struct AnalyzeOptions {
  std::string input;  // a trace; "-" stdin
  int threads = 0;
  bool strict = false;
  bool allow_truncated = false;
  bool group_by_shape = false;  // operators by name and Input Dims
  bool per_step = false;        // per-step operator and kernel times (what Compare needs)
};

struct AnalyzeResult {
  Analysis analysis;
  std::vector<std::string> warnings;
  std::vector<StageTime> stages;
};

AnalyzeResult Analyze(const AnalyzeOptions& options);

// The number of threads "0: all cores" means here.
int DefaultThreads();

}  // namespace torch2pprof
