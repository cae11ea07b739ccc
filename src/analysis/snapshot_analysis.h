// analyze's stage for memory snapshots: the dump's segments summed per device, the
// replayed peak and out-of-memory events with the code holding memory there.
#pragma once

#include "torch2pprof/analysis.h"
#include "torch2pprof/snapshot.h"
#include "torch2pprof/stages/snapshot.h"

namespace torch2pprof {

SnapshotAnalysis AnalyzeMemorySnapshot(const MemorySnapshot& s);

}  // namespace torch2pprof
