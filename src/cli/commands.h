// One file per subcommand: it registers its options (Add*) and runs them (Run*); cli.cc
// parses argv and calls them.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "cli/exit_status.h"
#include "torch2pprof/profile.h"
#include "torch2pprof/torch2pprof.h"

namespace CLI {
class App;
}  // namespace CLI

namespace torch2pprof::cli {

// How broken input is treated; shared by the commands that read traces.
struct InputArgs {
  bool strict = false;             // an unreadable event is an error
  bool allow_truncated = false;    // a trace cut off mid-write keeps its complete events
  bool progress = false;           // show progress even when stderr is no terminal
  bool quiet = false;              // no warnings, no progress
  int64_t max_snapshot_items = 0;  // memory snapshots: the expansion cap (0: the default)
  // Run inside another program (the Python module): the process, its signals and its
  // terminal are the host's, so no signal handlers and no progress line.
  bool hosted = false;
};

struct ConvertArgs {
  std::vector<std::string> files;         // IN OUT, or with -o the inputs
  std::string output;                     // -o: one profile of all inputs, labelled by rank
  int threads = 0;                        // 0: all cores
  bool thread_stacks = false;             // stacks as each thread ran them (no backward under forward)
  bool all_frames = false;                // memory snapshots: the interpreter's and allocator's frames too
  bool critical = false;                  // also the critical sample type
  std::string step_labels = "auto";       // auto, on, off
  uint32_t max_depth = kDefaultMaxDepth;  // frames per stack
  bool stats = false;                     // each stage's wall and CPU time on stderr
  std::string format;                     // pprof, folded; "" from the output's extension
  std::string sample_type;                // the value folded writes; pprof's default type
  bool force = false;                     // replace an existing file that is no torch2pprof output
  std::string folded_root = "auto";       // auto (device for gpu, else thread), thread, device, rank, none
  InputArgs in;
};

struct AnalyzeArgs {
  std::vector<std::string> inputs;  // one trace, or several (one per rank, traces or summaries) or directories
  int top = -1;                     // rows per table; 0: all; -1: not given (text kDefaultTop, JSON/CSV all)
  std::string format = "text";      // text, json or csv
  std::string table;                // csv: which table
  std::string group_by = "name";    // operators by name, or by name and input shape
  int threads = 0;
  bool stats = false;
  // Percent above the median of ranks.
  int straggler_threshold = static_cast<int>(kDefaultStragglerThreshold * 100 + 0.5);
  std::string timeline;  // --timeline: the events and critical paths as a Chrome trace
  bool force = false;    // replace an existing --timeline file that is no torch2pprof output
  InputArgs in;
};

struct CompareArgs {
  std::vector<std::string> inputs;   // BASE NEW
  std::string format = "text";       // text, json, markdown or html
  std::vector<std::string> fail_on;  // rules
  bool noise_aware = false;          // rules fire only on changes told from the noise
  bool strict_noise = false;         // the old name of the default (the threshold decides); accepted
  std::string output;                // -o: the pprof diff
  bool force = false;                // replace an existing file that is no torch2pprof output
  std::string group_by = "name";
  int top = -1;  // as AnalyzeArgs::top
  int threads = 0;
  InputArgs in;
};

struct SummarizeArgs {
  std::vector<std::string> inputs;  // one trace (more is a usage error the command says)
  std::string output;               // -o: NAME.summary.json, or "-" (the default)
  int threads = 0;
  bool stats = false;
  bool force = false;
  InputArgs in;
};

// Prints warnings to err, each line prefixed "torch2pprof: "; none with --quiet.
void PrintWarnings(const std::vector<std::string>& warnings, const InputArgs& in, std::ostream& err);
// --stats: each stage's wall and CPU time, on err.
void PrintStats(const std::vector<StageTime>& stages, std::ostream& err);

// Each command's subcommand, its options written into *args (which must outlive app).
CLI::App* AddConvert(CLI::App& app, ConvertArgs* args);
CLI::App* AddAnalyze(CLI::App& app, AnalyzeArgs* args);
CLI::App* AddCompare(CLI::App& app, CompareArgs* args);
CLI::App* AddSummarize(CLI::App& app, SummarizeArgs* args);

// Throw torch2pprof::Error (a usage error first where the inputs are too few or too many:
// the command says what it takes, where CLI11 would say "inputs is required"); return the
// exit status.
int RunConvert(const ConvertArgs& args, std::ostream& out, std::ostream& err);
int RunAnalyze(const AnalyzeArgs& args, std::ostream& out, std::ostream& err);
int RunCompare(const CompareArgs& args, std::ostream& out, std::ostream& err);
int RunSummarize(const SummarizeArgs& args, std::ostream& out, std::ostream& err);

}  // namespace torch2pprof::cli
