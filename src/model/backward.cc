#include "model/backward.h"

#include <algorithm>
#include <map>
#include <vector>

#include "base/sorted_runs.h"
#include "model/open_at.h"

namespace torch2pprof {
namespace {

// Stack order of a lane: by start, then longest first, then event number.
void SortByStack(const Trace& t, std::vector<uint32_t>& events) {
  SortRuns(events.begin(), events.end(), [&](uint32_t x, uint32_t y) {
    const Interval &a = EventAt(t, x), &b = EventAt(t, y);
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    if (a.end_ns != b.end_ns) return a.end_ns > b.end_ns;
    return x < y;
  });
}

// The SequenceMark of an interval in O(1), for the sweep that asks level by level
// outward: a bit per interval and a count per 64 of them (Trace::sequence is in interval
// order, one mark per interval at most). A binary search per question took a third of
// the backward links' time; an index per interval would cost 4 bytes each.
class MarkIndex {
 public:
  explicit MarkIndex(const Trace& t) : bits_((t.intervals.size() + 63) / 64, 0), before_(bits_.size(), 0) {
    for (const SequenceMark& s : t.sequence) bits_[s.interval >> 6] |= uint64_t{1} << (s.interval & 63);
    uint32_t n = 0;
    for (size_t w = 0; w < bits_.size(); ++w)
      before_[w] = n, n += static_cast<uint32_t>(__builtin_popcountll(bits_[w]));
  }
  const SequenceMark* Find(const Trace& t, uint32_t interval) const {
    const uint64_t word = bits_[interval >> 6], bit = uint64_t{1} << (interval & 63);
    if (!(word & bit)) return nullptr;
    return &t.sequence[before_[interval >> 6] + static_cast<uint32_t>(__builtin_popcountll(word & (bit - 1)))];
  }

