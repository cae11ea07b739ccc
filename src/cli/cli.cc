#include "cli/cli.h"

#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "base/utf8.h"
#include "cli/commands.h"
#include "torch2pprof/error.h"
#include "torch2pprof/input.h"
#include "torch2pprof/version.h"

namespace torch2pprof::cli {
namespace {

const char* const kCommands[] = {"convert", "analyze", "compare", "summarize", "help"};
// Long options that may also be written with one dash, as Go tools do (-top 50).
const char* const kLongOptions[] = {"threads",  "output", "help",           "version", "top",
                                    "format",   "table",  "group-by",       "strict",  "thread-stacks",
                                    "progress", "quiet",  "allow-truncated"};

void AddInputOptions(CLI::App* cmd, InputArgs* in) {
  cmd->add_flag("--strict", in->strict, "An event that cannot be read is an error (default: skip it, count it, warn)");
  cmd->add_flag("--allow-truncated", in->allow_truncated,
                "A trace cut off mid-write keeps the events complete before the cut (default: an error)");
  cmd->add_flag("--progress", in->progress,
                "Show progress on stderr even when it is not a terminal (default: on a terminal, after 0.5 s)");
  cmd->add_flag("--quiet", in->quiet, "No warnings and no progress on stderr (errors still print)");
}

CLI::Validator WholeNumber(long long min, long long max);

// What a command reads, from the router's one list (InputsOfCommands): the kinds it takes,
// each with its files, and how it takes them.
std::string Reads(const std::string& command) {
  std::string kinds;
  for (InputKind k : InputsOf(command).kinds) {
    const char* files = k == InputKind::kTrace      ? " (Chrome Trace JSON, .json or .json.gz)"
                        : k == InputKind::kSnapshot ? " (.pickle or .pickle.gz)"
                        : k == InputKind::kProfile  ? " (.pb.gz, written by convert)"
                                                    : " (.summary.json, written by summarize)";
    kinds += (kinds.empty() ? "" : ", ") + std::string(InputKindName(k)) + files;
  }
  return "Reads " + kinds + ": " + InputsOf(command).how + ". Each input's kind is told by its first bytes.";
}

// The usage line of a command given the wrong number of inputs.
[[noreturn]] void WrongInputs(const std::string& command, const std::string& expects, size_t got) {
  throw Error(Error::Kind::kUsage, "", -1,
              command + " takes " + expects + " (" + InputsOf(command).how + "); got " +
                  (got == 0 ? std::string("none") : std::to_string(got)) + " (see 'torch2pprof " + command +
                  " --help')");
}

// The commands that read memory snapshots.
void AddSnapshotOptions(CLI::App* cmd, InputArgs* in) {
  cmd->add_option("--max-snapshot-items", in->max_snapshot_items,
                  "Memory snapshots: the segments, blocks and ring entries a snapshot may hold once its shared "
                  "references are expanded (default: 4194304 and a quarter of the pickle's bytes)")
      ->check(WholeNumber(1, (1LL << 62)));
}

// A whole number in [min, max]; anything else gets a plain message, not CLI11's.
CLI::Validator WholeNumber(long long min, long long max) {
  return CLI::Validator(
      [min, max](std::string& s) -> std::string {
        char* end = nullptr;
        errno = 0;
        long long v = std::strtoll(s.c_str(), &end, 10);
        if (s.empty() || *end != '\0' || errno == ERANGE || v < min || v > max) {
          return "expected a whole number from " + std::to_string(min) + " to " + std::to_string(max) + ", got '" + s +
                 "'";
        }
        return "";
      },
      "N");
}

size_t EditDistance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
      diag = up;
    }
  }
  return row[b.size()];
}

// "unknown command 'analyse' (did you mean analyze?)"
std::string UnknownCommand(const std::string& word) {
  std::string best;
  size_t best_distance = 3;  // at most two edits away
  for (const char* c : kCommands) {
    size_t d = EditDistance(word, c);
    if (d < best_distance) best = c, best_distance = d;
  }
  return "unknown command '" + word + "' " +
         (best.empty() ? std::string("(commands: convert, analyze, compare, summarize, help)")
                       : "(did you mean " + best + "?)");
}

