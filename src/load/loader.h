// The load stage inside a call: the public stage functions (torch2pprof/stages/trace_loader.h)
// on the call's executor, whose free threads read, cut and parse.
#pragma once

#include <functional>
#include <vector>

#include "base/executor.h"
#include "torch2pprof/stages/trace_loader.h"

namespace torch2pprof {

// options.threads is not read: the threads are the executor's that are free.
Trace LoadTrace(const LoadOptions& options, Executor& ex);
// The loads side by side on the executor's threads (each load uses whatever is left).
void LoadEach(const std::vector<LoadOptions>& inputs, Executor& ex, const std::function<void(Trace&)>& use);

}  // namespace torch2pprof
