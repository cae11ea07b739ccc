// analyze's report for each kind of input, in one table: its renderer per format, its CSV
// tables and the words its --table error starts with. The CLI and the Python module look
// a result up here and branch on no kind.
#include <string>

#include "torch2pprof/error.h"
#include "torch2pprof/report.h"

namespace torch2pprof {
namespace {

using Render = std::string (*)(const AnalyzeResult&, const ReportOptions&);

struct KindReport {
  InputKind kind;
  const char* context;  // the --table error's start
  const std::vector<std::string>& (*tables)();
  Render text, json, csv, html;
};

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
    {InputKind::kTrace, "", CsvTables, OfTrace<RenderText>, OfTrace<RenderJson>, OfTrace<RenderCsv>,
     OfTrace<RenderHtml>},
    {InputKind::kSnapshot, "for a memory snapshot, ", SnapshotCsvTables, OfSnapshot<RenderSnapshotText>,
     OfSnapshot<RenderSnapshotJson>, OfSnapshot<RenderSnapshotCsv>, OfSnapshot<RenderSnapshotHtml>},
    // One summary is a report over its one rank, as several are over theirs.
    {InputKind::kSummary, "for a rank summary, ", RanksCsvTables, OfRanks<RenderRanksText>, OfRanks<RenderRanksJson>,
     OfRanks<RenderRanksCsv>, OfRanks<RenderRanksHtml>},
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

}  // namespace

void CheckReportTable(InputKind kind, const std::string& table) {
  const KindReport& k = ReportOf(kind);
  CheckCsvTable(table, k.tables(), k.context);
}

std::string RenderReport(const AnalyzeResult& result, const std::string& format, const ReportOptions& options) {
  return ByFormat(ReportOf(result.kind), format)(result, options);
}

}  // namespace torch2pprof
