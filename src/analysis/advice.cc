// Advice that fires on evidence and quotes it; the thresholds are docs/reference.md's.
#include <cstdio>

#include "analysis/stages.h"

namespace torch2pprof::analysis {

std::vector<Recommendation> Recommend(const Analysis& a) {
  std::vector<Recommendation> out;
  int64_t total = 0, dataloader = 0, memcpy = 0, comm = 0, runtime = 0, kernel = 0;
  for (const StepRow& s : a.steps) {
    total += s.total_ns, dataloader += s.dataloader_ns, memcpy += s.memcpy_ns, comm += s.communication_ns;
    runtime += s.runtime_ns, kernel += s.kernel_ns;
  }
  auto pct = [&](int64_t part) {
    return total > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(total) : 0;
  };
  auto add = [&](const char* id, std::string text) { out.push_back({id, std::move(text)}); };
  auto fmt = [](double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f", v);
    return std::string(b);
  };
  size_t n = a.steps.size();
  if (total > 0 && pct(dataloader) > 10) {
    add("dataloader", "DataLoader takes " + fmt(pct(dataloader)) + "% of step time over " + std::to_string(n) +
                          " steps: load batches in worker processes (DataLoader(num_workers>0, pin_memory=True, "
                          "persistent_workers=True)) so the next batch is ready before the step needs it.");
  }
  uint64_t kernel_calls = 0;
  for (const KernelRow& k : a.kernels) kernel_calls += k.calls;
  double mean_kernel_us =
      kernel_calls ? static_cast<double>(a.kernel_total_ns) / static_cast<double>(kernel_calls) / 1000 : 0;
  if (total > 0 && pct(runtime) > 15 && kernel_calls > 0 && mean_kernel_us < 20) {
    add("launch_bound", "Kernel launches (Runtime) take " + fmt(pct(runtime)) +
                            "% of step time and the mean kernel runs " + fmt(mean_kernel_us) + " us over " +
                            std::to_string(kernel_calls) +
                            " kernels: the steps are launch-bound; capture them with CUDA graphs or "
                            "torch.compile(mode=\"reduce-overhead\"), and fuse small operations.");
  }
  if (total > 0 && pct(memcpy) > 10) {
    add("memcpy", "Memory copies take " + fmt(pct(memcpy)) +
                      "% of step time: keep tensors on the device, copy from "
                      "pinned memory with non_blocking=True, and avoid .item(), .cpu() and .tolist() inside the step.");
  }
  if (total > 0 && pct(comm) > 30) {
    add("communication",
        "Communication takes " + fmt(pct(comm)) +
            "% of step time: overlap it with computation "
            "(DDP bucket_cap_mb, no_sync() for gradient accumulation) or give each rank more work per step.");
  }
  for (const GpuRow& g : a.gpu) {
    if (g.window_ns <= 0 || g.kernel_ns == 0) continue;
    double util = 100.0 * g.utilization();
    if (util < 50) {
      add("gpu_utilization", "GPU " + g.device + " runs kernels " + fmt(util) +
                                 "% of the profiled steps: it waits on the host; see which part of the step "
                                 "breakdown is not Kernel (CPU Exec, DataLoader, Runtime, Other) and shrink it, "
                                 "or raise the batch size.");
    }
  }
  return out;
}

}  // namespace torch2pprof::analysis
