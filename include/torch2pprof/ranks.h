// analyze across ranks: each rank's trace reduced to a RankSummary as it streams by,
// then the ranks side by side — stragglers, collectives, step alignment — as plain numbers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "torch2pprof/analyzer.h"
#include "torch2pprof/trace.h"
#include "torch2pprof/trace_model.h"

namespace torch2pprof {

// A collective by name: host-side nccl:/gloo: operations (kind "host") or
// communication kernels (kind "kernel").
struct CollectiveStat {
  std::string name;
  std::string kind;
  uint64_t calls = 0;
  int64_t total_ns = 0;
};

struct RankSummary {
  std::string file;
  int64_t rank = -1, world_size = -1;  // distributedInfo; -1 when absent
  std::string backend;
  std::vector<StepRow> steps;  // the analysed steps and their breakdown
  int64_t step_median_ns = 0, step_min_ns = 0, step_max_ns = 0;
  StepRow mean_step;  // each part's mean over the steps (name "mean")
  // The device's time as HTA's temporal breakdown and comm/compute overlap see it,
  // over the rank's device work (kernels, memcpy, memset on every device and stream):
  int64_t gpu_span_ns = 0;       // first start to last end
  int64_t gpu_idle_ns = 0;       // the span less the union of all device work
  int64_t compute_ns = 0;        // union of kernels that are not communication
  int64_t non_compute_ns = 0;    // union of all device work less compute: communication, memcpy, memset
  int64_t comm_kernel_ns = 0;    // union of communication kernels
  int64_t overlap_ns = 0;        // of comm_kernel_ns, the time some compute kernel also ran
  int64_t communication_ns = 0;  // the step breakdown's communication part over all steps
  int64_t gpu_window_ns = 0, gpu_window_kernel_ns = 0;  // summed over devices (analyze's utilization)
  int64_t memory_peak_bytes = 0;                        // highest device peak (cpu when there is no device)
  std::string memory_device;
  std::vector<CollectiveStat> collectives;  // by kind, then name
};

// One rank's summary from its trace, model and analysis.
RankSummary SummarizeRank(const Trace& trace, const TraceModel& model, const Analysis& analysis);

struct CollectiveRow {
  std::string name, kind;
  std::vector<uint64_t> calls;        // per rank, in RanksAnalysis::ranks order
  std::vector<int64_t> total_ns;      // per rank
  int64_t min_ns = 0, max_ns = 0;     // of total_ns
  size_t min_rank = 0, max_rank = 0;  // indexes into ranks: least time (usually the last to arrive) and most
};

// Step N on every rank that has it.
struct StepAlignment {
  std::string name;
  std::vector<int64_t> total_ns;    // per rank; -1 where the rank has no such step
  size_t slowest = 0, fastest = 0;  // indexes into ranks
  int64_t spread_ns = 0;            // slowest less fastest
};

struct Straggler {
  size_t rank = 0;                      // index into ranks
  std::string metric;                   // "step_time" (median step) or "compute" (compute kernel time)
  int64_t value_ns = 0, median_ns = 0;  // the rank's, and the median over ranks
  double excess = 0;                    // value / median - 1
  std::string part;                     // the step part most above the ranks' median ("kernel", ...)
  int64_t part_delta_ns = 0;            // by how much, per step
};

struct RanksAnalysis {
  std::vector<RankSummary> ranks;    // by rank
  bool ranks_are_positions = false;  // RanksOrPositions replaced given ranks
  double threshold = 0.05;
  int64_t median_step_ns = 0, median_compute_ns = 0;  // medians over ranks
  std::vector<Straggler> stragglers;
  std::vector<CollectiveRow> collectives;  // by spread (max - min), largest first
  std::vector<StepAlignment> steps;        // in step order
};

// Which rank each input is: distributedInfo.rank, or, when one is missing or repeated,
// every input's position (so ranks always label inputs apart). *replaced: positions
// stood in for ranks some input did give.
std::vector<int64_t> RanksOrPositions(std::vector<int64_t> given, bool* replaced);

// Medians over an even count are the lower of the two middle values, so every number
// is one some rank measured.
int64_t Median(std::vector<int64_t> v);

// The ranks side by side, ranks by RanksOrPositions. threshold: a straggler's median step
// (or compute) time exceeds the median over ranks by more than this fraction.
RanksAnalysis AnalyzeAcrossRanks(std::vector<RankSummary> ranks, double threshold = 0.05);

}  // namespace torch2pprof
