// Device time the stream did not spend working: idle time by cause, and the launches
// that feed the streams (HTA's idle time breakdown and kernel launch statistics).
#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <tuple>

#include "analysis/spans.h"
#include "analysis/stages.h"
#include "analysis/statistics.h"
#include "base/sorted_runs.h"

namespace torch2pprof::analysis {

namespace {

// The device a stream lane belongs to, as the tables name it (its pid without a name).
const std::string& DeviceName(const Events& ev, uint32_t lane) {
  const std::string& name = ev.model().lanes[lane].device_name;
  return name.empty() ? ev.trace().lanes[lane].pid : name;
}

// By device, then stream, numbers in numeric order ("7" before "13").
template <typename Row>
void ByDeviceStream(std::vector<Row>& rows) {
  std::stable_sort(rows.begin(), rows.end(), [](const Row& x, const Row& y) {
    return std::make_tuple(x.device, x.stream.size(), x.stream) < std::make_tuple(y.device, y.stream.size(), y.stream);
  });
}

}  // namespace

std::vector<IdleRow> IdleTime(const Events& ev, const StepScope& scope) {
  const TraceModel& m = ev.model();
  const Trace& t = ev.trace();
  // The device work of each stream lane, by start (then end, then file order).
  std::map<uint32_t, std::vector<std::tuple<int64_t, int64_t, uint32_t>>> work;
  for (const uint32_t e : ev.DeviceEvents()) {
    if (ev.Dur(e) <= 0) continue;
    const Interval& iv = ev.Iv(e);
    work[iv.lane].emplace_back(iv.start_ns, iv.end_ns, e);
  }
  std::vector<IdleRow> rows;
  for (auto& [lane, items] : work) {
    SortRuns(items.begin(), items.end(), std::less<>());  // a stream's work comes mostly in order
    IdleRow r;
    r.device = DeviceName(ev, lane);
    r.stream = t.lanes[lane].tid;
    int64_t end = INT64_MIN, busy_from = 0;
    for (const auto& [start, stop, e] : items) {
      if (end != INT64_MIN && start > end) {
        // A gap since the work before ended: who kept the stream waiting. It counts in
        // the step of the work that ends it.
        const int64_t gap = start - end;
        const IdleCause cause = IdleCauseOf(m, e, end, start);
        const bool in_steps = AnalysedDeviceStep(ev, e, scope) >= 0;
        if (cause == IdleCause::kHostWait) {
          r.host_wait_ns += gap;
          if (in_steps) r.step_host_wait_ns += gap;
        } else if (cause == IdleCause::kKernelWait) {
          r.kernel_wait_ns += gap;
          if (in_steps) r.step_kernel_wait_ns += gap;
        } else {
          r.other_ns += gap;
          if (in_steps) r.step_other_ns += gap;
        }
        ++r.gaps;
      }
      if (end == INT64_MIN || start > end) {
        if (end != INT64_MIN) r.busy_ns += end - busy_from;
        busy_from = start;
      }
      end = std::max(end, stop);
    }
    if (end != INT64_MIN) r.busy_ns += end - busy_from;
    rows.push_back(std::move(r));
  }
  ByDeviceStream(rows);
  return rows;
}

std::vector<CopyRow> Copies(const Events& ev, const StepScope& scope) {
  // By (device, kind): the copies, and the bandwidth steps of those with bytes.
  std::map<std::pair<std::string, std::string_view>, std::pair<CopyRow, std::vector<std::pair<int64_t, double>>>> by;
  for (const uint32_t e : ev.DeviceEvents()) {
    const Role role = ev.RoleOf(e);
    if (role != Role::kMemcpy && role != Role::kMemset) continue;
    auto& [r, steps] = by[{DeviceName(ev, ev.Iv(e).lane), ev.Name(e)}];
    const int64_t dur = ev.Dur(e), bytes = ev.CopyBytes(e);
    ++r.count;
    r.time_ns += dur;
    const bool in_steps = AnalysedDeviceStep(ev, e, scope) >= 0;
    if (in_steps) ++r.step_count, r.step_time_ns += dur, r.step_bytes += std::max<int64_t>(bytes, 0);
    if (bytes < 0) continue;
    ++r.with_bytes;
    r.bytes += bytes;
    r.time_with_bytes_ns += dur;
    if (dur <= 0) continue;
    const double bw = static_cast<double>(bytes) / static_cast<double>(dur);
    steps.emplace_back(ev.Iv(e).start_ns, bw);
    steps.emplace_back(ev.Iv(e).end_ns, -bw);
  }
  std::vector<CopyRow> rows;
  for (auto& [key, value] : by) {
    auto& [r, steps] = value;
    r.device = key.first;
    r.kind = std::string(key.second);
    // At one instant a copy that ends leaves before one that starts: copies that touch
    // do not run at once.
    std::sort(steps.begin(), steps.end());
    double level = 0;
    for (const auto& [ts, bw] : steps) r.peak_gb_per_s = std::max(r.peak_gb_per_s, level += bw);
    rows.push_back(std::move(r));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const CopyRow& x, const CopyRow& y) {
    return x.device != y.device ? x.device < y.device : x.time_ns > y.time_ns;
  });
  return rows;
}

