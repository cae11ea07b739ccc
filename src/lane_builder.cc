#include "torch2pprof/lane_builder.h"

#include <algorithm>
#include <queue>
#include <thread>

namespace torch2pprof {
namespace {

// Work item of the stack walk: an interval, or the rest of one that outlived its parent.
struct Item {
  int64_t start;
  int64_t end;
  uint32_t interval;  // also the file order: intervals are stored in file order
  bool first;
};

// Start first, then longest first, then file order: of two identical intervals
// the one written first is the caller (Kineto writes aten::to before aten::_to_copy).
// The rest of a split interval was open before anything that starts where it
// resumes, so at equal starts it goes first.
bool Before(const Item& a, const Item& b) {
  if (a.start != b.start) return a.start < b.start;
  if (a.first != b.first) return !a.first;
  if (a.end != b.end) return a.end > b.end;
  return a.interval < b.interval;
}

struct Later {
  bool operator()(const Item& a, const Item& b) const { return Before(b, a); }
};

// An open piece: its self time is final when it closes. `index` is its slot in
// LaneStacks::pieces when pieces are kept, else -1.
struct Open {
  Piece piece;
  int32_t index;
};

void BuildOne(const Trace& trace, const uint32_t* members, size_t count, const BuildOptions& options, LaneStacks* out) {
  std::vector<Item> items;
  items.reserve(count);
  for (size_t k = 0; k < count; ++k) {
    uint32_t i = members[k];
    items.push_back(Item{trace.intervals[i].start_ns, trace.intervals[i].end_ns, i, true});
  }
  std::sort(items.begin(), items.end(), Before);
  out->intervals = items.size();
  auto& pieces = out->pieces;
  pieces.reserve(items.size());

  // Remainders of split intervals start at the end of the piece they outlived, which
  // is never before the walk's current position, so a heap merges them in order.
  std::priority_queue<Item, std::vector<Item>, Later> rest;
  std::vector<Open> stack;
  int64_t busy = 0;
  size_t next = 0;
  auto pop = [&]() {
    const Open& o = stack.back();
    if (stack.size() == 1) busy += o.piece.end_ns - o.piece.start_ns;
    pieces[static_cast<size_t>(o.index)] = o.piece;
    stack.pop_back();
  };
  auto push = [&](int64_t start, int64_t end, uint32_t interval, bool first) {
    int32_t parent = -1;
    if (!stack.empty()) {
      stack.back().piece.self_ns -= end - start;
      parent = stack.back().index;
    }
    Piece p{start, end, end - start, interval, parent, first};
    stack.push_back(Open{p, static_cast<int32_t>(pieces.size())});
    pieces.push_back(p);
  };
  // At a cut every open piece ends, and goes on as a new piece from the cut on.
  static const std::vector<int64_t> kNoCuts;
  const std::vector<int64_t>& cuts = out->lane < options.cuts.size() ? options.cuts[out->lane] : kNoCuts;
  size_t next_cut = 0;
  std::vector<Open> cut;
  auto cut_at = [&](int64_t c) {
    while (!stack.empty() && stack.back().piece.end_ns <= c) pop();
    // Every open piece started before c (cuts come before the items that start at them).
    cut.clear();  // the pieces as they were, innermost first
    while (!stack.empty()) {
      Open& o = stack.back();
      // The part after c moves to the new piece; so does the open child's, which
      // had been taken off this piece's self time.
      int64_t child_after = cut.empty() ? 0 : cut.back().piece.end_ns - c;
      cut.push_back(o);
      o.piece.self_ns -= (o.piece.end_ns - c) - child_after;
      o.piece.end_ns = c;
      pop();
    }
    for (size_t j = cut.size(); j-- > 0;) push(c, cut[j].piece.end_ns, cut[j].piece.interval, false);
  };
  while (next < items.size() || !rest.empty()) {
    Item it;
    if (rest.empty() || (next < items.size() && Before(items[next], rest.top()))) {
      it = items[next++];
    } else {
      it = rest.top();
      rest.pop();
    }
    while (next_cut < cuts.size() && cuts[next_cut] <= it.start) cut_at(cuts[next_cut++]);
    while (!stack.empty() && stack.back().piece.end_ns <= it.start) pop();
    if (!stack.empty() && it.end > stack.back().piece.end_ns) {
      // Starts inside the top and ends after it: the part after the top's end
      // comes back later as a piece of its own, so no time is lost or doubled.
      int64_t end = stack.back().piece.end_ns;
      if (it.first) ++out->partial_overlaps;
      rest.push(Item{end, it.end, it.interval, false});
      it.end = end;
    }
    push(it.start, it.end, it.interval, it.first);
  }
  while (next_cut < cuts.size() && !stack.empty()) cut_at(cuts[next_cut++]);
  while (!stack.empty()) pop();
  out->busy_ns = busy;
}

}  // namespace

std::vector<LaneStacks> BuildLanes(const Trace& trace, const BuildOptions& options) {
  // Interval indexes grouped by lane in one array (a counting sort), in file order.
  std::vector<size_t> first(trace.lanes.size() + 1, 0);
  for (const Interval& iv : trace.intervals) ++first[iv.lane + 1];
  for (size_t lane = 0; lane < trace.lanes.size(); ++lane) first[lane + 1] += first[lane];
  std::vector<uint32_t> members(trace.intervals.size());
  {
    std::vector<size_t> next(first.begin(), first.end() - 1);
    for (uint32_t i = 0; i < trace.intervals.size(); ++i) members[next[trace.intervals[i].lane]++] = i;
  }
  std::vector<LaneStacks> out;
  for (uint32_t lane = 0; lane < trace.lanes.size(); ++lane) {
    if (first[lane] == first[lane + 1]) continue;
    out.emplace_back();
    out.back().lane = lane;
  }
  int threads = std::max(1, std::min<int>(options.threads, static_cast<int>(out.size())));
  auto work = [&](int t) {
    for (size_t i = static_cast<size_t>(t); i < out.size(); i += static_cast<size_t>(threads)) {
      uint32_t lane = out[i].lane;
      BuildOne(trace, members.data() + first[lane], first[lane + 1] - first[lane], options, &out[i]);
    }
  };
  if (threads == 1) {
    work(0);
  } else {
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) pool.emplace_back(work, t);
    for (auto& th : pool) th.join();
  }
  return out;
}

}  // namespace torch2pprof
