#include "analysis/ranks.h"

#include <algorithm>
#include <map>
#include <set>

#include "analysis/events.h"
#include "analysis/spans.h"
#include "analysis/statistics.h"

namespace torch2pprof {

using analysis::Spans;

RankSummary SummarizeRank(const Trace& trace, const TraceModel& model, const Analysis& a) {
  RankSummary r;
  r.file = a.trace.file;
  r.rank = a.trace.rank;
  r.world_size = a.trace.world_size;
  r.backend = a.trace.backend;
  r.steps = a.steps;
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
    }
  }
  all = analysis::Union(std::move(all));
  compute = analysis::Union(std::move(compute));
  comm = analysis::Union(std::move(comm));
  if (!all.empty()) {
    r.gpu_span_ns = all.back().second - all.front().first;
    r.gpu_idle_ns = r.gpu_span_ns - analysis::Length(all);
    r.compute_ns = analysis::Length(compute);
    r.non_compute_ns = analysis::Length(all) - r.compute_ns;
    r.comm_kernel_ns = analysis::Length(comm);
    r.overlap_ns = analysis::Length(analysis::Intersect(comm, compute));
  }
  for (auto& [key, c] : collectives) r.collectives.push_back(std::move(c));
  return r;
}

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

RanksAnalysis AnalyzeAcrossRanks(std::vector<RankSummary> ranks, double threshold) {
  RanksAnalysis out;
  out.threshold = threshold;
  std::vector<int64_t> given;
  for (const RankSummary& r : ranks) given.push_back(r.rank);
  given = RanksOrPositions(std::move(given), &out.ranks_are_positions);
  for (size_t i = 0; i < ranks.size(); ++i) ranks[i].rank = given[i];
  std::stable_sort(ranks.begin(), ranks.end(),
                   [](const RankSummary& x, const RankSummary& y) { return x.rank < y.rank; });
  out.ranks = std::move(ranks);
  const std::vector<RankSummary>& rs = out.ranks;
  const size_t n = rs.size();

  std::vector<int64_t> steps, compute;
  for (const RankSummary& r : rs) steps.push_back(r.step_median_ns), compute.push_back(r.compute_ns);
  out.median_step_ns = Median(steps);
  out.median_compute_ns = Median(compute);
  // The part that sets a straggler apart: its mean per step against the ranks' median.
  auto differing_part = [&](const RankSummary& r, Straggler& s) {
    for (const StepPart& p : kStepParts) {
      std::vector<int64_t> parts;
      for (const RankSummary& o : rs) parts.push_back(o.mean_step.*p.field);
      int64_t delta = r.mean_step.*p.field - Median(parts);
      if (delta > s.part_delta_ns) s.part = p.key, s.part_delta_ns = delta;
    }
  };
  for (size_t i = 0; i < n && n > 1; ++i) {
    const RankSummary& r = rs[i];
    for (auto [metric, value, median] : {std::make_tuple("step_time", r.step_median_ns, out.median_step_ns),
                                         std::make_tuple("compute", r.compute_ns, out.median_compute_ns)}) {
      if (median <= 0) continue;
      double excess = static_cast<double>(value) / static_cast<double>(median) - 1;
      if (excess <= threshold) continue;
      Straggler s;
      s.rank = i, s.metric = metric, s.value_ns = value, s.median_ns = median, s.excess = excess;
      differing_part(r, s);
      out.stragglers.push_back(s);
    }
  }

  // Collectives by (kind, name) across ranks.
  std::map<std::pair<std::string, std::string>, CollectiveRow> rows;
  for (size_t i = 0; i < n; ++i) {
    for (const CollectiveStat& c : rs[i].collectives) {
      CollectiveRow& row = rows[{c.kind, c.name}];
      if (row.calls.empty()) row.name = c.name, row.kind = c.kind, row.calls.assign(n, 0), row.total_ns.assign(n, 0);
      row.calls[i] = c.calls;
      row.total_ns[i] = c.total_ns;
    }
  }
  for (auto& [key, row] : rows) {
    auto [lo, hi] = std::minmax_element(row.total_ns.begin(), row.total_ns.end());
    row.min_ns = *lo, row.max_ns = *hi;
    row.min_rank = static_cast<size_t>(lo - row.total_ns.begin());
    row.max_rank = static_cast<size_t>(hi - row.total_ns.begin());
    out.collectives.push_back(std::move(row));
  }
  std::stable_sort(out.collectives.begin(), out.collectives.end(), [](const CollectiveRow& x, const CollectiveRow& y) {
    return x.max_ns - x.min_ns > y.max_ns - y.min_ns;
  });

  // Step N on every rank: by name, in the order the first rank that has it ran it.
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < n; ++i) {
    for (const StepRow& s : rs[i].steps) {
      auto [it, added] = index.emplace(s.name, out.steps.size());
      if (added) {
        out.steps.emplace_back();
        out.steps.back().name = s.name;
        out.steps.back().total_ns.assign(n, -1);
      }
      out.steps[it->second].total_ns[i] = s.total_ns;
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
  return out;
}

}  // namespace torch2pprof
