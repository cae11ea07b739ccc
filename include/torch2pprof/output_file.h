// Writing an output: atomically, never over an input or over a file torch2pprof did not
// write, in place on devices and pipes, with every error one line.
#pragma once

#include <memory>
#include <string>
#include <string_view>
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

// The same, written as it is made: Write as often as needed, then Commit, which puts the
// file in place; an OutputFile dropped without Commit leaves no file (and, replacing one,
// the old one as it was). The checks are the constructor's.
class OutputFile {
 public:
  OutputFile(const std::string& path, const WriteOptions& options = {});
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  void Write(std::string_view data);
  void Commit();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// Whether the existing file at path looks like an output of torch2pprof: a pprof profile
// (gzipped or not), folded stacks or pstats, or an empty file.
bool LooksLikeOutput(const std::string& path);

}  // namespace torch2pprof
