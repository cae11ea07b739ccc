// Stage 3: folds every lane's pieces into one call tree and sums wall (self) time
// and calls per distinct stack and lane labels; names become pprof frames.
#pragma once

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

// Several traces (ranks) in one profile: every sample also gets the numeric label
// "rank" (when rank >= 0), so samples of different ranks never merge.
struct AggregateInput {
  const Trace* trace;
  const std::vector<LaneStacks>* lanes;
  int64_t rank = -1;  // < 0: no rank label
};
Profile Aggregate(const std::vector<AggregateInput>& inputs);

}  // namespace torch2pprof
