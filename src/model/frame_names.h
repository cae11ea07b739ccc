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

// Python paths are long and mostly the same prefix; the readable name keeps what
// follows the last site-packages/ (the module path), the full path stays in filename.
// A name keeps at most the last kNamePathBytes of it, from a '/' (a snapshot can give one
// file name to every frame through the pickle's memo: each frame's name would copy it).
inline constexpr size_t kNamePathBytes = 512;
std::string_view ShortPath(std::string_view path);
// A file name as a frame keeps it: at most the last PATH_MAX (4096) bytes, from a '/'; a
// longer one is no path a tool can open.
inline constexpr size_t kFilePathBytes = 4096;
std::string_view BoundedPath(std::string_view path);

// A frame for a (cleaned) event name, its names decided here for every output: Python
// frames "path.py(123): func" get file, line, the function "func" and the name
// "func path:123" (the path after site-packages/); any other frame is named as the event.
Frame MakeFrame(std::string_view system_name);

// A frame whose own time is a thread waiting, not working (docs/reference.md: waits): a
// Python lock acquire, Condition.wait, select/poll/epoll, time.sleep, queue.get, and
// the autograd engine's run_backward on the thread that called backward() while the
// autograd thread does the work (a name rule: TraceModel::Waits says where a run_backward
// runs the nodes itself); and the profiler's own overhead (Activity Buffer Request). CUDA
// synchronisation is not on the list: a CPU waiting for the GPU is a finding.
bool IsBlockingWait(const Frame& frame);

// "void k<4, F<float> >(int, F<float>)" -> "void k<4, F<float> >": a C++ signature without
// its parameter list (which directly follows an identifier or a template's '>'); any
// other name as it is.
std::string_view WithoutParameters(std::string_view name);

// The autograd engine's names, as Kineto writes them: the wait of the thread that called
// backward() (a frame, its address removed), and the wrapper of each node the engine runs.
inline constexpr std::string_view kRunBackwardFrame = "<built-in method run_backward of torch._C._EngineBase object>";
inline constexpr std::string_view kBackwardNodePrefix = "autograd::engine::evaluate_function: ";
inline constexpr std::string_view kSleepFrame = "<built-in function sleep>";

// IsBlockingWait of the frame an event name becomes: analyze's lanes leave the same
// time out of their work as convert's work sample type.
bool IsBlockingWaitEvent(std::string_view event_name);

// The frame over a backward subtree hung under its forward op: "[backward] AddmmBackward0"
// for "autograd::engine::evaluate_function: AddmmBackward0".
std::string BackwardFrameName(std::string_view backward_root_name);

}  // namespace torch2pprof
