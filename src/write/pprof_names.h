// What pprof shows as a function's name: the frame's name (frame_names), unless pprof
// would rewrite it.
#pragma once

#include <string>

#include "torch2pprof/profile.h"

namespace torch2pprof {

// pprof's symbolizer "simplifies" every function whose name equals its system name and
// looks like demangled C++ (has <>[] or ::): it deletes each balanced (...) and <...>.
// Trace names such as "<built-in method add_ of Tensor object>" would become empty,
// "Memcpy HtoD (Pageable -> Device)" would merge with its Pinned twin, and the template
// instantiations of one kernel would merge. Such a frame gets a name that differs from
// its system name, which pprof then shows as it is: a C++ signature loses its parameter
// list (as pprof's own -symbolize=demangle=templates shows C++), any other name gets a
// trailing space.
std::string PprofFunctionName(const Frame& frame);

}  // namespace torch2pprof