 private:
  std::vector<uint64_t> bits_;
  std::vector<uint32_t> before_;  // marks in the words before
};

// The backward roots no flow linked: each to the latest forward op with its Sequence
// number that started before it, on the forward thread's lane where a flow told it
// (lane_of_fwd_thread), else on any thread of the same process.
void LinkBySequence(const Trace& t, const TraceModel& m, const MarkIndex& marks, const std::vector<uint32_t>& roots,
                    const std::map<int32_t, uint32_t>& lane_of_fwd_thread, std::vector<bool>* linked_out,
                    std::vector<BackwardLink>* links_out) {
  std::vector<bool>& linked = *linked_out;
  std::vector<BackwardLink>& links = *links_out;
  // Forward ops by (sequence, start).
  struct Forward {
    int64_t sequence, start;
    uint32_t interval;
    bool operator<(const Forward& o) const {
      return sequence != o.sequence ? sequence < o.sequence
             : start != o.start     ? start < o.start
                                    : interval < o.interval;
    }
  };
  std::vector<Forward> forwards;
  for (const SequenceMark& s : t.sequence) {
    if (s.fwd_thread == 0) forwards.push_back({s.sequence, t.intervals[s.interval].start_ns, s.interval});
  }
  std::sort(forwards.begin(), forwards.end());
  for (uint32_t root : roots) {
    if (linked[root]) continue;
    const SequenceMark* mark = marks.Find(t, root);
    const Interval& b = t.intervals[root];
    auto known = lane_of_fwd_thread.find(mark->fwd_thread);
    auto lo = std::lower_bound(forwards.begin(), forwards.end(), Forward{mark->sequence, INT64_MIN, 0});
    auto hi = std::lower_bound(forwards.begin(), forwards.end(), Forward{mark->sequence, b.start_ns, 0});
    for (auto it = hi; it != lo;) {
      const Interval& f = t.intervals[(--it)->interval];
      bool lane_ok = known != lane_of_fwd_thread.end() ? f.lane == known->second
                                                       : m.lanes[f.lane].process == m.lanes[b.lane].process;
      if (lane_ok) {
        linked[root] = true;
        links.push_back(BackwardLink{root, it->interval, false});
        break;
      }
    }
  }
}

}  // namespace

// Backward nodes and the forward ops that created them: by fwdbwd flow (the "s" on the
// forward op, the "f" at the backward node's start), else by Sequence number — the
// latest forward op with the backward's number that started before it, on the forward
// thread when flows tell which lane that is, else on any thread of the same process.
std::vector<BackwardLink> FindBackward(const Trace& t, const TraceModel& m) {
  std::vector<BackwardLink> links;  // by backward, once sorted
  if (t.sequence.empty()) return links;
  const MarkIndex marks(t);
  auto mark_of = [&](uint32_t interval) { return marks.Find(t, interval); };
  // Operators per lane in stack order, and the instants to ask about.
  std::vector<std::vector<uint32_t>> ops(t.lanes.size());
  for (uint32_t i = 0; i < t.intervals.size(); ++i) {
    if (m.RoleOf(t.intervals[i]) == Role::kOperator) ops[t.intervals[i].lane].push_back(i);
  }
  for (auto& v : ops) SortByStack(t, v);
  // Queries: flow starts (forward side), flow ends (backward side), backward-marked ops.
  enum Kind : uint32_t { kFlowStart = 0, kFlowEnd = 1, kMarked = 2 };
  std::vector<std::vector<std::pair<int64_t, uint32_t>>> queries(t.lanes.size());
  auto query = [](uint32_t index, Kind k) { return index << 2 | k; };
  for (uint32_t k = 0; k < t.flows.size(); ++k) {
    const Flow& f = t.flows[k];
    if (f.kind == FlowKind::kForwardBackward)
      queries[f.lane].push_back({f.ts_ns, query(k, f.phase == 's' ? kFlowStart : kFlowEnd)});
  }
  for (const SequenceMark& s : t.sequence) {
    if (s.fwd_thread > 0)
      queries[t.intervals[s.interval].lane].push_back({t.intervals[s.interval].start_ns, query(s.interval, kMarked)});
  }
  // The root of a backward subtree: from an op, outward while the enclosing op carries
  // the same backward mark (the evaluate_function wrapper carries its node's).
  auto root_of = [&](const std::vector<uint32_t>& stack, size_t at) -> uint32_t {
    const SequenceMark* mark = mark_of(stack[at]);
    if (!mark || mark->fwd_thread <= 0) return stack[at];
    while (at > 0) {
      const SequenceMark* outer = mark_of(stack[at - 1]);
      if (!outer || outer->sequence != mark->sequence || outer->fwd_thread != mark->fwd_thread) break;
      --at;
    }
    return stack[at];
  };
  // (flow id, forward op) and (flow id, backward root) in the sweep's order; an id's first
  // counts (vectors sorted afterwards: a hash map made a node per flow, tens of thousands).
  std::vector<std::pair<uint64_t, uint32_t>> forward_of_flow, backward_of_flow;
  std::vector<uint32_t> roots;  // backward roots by Sequence number
  for (size_t lane = 0; lane < t.lanes.size(); ++lane) {
    auto& q = queries[lane];
    if (q.empty()) continue;
    // Flow ends, flow starts and marked ops, each in time order: std::sort's pivots drove
    // such input into its heapsort fallback, where a merge sort takes the runs as they are.
    std::stable_sort(q.begin(), q.end());
    auto span = [&](uint32_t e) { return std::pair{EventAt(t, e).start_ns, EventAt(t, e).end_ns}; };
    SweepOpen(ops[lane], span, q, [&](uint32_t code, const std::vector<uint32_t>& stack) {
      uint32_t index = code >> 2;
      switch (code & 3) {
        case kFlowStart:
          if (!stack.empty()) forward_of_flow.push_back({t.flows[index].id, stack.back()});
          break;
        case kFlowEnd:
          if (!stack.empty()) backward_of_flow.push_back({t.flows[index].id, root_of(stack, stack.size() - 1)});
          break;
        default: {
          auto at = std::find(stack.begin(), stack.end(), index);
          if (at != stack.end() && root_of(stack, static_cast<size_t>(at - stack.begin())) == index)
            roots.push_back(index);
          break;
        }
      }
    });
  }
  std::vector<bool> linked(t.intervals.size());  // by backward root: has its link
  std::map<int32_t, uint32_t> lane_of_fwd_thread;
  // In the order of the flows' ids (Kineto numbers them in order): where several flows
  // end at one backward root, the first gives its forward op (and the forward thread's lane).
  auto first_by_id = [](std::vector<std::pair<uint64_t, uint32_t>>& v) {
    std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    v.erase(std::unique(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.first == b.first; }), v.end());
  };
  first_by_id(forward_of_flow);
  first_by_id(backward_of_flow);
  auto f = forward_of_flow.begin();
  for (const auto& [id, backward] : backward_of_flow) {
    while (f != forward_of_flow.end() && f->first < id) ++f;
    if (f == forward_of_flow.end() || f->first != id) continue;
    if (!linked[backward]) links.push_back(BackwardLink{backward, f->second, true});
    linked[backward] = true;
    if (const SequenceMark* mark = mark_of(backward))
      lane_of_fwd_thread.emplace(mark->fwd_thread, t.intervals[f->second].lane);
  }
  LinkBySequence(t, m, marks, roots, lane_of_fwd_thread, &linked, &links);
  std::sort(links.begin(), links.end(),
            [](const BackwardLink& a, const BackwardLink& b) { return a.backward < b.backward; });
  return links;
}

}  // namespace torch2pprof
