// What each step waited on: a walk back in time from the step's end over the host
// threads and device streams, following what started each piece of work (its launch, the
// work before it on its stream, the device work a synchronization waited for, the thread
// that worked while another waited), so that every nanosecond of the step is put down to
// exactly one event and one cause. analyze's critical path, its findings' savings and
// convert's `critical` samples all read this.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "base/executor.h"
#include "model/lane_builder.h"
#include "model/step_windows.h"
#include "torch2pprof/analysis.h"
#include "torch2pprof/stages/trace.h"
#include "torch2pprof/stages/trace_model.h"

namespace torch2pprof {

// A stretch of one step's critical path.
struct CriticalSegment {
  static constexpr uint32_t kNoEvent = UINT32_MAX;
  int64_t start_ns = 0, end_ns = 0;
  uint32_t lane = 0;          // where: a host thread or a device stream
  uint32_t event = kNoEvent;  // the event (EventAt) it is put down to; kNoEvent: a host thread with no event open
  int32_t piece = -1;         // on a host thread: the piece of lanes[...] it lies in (-1: none)
  Bound bound = Bound::kCpu;
};

struct StepCriticalPath {
  // In time order, tiling the step's window: their lengths add up to end - start.
  std::vector<CriticalSegment> segments;
  int64_t length_ns = 0;
  int64_t by_bound[kBounds] = {};
};

// Gaps between two kernels of a stream up to this long are the stream's own overhead;
// a longer one that no launch explains waited for another stream's work when some ended
// in it (a stream wait event; torch 2.x traces record no edge for it).
inline constexpr int64_t kStreamWaitNs = 50 * 1000;

// What is innermost on a host lane at each instant: the deepest piece holding it (the lane
// builder splits partial overlaps, so pieces nest). Asked of the pieces themselves, kept in
// start order with their parents: nothing is made per lane.
struct Stretch {
  bool found = false;  // a piece holds the instant; else the lane is idle there
  uint32_t piece = 0;  // the innermost piece
  int64_t start = 0;   // where it became the innermost (its start, or its last child's end)
  int64_t end = 0;     // After: where it stops being it; Before and idle: where the lane went idle
};
class HostTimeline {
 public:
  explicit HostTimeline(const LaneStacks& lane) : p_(lane.pieces) {}
  // The innermost piece just before t (over (t - 1ns, t]: start < t <= end); when none,
  // `end` is where the lane last stopped being busy before t (INT64_MIN: never). `hint`,
  // where given, is the caller's place in the lane from its last question (a walk asks
  // about instants close together).
  Stretch Before(int64_t t, size_t* hint = nullptr) const;
  // The innermost piece just after t (over [t, t + 1ns)) and where it stops being the
  // innermost; when none, `end` is where the lane is next busy (INT64_MAX: never).
  Stretch After(int64_t t) const;

  // The stretches from an instant on, one after another: each Next is what After would
  // say at the end of the one before, at a constant cost a stretch rather than a search.
  class Cursor {
   public:
    Cursor(const HostTimeline& tl, int64_t t);
    Stretch Next();  // `start` is where the stretch begins: the cursor

   private:
    void Settle();  // the pieces open at the cursor on the stack, the next to start after it
    const std::vector<Piece>& p_;
    std::vector<uint32_t> open_;  // outermost first: the top is the innermost
    size_t next_ = 0;             // the first piece that starts after the cursor
    int64_t at_ = 0;
  };

 private:
  const std::vector<Piece>& p_;
};

// Walks one step at a time, so that only one step's segments are held. `lanes` are the
// uncut or cut stacks of the trace (BuildLanes); host pieces are named by their index there.
// What the walks share is made once, up front; the walks themselves hold no shared state.
class CriticalPathWalker {
 public:
  CriticalPathWalker(const Trace& t, const TraceModel& m, const std::vector<LaneStacks>& lanes,
                     const StepWindows& windows);
  ~CriticalPathWalker();
  size_t steps() const;
  StepCriticalPath Walk(size_t step) const;
  // Every step walked on the executor's threads, each path handed to `each` on the thread
  // that walked it (in no order: `each` keeps what it needs by step).
  void WalkAll(Executor& ex, const std::function<void(size_t step, const StepCriticalPath& path)>& each) const;
  // The timeline of a host lane that launches device work or runs a step (nullptr for
  // the others).
  const HostTimeline* Host(uint32_t lane) const;
  const LaneStacks* StacksOf(uint32_t lane) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace torch2pprof
