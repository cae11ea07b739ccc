// What an input is: the kinds of file the commands read, decided once per input from its
// first bytes (after gzip's inflate), whatever its name, and the commands that take each.
#pragma once

#include <string>
#include <vector>

namespace torch2pprof {

enum class InputKind {
  kTrace,     // Chrome Trace Event JSON as torch.profiler / Kineto exports it (the default)
  kSnapshot,  // a CUDA memory snapshot: a pickle of protocol 2 to 5 (torch.cuda.memory._dump_snapshot)
  kProfile,   // a pprof profile that convert wrote (profile.proto, gzipped or not)
  kSummary,   // a rank summary that summarize wrote (JSON whose first key is "torch2pprof_summary")
  kFolded,    // folded stacks, a stack a line (torch's export_stacks, flamegraph.pl's input)
};

// Each kind as users read it, in one table (load/input.cc): its name in errors and help
// ("a trace", "a memory snapshot", "a pprof profile", "a rank summary") and the files they
// give for it. What decides the kind is the probe's (ProbeInput), from the first bytes.
struct InputKindWords {
  InputKind kind;
  const char* name;
  const char* files;  // "Chrome Trace JSON, .json or .json.gz"
};
const InputKindWords& WordsOf(InputKind kind);
const char* InputKindName(InputKind kind);  // WordsOf(kind).name

// The kinds each command reads, in the order its help lists them; help and the router's
// errors both read this one list.
struct CommandInputs {
  const char* command;
  std::vector<InputKind> kinds;
  const char* how;  // how it takes them, for help and errors
};
const std::vector<CommandInputs>& InputsOfCommands();
const CommandInputs& InputsOf(const std::string& command);

}  // namespace torch2pprof
