#include <unistd.h>

#include <ostream>
#include <thread>

#include "commands.h"
#include "torch2pprof/aggregator.h"
#include "torch2pprof/error.h"
#include "torch2pprof/lane_builder.h"
#include "torch2pprof/pprof_writer.h"
#include "torch2pprof/trace_loader.h"

namespace torch2pprof::cli {

void PrintWarnings(const Trace& trace, std::ostream& err) {
  for (const std::string& w : LoadWarnings(trace)) err << "torch2pprof: " << w << "\n";
}

int RunConvert(const ConvertArgs& args, std::ostream& /*out*/, std::ostream& err) {
  if (args.output == "-" && ::isatty(1)) {
    throw Error(Error::Kind::kUsage, "", -1,
                "refusing to write a binary profile to a terminal; redirect standard output or name an output file");
  }
  int threads = args.threads > 0 ? args.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  Trace trace = LoadTrace(LoadOptions{args.input, threads, false, args.in.strict, args.in.allow_truncated});
  if (trace.intervals.empty()) {
    ThrowInput(trace.file, -1,
               "the trace has no timed events (X events with dur > 0 or B/E pairs) among its " +
                   std::to_string(trace.stats.events) + " events");
  }
  PrintWarnings(trace, err);
  std::vector<LaneStacks> lanes = BuildLanes(trace, BuildOptions{threads});
  Profile profile = Aggregate(trace, lanes);
  WriteOutputFile(args.output, Gzip(EncodeProfile(profile)), args.input);
  return kExitOk;
}

}  // namespace torch2pprof::cli
