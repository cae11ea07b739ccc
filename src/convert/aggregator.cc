#include "convert/aggregator.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <optional>

#include "base/executor.h"
#include "base/utf8.h"
#include "convert/attribution.h"
#include "convert/fold.h"
#include "convert/profile_builder.h"
#include "model/build.h"
#include "torch2pprof/error.h"
#include "torch2pprof/version.h"

namespace torch2pprof {
namespace {

struct Added {
  int64_t first, last;  // time span of the trace's intervals (first > last: none)
  bool device;          // it has device work
  uint64_t saturated;   // device sums held at the 64-bit limit
  bool critical;        // it has a critical path (a step)
};

std::string Summary(const Trace& trace, const std::vector<LaneStacks>& lanes) {
  std::string s = "events: " + std::to_string(trace.stats.events) + " (";
  bool first = true;
  for (const auto& [ph, n] : trace.stats.phases) {
    s += (first ? "" : ", ") + ph + " " + std::to_string(n);
    first = false;
  }
  uint64_t partial = 0;
  for (const auto& l : lanes) partial += l.partial_overlaps;
  s += "); intervals: " + std::to_string(trace.intervals.size()) + " on " + std::to_string(lanes.size()) +
       " lanes; intervals that outlive their caller: " + std::to_string(partial);
  return s;
}

std::string Skipped(const Trace& trace) {
  std::string s = "skipped: " + std::to_string(trace.stats.skipped_total());
  for (size_t i = 0; i < kSkipReasons.size(); ++i) {
    if (trace.stats.skipped[i])
      s += std::string(", ") + kSkipReasons[i].key + " " + std::to_string(trace.stats.skipped[i]);
  }
  if (trace.stats.repaired) s += "; repaired " + std::to_string(trace.stats.repaired);
  if (trace.stats.python_clipped) {
    s += "; python_function events clipped to their Python parent's end: " + std::to_string(trace.stats.python_clipped);
  }
  return s;
}

// Adds one trace's samples to the profile b builds: the lanes folded into the tree, then
// what hangs where (attribution.h).
Added AddTrace(const Trace& t, const TraceModel& m, const std::vector<LaneStacks>& lanes,
               const AggregateOptions& options, ProfileBuilder& b, Executor& ex) {
  const bool step_labels = StepLabelsOn(options, m);
  // Host events that launched device work, and the instants that are no intervals, by
  // lane and time: found beside the links and forward stacks, which do not need them.
  auto found_points = Beside(ex, [&] { return FindPoints(t, m, lanes, options.memory); });
  const FrameKeys frame_keys(t);
  std::optional<Points> points;
  FoldedLanes folded = FoldLanes(
      t, m, lanes, options, step_labels, frame_keys,
      [&]() -> const Launchers& {
        points.emplace(found_points.get());
        return points->launchers;
      },
      b, ex);
  Points& found = *points;
  const Places places = AddLanes(t, m, lanes, folded, found, b);
  uint64_t saturated = 0;
  for (const MemoryTimeline& tl : m.memory) saturated += tl.saturated;
  const bool has_device = AddDeviceWork(t, m, options, step_labels, frame_keys, found, places, &saturated, b, ex);
  const bool has_critical = options.critical && AddCritical(t, m, lanes, folded, found, places, step_labels, b, ex);
  if (options.memory) AddMemory(t, m, step_labels, places, b);
  return Added{m.start_ns, m.end_ns, has_device, saturated, has_critical};
}

// One comment line per device whose peak holds memory the trace did not allocate.
std::string MemoryNote(const MemoryTimeline& tl) {
  return "memory " + tl.device + ": peak " + std::to_string(tl.peak_bytes) + " bytes (Total Allocated), of which " +
         std::to_string(tl.before_trace_bytes) +
         " bytes were allocated before the trace began (inuse_space frame [allocated before the trace began])";
}

}  // namespace

struct Aggregator::State {
  Profile p;
  AggregateOptions options;
  ProfileBuilder b;
  explicit State(const AggregateOptions& o) : options(o), b(&p, o.max_depth) {
    options.fold_segment = std::max(1u, options.fold_segment);
  }
  bool has_device = false, has_memory = false, has_critical = false;
  uint64_t saturated = 0;  // the traces' sums held at the 64-bit limit, beyond the builder's
  // One per trace: what the profile's comments say of it, and its time span.
  struct Input {
    std::string producer;            // "torch2pprof 0.1.0": the version that read the trace
    std::string file;                // the trace (a profile's: its name as the profile says it)
    std::vector<std::string> lines;  // the comments after its first (summary, skipped, notes)
    int64_t given_rank = -1;         // distributedInfo.rank; -1: none
    bool has_span = false;
    int64_t wall_start = 0;  // wall-clock start in ns since the epoch; 0: the trace has no wall clock
    int64_t duration = 0;
  };
  std::vector<Input> inputs;
};
Aggregator::Aggregator(const AggregateOptions& options) : s_(std::make_unique<State>(options)) {
  s_->b.set_labels(options.labels);
  for (const SampleTypeName& t : kTraceSampleTypes) s_->p.sample_types.push_back({t.type, t.unit});
}
Aggregator::~Aggregator() = default;
Aggregator::Aggregator(Aggregator&&) noexcept = default;
Aggregator& Aggregator::operator=(Aggregator&&) noexcept = default;

void Aggregator::Add(const Trace& trace, const TraceModel& model, const std::vector<LaneStacks>& lanes, Executor& ex) {
  State& s = *s_;
  // The rank label holds the input's position until Finish knows the ranks.
  s.b.Begin(trace, model, s.options.rank_labels ? static_cast<int64_t>(s.inputs.size()) : -1);
  Added added = AddTrace(trace, model, lanes, s.options, s.b, ex);
  s.has_device |= added.device;
  s.has_critical |= added.critical;
  s.saturated += added.saturated;
  s.has_memory |= s.options.memory && !trace.memory.empty();
  State::Input input;
  input.producer = std::string("torch2pprof ") + kVersion;
  input.file = trace.file;
  input.lines = {Summary(trace, lanes), Skipped(trace)};
  input.given_rank = ReadDistributedInfo(trace.header).rank;
  if (added.first <= added.last) {
    input.has_span = true;
    input.wall_start = WallClockStart(trace, added.first);
    input.duration = added.last - added.first;
  }
  if (!model.steps.empty()) {
    input.lines.push_back(StepLabelsOn(s.options, model)
                              ? "step labels: on (" + std::to_string(model.steps.size()) + " steps)"
                              : "step labels: off (" + std::to_string(model.steps.size()) +
                                    " steps; --step-labels on adds them, one sample per stack and step)");
  }
  for (const MemoryTimeline& tl : model.memory) {
    if (s.options.memory && tl.before_trace_bytes > 0) input.lines.push_back(MemoryNote(tl));
  }
  s.inputs.push_back(std::move(input));
}

namespace {

// "N stacks deeper than D frames: ...": the builder counts the folds again as the
// stacks are added.
bool IsFoldsComment(const std::string& c) {
  size_t digits = 0;
  while (digits < c.size() && c[digits] >= '0' && c[digits] <= '9') ++digits;
  return digits > 0 && c.compare(digits, 21, " stacks deeper than ") == 0;
}

// Where the rank label goes among a sample's labels: after the thread's (pid, tid,
// thread), as ProfileBuilder::Labels puts it.
void PutRank(std::vector<Label>& labels, int64_t rank) {
  size_t at = 0;
  while (at < labels.size() && (labels[at].key == label_key::kPid || labels[at].key == label_key::kTid ||
                                labels[at].key == label_key::kThread))
    ++at;
  labels.insert(labels.begin() + static_cast<std::ptrdiff_t>(at), Label{label_key::kRank, "", rank, true});
}

// An InputComment read back.
struct InputLine {
  std::string producer, file;
  int64_t rank = -1;
};
std::optional<InputLine> ParseInputComment(const std::string& c) {
  const size_t convert = c.find(" convert ");
  if (c.rfind("torch2pprof ", 0) != 0 || convert == std::string::npos) return std::nullopt;
  InputLine l{c.substr(0, convert), c.substr(convert + 9)};
  const size_t open = l.file.rfind(" (rank ");
  if (open != std::string::npos && l.file.back() == ')') {
    const std::string digits = l.file.substr(open + 7, l.file.size() - open - 8);
    char* end = nullptr;
    errno = 0;
    const long long rank = std::strtoll(digits.c_str(), &end, 10);
    if (!digits.empty() && *end == '\0' && errno == 0 && rank >= 0) {
      l.rank = rank;
      l.file.resize(open);
    }
  }
  return l;
}

}  // namespace

// The format is decided here, both ways: written by Finish (and SnapshotProfile), read
// back by AddProfile.
std::string InputComment(const std::string& producer, const std::string& file, int64_t rank) {
  return producer + " convert " + file + (rank >= 0 ? " (rank " + std::to_string(rank) + ")" : "");
}

std::vector<int64_t> Aggregator::AddProfile(const Profile& in, const std::string& file) {
  State& s = *s_;
  const std::string problem = ValidateProfile(in);
  if (!problem.empty()) ThrowInput(file, -1, "not a profile convert wrote: " + problem);
  // Its inputs, from its comments: each "torch2pprof V convert FILE[ (rank N)]" and the
  // lines after it.
  const size_t first_input = s.inputs.size();
  std::vector<State::Input> blocks;
  for (const std::string& c : in.comments) {
    if (std::optional<InputLine> line = ParseInputComment(c)) {
      State::Input b;
      b.producer = std::move(line->producer);
      b.file = std::move(line->file);
      b.given_rank = line->rank;
      blocks.push_back(std::move(b));
    } else if (!IsFoldsComment(c) && !blocks.empty()) {
      blocks.back().lines.push_back(c);
    }
  }
  if (blocks.empty()) ThrowInput(file, -1, "its comments name no trace that convert read");
  // The whole profile's span stands on its first input: Finish takes the earliest start
  // and the latest end over all.
  blocks[0].has_span = in.duration_nanos > 0 || in.time_nanos > 0;
  blocks[0].wall_start = in.time_nanos;
  blocks[0].duration = in.duration_nanos;
  // Each sample's input: by its rank label where it has one (a profile of convert -o).
  std::vector<int64_t> given;
  for (const State::Input& b : blocks) given.push_back(b.given_rank);
  auto input_of = [&](const Sample& smp) -> size_t {
    for (const Label& l : in.label_sets[smp.labels]) {
      if (l.key != label_key::kRank) continue;
      for (size_t i = 0; i < blocks.size(); ++i) {
        if (l.numeric && blocks[i].given_rank == l.num) return i;
      }
      ThrowInput(file, -1, "a sample of rank " + std::to_string(l.num) + ", which its comments do not name");
    }
    if (blocks.size() != 1) ThrowInput(file, -1, "a sample without a rank in a profile of several traces");
    return 0;
  };
  // Value columns by name into the builder's layout.
  std::vector<size_t> column;
  for (const ValueType& t : in.sample_types) {
    size_t k = 0;
    while (k < s.p.sample_types.size() && s.p.sample_types[k].type != t.type) ++k;
    if (k == s.p.sample_types.size()) ThrowInput(file, -1, "a sample type convert does not write: " + t.type);
    column.push_back(k);
    s.has_device |= t.type == "gpu";
    s.has_critical |= t.type == "critical";
    s.has_memory |= t.type == "alloc_objects";
  }
  std::vector<uint32_t> frames;
  frames.reserve(in.frames.size());
  for (const Frame& f : in.frames) frames.push_back(s.b.FrameFor(f.system_name));
  std::vector<uint32_t> stack;
  std::map<std::pair<size_t, std::string>, uint32_t> label_sets;  // (input, labels) -> set
  for (const Sample& smp : in.samples) {
    const size_t input = input_of(smp);
    std::vector<Label> labels;
    for (const Label& l : in.label_sets[smp.labels]) {
      if (l.key != label_key::kRank || !s.options.rank_labels) labels.push_back(l);
    }
    if (s.options.rank_labels) PutRank(labels, static_cast<int64_t>(first_input + input));
    std::string key;
    for (const Label& l : labels) {
      key += l.key + '\0' + (l.numeric ? std::to_string(l.num) : l.str) + (l.numeric ? '\1' : '\2');
    }
    auto [it, added] = label_sets.try_emplace({input, key}, 0);
    if (added) it->second = s.b.AppendLabels(std::move(labels));
    stack.clear();
    for (uint32_t n = smp.node; n != 0; n = in.tree[n].parent) stack.push_back(in.tree[n].frame);
    uint32_t node = 0;
    for (size_t k = stack.size(); k-- > 0;) node = s.b.Node(node, frames[stack[k]]);
    std::vector<int64_t> values(s.p.sample_types.size(), 0);
    for (size_t k = 0; k < column.size(); ++k) values[column[k]] = smp.values[k];
    s.b.AppendSample(node, it->second, std::move(values));
  }
  for (State::Input& b : blocks) s.inputs.push_back(std::move(b));
  return given;
}

uint64_t Aggregator::folded_stacks() const { return s_->b.folds(); }
uint64_t Aggregator::saturated() const { return s_->saturated + s_->b.saturated(); }

Profile Aggregator::Finish(const std::vector<int64_t>& ranks) && {
  State& s = *s_;
  if (s.options.rank_labels && ranks.size() != s.inputs.size()) {
    throw std::logic_error("Aggregator::Finish: one rank per trace added");
  }
  Profile p = std::move(s.p);
  std::vector<int> keep = {kCalls, kWall, kWork};
  if (s.has_device) keep.push_back(kGpu);
  if (s.has_critical) keep.push_back(kCritical);
  if (s.has_memory) {
    for (int k = kAllocObjects; k < kLayoutSize; ++k) keep.push_back(k);
  }
  std::vector<ValueType> types;
  for (int k : keep) types.push_back(p.sample_types[static_cast<size_t>(k)]);
  p.sample_types = std::move(types);
  for (Sample& sample : p.samples) {
    std::vector<int64_t> values;
    values.reserve(keep.size());
    for (int k : keep) values.push_back(sample.values[static_cast<size_t>(k)]);
    sample.values = std::move(values);
  }
  if (s.options.rank_labels) {
    for (auto& labels : p.label_sets) {
      for (Label& label : labels) {
        if (label.key == label_key::kRank) label.num = ranks[static_cast<size_t>(label.num)];
      }
    }
  }
  p.default_sample_type = "work";
  p.period_type = {"wall", "nanoseconds"};
  p.period = 1;
  // The inputs' file names, not their paths: a profile is shared, and pprof prints its
  // comments at the top of every view.
  auto base = [](const std::string& path) {
    return VisibleText(path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1));
  };
  if (!s.inputs.empty()) {
    p.source_file = base(s.inputs[0].file);
    if (s.inputs.size() > 1) p.source_file += " and " + std::to_string(s.inputs.size() - 1) + " more";
  }
  for (size_t i = 0; i < s.inputs.size(); ++i) {
    State::Input& in = s.inputs[i];
    const int64_t rank = s.options.rank_labels ? ranks[i] : in.given_rank;
    p.comments.push_back(InputComment(in.producer, base(in.file), rank));
    for (std::string& line : in.lines) p.comments.push_back(std::move(line));
  }
  if (s.b.folds()) {
    p.comments.push_back(std::to_string(s.b.folds()) + " stacks deeper than " + std::to_string(s.options.max_depth) +
                         " frames: their deeper frames fold into " + kDeeperFramesName);
  }
  // The profile's time: its inputs' earliest start where every input has a wall clock,
  // else none; its duration: the longest input's (ranks run side by side). Both compose:
  // a profile merged from merged profiles says what the merge of their traces says.
  bool all_wall = true, any = false;
  int64_t start = std::numeric_limits<int64_t>::max();
  for (const State::Input& in : s.inputs) {
    if (!in.has_span) continue;
    any = true;
    all_wall &= in.wall_start != 0;
    start = std::min(start, in.wall_start);
    p.duration_nanos = std::max(p.duration_nanos, in.duration);
  }
  if (any && all_wall) p.time_nanos = start;
  return p;
}

