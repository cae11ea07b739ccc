// What analyze finds in a CUDA memory snapshot (AnalyzeSnapshot in torch2pprof.h), as
// plain numbers in bytes: each device at the dump, at its peak and at each OOM, by site.
#pragma once

#include <cstdint>
#include <iterator>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "torch2pprof/analysis.h"

namespace torch2pprof {

// Bytes live at a moment by the code that allocated them: the innermost Python frame of
// the block's stack ("function file:line"), else the backward node or operator
// (docs/reference.md), else "[no stack recorded]". A block allocated before the recorded
// window and freed after the moment has only its free's stack: "[before the window;
// freed at] " and the site of the free.
struct SnapshotSite {
  std::string site;
  int64_t bytes = 0;
  int64_t blocks = 0;
};

// Why an allocation failed, as the snapshot's numbers tell (docs/reference.md, "Memory
// snapshots"): the device had less free than was asked (full), or more (the caching
// allocator's own limit refused it: a per-process memory fraction).
enum class OomCause { kUnknown, kDeviceFull, kProcessLimit };

// An out-of-memory event of the ring (action oom).
struct SnapshotOom {
  int64_t entry = 0;  // its index in the device's ring
  int64_t time_us = 0;
  int64_t requested_bytes = 0;
  int64_t device_free_bytes = -1;  // what the device had free; -1 not recorded
  int64_t allocated_bytes = 0;     // replayed at the event
  int64_t reserved_bytes = 0;      // replayed at the event: the process's segments
  OomCause cause = OomCause::kUnknown;
  // The reserved bytes not allocated were enough for the request, but in pieces no one
  // of which held it: fragmentation.
  bool fragmented = false;
  std::vector<SnapshotSite> sites;  // live at the event, most bytes first (see kOomSites)
};
// Out-of-memory events of a device whose live blocks are read out (each is a replay of
// the device's ring): the first and the last kOomSites / 2; those between keep their numbers.
inline constexpr size_t kOomSites = 64;

// Allocated and reserved bytes after a stretch of the ring, for the timeline.
struct SnapshotLevel {
  int64_t time_us = 0;
  int64_t allocated_bytes = 0;  // the highest level in the stretch
  int64_t reserved_bytes = 0;
};

struct SnapshotDevice {
  std::string device;  // "cuda:0"
  // At the dump, as torch's _memory_viz segment summary (segsum) counts, except that
  // blocks whose free waits for their stream are pending, not free:
  int64_t segments = 0;
  int64_t reserved_bytes = 0;      // the segments' total_size
  int64_t allocated_bytes = 0;     // active_allocated blocks, the bytes asked for
  int64_t rounding_bytes = 0;      // their size beyond it: internal fragmentation
  int64_t pending_free_bytes = 0;  // active_pending_free blocks
  int64_t free_bytes = 0;          // inactive blocks: cached, free to reuse (external fragmentation)
  int64_t largest_free_bytes = 0;  // the largest inactive block: the most one allocation gets without a new segment
  // The recorded window (the device's ring of allocator actions):
  int64_t ring_entries = 0, allocs = 0, frees = 0, segment_allocs = 0, segment_frees = 0;
  int64_t first_time_us = 0, last_time_us = 0;
  int64_t peak_bytes = 0;   // allocated, bytes asked for
  int64_t peak_entry = -1;  // the ring entry after which it holds; -1 before the ring
  int64_t peak_time_us = 0;
  int64_t before_bytes = 0;              // allocated before the ring's first entry
  bool consistent = true;                // the ring and the segments agree
  std::vector<SnapshotSite> peak_sites;  // live at the peak, most bytes first
  std::vector<SnapshotOom> ooms;
  std::vector<SnapshotLevel> timeline;  // at most a few thousand stretches, in time order
  // The sites holding most at the peak (kSiteSeries at most), then the other sites' sum
  // and what was allocated before the window; each present only where it holds bytes.
  std::vector<SiteSeries> site_timeline;
};

struct SnapshotAnalysis {
  std::string file;
  std::vector<SnapshotDevice> devices;
  bool overflowed = false;       // allocator_settings' trace_alloc_overflowed
  int expandable_segments = -1;  // allocator_settings' expandable_segments: 0, 1; -1 not written
  FlameGraph flame;              // memory by stack (AnalyzeOptions::flame_graph)
};

}  // namespace torch2pprof
