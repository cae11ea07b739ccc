#include "load/input.h"

#include <algorithm>

#include "base/magic.h"
#include "load/folded_reader.h"
#include "load/profile_reader.h"
#include "torch2pprof/error.h"

namespace torch2pprof {

namespace {

// What a head says of one kind: it is that kind, it is not, it may be once more of it has
// come, or it is something no command reads (the refusal says what).
enum class Verdict { kNo, kYes, kNotYet, kRefused };

Verdict ProbeSnapshot(std::string_view head, bool, std::string* refused) {
  const int protocol = PickleProtocol(head);
  if (protocol >= 2 && protocol <= 5) return Verdict::kYes;
  if (protocol < 0) return Verdict::kNo;
  *refused = "a pickle of protocol " + std::to_string(protocol) + (protocol == 0 ? " (text)" : "") +
             ": memory snapshots are pickles of protocol 2 to 5, as torch.cuda.memory._dump_snapshot writes them";
  return Verdict::kRefused;
}

Verdict ProbeProfile(std::string_view head, bool complete, std::string*) {
  if (StartsLikeProfile(head)) return Verdict::kYes;
  // A profile's sample type may not have come whole.
  return !complete && !head.empty() && head[0] == 0x0a ? Verdict::kNotYet : Verdict::kNo;
}

Verdict ProbeSummary(std::string_view head, bool, std::string*) {
  return StartsLikeSummary(head) ? Verdict::kYes : Verdict::kNo;
}

// Text whose first line is "frames VALUE" (StartsLikeFolded); a trace's JSON never is,
// and a perf-style first frame "[unknown]" is no JSON array of events.
Verdict ProbeFolded(std::string_view head, bool complete, std::string*) {
  const size_t first = FirstToken(head);
  if (first == head.size()) return Verdict::kNo;
  if (head[first] == '{') return Verdict::kNo;
  if (head[first] == '[') {
    const size_t next = FirstToken(head.substr(first + 1)) + first + 1;
    if (next == head.size() || head[next] == '{' || head[next] == ']' || head[next] == '"') return Verdict::kNo;
  }
  const size_t end = head.find('\n');
  if (!complete && end == std::string_view::npos) return Verdict::kNotYet;
  // The first line tells: a broken line further on is the reader's to name, at its offset.
  return StartsLikeFolded(head.substr(0, end == std::string_view::npos ? end : end + 1)) ? Verdict::kYes : Verdict::kNo;
}

// The last: what no other kind claims is read as a trace, whose loader says what is wrong
// with it (unless it is torch's key_averages() table, a mistake common enough to name).
Verdict ProbeTrace(std::string_view head, bool complete, std::string* refused) {
  const size_t first = FirstToken(head);
  if (first == head.size()) return complete ? Verdict::kYes : Verdict::kNotYet;
  // A summary's magic key must have come whole before another '{' is a trace.
  if (head[first] == '{' && !complete && head.size() - first < sizeof kSummaryMagic + 8) return Verdict::kNotYet;
  const int table = KeyAveragesVerdict(head, complete);
  if (table < 0) return Verdict::kNotYet;
  if (table == 0) return Verdict::kYes;
  *refused =
      "torch's key_averages() table, not a trace: export the trace itself (prof.export_chrome_trace or "
      "tensorboard_trace_handler)";
  return Verdict::kRefused;
}

Profile ReadConvertProfile(ByteSource& source, const LoadOptions& options) {
  return ReadProfile(source, options.max_depth);
}

// The router: each kind of input, one row, in the order the probe tries them. Its words
// in errors and help, the files users give for it, its probe, what it is read into and by
// what, and what else reads it (for the error of a command that does not). A new kind read
// into a trace or a profile is a row here, its InputKind, its reader and the commands that
// take it (InputsOfCommands below); a kind with a result of its own adds the call that
// takes it.
struct Route {
  InputKindWords words;
  Verdict (*probe)(std::string_view head, bool complete, std::string* refused);
  Reading reading;
  const char* read_by = "";  // " (go tool pprof reads profiles)"
};
const Route kRoutes[] = {
    {{InputKind::kSnapshot, "a memory snapshot", ".pickle or .pickle.gz"}, ProbeSnapshot, {ReadInto::kOpened}},
    {{InputKind::kProfile, "a pprof profile", ".pb.gz, written by convert"},
     ProbeProfile,
     {ReadInto::kProfile, ReadConvertProfile},
     " (go tool pprof reads profiles)"},
    {{InputKind::kSummary, "a rank summary", ".summary.json, written by summarize"}, ProbeSummary, {ReadInto::kOpened}},
    {{InputKind::kFolded, "a file of folded stacks", "a stack a line, as torch's export_stacks writes them"},
     ProbeFolded,
     {ReadInto::kOwnProfile, ReadFolded}},
    {{InputKind::kTrace, "a trace", "Chrome Trace JSON, .json or .json.gz"}, ProbeTrace, {ReadInto::kTrace}},
};

const Route& RouteOf(InputKind kind) {
  for (const Route& r : kRoutes) {
    if (r.words.kind == kind) return r;
  }
  return std::end(kRoutes)[-1];  // not reached: a row per kind
}

}  // namespace

const InputKindWords& WordsOf(InputKind kind) { return RouteOf(kind).words; }

const char* InputKindName(InputKind kind) { return WordsOf(kind).name; }

const Reading& ReadingOf(InputKind kind) { return RouteOf(kind).reading; }

const std::vector<CommandInputs>& InputsOfCommands() {
  using K = InputKind;
  static const std::vector<CommandInputs> commands = {
      {"convert",
       {K::kTrace, K::kSnapshot, K::kProfile, K::kFolded},
       "traces (several with -o, one profile labelled by rank), a memory snapshot (alone), with -o the "
       "profiles convert wrote, and folded stacks (alone)"},
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
  return std::string(InputKindName(kind)) + ": " + command + " reads " + InputsOf(command).how + RouteOf(kind).read_by;
}

Probe ProbeInput(std::string_view head, bool complete) {
  Probe p;
  if (!complete && head.size() < 2) {
    p.sure = false;
    return p;
  }
  for (const Route& r : kRoutes) {
    switch (r.probe(head, complete, &p.refused)) {
      case Verdict::kNo:
        continue;
      case Verdict::kYes:
        p.kind = r.words.kind;
        return p;
      case Verdict::kNotYet:
        p.sure = false;
        return p;
      case Verdict::kRefused:
        return p;  // the kind stays the default's: refused says what it is
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
