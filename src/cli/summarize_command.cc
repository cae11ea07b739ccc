#include <ostream>

#include <CLI/CLI.hpp>
#include "cli/options.h"

#include "cli/commands.h"
#include "cli/progress.h"
#include "torch2pprof/error.h"
#include "torch2pprof/torch2pprof.h"

namespace torch2pprof::cli {

CLI::App* AddSummarize(CLI::App& app, SummarizeArgs* args) {
  CLI::App* sum = app.add_subcommand(
      "summarize", "One rank's trace to its summary, a small file that analyze reads for the trace (map and reduce)");
  sum->add_option("input", args->inputs, "The input ('-' reads standard input). " + Reads("summarize"));
  sum->add_option("-o,--output", args->output,
                  "The summary to write: NAME.summary.json (default and '-': standard output)");
  sum->add_option("--threads", args->threads, "Worker threads (default: all cores)")->check(WholeNumber(0, 1024));
  sum->add_flag("--stats", args->stats, "Print each stage's wall and CPU time on stderr");
  sum->add_flag("--force", args->force, "Replace an existing output that is no torch2pprof output");
  AddInputOptions(sum, &args->in);
  sum->footer(
      "A summary holds what the report over ranks needs (steps, their breakdown, collectives and their calls);\n"
      "analyze reads summaries wherever it reads traces, mixed or alone, and reports what the traces would.\n"
      "Example: ls rank*.json.gz | xargs -P 8 -I{} torch2pprof summarize {} -o {}.summary.json\n"
      "         torch2pprof analyze *.summary.json");
  return sum;
}

int RunSummarize(const SummarizeArgs& args, std::ostream& /*out*/, std::ostream& err) {
  if (args.inputs.size() != 1) WrongInputs("summarize", "one input", args.inputs.size());
  const std::string o = args.output.empty() ? "-" : args.output;
  // A summary is JSON; any other name is more likely a slip (a trace's name) than a wish.
  if (o != "-" && (o.size() < 5 || o.compare(o.size() - 5, 5, ".json") != 0)) {
    throw Error(Error::Kind::kUsage, "", -1,
                "a summary is JSON: name it NAME.summary.json (or '-' for standard output), got '" + o + "'");
  }
  SummarizeOptions options;
  options.input = args.inputs[0];
  options.output = o;
  options.threads = args.threads;
  options.strict = args.in.strict;
  options.allow_truncated = args.in.allow_truncated;
  options.force = args.force;
  options.remove_output_on_signal = !args.in.hosted;
  SummarizeResult result = WithProgress(options, args.in, [](const auto& opts) { return Summarize(opts); });
  PrintWarnings(result.warnings, args.in, err);
  if (args.stats) PrintStats(result.stages, err);
  return kExitOk;
}

}  // namespace torch2pprof::cli
