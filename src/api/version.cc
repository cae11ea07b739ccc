#include "torch2pprof/version.h"

#include <simdjson.h>

#include "git_revision.h"
// generated at build time: TORCH2PPROF_GIT_REVISION, or nothing
#include "base/gzip.h"

namespace torch2pprof {

std::string BuildInfo() {
  std::string out;
#ifdef TORCH2PPROF_GIT_REVISION
  out += std::string("revision  ") + TORCH2PPROF_GIT_REVISION + "\n";
#endif
#ifdef TORCH2PPROF_MARCH
  out += std::string("march     ") + TORCH2PPROF_MARCH +
         " (simdjson on-demand kernel: " + SIMDJSON_STRINGIFY(SIMDJSON_BUILTIN_IMPLEMENTATION) + ")\n";
#endif
#ifdef __VERSION__
  out += std::string("compiler  ") + __VERSION__ + "\n";
#endif
  out += "json      simdjson " + std::to_string(simdjson::SIMDJSON_VERSION_MAJOR) + "." +
         std::to_string(simdjson::SIMDJSON_VERSION_MINOR) + "." + std::to_string(simdjson::SIMDJSON_VERSION_REVISION) +
         "\n";
  out += "inflate   " + InflateLibrary() + "\n";
  return out;
}

}  // namespace torch2pprof
