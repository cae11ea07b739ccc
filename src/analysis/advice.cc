// Findings a user can act on: each claims causes of the critical path (critical.cc), so
// its saving is time the steps really waited on and no two findings share a microsecond;
// each looks first for what the trace already does (compiled, graphed, low precision,
// pinned, worker processes) and for what the GPU can do, and names the code it means.
// Here a finding is decided and its evidence gathered; report/recommendation_text writes
// its sentence. The rules, their evidence and their savings are docs/reference.md's
// ("Recommendations").
#include <algorithm>
#include <cstdio>
#include <map>

#include "analysis/stages.h"
#include "model/frame_names.h"

namespace torch2pprof::analysis {

namespace {

double Pct(int64_t part, int64_t whole) {
  return whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0;
}

bool Contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// The largest entries of a map by value, at most n (ties in the map's order).
std::vector<NamedTime> Top(const std::map<std::string, int64_t>& by, size_t n) {
  std::vector<NamedTime> v;
  for (const auto& [k, ns] : by) v.push_back({k, ns});
  std::stable_sort(v.begin(), v.end(), [](const NamedTime& x, const NamedTime& y) { return x.ns > y.ns; });
  if (v.size() > n) v.resize(n);
  return v;
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

TraceContext ContextOf(const Analysis& a, const Events& ev) {
  TraceContext c;
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

std::vector<Recommendation> Recommend(const Analysis& a, const Events& ev, const CriticalResult& critical,
                                      const std::vector<std::pair<uint32_t, uint32_t>>& launchers) {
  std::vector<Recommendation> out;
  const TraceContext& ctx = a.context;
  const Trace& t = ev.trace();
  const int64_t total = critical.total_ns;

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

  // The stream that waited longest for the host, and what the host did meanwhile: the
  // evidence of the finding for the largest of those activities.
  const HostWait* wait = nullptr;
  if (!critical.host_waits.empty() && Pct(critical.host_waits[0].ns, total) >= 20) wait = &critical.host_waits[0];
  int wait_cause = -1;
  HostWaitEvidence wait_evidence;
  if (wait) {
    std::map<std::string, int64_t> activity;
    int64_t most = -1;
    for (int c = 0; c < kCauses; ++c) {
      if (!kHostActivity[c][0] || wait->by_cause[static_cast<size_t>(c)] <= 0) continue;
      activity[kHostActivity[c]] = wait->by_cause[static_cast<size_t>(c)];
      if (wait->by_cause[static_cast<size_t>(c)] > most) most = wait->by_cause[static_cast<size_t>(c)], wait_cause = c;
    }
    wait_evidence = {wait->device, wait->stream, wait->ns, Top(activity, 4),
                     Top(wait->where[static_cast<size_t>(wait_cause)], 2)};
  }
  // A finding of `cause`: its time, what holds it and where.
  auto add = [&](const char* id, int cause, int64_t saving, const CauseTime& c) -> Recommendation& {
    Recommendation r;
    r.id = id;
    r.saving_ns = saving;
    r.cause_ns = c.ns;
    r.names = Top(c.names, 3);
    r.code = Top(c.where, 3);
    if (cause == wait_cause) r.explains_wait = true, r.wait = wait_evidence;
    out.push_back(std::move(r));
    return out.back();
  };
  auto fires = [&](int cause) { return enough(causes[static_cast<size_t>(cause)].ns) || cause == wait_cause; };

  // Copies from or to pageable memory: staged through a bounce buffer, synchronous for the host.
  if (fires(kPageableCopy)) add("pageable_copies", kPageableCopy, causes[kPageableCopy].ns, causes[kPageableCopy]);

  // Host calls that wait for the device: each drains the launch queue.
  if (fires(kSyncWait)) add("synchronizations", kSyncWait, causes[kSyncWait].ns, causes[kSyncWait]);

  // Matmuls and convolutions off the Tensor Cores: FP32 math. Tensor Core kernels run
  // them at least twice as fast on every GPU that has them, so half is the bound. A GPU
  // older than compute capability 7.0 has none: no finding.
  if (fires(kTensorCores) && !(ctx.compute_major > 0 && ctx.compute_major < 7)) {
    add("tensor_cores", kTensorCores, causes[kTensorCores].ns / 2, causes[kTensorCores]);
  }

  // Launch and Python overhead: the device waits for launches, kernels of a few
  // microseconds are separated by gaps, the host runs Python between operators.
  {
    const int64_t ns = causes[kLaunchOverhead].ns + causes[kPythonOverhead].ns;
    if (enough(ns) || wait_cause == kLaunchOverhead || wait_cause == kPythonOverhead) {
      std::map<std::string, int64_t> where = causes[kLaunchOverhead].where;
      for (const auto& [k, v] : causes[kPythonOverhead].where) where[k] += v;
      const int cause = wait_cause == kPythonOverhead ? kPythonOverhead : kLaunchOverhead;
      Recommendation& r = add("launch_bound", cause, ns, causes[cause]);
      r.cause_ns = ns;
      r.launch_ns = causes[kLaunchOverhead].ns;
      r.python_ns = causes[kPythonOverhead].ns;
      r.names.clear();
      r.code = Top(where, 3);
    }
  }

  // The host's own work in operators.
  if (fires(kHostOps)) add("host_bound", kHostOps, causes[kHostOps].ns, causes[kHostOps]);

  // Gloo moves CUDA tensors through host memory.
  if (fires(kCommunication) || (a.trace.backend == "gloo" && !a.gpu.empty())) {
    const CauseTime& c = causes[kCommunication];
    int64_t comm = 0;
    for (const StepRow& r : a.steps) comm += r.communication_ns;
    if (a.trace.backend == "gloo" && !a.gpu.empty() && enough(comm)) {
      add("gloo_cuda", kCommunication, c.ns, c);
    } else if (enough(c.ns)) {
      add("communication", kCommunication, c.ns, c);
    }
  }

  if (fires(kDataLoaderWait)) add("dataloader", kDataLoaderWait, causes[kDataLoaderWait].ns, causes[kDataLoaderWait]);

  std::stable_sort(out.begin(), out.end(),
                   [](const Recommendation& x, const Recommendation& y) { return x.saving_ns > y.saving_ns; });

  // A caveat, not a saving: last.
  if (!a.python_functions.empty()) {
    Recommendation r;
    r.id = "with_stack";
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace torch2pprof::analysis
