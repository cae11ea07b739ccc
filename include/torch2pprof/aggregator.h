// Stage 3: folds every lane's pieces into one call tree and sums wall (self) time
// and calls per distinct stack and lane labels; names become pprof frames.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "torch2pprof/lane_builder.h"
#include "torch2pprof/profile.h"
#include "torch2pprof/trace.h"

namespace torch2pprof {

// The event name as a frame: " at 0x..." memory addresses removed so repeated
// calls of a bound method aggregate.
std::string FrameSystemName(std::string_view event_name);

// A frame for a (cleaned) event name; Python frames "path.py(123): func" get
// file and line and the readable name "func path:123".
Frame MakeFrame(std::string_view system_name);

// Samples with values {calls, wall} and, when the trace has them, {gpu} (device time
// under the stack that launched it) and {alloc_objects, alloc_space, inuse_objects,
// inuse_space}; labels pid, tid, thread (when named), step, and device/stream.
Profile Aggregate(const Trace& trace, const std::vector<LaneStacks>& lanes);

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

  void Add(const Trace& trace, const std::vector<LaneStacks>& lanes);
  // ranks: with rank labels, the rank of each trace in the order added, all distinct
  // (they are often known only once every input is read).
  Profile Finish(const std::vector<int64_t>& ranks = {}) &&;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace torch2pprof
