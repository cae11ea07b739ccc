// Folded stacks read as a profile: flamegraph.pl's input, a stack a line
// ("frame;frame;...;frame VALUE"), as torch's export_stacks and other profilers write it.
#pragma once

#include "torch2pprof/profile.h"
#include "torch2pprof/stages/trace_loader.h"

namespace torch2pprof {

class ByteSource;

// The lines' stacks, root first, summed where a stack repeats, one sample each with one
// value: "time" in microseconds where every frame is one torch's export_stacks writes
// ("path.py(12):_func", the ' ' after the colon written as '_'), else "samples"
// (flamegraph.pl's count). A frame keeps its text as its system_name (export_stacks' "):_"
// given back its space) for convert to name (MakeFrame). A stack deeper than
// options.max_depth keeps its first max_depth - 1 frames and one "[deeper frames
// truncated]", as convert folds a trace's. Blank lines are skipped. Throws Error (kInput,
// at the line's byte offset) on a line that is not frames, a space and an integer, on an
// empty frame, a control character or bytes of no UTF-8 character, and on values whose
// sum for one stack leaves 64 bits.
Profile ReadFolded(ByteSource& source, const LoadOptions& options);

}  // namespace torch2pprof
