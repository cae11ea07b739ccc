#include "analysis/snapshot_analysis.h"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>

#include "model/memory_replay.h"
#include "torch2pprof/stages/trace_model.h"

namespace torch2pprof {

namespace {

// Stretches of the ring the timeline keeps at most: enough for a chart's width.
constexpr size_t kTimelinePoints = 2000;

// Live blocks summed by site, most bytes first; a stack's site is found once, and a
// block costs a look-up by the site's address, not a copy of its text.
std::vector<SnapshotSite> Sites(SnapshotNames& names, const std::vector<LiveBlock>& live) {
  std::unordered_map<const std::string*, SnapshotSite> by[2];  // [freed later]: by the site's text
  for (const LiveBlock& b : live) {
    const std::string& site = names.StackSite(b.stack);
    SnapshotSite& row = by[b.kind == LiveBlock::kFreedLater][&site];
    row.bytes += b.bytes;
    row.blocks += 1;
  }
  // Two stacks can have one site text at two addresses (a frame's name and an operator's):
  // rows are summed by the text, in its order.
  std::map<std::string, SnapshotSite> by_text;
  for (int later = 0; later < 2; ++later) {
    for (const auto& [site, part] : by[later]) {
      const std::string text = later ? "[before the window; freed at] " + *site : *site;
      SnapshotSite& row = by_text[text];
      row.site = text;
      row.bytes += part.bytes;
      row.blocks += part.blocks;
    }
  }
  std::vector<SnapshotSite> out;
  for (auto& [site, row] : by_text) out.push_back(std::move(row));
  std::stable_sort(out.begin(), out.end(),
                   [](const SnapshotSite& a, const SnapshotSite& b) { return a.bytes > b.bytes; });
  return out;
}

// The ring replayed by the site of each allocation (SiteSeries): the levels of the sites
// live most at the peak, the others' sum and the bytes from before the window, at each
// point of `timeline` (the stretch's highest total, as the timeline keeps it).
std::vector<SiteSeries> SiteTimeline(const MemorySnapshot& s, SnapshotNames& names, const SnapshotRing& ring,
                                     const DevicePeak& peak, const std::vector<SnapshotLevel>& timeline) {
  const std::string before_site = kBeforeWindow, other_site = kOtherSites;
  // Which sites get a series: those of the ring's allocations live at the peak, by bytes.
  std::unordered_map<const std::string*, int64_t> at_peak;
  for (const LiveBlock& b : peak.live) {
    if (b.kind == LiveBlock::kRingAlloc) at_peak[&names.StackSite(b.stack)] += b.bytes;
  }
  std::vector<std::pair<int64_t, const std::string*>> ranked;
  for (const auto& [site, bytes] : at_peak) ranked.push_back({bytes, site});
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : *a.second < *b.second;
  });
  if (ranked.size() > kSiteSeries) ranked.resize(kSiteSeries);
  std::unordered_map<const std::string*, size_t> series_of;
  std::vector<SiteSeries> out;
  for (const auto& [bytes, site] : ranked) {
    series_of[site] = out.size();
    out.push_back({*site, {}, {}, 0});
  }
  const size_t other = out.size(), before = other + 1;
  out.push_back({other_site, {}, {}, 0});
  out.push_back({before_site, {}, {}, 0});
  std::vector<int64_t> level(out.size(), 0), largest(out.size(), -1);
  std::vector<uint32_t> stack_of(out.size(), 0);
  level[before] = peak.before_bytes;
  std::unordered_map<int64_t, std::pair<size_t, int64_t>> live;  // addr -> (series, bytes)
  auto series = [&](uint32_t stack) {
    auto it = series_of.find(&names.StackSite(stack));
    return it == series_of.end() ? other : it->second;
  };
  const size_t stretch = (ring.size() + kTimelinePoints - 1) / kTimelinePoints;
  auto point = [&](size_t k) {
    for (size_t j = 0; j < out.size(); ++j) out[j].bytes[k] = level[j];
  };
  for (SiteSeries& x : out) x.bytes.assign(timeline.size(), 0);
  point(0);
  int64_t total = peak.before_bytes, best = INT64_MIN;
  size_t k = 0;
  for (size_t i = 0; i < ring.size(); ++i) {
    const SnapshotEvent& e = ring[i];
    const int64_t change = AllocatedChange(e);
    if (change > 0) {
      const size_t j = series(e.stack);
      level[j] += change;
      live[e.addr] = {j, change};
      if (change > largest[j]) largest[j] = change, stack_of[j] = e.stack;
    } else if (change < 0) {
      auto it = live.find(e.addr);
      if (it != live.end()) {
        level[it->second.first] -= it->second.second;
        live.erase(it);
      } else {
        level[before] += change;  // a block from before the window
      }
    }
    total += change;
    if (i % stretch == 0) {
      ++k;
      best = INT64_MIN;
    }
    if (k < timeline.size() && total > best) {
      best = total;
      point(k);
    }
    if (static_cast<int64_t>(i) == peak.peak_entry) {
      for (size_t j = 0; j < out.size(); ++j) out[j].peak_bytes = level[j];
    }
  }
  if (peak.peak_entry < 0) {
    for (size_t j = 0; j < out.size(); ++j) out[j].peak_bytes = out[j].bytes.empty() ? 0 : out[j].bytes[0];
  }
  for (size_t j = 0; j < out.size(); ++j) {
    for (uint32_t frame : s.stacks[stack_of[j]]) {
      if (!names.IsPlumbing(frame)) out[j].stack.push_back(names.FrameName(frame));
    }
  }
  // Series that never hold a byte say nothing.
  std::vector<SiteSeries> kept;
  for (SiteSeries& x : out) {
    if (std::any_of(x.bytes.begin(), x.bytes.end(), [](int64_t v) { return v != 0; })) kept.push_back(std::move(x));
  }
  return kept;
}

}  // namespace

