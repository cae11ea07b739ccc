// Stage 4 (convert): folds every lane's pieces into one call tree and sums wall (self)
// time, calls, device time and memory per distinct stack and labels, as the model says.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "torch2pprof/lane_builder.h"
#include "torch2pprof/profile.h"
#include "torch2pprof/trace.h"
#include "torch2pprof/trace_model.h"

namespace torch2pprof {

// Samples with values {calls, wall} and, when the trace has them, {gpu} (device time
// under the stack that launched it) and {alloc_objects, alloc_space, inuse_objects,
// inuse_space}; labels pid, tid, thread (when named), step, and device/stream. lanes are
// BuildLanes of the trace, cut at the model's step boundaries.
Profile Aggregate(const Trace& trace, const TraceModel& model, const std::vector<LaneStacks>& lanes);
// The same from the trace alone: its model, its lanes cut at the model's step bounds.
Profile Aggregate(const Trace& trace, int threads = 1);
// The stack builder's options convert uses: lanes cut at the model's step bounds.
BuildOptions ConvertBuildOptions(const TraceModel& model, int threads);

// One profile from several traces (ranks) added one at a time, so that merging needs
// only the trace being added in memory, not all of them.
class Aggregator {
 public:
  // rank_labels: every sample also gets the numeric label "rank", so samples of
  // different traces never merge.
  explicit Aggregator(bool rank_labels);
  ~Aggregator();
  Aggregator(Aggregator&&) noexcept;
  Aggregator& operator=(Aggregator&&) noexcept;

  void Add(const Trace& trace, const TraceModel& model, const std::vector<LaneStacks>& lanes);
  // ranks: with rank labels, the rank of each trace in the order added, all distinct
  // (they are often known only once every input is read).
  Profile Finish(const std::vector<int64_t>& ranks = {}) &&;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace torch2pprof
