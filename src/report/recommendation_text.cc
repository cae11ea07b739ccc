// A finding's sentence, from its evidence and the analysis's views: what holds the time,
// where, and the remedy that fits what the trace already does and what its GPU can. The
// findings are decided in analysis/advice.cc; the rules are docs/reference.md's.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "base/percent.h"
#include "report/format.h"
#include "report/table.h"
#include "torch2pprof/analysis.h"
#include "torch2pprof/ranks.h"
#include "torch2pprof/report.h"

namespace torch2pprof {
namespace {

std::string Fixed(double v) { return report::Printf("%.1f", v); }

std::string Ms(int64_t ns) { return FormatDuration(ns); }

// A name in a sentence: a kernel's without its parameter list, and a word too long to
// wrap (a cuBLAS kernel's 120 characters) cut to kWordColumns.
constexpr size_t kWordColumns = 72;
std::string InSentence(const std::string& name) {
  std::string s = report::ShortName(name);
  size_t run = 0, longest = 0;
  for (char c : s) run = c == ' ' ? 0 : run + 1, longest = std::max(longest, run);
  return longest > kWordColumns ? report::Fit(s, kWordColumns) : s;
}

// "a (1.2ms), b (0.8ms)"; with a whole, each as its share of it: "a (60.0%)".
std::string Listed(const std::vector<NamedTime>& v, int64_t whole = 0) {
  std::string out;
  for (const NamedTime& t : v) {
    out += (out.empty() ? "" : ", ") + InSentence(t.name) + " (" +
           (whole > 0 ? Fixed(Percent(t.ns, whole)) + "%" : Ms(t.ns)) + ")";
  }
  return out;
}

// " in <code>": where the time ran, unless those are the names already given.
std::string CodeOf(const Recommendation& r) {
  const std::string where = Listed(r.code);
  return where.empty() || where == Listed(r.names) ? "" : " in " + where;
}

std::string PageableCopies(const Analysis& a, const Recommendation& r, const std::string& share) {
  const TraceContext& ctx = a.context;
  const int64_t ns = r.cause_ns;
  std::string copies;
  for (const CopyRow& c : a.copies) {
    if (!c.pageable() || c.step_count == 0) continue;
    copies += (copies.empty() ? "" : "; ") + std::to_string(c.step_count) + " " + c.kind + " on " + c.device + " (" +
              Ms(c.step_time_ns) + (c.gb_per_s() > 0 ? " at " + Fixed(c.gb_per_s()) + " GB/s" : "") + ")";
  }
  return "Copies from or to pageable memory and the host calls that wait for them hold " + Ms(ns) +
         " a step of the critical path (" + share + "): " + (copies.empty() ? Listed(r.names) : copies) + CodeOf(r) +
         ". " + (ctx.pinned ? "The trace already copies through pinned memory elsewhere; these copies do not: " : "") +
         "copy to or from pinned memory (tensor.pin_memory(), DataLoader(pin_memory=True), a pinned buffer "
         "for .cpu() results) with non_blocking=True, so that the copy overlaps and the host does not wait.";
}

std::string Synchronizations(const Analysis& a, const Recommendation& r, const std::string& share) {
  const int64_t ns = r.cause_ns;
  uint64_t count = 0;
  std::string calls;
  for (const SyncRow& s : a.synchronizations) {
    count += s.count;
    if (calls.size() < 200)
      calls += (calls.empty() ? "" : ", ") + s.call + " under " + s.op + " " + FormatCount(s.count) + "x";
  }
  return "The host waits for the device " + FormatCount(count) + " times in the steps (" + calls +
         "); the waits hold " + Ms(ns) + " a step of the critical path (" + share + ")" + CodeOf(r) +
         ", and after each the device idles while the host launches again" +
         ". Each wait empties the device's queue: keep values on the device (no .item(), .tolist(), .cpu() or "
         "Python branches on CUDA tensors inside the step), or read them once per step.";
}

std::string TensorCores(const Analysis& a, const Recommendation& r, const std::string& share) {
  const TraceContext& ctx = a.context;
  const int64_t ns = r.cause_ns;
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
  return "Matmul and convolution kernels in FP32, off the Tensor Cores, hold " + Ms(ns) +
         " a step of the critical path (" + share + "): " + Listed(r.names) + CodeOf(r) + ". " +
         (ctx.low_precision ? "The trace already runs other kernels in FP16 or BF16: these run outside "
                              "autocast (or in FP32 on purpose). "
                            : "") +
         remedy +
         ". Tensor Cores run them at least twice as fast; the saving replays the steps with them at half "
         "their time.";
}

std::string LaunchBound(const Analysis& a, const Recommendation& r, const std::string& share) {
  const TraceContext& ctx = a.context;
  const int64_t ns = r.cause_ns;
  const LaunchStats& l = a.kernel_launches;
  std::string evidence = "Launch calls and the gaps they leave between kernels (" + Ms(r.launch_ns) +
                         " a step) and Python with no operator open (" + Ms(r.python_ns) + ") hold " + Ms(ns) +
                         " a step of the critical path (" + share + ")";
  if (l.count > 0 && l.short_kernels * 2 > l.count) {
    evidence += "; " + FormatCount(l.short_kernels) + " of " + FormatCount(l.count) +
                " launches run shorter on the device than their launch call (median " + Ms(l.gpu_duration.p50) +
                " against " + Ms(l.cpu_duration.p50) + ")";
  }
  const std::string code = Listed(r.code);
  if (!code.empty()) evidence += ", chiefly in " + code;
  if (ctx.tokens_per_step > 0 && a.what_if.step_ns > 0) {
    // Per token: the unit a generation loop is judged in.
    const int64_t tokens = static_cast<int64_t>(ctx.tokens_per_step);
    evidence = "A generation loop: " + ctx.token_module + "'s forward runs " + FormatCount(ctx.tokens_per_step) +
               " times a step with no backward, a token each, " + Ms(a.what_if.step_ns / tokens) +
               " a token of which the device works " + Ms(a.what_if.device_ns / tokens) + ". " + evidence;
  }
  std::string remedy;
  if (r.what_if == "no_python") {
    remedy = ctx.cuda_graphs
                 ? "The trace already replays CUDA graphs; this host time is outside them (the Python around the "
                   "replays: guards, input copies, the loop itself). Move it out of the step or make it cheaper; "
                   "the saving replays the steps without that Python."
                 : "Cut the Python that runs between operators (move work out of the step, or compile it with "
                   "torch.compile); the saving replays the steps without that Python.";
  } else if (ctx.compiled) {
    std::string regions;
    const uint64_t all_steps = a.trace.profiler_steps;
    if (ctx.compiled_regions > 0 && all_steps > 0) {
      const double per_step = static_cast<double>(ctx.compiled_regions) / static_cast<double>(all_steps);
      if (per_step > 1.5)
        regions = " (" + Fixed(per_step) +
                  " compiled regions a step: graph breaks split it; TORCH_LOGS=graph_breaks names them)";
    }
    remedy = "The model is already compiled" + regions +
             ": capture it in CUDA graphs (torch.compile(mode=\"reduce-overhead\")) so one launch replays the "
             "step's kernels; the saving replays the steps without these launch calls and this Python.";
  } else {
    remedy =
        "Capture the step in CUDA graphs (torch.compile(mode=\"reduce-overhead\") or torch.cuda.graphs), which "
        "replay its kernels with one launch and no Python; the saving replays the steps without these launch "
        "calls and this Python.";
  }
  if (ctx.tokens_per_step > 0 && r.what_if == "cuda_graphs") {
    remedy +=
        " A graph needs each token's shapes fixed: a static KV cache does that (Hugging Face: "
        "generate(..., cache_implementation=\"static\") with the model under torch.compile(mode="
        "\"reduce-overhead\")).";
  }
  return evidence + ". " + remedy;
}

std::string HostBound(const Analysis& a, const Recommendation& r, const std::string& share) {
  const TraceContext& ctx = a.context;
  const int64_t ns = r.cause_ns;
  return "Operators' host time holds " + Ms(ns) + " a step of the critical path (" + share + "), chiefly " +
         Listed(r.names) + CodeOf(r) + ". Shrink these on the host (fewer, larger operations; " +
         (ctx.compiled ? "compile what is still eager" : "torch.compile fuses them") +
         ") or give each operator more work (a larger batch); the saving replays the steps with operators' host "
         "time halved.";
}

std::string FusedOptimizer(const Analysis& /*a*/, const Recommendation& r, const std::string& share) {
  const int64_t ns = r.cause_ns;
  return "The optimizer step runs unfused (foreach or per-parameter kernels) and holds " + Ms(ns) +
         " a step of the critical path (" + share + ")" + CodeOf(r) +
         ". Construct it with fused=True (torch.optim.AdamW(params, fused=True); Adam, AdamW, SGD and Adagrad "
         "take it), which updates every parameter in a few kernels; the saving replays the steps with its host "
         "time at a tenth.";
}

std::string DataLoader(const Analysis& a, const Recommendation& r, const std::string& share) {
  const TraceContext& ctx = a.context;
  const int64_t ns = r.cause_ns;
  return "The DataLoader holds " + Ms(ns) + " a step of the critical path (" + share + ")" + CodeOf(r) + ". " +
         (ctx.workers ? "It already loads in worker processes, and they do not keep up: add workers "
                        "(num_workers), prefetch more batches (prefetch_factor), keep them alive "
                        "(persistent_workers=True), or make each item cheaper to load and transform."
                      : "Load batches in worker processes (DataLoader(num_workers>0, pin_memory=True, "
                        "persistent_workers=True)) so the next batch is ready before the step needs it.");
}

std::string Sleep(const Analysis& /*a*/, const Recommendation& r, const std::string& share) {
  const int64_t ns = r.cause_ns;
  if (ns == 0) {
    // Replayed without its sleeps the step is shorter, yet no sleep is on its path: a
    // thread the step waits for sleeps while holding what it waits for (a lock).
    return "time.sleep on a thread the step waits for (the wait for other threads below names it) holds none of "
           "the critical path itself, but the step waits for that thread while it sleeps (a lock held across the "
           "sleep?): sleep outside what the step waits for; the saving replays the steps without it.";
  }
  return "time.sleep holds " + Ms(ns) + " a step of the critical path (" + share + ")" + CodeOf(r) +
         ". Nothing else waits on it there: take it out of the step (a rate limit, a logger or a retry "
         "loop?); the saving replays the steps without it.";
}

std::string Warmup(const Analysis& a, const Recommendation& r, const std::string& share) {
  const int64_t ns = r.cause_ns;
  // Without device work no runtime call started anything: only compiling is left to name.
  const bool device = !a.kernels.empty() || a.what_if.device_ns > 0;
  return "One-time initialisation holds " + Ms(ns) + " a step of the critical path (" + share +
         "): " + Listed(r.names) + CodeOf(r) +
         (device ? " (torch.compile compiling, or a runtime call of 100 ms or more: the CUDA context, a library's "
                   "handles, a module load)"
                 : " (torch.compile compiling)") +
         ". It is not what a steady step costs: profile after warm-up (torch.profiler.schedule(wait=1, warmup=1, "
         "active=3)); the saving replays the steps without it.";
}

std::string FsdpSingleRank(const Analysis& /*a*/, const Recommendation& r, const std::string& share) {
  const int64_t ns = r.cause_ns;
  return "FSDP runs with one rank (distributedInfo world_size 1): its hooks, all-gathers and reduce-scatters shard "
         "nothing and hold " +
         Ms(ns) + " a step of the critical path (" + share + ")" + CodeOf(r) +
         ". At one rank train the model without FSDP (fully_shard / FullyShardedDataParallel), or keep it for "
         "more ranks; the saving replays the steps without FSDP's own work.";
}

std::string CommunicationWait(const Analysis& /*a*/, const Recommendation& r, const std::string& share) {
  const int64_t ns = r.cause_ns;
  char rates[160];
  std::snprintf(rates, sizeof rates, "%.1f GB/s of bus bandwidth where the link showed %.1f GB/s", r.bus_gb_per_s,
                r.link_gb_per_s);
  return "Communication kernels hold " + Ms(ns) + " a step of the critical path (" + share + ")" + CodeOf(r) +
         "; they moved their messages at " + rates +
         " (its best message size): the rest of their time is waiting for the other ranks. Balance the ranks' "
         "work (the report over all ranks names a straggler) or overlap communication with compute; the saving "
         "replays them at the link's bandwidth.";
}

std::string ThreadWait(const Analysis& /*a*/, const Recommendation& r, const std::string& share) {
  const int64_t ns = r.cause_ns;
  std::string whom;
  if (!r.waited.empty()) {
    whom = "; the threads it waits for work during those waits: " + Listed(r.waited) + " a step";
    if (!r.waited_code.empty()) whom += ", chiefly in " + Listed(r.waited_code);
  }
  return "The step's thread waits for other threads or processes, " + Ms(ns) + " a step of the critical path (" +
         share + ")" + CodeOf(r) + whom +
         ". Their work bounds the step: make it cheaper, or split it over more threads or processes; no change is "
         "simulated.";
}

std::string GlooCuda(const Analysis& /*a*/, const Recommendation& r, const std::string& share) {
  const int64_t ns = r.cause_ns;
  return "Collectives run over gloo with a GPU in the trace: gloo runs them on the host, copying CUDA tensors "
         "through host memory, and they hold " +
         Ms(ns) + " a step of the critical path (" + share + ")" + CodeOf(r) +
         ". Use the nccl backend (init_process_group(\"nccl\")) for CUDA tensors, with a GPU of its own for each "
         "rank (NCCL refuses two ranks on one GPU); no change is simulated.";
}

std::string Communication(const Analysis& /*a*/, const Recommendation& r, const std::string& share) {
  const int64_t ns = r.cause_ns;
  return "Communication kernels hold " + Ms(ns) + " a step of the critical path (" + share + "): " + Listed(r.names) +
         ". Overlap them with computation (DDP bucket_cap_mb, no_sync() for gradient accumulation) or give "
         "each rank more work per step.";
}

std::string WithStack(const Analysis& /*a*/, const Recommendation& /*r*/, const std::string& /*share*/) {
  return "The trace was recorded with with_stack=True: the Python tracer adds time to every Python call, "
         "so host (CPU Exec, Python) times are inflated; confirm a host-side finding on a trace without "
         "it.";
}

// Each finding's title (a few words, where a rank's report names it) and sentence, by
// Finding: the one place a finding's words are written.
struct FindingText {
  Finding finding;
  const char* title;
  std::string (*sentence)(const Analysis&, const Recommendation&, const std::string& share);
};
constexpr FindingText kFindingTexts[] = {
    {Finding::kPageableCopies, "copies through pageable memory", PageableCopies},
    {Finding::kSynchronizations, "synchronizations", Synchronizations},
    {Finding::kTensorCores, "FP32 matmuls off the Tensor Cores", TensorCores},
    {Finding::kLaunchBound, "launch calls and Python between operators", LaunchBound},
    {Finding::kHostBound, "operators' host time", HostBound},
    {Finding::kFusedOptimizer, "an unfused optimizer step", FusedOptimizer},
    {Finding::kDataLoader, "the DataLoader", DataLoader},
    {Finding::kSleep, "time.sleep", Sleep},
    {Finding::kWarmup, "one-time initialisation", Warmup},
    {Finding::kFsdpSingleRank, "FSDP at one rank", FsdpSingleRank},
    {Finding::kCommunicationWait, "collectives waiting for their peers", CommunicationWait},
    {Finding::kThreadWait, "waits for other threads", ThreadWait},
    {Finding::kGlooCuda, "gloo collectives on CUDA tensors", GlooCuda},
    {Finding::kCommunication, "communication kernels", Communication},
    {Finding::kWithStack, "a with_stack trace", WithStack},
};
constexpr bool InFindingOrder() {
  for (size_t i = 0; i < std::size(kFindingTexts); ++i) {
    if (kFindingTexts[i].finding != static_cast<Finding>(i)) return false;
  }
  return std::size(kFindingTexts) == static_cast<size_t>(Finding::kCount);
}
static_assert(InFindingOrder(), "a row per Finding, in its order");

std::string RankOf(const RanksAnalysis& a, size_t i) { return std::to_string(a.ranks[i].rank); }

// A finding named in a few words (a rank's own, in the ranks' report). A summary's id is
// checked as it is read.
std::string FindingTitle(const std::string& id) {
  const Finding f = FindingOf(id);
  return f == Finding::kCount ? id : kFindingTexts[static_cast<size_t>(f)].title;
}

// What the rank's own trace says it does with the time, where it says anything.
std::string OwnFinding(const RankSummary& r) {
  if (r.top_finding.empty()) return "";
  return "; its own trace's largest finding: " + FindingTitle(r.top_finding) +
         (r.top_finding_code.empty() ? "" : " in " + InSentence(r.top_finding_code)) + ", which saves it " +
         FormatDuration(r.top_finding_ns) + " a step";
}

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
  const std::string own = OwnFinding(out.ranks[l.rank]);
  if (l.part == std::string("other")) {
    text += "; its own step spends " + FormatDuration(l.part_delta_ns) +
            " more per step than the other ranks' median outside any traced operation (other)" +
            (own.empty() ? ": find what it does then (analyze its trace on its own: its Python, I/O or a sleep)" : own);
  } else if (!part.empty()) {
    text += "; its own step spends " + part + " " + FormatDuration(l.part_delta_ns) +
            " more per step than the other ranks' median. Make its " + part + " as short as theirs " +
            (l.part == std::string("dataloader") ? "(more loader workers or faster storage on its host)"
             : l.part == std::string("kernel")   ? "(its share of the data or model is larger: balance them)"
                                                 : "(analyze its trace on its own)");
  } else {
    text += own.empty() ? ". Analyze its trace on its own for what it does before the collective" : own;
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
    // Ranks on one machine that all work on the same device share one GPU, which NCCL
    // refuses: the trace does not name the machine, so the advice says what it depends on.
    std::string device = out.ranks.empty() ? "" : out.ranks[0].memory_device;
    for (const RankSummary& k : out.ranks) {
      if (k.memory_device != device) device.clear();
    }
    text +=
        "The link limits it, and gloo copies CUDA tensors through host memory: use the nccl backend "
        "(init_process_group(\"nccl\")) for CUDA tensors" +
        (device.empty() || device == "cpu"
             ? std::string(".")
             : ", with a GPU of its own for each rank: every rank here works on " + device +
                   ", and ranks on one machine would share it, which NCCL refuses.");
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
  int64_t total = 0;  // a step's critical path: the analysed steps' lengths, the mean
  for (const CriticalStep& s : a.critical_path) total += s.length_ns;
  const size_t steps = a.critical_path.size();
  if (steps > 0) total /= static_cast<int64_t>(steps);
  const std::string share = Fixed(Percent(r.cause_ns, total)) + "% of the step's " + Ms(total);
  std::string wait;
  if (r.explains_wait) {
    const HostWaitEvidence& w = r.wait;
    const std::string stream = report::StreamName(w.stream);
    wait = "GPU " + w.device + " " + stream + " waits " + Ms(w.ns) + " a step for the host (" +
           Fixed(Percent(w.ns, total)) + "% of the step); meanwhile the launching thread was in " +
           Listed(w.activity, w.ns);
    const std::string code = Listed(w.code);
    if (!code.empty()) wait += (w.code[0].ns * 2 > w.ns ? ", most of it in " : ", chiefly in ") + code;
    wait += ". ";
  }
  return wait + kFindingTexts[static_cast<size_t>(r.finding)].sentence(a, r, share);
}

std::string WhatIfTotalText(const Analysis& a) {
  const WhatIfTotal& w = a.what_if;
  if (w.changes == 0 || w.step_ns <= 0) return "";
  const int64_t saved = std::max<int64_t>(w.step_ns - w.together_ns, 0);
  return "each saving replays the steps' dependencies without its cause; " +
         std::string(w.changes > 1 ? "all " + std::to_string(w.changes) + " changes together" : "the change") +
         ": a step of " + Ms(w.step_ns) + " becomes " + Ms(w.together_ns) + ", " + Ms(saved) + " (" +
         report::PercentOf(static_cast<double>(saved) / static_cast<double>(w.step_ns)) + ") less" +
         // A trace without device work has none to remain: the host's is all there is.
         (w.device_ns > 0 ? "; what remains holds the device's own work, " + Ms(w.device_ns) + " a step" : "");
}

std::string RankRecommendationText(const RanksAnalysis& a, const RankRecommendation& r) {
  switch (r.finding) {
    case RankFinding::kStraggler:
      return StragglerText(a, a.stragglers[static_cast<size_t>(r.index)]);
    case RankFinding::kCommunication:
      return CommunicationText(a, r);
    case RankFinding::kSlowRank:
    case RankFinding::kCount:
      break;
  }
  return SlowRankText(a, r);
}

}  // namespace torch2pprof
