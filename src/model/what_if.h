// A step's dependency graph and its re-run with a change applied: what the step would take
// without a cause. Daydream's idea (Zhu et al., USENIX ATC 2020): nodes are the host
// threads' stretches and the device's work as recorded, edges what ordered them; a change
// rescales or drops nodes and edges, and the graph is replayed in order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace torch2pprof {

// What a node is, for the changes that select it (a node may be several).
enum WhatTag : uint32_t {
  kTagPython = 1u << 0,            // host: Python with no operator open, or nothing open
  kTagOperator = 1u << 1,          // host: an operator's own time
  kTagLaunch = 1u << 2,            // host: a runtime call that launches work
  kTagSync = 1u << 3,              // host: a synchronization (not a copy's own)
  kTagCopyCall = 1u << 4,          // host: a pageable copy's call, or the synchronization that waits for it
  kTagDataLoader = 1u << 5,        // host: in a DataLoader's next()
  kTagSleep = 1u << 6,             // host: time.sleep
  kTagThreadWait = 1u << 7,        // host: a blocking wait for another thread (join, lock, queue, run_backward)
  kTagInit = 1u << 8,              // host: one-time initialisation (a runtime call of 100 ms or more)
  kTagOptimizer = 1u << 9,         // host: in a foreach optimizer's step
  kTagCommunication = 1u << 10,    // host: a collective run on the host (gloo); device: a communication kernel
  kTagFsdp = 1u << 11,             // host: FSDP's own work (hooks, all-gathers, reduce-scatters) at one rank
  kTagDevice = 1u << 16,           // device work
  kTagFp32Matmul = 1u << 17,       // device: a matmul or convolution kernel off the Tensor Cores
  kTagPageableCopy = 1u << 18,     // device: a copy from or to pageable memory
  kTagOptimizerKernel = 1u << 19,  // device: launched by a foreach optimizer's step
};

// The changes the engine simulates; docs/reference.md ("What the savings simulate") has
// each one's assumption.
enum WhatIf : uint32_t {
  kWhatIfPinned = 1u << 0,          // pageable copies made pinned and non_blocking
  kWhatIfNoSync = 1u << 1,          // synchronizations removed
  kWhatIfTf32 = 1u << 2,            // FP32 matmuls and convolutions on the Tensor Cores
  kWhatIfGraphs = 1u << 3,          // launches and Python between operators captured (CUDA graphs)
  kWhatIfNoPython = 1u << 4,        // Python between operators removed (graphs already replay)
  kWhatIfFewerHostOps = 1u << 5,    // operators' host time halved (fused, fewer)
  kWhatIfFusedOptimizer = 1u << 6,  // a foreach optimizer made fused
  kWhatIfNoDataLoader = 1u << 7,    // the DataLoader's wait removed
  kWhatIfNoSleep = 1u << 8,         // time.sleep removed
  kWhatIfNoInit = 1u << 9,          // one-time initialisation left out of the step
  kWhatIfNoFsdp = 1u << 10,         // FSDP left out where it has one rank to shard over
  kWhatIfLink = 1u << 11,           // collectives' kernels at the link's bus bandwidth: no wait for peers
};
inline constexpr int kWhatIfs = 12;

// Python with no operator open counts as the time between operators (what graphs and
// compiled code skip) up to this long at a stretch; a longer stretch is other work.
inline constexpr int64_t kPythonGapNs = 1000 * 1000;

// Where the host is the only processor, an operator's own time is its work, not only its
// dispatch: fewer or fused host operators save only the dispatch of the short ones. A
// piece of an operator with this much own time or more is compute (PyTorch's dispatch of
// one operator costs a few microseconds on a CPU).
inline constexpr int64_t kHostComputeNs = 20 * 1000;

// The tags of the nodes a change acts on: where none is in a step's graph, the change
// saves nothing there and is not replayed.
uint32_t TagsOf(uint32_t change);

// The stated factors: what a change leaves of a node's time.
inline constexpr double kTf32Factor = 0.5;            // Tensor Cores at least twice FP32's FMA rate
inline constexpr double kPinnedCopyFactor = 0.5;      // pinned memory at least twice pageable's bandwidth
inline constexpr double kHostOpsFactor = 0.5;         // operators' host time halved
inline constexpr double kFusedOptimizerFactor = 0.1;  // a fused step: a few launches for the many

struct WhatNode {
  int64_t start = 0, end = 0;  // as recorded
  // Its own time: the whole for work; for a wait, the time after what it waited for ended
  // (it still takes that, however early the other ends).
  int64_t own = 0;
  uint32_t tags = 0;
  uint32_t lane = 0;
  bool fixed = false;  // began before the step: its time stays as recorded
  // Its end is the step's end where it is the last: the step's own thread and the
  // device work launched in the step (other threads count through what waits for them).
  bool ends_step = false;
  // A communication kernel's time were it to move its message at the link's bus bandwidth
  // (-1: unknown); the rest of its time is waiting for the other ranks.
  int64_t link_ns = -1;
};

// to.start (start edge) or to.end (end edge) no earlier than from's end plus lag, or
// (from_start) than from's start plus lag: a woken thread after its waker began, a launch
// as far into its call as it came (held within the call's simulated time).
struct WhatEdge {
  uint32_t from = 0, to = 0;
  int64_t lag = 0;
  bool from_start = false;
  bool to_end = false;
  bool within = false;  // from_start: the lag held within from's simulated time (a launch in its call)
};

struct StepGraph {
  int64_t start = 0;               // the step's start: nodes with no edge in start here (or as recorded)
  std::vector<WhatNode> nodes;     // in an order where every edge goes forward (from < to)
  std::vector<WhatEdge> edges;     // by `to`, then start edges before end edges
  uint32_t launch_call_ns = 5000;  // a copy call made non_blocking takes a launch's time
  uint32_t cycles = 0;             // edges that would close a cycle, dropped (none in a sound trace)
};

struct Replay {
  int64_t end = 0;        // the step's simulated end: the last of the nodes that end it
  int64_t device_ns = 0;  // device work's union in the simulated step
};

// The step re-run with `changes` (WhatIf bits) applied. With none it gives back the
// recorded step where the graph explains it; a change's saving is the difference of two
// replays, so the graph's own error cancels.
// device_ns is measured only where asked (it sorts the device's work).
Replay Simulate(const StepGraph& g, uint32_t changes, bool device_ns = false);
// Several replays at once, each with its changes: one pass over the graph for all.
std::vector<Replay> SimulateMany(const StepGraph& g, const std::vector<uint32_t>& changes, bool device_ns = false);

// The graph as text, a node a line (its times, tags and edges in): for tests' messages.
std::string Describe(const StepGraph& g);

}  // namespace torch2pprof
