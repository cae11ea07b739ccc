// The command-line front end: parses argv, runs a command over the core library,
// and turns every torch2pprof::Error into one line on stderr and an exit status.
#pragma once

#include <iosfwd>

namespace torch2pprof::cli {

// Runs torch2pprof with argv; returns the exit status. Text goes to out and err;
// binary output named "-" goes to file descriptor 1.
int Run(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace torch2pprof::cli
