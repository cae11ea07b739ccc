// Memory per device (tb-semantics §8) from the model's timelines, which convert's
// memory samples read too: one peak, one account of what was live before the trace.
#include <algorithm>
#include <map>
#include <unordered_map>

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

// The buckets of Buckets by the operator that allocated (MemoryRow::site_timeline): an
// allocation counts for its operator until a free at its address (never, without one),
// what the level holds beyond the trace's own allocations is from before the trace.
std::vector<SiteSeries> SiteBuckets(const Trace& t, const MemoryTimeline& tl, const std::vector<uint32_t>& owners,
                                    const std::vector<MemoryOperator>& ops, const std::vector<MemoryBucket>& buckets) {
  if (tl.events.empty() || buckets.empty()) return {};
  std::vector<SiteSeries> out;
  std::map<std::string_view, size_t> series_of;
  for (const MemoryOperator& op : ops) {
    if (op.live_bytes <= 0 || out.size() == kSiteSeries) break;
    series_of[op.name] = out.size();
    out.push_back({op.name, {}, {}, 0});
  }
  const size_t other = out.size(), before = other + 1;
  out.push_back({kOtherSites, {}, {}, 0});
  out.push_back({kBeforeTrace, {}, {}, 0});
  for (SiteSeries& x : out) x.bytes.assign(buckets.size(), 0);
  const std::vector<int64_t> levels = MemoryLevels(t, tl);
  std::vector<int64_t> held(out.size(), 0);
  int64_t tracked = 0;
  std::unordered_map<uint64_t, std::pair<size_t, int64_t>> live;
  auto apply = [&](size_t k) {
    const uint32_t i = tl.events[k];
    const MemoryEvent& e = t.memory[i];
    if (e.bytes > 0) {
      auto it = series_of.find(owners[i] == kNoOwner ? std::string_view("(no operator)") : t.strings.Get(owners[i]));
      const size_t j = it == series_of.end() ? other : it->second;
      held[j] += e.bytes, tracked += e.bytes;
      if (e.addr) live[e.addr] = {j, e.bytes};
    } else if (e.bytes < 0 && e.addr) {
      auto it = live.find(e.addr);
      if (it != live.end()) {
        held[it->second.first] -= it->second.second, tracked -= it->second.second;
        live.erase(it);
      }
    }
    held[before] = std::max<int64_t>(0, levels[k] - tracked);
  };
  auto take = [&](size_t b) {
    for (size_t j = 0; j < out.size(); ++j) out[j].bytes[b] = held[j];
  };
  // As Buckets walks: a bucket starts at the level carried in; an event raising it past
  // the bucket's highest so far is the one the bucket shows.
  size_t k = 0;
  int64_t level = levels.front();
  apply(0);  // the first event's level is the carried-in level of the first bucket
  k = 1;
  for (size_t b = 0; b < buckets.size(); ++b) {
    int64_t best = level;
    take(b);
    while (k < levels.size() && t.memory[tl.events[k]].ts_ns < buckets[b].end_ns) {
      apply(k);
      level = levels[k];
      if (level > best) best = level, take(b);
      if (k == tl.peak) {
        for (size_t j = 0; j < out.size(); ++j) out[j].peak_bytes = held[j];
      }
      ++k;
    }
  }
  if (tl.peak == 0) {
    for (size_t j = 0; j < out.size(); ++j) out[j].peak_bytes = out[j].bytes.front();
  }
  std::vector<SiteSeries> kept;
  for (SiteSeries& x : out) {
    if (std::any_of(x.bytes.begin(), x.bytes.end(), [](int64_t v) { return v != 0; })) kept.push_back(std::move(x));
  }
  return kept;
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
    row.site_timeline = SiteBuckets(t, tl, owners, row.top_operators, row.timeline);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace torch2pprof::analysis
