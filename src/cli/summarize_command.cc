#include <ostream>

#include "cli/commands.h"
#include "cli/progress.h"
#include "torch2pprof/error.h"
#include "torch2pprof/torch2pprof.h"

namespace torch2pprof::cli {

int RunSummarize(const SummarizeArgs& args, std::ostream& /*out*/, std::ostream& err) {
  const std::string& o = args.output;
  // A summary is JSON; any other name is more likely a slip (a trace's name) than a wish.
  if (o != "-" && (o.size() < 5 || o.compare(o.size() - 5, 5, ".json") != 0)) {
    throw Error(Error::Kind::kUsage, "", -1,
                "a summary is JSON: name it NAME.summary.json (or '-' for standard output), got '" + o + "'");
  }
  SummarizeOptions options;
  options.input = args.input;
  options.output = o;
  options.threads = args.threads;
  options.strict = args.in.strict;
  options.allow_truncated = args.in.allow_truncated;
  options.force = args.force;
  options.remove_output_on_signal = true;
  SummarizeResult result = WithProgress(options, args.in, [](const auto& opts) { return Summarize(opts); });
  PrintWarnings(result.warnings, args.in, err);
  if (args.stats) PrintStats(result.stages, err);
  return kExitOk;
}

}  // namespace torch2pprof::cli
