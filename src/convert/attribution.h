// convert's attribution: what each sample's values mean and where what is not a lane's own
// piece hangs: device time under the launch's stack, instants (zero-length launchers,
// flows, allocations) under what was open on their thread, memory at each device's peak.
// In: the folded lanes (fold.h); out: the samples of one trace in the ProfileBuilder.
#pragma once

#include <cstdint>
#include <vector>

#include "base/executor.h"
#include "convert/aggregator.h"
#include "convert/fold.h"
#include "convert/profile_builder.h"

namespace torch2pprof {

// The sample values, in a fixed layout while traces are added; Aggregator::Finish drops
// the columns no trace had (gpu without device work, memory without [memory] events).
inline constexpr int kCalls = 0, kWall = 1, kWork = 2, kGpu = 3, kCritical = 4, kAllocObjects = 5, kLayoutSize = 9;

// Where something happened in the call tree: a node and the thread.
struct Place {
  uint32_t node = 0;
  uint32_t lane = ProfileBuilder::kNoLane;
};

// An instant that is no interval, placed at what was open on its lane then.
struct Point {
  enum Kind : uint8_t { kZeroLength, kFlow, kMemory };
  int64_t ts;
  uint32_t index;  // into launchers, m.launches or t.memory
  Kind kind;
};

struct Points {
  Launchers launchers;
  std::vector<std::vector<Point>> by_lane;  // by time on lanes with pieces, else as found
};

// The host events that launched device work, and the instants that are no intervals, by
// lane and time (memory: with the allocations).
Points FindPoints(const Trace& t, const TraceModel& m, const std::vector<LaneStacks>& lanes, bool memory);

// Where each launcher, flow start and allocation is in the tree.
struct Places {
  std::vector<Place> launcher;  // by launcher slot
  std::vector<Place> flow;      // by launch: launches from a flow start outside any runtime call
  std::vector<Place> memory;    // by memory event
};

// Each lane's own samples (calls, wall, and work: wall that is no blocking wait and no
// device lane's), and the places of its launchers and points (what was open then: Holds).
// points is emptied on the way.
Places AddLanes(const Trace& t, const TraceModel& m, const std::vector<LaneStacks>& lanes, const FoldedLanes& folded,
                Points& points, ProfileBuilder& b);

// Device time (gpu) under the stack that launched it, labelled with the launching thread
// and step and with the device and stream it ran on; a kernel without a launch under a
// "<device> stream N (no launch found)" root. Returns whether there was any; sums held at
// the 64-bit limit are counted in saturated_sums.
bool AddDeviceWork(const Trace& t, const TraceModel& m, const AggregateOptions& options, bool step_labels,
                   const FrameKeys& frame_keys, const Points& points, const Places& places, uint64_t* saturated_sums,
                   ProfileBuilder& b, Executor& ex);

// Each step's critical path (model/critical_path.h) as `critical`: its nanoseconds at the
// stack that caused them — a host piece's, device work under its launch (its wait for the
// launch and a stream's gap after it on frames below it) — labelled bound_by with HTA's
// category. Returns whether there was any.
bool AddCritical(const Trace& t, const TraceModel& m, const std::vector<LaneStacks>& lanes, const FoldedLanes& folded,
                 const Points& points, const Places& places, bool step_labels, ProfileBuilder& b, Executor& ex);

// Allocations where they happened; and, per device, what was still allocated when the
// allocated total peaked, with what was allocated before the trace began on a frame of
// its own.
void AddMemory(const Trace& t, const TraceModel& m, bool step_labels, const Places& places, ProfileBuilder& b);

}  // namespace torch2pprof
