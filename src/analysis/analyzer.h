// analyze's stage: a loaded trace and its model to the Analysis of analysis.h, the views
// torch-tb-profiler taught users (docs/tb-semantics.md), as plain numbers in nanoseconds.
#pragma once

#include <vector>

#include "base/executor.h"
#include "model/lane_builder.h"
#include "torch2pprof/analysis.h"
#include "torch2pprof/stages/trace.h"
#include "torch2pprof/stages/trace_model.h"

namespace torch2pprof {

namespace analysis {
struct CriticalPaths;
}

struct AnalysisOptions {
  bool group_by_shape = false;               // operators grouped by name and Input Dims
  bool per_step = false;                     // also each operator's and kernel's time per analysed step (compare)
  size_t timeline_steps = 0;                 // the slowest this many steps as timelines (Analysis::timelines)
  analysis::CriticalPaths* paths = nullptr;  // where given, every analysed step's critical path (--timeline)
};

// trace must be loaded with LoadOptions::details, and model built from it. Works lane by
// lane over the loaded intervals, side by side on the executor's threads (the result never
// depends on them): beyond them it holds a few bytes per event, never a copy.
Analysis Analyze(const Trace& trace, const TraceModel& model, const AnalysisOptions& options, Executor& ex);
// The same on the calling thread alone.
Analysis Analyze(const Trace& trace, const TraceModel& model, const AnalysisOptions& options = {});
// The same with the trace's uncut stacks (BuildLanes with default BuildOptions) already
// built, for example beside the model; they are freed on the way.
Analysis Analyze(const Trace& trace, const TraceModel& model, std::vector<LaneStacks> lanes,
                 const AnalysisOptions& options, Executor& ex);

}  // namespace torch2pprof
