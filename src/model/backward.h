// The model's backward links: each backward node and the forward op that created it
// (fwdbwd flows, else Sequence numbers), for convert's backward-under-forward stacks.
#pragma once

#include <vector>

#include "torch2pprof/stages/trace_model.h"

namespace torch2pprof {

// Backward nodes and the forward ops that created them, by backward node.
std::vector<BackwardLink> FindBackward(const Trace& t, const TraceModel& m);

}  // namespace torch2pprof
