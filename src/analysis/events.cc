#include "analysis/events.h"
#include "analysis/stages.h"
#include "base/sorted_runs.h"

#include <algorithm>

namespace torch2pprof::analysis {

Events::Events(const Trace& trace, const TraceModel& model)
    : t_(trace), m_(model), count_(EventCount(trace)), details_(trace.args.size() == trace.intervals.size()) {
  for (const Launch& l : m_.launches) {
    if (l.host_event != Launch::kNoEvent && IsDeviceRole(RoleOf(l.device_event)))
      launched_.push_back({l.host_event, Dur(l.device_event)});
  }
  SortRuns(launched_.begin(), launched_.end(), std::less<>());
  size_t out = 0;  // one entry per host event, its device time summed
  for (size_t i = 0; i < launched_.size(); ++i) {
    if (out > 0 && launched_[out - 1].first == launched_[i].first) {
      launched_[out - 1].second += launched_[i].second;
    } else {
      launched_[out++] = launched_[i];
    }
  }
  launched_.resize(out);
  for (size_t e = 0; e < count_; ++e) {
    const Role r = RoleOf(e);
    if (IsDeviceRole(r)) {
      device_.push_back(static_cast<uint32_t>(e));
    } else if (r == Role::kRuntime) {
      runtime_.push_back(static_cast<uint32_t>(e));
    } else if (r == Role::kUserAnnotation && !IsStep(e)) {
      annotations_.push_back(static_cast<uint32_t>(e));
    }
  }
}

const EventArgs& Events::Args(size_t e) const {
  static const EventArgs kNoArgs;
  size_t n = t_.intervals.size();
  if (e < n) return details_ ? t_.args[e] : kNoArgs;
  return e - n < t_.zero_length_args.size() ? t_.zero_length_args[e - n] : kNoArgs;
}

int Events::PartOf(size_t e) const {
  Role r = RoleOf(e);
  if (IsCommunication(e)) return kCommPart;
  if (r == Role::kKernel) return kKernelPart;
  if (r == Role::kMemcpy) return kMemcpyPart;
  if (r == Role::kMemset) return kMemsetPart;
  if (r == Role::kRuntime) return kRuntimePart;
  if (IsDataLoader(e)) return kDataLoaderPart;
  if (IsHostOp(e) && !IsStep(e)) return kCpuExecPart;
  return -1;
}

int64_t Events::CopyBytes(size_t e) const {
  const auto& v = t_.copy_bytes;
  auto it = std::lower_bound(v.begin(), v.end(), std::make_pair(static_cast<uint32_t>(e), INT64_MIN));
  return it != v.end() && it->first == e ? it->second : -1;
}

int64_t Events::LaunchedBy(size_t e) const {
  auto it = std::lower_bound(launched_.begin(), launched_.end(), std::make_pair(static_cast<uint32_t>(e), INT64_MIN));
  return it != launched_.end() && it->first == e ? it->second : 0;
}

}  // namespace torch2pprof::analysis