// The backward-compatible form "torch2pprof IN OUT": a first argument that is an
// existing file, '-', or looks like a path (so that a missing file is named as one).
bool IsConvertInput(const std::string& s) {
  struct stat st;
  return s == "-" || ::stat(s.c_str(), &st) == 0 || s.find('/') != std::string::npos ||
         s.find('.') != std::string::npos;
}

bool IsCommand(const std::string& s) {
  for (const char* c : kCommands) {
    if (s == c) return true;
  }
  return false;
}

// Go-style single-dash long options become double-dash ones; a first argument that
// is an input (IsConvertInput) is the backward-compatible "torch2pprof IN OUT" form
// of convert. Throws a usage Error for a first word that is neither.
std::vector<std::string> Normalize(int argc, const char* const* argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    // An empty word is never meant: CLI11 would drop an empty option value and take the
    // next word instead (-o "" a.json b.json wrote the profile over b.json).
    size_t eq = a.find('=');
    if (a.empty() || (a[0] == '-' && eq != std::string::npos && eq + 1 == a.size())) {
      std::string before = a.empty() && i > 1 ? argv[i - 1] : a.substr(0, a.empty() ? 0 : eq);
      throw Error(Error::Kind::kUsage, "", -1,
                  before.size() > 1 && before[0] == '-' ? before + " needs a value, got an empty one"
                                                        : "an empty argument where a file name or value was expected");
    }
    if (a.size() > 2 && a[0] == '-' && a[1] != '-') {
      std::string name = a.substr(1, a.find('=') == std::string::npos ? std::string::npos : a.find('=') - 1);
      for (const char* known : kLongOptions) {
        if (name == known) a = "-" + a;
      }
    }
    args.push_back(a);
  }
  if (!args.empty() && !IsCommand(args[0]) && (args[0] == "-" || args[0][0] != '-')) {
    if (!IsConvertInput(args[0])) throw Error(Error::Kind::kUsage, "", -1, UnknownCommand(args[0]));
    args.insert(args.begin(), "convert");
  }
  return args;
}

// simdjson's parser is compiled for the build's x86-64 baseline (TORCH2PPROF_MARCH);
// on an older CPU it would die of an illegal instruction, so say so instead.
bool CpuHasBaseline(std::ostream& err) {
#if defined(__x86_64__) && defined(TORCH2PPROF_MARCH)
  __builtin_cpu_init();
  std::string march = TORCH2PPROF_MARCH;
  bool ok = __builtin_cpu_supports("sse4.2") && __builtin_cpu_supports("popcnt") && __builtin_cpu_supports("pclmul");
  if (march == "x86-64-v3") ok = ok && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2");
  if (!ok) {
    err << "torch2pprof: this build needs an x86-64 CPU of level " << march
        << "; rebuild with cmake -DTORCH2PPROF_MARCH=x86-64 for this machine\n";
  }
  return ok;
#else
  (void)err;
  return true;
#endif
}

}  // namespace

