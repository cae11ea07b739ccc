#include <ostream>
#include <thread>

#include "commands.h"
#include "torch2pprof/aggregator.h"
#include "torch2pprof/compare.h"
#include "torch2pprof/error.h"
#include "torch2pprof/lane_builder.h"
#include "torch2pprof/pprof_writer.h"
#include "torch2pprof/report.h"
#include "torch2pprof/trace_loader.h"
#include "torch2pprof/trace_model.h"

namespace torch2pprof::cli {

int RunCompare(const CompareArgs& args, std::ostream& out, std::ostream& err) {
  CompareOptions options;
  for (const std::string& rule : args.fail_on) options.rules.push_back(ParseRule(rule));
  options.strict_noise = args.strict_noise;
  int threads = args.threads > 0 ? args.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // One run at a time: its analysis (and with -o its profile) stays, its trace does not.
  Analysis analyses[2];
  Profile profiles[2];
  for (int i = 0; i < 2; ++i) {
    Trace trace = LoadTrace(LoadOptions{args.inputs[static_cast<size_t>(i)], threads, /*details=*/true, args.in.strict,
                                        args.in.allow_truncated});
    if (trace.intervals.empty() && trace.zero_length.empty() && trace.memory.empty()) {
      ThrowInput(trace.file, -1,
                 "the trace has no X or B/E events and no [memory] events among its " +
                     std::to_string(trace.stats.events) + " events");
    }
    PrintWarnings(trace, err);
    TraceModel model = BuildModel(trace);
    AnalyzeOptions analyze{args.group_by == "shape", threads, /*per_step=*/true};
    analyses[i] = Analyze(trace, model, analyze);
    if (!args.output.empty())
      profiles[i] = Aggregate(trace, model, BuildLanes(trace, ConvertBuildOptions(model, threads)));
  }
  Comparison c = Compare(analyses[0], analyses[1], options);
  ReportOptions report{args.top, ""};
  if (args.format == "json") {
    out << RenderCompareJson(c, report);
  } else if (args.format == "markdown") {
    out << RenderCompareMarkdown(c, report);
  } else {
    out << RenderCompareText(c, report);
  }
  if (!args.output.empty()) {
    WriteOutputFile(args.output, Gzip(EncodeProfile(DiffProfile(profiles[0], profiles[1]))), args.inputs);
  }
  for (const RuleResult& r : c.rules) {
    if (r.fired) err << "torch2pprof: regression: " << DescribeRule(r) << "\n";
  }
  return c.regressed ? kExitRegression : kExitOk;
}

}  // namespace torch2pprof::cli
