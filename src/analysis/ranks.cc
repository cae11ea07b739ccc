#include "analysis/ranks.h"

#include <cstdio>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <tuple>

#include "analysis/events.h"
#include "analysis/spans.h"
#include "analysis/stages.h"
#include "analysis/statistics.h"
#include "base/utf8.h"

namespace torch2pprof {

// The rows of a value per rank may cost at most this many cells per entry the ranks gave
// (a step, a collective), plus a row.
constexpr size_t kCellsPerEntry = 4;

using analysis::Spans;

// Over 100 lines: a field of the summary after another, each a few lines from the
// analysis, in the order docs/reference.md lists them.
RankSummary SummarizeRank(const Trace& trace, const TraceModel& model, const Analysis& a) {
  RankSummary r;
  r.file = a.trace.file;
  r.rank = a.trace.rank;
  r.world_size = a.trace.world_size;
  r.backend = a.trace.backend;
  r.steps = a.steps;
  if (a.trace.wall_clock_ns != 0) {
    r.wall_clock = true;
    r.wall_clock_offset_ns = a.trace.wall_clock_ns - a.trace.start_ns;
  }
  std::vector<int64_t> totals;
  r.mean_step.name = "mean";
  for (const StepRow& s : a.steps) {
    totals.push_back(s.total_ns);
    r.mean_step.total_ns += s.total_ns;
    for (const StepPart& p : kStepParts) r.mean_step.*p.field += s.*p.field;
    r.communication_ns += s.communication_ns;
  }
  if (!totals.empty()) {
    r.step_median_ns = Median(totals);
    r.step_min_ns = *std::min_element(totals.begin(), totals.end());
    r.step_max_ns = *std::max_element(totals.begin(), totals.end());
    int64_t n = static_cast<int64_t>(totals.size());
    r.mean_step.total_ns /= n;
    for (const StepPart& p : kStepParts) r.mean_step.*p.field /= n;
  }
  for (const Recommendation& f : a.recommendations) {
    if (f.saving_ns <= 0) continue;
    r.top_finding = f.id();
    if (!f.code.empty()) r.top_finding_code = CutText(f.code[0].name, 256);
    r.top_finding_ns = f.saving_ns;
    break;
  }
  for (const GpuRow& g : a.gpu) r.gpu_window_ns += g.window_ns;
  r.gpu_utilization = GpuUtilization(a.gpu);
  // Memory: the device that peaked highest; the CPU only where there is no device.
  for (bool cpu : {false, true}) {
    for (const MemoryRow& m : a.memory) {
      if ((m.device == "cpu") != cpu || (!r.memory_device.empty() && m.peak_bytes <= r.memory_peak_bytes)) continue;
      r.memory_peak_bytes = m.peak_bytes;
      r.memory_device = m.device;
    }
    if (!r.memory_device.empty()) break;
  }

  // HTA's view of the device: all work, compute kernels, communication kernels.
  analysis::Events ev(trace, model);
  Spans all, compute, comm;
  std::map<std::pair<std::string, std::string>, CollectiveStat> collectives;
  // The calls in the analysed steps (all of them where there are none), for the waits.
  int64_t from = INT64_MIN, to = INT64_MAX;
  if (!a.steps.empty()) from = a.steps.front().start_ns, to = a.steps.back().start_ns + a.steps.back().total_ns;
  std::vector<std::tuple<int64_t, int64_t, std::pair<std::string, std::string>>> calls;
  for (size_t e = 0; e < ev.count(); ++e) {
    Role role = ev.RoleOf(e);
    const Interval& iv = ev.Iv(e);
    const bool collective = ev.IsCommunication(e);  // a communication kernel, or a host collective
    const bool comm_kernel = collective && role == Role::kKernel;
    if (IsDeviceRole(role)) {
      all.push_back({iv.start_ns, iv.end_ns});
      if (comm_kernel) {
        comm.push_back(all.back());
      } else if (role == Role::kKernel) {
        compute.push_back(all.back());
      }
    }
    if (collective) {
      std::string name(ev.Name(e));
      std::string kind = comm_kernel ? "kernel" : "host";
      CollectiveStat& c = collectives[{kind, name}];
      c.name = name, c.kind = kind;
      ++c.calls;
      c.total_ns += ev.Dur(e);
      if (iv.start_ns >= from && iv.start_ns < to)
        calls.emplace_back(iv.start_ns, ev.Dur(e), std::make_pair(kind, name));
    }
  }
  const TemporalRow split = analysis::SplitDeviceTime(std::move(all), std::move(compute), std::move(comm));
  r.gpu_span_ns = split.span_ns;
  r.gpu_idle_ns = split.idle_ns;
  r.compute_ns = split.compute_ns;
  r.non_compute_ns = split.non_compute_ns;
  r.comm_kernel_ns = split.comm_ns;
  r.overlap_ns = split.overlap_ns;
  std::map<std::pair<std::string, std::string>, uint32_t> index;
  for (auto& [key, c] : collectives) {
    index[key] = static_cast<uint32_t>(r.collectives.size());
    r.collectives.push_back(std::move(c));
  }
  std::stable_sort(calls.begin(), calls.end(),
                   [](const auto& x, const auto& y) { return std::get<0>(x) < std::get<0>(y); });
  for (const auto& [start, dur, key] : calls) r.calls.push_back(CollectiveCall{index[key], start, dur});
  for (const CollectiveSizeRow& c : a.collective_sizes) {
    if (c.message_bytes < 0 || c.time_ns <= 0) continue;
    r.bus_bytes +=
        static_cast<int64_t>(static_cast<double>(c.message_bytes) * static_cast<double>(c.calls) * c.bus_factor);
    r.bus_time_ns += c.time_ns;
  }
  return r;
}

namespace {

// Each rank's time in collectives split into waiting and transfer (CollectiveWait), and
// by collective the waiting per rank; then the rank the others wait for (Straggler).
// Over 100 lines: the instances matched across ranks, their waits and the straggler
// share the per-instance arrivals built at its start.
void FindWaits(RanksAnalysis& out) {
  const std::vector<RankSummary>& rs = out.ranks;
  const size_t n = rs.size();
  out.waits.assign(n, CollectiveWait{});
  using Key = std::pair<std::string, std::string>;  // (kind, name)
  // Only a collective every rank called has instances to match: the others would cost a
  // slot per rank each (ranks whose collectives are named apart cost ranks^2).
  std::map<Key, size_t> ranks_calling;
  for (size_t i = 0; i < n; ++i) {
    for (const CollectiveStat& stat : rs[i].collectives) ++ranks_calling[{stat.kind, stat.name}];
  }
  std::map<Key, std::vector<std::vector<const CollectiveCall*>>> calls;  // by collective, by rank
  for (size_t i = 0; i < n; ++i) {
    for (const CollectiveCall& c : rs[i].calls) {
      const CollectiveStat& stat = rs[i].collectives[c.collective];
      const Key key{stat.kind, stat.name};
      if (ranks_calling[key] < n) continue;
      auto& by_rank = calls[key];
      by_rank.resize(n);
      by_rank[i].push_back(&c);
    }
  }
  // A rank waits at the start of an instance, until the last rank arrives; then the data
  // moves. Concurrent collectives (DDP's buckets) wait at once: their waits count once,
  // as the time of the union of the waits.
  std::map<Key, std::vector<int64_t>> waited;  // by collective: each rank's wait, in total
  // Arrivals compare where every clock is a wall clock and no instance ended on a rank
  // before its last rank arrived.
  bool arrivals = n > 1;
  for (const RankSummary& r : rs) arrivals &= r.wall_clock;
  auto arrival = [&](size_t i, const CollectiveCall& c) { return c.start_ns + rs[i].wall_clock_offset_ns; };
  for (auto& [key, by_rank] : calls) {
    size_t instances = SIZE_MAX;
    for (const auto& c : by_rank) instances = std::min(instances, c.size());
    for (size_t k = 0; k < instances && arrivals; ++k) {
      int64_t last = INT64_MIN, first_end = INT64_MAX;
      for (size_t i = 0; i < n; ++i) {
        last = std::max(last, arrival(i, *by_rank[i][k]));
        first_end = std::min(first_end, arrival(i, *by_rank[i][k]) + by_rank[i][k]->dur_ns);
      }
      arrivals = last <= first_end;
    }
  }
  out.waits_from_arrivals = arrivals;
  std::vector<Spans> wait(n), transfer(n);
  for (auto& [key, by_rank] : calls) {
    size_t instances = SIZE_MAX;
    for (const auto& c : by_rank) instances = std::min(instances, c.size());
    std::vector<int64_t>& w = waited[key];
    w.assign(n, 0);
    for (size_t k = 0; k < instances; ++k) {
      int64_t shortest = INT64_MAX, last = INT64_MIN;
      for (size_t i = 0; i < n; ++i) {
        shortest = std::min(shortest, by_rank[i][k]->dur_ns);
        last = std::max(last, arrival(i, *by_rank[i][k]));
      }
      for (size_t i = 0; i < n; ++i) {
        const CollectiveCall& c = *by_rank[i][k];
        const int64_t waits = arrivals ? last - arrival(i, c) : c.dur_ns - shortest;
        w[i] += waits;
        wait[i].push_back({c.start_ns, c.start_ns + waits});
        transfer[i].push_back({c.start_ns + waits, c.start_ns + c.dur_ns});
        ++out.waits[i].instances;
      }
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const int64_t steps = std::max<int64_t>(1, static_cast<int64_t>(rs[i].steps.size()));
    out.waits[i].wait_ns = analysis::Length(analysis::Union(std::move(wait[i]))) / steps;
    out.waits[i].transfer_ns = analysis::Length(analysis::Union(std::move(transfer[i]))) / steps;
  }
  if (n < 2 || out.waits[0].instances == 0) return;
  // The late rank waits least; the others wait for it what they wait beyond its own wait.
  size_t late = 0;
  for (size_t i = 1; i < n; ++i) {
    if (out.waits[i].wait_ns < out.waits[late].wait_ns) late = i;
  }
  Straggler l;
  l.rank = late;
  std::vector<int64_t> beyond;
  const double enough = out.threshold * static_cast<double>(out.median_step_ns);
  for (size_t i = 0; i < n; ++i) {
    const int64_t extra = out.waits[i].wait_ns - out.waits[late].wait_ns;
    if (i == late || static_cast<double>(extra) <= enough) continue;
    l.waiters.push_back(i);
    beyond.push_back(extra);
  }
  if (l.waiters.empty()) return;
  l.waited_ns = Median(beyond);
  int64_t most = -1;
  for (const auto& [key, w] : waited) {
    int64_t sum = 0;
    for (size_t i : l.waiters) sum += w[i];
    if (sum > most) most = sum, l.collective = key.second;
  }
  // The part of its own step where the late rank spends what the others wait: the part
  // most above the other ranks' median, communication aside (it waits less there).
  for (const StepPart& p : kStepParts) {
    if (p.field == &StepRow::communication_ns) continue;
    std::vector<int64_t> others;
    for (size_t i = 0; i < n; ++i) {
      if (i != late) others.push_back(rs[i].mean_step.*p.field);
    }
    const int64_t delta = rs[late].mean_step.*p.field - Median(others);
    if (delta > l.part_delta_ns) l.part = p.key, l.part_delta_ns = delta;
  }
  out.stragglers.push_back(std::move(l));
}

// Findings across the ranks, per step: the straggler (the others' wait for it), the link
// (communication's transfer), slower ranks (their excess). The first is time in
// collectives waiting, the second time in them moving data, the third a rank's own step:
// they share no time. Their sentences: report/recommendation_text.cc.
void FindRecommendations(RanksAnalysis& out) {
  const std::vector<RankSummary>& rs = out.ranks;
  const size_t n = rs.size();
  if (n < 2) return;
  std::vector<size_t> late;
  for (size_t k = 0; k < out.stragglers.size(); ++k) {
    late.push_back(out.stragglers[k].rank);
    RankRecommendation r;
    r.finding = RankFinding::kStraggler;
    r.saving_ns = out.stragglers[k].waited_ns;
    r.index = static_cast<int64_t>(k);
    out.recommendations.push_back(r);
  }
  // Communication: each rank's share of its mean step, over the ranks; what limits it,
  // the wait for other ranks (skew) or the transfer (the link).
  std::vector<int64_t> comm, total, wait, transfer;
  int64_t bus_bytes = 0, bus_time = 0;
  bool gpu = false;
  for (size_t i = 0; i < n; ++i) {
    comm.push_back(rs[i].mean_step.communication_ns);
    total.push_back(rs[i].mean_step.total_ns);
    if (i < out.waits.size()) wait.push_back(out.waits[i].wait_ns), transfer.push_back(out.waits[i].transfer_ns);
    bus_bytes += rs[i].bus_bytes, bus_time += rs[i].bus_time_ns;
    gpu |= rs[i].gpu_span_ns > 0;
  }
  const int64_t comm_median = Median(comm), total_median = Median(total);
  if (total_median > 0 && comm_median * 10 >= total_median * 3) {
    RankRecommendation r;
    r.finding = RankFinding::kCommunication;
    r.comm_ns = comm_median, r.step_ns = total_median;
    r.wait_ns = wait.empty() ? 0 : Median(wait), r.transfer_ns = transfer.empty() ? 0 : Median(transfer);
    r.bus_bytes = bus_bytes, r.bus_time_ns = bus_time;
    r.gloo = rs[0].backend == "gloo", r.gpu = gpu;
    r.saving_ns = r.wait_ns > r.transfer_ns ? 0 : r.transfer_ns;
    out.recommendations.push_back(r);
  }
  // Ranks whose steps are slower than the others' (the straggler aside: its time is the
  // others' wait).
  size_t shown = 0, more = 0;
  for (size_t k = 0; k < out.slow_ranks.size(); ++k) {
    const SlowRank& s = out.slow_ranks[k];
    if (s.metric != "step_time" || std::find(late.begin(), late.end(), s.rank) != late.end()) continue;
    if (shown == 3) {
      ++more;
      continue;
    }
    ++shown;
    RankRecommendation r;
    r.finding = RankFinding::kSlowRank;
    r.saving_ns = s.value_ns - s.median_ns;
    r.index = static_cast<int64_t>(k);
    out.recommendations.push_back(r);
  }
  if (more > 0) {
    RankRecommendation r;
    r.finding = RankFinding::kSlowRank;
    r.more = more;
    out.recommendations.push_back(r);
  }
  std::stable_sort(out.recommendations.begin(), out.recommendations.end(),
                   [](const RankRecommendation& x, const RankRecommendation& y) { return x.saving_ns > y.saving_ns; });
}

// The rank table's numbers over the ranks: least, median, 90th percentile, most.
void FindSpreads(RanksAnalysis& out) {
  const std::vector<RankSummary>& rs = out.ranks;
  if (rs.empty()) return;
  auto add = [&](const char* key, const char* heading, RankSpread::Unit unit, auto value) {
    RankSpread sp;
    sp.key = key, sp.heading = heading, sp.unit = unit;
    std::vector<double> v;
    std::vector<int64_t> whole;
    for (size_t i = 0; i < rs.size(); ++i) {
      v.push_back(static_cast<double>(value(i)));
      whole.push_back(static_cast<int64_t>(value(i)));
      if (v.back() < v[sp.min_rank]) sp.min_rank = i;
      if (v.back() > v[sp.max_rank]) sp.max_rank = i;
    }
    sp.min = v[sp.min_rank], sp.max = v[sp.max_rank];
    std::vector<double> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    sp.p90 = NearestRank(sorted, 90);
    sp.median = unit == RankSpread::kFraction ? Median(v) : static_cast<double>(Median(whole));
    out.spreads.push_back(std::move(sp));
  };
  const auto ns = RankSpread::kNanoseconds;
  add("step_median", "median step", ns, [&](size_t i) { return rs[i].step_median_ns; });
  add("step_max", "max step", ns, [&](size_t i) { return rs[i].step_max_ns; });
  for (const StepPart& p : kStepParts) {
    add(p.key, p.heading, ns, [&, field = p.field](size_t i) { return rs[i].mean_step.*field; });
  }
  add("wait", "wait", ns, [&](size_t i) { return out.waits[i].wait_ns; });
  add("transfer", "transfer", ns, [&](size_t i) { return out.waits[i].transfer_ns; });
  add("gpu_utilization", "GPU util", RankSpread::kFraction, [&](size_t i) { return rs[i].gpu_utilization; });
  add("compute", "compute (trace)", ns, [&](size_t i) { return rs[i].compute_ns; });
  add("gpu_idle", "idle (trace)", ns, [&](size_t i) { return rs[i].gpu_idle_ns; });
  add("memory_peak", "mem peak", RankSpread::kBytes, [&](size_t i) { return rs[i].memory_peak_bytes; });
}

}  // namespace

std::vector<int64_t> RanksOrPositions(std::vector<int64_t> given, bool* replaced) {
  std::set<int64_t> seen;
  bool usable = true;
  for (int64_t rank : given) usable &= rank >= 0 && seen.insert(rank).second;
  *replaced = !usable && given.size() > 1;
  if (!usable) {
    for (size_t i = 0; i < given.size(); ++i) given[i] = static_cast<int64_t>(i);
  }
  return given;
}

namespace {

// The ranks whose median step or compute time exceeds the ranks' median by more than
// the threshold, the slowest first, each with the part of its step most above theirs.
void FindSlowRanks(RanksAnalysis& out, double threshold) {
  const std::vector<RankSummary>& rs = out.ranks;
  const size_t n = rs.size();
  // The part that sets a straggler apart: its mean per step against the ranks' median
  // (the medians once, not per straggler: thousands of ranks can all be stragglers).
  int64_t part_median[kStepPartCount];
  for (int k = 0; k < kStepPartCount; ++k) {
    std::vector<int64_t> parts;
    for (const RankSummary& o : rs) parts.push_back(o.mean_step.*kStepParts[k].field);
    part_median[k] = Median(parts);
  }
  auto differing_part = [&](const RankSummary& r, SlowRank& s) {
    for (int k = 0; k < kStepPartCount; ++k) {
      int64_t delta = r.mean_step.*kStepParts[k].field - part_median[k];
      if (delta > s.part_delta_ns) s.part = kStepParts[k].key, s.part_delta_ns = delta;
    }
  };
  for (size_t i = 0; i < n && n > 1; ++i) {
    const RankSummary& r = rs[i];
    for (auto [metric, value, median] : {std::make_tuple("step_time", r.step_median_ns, out.median_step_ns),
                                         std::make_tuple("compute", r.compute_ns, out.median_compute_ns)}) {
      if (median <= 0) continue;
      double excess = static_cast<double>(value) / static_cast<double>(median) - 1;
      if (excess <= threshold) continue;
      SlowRank s;
      s.rank = i, s.metric = metric, s.value_ns = value, s.median_ns = median, s.excess = excess;
      differing_part(r, s);
      out.slow_ranks.push_back(s);
    }
  }
  // The slowest first: past a handful of ranks the text shows the top ones.
  std::stable_sort(out.slow_ranks.begin(), out.slow_ranks.end(),
                   [](const SlowRank& x, const SlowRank& y) { return x.excess > y.excess; });
}

// Collectives by (kind, name) across ranks, a row per collective with a value per rank.
void CollectivesAcrossRanks(RanksAnalysis& out) {
  const std::vector<RankSummary>& rs = out.ranks;
  const size_t n = rs.size();
  // Collectives by (kind, name) across ranks: each rank's entries first (what it gave),
  // then, by spread, as many rows of a value per rank as the entries pay for.
  struct Entry {
    size_t rank;
    uint64_t calls;
    int64_t ns;
  };
  std::map<std::pair<std::string, std::string>, std::vector<Entry>> by_name;
  size_t entries = 0;
  for (size_t i = 0; i < n; ++i) {
    for (const CollectiveStat& c : rs[i].collectives) by_name[{c.kind, c.name}].push_back({i, c.calls, c.total_ns});
    entries += rs[i].collectives.size();
  }
  const size_t rows_paid = n ? (kCellsPerEntry * entries + n) / n : 0;
  struct Spread {
    const std::pair<std::string, std::string>* key;
    const std::vector<Entry>* entries;
    int64_t min_ns, max_ns;
    size_t min_rank, max_rank;
  };
  std::vector<Spread> spreads;
  for (const auto& [key, list] : by_name) {
    // A rank without the collective spent 0 in it: the least time is 0 there.
    Spread sp{&key, &list, 0, 0, 0, 0};
    std::vector<bool> has(list.size() < n ? n : 0, false);
    for (const Entry& e : list) {
      if (!has.empty()) has[e.rank] = true;
    }
    bool first = true;
    if (list.size() < n) {
      sp.min_rank = static_cast<size_t>(std::find(has.begin(), has.end(), false) - has.begin());
      first = false;
      sp.max_rank = sp.min_rank;
    }
    for (const Entry& e : list) {  // ties: the lowest rank, as a pass over all ranks finds
      if (first || e.ns < sp.min_ns || (e.ns == sp.min_ns && e.rank < sp.min_rank))
        sp.min_ns = e.ns, sp.min_rank = e.rank;
      if (first || e.ns > sp.max_ns || (e.ns == sp.max_ns && e.rank < sp.max_rank))
        sp.max_ns = e.ns, sp.max_rank = e.rank;
      first = false;
    }
    spreads.push_back(sp);
  }
  std::stable_sort(spreads.begin(), spreads.end(),
                   [](const Spread& x, const Spread& y) { return x.max_ns - x.min_ns > y.max_ns - y.min_ns; });
  for (const Spread& sp : spreads) {
    if (out.collectives.size() >= rows_paid) {
      ++out.collectives_left_out;
      continue;
    }
    CollectiveRow row;
    row.kind = sp.key->first, row.name = sp.key->second;
    row.calls.assign(n, 0), row.total_ns.assign(n, 0);
    for (const Entry& e : *sp.entries) row.calls[e.rank] = e.calls, row.total_ns[e.rank] = e.ns;
    row.min_ns = sp.min_ns, row.max_ns = sp.max_ns, row.min_rank = sp.min_rank, row.max_rank = sp.max_rank;
    out.collectives.push_back(std::move(row));
  }
}

// Each step side by side on every rank, with its slowest and fastest rank.
void AlignSteps(RanksAnalysis& out) {
  const std::vector<RankSummary>& rs = out.ranks;
  const size_t n = rs.size();
  // Step N on every rank: by name, in the order the first rank that has it ran it, while
  // the rows fit what the ranks gave; else by position.
  size_t steps_given = 0;
  std::vector<size_t> counts;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < n; ++i) {
    steps_given += rs[i].steps.size();
    counts.push_back(rs[i].steps.size());
    for (const StepRow& s : rs[i].steps) index.emplace(s.name, index.size());
  }
  out.steps_by_position = n > 1 && index.size() * n > kCellsPerEntry * steps_given + n;
  if (!out.steps_by_position) {
    std::map<std::string, size_t> row_of;
    for (size_t i = 0; i < n; ++i) {
      for (const StepRow& s : rs[i].steps) {
        auto [it, added] = row_of.emplace(s.name, out.steps.size());
        if (added) {
          out.steps.emplace_back();
          out.steps.back().name = s.name;
          out.steps.back().total_ns.assign(n, -1);
        }
        out.steps[it->second].total_ns[i] = s.total_ns;
      }
    }
  } else {
    // Up to the median count: at least half the ranks have each row, so the rows cost at
    // most twice the steps given.
    const size_t median = UpperMedianIndex(n);
    std::nth_element(counts.begin(), counts.begin() + static_cast<std::ptrdiff_t>(median), counts.end());
    const size_t rows = counts[median];
    for (size_t k = 0; k < rows; ++k) {
      StepAlignment s;
      s.name = "step " + std::to_string(k + 1) + " of each rank";
      s.total_ns.assign(n, -1);
      for (size_t i = 0; i < n; ++i) {
        if (k < rs[i].steps.size()) s.total_ns[i] = rs[i].steps[k].total_ns;
      }
      out.steps.push_back(std::move(s));
    }
  }
  for (StepAlignment& s : out.steps) {
    bool first = true;
    for (size_t i = 0; i < n; ++i) {
      if (s.total_ns[i] < 0) continue;
      if (first || s.total_ns[i] > s.total_ns[s.slowest]) s.slowest = i;
      if (first || s.total_ns[i] < s.total_ns[s.fastest]) s.fastest = i;
      first = false;
    }
    s.spread_ns = s.total_ns[s.slowest] - s.total_ns[s.fastest];
  }
}

// The ranks' graphs under one root: a frame "rank N" each, its tree below (the types of
// the first rank with a graph; a rank without one of them counts 0 there). At most
// kProfileRanks ranks, so that the page stays small: the stragglers, the slow ranks, then
// the others in rank order.
FlameGraph FlameAcrossRanks(const RanksAnalysis& a) {
  constexpr size_t kProfileRanks = 16;
  FlameGraph out;
  std::vector<bool> shown(a.ranks.size(), false);
  size_t taken = 0;
  auto take = [&](size_t i) {
    if (i < shown.size() && !shown[i] && taken < kProfileRanks && !a.ranks[i].flame.empty()) shown[i] = true, ++taken;
  };
  for (const Straggler& l : a.stragglers) take(l.rank);
  for (const SlowRank& r : a.slow_ranks) take(r.rank);
  for (size_t i = 0; i < a.ranks.size(); ++i) take(i);
  for (const RankSummary& r : a.ranks) {
    if (!r.flame.empty()) {
      out.types = r.flame.types, out.units = r.flame.units;
      break;
    }
  }
  if (out.types.empty()) return out;
  out.names = {""};
  out.parent = {0};
  out.name = {0};
  out.total.assign(out.types.size(), std::vector<int64_t>{0});
  std::map<std::string, uint32_t> names;
  auto name_id = [&](const std::string& n) {
    auto [it, added] = names.try_emplace(n, static_cast<uint32_t>(out.names.size()));
    if (added) out.names.push_back(n);
    return it->second;
  };
  for (size_t i = 0; i < a.ranks.size(); ++i) {
    const FlameGraph& f = a.ranks[i].flame;
    if (!shown[i]) continue;
    const int64_t rank = a.ranks[i].rank >= 0 ? a.ranks[i].rank : static_cast<int64_t>(i);
    const uint32_t top = static_cast<uint32_t>(out.parent.size());
    out.parent.push_back(0);
    out.name.push_back(name_id("rank " + std::to_string(rank)));
    std::vector<int> column(out.types.size(), -1);
    for (size_t t = 0; t < out.types.size(); ++t) {
      for (size_t k = 0; k < f.types.size(); ++k) {
        if (f.types[k] == out.types[t]) column[t] = static_cast<int>(k);
      }
      const int64_t v = column[t] < 0 ? 0 : f.total[static_cast<size_t>(column[t])][0];
      out.total[t].push_back(v);
      out.total[t][0] += v;
    }
    for (size_t n = 1; n < f.parent.size(); ++n) {
      out.parent.push_back(top + f.parent[n]);  // f's node k is top + k here, its root the rank's frame
      out.name.push_back(name_id(f.names[f.name[n]]));
      for (size_t t = 0; t < out.types.size(); ++t) {
        out.total[t].push_back(column[t] < 0 ? 0 : f.total[static_cast<size_t>(column[t])][n]);
      }
    }
    out.folded += f.folded;
    out.fold_share = std::max(out.fold_share, f.fold_share);
  }
  return out;
}

}  // namespace

RanksAnalysis AnalyzeAcrossRanks(std::vector<RankSummary> ranks, double threshold, bool flame) {
  RanksAnalysis out;
  out.threshold = threshold;
  std::vector<int64_t> given;
  for (const RankSummary& r : ranks) given.push_back(r.rank);
  given = RanksOrPositions(std::move(given), &out.ranks_are_positions);
  for (size_t i = 0; i < ranks.size(); ++i) ranks[i].rank = given[i];
  std::stable_sort(ranks.begin(), ranks.end(),
                   [](const RankSummary& x, const RankSummary& y) { return x.rank < y.rank; });
  out.ranks = std::move(ranks);
  std::vector<int64_t> steps, compute;
  for (const RankSummary& r : out.ranks) steps.push_back(r.step_median_ns), compute.push_back(r.compute_ns);
  out.median_step_ns = Median(steps);
  out.median_compute_ns = Median(compute);
  FindSlowRanks(out, threshold);
  FindWaits(out);
  FindSpreads(out);
  FindRecommendations(out);
  CollectivesAcrossRanks(out);
  AlignSteps(out);
  if (flame) out.flame = FlameAcrossRanks(out);
  return out;
}

}  // namespace torch2pprof
