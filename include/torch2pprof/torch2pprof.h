// torch2pprof as a library, one call per command: PyTorch profiler traces and memory
// snapshots to a pprof profile (Convert), to analyze's results (Analyze, AnalyzeRanks,
// and Summarize for its map), two runs compared (Compare), rendered by report.h. Each call
// opens an input once and routes it by what its first bytes say it is (input.h). These
// headers are the API; stages/ carries no promise.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "torch2pprof/analysis.h"
#include "torch2pprof/compare.h"
#include "torch2pprof/error.h"
#include "torch2pprof/input.h"
#include "torch2pprof/output.h"
#include "torch2pprof/profile.h"
#include "torch2pprof/ranks.h"
#include "torch2pprof/snapshot.h"

namespace torch2pprof {

// Wall and CPU time (all threads) of one stage of a call, for --stats.
struct StageTime {
  std::string stage;
  double wall_seconds = 0;
  double cpu_seconds = 0;
  int64_t peak_rss_bytes = 0;  // the process's peak resident memory when the stage ended (Linux)
  // A stage that loads traces: the uncompressed JSON it read, and how much of it the parse
  // workers cut into events themselves (the scanner's thread cut the rest: serial work).
  uint64_t json_bytes = 0;
  uint64_t cut_on_workers = 0;
};

// How far a Convert or Analyze call has got, for a progress display on another thread:
// the call writes it, the display reads it. Bytes are of the input files as stored
// (compressed, for .json.gz).
struct Progress {
  std::atomic<uint64_t> bytes_read{0};
  std::atomic<uint64_t> bytes_total{0};        // the inputs' sizes; 0 when unknown (stdin, pipes)
  std::atomic<const char*> stage{"starting"};  // the stage running now, as --stats names it
};

struct ConvertOptions {
  // Traces (.json, .json.gz, "-" for stdin); several: one profile, labelled rank. Or one
  // CUDA memory snapshot (a pickle, found by its first bytes; .pickle.gz too): bytes by
  // allocation stack (docs/reference.md, "Memory snapshots").
  // Whatever each is, from its first bytes: a file, "-" standard input, a FIFO; read once.
  std::vector<std::string> inputs;
  std::string output;            // also write the profile here (.pb.gz, atomically; "-" stdout); "" none
  int threads = 0;               // 0: all cores; the output never depends on it
  bool strict = false;           // an unreadable event is an error
  bool allow_truncated = false;  // a trace cut off mid-write keeps its complete events
  // Stacks as each thread ran them. By default a backward node's subtree hangs under the
  // forward op that created it, below a "[backward] Node" frame.
  bool thread_stacks = false;
  bool all_frames = false;  // memory snapshots: keep the interpreter's and the allocator's own frames
  // Memory snapshots: the segments, blocks and ring entries one may hold once its shared
  // references are expanded; 0: 2^22 and a quarter of the pickle's bytes.
  uint64_t max_snapshot_items = 0;
  // Traces: also the `critical` sample type, each step's critical path under the stacks
  // that caused it (docs/reference.md, "Critical path"). Off by default: walking every
  // step costs convert about a third more time and memory, and a profile read for its
  // CPU and GPU time needs none of it. A sample_type of "critical" turns it on.
  bool critical = false;
  StepLabels step_labels = StepLabels::kAuto;
  uint32_t max_depth = kDefaultMaxDepth;  // frames per stack; deeper ones fold into one "[deeper frames truncated]"
  OutputFormat format = OutputFormat::kPprof;
  std::string sample_type;  // the value written: kFolded "" the profile's default, kPstats "" wall
  FoldedRoot folded_root = FoldedRoot::kAuto;
  Progress* progress = nullptr;  // where given, kept up to date
  // SIGINT or SIGTERM while the output is written removes the partial file, then the
  // process dies of the signal as it would have. Off: a library installs no handlers.
  bool remove_output_on_signal = false;
  // Replace an existing output that does not look like one torch2pprof wrote (WriteOptions).
  bool force = false;
};

struct ConvertResult {
  Profile profile;
  std::vector<std::string> warnings;  // one line each (skipped events, repairs, ranks)
  std::vector<StageTime> stages;
};

// Throws Error: kInput for unreadable traces, kOutput when the output cannot be written.
ConvertResult Convert(const ConvertOptions& options);

// One input analysed as what it is: a trace (Analysis), a memory snapshot
// (SnapshotAnalysis), or a rank summary (the report over ranks, of one rank).
struct AnalyzeOptions {
  std::string input;  // a trace, a memory snapshot or a rank summary; "-" stdin, a FIFO
  int threads = 0;
  bool strict = false;
  bool allow_truncated = false;
  bool group_by_shape = false;                              // operators by name and Input Dims
  bool per_step = false;                                    // per-step operator and kernel times (what Compare needs)
  uint64_t max_snapshot_items = 0;                          // as ConvertOptions::max_snapshot_items
  double straggler_threshold = kDefaultStragglerThreshold;  // a rank summary: as AnalyzeRanksOptions::threshold
  // Also convert's profile as a flame graph (Analysis::flame, SnapshotAnalysis::flame):
  // what the HTML report draws.
  bool flame_graph = false;
  // The slowest this many analysed steps as timelines (Analysis::timelines): what the
  // HTML report draws.
  size_t timeline_steps = 0;
  // A trace: also write its events with every analysed step's critical path here, as a
  // Chrome trace for Perfetto UI and chrome://tracing (atomically; "-" stdout; "" none).
  std::string timeline;
  bool force = false;                    // as ConvertOptions::force, for `timeline`
  bool remove_output_on_signal = false;  // as ConvertOptions's
  Progress* progress = nullptr;          // where given, kept up to date
  // Called with the input's kind as soon as its first bytes are read, before any work: a
  // caller refuses there what it cannot do with that kind (a CSV table of another report).
  std::function<void(InputKind)> on_input_kind;
};

struct AnalyzeResult {
  InputKind kind = InputKind::kTrace;  // which of the three holds the result
  Analysis analysis;                   // kTrace
  SnapshotAnalysis snapshot;           // kSnapshot
  RanksAnalysis ranks;                 // kSummary
  std::vector<std::string> warnings;
  std::vector<StageTime> stages;
};

AnalyzeResult Analyze(const AnalyzeOptions& options);

// A CUDA memory snapshot analysed: per device the segments at the dump, the replayed
// peak and out-of-memory events with the code holding memory there (docs/reference.md,
// "Memory snapshots"). Throws Error (kInput) for a file that is no snapshot.
struct AnalyzeSnapshotOptions {
  std::string input;                // a snapshot (.pickle, .pickle.gz)
  uint64_t max_snapshot_items = 0;  // as ConvertOptions::max_snapshot_items
  Progress* progress = nullptr;     // where given, kept up to date
};
struct AnalyzeSnapshotResult {
  SnapshotAnalysis analysis;
  std::vector<std::string> warnings;
  std::vector<StageTime> stages;
};
AnalyzeSnapshotResult AnalyzeSnapshot(const AnalyzeSnapshotOptions& options);

// Several ranks' traces side by side. They stream through: at most `threads` traces
// are in memory at once, each reduced to its RankSummary before the next is read.
// Summaries that Summarize wrote stand for their traces, mixed with traces or alone:
// the analysis is the one of the traces.
struct AnalyzeRanksOptions {
  std::vector<std::string> inputs;  // one trace or summary per rank
  // What the report calls each input where it is not "": the trace a summary stands for
  // (InputsOfDirectory). Empty: each input's own name.
  std::vector<std::string> names;
  int threads = 0;
  bool strict = false;
  bool allow_truncated = false;
  double threshold = kDefaultStragglerThreshold;  // stragglers: this fraction above the median of ranks
  // Also each rank's profile (from its trace) under one root (RanksAnalysis::flame): what
  // the HTML report draws.
  bool flame_graph = false;
  Progress* progress = nullptr;
};
struct AnalyzeRanksResult {
  RanksAnalysis analysis;
  std::vector<std::string> warnings;
  std::vector<StageTime> stages;
};
AnalyzeRanksResult AnalyzeRanks(const AnalyzeRanksOptions& options);

// The map of analyze over many ranks, run where a trace is: the trace reduced to its
// RankSummary and written to `output` as a small, versioned JSON file (docs/reference.md,
// "Rank summaries"). Throws Error: kInput for an unreadable trace, kOutput when the
// output cannot be written, kUsage without an output.
struct SummarizeOptions {
  std::string input;   // a trace; "-" stdin
  std::string output;  // the summary (NAME.summary.json; "-" stdout), written atomically
  int threads = 0;
  bool strict = false;
  bool allow_truncated = false;
  bool force = false;                    // as ConvertOptions::force
  bool remove_output_on_signal = false;  // as ConvertOptions::remove_output_on_signal
  Progress* progress = nullptr;
};
struct SummarizeResult {
  RankSummary summary;
  std::vector<std::string> warnings;  // also kept in the summary, for the reduce to say again
  std::vector<StageTime> stages;
};
SummarizeResult Summarize(const SummarizeOptions& options);

// Two runs compared, the command `compare` as one call: two traces (analyze's views per
// step, and the rules) or two memory snapshots (their peaks and what is live there), each
// read once and analysed one after the other; with diff_output, the pprof diff of their
// profiles (per step for traces) written there. Throws Error: kInput for inputs that are
// neither or not alike, kUsage for a rule or an output name that cannot be, kOutput when
// the diff cannot be written.
struct CompareRunsOptions {
  std::string base, next;  // "-" for one of them: standard input
  CompareOptions compare;  // the --fail-on rules and how noise is judged
  bool group_by_shape = false;
  int threads = 0;
  bool strict = false;                   // traces: an unreadable event is an error
  bool allow_truncated = false;          // traces: a trace cut off mid-write keeps its complete events
  uint64_t max_snapshot_items = 0;       // as ConvertOptions::max_snapshot_items
  std::string diff_output;               // the pprof diff (.pb.gz); "" none
  bool flame_graph = false;              // also Comparison::flame (what the HTML page draws)
  bool force = false;                    // as ConvertOptions::force
  bool remove_output_on_signal = false;  // as ConvertOptions::remove_output_on_signal
  Progress* progress = nullptr;
  std::function<void(InputKind)> on_input_kind;  // as AnalyzeOptions::on_input_kind
};
struct CompareRunsResult {
  InputKind kind = InputKind::kTrace;  // kTrace: comparison; kSnapshot: snapshots
  Comparison comparison;
  SnapshotComparison snapshots;
  std::vector<std::string> warnings;
  std::vector<StageTime> stages;
};
CompareRunsResult Compare(const CompareRunsOptions& options);

// What a directory stands for, for analyze DIR: its *.pt.trace.json[.gz] files (what
// torch.profiler's handlers write), else every *.json[.gz], and *.summary.json, sorted by
// name. Where several ranks are there, a NAME.summary.json stands for its trace NAME.*
// (named as the trace); where every name carries a profiler cycle (NAME.stepN.…, what
// on_trace_ready writes), the last cycle's files only, with a note that says so.
// Throws Error (kInput) when it holds none.
struct DirectoryInputs {
  std::vector<std::string> inputs;  // the files to read
  std::vector<std::string> names;   // AnalyzeRanksOptions::names
  std::vector<std::string> notes;   // for the warnings
};
DirectoryInputs InputsOfDirectory(const std::string& dir);

// The number of threads "0: all cores" means here.
int DefaultThreads();

}  // namespace torch2pprof
