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
#include <limits>
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

// What is innermost on a host lane at each instant: the lane builder's rule, the open piece
// that started last. Made once per lane by one sweep over the pieces' starts and ends, as
// the stretches in which one piece (or none) is innermost: a question is a search or a
// step from the caller's hint, never a climb up the open pieces (a chain of 100,000
// nested calls made that quadratic).
struct Stretch {
  bool found = false;  // a piece holds the instant; else the lane is idle there
  uint32_t piece = 0;  // the innermost piece
  int64_t start =
      0;            // where the stretch began: a piece's start, or a piece's end (a child's: the time is its own again)
  int64_t end = 0;  // Before: the piece's end; idle: where the lane went idle; Cursor: the stretch's end
};
class HostTimeline {
 public:
  explicit HostTimeline(const LaneStacks& lane);
  // The innermost piece just before t (over (t - 1ns, t]: start < t <= end); when none,
  // `end` is where the lane last stopped being busy before t (INT64_MIN: never). `hint`,
  // where given, is the caller's place in the lane from its last question (a walk asks
  // about instants close together).
  Stretch Before(int64_t t, size_t* hint = nullptr) const;
  // The stretch holding instant t (over (t - 1ns, t]), -1 for none: before the first piece.
  int64_t StretchBefore(int64_t t, size_t* hint) const;
  size_t stretches() const { return from_.size(); }
  int64_t stretch_start(size_t i) const {
    const Piece& p = p_[from_[i] >> 1];
    return from_[i] & 1 ? p.end_ns : p.start_ns;
  }
  int64_t stretch_end(size_t i) const {
    return i + 1 < from_.size() ? stretch_start(i + 1) : std::numeric_limits<int64_t>::max();
  }
  // kIdle: no piece open.
  static constexpr uint32_t kIdle = UINT32_MAX;
  uint32_t stretch_piece(size_t i) const { return piece_[i]; }

  // The stretches from an instant on, one after another, each at a constant cost.
  class Cursor {
   public:
    Cursor(const HostTimeline& tl, int64_t t);
    Stretch Next();  // `start` is where the stretch begins: the cursor

   private:
    const HostTimeline& tl_;
    int64_t i_;  // the stretch holding the cursor (over [at, at + 1ns)); -1: before the first
    int64_t at_ = 0;
  };

 private:
  const std::vector<Piece>& p_;
  void Sweep();     // nested pieces: a stack
  void SweepAny();  // any pieces: two heaps
  // The first stretch starting at or after t (stretches() if none).
  size_t FirstFrom(int64_t t) const;
  // Stretch i begins where piece from_[i] / 2 starts (from_[i] even) or ends (odd): 8
  // bytes a stretch, two stretches a piece. It holds (start, next start] for Before and
  // [start, next start) for the cursor.
  std::vector<uint32_t> from_;
  std::vector<uint32_t> piece_;  // its innermost piece, or kIdle
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
