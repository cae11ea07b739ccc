// The model's launches: which host call launched each device event (correlation, External
// id for annotations, else an ac2g flow), found once for every later stage.
#pragma once

#include <vector>

#include "torch2pprof/stages/trace_model.h"

namespace torch2pprof {

// Launches: by correlation (runtime call and device work), by External id (a device
// annotation and its host annotation), else by an ac2g flow whose end is bound to the
// device event starting at or enclosing it, launched where the flow starts.
std::vector<Launch> FindLaunches(const Trace& t, const TraceModel& m);

}  // namespace torch2pprof
