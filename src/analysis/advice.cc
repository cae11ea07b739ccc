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
#include "base/percent.h"
#include "model/frame_names.h"

namespace torch2pprof::analysis {

namespace {

bool Contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

// The largest entries of a map by value, at most n (ties in the map's order): the evidence
// a finding lists.
std::vector<NamedTime> Top(const std::map<std::string, int64_t>& by, size_t n) {
  std::vector<NamedTime> v;
  for (const auto& [k, ns] : by) v.push_back({k, ns});
  std::stable_sort(v.begin(), v.end(), [](const NamedTime& x, const NamedTime& y) { return x.ns > y.ns; });
  if (v.size() > n) v.resize(n);
  // An entry under a hundredth of the largest is no evidence beside it (2.71us listed
  // next to 229ms): left out.
  while (v.size() > 1 && v.back().ns * 100 < v.front().ns) v.pop_back();
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
                                      "the DataLoader",
                                      "time.sleep",
                                      "waits for other threads",
                                      "initialisation",
                                      "the optimizer step",
                                      "operators computing",
                                      "FSDP at one rank"};

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
    if (r == Role::kRuntime && IsGraphLaunchCall(n)) {
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
  const Compute cc = LowestCompute(a.trace.devices);
  c.compute_major = cc.major, c.compute_minor = cc.minor, c.gpu = cc.gpu;
  // A generation loop: one top module called many times a step, and nothing backward.
  bool backward = false;
  for (const OperatorRow& r : a.operators) backward |= Contains(r.name, "Backward");
  const uint64_t steps = a.trace.profiler_steps;
  const ModuleNode* top = nullptr;
  for (const ModuleNode& m : a.modules) {
    if (m.parent < 0 && (!top || m.calls > top->calls)) top = &m;
  }
  if (!backward && top && steps > 0 && top->calls >= kMinTokens * steps) {
    c.tokens_per_step = top->calls / steps;
    c.token_module = top->name;
  }
  return c;
}

Compute LowestCompute(const std::vector<DeviceInfo>& devices) {
  Compute c;
  for (const DeviceInfo& d : devices) {
    int major = -1, minor = -1;
    if (std::sscanf(d.compute.c_str(), "%d.%d", &major, &minor) != 2) continue;
    if (c.major < 0 || std::make_pair(major, minor) < std::make_pair(c.major, c.minor)) {
      c.major = major, c.minor = minor, c.gpu = d.name;
    }
  }
  return c;
}

namespace {

// Each change the engine simulates, the finding it makes and the causes that hold its
// time on the critical path (its evidence): one finding per root cause and remedy.
struct Lever {
  uint32_t change;
  const char* what_if;  // the change's id in JSON
  Finding finding;
  const char* cause;  // the cause's id in JSON
  Cause causes[2];
};
constexpr Lever kLevers[] = {
    {kWhatIfPinned, "pinned", Finding::kPageableCopies, "pageable_copy", {kPageableCopy, kCauses}},
    {kWhatIfNoSync, "no_sync", Finding::kSynchronizations, "synchronization", {kSyncWait, kCauses}},
    {kWhatIfTf32, "tf32", Finding::kTensorCores, "fp32_matmul", {kTensorCores, kCauses}},
    {kWhatIfGraphs, "cuda_graphs", Finding::kLaunchBound, "launch_and_python", {kLaunchOverhead, kPythonOverhead}},
    {kWhatIfNoPython, "no_python", Finding::kLaunchBound, "launch_and_python", {kPythonOverhead, kLaunchOverhead}},
    {kWhatIfFewerHostOps, "fewer_host_ops", Finding::kHostBound, "host_operators", {kHostOps, kCauses}},
    {kWhatIfFusedOptimizer, "fused_optimizer", Finding::kFusedOptimizer, "optimizer", {kOptimizer, kCauses}},
    {kWhatIfNoDataLoader, "no_dataloader_wait", Finding::kDataLoader, "dataloader", {kDataLoaderWait, kCauses}},
    {kWhatIfNoSleep, "no_sleep", Finding::kSleep, "sleep", {kSleep, kCauses}},
    {kWhatIfNoInit, "no_init", Finding::kWarmup, "initialisation", {kInit, kCauses}},
    {kWhatIfNoFsdp, "no_fsdp", Finding::kFsdpSingleRank, "fsdp", {kFsdp, kCauses}},
    {kWhatIfLink, "link_bandwidth", Finding::kCommunicationWait, "communication", {kCommunication, kCauses}},
};

// The stream that waited longest for the host (at least 20% of the path), and what the
// host did meanwhile, a step: the evidence of the finding for the largest of those
// activities, whose cause goes to *cause (-1: none waited that long).
HostWaitEvidence WaitEvidence(const CriticalResult& critical, int64_t steps, int* cause) {
  HostWaitEvidence evidence;
  if (critical.host_waits.empty() || Percent(critical.host_waits[0].ns, critical.total_ns) < 20) return evidence;
  const HostWait& wait = critical.host_waits[0];
  std::map<std::string, int64_t> activity;
  int64_t most = -1;
  for (int c = 0; c < kCauses; ++c) {
    const int64_t ns = wait.by_cause[static_cast<size_t>(c)];
    if (!kHostActivity[c][0] || ns <= 0) continue;
    activity[kHostActivity[c]] += ns;
    if (ns > most) most = ns, *cause = c;
  }
  if (*cause < 0) return evidence;  // a wait the host spent on nothing the findings name
  evidence = {wait.device, wait.stream, wait.ns / steps, Top(activity, 4),
              Top(wait.where[static_cast<size_t>(*cause)], 2)};
  for (NamedTime& n : evidence.activity) n.ns /= steps;
  for (NamedTime& n : evidence.code) n.ns /= steps;
  return evidence;
}

}  // namespace

std::vector<Recommendation> Recommend(const Analysis& a, const CriticalResult& critical) {
  std::vector<Recommendation> out;
  const int64_t total = critical.total_ns;
  const int64_t steps = static_cast<int64_t>(std::max<size_t>(a.critical_path.size(), 1));
  const CriticalResult::WhatIfs& wi = critical.what_ifs;
  const std::array<CauseTime, kCauses>& causes = critical.causes;
  // An explaining finding (no change to simulate) fires where its causes hold this much.
  auto enough = [&](int64_t ns) { return total > 0 && ns > 0 && Percent(ns, total) >= 5; };

  int wait_cause = -1;
  const HostWaitEvidence wait_evidence = WaitEvidence(critical, steps, &wait_cause);
  // Per step, the unit of every number a finding states.
  auto per_step = [&](std::vector<NamedTime> v) {
    for (NamedTime& n : v) n.ns /= steps;
    return v;
  };
  auto add = [&](Finding finding, const char* cause_id, std::initializer_list<Cause> held) -> Recommendation& {
    Recommendation r;
    r.finding = finding;
    r.cause = cause_id;
    std::map<std::string, int64_t> names, where;
    for (const Cause c : held) {
      if (c == kCauses) continue;
      const CauseTime& ct = causes[static_cast<size_t>(c)];
      r.cause_ns += ct.ns;
      for (const auto& [k, v] : ct.names) names[k] += v;
      for (const auto& [k, v] : ct.where) where[k] += v;
      if (c == wait_cause) r.explains_wait = true, r.wait = wait_evidence;
    }
    r.cause_ns /= steps;
    r.names = per_step(Top(names, 3));
    r.code = per_step(Top(where, 3));
    out.push_back(std::move(r));
    return out.back();
  };

  // A finding for each change that saves enough: its saving is the replay's.
  for (const Lever& l : kLevers) {
    if (!(wi.together & l.change)) continue;
    const int c = __builtin_ctz(l.change);
    Recommendation& r = add(l.finding, l.cause, {l.causes[0], l.causes[1]});
    r.what_if = l.what_if;
    r.saving_ns = wi.saving_ns[static_cast<size_t>(c)] / steps;
    if (l.finding == Finding::kCommunicationWait) {
      double bytes = 0, ns = 0;
      for (const CollectiveSizeRow& row : a.collective_sizes) {
        if (row.message_bytes < 0 || row.group_size < 2) continue;
        bytes += static_cast<double>(row.message_bytes) * row.bus_factor * static_cast<double>(row.calls);
        ns += static_cast<double>(row.time_ns);
      }
      r.bus_gb_per_s = ns > 0 ? bytes / ns : 0;
      r.link_gb_per_s = LinkBusBandwidth(a.collective_sizes);
    }
    if (l.finding == Finding::kLaunchBound) {
      r.launch_ns = causes[kLaunchOverhead].ns / steps;
      r.python_ns = causes[kPythonOverhead].ns / steps;
      r.names.clear();
    }
  }

  // Findings that explain the path with no change to simulate.
  if (enough(causes[kThreadWait].ns)) {
    Recommendation& r = add(Finding::kThreadWait, "thread_wait", {kThreadWait});
    r.waited = per_step(Top(wi.waited_threads, 3));
    r.waited_code = per_step(Top(wi.waited_code, 3));
  }
  const bool device = !a.gpu.empty();
  if (a.trace.backend == "gloo" && device) {
    int64_t comm = 0;
    for (const StepRow& r : a.steps) comm += r.communication_ns;
    if (enough(comm)) add(Finding::kGlooCuda, "host_communication", {kCommunication});
  } else if (enough(causes[kCommunication].ns) && !(wi.together & kWhatIfLink)) {
    // Where the collectives' waits for peers are replayed away, that finding says it.
    add(Finding::kCommunication, "communication", {kCommunication});
  }

  std::stable_sort(out.begin(), out.end(), [](const Recommendation& x, const Recommendation& y) {
    if ((x.saving_ns > 0) != (y.saving_ns > 0)) return x.saving_ns > 0;
    return x.saving_ns != y.saving_ns ? x.saving_ns > y.saving_ns : x.cause_ns > y.cause_ns;
  });

  // A caveat, not a saving: last.
  if (!a.python_functions.empty()) {
    Recommendation r;
    r.finding = Finding::kWithStack;
    out.push_back(std::move(r));
  }
  return out;
}

WhatIfTotal TotalOf(const CriticalResult& critical, size_t steps) {
  const CriticalResult::WhatIfs& wi = critical.what_ifs;
  WhatIfTotal w;
  w.steps = steps;
  if (steps == 0) return w;
  const int64_t n = static_cast<int64_t>(steps);
  w.step_ns = wi.replay_ns / n;
  w.together_ns = wi.together_ns / n;
  w.device_ns = wi.together_device_ns / n;
  w.changes = static_cast<uint32_t>(__builtin_popcount(wi.together));
  return w;
}

}  // namespace torch2pprof::analysis
