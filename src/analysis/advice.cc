// Findings a user can act on: each claims causes of the critical path (critical.cc), so
// its saving is time the steps really waited on and no two findings share a microsecond;
// each looks first for what the trace already does (compiled, graphed, low precision,
// pinned, worker processes) and for what the GPU can do, and names the code it means.
// The rules, their evidence and their savings are docs/reference.md's ("Recommendations").
#include <algorithm>
#include <cstdio>
#include <map>

#include "analysis/stages.h"
#include "model/frame_names.h"
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

bool Contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// What the trace already does, so that no finding suggests it again, and what its GPU can.
struct Context {
  bool compiled = false;          // torch.compile: CompiledFunction, Torch-Compiled Region, CompiledFxGraph
  uint64_t compiled_regions = 0;  // "Torch-Compiled Region" spans: one per compiled graph run
  bool cuda_graphs = false;       // graph launches (cudaGraphLaunch, cuGraphLaunch, hipGraphLaunch)
  bool low_precision = false;     // kernels in FP16 or BF16 (autocast or a half model)
  bool pinned = false;            // copies from or to pinned memory
  bool workers = false;           // a DataLoader with worker processes (_MultiProcessingDataLoaderIter)
  int compute_major = -1, compute_minor = -1;  // the devices' lowest compute capability; -1 unknown
  std::string gpu;                             // its name
};

Context ContextOf(const Analysis& a, const Events& ev) {
  Context c;
  const Trace& t = ev.trace();
  std::vector<int8_t> seen(t.strings.size(), 0);  // each name looked at once
  std::vector<int8_t> region(t.strings.size(), 0);
  for (size_t e = 0; e < ev.count(); ++e) {
    const uint32_t name = ev.Iv(e).name;
    c.compiled_regions += static_cast<uint64_t>(region[name]);
    if (seen[name]) continue;
    seen[name] = 1;
    if (ev.Name(e).substr(0, 21) == "Torch-Compiled Region" && ev.RoleOf(e) != Role::kDeviceAnnotation) {
      region[name] = 1;
      ++c.compiled_regions;
    }
    const std::string_view n = ev.Name(e);
    const Role r = ev.RoleOf(e);
    if (Contains(n, "CompiledFunction") || Contains(n, "Torch-Compiled Region") || Contains(n, "CompiledFxGraph")) {
      c.compiled = true;
    }
    if (r == Role::kRuntime && (n == "cudaGraphLaunch" || n == "cuGraphLaunch" || n == "hipGraphLaunch")) {
      c.cuda_graphs = true;
    }
    if (r == Role::kKernel) {
      for (std::string_view p : {"BFloat16", "bfloat16", "c10::Half", "__half", "float16", "bf16", "fp16", "f16f16"}) {
        if (Contains(n, p)) c.low_precision = true;
      }
    }
    if (ev.IsDataLoader(e) && Contains(n, "_MultiProcessingDataLoaderIter")) c.workers = true;
  }
  for (const CopyRow& r : a.copies) c.pinned |= Contains(r.kind, "Pinned");
  for (const DeviceInfo& d : a.trace.devices) {
    int major = -1, minor = -1;
    if (std::sscanf(d.compute.c_str(), "%d.%d", &major, &minor) != 2) continue;
    if (c.compute_major < 0 || std::make_pair(major, minor) < std::make_pair(c.compute_major, c.compute_minor)) {
      c.compute_major = major, c.compute_minor = minor, c.gpu = d.name;
    }
  }
  return c;
}

