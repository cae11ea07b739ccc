// What analyze finds over several ranks (AnalyzeRanks in torch2pprof.h), as plain numbers
// in nanoseconds: each rank's summary, stragglers, slow ranks, collectives, step alignment.
#pragma once

#include <cstdint>
#include <iterator>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "torch2pprof/analysis.h"

namespace torch2pprof {

// A collective by name: host-side nccl:/gloo: operations (kind "host") or
// communication kernels (kind "kernel").
struct CollectiveStat {
  std::string name;
  std::string kind;
  uint64_t calls = 0;
  int64_t total_ns = 0;
};

// One call of a collective, as a rank ran it in its analysed steps. Calls are matched
// across ranks by their collective (kind and name) and their position among the rank's
// calls of it, in time order: the k-th gloo:all_reduce of every rank is one instance.
struct CollectiveCall {
  uint32_t collective = 0;  // index into RankSummary::collectives
  int64_t start_ns = 0, dur_ns = 0;
};

inline constexpr size_t kRankProfileNodes = 1000;
struct RankSummary {
  std::string file;
  // The rank's profile as a flame graph, device time and host work, at most
  // kRankProfileNodes frames (summarize writes it; AnalyzeRanksOptions::flame_graph makes it
  // from a trace).
  FlameGraph flame;
  int64_t rank = -1, world_size = -1;  // distributedInfo; -1 when absent
  std::string backend;
  std::vector<StepRow> steps;  // the analysed steps and their breakdown
  int64_t step_median_ns = 0, step_min_ns = 0, step_max_ns = 0;
  StepRow mean_step;  // each part's mean over the steps (name "mean")
  // The device's time as HTA's temporal breakdown and comm/compute overlap see it,
  // over the rank's device work (kernels, memcpy, memset on every device and stream):
  int64_t gpu_span_ns = 0;        // first start to last end
  int64_t gpu_idle_ns = 0;        // the span less the union of all device work
  int64_t compute_ns = 0;         // union of kernels that are not communication
  int64_t non_compute_ns = 0;     // union of all device work less compute: communication, memcpy, memset
  int64_t comm_kernel_ns = 0;     // union of communication kernels
  int64_t overlap_ns = 0;         // of comm_kernel_ns, the time some compute kernel also ran
  int64_t communication_ns = 0;   // the step breakdown's communication part over all steps
  int64_t gpu_window_ns = 0;      // the steps' span summed over devices
  double gpu_utilization = 0;     // GpuUtilization of the rank's devices
  int64_t memory_peak_bytes = 0;  // highest device peak (cpu when there is no device)
  std::string memory_device;
  std::vector<CollectiveStat> collectives;  // by kind, then name
  std::vector<CollectiveCall> calls;        // in the analysed steps, in time order
  // The trace's times plus this are wall-clock ns since the epoch, where the trace has a
  // wall clock (baseTimeNanoseconds, or epoch timestamps): arrivals compare across ranks.
  bool wall_clock = false;
  int64_t wall_clock_offset_ns = 0;
  // The communication kernels that record their message (NCCL's): the bytes they moved as
  // nccl-tests' bus bandwidth counts them (message bytes x calls x its bus factor) and
  // their time; 0 where none records one (gloo).
  int64_t bus_bytes = 0, bus_time_ns = 0;
  // The rank's own largest finding with a saving (its what-if, a step): what the straggler
  // does with its extra time. "" where it has none.
  std::string top_finding;       // its id (kFindingIds): "sleep", "dataloader", ...
  std::string top_finding_code;  // where, its first code (cut at 256 bytes)
  int64_t top_finding_ns = 0;
};

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

// A rank whose median step or compute time is more than the threshold above the ranks'
// median (pipeline stages, uneven shards): not the straggler, which others wait for.
struct SlowRank {
  size_t rank = 0;                      // index into ranks
  std::string metric;                   // "step_time" (median step) or "compute" (compute kernel time)
  int64_t value_ns = 0, median_ns = 0;  // the rank's, and the median over ranks
  double excess = 0;                    // value / median - 1
  std::string part;                     // the step part most above the ranks' median ("kernel", ...)
  int64_t part_delta_ns = 0;            // by how much, per step
};

// A rank's time inside collectives split as torch-tb-profiler's distributed view split
// communication into synchronizing and transfer, for each instance matched on every
// rank. Where the ranks' clocks compare (RanksAnalysis::waits_from_arrivals), a rank
// waits from its arrival until the last rank arrives; else the shortest rank's time is
// transfer and each rank's time beyond it is waiting. The wait sits at the instance's
// start; times are of the union over the instances, so concurrent collectives' waits
// count once.
struct CollectiveWait {
  int64_t wait_ns = 0, transfer_ns = 0;  // per analysed step
  uint64_t instances = 0;                // matched on every rank
};

// The rank the others wait for: it arrives last at the collectives, so it waits least,
// while the others wait for it; its own step spends the difference elsewhere. In
// synchronous data parallelism every rank's step time is the same, so this, not step
// time, is how a late rank shows.
struct Straggler {
  size_t rank = 0;              // index into ranks
  std::vector<size_t> waiters;  // the ranks that wait for it, by index
  int64_t waited_ns = 0;        // the waiters' median wait beyond its own, per step
  std::string collective;       // where they wait most ("gloo:all_reduce")
  std::string part;             // its step part most above the other ranks' median
  int64_t part_delta_ns = 0;    // by how much, per step
};

// One number of the rank table over all ranks: what the text shows past a handful of
// ranks instead of a row per rank.
struct RankSpread {
  enum Unit { kNanoseconds, kBytes, kFraction };
  std::string key;      // the rank table's JSON name without its unit ("step_median", "wait")
  std::string heading;  // text
  Unit unit = kNanoseconds;
  double min = 0, median = 0, p90 = 0, max = 0;  // p90: the nearest-rank 90th percentile
  size_t min_rank = 0, max_rank = 0;             // indexes into ranks: the first with the extreme
};

// A finding across ranks: the straggler (RanksAnalysis::stragglers[index]), the link
// (communication), a slow rank (slow_ranks[index]; with index -1, `more` others). Its
// evidence; report.h's RankRecommendationText writes the sentence.
// A straggler's others wait, and a slow rank's median step exceeds the ranks' median, by
// more than this fraction of the median step (--straggler-threshold's default, 5%).
inline constexpr double kDefaultStragglerThreshold = 0.05;

enum class RankFinding : uint8_t { kStraggler, kCommunication, kSlowRank, kCount };
// Each one's id: the stable key of JSON and CSV, by RankFinding.
inline constexpr std::string_view kRankFindingIds[] = {"straggler", "communication", "slow_rank"};
static_assert(std::size(kRankFindingIds) == static_cast<size_t>(RankFinding::kCount));

struct RankRecommendation {
  RankFinding finding = RankFinding::kStraggler;
  std::string_view id() const { return kRankFindingIds[static_cast<size_t>(finding)]; }
  int64_t saving_ns = 0;  // per step at most, as Recommendation::saving_ns
  int64_t index = -1;     // straggler, slow_rank: its row
  uint64_t more = 0;      // slow_rank without a row: how many more ranks
  // communication, medians over the ranks: communication and step time per step, the
  // collectives' wait for other ranks (skew) and transfer (the link); bus bytes and time.
  int64_t comm_ns = 0, step_ns = 0, wait_ns = 0, transfer_ns = 0, bus_bytes = 0, bus_time_ns = 0;
  bool gloo = false, gpu = false;
};

struct RanksAnalysis {
  std::vector<RankSummary> ranks;    // by rank
  bool ranks_are_positions = false;  // RanksOrPositions replaced given ranks
  double threshold = kDefaultStragglerThreshold;
  int64_t median_step_ns = 0, median_compute_ns = 0;  // medians over ranks
  std::vector<CollectiveWait> waits;                  // by rank
  // Waits from arrival times: every rank's trace has a wall clock, and in every matched
  // instance the last rank arrived before any rank's call ended (a collective cannot end
  // before all arrive: clocks that say otherwise are skewed). Else from durations.
  bool waits_from_arrivals = false;
  std::vector<RankSpread> spreads;    // the rank table's numbers over the ranks
  std::vector<Straggler> stragglers;  // the rank the others wait for, by arrival, where there is one
  std::vector<SlowRank> slow_ranks;   // slower in step time or compute (pipeline, uneven shards), largest excess first
  std::vector<CollectiveRow> collectives;  // by spread (max - min), largest first
  std::vector<StepAlignment> steps;        // in step order
  // A row a rank costs n cells, so the two tables hold at most a few times what the ranks
  // gave (docs/reference.md, "Many ranks"): steps are aligned by name while that fits (the
  // ranks ran the same steps), else by position (the k-th analysed step of each, up to the
  // ranks' median count: on-demand tracing starts each rank at its own iteration); the
  // collectives with the largest spread are kept, the rest counted.
  bool steps_by_position = false;
  size_t collectives_left_out = 0;
  // What to change across the ranks, largest saving per step first: the straggler,
  // communication and what limits it, ranks whose steps are slower (docs/reference.md).
  std::vector<RankRecommendation> recommendations;
  // The ranks' flame graphs under one root, a frame "rank N" each (those with one).
  FlameGraph flame;
};

}  // namespace torch2pprof
