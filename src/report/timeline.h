// The steps' timelines (Analysis::timelines) as the JSON the HTML report's script draws:
// compact arrays, a page holds tens of thousands of bars.
#pragma once

#include <string>

#include "torch2pprof/analysis.h"

namespace torch2pprof {

// {"bounds": [...], "causes": [...], "analysed": N, "steps": [{"step", "start", "length",
// "lanes": [[name, device, depth], ...], "names": [...], "labels": [...], "bars": [lane,
// depth, start, end, name, count, ...], "critical": [lane, start, end, bound, name, count,
// ...], "gaps": [lane, start, end, cause, name, ...], "events", "merged"}, ...]}; times in
// nanoseconds from the step's start.
std::string TimelineJson(const Analysis& a);

}  // namespace torch2pprof
