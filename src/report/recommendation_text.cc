// A finding's sentence, from its evidence and the analysis's views: what holds the time,
// where, and the remedy that fits what the trace already does and what its GPU can. The
// findings are decided in analysis/advice.cc; the rules are docs/reference.md's.
#include <cstdio>
#include <string>
#include <vector>

#include "report/format.h"
#include "torch2pprof/analysis.h"
#include "torch2pprof/ranks.h"
#include "torch2pprof/report.h"

namespace torch2pprof {
namespace {

std::string Fixed(double v) { return report::Printf("%.1f", v); }

std::string Ms(int64_t ns) { return FormatDuration(ns); }

double Pct(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0;
}

// "a (1.2ms), b (0.8ms)"; with a whole, each as its share of it: "a (60.0%)".
std::string Listed(const std::vector<NamedTime>& v, int64_t whole = 0) {
  std::string out;
  for (const NamedTime& t : v) {
    out += (out.empty() ? "" : ", ") + t.name + " (" + (whole > 0 ? Fixed(Pct(t.ns, whole)) + "%" : Ms(t.ns)) + ")";
  }
  return out;
}

// " in <code>": where the time ran, unless those are the names already given.
std::string CodeOf(const Recommendation& r) {
  const std::string where = Listed(r.code);
  return where.empty() || where == Listed(r.names) ? "" : " in " + where;
}

std::string Body(const Analysis& a, const Recommendation& r, const std::string& share, const std::string& over,
                 int64_t total) {
  const TraceContext& ctx = a.context;
  const int64_t ns = r.cause_ns;
  if (r.id == "pageable_copies") {
    std::string copies;
    for (const CopyRow& c : a.copies) {
      if (!c.pageable() || c.step_count == 0) continue;
      copies += (copies.empty() ? "" : "; ") + std::to_string(c.step_count) + " " + c.kind + " on " + c.device + " (" +
                Ms(c.step_time_ns) + (c.gb_per_s() > 0 ? " at " + Fixed(c.gb_per_s()) + " GB/s" : "") + ")";
    }
    return "Copies from or to pageable memory and the host calls that wait for them hold " + Ms(ns) +
           " of the critical path (" + share + "): " + (copies.empty() ? Listed(r.names) : copies) + CodeOf(r) + ". " +
           (ctx.pinned ? "The trace already copies through pinned memory elsewhere; these copies do not: " : "") +
           "copy to or from pinned memory (tensor.pin_memory(), DataLoader(pin_memory=True), a pinned buffer "
           "for .cpu() results) with non_blocking=True, so that the copy overlaps and the host does not wait.";
  }
  if (r.id == "synchronizations") {
    uint64_t count = 0;
    std::string calls;
    for (const SyncRow& s : a.synchronizations) {
      count += s.count;
      if (calls.size() < 200)
        calls += (calls.empty() ? "" : ", ") + s.call + " under " + s.op + " " + FormatCount(s.count) + "x";
    }
    return "The host waits for the device " + FormatCount(count) + " times (" + calls +
           "); with the time they cost by keeping the host from running ahead (the device idles after each "
           "while the host launches again), they hold " +
           Ms(ns) + " of the critical path (" + share + ")" + CodeOf(r) +
           ". Each wait empties the device's queue: keep values on the device (no .item(), .tolist(), .cpu() or "
           "Python branches on CUDA tensors inside the step), or read them once per step.";
  }
  if (r.id == "tensor_cores") {
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
          cc + " (" + ctx.gpu + ") has Tensor Cores for FP16 only, no TF32 or bfloat16";
    } else {
      remedy =
          "Run them in FP16 (torch.autocast(\"cuda\", dtype=torch.float16)), which every GPU with Tensor "
          "Cores runs there; bfloat16 and TF32 need compute capability 8.0 or later, which the trace does not "
          "say (no deviceProperties)";
    }
    return "Matmul and convolution kernels off the Tensor Cores hold " + Ms(ns) + " of the critical path (" + share +
           "), launched by " + Listed(r.names) + CodeOf(r) + ". " +
           (ctx.low_precision ? "The trace already runs other kernels in FP16 or BF16: these run outside "
                                "autocast (or in FP32 on purpose). "
                              : "") +
           remedy + ". Tensor Cores run them at least twice as fast: the saving is half their time.";
  }
  if (r.id == "launch_bound") {
    const LaunchStats& l = a.kernel_launches;
    std::string evidence = "Launch overhead (the device waiting for launches and between kernels: " + Ms(r.launch_ns) +
                           ") and Python with no operator (" + Ms(r.python_ns) + ") hold " + Ms(ns) +
                           " of the critical path (" + share + ")";
    if (l.count > 0) {
      evidence += "; " + FormatCount(l.short_kernels) + " of " + FormatCount(l.count) +
                  " launches run shorter on the device than their launch call (median " + Ms(l.gpu_duration.p50) +
                  " against " + Ms(l.cpu_duration.p50) + ")";
    }
    const std::string code = Listed(r.code);
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
    return evidence + ". " + remedy;
  }
  if (r.id == "host_bound") {
    return "Operators' host time holds " + Ms(ns) + " of the critical path (" + share + "), most in " +
           Listed(r.names) + CodeOf(r) + ". Shrink these on the host (fewer, larger operations; " +
           (ctx.compiled ? "compile what is still eager" : "torch.compile fuses them") +
           ") or raise the batch size so the device has more work per launch.";
  }
  if (r.id == "gloo_cuda") {
    int64_t comm = 0;
    for (const StepRow& s : a.steps) comm += s.communication_ns;
    return "Collectives run over gloo with a GPU in the trace: communication takes " + Ms(comm) + over + " (" +
           Fixed(Pct(comm, total)) + "% of step time), " + Ms(ns) +
           " of it as device work on the critical path, and gloo copies CUDA tensors through host memory. Use "
           "the nccl backend (init_process_group(\"nccl\")) for CUDA tensors.";
  }
  if (r.id == "communication") {
    return "Communication kernels hold " + Ms(ns) + " of the critical path (" + share + "): " + Listed(r.names) +
           ". Overlap them with computation (DDP bucket_cap_mb, no_sync() for gradient accumulation) or give "
           "each rank more work per step.";
  }
  if (r.id == "dataloader") {
    return "The DataLoader holds " + Ms(ns) + " of the critical path (" + share + ")" + CodeOf(r) + ". " +
           (ctx.workers ? "It already loads in worker processes, and they do not keep up: add workers "
                          "(num_workers), prefetch more batches (prefetch_factor), keep them alive "
                          "(persistent_workers=True), or make each item cheaper to load and transform."
                        : "Load batches in worker processes (DataLoader(num_workers>0, pin_memory=True, "
                          "persistent_workers=True)) so the next batch is ready before the step needs it.");
  }
  if (r.id == "with_stack") {
    return "The trace was recorded with with_stack=True: the Python tracer adds time to every Python call, "
           "so host (CPU Exec, Python) times are inflated; confirm a host-side finding on a trace without "
           "it.";
  }
  return r.id;
}

std::string RankOf(const RanksAnalysis& a, size_t i) { return std::to_string(a.ranks[i].rank); }

std::string StragglerText(const RanksAnalysis& out, const Straggler& l) {
  std::string who;
  for (size_t i = 0; i < l.waiters.size() && i < 8; ++i) who += (who.empty() ? "" : " ") + RankOf(out, l.waiters[i]);
  if (l.waiters.size() > 8) who += " and " + std::to_string(l.waiters.size() - 8) + " more";
  std::string text = "Rank " + RankOf(out, l.rank) + " is the straggler: ranks " + who + " wait " +
                     FormatDuration(l.waited_ns) + " per step for it in " + l.collective;
  std::string part;
  for (const StepPart& p : kStepParts) {
    if (l.part == p.key) part = p.heading;
  }
  if (l.part == std::string("other")) {
    text += "; its own step spends " + FormatDuration(l.part_delta_ns) +
            " more per step than the other ranks' median outside any traced operation (other): find what it "
            "does then (analyze its trace on its own: its Python, I/O or a sleep)";
  } else if (!part.empty()) {
    text += "; its own step spends " + part + " " + FormatDuration(l.part_delta_ns) +
            " more per step than the other ranks' median. Make its " + part + " as short as theirs " +
            (l.part == std::string("dataloader") ? "(more loader workers or faster storage on its host)"
             : l.part == std::string("kernel")   ? "(its share of the data or model is larger: balance them)"
                                                 : "(analyze its trace on its own)");
  } else {
    text += ". Analyze its trace on its own for what it does before the collective";
  }
  return text + ".";
}

std::string CommunicationText(const RanksAnalysis& out, const RankRecommendation& r) {
  const int64_t w = r.wait_ns, x = r.transfer_ns;
  std::string text = "Communication takes " +
                     report::PercentOf(static_cast<double>(r.comm_ns) / static_cast<double>(r.step_ns)) +
                     " of each step (median over " + std::to_string(out.ranks.size()) +
                     " ranks: " + FormatDuration(r.comm_ns) + " of " + FormatDuration(r.step_ns) + ")";
  if (w + x > 0) {
    text += "; in the collectives each rank waits " + FormatDuration(w) + " per step for the others (skew) and " +
            "moves data " + FormatDuration(x) + " (the link)";
  }
  if (r.bus_time_ns > 0) {
    text += ", at " + Fixed(static_cast<double>(r.bus_bytes) / static_cast<double>(r.bus_time_ns)) +
            " GB/s of bus bandwidth (nccl-tests' definition)";
  } else if (r.gloo) {
    text += "; gloo records no message sizes, so no bandwidth";
  }
  text += ". ";
  if (w > x) {
    text += "Skew limits it, not the link: the ranks reach the collectives at different times" +
            std::string(out.stragglers.empty() ? "" : " (the straggler above)") +
            "; balance their work before tuning communication.";
  } else if (r.gloo && r.gpu) {
    text +=
        "The link limits it, and gloo copies CUDA tensors through host memory: use the nccl backend "
        "(init_process_group(\"nccl\")) for CUDA tensors.";
  } else {
    text +=
        "The link limits it: overlap communication with computation (DDP's bucket_cap_mb, no_sync() for "
        "gradient accumulation), communicate less often, or compress gradients.";
  }
  return text;
}

std::string SlowRankText(const RanksAnalysis& out, const RankRecommendation& r) {
  if (r.index < 0) {
    return std::to_string(r.more) + " more ranks' median steps are over the ranks' median by " +
           "more than the threshold (slow_ranks lists them).";
  }
  const SlowRank& s = out.slow_ranks[static_cast<size_t>(r.index)];
  std::string part = s.part;
  for (const StepPart& p : kStepParts) {
    if (s.part == p.key) part = p.heading;
  }
  return "Rank " + RankOf(out, s.rank) + "'s median step is " + FormatDuration(s.value_ns) + ", +" +
         report::PercentOf(s.excess) + " over the ranks' median (" + FormatDuration(s.median_ns) + ")" +
         (part.empty() ? "" : ": its " + part + " takes " + FormatDuration(s.part_delta_ns) + " more per step") +
         ". Give it less work (uneven shards or pipeline stages), or analyze its trace on its own.";
}

}  // namespace

