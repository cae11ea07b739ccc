// Kernels (tb-semantics §6) and devices (§7); a device is the model's: its lanes'
// args.device, named cuda:N (mtia:N for MTIA).
#include <algorithm>
#include <limits>
#include <map>
#include <unordered_map>

#include "analysis/spans.h"
#include "analysis/stages.h"
#include "base/saturate.h"

namespace torch2pprof::analysis {

std::vector<KernelRow> Kernels(const Events& ev, int64_t* total_ns, const StepScope* per_step, uint64_t* saturated) {
  std::vector<KernelRow> rows;
  std::unordered_map<uint32_t, size_t> row_of;
  std::vector<double> bw, bsum, ow, osum;
  *total_ns = 0;
  for (const uint32_t e : ev.DeviceEvents()) {
    if (ev.RoleOf(e) != Role::kKernel) continue;
    auto [it, added] = row_of.try_emplace(ev.Iv(e).name, rows.size());
    if (added) {
      rows.emplace_back();
      rows.back().name = std::string(ev.Name(e));
      rows.back().min_ns = std::numeric_limits<int64_t>::max();
      bw.push_back(0), bsum.push_back(0), ow.push_back(0), osum.push_back(0);
    }
    size_t k = it->second;
    KernelRow& r = rows[k];
    int64_t dur = ev.Dur(e);
    ++r.calls;
    r.total_ns = SaturatingAdd(r.total_ns, dur, saturated);
    r.min_ns = std::min(r.min_ns, dur);
    r.max_ns = std::max(r.max_ns, dur);
    *total_ns = SaturatingAdd(*total_ns, dur, saturated);
    double w = static_cast<double>(dur);
    const EventArgs& args = ev.Args(e);
    if (args.blocks_per_sm >= 0) bw[k] += w, bsum[k] += w * args.blocks_per_sm, r.blocks_per_sm = 0;
    // Kineto writes an occupancy of 0 where CUPTI gives no estimate (kernels with large
    // shared memory or thread-block clusters: H100's nvjet GEMMs, cuDNN's wgmma); a
    // running kernel has a warp or more, so 0 is no value, and kernels without one are
    // left out of the weighted mean.
    if (args.occupancy > 0) ow[k] += w, osum[k] += w * args.occupancy, r.occupancy = 0;
    if (per_step) {
      int64_t step = AnalysedDeviceStep(ev, e, *per_step);
      if (step >= 0) r.step_total.Add(static_cast<uint32_t>(step), dur);
    }
  }
  for (size_t k = 0; k < rows.size(); ++k) {
    KernelRow& r = rows[k];
    r.step_total.Finish();
    if (r.blocks_per_sm >= 0) r.blocks_per_sm = bw[k] > 0 ? bsum[k] / bw[k] : -1;
    if (r.occupancy >= 0) r.occupancy = ow[k] > 0 ? osum[k] / ow[k] : -1;
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const KernelRow& x, const KernelRow& y) { return x.total_ns > y.total_ns; });
  return rows;
}

std::vector<GpuRow> Gpus(const Events& ev, const std::vector<DeviceInfo>& devices, std::pair<int64_t, int64_t> window) {
  const TraceModel& m = ev.model();
  // Devices in order of (id, name); each with its stream lanes.
  std::map<std::pair<int64_t, std::string>, std::vector<uint32_t>> lanes_of;
  for (uint32_t l = 0; l < m.lanes.size(); ++l) {
    if (m.lanes[l].device) lanes_of[{m.lanes[l].device_id, m.lanes[l].device_name}].push_back(l);
  }
  std::vector<int32_t> device_of_lane(m.lanes.size(), -1);
  std::vector<GpuRow> rows;
  for (const auto& [key, lanes] : lanes_of) {
    GpuRow g;
    g.device = key.second;
    g.device_id = key.first;
    for (const DeviceInfo& info : devices) {
      if (info.device == g.device) g.name = info.name;
    }
    g.streams = static_cast<int>(lanes.size());
    for (uint32_t l : lanes) device_of_lane[l] = static_cast<int32_t>(rows.size());
    rows.push_back(g);
  }
  // One pass over the events fills every device's busy and kernel spans.
  std::vector<Spans> busy(rows.size()), kernels(rows.size());
  for (const uint32_t e : ev.DeviceEvents()) {
    Role r = ev.RoleOf(e);
    int32_t d = device_of_lane[ev.Iv(e).lane];
    if (d < 0) continue;
    busy[static_cast<size_t>(d)].emplace_back(ev.Iv(e).start_ns, ev.Iv(e).end_ns);
    if (r == Role::kKernel) kernels[static_cast<size_t>(d)].push_back(busy[static_cast<size_t>(d)].back());
  }
  for (size_t d = 0; d < rows.size(); ++d) {
    GpuRow& g = rows[d];
    g.busy_ns = Length(Union(std::move(busy[d])));
    Spans k = Union(std::move(kernels[d]));
    g.kernel_ns = Length(k);
    g.window_ns = window.second - window.first;
    g.window_kernel_ns = g.window_ns > 0 ? LengthWithin(k, window.first, window.second) : 0;
  }
  return rows;
}

}  // namespace torch2pprof::analysis

namespace torch2pprof {

double GpuRow::utilization() const {
  return window_ns > 0 ? static_cast<double>(window_kernel_ns) / static_cast<double>(window_ns) : 0;
}

double GpuUtilization(const std::vector<GpuRow>& gpus) {
  int64_t window = 0, kernel = 0;
  for (const GpuRow& g : gpus) window += g.window_ns, kernel += g.window_kernel_ns;
  return window > 0 ? static_cast<double>(kernel) / static_cast<double>(window) : 0;
}

}  // namespace torch2pprof
