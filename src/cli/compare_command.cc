#include <ostream>

#include <CLI/CLI.hpp>
#include "base/utf8.h"
#include "cli/options.h"

#include "cli/commands.h"
#include "cli/progress.h"
#include "torch2pprof/analysis.h"
#include "torch2pprof/error.h"
#include "torch2pprof/output.h"
#include "torch2pprof/report.h"
#include "torch2pprof/torch2pprof.h"

namespace torch2pprof::cli {

namespace {

// The exit status of a comparison, its regressions and held rules said on stderr.
int Verdict(const std::vector<RuleResult>& rules, bool regressed, std::ostream& err) {
  for (const RuleResult& r : rules) {
    if (r.fired) err << "torch2pprof: regression: " << VisibleText(DescribeRule(r)) << "\n";
    if (r.crossed && !r.fired) err << "torch2pprof: held: " << VisibleText(DescribeHeld(r)) << "\n";
  }
  return regressed ? kExitRegression : kExitOk;
}

}  // namespace

CLI::App* AddCompare(CLI::App& app, CompareArgs* args) {
  CLI::App* cmp = app.add_subcommand("compare", "What changed between two runs; exit 4 when a --fail-on rule fires");
  cmp->add_option("inputs", args->inputs, "BASE NEW. " + Reads("compare"));
  cmp->add_option("--format", args->format,
                  "text (default), json, markdown or html (one offline page: the change first, then a "
                  "differential flame graph, red slower, blue faster, then the tables)")
      ->check(CLI::IsMember({"text", "json", "markdown", "html"}));
  cmp->add_option("--fail-on", args->fail_on,
                  "A gate: METRIC>THRESHOLD (>=, <, <=), e.g. 'step_time>+5%', 'memory_peak>+100MiB', "
                  "'op:aten::mm>+2ms'; metrics step_time, kernel_time, comm_time, memory_peak, gpu_util, op:GLOB (host "
                  "or device time per step, whichever crossed), op_host:GLOB, op_device:GLOB, kernel:GLOB. A time "
                  "or size threshold names its unit (ns, us, ms, s; B, KiB, MiB, GiB) or is a share (%). Repeatable: "
                  "one rule each")
      ->allow_extra_args(false);
  cmp->add_flag("--noise-aware", args->noise_aware,
                "A rule that crossed its threshold fires only when the change stands out of the step-to-step noise "
                "(its 95% bootstrap interval excludes 0); each one held back says why on stderr. Default: the "
                "threshold decides");
  cmp->add_flag("--strict-noise", args->strict_noise, "The default now: the threshold decides (kept for old scripts)")
      ->group("");
  cmp->add_option("-o,--output", args->output,
                  "Also write the pprof diff per step (new minus base, each divided by its step count)");
  cmp->add_flag("--force", args->force, "Replace an existing -o file that is no profile (default: refuse it)");
  cmp->add_option("--group-by", args->group_by, "Operators by name (default) or by name and input shape")
      ->check(CLI::IsMember({"name", "shape"}));
  cmp->add_option("--top", args->top, "Operator and kernel rows (default " + std::to_string(kDefaultTop) + "; 0: all)")
      ->check(WholeNumber(0, 1000000000));
  cmp->add_option("--threads", args->threads, "Worker threads (default: all cores)")->check(WholeNumber(0, 1024));
  AddInputOptions(cmp, &args->in);
  AddSnapshotOptions(cmp, &args->in);
  cmp->footer(
      "Steps compare by their median, with a 95% bootstrap interval of its change; '~' marks a change within the\n"
      "noise. Operators, kernels and parts compare per step. Exit status: 0, or 4 when a rule fired.\n"
      "Example: torch2pprof compare --fail-on 'step_time>+5%' --format markdown base.json.gz new.json.gz\n"
      "         torch2pprof compare --format html base.json.gz new.json.gz > compare.html");
  return cmp;
}

int RunCompare(const CompareArgs& args, std::ostream& out, std::ostream& err) {
  if (args.inputs.size() != 2) WrongInputs("compare", "two inputs: BASE NEW", args.inputs.size());
  CompareRunsOptions options;
  options.base = args.inputs[0];
  options.next = args.inputs[1];
  for (const std::string& rule : args.fail_on) options.compare.rules.push_back(ParseRule(rule));
  options.compare.noise_aware = args.noise_aware;
  options.group_by_shape = args.group_by == "shape";
  options.threads = args.threads;
  options.strict = args.in.strict;
  options.max_snapshot_items = static_cast<uint64_t>(args.in.max_snapshot_items);
  options.allow_truncated = args.in.allow_truncated;
  options.diff_output = args.output;
  options.force = args.force;
  options.remove_output_on_signal = !args.in.hosted;
  options.flame_graph = args.format == "html";
  CompareRunsResult result = WithProgress(options, args.in, [](const auto& o) { return Compare(o); });
  PrintWarnings(result.warnings, args.in, err);
  ReportOptions report;
  report.top = args.top < 0 ? kDefaultTop : args.top;
  report.rows = args.top < 0 ? 0 : args.top;
  WriteReport(args.inputs[1], [&] { out << RenderComparisonReport(result, args.format, report); });
  bool regressed = false;
  const std::vector<RuleResult>& rules = RulesOf(result, &regressed);
  return Verdict(rules, regressed, err);
}

}  // namespace torch2pprof::cli
