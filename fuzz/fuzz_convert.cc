// libFuzzer target over the whole pipeline: the loader (both thread modes, strict
// and lenient, with and without details; ranges cut on workers against one thread), the lane builder, the aggregator,
// the pprof, folded and pstats writers and the analyzer with its three renderers. Bad input must end in a
// torch2pprof::Error, never in a crash, a hang or a sanitizer report.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "torch2pprof/aggregator.h"
#include "torch2pprof/analyzer.h"
#include "torch2pprof/error.h"
#include "torch2pprof/folded_writer.h"
#include "torch2pprof/lane_builder.h"
#include "torch2pprof/pprof_writer.h"
#include "torch2pprof/pstats_writer.h"
#include "torch2pprof/report.h"
#include "torch2pprof/trace_loader.h"
#include "torch2pprof/trace_model.h"

using namespace torch2pprof;

namespace {

// A load and its profile as one string, or the error: what must not depend on threads.
std::string Outcome(std::string_view input, const LoadOptions& options) {
  try {
    Trace trace = LoadTraceFromMemory(input, "fuzz.json", options);
    TraceModel model = BuildModel(trace);
    std::string out = EncodeProfile(Aggregate(trace, model, BuildLanes(trace, ConvertBuildOptions(model, 1))));
    for (const std::string& w : LoadWarnings(trace)) out += "\n" + w;
    return out + "\n" + std::to_string(trace.stats.events) + " " + std::to_string(trace.stats.json_bytes);
  } catch (const Error& e) {
    return std::string("error: ") + e.what();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  // The first byte picks the options, so one corpus covers every mode.
  uint8_t mode = size ? data[0] : 0;
  LoadOptions options;
  options.threads = (mode & 1) ? 2 : 1;
  options.details = (mode & 2) != 0;
  options.strict = (mode & 4) != 0;
  options.allow_truncated = (mode & 8) != 0;
  if ((mode & 65) == 65) {
    // Ranges of a few bytes cut on the workers (the second byte picks their size) must
    // load what one thread loads.
    options.range_bytes = 1 + (size > 1 ? data[1] % 97 : 0);
    LoadOptions one = options;
    one.threads = 1;
    if (Outcome(input, options) != Outcome(input, one)) __builtin_trap();
  }
  try {
    Trace trace = LoadTraceFromMemory(input, "fuzz.json", options);
    LoadWarnings(trace);
    TraceModel model = BuildModel(trace);
    Profile profile = Aggregate(trace, model, BuildLanes(trace, ConvertBuildOptions(model, options.threads)));
    if (!ValidateProfile(profile).empty()) __builtin_trap();
    Gzip(EncodeProfile(profile));
    WriteFolded(profile, "", (mode & 32) ? FoldedRoot::kRank : FoldedRoot::kThread);
    WritePstats(profile);
    if (options.details) {
      Analysis a = Analyze(trace, model, AnalysisOptions{(mode & 16) != 0, options.threads});
      RenderText(a, ReportOptions{});
      RenderJson(a, ReportOptions{0, ""});
      RenderCsv(a, ReportOptions{5, "steps"});
      RenderHtml(a, ReportOptions{5, ""});
      RankSummary rank = SummarizeRank(trace, model, a);
      RanksAnalysis ranks = AnalyzeAcrossRanks({rank, rank});
      RenderRanksText(ranks, ReportOptions{});
      RenderRanksJson(ranks, ReportOptions{0, ""});
    }
  } catch (const Error&) {
  }
  return 0;
}
