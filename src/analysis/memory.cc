// Memory per device (tb-semantics §8) from the model's timelines, which convert's
// memory samples read too: one peak, one account of what was live before the trace.
#include <algorithm>
#include <map>

#include "analysis/stages.h"

namespace torch2pprof::analysis {

namespace {

std::vector<MemoryBucket> Buckets(const Trace& t, const MemoryTimeline& tl) {
  if (tl.events.empty()) return {};
  std::vector<int64_t> levels = MemoryLevels(t, tl);
  int64_t first = t.memory[tl.events.front()].ts_ns, last = t.memory[tl.events.back()].ts_ns;
  // Integer bucket edges, the last one past the last event so that it falls inside.
  int64_t span = last - first + 1, n = std::min<int64_t>(kMemoryBuckets, span);
  std::vector<MemoryBucket> out(static_cast<size_t>(n));
  for (int64_t b = 0; b < n; ++b) {
    out[b].start_ns = first + static_cast<int64_t>(static_cast<__int128>(span) * b / n);
    out[b].end_ns = first + static_cast<int64_t>(static_cast<__int128>(span) * (b + 1) / n);
  }
  size_t k = 0;
  int64_t level = levels.front();
  for (MemoryBucket& b : out) {
    b.max_bytes = level;
    while (k < levels.size() && t.memory[tl.events[k]].ts_ns < b.end_ns) {
      level = levels[k++];
      b.max_bytes = std::max(b.max_bytes, level);
    }
    b.end_bytes = level;
  }
  return out;
}

}  // namespace

std::vector<MemoryRow> Memory(const Events& ev, const std::vector<uint32_t>& owners) {
  const Trace& t = ev.trace();
  std::vector<MemoryRow> rows;
  for (const MemoryTimeline& tl : ev.model().memory) {
    MemoryRow row;
    row.device = tl.device;
    row.allocations = tl.allocations;
    row.frees = tl.frees;
    row.allocated_bytes = tl.allocated_bytes;
    row.freed_bytes = tl.freed_bytes;
    row.peak_bytes = tl.peak_bytes;
    row.peak_ns = tl.peak_ns;
    row.from_totals = tl.from_totals;
    row.before_trace_bytes = tl.before_trace_bytes;
    std::map<std::string_view, MemoryOperator> ops;
    auto op_of = [&](uint32_t i) -> MemoryOperator& {
      return ops[owners[i] == kNoOwner ? "(no operator)" : t.strings.Get(owners[i])];
    };
    for (uint32_t i : tl.events) {
      if (t.memory[i].bytes <= 0) continue;
      MemoryOperator& op = op_of(i);
      ++op.allocations;
      op.bytes += t.memory[i].bytes;
    }
    for (uint32_t i : tl.live_at_peak) {
      MemoryOperator& op = op_of(i);
      ++op.live_allocations;
      op.live_bytes += t.memory[i].bytes;
    }
    for (auto& [name, op] : ops) {
      op.name = std::string(name);
      row.top_operators.push_back(op);
    }
    // What holds memory at the peak first (the question behind an out-of-memory error),
    // then what allocated most over the trace.
    std::stable_sort(row.top_operators.begin(), row.top_operators.end(),
                     [](const MemoryOperator& x, const MemoryOperator& y) {
                       return x.live_bytes != y.live_bytes ? x.live_bytes > y.live_bytes : x.bytes > y.bytes;
                     });
    row.timeline = Buckets(t, tl);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace torch2pprof::analysis
