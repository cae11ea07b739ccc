#include <ostream>

#include "commands.h"
#include "progress.h"
#include "torch2pprof/error.h"
#include "torch2pprof/report.h"
#include "torch2pprof/torch2pprof.h"

namespace torch2pprof::cli {

int RunAnalyze(const AnalyzeArgs& args, std::ostream& out, std::ostream& err) {
  ReportOptions report{args.top, args.table.empty() ? "operators" : args.table};
  if (args.format == "csv") {
    bool known = false;
    for (const std::string& t : CsvTables()) known |= t == report.table;
    if (!known) RenderCsv(Analysis(), report);  // throws the usage error that lists the tables
  } else if (!args.table.empty()) {
    throw Error(Error::Kind::kUsage, "", -1, "--table goes with --format csv");
  }
  AnalyzeOptions options;
  options.input = args.input;
  options.threads = args.threads;
  options.strict = args.in.strict;
  options.allow_truncated = args.in.allow_truncated;
  options.group_by_shape = args.group_by == "shape";
  Progress progress;
  options.progress = &progress;
  AnalyzeResult result;
  {
    ProgressLine line(progress, 2, WantProgress(args.in.progress, args.in.quiet));
    result = Analyze(options);
  }
  PrintWarnings(result.warnings, args.in, err);
  if (args.format == "json") {
    out << RenderJson(result.analysis, report);
  } else if (args.format == "csv") {
    out << RenderCsv(result.analysis, report);
  } else if (args.format == "html") {
    out << RenderHtml(result.analysis, report);
  } else {
    out << RenderText(result.analysis, report);
  }
  if (args.stats) PrintStats(result.stages, err);
  return kExitOk;
}

}  // namespace torch2pprof::cli
