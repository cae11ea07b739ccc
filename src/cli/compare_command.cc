#include <algorithm>
#include <ostream>
#include <thread>

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

// Two memory snapshots: their peaks and what is live there; -o the pprof diff of their
// profiles (inuse_space first).
int RunCompareSnapshots(const CompareArgs& args, const CompareOptions& options, std::ostream& out, std::ostream& err) {
  SnapshotAnalysis analyses[2];
  for (int i = 0; i < 2; ++i) {
    AnalyzeSnapshotOptions analyze;
    analyze.input = args.inputs[static_cast<size_t>(i)];
    AnalyzeSnapshotResult result = WithProgress(analyze, args.in, [](const auto& o) { return AnalyzeSnapshot(o); });
    PrintWarnings(result.warnings, args.in, err);
    analyses[i] = std::move(result.analysis);
  }
  SnapshotComparison c = CompareSnapshots(analyses[0], analyses[1], options);
  ReportOptions report;
  report.top = args.top < 0 ? kDefaultTop : args.top;
  report.rows = args.top < 0 ? 0 : args.top;
  if (args.format == "json") {
    out << RenderSnapshotCompareJson(c, report);
  } else if (args.format == "markdown") {
    out << RenderSnapshotCompareMarkdown(c, report);
  } else {
    out << RenderSnapshotCompareText(c, report);
  }
  if (!args.output.empty()) {
    Profile profiles[2];
    for (int i = 0; i < 2; ++i) {
      ConvertOptions convert;
      convert.inputs = {args.inputs[static_cast<size_t>(i)]};
      profiles[i] = Convert(convert).profile;
    }
    WriteOptions write;
    write.inputs = args.inputs;
    write.force = args.force;
    write.remove_on_signal = true;
    WriteOutputFile(args.output, Gzip(EncodeProfile(DiffProfile(profiles[0], profiles[1]))), write);
  }
  return Verdict(c.rules, c.regressed, err);
}

}  // namespace

int RunCompare(const CompareArgs& args, std::ostream& out, std::ostream& err) {
  if (!args.output.empty() && FormatForPath(args.output) != OutputFormat::kPprof) {
    throw Error(Error::Kind::kUsage, "", -1,
                "compare -o writes a pprof diff: name it .pb.gz (got " + args.output + ")");
  }
  CompareOptions options;
  for (const std::string& rule : args.fail_on) options.rules.push_back(ParseRule(rule));
  options.noise_aware = args.noise_aware;
  const bool snapshots[2] = {LooksLikeSnapshot(args.inputs[0]), LooksLikeSnapshot(args.inputs[1])};
  if (snapshots[0] != snapshots[1]) {
    throw Error(Error::Kind::kUsage, args.inputs[snapshots[0] ? 0 : 1], -1,
                "a memory snapshot compares with a memory snapshot, not with a trace");
  }
  if (snapshots[0]) return RunCompareSnapshots(args, options, out, err);
  // One run at a time: its analysis (and with -o its profile) stays, its trace does not.
  Analysis analyses[2];
  Profile profiles[2];
  for (int i = 0; i < 2; ++i) {
    AnalyzeOptions analyze;
    analyze.input = args.inputs[static_cast<size_t>(i)];
    analyze.threads = args.threads;
    analyze.strict = args.in.strict;
    analyze.allow_truncated = args.in.allow_truncated;
    analyze.group_by_shape = args.group_by == "shape";
    analyze.per_step = true;
    AnalyzeResult result = WithProgress(analyze, args.in, [](const auto& o) { return Analyze(o); });
    PrintWarnings(result.warnings, args.in, err);
    analyses[i] = std::move(result.analysis);
    if (!args.output.empty()) {
      ConvertOptions convert;
      convert.inputs = {analyze.input};
      convert.threads = args.threads;
      convert.strict = args.in.strict;
      convert.allow_truncated = args.in.allow_truncated;
      profiles[i] = Convert(convert).profile;
    }
  }
  Comparison c = Compare(analyses[0], analyses[1], options);
  ReportOptions report;
  report.top = args.top < 0 ? kDefaultTop : args.top;
  report.rows = args.top < 0 ? 0 : args.top;
  if (args.format == "json") {
    out << RenderCompareJson(c, report);
  } else if (args.format == "markdown") {
    out << RenderCompareMarkdown(c, report);
  } else {
    out << RenderCompareText(c, report);
  }
  if (!args.output.empty()) {
    WriteOptions write;
    write.inputs = args.inputs;
    write.force = args.force;
    write.remove_on_signal = true;
    // Per step, as the report: runs of 3 and of 50 steps then differ only where a step does.
    auto steps = [](const Analysis& a) { return static_cast<uint64_t>(std::max<size_t>(1, a.steps.size())); };
    Profile diff = DiffProfile(PerStepProfile(std::move(profiles[0]), steps(analyses[0])),
                               PerStepProfile(std::move(profiles[1]), steps(analyses[1])));
    WriteOutputFile(args.output, Gzip(EncodeProfile(diff)), write);
  }
  return Verdict(c.rules, c.regressed, err);
}

}  // namespace torch2pprof::cli
