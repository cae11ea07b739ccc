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
    if ((c & kWhatIfLink) && (t & kTagCommunication) && n.link_ns >= 0) own = std::min(own, n.link_ns);
    return own;
  }
  if ((c & kWhatIfPinned) && (t & kTagCopyCall)) own = std::min<int64_t>(own, g.launch_call_ns);
  if ((c & kWhatIfNoSync) && (t & kTagSync)) own = 0;
  if ((c & kWhatIfNoDataLoader) && (t & kTagDataLoader)) own = 0;
  if ((c & kWhatIfNoSleep) && (t & kTagSleep)) own = 0;
  if ((c & kWhatIfNoInit) && (t & kTagInit)) own = 0;
  if ((c & kWhatIfNoFsdp) && (t & kTagFsdp)) own = 0;
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

uint32_t TagsOf(uint32_t change) {
  switch (change) {
    case kWhatIfPinned:
      return kTagCopyCall | kTagPageableCopy;
    case kWhatIfNoSync:
      return kTagSync;
    case kWhatIfTf32:
      return kTagFp32Matmul;
    case kWhatIfGraphs:
      return kTagLaunch | kTagPython;
    case kWhatIfNoPython:
      return kTagPython;
    case kWhatIfFewerHostOps:
      return kTagOperator;
    case kWhatIfFusedOptimizer:
      return kTagOptimizer;
    case kWhatIfNoDataLoader:
      return kTagDataLoader;
    case kWhatIfNoSleep:
      return kTagSleep;
    case kWhatIfNoInit:
      return kTagInit;
    case kWhatIfNoFsdp:
      return kTagFsdp;
    case kWhatIfLink:
      return kTagCommunication;
    default:
      return 0;
  }
}

std::vector<Replay> SimulateMany(const StepGraph& g, const std::vector<uint32_t>& changes, bool device_ns) {
  // The replays side by side, node by node: the graph is read once for all of them.
  const size_t n = g.nodes.size(), m = changes.size();
  std::vector<Replay> out(m);
  if (m == 0) return out;
  std::vector<int64_t> s(n * m), e(n * m), own(m), start(m), floor(m);
  std::vector<uint8_t> drops(m), started(m);
  for (Replay& r : out) r.end = g.start;
  size_t k = 0;  // the next edge: edges are by `to`
  std::vector<std::vector<std::pair<int64_t, int64_t>>> device(device_ns ? m : 0);
  for (size_t v = 0; v < n; ++v) {
    const WhatNode& node = g.nodes[v];
    int64_t* sv = &s[v * m];
    int64_t* ev = &e[v * m];
    if (node.fixed) {
      // Began before the step: as recorded, whatever ordered it.
      for (; k < g.edges.size() && g.edges[k].to == v; ++k) {
      }
      for (size_t i = 0; i < m; ++i) sv[i] = node.start, ev[i] = node.end;
    } else {
      for (size_t i = 0; i < m; ++i) {
        own[i] = std::max<int64_t>(OwnAfter(g, node, changes[i]), 0);
        drops[i] = DropsWait(node, changes[i]) ? 1 : 0;
        start[i] = node.start, floor[i] = INT64_MIN, started[i] = 0;
      }
      for (; k < g.edges.size() && g.edges[k].to == v; ++k) {
        const WhatEdge& ed = g.edges[k];
        const int64_t* sf = &s[ed.from * m];
        const int64_t* ef = &e[ed.from * m];
        const WhatNode& f = g.nodes[ed.from];
        const int64_t recorded = f.end - f.start;
        for (size_t i = 0; i < m; ++i) {
          int64_t at;
          if (!ed.from_start) {
            at = ef[i] + ed.lag;
          } else if (!ed.within) {
            at = sf[i] + ed.lag;
          } else if (ed.lag <= recorded) {
            // Within: as far into the call as recorded, held within the call as it now runs;
            at = sf[i] + std::min(ed.lag, ef[i] - sf[i]);
          } else {
            // a lag past the recorded call (the launch's latency) stays after its end.
            at = ef[i] + (ed.lag - recorded);
          }
          if (ed.to_end) {
            if (!drops[i]) floor[i] = std::max(floor[i], at);
          } else {
            start[i] = started[i] ? std::max(start[i], at) : at;
            started[i] = 1;
          }
        }
      }
      // Nothing in the step ordered it: as recorded (start[i] kept node.start).
      for (size_t i = 0; i < m; ++i) sv[i] = start[i], ev[i] = std::max(start[i] + own[i], floor[i]);
    }
    for (size_t i = 0; i < m; ++i) {
      if (node.ends_step) out[i].end = std::max(out[i].end, ev[i]);
      if (device_ns && (node.tags & kTagDevice)) device[i].push_back({sv[i], ev[i]});
    }
  }
  for (size_t i = 0; i < device.size(); ++i) {
    std::sort(device[i].begin(), device[i].end());
    int64_t reach = INT64_MIN;
    for (const auto& [a, b] : device[i]) {
      const int64_t from = std::max(a, reach);
      if (b > from) out[i].device_ns += b - from;
      reach = std::max(reach, b);
    }
  }
  return out;
}

Replay Simulate(const StepGraph& g, uint32_t changes, bool device_ns) {
  return SimulateMany(g, {changes}, device_ns)[0];
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
