// The aggregated profile that flows from the aggregator to the pprof writer:
// plain data, no protobuf, one call tree shared by all samples.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace torch2pprof {

struct ValueType {
  std::string type;  // e.g. "wall"
  std::string unit;  // e.g. "nanoseconds"
};

// The sample types convert writes, in each profile's order: the one list --help, the
// completion, the man page and docs/reference.md are checked against (e2e_lists).
struct SampleTypeName {
  const char* type;
  const char* unit;
  const char* meaning;  // what the value is, as the HTML pages' flame graphs name it
};
inline constexpr SampleTypeName kTraceSampleTypes[] = {
    {"calls", "count", "calls"},
    {"wall", "nanoseconds", "wall time (threads' time, waits included)"},
    {"work", "nanoseconds", "host work (threads' time less blocking waits)"},
    {"gpu", "nanoseconds", "device time, under the stacks that launched it"},
    {"critical", "nanoseconds", "the critical path: what the steps waited on"},
    {"alloc_objects", "count", "allocations in the window"},
    {"alloc_space", "bytes", "memory allocated in the window"},
    {"inuse_objects", "count", "allocations in use at the peak"},
    {"inuse_space", "bytes", "memory in use at the peak"}};
inline constexpr SampleTypeName kSnapshotSampleTypes[] = {{"inuse_space", "bytes", "memory in use at the peak"},
                                                          {"inuse_objects", "count", "allocations in use at the peak"},
                                                          {"dump_space", "bytes", "memory reserved at the dump"},
                                                          {"dump_objects", "count", "blocks at the dump"},
                                                          {"alloc_space", "bytes", "memory allocated in the window"},
                                                          {"alloc_objects", "count", "allocations in the window"}};
// A sample type's meaning, from either registry (the same words where both have it).
inline const char* SampleTypeMeaning(std::string_view type) {
  for (const SampleTypeName& t : kTraceSampleTypes) {
    if (type == t.type) return t.meaning;
  }
  for (const SampleTypeName& t : kSnapshotSampleTypes) {
    if (type == t.type) return t.meaning;
  }
  return nullptr;
}

// The sample types the HTML pages' flame graphs draw, in their select's order, each one
// of the registries' above: a trace's (device time, the critical path, host work, memory
// at the peak); a rank's on the ranks' page (two: its profile travels in its summary); a
// comparison's (per step, where memory at the peak means nothing); a snapshot's.
inline constexpr std::string_view kTraceFlameTypes[] = {"gpu", "critical", "work", "inuse_space"};
inline constexpr std::string_view kRankFlameTypes[] = {"gpu", "work"};
inline constexpr std::string_view kCompareFlameTypes[] = {"gpu", "critical", "work"};
inline constexpr std::string_view kSnapshotFlameTypes[] = {"inuse_space", "alloc_space", "dump_space"};

template <size_t N>
std::vector<std::string> TypeList(const std::string_view (&types)[N]) {
  return {std::begin(types), std::end(types)};
}

template <size_t N, size_t M>
constexpr bool AllRegistered(const std::string_view (&types)[N], const SampleTypeName (&registry)[M]) {
  for (std::string_view t : types) {
    bool found = false;
    for (const SampleTypeName& r : registry) found |= t == r.type;
    if (!found) return false;
  }
  return true;
}
// A type both registries hold means one thing: the same unit and the same words.
constexpr bool OneMeaningEach() {
  for (const SampleTypeName& a : kTraceSampleTypes) {
    for (const SampleTypeName& b : kSnapshotSampleTypes) {
      if (std::string_view(a.type) == b.type &&
          (std::string_view(a.unit) != b.unit || std::string_view(a.meaning) != b.meaning))
        return false;
    }
  }
  return true;
}
static_assert(OneMeaningEach());
static_assert(AllRegistered(kTraceFlameTypes, kTraceSampleTypes) && AllRegistered(kRankFlameTypes, kTraceSampleTypes) &&
              AllRegistered(kCompareFlameTypes, kTraceSampleTypes) &&
              AllRegistered(kSnapshotFlameTypes, kSnapshotSampleTypes));

// One stack frame: a pprof Function and its Location. Every output reads its names from
// here, decided once (MakeFrame); only the pprof writer adapts name to pprof's display.
struct Frame {
  std::string name;         // as people read it: Python frames "func path:line" (no '('), else system_name
  std::string function;     // the function alone: Python frames "func", else system_name
  std::string system_name;  // the event name as in the trace, addresses removed
  std::string filename;     // source file of Python frames, else empty
  int64_t line = 0;         // line of Python frames, else 0
};

