// The load stage inside a call: the public stage functions (torch2pprof/stages/trace_loader.h)
// on the call's executor, whose free threads read, cut and parse; and several inputs of
// any kind loaded side by side, each opened once (load/input.h).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "base/executor.h"
#include "load/input.h"
#include "torch2pprof/profile.h"
#include "torch2pprof/stages/trace_loader.h"

namespace torch2pprof {

// options.threads and options.path are not read: the threads are the executor's that are
// free, the input is `source` (an Input's, read on from its probe).
Trace LoadTrace(ByteSource& source, const LoadOptions& options, Executor& ex);
// options.threads is not read.
Trace LoadTrace(const LoadOptions& options, Executor& ex);

// One of several inputs, loaded as what it is.
struct LoadedInput {
  InputKind kind = InputKind::kTrace;  // read into what ReadingOf(kind) says
  std::string file;
  Trace trace;      // ReadInto::kTrace
  Profile profile;  // ReadInto::kProfile and kOwnProfile (options.max_depth frames a stack)
  // ReadInto::kOpened (a snapshot, read alone; summaries, analysis's): the input, opened
  // and probed, for the caller to read on.
  std::unique_ptr<Input> input;
};

// The inputs loaded side by side on the executor's threads (each load uses whatever is
// left), handed to `use` strictly in the order given, at most ex.threads() in memory.
// `check` sees each input as it is opened, before it is read, and throws for a kind the
// caller does not take; the first input in order that fails ends it with its error.
void LoadEach(const std::vector<LoadOptions>& inputs, Executor& ex, const std::function<void(const Input&)>& check,
              const std::function<void(LoadedInput&)>& use);

}  // namespace torch2pprof
