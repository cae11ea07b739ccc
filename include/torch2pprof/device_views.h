// analyze's views of the devices and their streams, as plain numbers in nanoseconds:
// kernels, utilization, idle time, copies, Tensor Cores, collectives, launches, queues.
#pragma once

#include <cstdint>
#include <iterator>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "torch2pprof/host_views.h"

namespace torch2pprof {

struct KernelRow {
  std::string name;
  uint64_t calls = 0;
  int64_t total_ns = 0, min_ns = 0, max_ns = 0;
  double blocks_per_sm = -1;  // weighted by duration; < 0 when the trace has none
  double occupancy = -1;      // est. achieved occupancy %, weighted by duration
  StepSeries step_total;      // with AnalysisOptions::per_step: by the step of each kernel (DeviceStepOf)
};

struct GpuRow {
  std::string device;  // "cuda:0"
  int64_t device_id = -1;
  std::string name;  // from deviceProperties
  int streams = 0;
  int64_t busy_ns = 0;           // union of its kernels, memcpys and memsets
  int64_t kernel_ns = 0;         // union of its kernels
  int64_t window_ns = 0;         // the steps' span the utilization is over
  int64_t window_kernel_ns = 0;  // union of its kernels inside that span
  // GPU utilization as torch-tb-profiler defines it: window_kernel_ns / window_ns (0
  // without a window). Every output reads it here.
  double utilization() const;
};
// The devices together: their kernels' time in the steps' span over the spans' sum.
double GpuUtilization(const std::vector<GpuRow>& gpus);

// Why a device stream sat idle, as HTA's idle time breakdown splits it
// (hta/analyzers/breakdown_analysis.py, _analyze_idle_time_for_stream): each gap before
// a piece of device work (kernel, memcpy, memset) on a stream, since the stream's work
// before it ended, is host wait when that work's launch call began after that end (the
// CPU launched it too late), kernel wait when the gap is shorter than
// kConsecutiveKernelDelayNs (the cost of launching back to back), else other. The time
// before a stream's first work and after its last is none of them.
inline constexpr int64_t kConsecutiveKernelDelayNs = 30'000;  // HTA's default, 30 us
struct IdleRow {
  std::string device;  // "cuda:0"
  std::string stream;  // the stream lane's tid
  int64_t host_wait_ns = 0, kernel_wait_ns = 0, other_ns = 0;
  uint64_t gaps = 0;    // gaps counted (work after work, with some idle before it)
  int64_t busy_ns = 0;  // union of the stream's device work
  // Of them, the gaps before work of the analysed steps (DeviceStepOf), summed over them.
  int64_t step_host_wait_ns = 0, step_kernel_wait_ns = 0, step_other_ns = 0;
  int64_t idle_ns() const { return host_wait_ns + kernel_wait_ns + other_ns; }
};

// Copies and sets on a device by kind, as HTA's memory bandwidth summary counts them
// (hta/analyzers/trace_counters.py, get_memory_bw_summary), but by the full name Kineto
// gives the kind ("Memcpy DtoH (Device -> Pageable)"): the memory kind is the point.
struct CopyRow {
  std::string device;  // "cuda:0"
  std::string kind;    // the event's name
  uint64_t count = 0;
  int64_t time_ns = 0;
  uint64_t with_bytes = 0;         // copies whose args carry "bytes"
  int64_t bytes = 0;               // their bytes
  int64_t time_with_bytes_ns = 0;  // their time
  double peak_gb_per_s = 0;        // the most bandwidth of copies of this kind running at once
  // Of them, those of the analysed steps (the step of the copy, AnalysedDeviceStep).
  uint64_t step_count = 0;
  int64_t step_time_ns = 0, step_bytes = 0;
  // Bytes per nanosecond (GB/s) over the copies with bytes; < 0 when none has them.
  double gb_per_s() const {
    return time_with_bytes_ns > 0 ? static_cast<double>(bytes) / static_cast<double>(time_with_bytes_ns) : -1;
  }
  bool pageable() const { return kind.find("Pageable") != std::string::npos; }
};

// Device work by the operator that launched it and the kernel's name (torch-tb-profiler's
// kernel view grouped by "kernel + op name"); copies and sets included.
struct KernelOpRow {
  std::string op;  // the launching operator (operator table's rule); "(no operator)"
  std::string kernel;
  uint64_t calls = 0;
  int64_t total_ns = 0, min_ns = 0, max_ns = 0;
  int64_t bytes = -1;  // copies and sets: the bytes of those that record them; -1 for kernels
  bool tensor_cores = false;
};

// The share of kernel time in kernels that use Tensor Cores (IsTensorCoreKernel), as
// torch-tb-profiler's overview and operator view report it.
struct TensorCoreOp {
  std::string op;
  int64_t kernel_ns = 0, tensor_core_ns = 0;
  bool eligible = false;  // an operator autocast runs in lower precision (matmul, conv, ...)
};
// Collectives by message, from the NCCL kernels that record theirs (torch >= 2.1 writes
// "Collective name", "In msg nelems", "dtype", "Group size" on them): the transfer's
// bandwidth as nccl-tests defines it (doc/PERFORMANCE.md): algorithm bandwidth = message
// bytes / time; bus bandwidth = that times 2(n-1)/n for all-reduce, (n-1)/n for
// all-gather, reduce-scatter and all-to-all, 1 for the rest.
struct CollectiveSizeRow {
  std::string collective;  // as recorded: "allreduce", "allgather", ...
  std::string dtype;       // "Float", "BFloat16", ...
  int32_t group_size = -1;
  int64_t message_bytes = -1;  // per call, as nccl-tests sizes it; -1: unknown dtype
  uint64_t calls = 0;
  int64_t time_ns = 0;  // the kernels' time
  double bus_factor = 1;
  double algbw_gb_per_s() const {
    return message_bytes >= 0 && time_ns > 0
               ? static_cast<double>(message_bytes) * static_cast<double>(calls) / static_cast<double>(time_ns)
               : -1;
  }
  double busbw_gb_per_s() const { return algbw_gb_per_s() < 0 ? -1 : algbw_gb_per_s() * bus_factor; }
};

// A record_function annotation (user_annotation; steps aside), by name: its spans on
// the host, the device time launched inside them, and the backward pass of the
// operators run inside them (autograd runs it on its own thread, after the span).
struct AnnotationRow {
  std::string name;
  uint64_t calls = 0;
  int64_t host_ns = 0;                                   // the spans' durations
  int64_t device_ns = 0;                                 // device time launched by runtime calls inside the spans
  int64_t backward_host_ns = 0, backward_device_ns = 0;  // the linked backward subtrees
};

// Host calls that wait for the device (cudaStreamSynchronize, a synchronous
// cudaMemcpy, ...), by call and the operator that made it: while one waits, the host
// launches nothing, and the device's queue drains.
struct SyncRow {
  std::string call, op;  // op: the operator table's rule; "(no operator)"
  uint64_t count = 0;
  int64_t total_ns = 0;
};

struct TensorCoreUse {
  int64_t kernel_ns = 0, tensor_core_ns = 0;
  std::vector<TensorCoreOp> ops;  // by kernel time
  double kernel_time_share() const {
    return kernel_ns > 0 ? static_cast<double>(tensor_core_ns) / static_cast<double>(kernel_ns) : 0;
  }
};

// A distribution by the nearest-rank rule: each percentile is a value some launch had.
struct Percentiles {
  int64_t p50 = 0, p90 = 0, p99 = 0, max = 0;
  int64_t mean = 0;  // rounded down
};

// Kernel launches as HTA's launch statistics (hta/analyzers/cuda_kernel_analysis.py,
// cuda_kernel_launch_stats): each device event launched by a launch call — the calls HTA's
// get_runtime_launch_events_mask names: cudaLaunchKernel(ExC), the driver's
// cuLaunchKernel(Ex) (Triton's kernels under torch.compile; HTA's launch statistics name
// only the runtime's), cudaMemcpyAsync, cudaMemsetAsync, MTIA's and ROCm's — with the
// call's duration, the device event's, and the launch delay: from the call's end to the
// device event's start, 0 when it started sooner.
inline constexpr int64_t kSlowLaunchNs = 50'000;  // HTA's runtime_cutoff
inline constexpr int64_t kLongDelayNs = 100'000;  // HTA's launch_delay_cutoff
struct LaunchStats {
  uint64_t count = 0;
  uint64_t step_count = 0;  // of them, launches of device work in the analysed steps
  Percentiles launch_delay, cpu_duration, gpu_duration;
  uint64_t short_kernels = 0;  // device events shorter than their launch call
  uint64_t slow_launches = 0;  // launch calls longer than kSlowLaunchNs
  uint64_t long_delays = 0;    // launch delays longer than kLongDelayNs
};

// The launch queue of a stream as HTA's queue length (hta/analyzers/trace_counters.py,
// get_queue_length_summary): work launched and not yet started, one more when a launch
// call begins, one less when its work starts; the distribution is over those changes.
struct QueueRow {
  std::string device, stream;
  uint64_t launches = 0;
  Percentiles length;  // of the queue's length after each change (mean rounded down)
  double mean = 0;     // exact mean over the changes, as HTA's describe()
};

// A device's time by kernel type, as HTA's kernel breakdown splits a rank's
// (hta/analyzers/breakdown_analysis.py, get_gpu_kernel_breakdown, _get_gpu_kernel_type_time
// with include_memory_kernels=True): its computation kernels, its communication kernels
// (NCCL's) and its copies and sets, each the union of that work over the device's streams,
// swept together so that each instant the device worked goes to the one set of types that
// ran then. A row per set, in HTA's words, the most time first.
struct KernelTypeRow {
  std::string device;   // "cuda:0"
  std::string type;     // "COMPUTATION", "COMMUNICATION", "MEMORY", or several joined by " overlapping "
  int64_t time_ns = 0;  // the time that set alone ran
  int64_t busy_ns = 0;  // the device's busy time: the share's whole (its rows sum to it)
};

// A device's time as HTA's temporal breakdown and comm/compute overlap split a rank's
// (hta/analyzers/breakdown_analysis.py, get_temporal_breakdown; communication_analysis.py,
// get_comm_comp_overlap): from its first work's start to its last work's end (kernels,
// copies and sets on every stream), the time it ran computation kernels (their union), the
// time it ran only other work (communication kernels, copies, sets) and the time it ran
// nothing, which sum to the span; and of its communication kernels' time, the part some
// computation kernel ran beside. The ranks' summary reads the same rule (RankSummary).
struct TemporalRow {
  std::string device;  // "cuda:0"
  int64_t span_ns = 0;
  int64_t compute_ns = 0, non_compute_ns = 0, idle_ns = 0;
  int64_t comm_ns = 0, overlap_ns = 0;  // communication kernels' union; of it, beside computation
};

// The views that read only the events, held in the Analysis (which derives from this):
// each field is one row of analysis/stages.h's kEventViews, which computes it. A new view
// of this kind is its row type and field here, its function and kEventViews row there,
// and its report entry (report/analysis_report.cc's kViews).
struct EventViews {
  std::vector<AnnotationRow> annotations;           // by host time
  std::vector<IdleRow> idle_time;                   // by device, then stream
  std::vector<QueueRow> queue_length;               // by device, then stream
  std::vector<CopyRow> copies;                      // by device, then time
  std::vector<CollectiveSizeRow> collective_sizes;  // by time
  LaunchStats kernel_launches;
  std::vector<KernelTypeRow> kernel_types;      // by device, then time
  std::vector<TemporalRow> temporal_breakdown;  // by device
};

}  // namespace torch2pprof
