#include "convert/aggregator.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>

#include "base/executor.h"
#include "base/utf8.h"
#include "convert/attribution.h"
#include "convert/fold.h"
#include "convert/profile_builder.h"
#include "model/build.h"
#include "torch2pprof/version.h"

namespace torch2pprof {
namespace {

struct Added {
  int64_t first, last;  // time span of the trace's intervals (first > last: none)
  bool device;          // it has device work
  uint64_t saturated;   // device sums held at the 64-bit limit
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
  if (options.memory) AddMemory(t, m, step_labels, places, b);
  return Added{m.start_ns, m.end_ns, has_device, saturated};
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
  bool has_device = false, has_memory = false;
  uint64_t saturated = 0;  // the traces' sums held at the 64-bit limit, beyond the builder's
  int64_t first = std::numeric_limits<int64_t>::max(), last = std::numeric_limits<int64_t>::min();
  int64_t time_nanos = 0;
  struct Input {
    std::string file, summary, skipped;
    std::vector<std::string> notes;
  };
  std::vector<Input> inputs;
};

Aggregator::Aggregator(const AggregateOptions& options) : s_(std::make_unique<State>(options)) {
  s_->b.set_labels(options.labels);
  s_->p.sample_types = {{"calls", "count"},         {"wall", "nanoseconds"},    {"work", "nanoseconds"},
                        {"gpu", "nanoseconds"},     {"alloc_objects", "count"}, {"alloc_space", "bytes"},
                        {"inuse_objects", "count"}, {"inuse_space", "bytes"}};
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
  s.saturated += added.saturated;
  s.has_memory |= s.options.memory && !trace.memory.empty();
  if (added.first <= added.last && added.first < s.first) s.time_nanos = WallClockStart(trace, added.first);
  s.first = std::min(s.first, added.first);
  s.last = std::max(s.last, added.last);
  State::Input input{trace.file, Summary(trace, lanes), Skipped(trace), {}};
  if (!model.steps.empty()) {
    input.notes.push_back(StepLabelsOn(s.options, model)
                              ? "step labels: on (" + std::to_string(model.steps.size()) + " steps)"
                              : "step labels: off (" + std::to_string(model.steps.size()) +
                                    " steps; --step-labels on adds them, one sample per stack and step)");
  }
  for (const MemoryTimeline& tl : model.memory) {
    if (s.options.memory && tl.before_trace_bytes > 0) input.notes.push_back(MemoryNote(tl));
  }
  s.inputs.push_back(std::move(input));
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
        if (label.key == "rank") label.num = ranks[static_cast<size_t>(label.num)];
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
    std::string who = s.options.rank_labels ? " (rank " + std::to_string(ranks[i]) + ")" : "";
    p.comments.push_back(std::string("torch2pprof ") + kVersion + " convert " + base(s.inputs[i].file) + who);
    p.comments.push_back(std::move(s.inputs[i].summary));
    p.comments.push_back(std::move(s.inputs[i].skipped));
    for (std::string& note : s.inputs[i].notes) p.comments.push_back(std::move(note));
  }
  if (s.b.folds()) {
    p.comments.push_back(std::to_string(s.b.folds()) + " stacks deeper than " + std::to_string(s.options.max_depth) +
                         " frames: their deeper frames fold into [deeper frames truncated]");
  }
  if (s.first <= s.last) {
    p.duration_nanos = s.last - s.first;
    p.time_nanos = s.time_nanos;
  }
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