int Run(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  if (!CpuHasBaseline(err)) return kExitBadInput;
  CLI::App app{"torch2pprof: PyTorch profiler traces (Chrome/Kineto JSON, .json or .json.gz) to pprof profiles.",
               "torch2pprof"};
  app.footer(
      "Examples:\n"
      "  torch2pprof convert trace.json.gz out.pb.gz && go tool pprof -top out.pb.gz\n"
      "  torch2pprof trace.json out.pb.gz        (same as convert)\n"
      "  torch2pprof convert - out.pb.gz < trace.json\n"
      "  torch2pprof convert -o job.pb.gz rank*.pt.trace.json.gz   (many ranks, one profile; label rank)\n"
      "  torch2pprof convert snapshot.pickle mem.pb.gz   (a CUDA memory snapshot: bytes by stack at the peak)\n"
      "  torch2pprof analyze -top 50 trace.json.gz      (also --format json, --format csv --table kernels)\n"
      "  torch2pprof compare --fail-on 'step_time>+5%' base.json.gz new.json.gz\n"
      "  torch2pprof summarize rank7.json.gz -o rank7.summary.json; torch2pprof analyze *.summary.json\n"
      "Exit status: 0 ok, 1 bad input, 2 usage error, 3 output not written, 4 compare: a rule fired.");
  bool version = false;
  app.add_flag("--version", version, "Print the version and exit");

  ConvertArgs convert;
  CLI::App* conv = app.add_subcommand("convert", "Convert a trace into a gzipped pprof profile");
  conv->add_option("files", convert.files,
                   "IN OUT: the input ('-' reads standard input) and the profile to write (.pb.gz, .folded, .prof; "
                   "'-' writes standard output); with -o: the inputs. " +
                       Reads("convert"));
  conv->add_option("-o,--output", convert.output,
                   "One profile of all the traces given, each sample labelled rank (distributedInfo.rank, else the "
                   "input's position); profiles that convert wrote merge with them as their traces would");
  conv->add_option("--threads", convert.threads, "Worker threads (default: all cores); never changes the output")
      ->check(WholeNumber(0, 1024));
  conv->add_flag("--thread-stacks", convert.thread_stacks,
                 "Stacks exactly as each thread ran them (default: a backward node's work hangs under the forward op "
                 "that created it, below a [backward] frame)");
  conv->add_flag("--all-frames", convert.all_frames,
                 "Memory snapshots: keep the interpreter's and the allocator's own frames (default: hidden, as "
                 "torch's _memory_viz hides them)");
  conv->add_option("--step-labels", convert.step_labels,
                   "Label samples with their step: on, off, or auto (default: on for traces of at most 10 steps; "
                   "each stack is one sample per step it ran in)")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  conv->add_option("--max-depth", convert.max_depth,
                   "Frames a stack keeps (default 2048); deeper ones fold into one [deeper frames truncated] frame")
      ->check(WholeNumber(2, 1 << 20));
  conv->add_flag("--stats", convert.stats, "Print each stage's wall and CPU time on stderr");
  conv->add_option("--format", convert.format,
                   "Output format: pprof; folded ('frame;frame value' lines for flamegraph.pl, inferno, "
                   "speedscope); pstats (python -m pstats, snakeviz). Default from the output's name: .folded, "
                   ".prof or .pstats, else pprof")
      ->check(CLI::IsMember({"pprof", "folded", "pstats"}));
  conv->add_option("--sample-type", convert.sample_type,
                   "The value written by folded stacks and pstats (default: the profile's default, work); for "
                   "pprof, the sample type pprof shows first");
  conv->add_option("--folded-root", convert.folded_root,
                   "Root frame of each folded stack: thread, device, rank or none; default auto: the device for "
                   "--sample-type gpu (a layer's forward and backward together), else the thread; with -o, rank first")
      ->check(CLI::IsMember({"auto", "thread", "device", "rank", "none"}));
  conv->add_flag("--force", convert.force,
                 "Replace an existing output that is no profile, folded stacks or pstats (default: refuse it)");
  AddInputOptions(conv, &convert.in);
  AddSnapshotOptions(conv, &convert.in);
  conv->footer(
      "Sample types: work (default: wall less blocking waits), wall (self time in ns; flat = exclusive, cum =\n"
      "inclusive) and calls. Also gpu (device time under the launching stack) and alloc_/inuse_ objects and space\n"
      "when the trace has them. Labels: pid, tid, thread, step, device, stream, rank.\n"
      "Try: go tool pprof -sample_index=gpu -top out.pb.gz");
  AnalyzeArgs analyze;
  CLI::App* an = app.add_subcommand("analyze", "Report steps, operators, kernels, GPU use, memory and advice");
  an->add_option("inputs", analyze.inputs,
                 "The input ('-' reads standard input), or one per rank, or a directory of them: one report over all "
                 "ranks. " +
                     Reads("analyze"));
  an->add_option("--top", analyze.top, "Rows per table (default 20; 0: all); in HTML, the rows shown before 'Show all'")
      ->check(WholeNumber(0, 1000000000));
  an->add_option("--format", analyze.format,
                 "text (default), json, csv or html (one self-contained page with charts; opens offline)")
      ->check(CLI::IsMember({"text", "json", "csv", "html"}));
  an->add_option("--table", analyze.table,
                 "With --format csv: categories, steps, operators (default), kernels, gpu, idle_time, kernel_launches, "
                 "queue_length, copies, tensor_cores, kernels_by_operator, synchronizations, annotations, "
                 "collective_sizes, memory, "
                 "modules, module_classes, "
                 "python_functions; several ranks: "
                 "ranks (default), spreads, stragglers, slow_ranks, collectives, step_alignment");
  an->add_option("--group-by", analyze.group_by, "Operators by name (default) or by name and input shape")
      ->check(CLI::IsMember({"name", "shape"}));
  an->add_option("--threads", analyze.threads, "Worker threads (default: all cores)")->check(WholeNumber(0, 1024));
  an->add_flag("--stats", analyze.stats, "Print each stage's wall and CPU time on stderr");
  an->add_option("--straggler-threshold", analyze.straggler_threshold,
                 "Several ranks: the others wait for a straggler more than this many percent of the median step, "
                 "and a slow rank's median step or compute time exceeds the median of ranks by more (default 5)")
      ->check(WholeNumber(0, 1000));
  AddInputOptions(an, &analyze.in);
  AddSnapshotOptions(an, &analyze.in);
  an->footer(
      "Times follow torch-tb-profiler's definitions (docs/tb-semantics.md). JSON times are microseconds exact to the "
      "ns.\n"
      "Examples: torch2pprof analyze -top 50 trace.json.gz\n"
      "          torch2pprof analyze --format csv --table kernels trace.json.gz > kernels.csv\n"
      "          torch2pprof analyze --format html trace.json.gz > report.html\n"
      "          torch2pprof analyze rank*.pt.trace.json.gz      (one report over all ranks; also a directory)");
  CompareArgs compare;
  CLI::App* cmp = app.add_subcommand("compare", "What changed between two runs; exit 4 when a --fail-on rule fires");
  cmp->add_option("inputs", compare.inputs, "BASE NEW. " + Reads("compare"));
  cmp->add_option("--format", compare.format, "text (default), json or markdown")
      ->check(CLI::IsMember({"text", "json", "markdown"}));
  cmp->add_option("--fail-on", compare.fail_on,
                  "A gate: METRIC>THRESHOLD (>=, <, <=), e.g. 'step_time>+5%', 'memory_peak>+100MiB', "
                  "'op:aten::mm>+2ms'; metrics step_time, kernel_time, comm_time, memory_peak, gpu_util, op:GLOB (host "
                  "or device time per step, whichever crossed), op_host:GLOB, op_device:GLOB, kernel:GLOB. A time "
                  "or size threshold names its unit (ns, us, ms, s; B, KiB, MiB, GiB) or is a share (%). Repeatable: "
                  "one rule each")
      ->allow_extra_args(false);
  cmp->add_flag("--noise-aware", compare.noise_aware,
                "A rule that crossed its threshold fires only when the change stands out of the step-to-step noise "
                "(its 95% bootstrap interval excludes 0); each one held back says why on stderr. Default: the "
                "threshold decides");
  cmp->add_flag("--strict-noise", compare.strict_noise, "The default now: the threshold decides (kept for old scripts)")
      ->group("");
  cmp->add_option("-o,--output", compare.output,
                  "Also write the pprof diff per step (new minus base, each divided by its step count)");
  cmp->add_flag("--force", compare.force, "Replace an existing -o file that is no profile (default: refuse it)");
  cmp->add_option("--group-by", compare.group_by, "Operators by name (default) or by name and input shape")
      ->check(CLI::IsMember({"name", "shape"}));
  cmp->add_option("--top", compare.top, "Operator and kernel rows (default 20; 0: all)")
      ->check(WholeNumber(0, 1000000000));
  cmp->add_option("--threads", compare.threads, "Worker threads (default: all cores)")->check(WholeNumber(0, 1024));
  AddInputOptions(cmp, &compare.in);
  AddSnapshotOptions(cmp, &compare.in);
  cmp->footer(
      "Steps compare by their median, with a 95% bootstrap interval of its change; '~' marks a change within the\n"
      "noise. Operators, kernels and parts compare per step. Exit status: 0, or 4 when a rule fired.\n"
      "Example: torch2pprof compare --fail-on 'step_time>+5%' --format markdown base.json.gz new.json.gz");
  SummarizeArgs summarize;
  CLI::App* sum = app.add_subcommand(
      "summarize", "One rank's trace to its summary, a small file that analyze reads for the trace (map and reduce)");
  std::vector<std::string> summarize_inputs;  // one, said by WrongInputs rather than CLI11
  sum->add_option("input", summarize_inputs, "The input ('-' reads standard input). " + Reads("summarize"));
  sum->add_option("-o,--output", summarize.output,
                  "The summary to write: NAME.summary.json (default and '-': standard output)");
  sum->add_option("--threads", summarize.threads, "Worker threads (default: all cores)")->check(WholeNumber(0, 1024));
  sum->add_flag("--stats", summarize.stats, "Print each stage's wall and CPU time on stderr");
  sum->add_flag("--force", summarize.force, "Replace an existing output that is no torch2pprof output");
  AddInputOptions(sum, &summarize.in);
  sum->footer(
      "A summary holds what the report over ranks needs (steps, their breakdown, collectives and their calls);\n"
      "analyze reads summaries wherever it reads traces, mixed or alone, and reports what the traces would.\n"
      "Example: ls rank*.json.gz | xargs -P 8 -I{} torch2pprof summarize {} -o {}.summary.json\n"
      "         torch2pprof analyze *.summary.json");
  CLI::App* help = app.add_subcommand("help", "Show help: torch2pprof help [command]");

  std::vector<std::string> args;
  try {
    args = Normalize(argc, argv);
  } catch (const Error& e) {
    err << "torch2pprof: " << VisibleText(e.what()) << "\n";
    return kExitUsage;
  }
  if (args.size() >= 2 && args[0] == "help") {  // "help analyze": the word is a topic, not a command to run
    for (CLI::App* sub : {conv, an, cmp, sum}) {
      if (sub->get_name() == args[1]) {
        out << sub->help("torch2pprof");
        return kExitOk;
      }
    }
    err << "torch2pprof: " << VisibleText(UnknownCommand(args[1])) << "\n";
    return kExitUsage;
  }
  std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes argv reversed
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    out << app.help();
    return kExitOk;
  } catch (const CLI::CallForAllHelp& e) {
    out << app.help("", CLI::AppFormatMode::All);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    err << "torch2pprof: " << VisibleText(e.what()) << " (see 'torch2pprof --help')\n";
    return kExitUsage;
  }
  if (version) {
    out << "torch2pprof " << kVersion << "\n" << BuildInfo();
    return kExitOk;
  }
  try {
    // How many inputs each command takes, said by the command (CLI11 would say "inputs is required").
    if (conv->parsed() && convert.output.empty() && convert.files.size() != 2) {
      WrongInputs("convert", "IN OUT, or -o OUT and its inputs", convert.files.size());
    }
    if (conv->parsed() && !convert.output.empty() && convert.files.empty()) {
      WrongInputs("convert", "-o OUT and at least one input", 0);
    }
    if (an->parsed() && analyze.inputs.empty()) WrongInputs("analyze", "at least one input", 0);
    if (cmp->parsed() && compare.inputs.size() != 2)
      WrongInputs("compare", "two inputs: BASE NEW", compare.inputs.size());
    if (sum->parsed() && summarize_inputs.size() != 1) WrongInputs("summarize", "one input", summarize_inputs.size());
    if (sum->parsed()) summarize.input = summarize_inputs[0];
    if (sum->parsed() && summarize.output.empty()) summarize.output = "-";
    int status = -1;
    if (conv->parsed()) status = RunConvert(convert, out, err);
    if (an->parsed()) status = RunAnalyze(analyze, out, err);
    if (cmp->parsed()) status = RunCompare(compare, out, err);
    if (sum->parsed()) status = RunSummarize(summarize, out, err);
    if (help->parsed()) {
      out << app.get_formatter()->make_help(&app, "torch2pprof", CLI::AppFormatMode::Normal);
      status = kExitOk;
    }
    if (status >= 0) {
      // A report nobody can read is no success: a full disk or a closed pipe is exit 3.
      errno = 0;
      if (!out.flush()) {
        const int saved = errno;
        err << "torch2pprof: standard output: cannot write" << (saved ? std::string(": ") + std::strerror(saved) : "")
            << "\n";
        return kExitOutput;
      }
      return status;
    }
  } catch (const Error& e) {
    err << "torch2pprof: " << VisibleText(e.what()) << "\n";
    return ExitStatusOf(e);
  } catch (const std::bad_alloc&) {
    err << "torch2pprof: out of memory\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    // A bug, but still one line and a status, never an abort.
    err << "torch2pprof: internal error: " << VisibleText(e.what()) << "\n";
    return kExitBadInput;
  }
  err << app.help();  // no command: usage goes where errors go
  return kExitUsage;
}

}  // namespace torch2pprof::cli
