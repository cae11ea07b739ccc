// The command-line front end: parses argv, runs a command over the core library,
// and turns every torch2pprof::Error into one line on stderr and an exit status.
#pragma once

#include <iosfwd>

namespace torch2pprof::cli {

// Who owns the process: the command-line tool, or a host that runs commands in it (the
// Python module), whose signals and terminal are its own.
enum class Host { kProcess, kEmbedded };

// Runs torch2pprof with argv; returns the exit status. Text goes to out and err;
// binary output named "-" goes to file descriptor 1.
int Run(int argc, const char* const* argv, std::ostream& out, std::ostream& err, Host host = Host::kProcess);

}  // namespace torch2pprof::cli
