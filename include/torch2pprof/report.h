// The report stage: renders an Analysis (analyze) or a Comparison (compare) for people (aligned
// text within 120 columns, markdown, HTML) and for scripts (JSON, CSV), times exact to the ns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "torch2pprof/analysis.h"
#include "torch2pprof/compare.h"
#include "torch2pprof/ranks.h"
#include "torch2pprof/snapshot.h"
#include "torch2pprof/torch2pprof.h"

namespace torch2pprof {

// Rows per table people read, where -top is not given.
inline constexpr int kDefaultTop = 20;

struct ReportOptions {
  int top = kDefaultTop;  // text, markdown and HTML: the rows shown per table (0: all)
  int rows = 0;           // JSON and CSV: the rows written per list (0: all; the CLI sets it from an explicit -top)
  std::string table;      // CSV: which table (see CsvTables(); "": the list's default)
};

std::string RenderText(const Analysis& analysis, const ReportOptions& options);
std::string RenderJson(const Analysis& analysis, const ReportOptions& options);
// Throws Error (kind kUsage) for an unknown table.
std::string RenderCsv(const Analysis& analysis, const ReportOptions& options);
const std::vector<std::string>& CsvTables();
const std::string& DefaultCsvTable();  // what an empty ReportOptions::table writes
// The one check of a --table name: Error (kUsage) unless `table` is "" (the default) or one of `tables`
// ("WHAT--table must be one of a, b, c (got 'x')"), read by the CLI before the work starts.
void CheckCsvTable(const std::string& table, const std::vector<std::string>& tables, const std::string& what);
// One self-contained HTML page (inline CSS, SVG charts and script; nothing fetched):
// the report's sections with charts; tables show options.top rows, the rest on demand.
// The timelines it draws: the slowest this many steps (AnalyzeOptions::timeline_steps).
inline constexpr size_t kHtmlTimelines = 5;
std::string RenderHtml(const Analysis& analysis, const ReportOptions& options);
// A finding's sentence, from its evidence and the analysis it came from: what holds the
// time, where, and the remedy that fits the trace (docs/reference.md, "Recommendations").
std::string RecommendationText(const Analysis& analysis, const Recommendation& finding);
// The findings' changes replayed together: what a step becomes and what remains ("" where
// no finding simulates a change). The text and HTML reports both print it.
std::string WhatIfTotalText(const Analysis& analysis);

// analyze over several ranks: the per-rank table, stragglers, collectives and step
// alignment; CSV writes one of RanksCsvTables() (collectives and step_alignment one row
// per rank).
std::string RenderRanksText(const RanksAnalysis& analysis, const ReportOptions& options);
std::string RenderRanksJson(const RanksAnalysis& analysis, const ReportOptions& options);
std::string RenderRanksCsv(const RanksAnalysis& analysis, const ReportOptions& options);
// One self-contained page, as RenderHtml: the straggler with a bar per rank (up to 16
// ranks), and every table, sortable.
std::string RenderRanksHtml(const RanksAnalysis& analysis, const ReportOptions& options);
// A finding across ranks as a sentence, from its evidence and the analysis's rows.
std::string RankRecommendationText(const RanksAnalysis& analysis, const RankRecommendation& finding);
const std::vector<std::string>& RanksCsvTables();
const std::string& DefaultRanksCsvTable();

// compare: text, markdown (a table per section, for $GITHUB_STEP_SUMMARY) or one JSON
// document; options.top limits the operator and kernel rows.
std::string RenderCompareText(const Comparison& comparison, const ReportOptions& options);
std::string RenderCompareMarkdown(const Comparison& comparison, const ReportOptions& options);
std::string RenderCompareJson(const Comparison& comparison, const ReportOptions& options);
// One offline page: the headline and verdict first, then the differential flame graph
// (Comparison::flame, where the comparison has one), then the tables.
std::string RenderCompareHtml(const Comparison& comparison, const ReportOptions& options);
// "step_time>+5%: +30.0% (45.8ms -> 59.6ms, significant)"
std::string DescribeRule(const RuleResult& result);
// A rule that crossed its threshold and did not fire (--noise-aware): why, and what would
// settle it (how many steps a run would tell such a change from this spread).
std::string DescribeHeld(const RuleResult& result);

// analyze's report of any kind of input (AnalyzeResult::kind picks the renderers above) in
// `format`: "text", "json", "csv" or "html".
std::string RenderReport(const AnalyzeResult& result, const std::string& format, const ReportOptions& options);
// compare's report of either kind (CompareRunsResult::kind) in "text", "json", "markdown"
// or "html"; and its --fail-on rules with whether any fired.
std::string RenderComparisonReport(const CompareRunsResult& result, const std::string& format,
                                   const ReportOptions& options);
const std::vector<RuleResult>& RulesOf(const CompareRunsResult& result, bool* regressed);
// Before the work: Error (kUsage) unless `table` is "" or one of the CSV tables of the
// kind's report ("for a memory snapshot, --table must be one of ...").
void CheckReportTable(InputKind kind, const std::string& table);

// Nanoseconds as exact decimal microseconds: 1712195495519695800 -> "1712195495519695.8".
std::string FormatMicros(int64_t ns);
// For people: "850ns", "12.3us", "4.56ms", "1.23s".
std::string FormatDuration(int64_t ns);
// For people: 12345 -> "12,345".
std::string FormatCount(uint64_t n);
// For people, in binary units as every output writes sizes: 1572864 -> "1.50 MiB".
std::string FormatBytes(int64_t bytes);

// analyze on a CUDA memory snapshot (AnalyzeSnapshot): devices, the peak, OOMs. CSV
// tables: SnapshotCsvTables(); HTML: one offline page with the timeline.
std::string RenderSnapshotText(const SnapshotAnalysis& analysis, const ReportOptions& options);
std::string RenderSnapshotJson(const SnapshotAnalysis& analysis, const ReportOptions& options);
std::string RenderSnapshotCsv(const SnapshotAnalysis& analysis, const ReportOptions& options);
std::string RenderSnapshotHtml(const SnapshotAnalysis& analysis, const ReportOptions& options);
const std::vector<std::string>& SnapshotCsvTables();
const std::string& DefaultSnapshotCsvTable();
// compare on two memory snapshots.
std::string RenderSnapshotCompareText(const SnapshotComparison& comparison, const ReportOptions& options);
std::string RenderSnapshotCompareMarkdown(const SnapshotComparison& comparison, const ReportOptions& options);
std::string RenderSnapshotCompareJson(const SnapshotComparison& comparison, const ReportOptions& options);
std::string RenderSnapshotCompareHtml(const SnapshotComparison& comparison, const ReportOptions& options);

}  // namespace torch2pprof