// The largest entries of a map by value: "a (1.2ms), b (0.8ms)".
std::string Largest(const std::map<std::string, int64_t>& by, size_t n, int64_t whole = 0) {
  std::vector<std::pair<int64_t, std::string>> v;
  for (const auto& [k, ns] : by) v.push_back({ns, k});
  std::stable_sort(v.begin(), v.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  std::string out;
  for (size_t i = 0; i < v.size() && i < n; ++i) {
    out += (out.empty() ? "" : ", ") + v[i].second + " (" +
           (whole > 0 ? Fixed(Pct(v[i].first, whole)) + "%" : Ms(v[i].first)) + ")";
  }
  return out;
}

// The code a cause's time ran in, for "in ...": the Python lines, else the operators
// (nothing where those are the names already given).
std::string CodeOf(const CauseTime& c) {
  const std::string where = Largest(c.where, 3);
  return where.empty() || where == Largest(c.names, 3) ? "" : " in " + where;
}

const char* kHostActivity[kCauses] = {"",
                                      "",
                                      "synchronous copies",
                                      "",
                                      "launch calls",
                                      "Python with no operator",
                                      "operators",
                                      "synchronizations",
                                      "the DataLoader"};

}  // namespace

std::vector<Recommendation> Recommend(const Analysis& a, const Events& ev, const CriticalResult& critical,
                                      const std::vector<std::pair<uint32_t, uint32_t>>& launchers) {
  std::vector<Recommendation> out;
  const Context ctx = ContextOf(a, ev);
  const Trace& t = ev.trace();
  const int64_t total = critical.total_ns;
  const size_t steps = a.critical_path.size();
  const std::string over = steps ? " over " + std::to_string(steps) + (steps == 1 ? " step" : " steps") : "";

  // The causes' time; kernels off the Tensor Cores leave kGpuWork for kTensorCores, where
  // their operator can use them.
  std::array<CauseTime, kCauses> causes = critical.causes;
  std::vector<int8_t> tc_name(t.strings.size(), -1);
  for (const CriticalResult::Kernel& k : critical.kernels) {
    const uint32_t op = OperatorOf(launchers, k.call);
    if (op == UINT32_MAX || !IsTensorCoreEligible(t.strings.Get(op))) continue;
    int8_t& tc = tc_name[k.kernel];
    if (tc < 0) tc = IsTensorCoreKernel(t.strings.Get(k.kernel)) ? 1 : 0;
    if (tc == 1) continue;
    CauseTime& to = causes[kTensorCores];
    CauseTime& from = causes[kGpuWork];
    to.ns += k.ns, from.ns -= k.ns;
    to.names[std::string(t.strings.Get(op))] += k.ns;
    const std::string where =
        k.python ? MakeFrame(FrameSystemName(t.strings.Get(k.python))).name : std::string(t.strings.Get(op));
    to.where[where] += k.ns;
  }
  // Synchronizations serialise host and device: after each, the device idles while the
  // host launches again. Without them the two overlap, so what the waits cost beyond their
  // own time is the smaller of that host time and the device's time on the path; that
  // much moves from the host causes to kSyncWait, in proportion.
  {
    int64_t after = 0;
    for (int64_t ns : critical.after_sync) after += ns;
    const int64_t move = std::min(after, critical.device_ns);
    int64_t moved = 0;
    for (int c = 0; c < kCauses && after > 0; ++c) {
      const int64_t take =
          static_cast<int64_t>(static_cast<__int128>(critical.after_sync[static_cast<size_t>(c)]) * move / after);
      causes[static_cast<size_t>(c)].ns -= take, moved += take;
    }
    causes[kSyncWait].ns += moved;
  }
  // A finding fires where its causes hold at least this much of the steps.
  auto enough = [&](int64_t ns) { return total > 0 && ns > 0 && Pct(ns, total) >= 5; };
  auto share = [&](int64_t ns) { return Fixed(Pct(ns, total)) + "% of the steps' " + Ms(total) + over; };

  // The stream that waited longest for the host, and what the host did meanwhile: the
  // evidence of the finding for the largest of those activities.
  const HostWait* wait = nullptr;
  if (!critical.host_waits.empty() && Pct(critical.host_waits[0].ns, total) >= 20) wait = &critical.host_waits[0];
  int wait_cause = -1;
  std::string wait_text;
  if (wait) {
    std::map<std::string, int64_t> activity;
    int64_t most = -1;
    for (int c = 0; c < kCauses; ++c) {
      if (!kHostActivity[c][0] || wait->by_cause[static_cast<size_t>(c)] <= 0) continue;
      activity[kHostActivity[c]] = wait->by_cause[static_cast<size_t>(c)];
      if (wait->by_cause[static_cast<size_t>(c)] > most) most = wait->by_cause[static_cast<size_t>(c)], wait_cause = c;
    }
    wait_text = "GPU " + wait->device + " stream " + wait->stream + " waits " + Ms(wait->ns) + " for the host" + over +
                " (" + Fixed(Pct(wait->ns, total)) + "% of step time); meanwhile the launching thread was in " +
                Largest(activity, 4, wait->ns);
    const std::string code = Largest(wait->where[static_cast<size_t>(wait_cause)], 2);
    if (!code.empty()) wait_text += ", most of it in " + code;
    wait_text += ". ";
  }
  auto add = [&](const char* id, int cause, int64_t saving, std::string text) {
    if (cause == wait_cause) text = wait_text + text;
    out.push_back({id, std::move(text), saving});
  };
  auto fires = [&](int cause) { return enough(causes[static_cast<size_t>(cause)].ns) || cause == wait_cause; };

  // Copies from or to pageable memory: staged through a bounce buffer, synchronous for the host.
  if (fires(kPageableCopy)) {
    const CauseTime& c = causes[kPageableCopy];
    std::string copies;
    for (const CopyRow& r : a.copies) {
      if (!r.pageable() || r.step_count == 0) continue;
      copies += (copies.empty() ? "" : "; ") + std::to_string(r.step_count) + " " + r.kind + " on " + r.device + " (" +
                Ms(r.step_time_ns) + (r.gb_per_s() > 0 ? " at " + Fixed(r.gb_per_s()) + " GB/s" : "") + ")";
    }
    add("pageable_copies", kPageableCopy, c.ns,
        "Copies from or to pageable memory and the host calls that wait for them hold " + Ms(c.ns) +
            " of the critical path (" + share(c.ns) + "): " + (copies.empty() ? Largest(c.names, 3) : copies) +
            CodeOf(c) + ". " +
            (ctx.pinned ? "The trace already copies through pinned memory elsewhere; these copies do not: " : "") +
            "copy to or from pinned memory (tensor.pin_memory(), DataLoader(pin_memory=True), a pinned buffer "
            "for .cpu() results) with non_blocking=True, so that the copy overlaps and the host does not wait.");
  }

  // Host calls that wait for the device: each drains the launch queue.
  if (fires(kSyncWait)) {
    const CauseTime& c = causes[kSyncWait];
    uint64_t count = 0;
    std::string calls;
    for (const SyncRow& r : a.synchronizations) {
      count += r.count;
      if (calls.size() < 200) {
        calls += (calls.empty() ? "" : ", ") + r.call + " under " + r.op + " " + FormatCount(r.count) + "x";
      }
    }
    add("synchronizations", kSyncWait, c.ns,
        "The host waits for the device " + FormatCount(count) + " times (" + calls +
            "); with the time they cost by keeping the host from running ahead (the device idles after each "
            "while the host launches again), they hold " +
            Ms(c.ns) + " of the critical path (" + share(c.ns) + ")" + CodeOf(c) +
            ". Each wait empties the device's queue: keep values on the device (no .item(), .tolist(), .cpu() or "
            "Python branches on CUDA tensors inside the step), or read them once per step.");
  }

  // Matmuls and convolutions off the Tensor Cores: FP32 math. Tensor Core kernels run
  // them at least twice as fast on every GPU that has them, so half is the bound.
  if (fires(kTensorCores)) {
    const CauseTime& c = causes[kTensorCores];
    std::string remedy;
    const std::string cc = std::to_string(ctx.compute_major) + "." + std::to_string(ctx.compute_minor);
    if (ctx.compute_major >= 8) {
      remedy =
          "Run them in lower precision (torch.autocast(\"cuda\", dtype=torch.bfloat16)) or allow TF32 "
          "(torch.backends.cuda.matmul.allow_tf32 = True, torch.set_float32_matmul_precision(\"high\"))";
    } else if (ctx.compute_major == 7) {
      remedy =
          "Run them in FP16 (torch.autocast(\"cuda\", dtype=torch.float16) with torch.amp.GradScaler): a GPU "
          "of compute capability " +
          cc + " (" + ctx.gpu +
          ") has Tensor Cores for FP16 only, no TF32 or "
          "bfloat16";
    } else if (ctx.compute_major > 0) {
      remedy = "";  // no Tensor Cores before compute capability 7.0
    } else {
      remedy =
          "Run them in FP16 (torch.autocast(\"cuda\", dtype=torch.float16)), which every GPU with Tensor "
          "Cores runs there; bfloat16 and TF32 need compute capability 8.0 or later, which the trace does not "
          "say (no deviceProperties)";
    }
    if (!remedy.empty()) {
      add("tensor_cores", kTensorCores, c.ns / 2,
          "Matmul and convolution kernels off the Tensor Cores hold " + Ms(c.ns) + " of the critical path (" +
              share(c.ns) + "), launched by " + Largest(c.names, 3) + CodeOf(c) + ". " +
              (ctx.low_precision ? "The trace already runs other kernels in FP16 or BF16: these run outside "
                                   "autocast (or in FP32 on purpose). "
                                 : "") +
              remedy + ". Tensor Cores run them at least twice as fast: the saving is half their time.");
    }
  }

  // Launch and Python overhead: the device waits for launches, kernels of a few
  // microseconds are separated by gaps, the host runs Python between operators.
  {
    const int64_t ns = causes[kLaunchOverhead].ns + causes[kPythonOverhead].ns;
    const bool fire = enough(ns) || wait_cause == kLaunchOverhead || wait_cause == kPythonOverhead;
    if (fire) {
      std::map<std::string, int64_t> where = causes[kLaunchOverhead].where;
      for (const auto& [k, v] : causes[kPythonOverhead].where) where[k] += v;
      const LaunchStats& l = a.kernel_launches;
      std::string evidence =
          "Launch overhead (the device waiting for launches and between kernels: " + Ms(causes[kLaunchOverhead].ns) +
          ") and Python with no operator (" + Ms(causes[kPythonOverhead].ns) + ") hold " + Ms(ns) +
          " of the critical path (" + share(ns) + ")";
      if (l.count > 0) {
        evidence += "; " + FormatCount(l.short_kernels) + " of " + FormatCount(l.count) +
                    " launches run shorter on the device than their launch call (median " + Ms(l.gpu_duration.p50) +
                    " against " + Ms(l.cpu_duration.p50) + ")";
      }
      const std::string code = Largest(where, 3);
      if (!code.empty()) evidence += ", most of it in " + code;
      std::string remedy;
      if (ctx.cuda_graphs) {
        remedy =
            "The trace already replays CUDA graphs: what holds this time runs outside them. Capture it too "
            "(torch.cuda.graphs around more of the step, or fewer graph breaks), or move Python out of the step.";
      } else if (ctx.compiled) {
        // Dynamo runs each compiled graph under a "Torch-Compiled Region": more than one a
        // step means graph breaks split the model.
        std::string regions;
        const uint64_t all_steps = a.trace.profiler_steps;  // the regions are counted over the whole trace
        if (ctx.compiled_regions > 0 && all_steps > 0) {
          const double per_step = static_cast<double>(ctx.compiled_regions) / static_cast<double>(all_steps);
          regions =
              ", " + Fixed(per_step) + " compiled regions a step" +
              (per_step > 1.5 ? ": graph breaks split it (TORCH_LOGS=graph_breaks names them)" : ", no graph break");
        }
        remedy = "The model is already compiled (torch.compile" + regions +
                 "): this time is outside the compiled graphs or between them. Capture the compiled model in CUDA "
                 "graphs (torch.compile(mode=\"reduce-overhead\")), and compile or remove what runs outside it.";
      } else {
        remedy =
            "Fuse small operations and cut Python overhead with torch.compile, and capture the step in CUDA "
            "graphs (torch.compile(mode=\"reduce-overhead\") or torch.cuda.graphs); or give each launch more "
            "work (a larger batch).";
      }
      add("launch_bound", wait_cause == kPythonOverhead ? kPythonOverhead : kLaunchOverhead, ns,
          evidence + ". " + remedy);
    }
  }

  // The host's own work in operators.
  if (fires(kHostOps)) {
    const CauseTime& c = causes[kHostOps];
    add("host_bound", kHostOps, c.ns,
        "Operators' host time holds " + Ms(c.ns) + " of the critical path (" + share(c.ns) + "), most in " +
            Largest(c.names, 3) + CodeOf(c) + ". Shrink these on the host (fewer, larger operations; " +
            (ctx.compiled ? "compile what is still eager" : "torch.compile fuses them") +
            ") or raise the batch size so the device has more work per launch.");
  }

  // Gloo moves CUDA tensors through host memory.
  if (fires(kCommunication) || (a.trace.backend == "gloo" && !a.gpu.empty())) {
    const CauseTime& c = causes[kCommunication];
    int64_t comm = 0;
    for (const StepRow& r : a.steps) comm += r.communication_ns;
    if (a.trace.backend == "gloo" && !a.gpu.empty() && enough(comm)) {
      add("gloo_cuda", kCommunication, c.ns,
          "Collectives run over gloo with a GPU in the trace: communication takes " + Ms(comm) + over + " (" +
              Fixed(Pct(comm, total)) + "% of step time), " + Ms(c.ns) +
              " of it as device work on the critical path, and gloo copies CUDA tensors through host memory. Use "
              "the nccl backend (init_process_group(\"nccl\")) for CUDA tensors.");
    } else if (enough(c.ns)) {
      add("communication", kCommunication, c.ns,
          "Communication kernels hold " + Ms(c.ns) + " of the critical path (" + share(c.ns) +
              "): " + Largest(c.names, 3) +
              ". Overlap them with computation (DDP bucket_cap_mb, no_sync() for gradient accumulation) or give "
              "each rank more work per step.");
    }
  }

  if (fires(kDataLoaderWait)) {
    const CauseTime& c = causes[kDataLoaderWait];
    add("dataloader", kDataLoaderWait, c.ns,
        "The DataLoader holds " + Ms(c.ns) + " of the critical path (" + share(c.ns) + ")" + CodeOf(c) + ". " +
            (ctx.workers ? "It already loads in worker processes, and they do not keep up: add workers "
                           "(num_workers), prefetch more batches (prefetch_factor), keep them alive "
                           "(persistent_workers=True), or make each item cheaper to load and transform."
                         : "Load batches in worker processes (DataLoader(num_workers>0, pin_memory=True, "
                           "persistent_workers=True)) so the next batch is ready before the step needs it."));
  }

  std::stable_sort(out.begin(), out.end(),
                   [](const Recommendation& x, const Recommendation& y) { return x.saving_ns > y.saving_ns; });

  // A caveat, not a saving: last.
  if (!a.python_functions.empty()) {
    out.push_back({"with_stack",
                   "The trace was recorded with with_stack=True: the Python tracer adds time to every Python call, "
                   "so host (CPU Exec, Python) times are inflated; confirm a host-side finding on a trace without "
                   "it.",
                   0});
  }
  return out;
}

}  // namespace torch2pprof::analysis