Profile Aggregate(const Trace& trace, const TraceModel& model, const std::vector<LaneStacks>& lanes,
                  const AggregateOptions& options, Executor& ex) {
  Aggregator a(options);
  a.Add(trace, model, lanes, ex);
  return std::move(a).Finish();
}

Profile Aggregate(const Trace& trace, const TraceModel& model, const std::vector<LaneStacks>& lanes,
                  const AggregateOptions& options) {
  Executor one(1);
  return Aggregate(trace, model, lanes, options, one);
}

Profile AggregateUncut(const Trace& trace, const TraceModel& model, const std::vector<LaneStacks>& uncut,
                       const AggregateOptions& options, Executor& ex) {
  if (!StepLabelsOn(options, model)) return Aggregate(trace, model, uncut, options, ex);
  return Aggregate(trace, model, BuildLanes(trace, ConvertBuildOptions(model, options), ex), options, ex);
}

AggregateOptions FlameGraphAggregate(bool critical) {
  AggregateOptions options;
  options.labels = false;
  options.step_labels = StepLabels::kOff;
  options.critical = critical;
  return options;
}

bool StepLabelsOn(const AggregateOptions& options, const TraceModel& model) {
  if (!options.labels) return false;
  if (options.step_labels == StepLabels::kAuto) return model.steps.size() <= kAutoStepLabels;
  return options.step_labels == StepLabels::kOn;
}

BuildOptions ConvertBuildOptions(const TraceModel& model, const AggregateOptions& options) {
  BuildOptions build;
  if (StepLabelsOn(options, model)) build.cuts = model.StepBoundaries();
  return build;
}

Profile Aggregate(const Trace& trace, int threads) {
  Executor ex(threads);
  TraceModel model = BuildModel(trace, ex);
  AggregateOptions options;
  return Aggregate(trace, model, BuildLanes(trace, ConvertBuildOptions(model, options), ex), options, ex);
}

}  // namespace torch2pprof
