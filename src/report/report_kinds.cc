// analyze's report for each kind of input, in one table: its renderer per format, its CSV
// tables and the words its --table error starts with. The CLI and the Python module look
// a result up here and branch on no kind.
#include <string>

#include "torch2pprof/error.h"
#include "torch2pprof/input.h"
#include "torch2pprof/report.h"

namespace torch2pprof {
namespace {

using Render = std::string (*)(const AnalyzeResult&, const ReportOptions&);

struct KindReport {
  InputKind kind;
  const std::vector<std::string>& (*tables)();
  Render text, json, csv, html;
};

// The --table error's start: "for a memory snapshot, " (a trace's says nothing).
std::string ContextOf(InputKind kind) {
  return kind == InputKind::kTrace ? "" : std::string("for ") + InputKindName(kind) + ", ";
}

// A renderer of one part of a result (its field), as a renderer of the result.
template <typename Result, auto Field>
struct Part {
  template <auto Render>
  static std::string Of(const Result& r, const ReportOptions& o) {
    return Render(r.*Field, o);
  }
};
using OfTrace = Part<AnalyzeResult, &AnalyzeResult::analysis>;
using OfSnapshot = Part<AnalyzeResult, &AnalyzeResult::snapshot>;
using OfRanks = Part<AnalyzeResult, &AnalyzeResult::ranks>;
using OfRuns = Part<CompareRunsResult, &CompareRunsResult::comparison>;
using OfSnapshots = Part<CompareRunsResult, &CompareRunsResult::snapshots>;

const KindReport kKindReports[] = {
    {InputKind::kTrace, CsvTables, OfTrace::Of<RenderText>, OfTrace::Of<RenderJson>, OfTrace::Of<RenderCsv>,
     OfTrace::Of<RenderHtml>},
    {InputKind::kSnapshot, SnapshotCsvTables, OfSnapshot::Of<RenderSnapshotText>, OfSnapshot::Of<RenderSnapshotJson>,
     OfSnapshot::Of<RenderSnapshotCsv>, OfSnapshot::Of<RenderSnapshotHtml>},
    // One summary is a report over its one rank, as several are over theirs.
    {InputKind::kSummary, RanksCsvTables, OfRanks::Of<RenderRanksText>, OfRanks::Of<RenderRanksJson>,
     OfRanks::Of<RenderRanksCsv>, OfRanks::Of<RenderRanksHtml>},
};

const KindReport& ReportOf(InputKind kind) {
  for (const KindReport& k : kKindReports) {
    if (k.kind == kind) return k;
  }
  throw Error(Error::Kind::kUsage, "", -1, std::string("analyze writes no report of ") + InputKindName(kind));
}

Render ByFormat(const KindReport& k, const std::string& format) {
  if (format == "json") return k.json;
  if (format == "csv") return k.csv;
  if (format == "html") return k.html;
  if (format == "text" || format.empty()) return k.text;
  throw Error(Error::Kind::kUsage, "", -1, "--format must be one of text, json, csv, html (got '" + format + "')");
}

// compare's: a row per kind of input it compares.
using RenderComparison = std::string (*)(const CompareRunsResult&, const ReportOptions&);
struct KindComparison {
  InputKind kind;
  RenderComparison text, json, markdown, html;
};

const KindComparison kKindComparisons[] = {
    {InputKind::kTrace, OfRuns::Of<RenderCompareText>, OfRuns::Of<RenderCompareJson>, OfRuns::Of<RenderCompareMarkdown>,
     OfRuns::Of<RenderCompareHtml>},
    {InputKind::kSnapshot, OfSnapshots::Of<RenderSnapshotCompareText>, OfSnapshots::Of<RenderSnapshotCompareJson>,
     OfSnapshots::Of<RenderSnapshotCompareMarkdown>, OfSnapshots::Of<RenderSnapshotCompareHtml>},
};

}  // namespace

std::string RenderComparisonReport(const CompareRunsResult& result, const std::string& format,
                                   const ReportOptions& options) {
  for (const KindComparison& k : kKindComparisons) {
    if (k.kind != result.kind) continue;
    if (format == "json") return k.json(result, options);
    if (format == "markdown") return k.markdown(result, options);
    if (format == "html") return k.html(result, options);
    if (format == "text" || format.empty()) return k.text(result, options);
    throw Error(Error::Kind::kUsage, "", -1,
                "--format must be one of text, json, markdown, html (got '" + format + "')");
  }
  throw Error(Error::Kind::kUsage, "", -1, std::string("compare writes no report of ") + InputKindName(result.kind));
}

const std::vector<RuleResult>& RulesOf(const CompareRunsResult& result, bool* regressed) {
  const bool snapshots = result.kind == InputKind::kSnapshot;
  *regressed = snapshots ? result.snapshots.regressed : result.comparison.regressed;
  return snapshots ? result.snapshots.rules : result.comparison.rules;
}

void CheckReportTable(InputKind kind, const std::string& table) {
  const KindReport& k = ReportOf(kind);
  CheckCsvTable(table, k.tables(), ContextOf(kind));
}

std::string RenderReport(const AnalyzeResult& result, const std::string& format, const ReportOptions& options) {
  return ByFormat(ReportOf(result.kind), format)(result, options);
}

}  // namespace torch2pprof
