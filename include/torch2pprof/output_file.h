// Writing an output: atomically, never over an input or over a file torch2pprof did not
// write, in place on devices and pipes, with every error one line.
#pragma once

#include <string>
#include <vector>

namespace torch2pprof {

struct WriteOptions {
  std::vector<std::string> inputs;  // never written over, by any name (a link, ./x): exit 3
  // Replace an existing file that does not look like an output of torch2pprof (a pprof
  // profile, folded stacks, pstats; or empty). Without it such a file is refused: a
  // mistyped command must not replace a trace or a script.
  bool force = false;
  // SIGINT or SIGTERM during the write remove the temporary file, and the process then
  // dies of the signal (a process-wide handler, so only when asked). Where the system has
  // unnamed temporary files (O_TMPFILE) there is none to remove, even after SIGKILL.
  bool remove_on_signal = false;
};

// Writes data to path: "-" is standard output; a device, a pipe, a socket, or a link to a
// descriptor (/dev/stdout, /proc/self/fd/N) is written in place; a file is replaced
// atomically (written unnamed, or as a temporary file, in its directory, then renamed
// into place), a link to a file replaces the file it points to. Throws Error (kind
// kOutput) for anything that cannot be written or is refused.
void WriteOutputFile(const std::string& path, const std::string& data, const WriteOptions& options = {});

// Whether the existing file at path looks like an output of torch2pprof: a pprof profile
// (gzipped or not), folded stacks or pstats, or an empty file.
bool LooksLikeOutput(const std::string& path);

}  // namespace torch2pprof
