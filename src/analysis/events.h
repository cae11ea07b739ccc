// The loaded trace as analyze's stages read it: events by number (intervals, then the
// zero-length X events), with their args and the model's roles, flags and launches.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "torch2pprof/analysis.h"
#include "torch2pprof/stages/trace.h"
#include "torch2pprof/stages/trace_model.h"

namespace torch2pprof::analysis {

// The parts an event's time can go to: the indexes of kStepParts (analysis.h) but Other,
// which is what none of them claims.
enum Part : int { kKernelPart, kMemcpyPart, kMemsetPart, kCommPart, kRuntimePart, kDataLoaderPart, kCpuExecPart };
constexpr int kParts = kStepPartCount - 1;
static_assert(kStepParts[kCpuExecPart].field == &StepRow::cpu_exec_ns && kParts == kCpuExecPart + 1 &&
                  kStepParts[kCommPart].field == &StepRow::communication_ns,
              "Part indexes kStepParts");

class Events {
 public:
  Events(const Trace& trace, const TraceModel& model);

  const Trace& trace() const { return t_; }
  const TraceModel& model() const { return m_; }
  size_t count() const { return count_; }

  const Interval& Iv(size_t e) const { return EventAt(t_, e); }
  const EventArgs& Args(size_t e) const;
  // The "bytes" of a copy or set on the device; -1 when absent.
  int64_t CopyBytes(size_t e) const;
  int64_t Dur(size_t e) const { return Iv(e).end_ns - Iv(e).start_ns; }
  Role RoleOf(size_t e) const { return m_.RoleOf(Iv(e)); }
  std::string_view Name(size_t e) const { return t_.strings.Get(Iv(e).name); }
  bool Has(size_t e, NameFlag f) const { return m_.Has(Iv(e), f); }

  bool IsStep(size_t e) const { return m_.IsStep(Iv(e)); }
  // Host-side: an operator or a user annotation (never a gpu_user_annotation).
  bool IsHostOp(size_t e) const { return RoleOf(e) == Role::kOperator || RoleOf(e) == Role::kUserAnnotation; }
  bool IsDataLoader(size_t e) const { return IsHostOp(e) && Has(e, kDataLoaderName); }
  // NCCL kernels (found by name), and nccl:/gloo: collectives on the host.
  bool IsCommunication(size_t e) const {
    return RoleOf(e) == Role::kKernel ? Has(e, kNcclName) : IsHostOp(e) && Has(e, kCommName);
  }
  // A row of the operator table: a cpu_op that is no step, DataLoader or wrapper.
  bool IsOperatorRow(size_t e) const {
    return RoleOf(e) == Role::kOperator && !Has(e, kStepName) && !Has(e, kDataLoaderName) && !Has(e, kWrapperName);
  }
  // The breakdown part an event's time goes to, or -1 (Python functions, annotations
  // of device time and everything else: their uncovered time is Other).
  int PartOf(size_t e) const;
  // Device time launched by host event e (its runtime call's kernels, memcpys, memsets).
  int64_t LaunchedBy(size_t e) const;

  // The events of the roles most stages read, by number, found in one pass: a stage
  // walks its few instead of all (each walk of all costs a read of every interval).
  const std::vector<uint32_t>& DeviceEvents() const { return device_; }  // kernels, memcpys, memsets
  const std::vector<uint32_t>& RuntimeEvents() const { return runtime_; }
  const std::vector<uint32_t>& AnnotationEvents() const { return annotations_; }  // user annotations, no step
  // Each host event that launched device work, with that work's time (LaunchedBy), by event.
  const std::vector<std::pair<uint32_t, int64_t>>& Launched() const { return launched_; }

 private:
  const Trace& t_;
  const TraceModel& m_;
  const size_t count_;
  const bool details_;
  std::vector<std::pair<uint32_t, int64_t>> launched_;  // (host event, device time), sorted
  std::vector<uint32_t> device_, runtime_, annotations_;
};

}  // namespace torch2pprof::analysis
