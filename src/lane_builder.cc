#include "torch2pprof/lane_builder.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <queue>

#include "huge_pages.h"
#include "parallel_for.h"
#include "sorted_runs.h"

namespace torch2pprof {
namespace {

// Work item of the stack walk: an interval, or the rest of one that outlived its parent.
// Both end where the interval ends, so the end is read from the trace: 16 bytes an item.
struct Item {
  int64_t start;
  uint32_t interval;  // also the file order: intervals are stored in file order
  bool first;
};
static_assert(sizeof(Item) == 16, "an item per interval of the lane being built");

// Start first, then longest first, then file order: of two identical intervals
// the one written first is the caller (Kineto writes aten::to before aten::_to_copy).
// The rest of a split interval was open before anything that starts where it
// resumes, so at equal starts it goes first.
struct Before {
  const Interval* intervals;
  bool operator()(const Item& a, const Item& b) const {
    if (a.start != b.start) return a.start < b.start;
    if (a.first != b.first) return !a.first;
    int64_t a_end = intervals[a.interval].end_ns, b_end = intervals[b.interval].end_ns;
    if (a_end != b_end) return a_end > b_end;
    return a.interval < b.interval;
  }
};

struct Later {
  Before before;
  bool operator()(const Item& a, const Item& b) const { return before(b, a); }
};

// An open piece: what can still change (its end at a cut, its self time) and its slot
// in LaneStacks::pieces, where the rest was written when it opened. Fields are written
// one by one, never a Piece copied whole: a struct just built on the stack and read
// back whole is a failed store-to-load forward, and the walk does that per piece.
struct Open {
  int64_t start_ns;
  int64_t end_ns;
  int64_t self_ns;
  uint32_t interval;
  int32_t index;
};

void BuildOne(const Trace& trace, const uint32_t* members, size_t count, const BuildOptions& options, LaneStacks* out) {
  const Before before{trace.intervals.data()};
  HugeVector<Item> items(count);
  for (size_t k = 0; k < count; ++k) items[k] = Item{trace.intervals[members[k]].start_ns, members[k], true};
  SortRuns(items.begin(), items.end(), before);
  out->intervals = items.size();
  auto& pieces = out->pieces;
  // Splits and cuts add pieces: were the vector to grow, the copy would hold the lane's
  // pieces twice at once. Capacity never written is address space, not memory.
  pieces.reserve(items.size() + items.size() / 4 + 1024);

  // Remainders of split intervals start at the end of the piece they outlived, which
  // is never before the walk's current position, so a heap merges them in order.
  std::priority_queue<Item, std::vector<Item>, Later> rest(Later{before});
  std::vector<Open> stack;
  int64_t busy = 0;
  size_t next = 0;
  auto pop = [&]() {
    const Open& o = stack.back();
    if (stack.size() == 1) busy += o.end_ns - o.start_ns;
    Piece& p = pieces[static_cast<size_t>(o.index)];
    p.end_ns = o.end_ns;
    p.self_ns = o.self_ns;
    stack.pop_back();
  };
  auto push = [&](int64_t start, int64_t end, uint32_t interval, bool first) {
    int32_t parent = -1;
    if (!stack.empty()) {
      stack.back().self_ns -= end - start;
      parent = stack.back().index;
    }
    Open& o = stack.emplace_back();
    o.start_ns = start;
    o.end_ns = end;
    o.self_ns = end - start;
    o.interval = interval;
    o.index = static_cast<int32_t>(pieces.size());
    Piece& p = pieces.emplace_back();
    p.start_ns = start;
    p.interval = interval;
    p.parent = parent;
    p.first = first;  // end and self time when it closes
  };
  // At a cut every open piece ends, and goes on as a new piece from the cut on.
  static const std::vector<int64_t> kNoCuts;
  const std::vector<int64_t>& cuts = out->lane < options.cuts.size() ? options.cuts[out->lane] : kNoCuts;
  size_t next_cut = 0;
  std::vector<Open> cut;
  auto cut_at = [&](int64_t c) {
    while (!stack.empty() && stack.back().end_ns <= c) pop();
    // Every open piece started before c (cuts come before the items that start at them).
    cut.clear();  // the pieces as they were, innermost first
    while (!stack.empty()) {
      Open& o = stack.back();
      // The part after c moves to the new piece; so does the open child's, which
      // had been taken off this piece's self time.
      int64_t child_after = cut.empty() ? 0 : cut.back().end_ns - c;
      cut.push_back(o);
      o.self_ns -= (o.end_ns - c) - child_after;
      o.end_ns = c;
      pop();
    }
    for (size_t j = cut.size(); j-- > 0;) push(c, cut[j].end_ns, cut[j].interval, false);
  };
  // The items are read once, in order, while the pieces are written: what was read is
  // handed back every 1 MiB, so that the lane's peak is its pieces, not pieces and items.
  constexpr size_t kRelease = (size_t{1} << 20) / sizeof(Item);
  size_t released = 0;
  while (next < items.size() || !rest.empty()) {
    Item it;
    if (rest.empty() || (next < items.size() && before(items[next], rest.top()))) {
      it = items[next++];
      if (next - released >= kRelease) {
        ReleaseRead(items.data() + released, items.data() + next);
        released = next;
      }
    } else {
      it = rest.top();
      rest.pop();
    }
    while (next_cut < cuts.size() && cuts[next_cut] <= it.start) cut_at(cuts[next_cut++]);
    while (!stack.empty() && stack.back().end_ns <= it.start) pop();
    int64_t end = trace.intervals[it.interval].end_ns;
    if (!stack.empty() && end > stack.back().end_ns) {
      // Starts inside the top and ends after it: the part after the top's end
      // comes back later as a piece of its own, so no time is lost or doubled.
      if (it.first) ++out->partial_overlaps;
      rest.push(Item{stack.back().end_ns, it.interval, false});
      end = stack.back().end_ns;
    }
    push(it.start, end, it.interval, it.first);
  }
  while (next_cut < cuts.size() && !stack.empty()) cut_at(cuts[next_cut++]);
  while (!stack.empty()) pop();
  out->busy_ns = busy;
  TrimHuge(pieces);
}

}  // namespace

std::vector<LaneStacks> BuildLanes(const Trace& trace, const BuildOptions& options, const std::function<void()>& also) {
  std::vector<LaneStacks> out;
  std::vector<size_t> first(trace.lanes.size() + 1, 0);
  HugeVector<uint32_t> members;
  std::vector<size_t> order;
  auto size_of = [&](size_t i) { return first[out[i].lane + 1] - first[out[i].lane]; };
  std::atomic<size_t> next{0};
  // Lanes are known only once grouped: their count bounds the helpers from above.
  const int threads =
      std::max(1, std::min<int>(options.threads, static_cast<int>(trace.lanes.size()) + (also ? 1 : 0)));
  // The grouping of the intervals by lane, and `also`: each run by whoever needs it first
  // (Pending), so that the helpers start at once, the first on `also` while this thread
  // groups, and each waits for the grouping (or hears it failed) before it takes a lane.
  const Pending<bool> grouped = Beside(1, [&] {
    // Interval indexes grouped by lane in one array (a counting sort), in file order.
    for (const Interval& iv : trace.intervals) ++first[iv.lane + 1];
    for (size_t lane = 0; lane < trace.lanes.size(); ++lane) first[lane + 1] += first[lane];
    members.resize(trace.intervals.size());
    std::vector<size_t> at(first.begin(), first.end() - 1);
    for (uint32_t i = 0; i < trace.intervals.size(); ++i) members[at[trace.intervals[i].lane]++] = i;
    for (uint32_t lane = 0; lane < trace.lanes.size(); ++lane) {
      if (first[lane] == first[lane + 1]) continue;
      out.emplace_back();
      out.back().lane = lane;
    }
    // Largest lanes first, each taken by the next free thread: one lane is often most of
    // the work (gpt2_big's main thread: 64% of the intervals).
    order.resize(out.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return size_of(a) > size_of(b); });
    if (threads > 1 && !order.empty()) next = 1;  // the largest is the caller's
    return true;
  });
  const Pending<bool> beside = Beside(1, [&] {
    if (also) also();
    return true;
  });
  auto work = [&] {
    grouped.Shared();
    for (size_t k; (k = next.fetch_add(1, std::memory_order_relaxed)) < order.size();) {
      LaneStacks& ls = out[order[k]];
      BuildOne(trace, members.data() + first[ls.lane], size_of(order[k]), options, &ls);
    }
  };
  Crew crew;
  for (int t = 1; t < threads; ++t) {
    if (t > 1) {
      crew.Run(work);
      continue;
    }
    crew.Run([&] {
      beside.Shared();
      work();
    });
  }
  grouped.Shared();
  if (threads > 1 && !order.empty()) {
    // The calling thread takes the largest lane itself, so the pieces the aggregator
    // reads first are in its own cache.
    LaneStacks& largest = out[order[0]];
    BuildOne(trace, members.data() + first[largest.lane], size_of(order[0]), options, &largest);
  }
  work();
  beside.Shared();  // no helper started on it
  crew.Wait();
  return out;
}

}  // namespace torch2pprof
