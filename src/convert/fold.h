// convert's fold: every lane's pieces into the profile's call tree, in segments folded
// side by side on the threads and joined in piece order; a backward subtree under the
// forward op that created it. In: the lanes' pieces and the model's links; out: a node of
// the profile for every piece (what hangs where else is attribution.h's).
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "base/executor.h"
#include "convert/aggregator.h"
#include "convert/profile_builder.h"
#include "model/lane_builder.h"
#include "torch2pprof/stages/trace.h"
#include "torch2pprof/stages/trace_model.h"

namespace torch2pprof {

// Lanes' pieces are folded in segments (AggregateOptions::fold_segment pieces), each into
// a tree of its own, side by side on the threads; the segments' trees, a few thousand
// nodes where the lanes have hundreds of thousands of pieces, then join the profile's
// one at a time in lane and piece order, so that its nodes, frames and samples come in
// the order one walk over the pieces makes them.
inline constexpr uint32_t kNone = UINT32_MAX;

// Backward roots by interval, and where each one's forward op first piece is.
struct Link {
  uint32_t backward, forward;
  uint32_t lane = kNone, piece = kNone;  // the forward op's first piece
  uint32_t frame = 0;                    // "[backward] X"
  bool ok = true;                        // false once it would make a cycle
};

// A node of a segment's tree: under a node of the segment (or the root), with an event
// name. A backward root follows a link instead (that of its first piece): it hangs
// under the forward op, or, where the link would make a cycle, under `parent`. An import
// stands for a piece of an earlier segment of the lane (a parent of the segment's first
// pieces): it has no frame.
struct LocalNode {
  uint32_t parent;  // a node of the segment, or kNone: the root
  uint32_t name;    // StringTable id
  uint32_t link;    // index into the links, or kNone
  uint32_t import;  // the piece an import stands for, or kNone
};

struct LocalSample {
  uint32_t node;
  int64_t step;
  int64_t calls, wall;
};

struct Segment {
  uint32_t lane;                                         // index into the lanes
  uint32_t begin, end;                                   // its pieces
  std::vector<LocalNode> nodes;                          // in the order of their first piece
  std::vector<LocalSample> samples;                      // in the order of their first piece
  std::vector<std::pair<uint32_t, uint32_t>> launchers;  // (launcher slot, node)
  bool backward_roots = false;                           // it waits for the forward stacks
};

// The lanes' pieces cut into segments every `size` pieces (at fixed places, never by
// threads), and one table of each piece's node in its segment's tree, lane after lane.
struct Folds {
  uint32_t size;
  std::vector<Segment> segments;
  std::vector<uint32_t> first_segment;  // by lane (index into the lanes), and one past the last
  std::vector<uint32_t> table;
  std::vector<size_t> lane_at;  // where each lane's pieces start in the table

  Folds(const std::vector<LaneStacks>& lanes, uint32_t segment_size);
  uint32_t& At(uint32_t lane, uint32_t piece) { return table[lane_at[lane] + piece]; }
  // A piece's segment and, once folded, its node in the segment's tree.
  std::pair<uint32_t, uint32_t> Of(uint32_t lane, uint32_t piece) const {
    return {first_segment[lane] + piece / size, table[lane_at[lane] + piece]};
  }
};

// The host events that launched device work, sorted: a launcher's slot is its index.
struct Launchers {
  std::vector<uint32_t> events;
  std::vector<bool> is;  // a bit per interval spares most searches
  Launchers(const TraceModel& m, size_t intervals);
  // The slot of a launching event (an interval, or a zero-length event past them), else -1.
  int64_t SlotOf(uint32_t e) const;
};

// Event names as the frames they become: names that FrameSystemName changes (step
// numbers, addresses) are keyed by what it makes of them, others by their string id.
// Made once per trace and read by every segment: a table per segment, as long as the
// trace's string table, cost lanes x names (a million lanes: minutes of memset).
class FrameKeys {
 public:
  explicit FrameKeys(const Trace& t);
  uint32_t operator()(uint32_t name) const { return of_name_[name]; }

 private:
  std::vector<uint32_t> of_name_;
};

// A step's number, or -1 for none.
inline int64_t StepNumber(const Step* step) { return step ? step->number : -1; }

// The lanes folded: each piece's node in its segment's tree (folds), each segment node's
// node in the profile (nodes, by segment), and the backward links followed.
struct FoldedLanes {
  Folds folds;
  std::vector<std::vector<uint32_t>> nodes;
  std::vector<Link> links;
  // The profile's node of a piece of the lane at index `lane` of the lanes.
  uint32_t NodeOf(uint32_t lane, uint32_t piece) const {
    auto [g, k] = folds.Of(lane, piece);
    return nodes[g][k];
  }
};

// Folds the lanes into b's tree (their samples: each segment's, in folds.segments). Unless
// options.thread_stacks, a backward root hangs under its forward op's stack below a
// "[backward] X" frame. `launchers` is asked for once the links are found (it is looked
// for beside them).
FoldedLanes FoldLanes(const Trace& t, const TraceModel& m, const std::vector<LaneStacks>& lanes,
                      const AggregateOptions& options, bool step_labels, const FrameKeys& frame_keys,
                      const std::function<const Launchers&()>& launchers, ProfileBuilder& b, Executor& ex);

}  // namespace torch2pprof
