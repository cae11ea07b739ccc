// Each analysed step's dependency graph, built from the trace for the what-if engine
// (model/what_if.h): the findings' savings are its replays with their causes changed.
#pragma once

#include <memory>
#include <vector>

#include "analysis/events.h"
#include "model/critical_path.h"
#include "model/lane_builder.h"
#include "model/step_windows.h"
#include "model/what_if.h"

namespace torch2pprof::analysis {

class Reader;

// Made once per trace (the lanes' timelines, the streams' work in order); Build reads
// it from any thread.
class WhatIfGraphs {
 public:
  // foreach_optimizer: the trace's optimizer steps are not fused (kTagOptimizer applies).
  // The walker's host timelines are read, not made again.
  WhatIfGraphs(const Events& ev, const std::vector<LaneStacks>& lanes, const StepWindows& windows, const Reader& reader,
               const CriticalPathWalker& walker, bool foreach_optimizer);
  ~WhatIfGraphs();
  // What a thread waited for on another: that thread's working time within the wait, by
  // the code it ran (a Python frame's or an operator's name id; 0: none).
  struct Waited {
    uint32_t lane = 0, code = 0;
    int64_t ns = 0;
  };
  // `waited`, where given, gets what the step's blocking waits waited for.
  StepGraph Build(size_t step, std::vector<Waited>* waited = nullptr) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace torch2pprof::analysis
