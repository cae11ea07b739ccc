#include "cli/cli.h"

#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "base/utf8.h"
#include "cli/commands.h"
#include "cli/help.h"
#include "cli/options.h"
#include "torch2pprof/error.h"
#include "torch2pprof/version.h"

namespace torch2pprof::cli {
namespace {

const char* const kCommands[] = {"convert", "analyze", "compare", "summarize", "help"};
// Long options that may also be written with one dash, as Go tools do (-top 50).
const char* const kLongOptions[] = {"threads",  "output", "help",           "version", "top",
                                    "format",   "table",  "group-by",       "strict",  "thread-stacks",
                                    "progress", "quiet",  "allow-truncated"};

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

// Over 100 lines: the one place errors are caught, so every command's parse, call and
// render sit inside its one try.
int Run(int argc, const char* const* argv, std::ostream& out, std::ostream& err, Host host) {
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
  // Before the subcommands: each takes its parent's formatter when it is made.
  app.formatter(std::make_shared<WrappedHelp>(HelpWidth(host == Host::kProcess)));
  bool version = false;
  app.add_flag("--version", version, "Print the version and exit");

  ConvertArgs convert;
  CLI::App* conv = AddConvert(app, &convert);
  AnalyzeArgs analyze;
  CLI::App* an = AddAnalyze(app, &analyze);
  CompareArgs compare;
  CLI::App* cmp = AddCompare(app, &compare);
  SummarizeArgs summarize;
  CLI::App* sum = AddSummarize(app, &summarize);
  CLI::App* help = app.add_subcommand("help", "Show help: torch2pprof help [command]");

  for (InputArgs* in : {&convert.in, &analyze.in, &compare.in, &summarize.in}) in->hosted = host == Host::kEmbedded;
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
    // The help that lists the option is the command's, where one was named.
    std::string help = "torch2pprof --help";
    for (CLI::App* sub : {conv, an, cmp, sum}) {
      if (sub->parsed()) help = "torch2pprof " + sub->get_name() + " --help";
    }
    err << "torch2pprof: " << VisibleText(e.what()) << " (see '" << help << "')\n";
    return kExitUsage;
  }
  if (version) {
    out << "torch2pprof " << kVersion << "\n" << BuildInfo();
    return kExitOk;
  }
  try {
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
    err << "torch2pprof: internal error (a bug in torch2pprof; please report it with the command): "
        << VisibleText(e.what()) << "\n";
    return kExitInternal;
  }
  err << app.help();  // no command: usage goes where errors go
  return kExitUsage;
}

}  // namespace torch2pprof::cli
