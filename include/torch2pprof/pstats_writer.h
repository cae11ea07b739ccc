// Stage 4, another format: the profile as the marshal dict that Python's pstats.Stats
// loads (python -m pstats, snakeviz, gprof2dot), as cProfile writes it.
#pragma once

#include <string>

#include "torch2pprof/profile.h"

namespace torch2pprof {

// {(file, line, name): (cc, nc, tt, ct, {caller: (nc, cc, tt, ct)})}, cProfile's layout
// (caller edges list nc before cc, as cProfile writes and pstats reads them). A Python
// frame is (its file, its line, its function), any other frame ("~", 0, name) as cProfile
// keys built-ins. tt is the self time and ct the inclusive time of `sample_type` (a
// nanoseconds type; "": the profile's default, work) in seconds, counting a recursive function's time once;
// nc is calls, cc the calls made while the function was not already on the stack.
// Throws Error (kind kUsage) when the sample type is unknown or not a time.
std::string WritePstats(const Profile& p, const std::string& sample_type = "");

}  // namespace torch2pprof
