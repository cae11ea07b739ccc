// analyze --timeline: the trace's events again as a Chrome trace, with every analysed
// step's critical path as a lane of its own and as flow events between the lanes it
// crosses, for Perfetto UI and chrome://tracing.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "model/critical_path.h"
#include "torch2pprof/stages/trace.h"

namespace torch2pprof::analysis {

// Every analysed step's critical path, by step, and the steps' names.
struct CriticalPaths {
  std::vector<std::string> steps;
  std::vector<StepCriticalPath> paths;
};

// Handed to `sink` a part at a time (about 1 MiB): the output is as large as the events.
// Every interval of the trace as a complete event (its
// name, category, lane and exact time; args stay in the trace), the lanes' names, then
// the critical path: a process "critical path" with a slice per stretch (its event's
// name, the category its bound) and a flow from each stretch to the next where the path
// changes lanes.
void WriteTimelineTrace(const Trace& t, const CriticalPaths& paths, const std::string& source,
                        const std::function<void(std::string_view)>& sink);

}  // namespace torch2pprof::analysis