// The label keys convert writes, named once: the profile builders write them, the folded
// writer and the rank merge read them, and users filter on them (-tagfocus device=cuda:0).
namespace label_key {
inline constexpr const char* kPid = "pid";
inline constexpr const char* kTid = "tid";
inline constexpr const char* kThread = "thread";
inline constexpr const char* kRank = "rank";
inline constexpr const char* kStep = "step";
inline constexpr const char* kDevice = "device";
inline constexpr const char* kStream = "stream";
inline constexpr const char* kBase = "pprof::base";  // pprof's mark of a -diff_base sample
}  // namespace label_key

struct Label {
  std::string key;
  std::string str;  // a string label, or empty for a numeric one
  int64_t num = 0;  // a numeric label's value
  bool numeric = false;
};

// A call-tree node: node 0 is the root (no frame); others have a frame and a parent.
struct TreeNode {
  uint32_t parent;
  uint32_t frame;  // index into Profile::frames
};

struct Sample {
  uint32_t node;                // leaf node of the stack in Profile::tree
  uint32_t labels;              // index into Profile::label_sets
  std::vector<int64_t> values;  // one per Profile::sample_types
};

// Whether samples carry the step they ran in. A stack that ran in S steps is then S
// samples: a profile of many steps grows that many times (and pprof reads it as slowly).
enum class StepLabels {
  kAuto,  // on when the trace has at most kAutoStepLabels steps
  kOn,
  kOff,
};
inline constexpr size_t kAutoStepLabels = 10;

struct Profile {
  std::vector<ValueType> sample_types;
  std::string default_sample_type;
  ValueType period_type;
  int64_t period = 0;
  std::vector<Frame> frames;
  std::vector<TreeNode> tree;  // tree[0] is the root
  std::vector<std::vector<Label>> label_sets;
  std::vector<Sample> samples;
  int64_t time_nanos = 0;
  int64_t duration_nanos = 0;
  std::vector<std::string> comments;
  // What pprof names the profile after ("File: ..." and the web UI's title): the trace,
  // written as the profile's one Mapping, with no addresses to symbolize.
  std::string source_file;
};

// Empty if p is well formed, else what is wrong: dangling indexes, value arity,
// unknown default sample type, a cycle in the tree.
std::string ValidateProfile(const Profile& p);

// Frames a stack keeps by default (convert --max-depth): deeper ones fold into one
// frame of this name, in every profile a reader or builder makes.
inline constexpr uint32_t kDefaultMaxDepth = 2048;
inline constexpr const char kDeeperFramesName[] = "[deeper frames truncated]";

// The profile in `bytes` (profile.proto, gzipped or not) as convert wrote it: frames
// in its function order (each Frame's name is pprof's function name, system_name the
// event's), a tree of its stacks, a label set per distinct labels, its samples in order.
// A stack deeper than max_depth keeps its first max_depth - 1 frames from the root and
// one "[deeper frames truncated]" frame, as convert folds deep stacks (so memory follows
// the message, never a stack's depth).
// Throws Error (kInput) naming `file`, with the byte offset in the uncompressed message,
// for anything else: a malformed message, dangling ids, a profile whose first comment
// does not say torch2pprof convert wrote it, more than 2 GiB (protobuf's limit).
Profile DecodeProfile(const std::string& file, std::string_view bytes, uint32_t max_depth = kDefaultMaxDepth);
// The same, read from the file at path ("-": standard input).
Profile ReadProfile(const std::string& path, uint32_t max_depth = kDefaultMaxDepth);

// One profile as `go tool pprof -diff_base=base next` reads two: the samples of both,
// those of base negated and labelled pprof::base=true, so -top shows what changed.
// Sample types are the union of both (a column one lacks is 0 there).
// The profile names the two runs (its Mapping: "next vs base"), so pprof shows them.
Profile DiffProfile(const Profile& base, const Profile& next);

// A profile's values per step: each divided by `steps` and rounded to the nearest integer,
// so that runs of different lengths compare as compare's report does (a DiffProfile of two
// such; the comments say so).
Profile PerStepProfile(Profile p, uint64_t steps);

}  // namespace torch2pprof
