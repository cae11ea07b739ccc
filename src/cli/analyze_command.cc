#include <ostream>
#include <thread>

#include "commands.h"
#include "torch2pprof/analyzer.h"
#include "torch2pprof/error.h"
#include "torch2pprof/report.h"
#include "torch2pprof/trace_loader.h"

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
  int threads = args.threads > 0 ? args.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // analyze links device work by correlation only: no flows.
  Trace trace = LoadTrace(LoadOptions{args.input, threads, /*details=*/true, args.in.strict, args.in.allow_truncated});
  if (trace.intervals.empty() && trace.zero_length.empty() && trace.memory.empty()) {
    ThrowInput(trace.file, -1,
               "the trace has no X or B/E events and no [memory] events among its " +
                   std::to_string(trace.stats.events) + " events");
  }
  PrintWarnings(trace, err);
  Analysis analysis = Analyze(trace, BuildModel(trace), AnalyzeOptions{args.group_by == "shape", threads});
  if (args.format == "json") {
    out << RenderJson(analysis, report);
  } else if (args.format == "csv") {
    out << RenderCsv(analysis, report);
  } else {
    out << RenderText(analysis, report);
  }
  return kExitOk;
}

}  // namespace torch2pprof::cli
