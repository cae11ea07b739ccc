// What a step's time is, decided once for analyze's step table, its critical path and
// convert's critical samples: torch-tb-profiler's step (tb-semantics §3) over the model's
// host-side steps and the device work launched in each.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "torch2pprof/stages/trace.h"
#include "torch2pprof/stages/trace_model.h"

namespace torch2pprof {

struct StepWindow {
  std::string name;  // "ProfilerStep#3", or "(whole trace)"
  int64_t host_start = 0, host_end = 0;
  int64_t start = 0, end = 0;  // the step's time: [start, end)
  uint32_t lane = 0;           // the lane of the ProfilerStep event (whole trace: the busiest host lane)
  int32_t process = 0;
  uint64_t launched = 0;  // device events launched in the step
};

struct StepWindows {
  std::vector<StepWindow> steps;         // the analysed steps, in time order
  bool whole_trace = false;              // no ProfilerStep: one step, the host-side work's span
  int64_t host_start = 0, host_end = 0;  // whole trace: the host-side span
  // The analysed step of device event e (an event number), or -1: the model's rule
  // (DeviceStepOf) among the analysed steps; without steps, work launched inside the
  // host-side span.
  int64_t DeviceStep(const Trace& t, const TraceModel& m, size_t e) const;
  // The same for an instant on a host lane.
  int64_t HostStep(const TraceModel& m, uint32_t lane, int64_t t) const;
};

// A step lasts from its host start (never before the previous step's end; the first, never
// before device work launched earlier that it waited for) to the later of its host end and
// the end of the device work launched in it. The profiler's last steps that launched no
// device work (or under four fifths of the one before) were cut off mid-step: not analysed.
StepWindows FindStepWindows(const Trace& t, const TraceModel& m);

}  // namespace torch2pprof
