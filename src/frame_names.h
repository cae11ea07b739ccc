// Frame names for the call trees of convert: an event name becomes a frame that
// aggregates (no addresses, no step numbers) and that pprof shows as it is.
#pragma once

#include <string>
#include <string_view>

#include "torch2pprof/profile.h"

namespace torch2pprof {

// The event name as a frame: " at 0x..." memory addresses removed so repeated calls of
// a bound method aggregate, and ProfilerStep#N is ProfilerStep, so that stacks of
// different steps (and of runs with other step numbers) aggregate; the step label keeps N.
std::string FrameSystemName(std::string_view event_name);

// A frame for a (cleaned) event name; Python frames "path.py(123): func" get file and
// line and the readable name "func path:123".
Frame MakeFrame(std::string_view system_name);

// A frame whose own time is a thread waiting, not working (README: the wait list): a
// Python lock acquire, Condition.wait, select/poll/epoll, time.sleep, queue.get, and
// the autograd engine's run_backward on the thread that called backward() while the
// autograd thread does the work; and the profiler's own overhead (Activity Buffer
// Request). CUDA synchronisation is not on the list: a CPU waiting for the GPU is a finding.
bool IsBlockingWait(const Frame& frame);

// The frame over a backward subtree hung under its forward op: "[backward] AddmmBackward0"
// for "autograd::engine::evaluate_function: AddmmBackward0".
std::string BackwardFrameName(std::string_view backward_root_name);

}  // namespace torch2pprof
