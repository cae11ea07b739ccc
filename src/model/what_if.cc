#include "model/what_if.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace torch2pprof {
namespace {

int64_t Scaled(int64_t ns, double f) { return static_cast<int64_t>(std::llround(static_cast<double>(ns) * f)); }

// What a change leaves of a node's own time.
int64_t OwnAfter(const StepGraph& g, const WhatNode& n, uint32_t c) {
  int64_t own = n.own;
  const uint32_t t = n.tags;
  if (t & kTagDevice) {
    if ((c & kWhatIfTf32) && (t & kTagFp32Matmul)) own = Scaled(own, kTf32Factor);
    if ((c & kWhatIfPinned) && (t & kTagPageableCopy)) own = Scaled(own, kPinnedCopyFactor);
    return own;
  }
  if ((c & kWhatIfPinned) && (t & kTagCopyCall)) own = std::min<int64_t>(own, g.launch_call_ns);
  if ((c & kWhatIfNoSync) && (t & kTagSync)) own = 0;
  if ((c & kWhatIfNoDataLoader) && (t & kTagDataLoader)) own = 0;
  if ((c & kWhatIfNoSleep) && (t & kTagSleep)) own = 0;
  if ((c & kWhatIfNoInit) && (t & kTagInit)) own = 0;
  if ((c & kWhatIfFusedOptimizer) && (t & kTagOptimizer)) own = Scaled(own, kFusedOptimizerFactor);
  // Graphs replay the captured launches and skip the Python and dispatch between them.
  if ((c & kWhatIfGraphs) && (t & (kTagLaunch | kTagPython)) && !(t & (kTagDataLoader | kTagSleep | kTagThreadWait)))
    own = 0;
  if ((c & kWhatIfNoPython) && (t & kTagPython) && !(t & (kTagDataLoader | kTagSleep | kTagThreadWait))) own = 0;
  if ((c & kWhatIfFewerHostOps) && (t & kTagOperator) && !(t & (kTagDataLoader | kTagCommunication)))
    own = Scaled(own, kHostOpsFactor);
  return own;
}

// Whether a change frees a node of what it waited for.
bool DropsWait(const WhatNode& n, uint32_t c) {
  const uint32_t t = n.tags;
  return ((c & kWhatIfNoSync) && (t & kTagSync)) || ((c & kWhatIfPinned) && (t & kTagCopyCall)) ||
         ((c & kWhatIfNoDataLoader) && (t & kTagDataLoader)) || ((c & kWhatIfNoSleep) && (t & kTagSleep));
}

}  // namespace

Replay Simulate(const StepGraph& g, uint32_t changes) {
  const size_t n = g.nodes.size();
  std::vector<int64_t> s(n), e(n);
  Replay out;
  out.end = g.start;
  size_t k = 0;  // the next edge: edges are by `to`
  std::vector<std::pair<int64_t, int64_t>> device;
  for (size_t v = 0; v < n; ++v) {
    const WhatNode& node = g.nodes[v];
    const int64_t own = node.fixed ? node.end - node.start : OwnAfter(g, node, changes);
    const bool drops = !node.fixed && DropsWait(node, changes);
    int64_t start = node.start, end_floor = INT64_MIN;
    bool started = false;
    for (; k < g.edges.size() && g.edges[k].to == v; ++k) {
      const WhatEdge& ed = g.edges[k];
      if (node.fixed) continue;
      int64_t at;
      if (ed.from_start) {
        // Within: as far into the call as recorded, held within the call as it now runs;
        // a lag past the recorded call (the launch's latency) stays after its end.
        const WhatNode& f = g.nodes[ed.from];
        const int64_t recorded = f.end - f.start;
        if (!ed.within) {
          at = s[ed.from] + ed.lag;
        } else if (ed.lag <= recorded) {
          at = s[ed.from] + std::min(ed.lag, e[ed.from] - s[ed.from]);
        } else {
          at = e[ed.from] + (ed.lag - recorded);
        }
      } else {
        at = e[ed.from] + ed.lag;
      }
      if (ed.to_end) {
        if (!drops) end_floor = std::max(end_floor, at);
      } else {
        start = started ? std::max(start, at) : at;
        started = true;
      }
    }
    if (!started) start = node.start;  // nothing in the step ordered it: as recorded
    s[v] = start;
    e[v] = std::max(start + std::max<int64_t>(own, 0), end_floor);
    if (node.ends_step) out.end = std::max(out.end, e[v]);
    if (node.tags & kTagDevice) device.push_back({s[v], e[v]});
  }
  std::sort(device.begin(), device.end());
  int64_t reach = INT64_MIN;
  for (const auto& [a, b] : device) {
    const int64_t from = std::max(a, reach);
    if (b > from) out.device_ns += b - from;
    reach = std::max(reach, b);
  }
  return out;
}

std::string Describe(const StepGraph& g) {
  std::string out = "start " + std::to_string(g.start) + "\n";
  size_t k = 0;
  for (size_t v = 0; v < g.nodes.size(); ++v) {
    const WhatNode& n = g.nodes[v];
    out += std::to_string(v) + " lane " + std::to_string(n.lane) + " [" + std::to_string(n.start) + ", " +
           std::to_string(n.end) + ") own " + std::to_string(n.own) + " tags " + std::to_string(n.tags) +
           (n.fixed ? " fixed" : "") + (n.ends_step ? " ends" : "");
    for (; k < g.edges.size() && g.edges[k].to == v; ++k) {
      const WhatEdge& e = g.edges[k];
      out += std::string(e.to_end ? " end<" : " start<") + std::to_string(e.from) + (e.from_start ? "s" : "e") + "+" +
             std::to_string(e.lag) + (e.within ? "w" : "");
    }
    out += "\n";
  }
  return out;
}

}  // namespace torch2pprof