std::string RecommendationText(const Analysis& a, const Recommendation& r) {
  int64_t total = 0;  // the analysed steps' critical path: every step's length
  for (const CriticalStep& s : a.critical_path) total += s.length_ns;
  const size_t steps = a.critical_path.size();
  const std::string over = steps ? " over " + std::to_string(steps) + (steps == 1 ? " step" : " steps") : "";
  const std::string share = Fixed(Pct(r.cause_ns, total)) + "% of the steps' " + Ms(total) + over;
  std::string wait;
  if (r.explains_wait) {
    const HostWaitEvidence& w = r.wait;
    wait = "GPU " + w.device + " stream " + w.stream + " waits " + Ms(w.ns) + " for the host" + over + " (" +
           Fixed(Pct(w.ns, total)) + "% of step time); meanwhile the launching thread was in " +
           Listed(w.activity, w.ns);
    const std::string code = Listed(w.code);
    if (!code.empty()) wait += ", most of it in " + code;
    wait += ". ";
  }
  return wait + Body(a, r, share, over, total);
}

std::string RankRecommendationText(const RanksAnalysis& a, const RankRecommendation& r) {
  if (r.id == "straggler") return StragglerText(a, a.stragglers[static_cast<size_t>(r.index)]);
  if (r.id == "communication") return CommunicationText(a, r);
  if (r.id == "slow_rank") return SlowRankText(a, r);
  return r.id;
}

}  // namespace torch2pprof
