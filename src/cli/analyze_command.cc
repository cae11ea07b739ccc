#include <sys/stat.h>

#include <fstream>
#include <ostream>

#include <CLI/CLI.hpp>
#include "cli/options.h"

#include "cli/commands.h"
#include "cli/progress.h"
#include "torch2pprof/analysis.h"
#include "torch2pprof/error.h"
#include "torch2pprof/output.h"
#include "torch2pprof/ranks.h"
#include "torch2pprof/report.h"
#include "torch2pprof/torch2pprof.h"

namespace torch2pprof::cli {

namespace {

// Files as given; a directory stands for what InputsOfDirectory finds in it.
DirectoryInputs ExpandInputs(const std::vector<std::string>& inputs) {
  DirectoryInputs out;
  for (const std::string& in : inputs) {
    struct stat st;
    if (in != "-" && ::stat(in.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      DirectoryInputs dir = InputsOfDirectory(in);
      out.inputs.insert(out.inputs.end(), dir.inputs.begin(), dir.inputs.end());
      out.names.insert(out.names.end(), dir.names.begin(), dir.names.end());
      out.notes.insert(out.notes.end(), dir.notes.begin(), dir.notes.end());
    } else {
      out.inputs.push_back(in);
      out.names.push_back("");
    }
  }
  return out;
}

// -top limits what people read; JSON and CSV keep every row unless it is given.
ReportOptions Report(const AnalyzeArgs& args) {
  ReportOptions report;
  report.top = args.top < 0 ? kDefaultTop : args.top;
  report.rows = args.top < 0 ? 0 : args.top;
  report.table = args.table;  // "": the report's default
  return report;
}

int RunAcrossRanks(const AnalyzeArgs& args, const DirectoryInputs& expanded, std::ostream& out, std::ostream& err) {
  const std::vector<std::string>& inputs = expanded.inputs;
  ReportOptions report = Report(args);
  if (args.format == "csv") CheckCsvTable(report.table, RanksCsvTables(), "with several ranks, ");
  if (args.group_by != "name") throw Error(Error::Kind::kUsage, "", -1, "--group-by goes with one trace");
  if (!args.timeline.empty()) throw Error(Error::Kind::kUsage, "", -1, "--timeline goes with one trace");
  AnalyzeRanksOptions options;
  options.inputs = inputs;
  options.names = expanded.names;
  options.threads = args.threads;
  options.strict = args.in.strict;
  options.allow_truncated = args.in.allow_truncated;
  options.threshold = args.straggler_threshold / 100.0;
  options.flame_graph = args.format == "html";
  AnalyzeRanksResult result = WithProgress(options, args.in, [](const auto& o) { return AnalyzeRanks(o); });
  result.warnings.insert(result.warnings.begin(), expanded.notes.begin(), expanded.notes.end());
  PrintWarnings(result.warnings, args.in, err);
  AnalyzeResult ranks;  // a report over ranks, as over rank summaries
  ranks.kind = InputKind::kSummary;
  ranks.ranks = std::move(result.analysis);
  WriteReport(inputs[0], [&] { out << RenderReport(ranks, args.format, report); });
  if (args.stats) PrintStats(result.stages, err);
  return kExitOk;
}

}  // namespace

CLI::App* AddAnalyze(CLI::App& app, AnalyzeArgs* args) {
  CLI::App* an = app.add_subcommand("analyze", "Report steps, operators, kernels, GPU use, memory and advice");
  an->add_option("inputs", args->inputs,
                 "The input ('-' reads standard input), or one per rank, or a directory of them: one report over all "
                 "ranks. " +
                     Reads("analyze"));
  an->add_option("--top", args->top,
                 "Rows per table (default " + std::to_string(kDefaultTop) +
                     "; 0: all); in HTML, the rows shown before 'Show all'")
      ->check(WholeNumber(0, 1000000000));
  an->add_option("--format", args->format,
                 "text (default), json, csv or html (one self-contained page with charts; opens offline)")
      ->check(CLI::IsMember({"text", "json", "csv", "html"}));
  an->add_option("--table", args->table,
                 "With --format csv: " + Joined(CsvTables()) + " (default " + DefaultCsvTable() +
                     "); several ranks: " + Joined(RanksCsvTables()) + " (default " + DefaultRanksCsvTable() +
                     "); a memory snapshot: " + Joined(SnapshotCsvTables()) + " (default " + DefaultSnapshotCsvTable() +
                     ")");
  an->add_option("--group-by", args->group_by, "Operators by name (default) or by name and input shape")
      ->check(CLI::IsMember({"name", "shape"}));
  an->add_option("--threads", args->threads, "Worker threads (default: all cores)")->check(WholeNumber(0, 1024));
  an->add_option("--timeline", args->timeline,
                 "Also write the trace's events with each step's critical path (a lane of its own, and flows between "
                 "the lanes it crosses) to this file, as a Chrome trace for Perfetto UI or chrome://tracing");
  an->add_flag("--force", args->force, "Replace an existing --timeline file that is no torch2pprof output");
  an->add_flag("--stats", args->stats, "Print each stage's wall and CPU time on stderr");
  an->add_option("--straggler-threshold", args->straggler_threshold,
                 "Several ranks: the others wait for a straggler more than this many percent of the median step, "
                 "and a slow rank's median step or compute time exceeds the median of ranks by more (default " +
                     std::to_string(args->straggler_threshold) + ")")
      ->check(WholeNumber(0, 1000));
  AddInputOptions(an, &args->in);
  AddSnapshotOptions(an, &args->in);
  std::string findings, rank_findings;
  for (std::string_view id : kFindingIds) findings += (findings.empty() ? "" : ", ") + std::string(id);
  for (std::string_view id : kRankFindingIds) rank_findings += (rank_findings.empty() ? "" : ", ") + std::string(id);
  an->footer(
      "Times follow torch-tb-profiler's definitions (docs/tb-semantics.md). JSON times are microseconds exact to the "
      "ns.\n"
      "Findings (JSON's recommendations[].id): " +
      findings + "; several ranks: " + rank_findings +
      ".\n"
      "Examples: torch2pprof analyze -top 50 trace.json.gz\n"
      "          torch2pprof analyze --format csv --table kernels trace.json.gz > kernels.csv\n"
      "          torch2pprof analyze --format html trace.json.gz > report.html\n"
      "          torch2pprof analyze rank*.pt.trace.json.gz      (one report over all ranks; also a directory)");
  return an;
}

int RunAnalyze(const AnalyzeArgs& args, std::ostream& out, std::ostream& err) {
  if (args.inputs.empty()) WrongInputs("analyze", "at least one input", 0);
  if (args.format != "csv" && !args.table.empty()) {
    throw Error(Error::Kind::kUsage, "", -1, "--table goes with --format csv");
  }
  const DirectoryInputs expanded = ExpandInputs(args.inputs);
  const std::vector<std::string>& inputs = expanded.inputs;
  if (inputs.size() > 1) return RunAcrossRanks(args, expanded, out, err);
  AnalyzeOptions options;
  options.input = inputs[0];
  options.threads = args.threads;
  options.strict = args.in.strict;
  options.max_snapshot_items = static_cast<uint64_t>(args.in.max_snapshot_items);
  options.allow_truncated = args.in.allow_truncated;
  options.group_by_shape = args.group_by == "shape";
  options.flame_graph = args.format == "html";
  options.timeline_steps = args.format == "html" ? kHtmlTimelines : 0;
  options.timeline = args.timeline;
  options.force = args.force;
  options.remove_output_on_signal = !args.in.hosted;
  options.straggler_threshold = args.straggler_threshold / 100.0;
  // What the arguments ask of this kind of input, refused before the work starts.
  options.on_input_kind = [&](InputKind kind) {
    const ReportOptions report = Report(args);
    if (args.format == "csv") CheckReportTable(kind, report.table);
    // --group-by and --timeline read one trace's events.
    if (kind != InputKind::kTrace && args.group_by != "name") {
      throw Error(Error::Kind::kUsage, "", -1, "--group-by goes with one trace");
    }
    if (kind != InputKind::kTrace && !args.timeline.empty()) {
      throw Error(Error::Kind::kUsage, "", -1, "--timeline goes with a trace");
    }
  };
  AnalyzeResult result = WithProgress(options, args.in, [](const auto& o) { return Analyze(o); });
  result.warnings.insert(result.warnings.begin(), expanded.notes.begin(), expanded.notes.end());
  PrintWarnings(result.warnings, args.in, err);
  const ReportOptions report = Report(args);
  WriteReport(inputs[0], [&] { out << RenderReport(result, args.format, report); });
  if (args.stats) PrintStats(result.stages, err);
  return kExitOk;
}

}  // namespace torch2pprof::cli
