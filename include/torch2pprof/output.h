// The writers: a Profile as pprof's protobuf, folded stacks or pstats, and the one way
// an output reaches a file (atomically, never over an input, every error one line).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "torch2pprof/profile.h"

namespace torch2pprof {

enum class OutputFormat {
  kPprof,   // gzipped profile.proto
  kFolded,  // folded stacks (WriteFolded)
  kPstats,  // Python's pstats (WritePstats)
};
// The format an output file's name asks for: ".folded" folded stacks, ".prof" and
// ".pstats" pstats, ".pb.gz", ".pb", ".pprof", ".gz" pprof; "-", a device or a pipe, or a
// name without an extension, pprof. Throws Error (kind kUsage) for any other extension.
OutputFormat FormatForPath(const std::string& path);

// ---- pprof (proto/profile.proto)

// The serialized, uncompressed profile.proto message.
std::string EncodeProfile(const Profile& profile);

// gzip of data, as a single member of one deflate stream.
std::string Gzip(const std::string& data);

// ---- folded stacks, one "frame;frame;frame value" line per distinct stack, for
// flamegraph.pl, inferno and speedscope

// What stands first in each stack as a root frame, so that flame graphs separate them.
enum class FoldedRoot {
  kAuto,    // kDevice for device time (gpu), else kThread
  kThread,  // the sample's thread label ("thread 439 (python3)", "stream 7"), else "tid N";
            // device work: its launching thread
  kDevice,  // the device the work ran on ("cuda:0"); samples without one: their thread. A
            // layer's forward and backward launch on different threads but run on one device,
            // so device time keeps the two together under the layer
  kRank,    // "rank N" (convert -o); samples without a rank label get none
  kNone,
};

// Frames run root to leaf; ';' in a frame becomes ',', a newline a space, and outer
// spaces go (the format has no escapes). Each line's value is the sum of `sample_type` (a name of
// p.sample_types; "" the profile's default) over the samples with that stack, in that
// type's unit; lines with 0 are left out. Lines come root by root (root frames in byte
// order), then depth first, the callees of a frame by name: a stack's callers come
// before it, and frames written alike ("a;b" and "a,b") are one.
// Throws Error (kind kUsage) for an unknown sample type.
std::string WriteFolded(const Profile& p, const std::string& sample_type = "", FoldedRoot root = FoldedRoot::kAuto);
// The same handed to `sink` a part at a time (about 1 MiB), so that the output is never
// held whole: deep stacks make folded text many times a profile's size.
void WriteFolded(const Profile& p, const std::string& sample_type, FoldedRoot root,
                 const std::function<void(std::string_view)>& sink);

// The index in p.sample_types of `name` ("" the default); throws Error (kind kUsage)
// naming the profile's types when it has no such type.
size_t SampleTypeIndex(const Profile& p, const std::string& name);

// ---- pstats: the marshal dict that Python's pstats.Stats loads (python -m pstats,
// snakeviz, gprof2dot), as cProfile writes it

// {(file, line, name): (cc, nc, tt, ct, {caller: (nc, cc, tt, ct)})}, cProfile's layout
// (caller edges list nc before cc, as cProfile writes and pstats reads them). A Python
// frame is (its file, its line, its function), any other frame ("~", 0, name) as cProfile
// keys built-ins. tt is the self time and ct the inclusive time of `sample_type` (a
// nanoseconds type; "": the profile's default, work) in seconds, counting a recursive function's time once;
// nc is calls, cc the calls made while the function was not already on the stack.
// Throws Error (kind kUsage) when the sample type is unknown or not a time.
std::string WritePstats(const Profile& p, const std::string& sample_type = "");

// ---- output files

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

}  // namespace torch2pprof
