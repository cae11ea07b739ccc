// The guard before an output replaces an existing file: only what torch2pprof writes is
// replaced without --force.
#pragma once

#include <string>

namespace torch2pprof {

// Whether the existing file at path looks like an output of torch2pprof: a pprof profile
// (gzipped or not), folded stacks, pstats, a rank summary, or an empty file.
bool LooksLikeOutput(const std::string& path);

}  // namespace torch2pprof
