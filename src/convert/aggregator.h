// convert's stage: folds every lane's pieces into one call tree and sums wall (self)
// time, calls, device time and memory per distinct stack and labels, as the model says.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/executor.h"
#include "model/lane_builder.h"
#include "torch2pprof/profile.h"
#include "torch2pprof/stages/trace.h"
#include "torch2pprof/stages/trace_model.h"

namespace torch2pprof {

// The comment that opens each input's lines in a profile: "torch2pprof V convert FILE",
// with " (rank N)" where the rank is known (rank < 0: none).
std::string InputComment(const std::string& producer, const std::string& file, int64_t rank);

struct AggregateOptions {
  // Stacks exactly as each thread ran them. By default a backward node's subtree (its
  // evaluate_function wrapper and all under it) hangs under the full stack of the forward
  // op that created it, below a "[backward] Node" frame; its samples keep the labels of
  // the thread that ran them, so per-thread totals are the same either way.
  bool thread_stacks = false;
  // Samples carry labels (pid, tid, thread, step, device, stream); without, one sample
  // per stack (analyze's module view needs only the tree).
  bool labels = true;
  // The memory sample types (allocations where they happened, what was in use at each
  // device's peak); the module view reads none of them.
  bool memory = true;
  // The critical sample type: each step's critical path under the stacks that caused it.
  // Convert's default (ConvertOptions::critical); off here, where the module view and
  // the tests of the other columns aggregate.
  bool critical = false;
  StepLabels step_labels = StepLabels::kAuto;
  // Frames a stack keeps: deeper ones fold into one "[deeper frames truncated]" frame,
  // whose samples keep their values (pprof stores every sample's whole stack: depth d
  // costs d^2 and a 100,000-deep chain would not fit in memory).
  uint32_t max_depth = kDefaultMaxDepth;
  // Every sample also gets the numeric label "rank", so samples of different traces
  // never merge (convert -o).
  bool rank_labels = false;
  // How many pieces each fold takes (the lanes are cut at fixed places, never by
  // threads; 0 counts as 1): the profile depends neither on it nor on the threads.
  uint32_t fold_segment = 1 << 16;
};

// Samples with values {calls, wall, work} and, when the trace has them, {gpu} (device
// time under the stack that launched it) and {alloc_objects, alloc_space, inuse_objects,
// inuse_space}. work is wall less the time whose leaf is a blocking wait (IsBlockingWait,
// TraceModel::Waits), and the default. lanes are BuildLanes of the trace, cut at the
// model's step bounds.
// The lanes are folded on the executor's threads.
Profile Aggregate(const Trace& trace, const TraceModel& model, const std::vector<LaneStacks>& lanes,
                  const AggregateOptions& options, Executor& ex);
// The same on the calling thread alone.
Profile Aggregate(const Trace& trace, const TraceModel& model, const std::vector<LaneStacks>& lanes,
                  const AggregateOptions& options = {});
// The same from the trace alone: its model, its lanes cut at the model's step bounds.
Profile Aggregate(const Trace& trace, int threads = 1);
// The same from stacks built uncut, beside the model (as analyze and compare build them):
// where the samples get step labels, the lanes are built again, cut at the steps.
Profile AggregateUncut(const Trace& trace, const TraceModel& model, const std::vector<LaneStacks>& uncut,
                       const AggregateOptions& options, Executor& ex);
// A flame graph's profile: no labels (the graph draws none), so stacks never cut at the
// steps; `critical` adds the critical path's sample type.
AggregateOptions FlameGraphAggregate(bool critical);
// Whether a trace's samples get step labels under these options.
bool StepLabelsOn(const AggregateOptions& options, const TraceModel& model);
// The stack builder's options convert uses: with step labels, lanes cut at the model's
// step bounds, so that each piece lies in one step.
BuildOptions ConvertBuildOptions(const TraceModel& model, const AggregateOptions& options = {});

// One profile from several traces (ranks) added one at a time, so that merging needs
// only the trace being added in memory, not all of them.
class Aggregator {
 public:
  explicit Aggregator(const AggregateOptions& options = {});
  ~Aggregator();
  Aggregator(Aggregator&&) noexcept;
  Aggregator& operator=(Aggregator&&) noexcept;

  void Add(const Trace& trace, const TraceModel& model, const std::vector<LaneStacks>& lanes, Executor& ex);
  // A profile that convert wrote, for the traces it was made of: its samples as they are
  // (its frames and stacks merge into the tree), its comments for each of its traces.
  // Returns the rank each of those traces gave (-1: none), in order: Finish's ranks take
  // one entry for each. A profile made with other options keeps them (step labels, depth).
  // Throws Error (kInput) for a profile whose samples and comments disagree.
  std::vector<int64_t> AddProfile(const Profile& profile, const std::string& file);
  // ranks: with rank_labels, the rank of each trace in the order added, all distinct
  // (they are often known only once every input is read).
  Profile Finish(const std::vector<int64_t>& ranks = {}) &&;
  // Stacks cut at max_depth so far.
  uint64_t folded_stacks() const;
  // Sums (sample values, bytes) that reached the largest 64-bit value and were held there.
  uint64_t saturated() const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace torch2pprof
