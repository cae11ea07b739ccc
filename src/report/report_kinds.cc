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

template <std::string (*F)(const Analysis&, const ReportOptions&)>
std::string OfTrace(const AnalyzeResult& r, const ReportOptions& o) {
  return F(r.analysis, o);
}
template <std::string (*F)(const SnapshotAnalysis&, const ReportOptions&)>
std::string OfSnapshot(const AnalyzeResult& r, const ReportOptions& o) {
  return F(r.snapshot, o);
}
template <std::string (*F)(const RanksAnalysis&, const ReportOptions&)>
std::string OfRanks(const AnalyzeResult& r, const ReportOptions& o) {
  return F(r.ranks, o);
}

const KindReport kKindReports[] = {
    {InputKind::kTrace, CsvTables, OfTrace<RenderText>, OfTrace<RenderJson>, OfTrace<RenderCsv>, OfTrace<RenderHtml>},
    {InputKind::kSnapshot, SnapshotCsvTables, OfSnapshot<RenderSnapshotText>, OfSnapshot<RenderSnapshotJson>,
     OfSnapshot<RenderSnapshotCsv>, OfSnapshot<RenderSnapshotHtml>},
    // One summary is a report over its one rank, as several are over theirs.
    {InputKind::kSummary, RanksCsvTables, OfRanks<RenderRanksText>, OfRanks<RenderRanksJson>, OfRanks<RenderRanksCsv>,
     OfRanks<RenderRanksHtml>},
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

template <std::string (*F)(const Comparison&, const ReportOptions&)>
std::string OfRuns(const CompareRunsResult& r, const ReportOptions& o) {
  return F(r.comparison, o);
}
template <std::string (*F)(const SnapshotComparison&, const ReportOptions&)>
std::string OfSnapshots(const CompareRunsResult& r, const ReportOptions& o) {
  return F(r.snapshots, o);
}

const KindComparison kKindComparisons[] = {
    {InputKind::kTrace, OfRuns<RenderCompareText>, OfRuns<RenderCompareJson>, OfRuns<RenderCompareMarkdown>,
     OfRuns<RenderCompareHtml>},
    {InputKind::kSnapshot, OfSnapshots<RenderSnapshotCompareText>, OfSnapshots<RenderSnapshotCompareJson>,
     OfSnapshots<RenderSnapshotCompareMarkdown>, OfSnapshots<RenderSnapshotCompareHtml>},
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
