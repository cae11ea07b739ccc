// libFuzzer target over the whole pipeline: the loader (both thread modes, strict
// and lenient, with and without details; ranges cut on workers against one thread), the lane builder, the aggregator,
// the pprof, folded and pstats writers, the analyzer with its renderers, ranks and compare; and the same bytes as
// convert's and analyze's other inputs, a profile to merge, a rank summary and a memory snapshot's pickle. Bad input
// must end in a torch2pprof::Error, never in a crash, a hang or a sanitizer report.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "analysis/analyzer.h"
#include "analysis/ranks.h"
#include "analysis/snapshot_analysis.h"
#include "convert/aggregator.h"
#include "convert/snapshot_profile.h"
#include "load/byte_source.h"
#include "load/folded_reader.h"
#include "load/input.h"
#include "load/pickle_reader.h"
#include "load/snapshot.h"
#include "load/summary_file.h"
#include "model/build.h"
#include "model/frame_names.h"
#include "model/lane_builder.h"
#include "torch2pprof/error.h"
#include "torch2pprof/output.h"
#include "torch2pprof/report.h"
#include "torch2pprof/stages/trace_loader.h"
#include "torch2pprof/stages/trace_model.h"

using namespace torch2pprof;

namespace {

// A load and its profile as one string, or the error: what must not depend on threads.
std::string Outcome(std::string_view input, const LoadOptions& options) {
  try {
    Trace trace = LoadTraceFromMemory(input, "fuzz.json", options);
    TraceModel model = BuildModel(trace);
    Executor one(1);
    std::string out =
        EncodeProfile(Aggregate(trace, model, BuildLanes(trace, ConvertBuildOptions(model)), AggregateOptions{}, one));
    for (const std::string& w : LoadWarnings(trace)) out += "\n" + w;
    return out + "\n" + std::to_string(trace.stats.events) + " " + std::to_string(trace.stats.json_bytes);
  } catch (const Error& e) {
    return std::string("error: ") + e.what();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  // The probe reads any bytes; what it hands on starts at the first byte.
  try {
    Input probed(input, "fuzz");
    char first = 0;
    if (probed.source().Read(&first, 1) == 1 && !input.empty() && static_cast<unsigned char>(input[0]) != 0x1f &&
        first != input[0]) {
      __builtin_trap();
    }
  } catch (const Error&) {
  }
  try {  // a profile that convert -o merges: read back, merged twice, written again
    Profile read = DecodeProfile("fuzz.pb.gz", input);
    AggregateOptions ranked;
    ranked.rank_labels = true;
    Aggregator merge(ranked);
    std::vector<int64_t> ranks = merge.AddProfile(read, "fuzz.pb.gz");
    for (int64_t r : merge.AddProfile(read, "fuzz.pb.gz")) ranks.push_back(r);
    for (size_t i = 0; i < ranks.size(); ++i) ranks[i] = static_cast<int64_t>(i);
    Profile merged = std::move(merge).Finish(ranks);
    if (!ValidateProfile(merged).empty()) __builtin_trap();
    EncodeProfile(merged);
  } catch (const Error&) {
  }
  try {  // folded stacks (torch's export_stacks), as convert reads and names them
    ByteSource source(input, "fuzz.folded");
    LoadOptions folded;
    folded.max_depth = 2 + (size > 2 ? data[2] % 64 : 0);
    Profile p = ReadFolded(source, folded);
    for (Frame& f : p.frames) f = MakeFrame(FrameSystemName(f.system_name));
    if (!ValidateProfile(p).empty()) __builtin_trap();
    EncodeProfile(p);
  } catch (const Error&) {
  }
  try {  // a rank summary that analyze reduces
    SummaryFile s = DecodeSummary("fuzz.summary.json", input);
    RanksAnalysis ranks = AnalyzeAcrossRanks({s.summary, s.summary, s.summary});
    ReportOptions all;
    all.top = 0;
    RenderRanksText(ranks, all);
    RenderRanksJson(ranks, all);
    if (EncodeSummary(DecodeSummary("again", EncodeSummary(s))) != EncodeSummary(s)) __builtin_trap();
  } catch (const Error&) {
  }
  try {  // a memory snapshot's pickle: read, then walked over a bounded number of nodes
    ByteSource source(input, "fuzz.pickle");
    PickleData d = ReadPickle(source);
    std::vector<PickleData::Node> todo = {d.root()};
    for (size_t visits = 0; !todo.empty() && visits < 100000; ++visits) {
      const PickleData::Node n = todo.back();
      todo.pop_back();
      // A node is a slot of the values, or a string's id (no slot).
      if (n & PickleData::kStringBit ? d.kind(n) != PickleData::Kind::kString : n >= d.size()) __builtin_trap();
      d.Str(n), d.Int(n), d.Float(n), d.Get(n, "frames");
      for (PickleData::Node c : d.Items(n)) todo.push_back(c);
    }
    // And as a snapshot, read from the values and as it streams in (entries, frames and
    // stacks taken on the way; a hostile stream may read differently there, never
    // unsafely); either profile must be one pprof can read.
    const MemorySnapshot snapshot = ReadSnapshot(d, "fuzz.pickle");
    try {
      ByteSource again(input, "fuzz.pickle");
      const MemorySnapshot streamed = ReadSnapshot(again, "fuzz.pickle");
      if (!ValidateProfile(SnapshotProfile(streamed, DevicePeaks(streamed), SnapshotProfileOptions{})).empty()) {
        __builtin_trap();
      }
    } catch (const Error&) {
    }
    const Profile p = SnapshotProfile(snapshot, DevicePeaks(snapshot), SnapshotProfileOptions{});
    if (!ValidateProfile(p).empty()) __builtin_trap();
    EncodeProfile(p);
    const SnapshotAnalysis analysis = AnalyzeMemorySnapshot(snapshot);
    RenderSnapshotText(analysis, ReportOptions{});
    RenderSnapshotJson(analysis, ReportOptions{});
  } catch (const Error&) {
  }
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
    Executor ex(options.threads);
    Trace trace = LoadTraceFromMemory(input, "fuzz.json", options);
    LoadWarnings(trace);
    TraceModel model = BuildModel(trace, ex);
    Profile profile =
        Aggregate(trace, model, BuildLanes(trace, ConvertBuildOptions(model), ex), AggregateOptions{}, ex);
    if (!ValidateProfile(profile).empty()) __builtin_trap();
    Gzip(EncodeProfile(profile));
    WriteFolded(profile, "", (mode & 32) ? FoldedRoot::kRank : FoldedRoot::kThread);
    WritePstats(profile);
    if (options.details) {
      Analysis a = Analyze(trace, model, AnalysisOptions{(mode & 16) != 0}, ex);
      ReportOptions all;
      all.top = 0;
      ReportOptions five;
      five.top = 5;
      five.rows = 5;
      RenderText(a, ReportOptions{});
      RenderJson(a, all);
      RenderHtml(a, five);
      for (const std::string& table : CsvTables()) {
        five.table = table;
        RenderCsv(a, five);
      }
      RankSummary rank = SummarizeRank(trace, model, a);
      RanksAnalysis ranks = AnalyzeAcrossRanks({rank, rank});
      RenderRanksText(ranks, ReportOptions{});
      RenderRanksJson(ranks, all);
      Comparison same = Compare(a, a);
      RenderCompareText(same, ReportOptions{});
      RenderCompareMarkdown(same, ReportOptions{});
    }
  } catch (const Error&) {
  }
  return 0;
}
