// Stage 4 (convert): folds every lane's pieces into one call tree and sums wall (self)
// time, calls, device time and memory per distinct stack and labels, as the model says.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "torch2pprof/lane_builder.h"
#include "torch2pprof/profile.h"
#include "torch2pprof/trace.h"
#include "torch2pprof/trace_model.h"

namespace torch2pprof {

struct AggregateOptions {
  // Stacks exactly as each thread ran them. By default a backward node's subtree (its
  // evaluate_function wrapper and all under it) hangs under the full stack of the forward
  // op that created it, below a "[backward] Node" frame; its samples keep the labels of
  // the thread that ran them, so per-thread totals are the same either way.
  bool thread_stacks = false;
  // Samples carry labels (pid, tid, thread, step, device, stream); without, one sample
  // per stack (analyze's module view needs only the tree).
  bool labels = true;
  // Every sample also gets the numeric label "rank", so samples of different traces
  // never merge (convert -o).
  bool rank_labels = false;
};

// Samples with values {calls, wall, work} and, when the trace has them, {gpu} (device
// time under the stack that launched it) and {alloc_objects, alloc_space, inuse_objects,
// inuse_space}. work is wall less the time whose leaf is a blocking wait (IsBlockingWait),
// and the default. lanes are BuildLanes of the trace, cut at the model's step bounds.
Profile Aggregate(const Trace& trace, const TraceModel& model, const std::vector<LaneStacks>& lanes,
                  const AggregateOptions& options = {});
// The same from the trace alone: its model, its lanes cut at the model's step bounds.
Profile Aggregate(const Trace& trace, int threads = 1);
// The stack builder's options convert uses: lanes cut at the model's step bounds.
BuildOptions ConvertBuildOptions(const TraceModel& model, int threads);

// One profile from several traces (ranks) added one at a time, so that merging needs
// only the trace being added in memory, not all of them.
class Aggregator {
 public:
  explicit Aggregator(const AggregateOptions& options = {});
  ~Aggregator();
  Aggregator(Aggregator&&) noexcept;
  Aggregator& operator=(Aggregator&&) noexcept;

  void Add(const Trace& trace, const TraceModel& model, const std::vector<LaneStacks>& lanes);
  // ranks: with rank_labels, the rank of each trace in the order added, all distinct
  // (they are often known only once every input is read).
  Profile Finish(const std::vector<int64_t>& ranks = {}) &&;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace torch2pprof
