// Each analysed step's dependency graph, built from the trace for the what-if engine
// (model/what_if.h): the findings' savings are its replays with their causes changed.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "analysis/events.h"
#include "model/lane_builder.h"
#include "model/step_windows.h"
#include "model/what_if.h"

namespace torch2pprof::analysis {

class Reader;

// Whether a kernel is a matmul or convolution in FP32 off the Tensor Cores: its launching
// operator is one autocast lowers (IsTensorCoreEligible) where it has one, else its name
// says GEMM or convolution (a CUDA graph's replay has no launching operator).
bool IsFp32MatmulKernel(std::string_view kernel, std::string_view launching_op);

// Made once per trace (the lanes' timelines, the streams' work in order); Build reads
// it from any thread.
class WhatIfGraphs {
 public:
  // foreach_optimizer: the trace's optimizer steps are not fused (kTagOptimizer applies).
  WhatIfGraphs(const Events& ev, const std::vector<LaneStacks>& lanes, const StepWindows& windows,
               const Reader& reader, bool foreach_optimizer);
  ~WhatIfGraphs();
  StepGraph Build(size_t step) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace torch2pprof::analysis
