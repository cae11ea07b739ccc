// analyze across ranks: each rank's trace reduced to a RankSummary as it streams by, then
// the ranks side by side (RanksAnalysis of analysis.h).
#pragma once

#include <cstdint>
#include <vector>

#include "torch2pprof/analysis.h"
#include "torch2pprof/ranks.h"
#include "torch2pprof/stages/trace.h"
#include "torch2pprof/stages/trace_model.h"

namespace torch2pprof {

// One rank's summary from its trace, model and analysis.
RankSummary SummarizeRank(const Trace& trace, const TraceModel& model, const Analysis& analysis);

// Which rank each input is: distributedInfo.rank, or, when one is missing or repeated,
// every input's position (so ranks always label inputs apart). *replaced: positions
// stood in for ranks some input did give.
std::vector<int64_t> RanksOrPositions(std::vector<int64_t> given, bool* replaced);

// The ranks side by side, ranks by RanksOrPositions. threshold: a straggler's median step
// (or compute) time exceeds the median over ranks by more than this fraction. flame: also
// the ranks' profiles under one root (RanksAnalysis::flame, the HTML's), a frame per rank.
RanksAnalysis AnalyzeAcrossRanks(std::vector<RankSummary> ranks, double threshold = kDefaultStragglerThreshold,
                                 bool flame = false);

}  // namespace torch2pprof
