// Findings that fire on evidence and quote it, ranked by what acting on them could save
// at most; the rules and thresholds are docs/reference.md's ("Recommendations").
#include <algorithm>
#include <cstdio>
#include <map>

#include "analysis/stages.h"
#include "report/format.h"
#include "torch2pprof/report.h"

namespace torch2pprof::analysis {

namespace {

std::string Fixed(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", v);
  return b;
}

std::string Ms(int64_t ns) { return FormatDuration(ns); }

double Pct(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0;
}

struct StepSums {
  size_t n = 0;
  int64_t total = 0, dataloader = 0, comm = 0, runtime = 0, kernel = 0;
};

StepSums SumSteps(const Analysis& a) {
  StepSums s;
  s.n = a.steps.size();
  for (const StepRow& r : a.steps) {
    s.total += r.total_ns, s.dataloader += r.dataloader_ns, s.comm += r.communication_ns;
    s.runtime += r.runtime_ns, s.kernel += r.kernel_ns;
  }
  return s;
}

// The stream of each device that waited longest on the host within the steps.
std::map<std::string, const IdleRow*> MostHostWait(const Analysis& a) {
  std::map<std::string, const IdleRow*> by;
  for (const IdleRow& r : a.idle_time) {
    const IdleRow*& best = by[r.device];
    if (!best || r.step_host_wait_ns > best->step_host_wait_ns) best = &r;
  }
  return by;
}

}  // namespace

std::vector<Recommendation> Recommend(const Analysis& a) {
  std::vector<Recommendation> out;
  auto add = [&](const char* id, int64_t saving, std::string text) { out.push_back({id, std::move(text), saving}); };
  const StepSums s = SumSteps(a);
  const std::string over = s.n ? " over " + std::to_string(s.n) + " steps" : "";

  // Launch-bound, or bound by the host otherwise: the device idles waiting for work the
  // host has not launched yet.
  const LaunchStats& l = a.kernel_launches;
  for (const auto& [device, row] : MostHostWait(a)) {
    const int64_t wait = row->step_host_wait_ns;
    if (s.total <= 0 || Pct(wait, s.total) < 20) continue;
    const bool short_kernels = l.count > 0 && 2 * l.short_kernels >= l.count;
    std::string evidence = "GPU " + device + " stream " + row->stream + " waits " + Ms(wait) + " for the host" + over +
                           " (" + Fixed(Pct(wait, s.total)) + "% of step time) and works " + Ms(row->busy_ns) +
                           " in the whole trace";
    if (short_kernels) {
      add("launch_bound", wait,
          evidence + "; " + report::Count(l.short_kernels) + " of " + report::Count(l.count) +
              " launches run shorter on the device than their launch call (median " + Ms(l.gpu_duration.p50) +
              " against " + Ms(l.cpu_duration.p50) +
              "): the step is launch-bound. Capture it with CUDA graphs (torch.compile(mode=\"reduce-overhead\") or "
              "torch.cuda.graphs), fuse small operations with torch.compile, or give each launch more work (a "
              "larger batch).");
    } else {
      add("host_bound", wait,
          evidence +
              ": the host is slow to issue work. See which part of the step breakdown is not Kernel (CPU "
              "Exec, DataLoader, Runtime, Other) and the operators with the most host self time; shrink them "
              "or raise the batch size.");
    }
  }

  // Copies from or to pageable memory: staged through a bounce buffer at a fraction of
  // the bandwidth pinned memory gets, and synchronous for the host.
  std::map<std::string, double> pinned_bw;  // direction ("Memcpy HtoD") -> best pinned GB/s
  for (const CopyRow& c : a.copies) {
    if (c.kind.find("Pinned") != std::string::npos && c.gb_per_s() > 0) {
      double& bw = pinned_bw[c.kind.substr(0, 11)];
      bw = std::max(bw, c.gb_per_s());
    }
  }
  for (const CopyRow& c : a.copies) {
    if (!c.pageable() || c.time_ns <= 0) continue;
    const auto pinned = pinned_bw.find(c.kind.substr(0, 11));
    // What the same bytes would take at the trace's own pinned bandwidth; without one,
    // the copies' whole time is the bound.
    int64_t saving = c.time_ns;
    std::string at = "";
    if (pinned != pinned_bw.end() && c.with_bytes == c.count) {
      saving = std::max<int64_t>(0, c.time_ns - static_cast<int64_t>(static_cast<double>(c.bytes) / pinned->second));
      at = " (pinned copies in this trace run at " + Fixed(pinned->second) + " GB/s)";
    }
    if (saving < 1000 * 1000 && Pct(saving, s.total) < 1) continue;  // under 1 ms and 1% of the steps
    std::string ops;
    for (const KernelOpRow& r : a.kernels_by_operator) {
      if (r.kernel == c.kind) ops += (ops.empty() ? "" : ", ") + r.op + " (" + report::Count(r.calls) + ")";
    }
    add("pageable_copies", saving,
        std::to_string(c.count) + " copies " + c.kind + " on " + c.device + " move " + report::Bytes(c.bytes) + " in " +
            Ms(c.time_ns) + " at " + Fixed(std::max(0.0, c.gb_per_s())) + " GB/s" + at + ", launched by " +
            (ops.empty() ? "(no operator)" : ops) +
            ". Copy to or from pinned memory (tensor.pin_memory(), DataLoader(pin_memory=True), or a pinned "
            "buffer for .cpu() results) with non_blocking=True.");
  }

  // Host calls that wait for the device: each drains the launch queue.
  int64_t sync_ns = 0;
  uint64_t sync_count = 0;
  std::string sync_ops;
  for (const SyncRow& r : a.synchronizations) {
    sync_ns += r.total_ns, sync_count += r.count;
    if (sync_ops.size() < 200) {
      sync_ops += (sync_ops.empty() ? "" : ", ") + r.call + " under " + r.op + " " + report::Count(r.count) + "x " +
                  Ms(r.total_ns);
    }
  }
  if (sync_count > 0 && (Pct(sync_ns, s.total) >= 5 || sync_count >= 2 * std::max<size_t>(1, s.n))) {
    add("synchronizations", sync_ns,
        "The host waits for the device " + report::Count(sync_count) + " times for " + Ms(sync_ns) + ": " + sync_ops +
            ". Each wait empties the device's queue. Keep values on the device (no .item(), .tolist(), .cpu() or "
            "Python branches on CUDA tensors inside the step), or read them once per step; find the callers with "
            "`go tool pprof -peek '<operator>'` on the converted profile.");
  }

  // Matmuls and convolutions off the Tensor Cores: FP32 math. Tensor Core kernels run
  // them at least twice as fast on every GPU that has them, so half is the bound.
  int64_t eligible = 0, eligible_off = 0;
  for (const TensorCoreOp& op : a.tensor_cores.ops) {
    if (op.eligible) eligible += op.kernel_ns, eligible_off += op.kernel_ns - op.tensor_core_ns;
  }
  if (a.tensor_cores.kernel_ns > 0 && Pct(eligible_off, a.tensor_cores.kernel_ns) >= 10) {
    add("tensor_cores", eligible_off / 2,
        "Matmul and convolution operators spend " + Ms(eligible_off) + " of their " + Ms(eligible) +
            " of kernel time off the Tensor Cores (" + Fixed(Pct(eligible_off, a.tensor_cores.kernel_ns)) +
            "% of all kernel time; " + Fixed(100 * a.tensor_cores.kernel_time_share()) +
            "% of kernel time uses them): run them in lower precision (torch.autocast(\"cuda\", "
            "dtype=torch.bfloat16)) or allow TF32 (torch.backends.cuda.matmul.allow_tf32 = True, "
            "torch.set_float32_matmul_precision(\"high\")).");
  }

  // Gloo moves CUDA tensors through host memory.
  if (a.trace.backend == "gloo" && s.comm > 0 && !a.gpu.empty()) {
    add("gloo_cuda", s.comm,
        "Collectives run over gloo with a GPU in the trace: communication takes " + Ms(s.comm) + over + " (" +
            Fixed(Pct(s.comm, s.total)) +
            "% of step time), and gloo copies CUDA tensors through host memory. Use the nccl backend "
            "(init_process_group(\"nccl\")) for CUDA tensors.");
  } else if (s.total > 0 && Pct(s.comm, s.total) > 30) {
    add("communication", s.comm,
        "Communication takes " + Fixed(Pct(s.comm, s.total)) +
            "% of step time: overlap it with computation (DDP bucket_cap_mb, no_sync() for gradient "
            "accumulation) or give each rank more work per step.");
  }

  if (s.total > 0 && Pct(s.dataloader, s.total) > 5) {
    add("dataloader", s.dataloader,
        "DataLoader takes " + Fixed(Pct(s.dataloader, s.total)) + "% of step time (" + Ms(s.dataloader) + over +
            "): load batches in worker processes (DataLoader(num_workers>0, pin_memory=True, "
            "persistent_workers=True)) so the next batch is ready before the step needs it.");
  }

  std::stable_sort(out.begin(), out.end(),
                   [](const Recommendation& x, const Recommendation& y) { return x.saving_ns > y.saving_ns; });

  // A caveat, not a saving: last.
  if (!a.python_functions.empty()) {
    add("with_stack", 0,
        "The trace was recorded with with_stack=True: the Python tracer adds time to every Python call, so host "
        "(CPU Exec, Python) times are inflated; confirm a host-side finding on a trace without it.");
  }
  return out;
}

}  // namespace torch2pprof::analysis
