// analyze over several ranks: its tables, each described once (table.h), written as
// text, JSON and CSV (ranks_report.cc) and HTML (html_report.cc).
#pragma once

#include <string>
#include <vector>

#include "report/table.h"
#include "torch2pprof/analysis.h"
#include "torch2pprof/ranks.h"

namespace torch2pprof::report {

// Past this many ranks the text shows each number's spread over the ranks, not a row per
// rank (JSON and CSV keep every rank), and the HTML page draws no bar per rank.
constexpr size_t kManyRanks = 16;

std::string RankName(const RanksAnalysis& a, size_t i);
// Ranks by index, as their numbers: "0 1 3".
std::string RankList(const RanksAnalysis& a, const std::vector<size_t>& ranks);
// "rank 2 arrives last: ranks 0 1 3 wait 20.0ms per step for it in gloo:all_reduce",
// then `joint` and "its step spends other +20.0ms per step above the other ranks'
// median" where the part is known.
std::string LateSentence(const RanksAnalysis& a, const Straggler& l, const std::string& joint);

// What wait means in this analysis: from arrivals on comparable clocks, or durations.
std::string WaitNote(const RanksAnalysis& a);
// What the report says where there is no straggler, and no slow rank.
std::string NoLateRank(const RanksAnalysis& a);
std::string NoSlowRank(const RanksAnalysis& a);
// What the collectives and step alignment tables leave out or align by position, in one
// sentence each; empty when they hold every row by name.
std::string CollectivesNote(const RanksAnalysis& a);
std::string AlignmentNote(const RanksAnalysis& a);

DataTable<RankSummary> RanksTable(const RanksAnalysis& a);
DataTable<SlowRank> SlowRanksTable(const RanksAnalysis& a);
// Per step (saving_us: per step).
DataTable<RankRecommendation> RanksRecommendationsTable(const RanksAnalysis& a);
DataTable<Straggler> StragglersTable(const RanksAnalysis& a);
DataTable<RankSpread> SpreadTable(const RanksAnalysis& a);
DataTable<CollectiveRow> CollectivesTable(const RanksAnalysis& a);
DataTable<StepAlignment> AlignmentTable(const RanksAnalysis& a);

}  // namespace torch2pprof::report