namespace {

// The runtime and driver calls whose device work counts as a launch: those HTA's
// get_runtime_launch_events_mask names (hta/common/trace_symbol_table.py).
bool IsLaunchCall(std::string_view name) {
  static constexpr std::string_view kCalls[] = {"cudaLaunchKernel",
                                                "cudaLaunchKernelExC",
                                                "cuLaunchKernel",
                                                "cuLaunchKernelEx",
                                                "cudaMemcpyAsync",
                                                "cudaMemsetAsync",
                                                "runFunction - job_prep_and_submit_for_execution",
                                                "hipLaunchKernel",
                                                "hipExtModuleLaunchKernel",
                                                "hipMemsetAsync",
                                                "hipMemcpyAsync",
                                                "hipMemcpyWithStream"};
  return std::find(std::begin(kCalls), std::end(kCalls), name) != std::end(kCalls);
}

// The launches of device work by such a call: (launch, device event) pairs.
template <typename Fn>
void ForEachLaunch(const Events& ev, Fn fn) {
  for (const Launch& l : ev.model().launches) {
    if (l.host_event == Launch::kNoEvent) continue;
    const size_t e = l.device_event;
    if (!IsDeviceRole(ev.RoleOf(e)) || ev.RoleOf(l.host_event) != Role::kRuntime) continue;
    if (!IsLaunchCall(ev.Name(l.host_event))) continue;
    fn(l, e);
  }
}

// The nearest-rank percentiles (statistics.h) without sorting the whole: each rank is
// selected in the part above the one before.
Percentiles Distribution(std::vector<int64_t> v) {
  Percentiles p;
  if (v.empty()) return p;
  const size_t n = v.size();
  auto select = [&v, n](size_t from, size_t q) {
    const size_t rank = NearestRankIndex(n, q);
    std::nth_element(v.begin() + static_cast<ptrdiff_t>(from), v.begin() + static_cast<ptrdiff_t>(rank), v.end());
    return rank;
  };
  size_t at = select(0, 50);
  p.p50 = v[at];
  at = select(at, 90);
  p.p90 = v[at];
  at = select(at, 99);
  p.p99 = v[at];
  p.max = *std::max_element(v.begin() + static_cast<ptrdiff_t>(at), v.end());
  __int128 sum = 0;
  for (int64_t x : v) sum += x;
  p.mean = static_cast<int64_t>(sum / static_cast<__int128>(n));
  return p;
}

}  // namespace

LaunchStats KernelLaunches(const Events& ev, const StepScope& scope) {
  std::vector<int64_t> delay, cpu, gpu;
  LaunchStats s;
  ForEachLaunch(ev, [&](const Launch& l, size_t e) {
    const Interval& call = ev.Iv(l.host_event);
    const Interval& work = ev.Iv(e);
    const int64_t call_ns = call.end_ns - call.start_ns, work_ns = work.end_ns - work.start_ns;
    const int64_t d = std::max<int64_t>(0, work.start_ns - call.end_ns);
    delay.push_back(d), cpu.push_back(call_ns), gpu.push_back(work_ns);
    s.short_kernels += work_ns < call_ns;
    s.slow_launches += call_ns > kSlowLaunchNs;
    s.long_delays += d > kLongDelayNs;
    s.step_count += AnalysedDeviceStep(ev, e, scope) >= 0;
  });
  s.count = delay.size();
  s.launch_delay = Distribution(std::move(delay));
  s.cpu_duration = Distribution(std::move(cpu));
  s.gpu_duration = Distribution(std::move(gpu));
  return s;
}

std::vector<QueueRow> QueueLength(const Events& ev) {
  const Trace& t = ev.trace();
  // Per stream lane: +1 when a launch call begins, -1 when its work starts. Each comes
  // mostly in order: sorted apart, then merged.
  std::map<uint32_t, std::pair<std::vector<int64_t>, std::vector<int64_t>>> changes;
  ForEachLaunch(ev, [&](const Launch& l, size_t e) {
    const Interval& work = ev.Iv(e);
    auto& [enter, leave] = changes[work.lane];
    enter.push_back(ev.Iv(l.host_event).start_ns);
    leave.push_back(work.start_ns);
  });
  std::vector<QueueRow> rows;
  for (auto& [lane, c] : changes) {
    auto& [enter, leave] = c;
    SortRuns(enter.begin(), enter.end(), std::less<>());
    SortRuns(leave.begin(), leave.end(), std::less<>());
    QueueRow r;
    r.device = DeviceName(ev, lane);
    r.stream = t.lanes[lane].tid;
    std::vector<int64_t> levels;
    levels.reserve(2 * enter.size());
    int64_t level = 0;
    // At one instant, work that starts leaves before a launch enters.
    for (size_t i = 0, j = 0; i < enter.size() || j < leave.size();) {
      if (j < leave.size() && (i == enter.size() || leave[j] <= enter[i])) {
        ++j, --level;
      } else {
        ++i, ++level;
      }
      levels.push_back(level);
    }
    r.launches = enter.size();
    r.length = Distribution(levels);
    __int128 sum = 0;
    for (int64_t v : levels) sum += v;
    r.mean = levels.empty() ? 0 : static_cast<double>(sum) / static_cast<double>(levels.size());
    rows.push_back(std::move(r));
  }
  ByDeviceStream(rows);
  return rows;
}

