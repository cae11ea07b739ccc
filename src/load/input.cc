#include "load/input.h"

#include <algorithm>

#include "base/magic.h"
#include "torch2pprof/error.h"

namespace torch2pprof {

namespace {

constexpr InputKindWords kKindWords[] = {
    {InputKind::kTrace, "a trace", "Chrome Trace JSON, .json or .json.gz"},
    {InputKind::kSnapshot, "a memory snapshot", ".pickle or .pickle.gz"},
    {InputKind::kProfile, "a pprof profile", ".pb.gz, written by convert"},
    {InputKind::kSummary, "a rank summary", ".summary.json, written by summarize"},
};

}  // namespace

const InputKindWords& WordsOf(InputKind kind) {
  for (const InputKindWords& w : kKindWords) {
    if (w.kind == kind) return w;
  }
  return kKindWords[0];  // not reached: a row per kind
}

const char* InputKindName(InputKind kind) { return WordsOf(kind).name; }

const std::vector<CommandInputs>& InputsOfCommands() {
  using K = InputKind;
  static const std::vector<CommandInputs> commands = {
      {"convert",
       {K::kTrace, K::kSnapshot, K::kProfile},
       "traces (several with -o, one profile labelled by rank), a memory snapshot (alone), and with -o the "
       "profiles convert wrote"},
      {"analyze",
       {K::kTrace, K::kSnapshot, K::kSummary},
       "a trace, a memory snapshot (alone), or one trace or rank summary per rank"},
      {"compare", {K::kTrace, K::kSnapshot}, "two traces or two memory snapshots"},
      {"summarize", {K::kTrace}, "one trace"},
  };
  return commands;
}

const CommandInputs& InputsOf(const std::string& command) {
  const std::vector<CommandInputs>& all = InputsOfCommands();
  auto it = std::find_if(all.begin(), all.end(), [&](const CommandInputs& c) { return command == c.command; });
  if (it == all.end()) throw Error(Error::Kind::kUsage, "", -1, "no command " + command);
  return *it;
}

std::string NotReadBy(InputKind kind, const std::string& command) {
  std::string line = std::string(InputKindName(kind)) + ": " + command + " reads " + InputsOf(command).how;
  if (kind == InputKind::kProfile) line += " (go tool pprof reads profiles)";
  return line;
}

Probe ProbeInput(std::string_view head, bool complete) {
  Probe p;
  auto unsure = [&] {
    p.sure = false;
    return p;
  };
  if (!complete && head.size() < 2) return unsure();
  const int protocol = PickleProtocol(head);
  if (protocol >= 2 && protocol <= 5) {
    p.kind = InputKind::kSnapshot;
  } else if (protocol >= 0) {
    p.refused = "a pickle of protocol " + std::to_string(protocol) + (protocol == 0 ? " (text)" : "") +
                ": memory snapshots are pickles of protocol 2 to 5, as torch.cuda.memory._dump_snapshot writes them";
  } else if (StartsLikeProfile(head)) {
    p.kind = InputKind::kProfile;
  } else if (!complete && !head.empty() && head[0] == 0x0a) {
    return unsure();  // a profile's sample type may not have come whole
  } else if (StartsLikeSummary(head)) {
    p.kind = InputKind::kSummary;
  } else {
    const size_t first = FirstToken(head);
    if (first == head.size()) return complete ? p : unsure();
    // A summary's magic key must have come whole before another '{' is a trace.
    if (head[first] == '{' && !complete && head.size() - first < sizeof kSummaryMagic + 8) return unsure();
    const int table = KeyAveragesVerdict(head, complete);
    if (table < 0) return unsure();
    if (table == 1) {
      p.refused =
          "torch's key_averages() table, not a trace: export the trace itself (prof.export_chrome_trace or "
          "tensorboard_trace_handler)";
    }
  }
  return p;
}

namespace {

// The head a read at a time until it tells: a pipe's writer may still be writing, and
// what it wrote first is told now, not when it closes.
Probe ProbeHead(ByteSource& source) {
  size_t seen = 0;
  for (bool first = true;; first = false) {
    std::string_view head = source.PeekMore(ByteSource::kMaxPeek, seen);
    const bool ended = !first && head.size() <= seen;  // a read brought nothing: the end
    // Leading white space does not count against the head (up to the largest one).
    const size_t want = std::min(ByteSource::kMaxPeek, FirstToken(head) + kProbeBytes);
    head = head.substr(0, want);
    const bool complete = ended || head.size() >= want;
    Probe p = ProbeInput(head, complete);
    if (p.sure || complete) {
      p.sure = true;
      return p;
    }
    seen = head.size();
  }
}

}  // namespace

Input::Input(const std::string& path, std::atomic<uint64_t>* bytes_read) : source_(path) {
  source_.set_read_counter(bytes_read);
  probe_ = ProbeHead(source_);
}

Input::Input(std::string_view data, const std::string& name) : source_(data, name) { probe_ = ProbeHead(source_); }

void Input::Expect(const std::string& command) const {
  if (!probe_.refused.empty())
    ThrowInput(name(), -1, probe_.refused + "; " + command + " reads " + InputsOf(command).how);
  const std::vector<InputKind>& kinds = InputsOf(command).kinds;
  if (std::find(kinds.begin(), kinds.end(), kind()) == kinds.end()) ThrowInput(name(), -1, NotReadBy(kind(), command));
}

}  // namespace torch2pprof
