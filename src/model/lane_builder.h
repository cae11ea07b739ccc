// Stage 2: nests each lane's intervals into call stacks by time containment.
// Partial overlaps are split so that every busy instant has exactly one innermost piece.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "base/executor.h"
#include "torch2pprof/stages/trace.h"

namespace torch2pprof {

// A piece of one interval: the whole interval, or, where it started inside another
// interval and ended after it, one of the parts it was split into at that end.
struct Piece {
  int64_t start_ns;
  int64_t end_ns;
  int64_t self_ns;      // end - start minus the time of child pieces
  uint32_t interval;    // index into Trace::intervals
  int32_t parent : 31;  // index of the enclosing piece in the same LaneStacks, or -1
  bool first : 1;       // the interval's first piece: the one that counts the call
};
static_assert(sizeof(Piece) == 32, "a piece per interval: keep it small");

struct LaneStacks {
  uint32_t lane = 0;              // index into Trace::lanes
  std::vector<Piece> pieces;      // depth-first order: a parent precedes its children
  int64_t busy_ns = 0;            // union of the lane's intervals; == sum of self_ns
  uint64_t intervals = 0;         // intervals on the lane; == pieces with first set
  uint64_t partial_overlaps = 0;  // intervals that ended after an enclosing interval
};

struct BuildOptions {
  // By lane (index into Trace::lanes): sorted instants where every open piece ends and
  // goes on as a new piece (first == false), so that no piece spans one; the steps'
  // boundaries (TraceModel::StepBoundaries), so that each piece lies in one step.
  std::vector<std::vector<int64_t>> cuts;
};

// One LaneStacks per lane that has intervals, in lane order, the lanes built side by side
// on the executor's threads (the result never depends on them). `also`, where given, is
// one more part for the same threads, taken first by a helper while the caller groups the
// lanes (or by the caller after them): work of the caller's that needs no lanes, such as
// the model beside uncut stacks, shared with them without more threads busy. It runs
// exactly once.
std::vector<LaneStacks> BuildLanes(const Trace& trace, const BuildOptions& options, Executor& ex,
                                   const std::function<void()>& also = nullptr);
// The same on the calling thread alone.
std::vector<LaneStacks> BuildLanes(const Trace& trace, const BuildOptions& options = {});

}  // namespace torch2pprof
