#include <unistd.h>

#include <cstdio>
#include <ostream>

#include <CLI/CLI.hpp>
#include "base/utf8.h"
#include "cli/options.h"

#include "cli/commands.h"
#include "cli/progress.h"
#include "torch2pprof/error.h"
#include "torch2pprof/report.h"
#include "torch2pprof/torch2pprof.h"

namespace torch2pprof::cli {

void PrintWarnings(const std::vector<std::string>& warnings, const InputArgs& in, std::ostream& err) {
  if (in.quiet) return;
  for (const std::string& w : warnings) err << "torch2pprof: " << VisibleText(w) << "\n";
}

void PrintStats(const std::vector<StageTime>& stages, std::ostream& err) {
  double wall = 0, cpu = 0;
  for (const StageTime& s : stages) wall += s.wall_seconds, cpu += s.cpu_seconds;
  char line[160];
  err << "torch2pprof: stage              wall      cpu  cpu/wall    peak RSS\n";
  for (const StageTime& s : stages) {
    std::snprintf(line, sizeof line, "torch2pprof: %-16s %7.3fs %7.3fs %8.2f  %10s\n", s.stage.c_str(), s.wall_seconds,
                  s.cpu_seconds, s.wall_seconds > 0 ? s.cpu_seconds / s.wall_seconds : 0.0,
                  FormatBytes(static_cast<int64_t>(s.peak_rss_bytes)).c_str());
    err << line;
  }
  std::snprintf(line, sizeof line, "torch2pprof: %-16s %7.3fs %7.3fs %8.2f\n", "total", wall, cpu,
                wall > 0 ? cpu / wall : 0.0);
  err << line;
  for (const StageTime& s : stages) {
    if (s.json_bytes == 0) continue;
    // How much of the text one thread had to cut: gzip, a pipe, text between events or
    // one thread keep it there (docs/design.md: the loader).
    const double rate = s.wall_seconds > 0 ? static_cast<double>(s.json_bytes) / s.wall_seconds : 0.0;
    std::snprintf(line, sizeof line,
                  "torch2pprof: %s: %s of JSON at %s/s; %.1f%% of it cut into events on the parse workers, the rest "
                  "on one thread\n",
                  s.stage.c_str(), FormatBytes(static_cast<int64_t>(s.json_bytes)).c_str(),
                  FormatBytes(static_cast<int64_t>(rate)).c_str(),
                  100.0 * static_cast<double>(s.cut_on_workers) / static_cast<double>(s.json_bytes));
    err << line;
  }
}

CLI::App* AddConvert(CLI::App& app, ConvertArgs* args) {
  CLI::App* conv = app.add_subcommand("convert", "Convert a trace into a gzipped pprof profile");
  conv->add_option("files", args->files,
                   "IN OUT: the input ('-' reads standard input) and the profile to write (.pb.gz, .folded, .prof; "
                   "'-' writes standard output); with -o: the inputs. " +
                       Reads("convert"));
  conv->add_option("-o,--output", args->output,
                   "One profile of all the traces given, each sample labelled rank (distributedInfo.rank, else the "
                   "input's position); profiles that convert wrote merge with them as their traces would");
  conv->add_option("--threads", args->threads, "Worker threads (default: all cores); never changes the output")
      ->check(WholeNumber(0, 1024));
  conv->add_flag("--thread-stacks", args->thread_stacks,
                 "Stacks exactly as each thread ran them (default: a backward node's work hangs under the forward op "
                 "that created it, below a [backward] frame)");
  conv->add_flag("--critical", args->critical,
                 "Also the sample type critical: what each step waited on, under the stacks that caused it "
                 "(costs about a third more time and memory; implied by --sample-type critical)");
  conv->add_flag("--all-frames", args->all_frames,
                 "Memory snapshots: keep the interpreter's and the allocator's own frames (default: hidden, as "
                 "torch's _memory_viz hides them)");
  conv->add_option("--step-labels", args->step_labels,
                   "Label samples with their step: on, off, or auto (default: on for traces of at most 10 steps; "
                   "each stack is one sample per step it ran in)")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  conv->add_option("--max-depth", args->max_depth,
                   "Frames a stack keeps (default " + std::to_string(kDefaultMaxDepth) +
                       "); deeper ones fold into one " + kDeeperFramesName + " frame")
      ->check(WholeNumber(2, 1 << 20));
  conv->add_flag("--stats", args->stats, "Print each stage's wall and CPU time on stderr");
  conv->add_option("--format", args->format,
                   "Output format: pprof; folded ('frame;frame value' lines for flamegraph.pl, inferno, "
                   "speedscope); pstats (python -m pstats, snakeviz). Default from the output's name: .folded, "
                   ".prof or .pstats, else pprof")
      ->check(CLI::IsMember({"pprof", "folded", "pstats"}));
  std::vector<std::string> trace_types, snapshot_types;
  for (const SampleTypeName& t : kTraceSampleTypes) trace_types.push_back(t.type);
  for (const SampleTypeName& t : kSnapshotSampleTypes) snapshot_types.push_back(t.type);
  conv->add_option("--sample-type", args->sample_type,
                   "The value written by folded stacks and pstats (default: the profile's default, work); for "
                   "pprof, the sample type pprof shows first. A trace's: " +
                       Joined(trace_types) + "; a memory snapshot's: " + Joined(snapshot_types));
  conv->add_option("--folded-root", args->folded_root,
                   "Root frame of each folded stack: thread, device, rank or none; default auto: the device for "
                   "--sample-type gpu (a layer's forward and backward together), else the thread; with -o, rank first")
      ->check(CLI::IsMember({"auto", "thread", "device", "rank", "none"}));
  conv->add_flag("--force", args->force,
                 "Replace an existing output that is no profile, folded stacks or pstats (default: refuse it)");
  AddInputOptions(conv, &args->in);
  AddSnapshotOptions(conv, &args->in);
  conv->footer(
      "Sample types: work (default: wall less blocking waits), wall (self time in ns; flat = exclusive, cum =\n"
      "inclusive) and calls. Also gpu (device time under the launching stack) and alloc_/inuse_ objects and space\n"
      "when the trace has them, and critical with --critical when it has steps. Labels: pid, tid, thread, step,\n"
      "device, stream, rank.\n"
      "Try: go tool pprof -sample_index=gpu -top out.pb.gz");
  return conv;
}

int RunConvert(const ConvertArgs& args, std::ostream& /*out*/, std::ostream& err) {
  if (args.output.empty() && args.files.size() != 2) {
    WrongInputs("convert", "IN OUT, or -o OUT and its inputs", args.files.size());
  }
  if (!args.output.empty() && args.files.empty()) WrongInputs("convert", "-o OUT and at least one input", 0);
  bool merged = !args.output.empty();
  if (!merged && args.files.size() != 2) {
    throw Error(Error::Kind::kUsage, "", -1,
                "convert takes IN OUT, or -o OUT IN...: torch2pprof convert trace.json.gz out.pb.gz");
  }
  if (merged && args.files.empty()) throw Error(Error::Kind::kUsage, "", -1, "convert -o OUT needs at least one input");
  ConvertOptions options;
  options.inputs = merged ? args.files : std::vector<std::string>{args.files[0]};
  options.output = merged ? args.output : args.files[1];
  if (options.output == "-" && ::isatty(1) && args.format != "folded") {
    throw Error(Error::Kind::kUsage, "", -1,
                "refusing to write a binary profile to a terminal; redirect standard output or name an output file");
  }
  options.threads = args.threads;
  options.strict = args.in.strict;
  options.max_snapshot_items = static_cast<uint64_t>(args.in.max_snapshot_items);
  options.allow_truncated = args.in.allow_truncated;
  options.thread_stacks = args.thread_stacks;
  options.all_frames = args.all_frames;
  options.critical = args.critical;
  options.step_labels = args.step_labels == "on"    ? StepLabels::kOn
                        : args.step_labels == "off" ? StepLabels::kOff
                                                    : StepLabels::kAuto;
  options.max_depth = args.max_depth;
  options.format = args.format == "folded"   ? OutputFormat::kFolded
                   : args.format == "pstats" ? OutputFormat::kPstats
                   : args.format == "pprof"  ? OutputFormat::kPprof
                                             : FormatForPath(options.output);
  options.sample_type = args.sample_type;
  options.folded_root = args.folded_root == "rank"     ? FoldedRoot::kRank
                        : args.folded_root == "none"   ? FoldedRoot::kNone
                        : args.folded_root == "thread" ? FoldedRoot::kThread
                        : args.folded_root == "device" ? FoldedRoot::kDevice
                                                       : FoldedRoot::kAuto;
  options.remove_output_on_signal = !args.in.hosted;
  options.force = args.force;
  ConvertResult result = WithProgress(options, args.in, [](const auto& o) { return Convert(o); });
  PrintWarnings(result.warnings, args.in, err);
  if (args.stats) PrintStats(result.stages, err);
  return kExitOk;
}

}  // namespace torch2pprof::cli
