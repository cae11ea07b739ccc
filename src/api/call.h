// What every API call shares: its stages timed for --stats and shown through Progress,
// out of memory named with the file and the stage, the inputs' sizes and checks, and the
// model and stacks built beside each other.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "base/executor.h"
#include "load/loader.h"
#include "model/build.h"
#include "model/lane_builder.h"
#include "torch2pprof/torch2pprof.h"

namespace torch2pprof::api {

// Stage by stage: wall time, and CPU time of the whole process (all its threads).
class Stages {
 public:
  Stages(std::vector<StageTime>* out, Progress* progress) : out_(*out), progress_(progress) {}
  ~Stages() { End(); }
  void Begin(const char* stage);
  void End();
  const char* current() const { return stage_ ? stage_ : "starting"; }
  // The input the stages work on now, for a message that names it.
  std::string file;
  // The current stage loaded a trace.
  void Loaded(const LoadStats& stats) {
    json_bytes_ += stats.json_bytes;
    cut_on_workers_ += stats.cut_on_workers;
  }

 private:
  std::vector<StageTime>& out_;
  Progress* progress_;
  const char* stage_ = nullptr;
  uint64_t json_bytes_ = 0, cut_on_workers_ = 0;  // loaded in the current stage
  std::chrono::steady_clock::time_point wall_;
  double cpu_ = 0;
};

[[noreturn]] void ThrowOutOfMemory(const Stages& stages);

// A call: its result, its stages timed (and shown through `progress`), and out of memory
// named with the file and the stage (the machine's limit is no fault of the input, but it
// is where the input was too large).
template <typename Result, typename Body>
Result RunStages(Progress* progress, const std::string& file, Body body) {
  Result result;
  Stages stages(&result.stages, progress);
  stages.file = file;
  try {
    body(stages, result);
  } catch (const std::bad_alloc&) {
    ThrowOutOfMemory(stages);
  }
  return result;
}

std::string SaturatedWarning(uint64_t n);
// The model's repairs (TraceModel::steps_cut), one warning line each; none when there are none.
std::vector<std::string> ModelWarnings(const TraceModel& m);
extern const char kRanksArePositions[];

// The traces of several ranks are different files: one given twice (by another name too:
// a link, ./x) would be a rank of its own. Standard input is one input of one.
void CheckDistinctInputs(const std::vector<std::string>& inputs);
// Sets the progress's total from the inputs, and returns the counter the loads add to.
std::atomic<uint64_t>* TrackProgress(Progress* progress, const std::vector<std::string>& inputs);
// A trace with nothing to show is an error that says so.
void NeedEvents(const Trace& trace);
// The executor of a call: `threads`, or all cores for 0.
int Threads(int threads);

// How a call loads a trace: with details (arguments, zero-length and [memory] events) for
// analyze, compare and summarize; convert sets details false and its max_depth.
LoadOptions LoadOptionsOf(const std::string& path, int threads, bool strict, bool allow_truncated,
                          std::atomic<uint64_t>* bytes_read);
// What every call does with a trace it loaded: an error where it has nothing to show, the
// load's numbers for --stats, its warnings after `warnings`.
void AcceptTrace(const Trace& trace, Stages& stages, std::vector<std::string>* warnings);
// One trace loaded in a call: "read and parse", then AcceptTrace.
Trace LoadTraceInCall(Input& input, const LoadOptions& options, Executor& ex, Stages& stages,
                      std::vector<std::string>* warnings);

struct ModelAndStacks {
  TraceModel model;
  std::vector<LaneStacks> lanes;
};
// The model, and beside it the uncut stacks (they need no model): analyze's, and
// convert's unless step labels cut them.
ModelAndStacks BuildModelBesideStacks(const Trace& trace, Executor& ex);

}  // namespace torch2pprof::api