std::vector<KernelTypeRow> KernelTypes(const Events& ev) {
  // HTA's types, in the order its names join them ("COMPUTATION overlapping MEMORY").
  static constexpr const char* kTypeNames[] = {"COMPUTATION", "COMMUNICATION", "MEMORY"};
  std::map<std::string, std::array<Spans, 3>> devices;
  for (const uint32_t e : ev.DeviceEvents()) {
    const Interval& iv = ev.Iv(e);
    const int type = ev.RoleOf(e) != Role::kKernel ? 2 : ev.IsCommunication(e) ? 1 : 0;
    devices[DeviceName(ev, iv.lane)][static_cast<size_t>(type)].push_back({iv.start_ns, iv.end_ns});
  }
  std::vector<KernelTypeRow> rows;
  for (auto& [device, spans] : devices) {
    // Each type's union, then one sweep over their edges: between two edges the set of
    // types running is the bits still open.
    std::vector<std::pair<int64_t, int32_t>> edges;  // (time, +bit at a start, -bit at an end)
    for (size_t type = 0; type < spans.size(); ++type) {
      const auto bit = static_cast<int32_t>(1u << type);
      for (const auto& [start, end] : Union(std::move(spans[type]))) {
        edges.push_back({start, bit});
        edges.push_back({end, -bit});
      }
    }
    std::sort(edges.begin(), edges.end());
    std::map<uint32_t, int64_t> by_set;
    int64_t busy = 0;
    int32_t open = 0;
    for (size_t i = 0; i < edges.size(); ++i) {
      open += edges[i].second;
      if (open == 0 || i + 1 == edges.size()) continue;
      const int64_t length = edges[i + 1].first - edges[i].first;
      by_set[static_cast<uint32_t>(open)] += length;
      busy += length;
    }
    const size_t first = rows.size();
    for (const auto& [set, ns] : by_set) {
      if (ns == 0) continue;
      KernelTypeRow r;
      r.device = device;
      for (uint32_t type = 0; type < 3; ++type) {
        if (set & (1u << type)) r.type += (r.type.empty() ? "" : " overlapping ") + std::string(kTypeNames[type]);
      }
      r.time_ns = ns;
      r.busy_ns = busy;
      rows.push_back(std::move(r));
    }
    std::stable_sort(rows.begin() + static_cast<std::ptrdiff_t>(first), rows.end(),
                     [](const KernelTypeRow& x, const KernelTypeRow& y) { return x.time_ns > y.time_ns; });
  }
  return rows;
}

TemporalRow SplitDeviceTime(Spans all, Spans compute, Spans comm) {
  TemporalRow r;
  all = Union(std::move(all));
  if (all.empty()) return r;
  compute = Union(std::move(compute));
  comm = Union(std::move(comm));
  const int64_t busy = Length(all);
  r.span_ns = all.back().second - all.front().first;  // times lie within 2^62 (event_parser.cc)
  r.compute_ns = Length(compute);
  r.non_compute_ns = busy - r.compute_ns;
  r.idle_ns = r.span_ns - busy;
  r.comm_ns = Length(comm);
  r.overlap_ns = Length(Intersect(comm, compute));
  return r;
}

std::vector<TemporalRow> TemporalBreakdown(const Events& ev) {
  std::map<std::string, std::array<Spans, 3>> devices;  // all, computation, communication
  for (const uint32_t e : ev.DeviceEvents()) {
    const Interval& iv = ev.Iv(e);
    std::array<Spans, 3>& spans = devices[DeviceName(ev, iv.lane)];
    spans[0].push_back({iv.start_ns, iv.end_ns});
    if (ev.RoleOf(e) == Role::kKernel) spans[ev.IsCommunication(e) ? 2 : 1].push_back({iv.start_ns, iv.end_ns});
  }
  std::vector<TemporalRow> rows;
  for (auto& [device, spans] : devices) {
    TemporalRow r = SplitDeviceTime(std::move(spans[0]), std::move(spans[1]), std::move(spans[2]));
    r.device = device;
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace torch2pprof::analysis
