// An input opened once: its first bytes read once (inflated where gzip), its kind decided
// from them (ProbeInput), and the loaders reading on from the same stream. A pipe, a FIFO
// or a file still being written is never opened or rewound a second time.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "load/byte_source.h"
#include "torch2pprof/input.h"
#include "torch2pprof/profile.h"
#include "torch2pprof/stages/trace_loader.h"

namespace torch2pprof {

// What a head of bytes is. `refused` is set where they are known to be no input any
// command reads: what they are, for the error line ("a pickle of protocol 0 (text):
// memory snapshots are protocol 2 to 5"); the kind is then kTrace, the default.
struct Probe {
  InputKind kind = InputKind::kTrace;
  std::string refused;
  bool sure = true;  // false: the head ends before it tells (ProbeInput with complete = false)
};
// How many bytes of the head the probe reads (inflated): kProbeBytes past its leading
// white space, which may be up to ByteSource::kMaxPeek less that. A pipe is read in
// growing pieces, so that what its first bytes tell is told while its writer still writes.
inline constexpr size_t kProbeBytes = 4096;
// `complete`: the head is all the probe will get (the input's end, or its largest head).
Probe ProbeInput(std::string_view head, bool complete = true);

// What LoadEach (load/loader.h) reads an input of a kind into: each kind's row in the
// router says, so that a new kind read into one of these edits no loader and no command.
enum class ReadInto {
  kOpened,      // nothing: opened and probed for its caller to read (a snapshot, summaries)
  kTrace,       // a Trace, by the trace loader
  kProfile,     // a profile convert wrote, which convert -o merges beside traces
  kOwnProfile,  // a profile of another tool's stacks: convert writes it alone, its frames named as convert's
};
struct Reading {
  ReadInto into = ReadInto::kOpened;
  Profile (*profile)(ByteSource& source, const LoadOptions& options) = nullptr;  // into a profile: its reader
};
const Reading& ReadingOf(InputKind kind);

class Input {
 public:
  // path "-": standard input. Throws Error when it cannot be opened or read.
  explicit Input(const std::string& path, std::atomic<uint64_t>* bytes_read = nullptr);
  // Bytes held in memory (tests, the fuzzer); `name` stands for the file in errors.
  Input(std::string_view data, const std::string& name);

  InputKind kind() const { return probe_.kind; }
  const Probe& probe() const { return probe_; }
  // The input from its first byte (the probe's bytes are handed out again).
  ByteSource& source() { return source_; }
  const std::string& name() const { return source_.name(); }

  // Throws Error (kInput) naming the file and what it is when `command` does not read
  // it (InputsOf(command)): "a memory snapshot: summarize reads traces".
  void Expect(const std::string& command) const;

 private:
  ByteSource source_;
  Probe probe_;
};

// The line for an input of `kind` that `command` does not read.
std::string NotReadBy(InputKind kind, const std::string& command);

}  // namespace torch2pprof
