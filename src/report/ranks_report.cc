// analyze over several ranks: the per-rank table, stragglers, collectives and step
// alignment, each described once (table.h) and written as text, JSON and CSV.
#include "base/utf8.h"
#include "report/analysis_tables.h"
#include "report/ranks_tables.h"
#include "torch2pprof/error.h"
#include "torch2pprof/report.h"

namespace torch2pprof {

using namespace report;

namespace {

// Collectives and step alignment in CSV: one row per (row, rank), so that any number of
// ranks fits the same columns.
std::string LongCsv(const RanksAnalysis& a, const std::string& table, int top) {
  std::string out;
  if (table == "collectives") {
    out = CsvLine({"name", "kind", "rank", "calls", "total_us"});
    for (size_t k = 0; k < Limit(a.collectives.size(), top); ++k) {
      const CollectiveRow& c = a.collectives[k];
      for (size_t i = 0; i < a.ranks.size(); ++i) {
        out += CsvText(c.name) + "," +
               CsvLine({c.kind, RankName(a, i), std::to_string(c.calls[i]), FormatMicros(c.total_ns[i])});
      }
    }
  } else {
    out = CsvLine({"name", "rank", "total_us"});
    for (size_t k = 0; k < Limit(a.steps.size(), top); ++k) {
      const StepAlignment& s = a.steps[k];
      for (size_t i = 0; i < a.ranks.size(); ++i) {
        if (s.total_ns[i] >= 0) out += CsvText(s.name) + "," + CsvLine({RankName(a, i), FormatMicros(s.total_ns[i])});
      }
    }
  }
  return out;
}

const CsvTable<RanksAnalysis> kRanksCsvTables[] = {
    {"ranks", [](const RanksAnalysis& a, int rows) { return WriteCsv(RanksTable(a), rows); }, kDefault},
    {"spreads", [](const RanksAnalysis& a, int rows) { return WriteCsv(SpreadTable(a), rows); }},
    {"stragglers", [](const RanksAnalysis& a, int rows) { return WriteCsv(StragglersTable(a), rows); }},
    {"slow_ranks", [](const RanksAnalysis& a, int rows) { return WriteCsv(SlowRanksTable(a), rows); }},
    {"collectives", [](const RanksAnalysis& a, int rows) { return LongCsv(a, "collectives", rows); }},
    {"step_alignment", [](const RanksAnalysis& a, int rows) { return LongCsv(a, "step_alignment", rows); }},
};

}  // namespace

const std::vector<std::string>& RanksCsvTables() {
  static const std::vector<std::string> tables = CsvNames(kRanksCsvTables);
  return tables;
}

const std::string& DefaultRanksCsvTable() {
  static const std::string table = DefaultName(kRanksCsvTables);
  return table;
}

std::string RenderRanksText(const RanksAnalysis& a, const ReportOptions& o) {
  std::string out = "torch2pprof analyze: " + std::to_string(a.ranks.size()) + " ranks";
  if (!a.ranks.empty() && a.ranks[0].world_size > 0)
    out += " (world size " + std::to_string(a.ranks[0].world_size) + ")";
  out += "\n";
  const bool many = a.ranks.size() > kManyRanks;
  for (size_t i = 0; i < a.ranks.size(); ++i) {
    if (many && i == 3) out += "  ...\n";
    if (many && i >= 3 && i + 3 < a.ranks.size()) continue;
    const RankSummary& r = a.ranks[i];
    out += "  rank " + std::to_string(r.rank) + ": " + FitLeft(VisibleText(r.file), kWidth - 12) + "\n";
  }
  out += Section("Recommendations (per step, largest possible saving first)");
  if (a.recommendations.empty()) {
    out += "(none: nothing crossed a threshold)\n";
  } else {
    for (const RankRecommendation& r : a.recommendations) {
      out += Wrap((r.saving_ns > 0 ? "[up to " + FormatDuration(r.saving_ns) + " a step] " : std::string()) +
                      VisibleText(RankRecommendationText(a, r)),
                  "- ", "  ");
    }
  }
  if (many) {
    out += Section("Ranks (" + std::to_string(a.ranks.size()) +
                   " ranks, per step unless marked; every rank's row: --format json or csv)");
    out += WriteText(SpreadTable(a), 0);
  } else {
    out += Section("Ranks (per step; GPU util, compute, idle and overlap over the whole trace, as HTA defines them)");
    out += WriteText(RanksTable(a), 0);
  }
  out += Wrap(WaitNote(a), "", " ");
  const std::string pct = Printf("%.0f", 100 * a.threshold) + "%";
  out += Section("Straggler (the rank the others wait for in collectives)");
  if (!a.stragglers.empty()) {
    for (const Straggler& l : a.stragglers) out += LateSentence(a, l, ";\n  ") + "\n";
    out += WriteText(StragglersTable(a), 0);
  } else {
    out += NoLateRank(a) + "\n";
  }
  out += Section("Slow ranks (median step or compute time more than " + pct + " above the median of ranks)");
  if (a.slow_ranks.empty()) {
    out += NoSlowRank(a) + "\n";
  } else {
    out += WriteText(SlowRanksTable(a), o.top);
    const size_t shown = Limit(a.slow_ranks.size(), o.top);
    if (shown < a.slow_ranks.size()) {
      out += "(" + std::to_string(a.slow_ranks.size() - shown) + " more; -top 0 shows all)\n";
    }
  }
  out += Section("Collectives (time per rank; the rank with least time usually arrived last)");
  out += a.collectives.empty() ? "(no nccl:/gloo: collectives or communication kernels)\n"
                               : WriteText(CollectivesTable(a), o.top);
  if (!CollectivesNote(a).empty()) out += Wrap(CollectivesNote(a), "", " ");
  out += Section("Step alignment (step N on every rank)");
  if (!AlignmentNote(a).empty()) out += Wrap(AlignmentNote(a), "", " ");
  out += a.steps.empty() ? "(no steps)\n" : WriteText(AlignmentTable(a), o.top);
  return VisibleLines(out);  // the safety net: names were made visible where they were written
}

std::string RenderRanksJson(const RanksAnalysis& a, const ReportOptions& o) {
  Json j;
  j.Open('{');
  j.Key("threshold");
  j.Raw(Printf("%.6g", a.threshold));
  j.FieldMicros("median_step_us", a.median_step_ns);
  j.FieldMicros("median_compute_us", a.median_compute_ns);
  j.Key("waits_from");
  j.String(a.waits_from_arrivals ? "arrivals" : "durations");
  WriteJson(j, RanksTable(a), o.rows);
  WriteJson(j, SpreadTable(a), o.rows);
  WriteJson(j, StragglersTable(a), o.rows);
  WriteJson(j, SlowRanksTable(a), o.rows);
  WriteJson(j, CollectivesTable(a), o.rows);
  j.FieldInt("collectives_left_out", static_cast<int64_t>(a.collectives_left_out));
  WriteJson(j, AlignmentTable(a), o.rows);
  j.Key("step_alignment_by");
  j.String(a.steps_by_position ? "position" : "name");
  WriteJson(j, RanksRecommendationsTable(a), o.rows);
  j.Close('}');
  return j.out + "\n";
}

std::string RenderRanksCsv(const RanksAnalysis& a, const ReportOptions& o) {
  return WriteCsvTable(kRanksCsvTables, a, o, "with several ranks, ");
}

}  // namespace torch2pprof
