// The model stage inside a call: BuildModel (torch2pprof/stages/trace_model.h) with its
// independent parts side by side on the call's executor.
#pragma once

#include "base/executor.h"
#include "torch2pprof/stages/trace_model.h"

namespace torch2pprof {

TraceModel BuildModel(const Trace& trace, Executor& ex);

}  // namespace torch2pprof
