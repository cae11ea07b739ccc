// A memory snapshot as a pprof profile: bytes and blocks by allocation stack at each
// device's peak (replayed from its ring of actions), at the dump, and allocated over the
// recorded window.
#pragma once

#include "model/memory_replay.h"
#include "torch2pprof/profile.h"
#include "torch2pprof/stages/snapshot.h"

namespace torch2pprof {

struct SnapshotProfileOptions {
  bool all_frames = false;  // keep the interpreter's and the allocator's own frames
};

// Sample types inuse_space/inuse_objects (at each device's peak; default),
// dump_space/dump_objects (at the dump, summing to the reserved bytes) and
// alloc_space/alloc_objects (every alloc of the ring).
// peaks: DevicePeaks(s), computed once by the caller (it also warns from them).
Profile SnapshotProfile(const MemorySnapshot& s, const std::vector<DevicePeak>& peaks,
                        const SnapshotProfileOptions& options);

}  // namespace torch2pprof
