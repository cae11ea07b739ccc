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

int RunCompare(const CompareArgs& args, std::ostream& out, std::ostream& err) {
  if (!args.output.empty() && FormatForPath(args.output) != OutputFormat::kPprof) {
    throw Error(Error::Kind::kUsage, "", -1,
                "compare -o writes a pprof diff: name it .pb.gz (got " + args.output + ")");
  }
  CompareOptions options;
  for (const std::string& rule : args.fail_on) options.rules.push_back(ParseRule(rule));
  options.noise_aware = args.noise_aware;
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
  for (const RuleResult& r : c.rules) {
    if (r.fired) err << "torch2pprof: regression: " << VisibleText(DescribeRule(r)) << "\n";
    if (r.crossed && !r.fired) err << "torch2pprof: held: " << VisibleText(DescribeHeld(r)) << "\n";
  }
  return c.regressed ? kExitRegression : kExitOk;
}

}  // namespace torch2pprof::cli
