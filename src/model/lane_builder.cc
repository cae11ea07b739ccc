#include "model/lane_builder.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <limits>
#include <queue>

#include <sys/mman.h>

#include "base/executor.h"
#include "base/sorted_runs.h"
#include "model/innermost.h"

namespace torch2pprof {
namespace {

// Hands the whole 4 KiB pages inside [begin, end) of a buffer read once from its start
// back to the kernel, while the rest is still being read. Only inside a live buffer of
// 1 MiB or more: its pages hold none of malloc's bookkeeping, and a later write there
// (none comes) would fault in a zeroed page.
template <typename T>
void ReleaseRead(const T* begin, const T* end) {
  constexpr uintptr_t kPage = 4096;
  const uintptr_t from = (reinterpret_cast<uintptr_t>(begin) + kPage - 1) & ~(kPage - 1);
  const uintptr_t to = reinterpret_cast<uintptr_t>(end) & ~(kPage - 1);
  if (to > from) madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
}

// An interval to place: sorted by start, then longest first, then file order (of two
// identical intervals the one written first is the caller: Kineto writes aten::to before
// aten::_to_copy). For intervals that are not identical the order, and so the stacks,
// never depend on the file's order.
struct Item {
  int64_t start;
  uint32_t interval;  // also the file order: intervals are stored in file order
};
static_assert(sizeof(Item) == 16, "an item per interval of the lane being built");

struct Before {
  const Interval* intervals;
  bool operator()(const Item& a, const Item& b) const {
    if (a.start != b.start) return a.start < b.start;
    int64_t a_end = intervals[a.interval].end_ns, b_end = intervals[b.interval].end_ns;
    if (a_end != b_end) return a_end > b_end;
    return a.interval < b.interval;
  }
};

// An interval on the stack: open, or ended (lazily: it leaves the stack when it is on
// top) while an interval above it, which started inside it, goes on.
struct Open {
  int64_t end_ns;
  uint32_t interval;
  int32_t piece;   // its current piece in LaneStacks::pieces
  int32_t parent;  // the stack position of the interval its current piece hangs under, or -1
};

// The stack walk. At every instant the time belongs to the innermost open interval: the
// one that started last. An interval is a piece under the interval innermost where it
// began. One that outlives that caller (a partial overlap) goes on, from the caller's
// end, as one more piece: under the innermost interval then open that outlasts it all, or
// at the root. So an interval costs at most two pieces (and one more at each cut it
// spans) however the overlaps fall; splitting it again at every end inside it cost n^2/4
// pieces on a staircase of overlaps.
// Over 100 lines: one pass with one stack over the lane's sorted intervals; its cases
// (nest, split, cut, close) all move the same stack.
void BuildOne(const Trace& trace, const uint32_t* members, size_t count, const BuildOptions& options, LaneStacks* out) {
  const Before before{trace.intervals.data()};
  std::vector<Item> items(count);
  for (size_t k = 0; k < count; ++k) items[k] = Item{trace.intervals[members[k]].start_ns, members[k]};
  SortRuns(items.begin(), items.end(), before);
  out->intervals = items.size();
  auto& pieces = out->pieces;
  // Rests and cuts add pieces: were the vector to grow, the copy would hold the lane's
  // pieces twice at once. Capacity never written is address space, not memory.
  pieces.reserve(items.size() + items.size() / 4 + 2);

  InnermostClock<Open> clock;
  std::vector<Open>& stack = clock.stack();
  int64_t busy = 0;
  auto credit = [&](const Open& o, int64_t ns) {
    pieces[static_cast<size_t>(o.piece)].self_ns += ns;
    busy += ns;
  };
  auto piece_of = [&](int32_t pos) { return pos < 0 ? -1 : stack[static_cast<size_t>(pos)].piece; };
  // A new piece of the interval at stack position pos, from `start` on.
  auto open_piece = [&](int64_t start, size_t pos, bool first) {
    Open& o = stack[pos];
    if (o.piece >= 0) pieces[static_cast<size_t>(o.piece)].end_ns = start;
    Piece& p = pieces.emplace_back();
    p.start_ns = start;
    p.end_ns = o.end_ns;
    p.self_ns = 0;
    p.interval = o.interval;
    p.parent = piece_of(o.parent);
    p.first = first;
    o.piece = static_cast<int32_t>(pieces.size() - 1);
  };
  // Intervals that outlive their caller go on where it ends: (its end, their position).
  std::priority_queue<std::pair<int64_t, int32_t>, std::vector<std::pair<int64_t, int32_t>>, std::greater<>> rests;
  auto rest_at = [&](int64_t t, int32_t pos) {
    clock.AdvanceTo(t, credit);
    Open& o = stack[static_cast<size_t>(pos)];
    // Up from the caller to the first interval that outlasts this one: the intervals on
    // the way end first, so at its end this one would have to move again.
    int32_t up = stack[static_cast<size_t>(o.parent)].parent;
    while (up >= 0 && stack[static_cast<size_t>(up)].end_ns < o.end_ns) up = stack[static_cast<size_t>(up)].parent;
    o.parent = up;
    open_piece(t, static_cast<size_t>(pos), false);
  };
  // At a cut every open piece ends, and goes on as a new piece from the cut on.
  static const std::vector<int64_t> kNoCuts;
  const std::vector<int64_t>& cuts = out->lane < options.cuts.size() ? options.cuts[out->lane] : kNoCuts;
  size_t next_cut = 0;
  auto cut_at = [&](int64_t c) {
    clock.AdvanceTo(c, credit);
    // Every interval still on the stack started before c; those still open go on in new
    // pieces, outermost first, so that a parent precedes its children.
    for (size_t pos = 0; pos < stack.size(); ++pos) {
      if (stack[pos].end_ns > c) open_piece(c, pos, false);
    }
  };
  // Rests and cuts up to t, in time order; at one instant rests first (a rest was open
  // before anything that starts there), then cuts.
  auto advance = [&](int64_t t) {
    for (;;) {
      const bool rest = !rests.empty() && rests.top().first <= t;
      const bool cut = next_cut < cuts.size() && cuts[next_cut] <= t;
      if (rest && (!cut || rests.top().first <= cuts[next_cut])) {
        auto [at, pos] = rests.top();
        rests.pop();
        rest_at(at, pos);
      } else if (cut) {
        cut_at(cuts[next_cut++]);
      } else {
        break;
      }
    }
    clock.AdvanceTo(t, credit);
  };
  // The items are read once, in order, while the pieces are written: what was read is
  // handed back every 1 MiB, so that the lane's peak is its pieces, not pieces and items.
  constexpr size_t kRelease = (size_t{1} << 20) / sizeof(Item);
  size_t released = 0;
  for (size_t next = 0; next < items.size(); ++next) {
    if (next - released >= kRelease && items.size() >= kRelease) {
      ReleaseRead(items.data() + released, items.data() + next);
      released = next;
    }
    const Item it = items[next];
    advance(it.start);
    const int64_t end = trace.intervals[it.interval].end_ns;
    const int32_t parent = static_cast<int32_t>(stack.size()) - 1;
    clock.Push(Open{end, it.interval, -1, parent});
    open_piece(it.start, stack.size() - 1, true);
    if (parent >= 0 && end > stack[static_cast<size_t>(parent)].end_ns) {  // it outlives its caller
      ++out->partial_overlaps;
      rests.push({stack[static_cast<size_t>(parent)].end_ns, parent + 1});
    }
  }
  while (!rests.empty() || (next_cut < cuts.size() && !stack.empty())) {
    advance(std::min(rests.empty() ? std::numeric_limits<int64_t>::max() : rests.top().first,
                     next_cut < cuts.size() ? cuts[next_cut] : std::numeric_limits<int64_t>::max()));
  }
  clock.Finish(credit);
  out->busy_ns = busy;
}

}  // namespace

std::vector<LaneStacks> BuildLanes(const Trace& trace, const BuildOptions& options) {
  Executor one(1);
  return BuildLanes(trace, options, one);
}

std::vector<LaneStacks> BuildLanes(const Trace& trace, const BuildOptions& options, Executor& ex,
                                   const std::function<void()>& also) {
  std::vector<LaneStacks> out;
  std::vector<size_t> first(trace.lanes.size() + 1, 0);
  std::vector<uint32_t> members;
  std::vector<size_t> order;
  auto size_of = [&](size_t i) { return first[out[i].lane + 1] - first[out[i].lane]; };
  std::atomic<size_t> next{0};
  // Lanes are known only once grouped: their count bounds the helpers from above.
  const int threads = std::max(1, std::min<int>(ex.threads(), static_cast<int>(trace.lanes.size()) + (also ? 1 : 0)));
  // The grouping of the intervals by lane, and `also`: each run by whoever needs it first
  // (Pending), so that the helpers start at once, the first on `also` while this thread
  // groups, and each waits for the grouping (or hears it failed) before it takes a lane.
  const Pending<bool> grouped{std::function<bool()>([&] {
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
  })};
  const Pending<bool> beside{std::function<bool()>([&] {
    if (also) also();
    return true;
  })};
  auto work = [&] {
    grouped.Shared();
    for (size_t k; (k = next.fetch_add(1, std::memory_order_relaxed)) < order.size();) {
      LaneStacks& ls = out[order[k]];
      BuildOne(trace, members.data() + first[ls.lane], size_of(order[k]), options, &ls);
    }
  };
  Crew crew(ex);
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
