#include <iostream>

#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "cli/cli.h"

int main(int argc, char** argv) {
#ifdef __GLIBC__
  // One malloc arena for the process. The load's threads allocate their buffers once and
  // reuse them, so they never wait on each other's malloc; with an arena each, what they
  // free stays in their arenas, and the stages after the load fault in fresh pages above
  // it (a higher peak and more page faults: docs/performance.md).
  mallopt(M_ARENA_MAX, 1);
#endif
  return torch2pprof::cli::Run(argc, argv, std::cout, std::cerr);
}
