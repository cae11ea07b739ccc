#include <unistd.h>

#include <ostream>
#include <set>
#include <thread>

#include "commands.h"
#include "torch2pprof/aggregator.h"
#include "torch2pprof/error.h"
#include "torch2pprof/lane_builder.h"
#include "torch2pprof/pprof_writer.h"
#include "torch2pprof/trace_loader.h"
#include "torch2pprof/trace_model.h"

namespace torch2pprof::cli {

void PrintWarnings(const Trace& trace, std::ostream& err) {
  for (const std::string& w : LoadWarnings(trace)) err << "torch2pprof: " << w << "\n";
}

int RunConvert(const ConvertArgs& args, std::ostream& /*out*/, std::ostream& err) {
  bool merged = !args.output.empty();
  if (!merged && args.files.size() != 2) {
    throw Error(Error::Kind::kUsage, "", -1,
                "convert takes IN OUT, or -o OUT IN...: torch2pprof convert trace.json.gz out.pb.gz");
  }
  if (merged && args.files.empty()) throw Error(Error::Kind::kUsage, "", -1, "convert -o OUT needs at least one input");
  std::vector<std::string> inputs = merged ? args.files : std::vector<std::string>{args.files[0]};
  std::string output = merged ? args.output : args.files[1];
  if (output == "-" && ::isatty(1)) {
    throw Error(Error::Kind::kUsage, "", -1,
                "refusing to write a binary profile to a terminal; redirect standard output or name an output file");
  }
  int threads = args.threads > 0 ? args.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  AggregateOptions aggregate;
  aggregate.thread_stacks = args.thread_stacks;
  aggregate.rank_labels = merged;
  Aggregator aggregator(aggregate);
  std::vector<int64_t> ranks;
  std::vector<LoadOptions> loads;
  for (const std::string& input : inputs) {
    // One input reads and parses on two threads; several are read side by side.
    loads.push_back(
        LoadOptions{input, inputs.size() == 1 ? threads : 1, false, args.in.strict, args.in.allow_truncated});
  }
  LoadEach(loads, threads, [&](Trace& trace) {
    if (trace.intervals.empty() && trace.memory.empty()) {
      ThrowInput(
          trace.file, -1,
          "the trace has no timed events (X events with dur > 0 or B/E pairs) and no [memory] events among its " +
              std::to_string(trace.stats.events) + " events");
    }
    PrintWarnings(trace, err);
    TraceModel model = BuildModel(trace);
    aggregator.Add(trace, model, BuildLanes(trace, ConvertBuildOptions(model, threads)));
    ranks.push_back(ReadDistributedInfo(trace.header).rank);
  });
  if (merged) {
    // Ranks label samples apart; the input's position stands in for a missing or repeated rank.
    std::set<int64_t> seen;
    bool usable = true;
    for (int64_t rank : ranks) usable &= rank >= 0 && seen.insert(rank).second;
    if (!usable) {
      if (ranks.size() > 1 && !seen.empty()) {
        err << "torch2pprof: warning: distributedInfo.rank is missing or repeated; ranks are the inputs' positions\n";
      }
      for (size_t i = 0; i < ranks.size(); ++i) ranks[i] = static_cast<int64_t>(i);
    }
  }
  Profile profile = std::move(aggregator).Finish(merged ? ranks : std::vector<int64_t>{});
  WriteOutputFile(output, Gzip(EncodeProfile(profile)), inputs);
  return kExitOk;
}

}  // namespace torch2pprof::cli
