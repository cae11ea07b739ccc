#include <ostream>

#include "base/utf8.h"
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

int RunCompare(const CompareArgs& args, std::ostream& out, std::ostream& err) {
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
  options.remove_output_on_signal = true;
  CompareRunsResult result = WithProgress(options, args.in, [](const auto& o) { return Compare(o); });
  PrintWarnings(result.warnings, args.in, err);
  ReportOptions report;
  report.top = args.top < 0 ? kDefaultTop : args.top;
  report.rows = args.top < 0 ? 0 : args.top;
  if (result.kind == InputKind::kSnapshot) {
    const SnapshotComparison& c = result.snapshots;
    out << (args.format == "json"       ? RenderSnapshotCompareJson(c, report)
            : args.format == "markdown" ? RenderSnapshotCompareMarkdown(c, report)
                                        : RenderSnapshotCompareText(c, report));
    return Verdict(c.rules, c.regressed, err);
  }
  const Comparison& c = result.comparison;
  out << (args.format == "json"       ? RenderCompareJson(c, report)
          : args.format == "markdown" ? RenderCompareMarkdown(c, report)
                                      : RenderCompareText(c, report));
  return Verdict(c.rules, c.regressed, err);
}

}  // namespace torch2pprof::cli