SnapshotAnalysis AnalyzeMemorySnapshot(const MemorySnapshot& s) {
  SnapshotAnalysis a;
  a.file = s.file;
  a.overflowed = s.overflowed;
  a.expandable_segments = s.expandable_segments;
  SnapshotNames names(s);
  for (const DevicePeak& peak : DevicePeaks(s)) {
    SnapshotDevice d;
    d.device = DeviceName("cuda", peak.device);
    for (const SnapshotSegment* segment : peak.segments) {
      const SnapshotSegment& seg = *segment;
      ++d.segments;
      d.reserved_bytes += seg.total_size;
      for (const SnapshotBlock& b : seg.blocks) {
        if (b.state == BlockState::kActiveAllocated) {
          d.allocated_bytes += Requested(b);
          d.rounding_bytes += b.size - Requested(b);
        } else if (b.state == BlockState::kActivePendingFree) {
          d.pending_free_bytes += b.size;
        } else {
          d.free_bytes += b.size;
          d.largest_free_bytes = std::max(d.largest_free_bytes, b.size);
        }
      }
    }
    const SnapshotRing& ring = Ring(s, peak.device);
    d.ring_entries = static_cast<int64_t>(ring.size());
    d.peak_bytes = peak.peak_bytes;
    d.peak_entry = peak.peak_entry;
    d.peak_time_us = peak.peak_time_us;
    d.before_bytes = peak.before_bytes;
    d.peak_sites = Sites(names, peak.live);
    d.consistent = peak.consistent;
    if (!ring.empty()) d.first_time_us = ring.front().time_us, d.last_time_us = ring.back().time_us;
    // Replayed forwards from the levels before the ring, as DevicePeaks replays.
    int64_t net_reserved = 0;
    for (const SnapshotEvent& e : ring) net_reserved += ReservedChange(e);
    int64_t allocated = peak.before_bytes, reserved = peak.reserved_bytes - net_reserved;
    const size_t stretch = (ring.size() + kTimelinePoints - 1) / kTimelinePoints;
    d.timeline.push_back(SnapshotLevel{d.first_time_us, allocated, reserved});
    for (size_t i = 0; i < ring.size(); ++i) {
      const SnapshotEvent& e = ring[i];
      allocated += AllocatedChange(e), reserved += ReservedChange(e);
      d.allocs += e.action == SnapshotAction::kAlloc;
      d.frees += e.action == SnapshotAction::kFreeCompleted;
      d.segment_allocs += e.action == SnapshotAction::kSegmentAlloc || e.action == SnapshotAction::kSegmentMap;
      d.segment_frees += e.action == SnapshotAction::kSegmentFree || e.action == SnapshotAction::kSegmentUnmap;
      if (i % stretch == 0) {
        d.timeline.push_back(SnapshotLevel{e.time_us, allocated, reserved});
      } else {
        SnapshotLevel& last = d.timeline.back();
        last.allocated_bytes = std::max(last.allocated_bytes, allocated);
        last.reserved_bytes = std::max(last.reserved_bytes, reserved);
      }
      if (e.action == SnapshotAction::kOom) {
        SnapshotOom oom;
        oom.entry = static_cast<int64_t>(i);
        oom.time_us = e.time_us;
        oom.requested_bytes = e.size;
        oom.device_free_bytes = DeviceFree(e);
        oom.allocated_bytes = allocated;
        oom.reserved_bytes = reserved;
        // The allocator asks the device for a new segment only when no cached block holds
        // the request: with more free on the device than asked, its own limit said no.
        if (oom.device_free_bytes >= 0) {
          oom.cause = oom.device_free_bytes < e.size ? OomCause::kDeviceFull : OomCause::kProcessLimit;
        }
        oom.fragmented = reserved - allocated >= e.size;
        d.ooms.push_back(std::move(oom));
      }
    }
    d.site_timeline = SiteTimeline(s, names, ring, peak, d.timeline);
    for (size_t k = 0; k < d.ooms.size(); ++k) {
      if (k < kOomSites / 2 || k + kOomSites / 2 >= d.ooms.size()) {
        d.ooms[k].sites = Sites(names, LiveAfter(s, peak.device, peak.segments, d.ooms[k].entry));
      }
    }
    a.devices.push_back(std::move(d));
  }
  return a;
}

}  // namespace torch2pprof
