// The critical path of each analysed step (model/critical_path.h) read for analyze: per
// step its categories and the events holding most of it, and over the steps each
// nanosecond put down to the one cause a finding may claim (Recommend).
#include <algorithm>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

#include "analysis/critical_reader.h"
#include "analysis/stages.h"
#include "analysis/what_ifs.h"
#include "base/executor.h"
#include "base/sum_table.h"
#include "base/utf8.h"
#include "model/critical_path.h"
#include "model/frame_names.h"

namespace torch2pprof::analysis {
namespace {

constexpr uint32_t kNone = kNoId;

std::string Where(const Trace& t, Code c) {
  if (c.python) return MakeFrame(FrameSystemName(t.strings.Get(c.python))).name;
  if (c.op) return std::string(t.strings.Get(c.op));
  return "";
}

// What a stretch of the path is summed by: (name, bound, python, op) for the events
// holding most of it, (cause, name, python, op) for the findings. A step has thousands of
// stretches and far fewer keys.
struct Key {
  uint32_t a, b, c, d;
  SumKey Packed() const { return {uint64_t{a} << 32 | b, uint64_t{c} << 32 | d}; }
  static Key Of(const SumKey& k) {
    return {static_cast<uint32_t>(k.hi >> 32), static_cast<uint32_t>(k.hi), static_cast<uint32_t>(k.lo >> 32),
            static_cast<uint32_t>(k.lo)};
  }
  bool operator<(const Key& o) const { return std::tie(a, b, c, d) < std::tie(o.a, o.b, o.c, o.d); }
};
using Sums = std::vector<std::pair<Key, int64_t>>;  // each key once, in key order

Sums Sorted(const SumTable& table) {
  Sums out;
  for (const auto& [k, ns] : table.Sorted()) out.push_back({Key::Of(k), ns});
  return out;
}

Key ItemKey(uint32_t name, Bound bound, Code code) {
  return {name, static_cast<uint32_t>(bound), code.python, code.op};
}

std::string ItemName(const Trace& t, uint32_t name) {
  return name == kNone ? "(no event on the thread)" : MakeFrame(FrameSystemName(t.strings.Get(name))).name;
}

// The n items holding most time, most first (equal times in the keys' order).
std::vector<CriticalItem> Top(const Trace& t, const Sums& items, size_t n) {
  std::vector<std::pair<int64_t, Key>> sorted;
  sorted.reserve(items.size());
  for (const auto& [k, ns] : items) sorted.push_back({ns, k});  // summed
  const size_t keep = std::min(n, sorted.size());
  std::partial_sort(
      sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(keep), sorted.end(),
      [](const auto& x, const auto& y) { return x.first != y.first ? x.first > y.first : x.second < y.second; });
  std::vector<CriticalItem> out;
  for (size_t i = 0; i < keep; ++i) {
    const auto& [ns, k] = sorted[i];
    CriticalItem it;
    it.name = ItemName(t, k.a);
    it.bound = static_cast<Bound>(k.b);
    it.where = Where(t, Code{k.c, k.d});
    it.ns = ns;
    out.push_back(std::move(it));
  }
  return out;
}

// What the host did while each device stream waited for it: the host-wait gaps of the
// analysed steps (IdleTime's rule: the next work's launch came after the stream's last
// work ended), covered by what was innermost on the launching thread. Longest wait first.
std::vector<HostWait> HostWaits(const Events& ev, const StepWindows& windows, const CriticalPathWalker& walker,
                                const Reader& reader) {
  const Trace& t = ev.trace();
  const TraceModel& m = ev.model();
  std::vector<HostWait> out;
  std::map<uint32_t, std::string> names;
  auto name_of = [&](uint32_t id) -> const std::string& {
    auto [it, added] = names.try_emplace(id);
    if (added) it->second = MakeFrame(FrameSystemName(t.strings.Get(id))).name;
    return it->second;
  };
  std::map<uint32_t, std::vector<uint32_t>> work;  // by device lane
  for (const uint32_t e : ev.DeviceEvents()) {
    if (ev.Dur(e) > 0) work[ev.Iv(e).lane].push_back(e);
  }
  for (auto& [lane, items] : work) {
    std::stable_sort(items.begin(), items.end(), [&](uint32_t a, uint32_t b) {
      return std::tie(ev.Iv(a).start_ns, ev.Iv(a).end_ns) < std::tie(ev.Iv(b).start_ns, ev.Iv(b).end_ns);
    });
    HostWait w;
    w.device = m.lanes[lane].device_name.empty() ? t.lanes[lane].pid : m.lanes[lane].device_name;
    w.stream = t.lanes[lane].tid;
    SumTable code_table;  // (cause, python, op, 0)
    int64_t end = INT64_MIN;
    for (const uint32_t e : items) {
      const Interval& iv = ev.Iv(e);
      const Launch* l = m.LaunchOf(e);
      if (end != INT64_MIN && iv.start_ns > end && l && l->ts_ns > end && windows.DeviceStep(t, m, e) >= 0) {
        w.ns += iv.start_ns - end;
        const LaneStacks* ls = reader.StacksOf(l->lane);
        const HostTimeline* tl = walker.Host(l->lane);
        int64_t covered = 0;
        std::optional<HostTimeline::Cursor> cursor;
        if (tl) cursor.emplace(*tl, end);
        for (int64_t at = end; cursor && at < iv.start_ns;) {
          const Stretch s = cursor->Next();
          const int64_t until = std::min(s.end, iv.start_ns);
          if (s.found) {
            const int64_t ns = until - at;
            covered += ns;
            const int32_t piece = static_cast<int32_t>(s.piece);
            const Cause c = reader.HostCause(ls, piece);
            w.by_cause[static_cast<size_t>(c)] += ns;
            const Code code = reader.CodeOf(*ls, piece);
            code_table.Add(Key{static_cast<uint32_t>(c), code.python, code.op, 0}.Packed(), ns);
          }
          at = until;
        }
        w.by_cause[kPythonOverhead] += iv.start_ns - end - covered;  // nothing open on the thread
      }
      end = std::max(end, iv.end_ns);
    }
    for (const auto& [key, ns] : Sorted(code_table)) {
      const auto& [c, python, op, unused] = key;
      if (python) {
        w.where[static_cast<size_t>(c)][name_of(python)] += ns;
      } else if (op) {
        w.where[static_cast<size_t>(c)][std::string(t.strings.Get(op))] += ns;
      }
    }
    if (w.ns > 0) out.push_back(std::move(w));
  }
  std::stable_sort(out.begin(), out.end(), [](const HostWait& x, const HostWait& y) { return x.ns > y.ns; });
  return out;
}

// Which changes fit the trace: device changes only where there is a device, CUDA graphs
// only on CUDA and where none replay, TF32 where the GPU has Tensor Cores, fused only
// where the optimizer is not.
uint32_t FittingWhatIfs(const Events& ev, bool foreach_optimizer) {
  const TraceModel& m = ev.model();
  bool device = false, cuda = false, graphs = false;
  for (size_t l = 0; l < m.lanes.size(); ++l) device |= m.lanes[l].device;
  // CUDA (or HIP, which has graphs too) by its runtime's calls: MTIA's have none.
  for (const uint32_t e : ev.RuntimeEvents()) {
    const std::string_view n = ev.Name(e);
    cuda |= n.substr(0, 2) == "cu" || n.substr(0, 3) == "hip";
    if (IsGraphLaunchCall(n)) {
      graphs = true;
      break;
    }
  }
  const int major = LowestCompute(m.devices).major;
  uint32_t fit = kWhatIfFewerHostOps | kWhatIfNoDataLoader | kWhatIfNoSleep | kWhatIfNoInit | kWhatIfNoFsdp;
  // fused=True runs on CPUs too (Adam, AdamW, SGD, Adagrad since torch 2.4), not in the
  // torch 1.x that wrote a trace without Kineto's header (a bare array of events).
  const bool kineto = ev.trace().header.raw.count("schemaVersion") > 0;
  if (foreach_optimizer && (device || kineto)) fit |= kWhatIfFusedOptimizer;
  if (device) {
    fit |= kWhatIfPinned | kWhatIfNoSync | kWhatIfLink;
    if (major < 0 || major >= 7) fit |= kWhatIfTf32;
    fit |= cuda && !graphs ? kWhatIfGraphs : kWhatIfNoPython;
  }
  return fit;
}

// Whether the trace's optimizer steps run unfused (a foreach or a for-loop optimizer).
bool ForeachOptimizer(const Trace& t) {
  bool step = false, fused = false;
  for (uint32_t i = 0; i < t.strings.size(); ++i) {
    const std::string_view n = t.strings.Get(i);
    step |= n.substr(0, 15) == "Optimizer.step#";
    fused |= n.find("_fused_adam") != std::string_view::npos || n.find("_fused_sgd") != std::string_view::npos;
  }
  return step && !fused;
}

// Every analysed step's graph replayed with each change that fits, alone; then with those
// that save enough together (a second build: a graph is never held past its step).
CriticalResult::WhatIfs WhatIfsOf(const Events& ev, const std::vector<LaneStacks>& lanes, const StepWindows& windows,
                                  const Reader& reader, const CriticalPathWalker& walker, Executor& ex) {
  CriticalResult::WhatIfs out;
  out.foreach_optimizer = ForeachOptimizer(ev.trace());
  out.simulated = FittingWhatIfs(ev, out.foreach_optimizer);
  const WhatIfGraphs graphs(ev, lanes, windows, reader, walker, out.foreach_optimizer);
  const size_t n = windows.steps.size();
  std::mutex sums;
  std::map<std::pair<uint32_t, uint32_t>, int64_t> waited;  // (lane, code) -> ns
  // Each step's changes that apply there, and a guess at those that will fire (the ones
  // saving kWhatIfShare of this step) replayed together: where the changes that fire
  // over all steps are the guess, the step is not built again.
  struct Guess {
    uint32_t changes = 0;
    Replay replay;
  };
  std::vector<uint32_t> applies(n, 0);
  std::vector<Guess> guess(n);
  // Few steps: a step's replays side by side; many: the steps side by side.
  const bool by_change = n < 2 * static_cast<size_t>(ex.threads());
  auto step = [&](size_t k) {
    std::vector<WhatIfGraphs::Waited> w;
    const StepGraph g = graphs.Build(k, &w);
    uint32_t tags = 0;
    for (const WhatNode& node : g.nodes) tags |= node.fixed ? 0 : node.tags;
    std::vector<uint32_t> runs = {0};
    for (int c = 0; c < kWhatIfs; ++c) {
      const uint32_t bit = 1u << c;
      if ((out.simulated & bit) && (tags & TagsOf(bit))) applies[k] |= bit, runs.push_back(bit);
    }
    std::vector<Replay> r;
    if (by_change) {
      // Few steps: a step's replays in as many groups as threads.
      const size_t parts = std::min(runs.size(), static_cast<size_t>(ex.threads()));
      r.resize(runs.size());
      ParallelFor(ex, parts, [&](size_t p) {
        std::vector<uint32_t> mine;
        for (size_t i = p; i < runs.size(); i += parts) mine.push_back(runs[i]);
        const std::vector<Replay> got = SimulateMany(g, mine);
        for (size_t j = 0; j < got.size(); ++j) r[p + j * parts] = got[j];
      });
    } else {
      r = SimulateMany(g, runs);
    }
    const Replay& base = r[0];
    std::array<int64_t, kWhatIfs> saved{};
    uint32_t local = 0;
    for (size_t i = 1; i < runs.size(); ++i) {
      const int64_t ns = std::max<int64_t>(base.end - r[i].end, 0);
      saved[static_cast<size_t>(__builtin_ctz(runs[i]))] = ns;
      if (ns > 0 && static_cast<double>(ns) >= kWhatIfShare * static_cast<double>(base.end - g.start)) local |= runs[i];
    }
    guess[k] = {local, Simulate(g, local, true)};
    const std::lock_guard<std::mutex> hold(sums);
    for (const WhatIfGraphs::Waited& x : w) waited[{x.lane, x.code}] += x.ns;
    out.replay_ns += base.end - g.start;
    for (size_t c = 0; c < kWhatIfs; ++c) out.saving_ns[c] += saved[c];
  };
  if (by_change) {
    for (size_t k = 0; k < n; ++k) step(k);
  } else {
    ParallelFor(ex, n, step);
  }
  const Trace& t = ev.trace();
  for (const auto& [key, ns] : waited) {
    const Lane& l = t.lanes[key.first];
    out.waited_threads[l.thread_name.empty() ? "thread " + l.tid : l.thread_name] += ns;
    if (key.second) out.waited_code[MakeFrame(FrameSystemName(t.strings.Get(key.second))).name] += ns;
  }
  for (int c = 0; c < kWhatIfs; ++c) {
    if (static_cast<double>(out.saving_ns[static_cast<size_t>(c)]) >=
            kWhatIfShare * static_cast<double>(out.replay_ns) &&
        out.saving_ns[static_cast<size_t>(c)] > 0)
      out.together |= 1u << c;
  }
  // The findings' changes together: a step's guess where it was right, else built again.
  ParallelFor(ex, n, [&](size_t k) {
    const uint32_t want = out.together & applies[k];
    Replay r;
    if (guess[k].changes == want) {
      r = guess[k].replay;
    } else {
      r = Simulate(graphs.Build(k), want, true);
    }
    const std::lock_guard<std::mutex> hold(sums);
    out.together_ns += r.end - windows.steps[k].start;
    out.together_device_ns += r.device_ns;
  });
  return out;
}

}  // namespace

// Over 100 lines: one parallel loop over the steps whose parts (the walk, its reading, the
// totals taken under one lock) share each step's state; apart, each would take it as a
// dozen arguments.
CriticalResult Critical(const Events& ev, const std::vector<LaneStacks>& lanes, const StepWindows& windows,
                        Executor& ex, size_t timeline_steps, CriticalPaths* paths) {
  const Trace& t = ev.trace();
  const TraceModel& m = ev.model();
  CriticalResult out;
  const CriticalPathWalker walker(t, m, lanes, windows);
  const Reader reader(ev, lanes, walker, windows);
  // The host's side of the streams' waits reads what the walks read: it runs beside them.
  auto waits = Beside(ex, [&] { return HostWaits(ev, windows, walker, reader); });
  // Each step walked and read on the threads; what it adds to the totals (sums, so in any
  // order) goes in under a lock once the step is read.
  out.steps.resize(windows.steps.size());
  SumTable all_table, cause_table;
  std::mutex totals;
  std::vector<Key> most_keys(windows.steps.size(), Key{0, 0, 0, 0});
  const Timelines timelines(ev, lanes, windows, timeline_steps);
  out.timelines.resize(timelines.count());
  if (paths) {
    paths->paths.assign(windows.steps.size(), StepCriticalPath{});
    paths->steps.clear();
    for (const StepWindow& w : windows.steps) paths->steps.push_back(w.name);
  }
  walker.WalkAll(ex, [&](size_t k, const StepCriticalPath& path) {
    if (timelines.Slot(k) >= 0) out.timelines[static_cast<size_t>(timelines.Slot(k))] = timelines.Of(k, path);
    if (paths) paths->paths[k] = path;
    CriticalStep& step = out.steps[k];
    step.step = windows.steps[k].name;
    step.length_ns = path.length_ns;
    std::copy(std::begin(path.by_bound), std::end(path.by_bound), std::begin(step.bound_ns));
    int64_t device_ns = 0;
    SumTable items, causes;
    for (const CriticalSegment& s : path.segments) {
      const int64_t ns = s.end_ns - s.start_ns;
      Code code;
      uint32_t name = kNone;
      Cause cause = kGpuWork;
      if (s.bound == Bound::kCpu || s.bound == Bound::kDataLoading) {
        const LaneStacks* ls = reader.StacksOf(s.lane);
        if (ls && s.piece >= 0) {
          code = reader.CodeOf(*ls, s.piece);
          name = ev.Iv(s.event).name;
        }
        cause = reader.HostCause(ls, s.piece);
      } else {
        if (s.bound == Bound::kGpuCompute || s.bound == Bound::kGpuCommunication) device_ns += ns;
        if (s.bound == Bound::kGpuCompute &&
            (ev.RoleOf(s.event) == Role::kMemcpy || ev.RoleOf(s.event) == Role::kMemset))
          step.copy_ns += ns;
        code = reader.LaunchCode(s.event);
        name = ev.Iv(s.event).name;
        if (s.bound == Bound::kGpuCommunication) {
          cause = kCommunication;
        } else if (reader.IsPageableCopy(s.event)) {
          // A pageable copy's wait for its launch is the copy's too: the driver stages
          // pageable memory before the transfer starts.
          cause = kPageableCopy;
        } else if (s.bound == Bound::kLaunch || s.bound == Bound::kKernelKernel) {
          cause = kLaunchOverhead;
        } else if (reader.IsFp32Matmul(s.event)) {
          cause = kTensorCores;
        }
      }
      items.Add(ItemKey(name, s.bound, code).Packed(), ns);
      causes.Add(Key{static_cast<uint32_t>(cause), name, code.python, code.op}.Packed(), ns);
    }
    const Sums item_sums = Sorted(items), cause_sums = Sorted(causes);
    // The step's largest item, by ids: named once all steps are walked.
    for (const auto& [key, ns] : item_sums) {
      if (ns > step.most.ns || (ns == step.most.ns && ns > 0 && key < most_keys[k])) {
        step.most.ns = ns;
        step.most.bound = static_cast<Bound>(key.b);
        most_keys[k] = key;
      }
    }
    const std::lock_guard<std::mutex> hold(totals);
    for (const auto& [key, ns] : item_sums) all_table.Add(key.Packed(), ns);
    for (const auto& [key, ns] : cause_sums) cause_table.Add(key.Packed(), ns);
    out.total_ns += step.length_ns;
    out.device_ns += device_ns;
  });
  const Sums all = Sorted(all_table), by_cause = Sorted(cause_table);
  out.top = Top(t, all, 20);
  // Each step's largest item named, each distinct name and code held once.
  out.names = {""};
  std::map<std::pair<uint32_t, int>, uint32_t> index;  // (string id, 0 name / 1 code): its place in names
  auto intern = [&](uint32_t id, int kind, const std::function<std::string()>& text) {
    auto [it, added] = index.try_emplace({id, kind}, static_cast<uint32_t>(out.names.size()));
    if (added) out.names.push_back(CutText(text(), CriticalMost::kStepNameBytes));
    return it->second;
  };
  for (size_t k = 0; k < out.steps.size(); ++k) {
    CriticalMost& most = out.steps[k].most;
    if (most.ns <= 0) continue;
    const Key key = most_keys[k];
    most.name = intern(key.a, 0, [&] { return ItemName(t, key.a); });
    const Code code{key.c, key.d};
    if (code.python || code.op)
      most.where = intern(code.python ? code.python : code.op, code.python ? 0 : 1, [&] { return Where(t, code); });
  }
  // Names and code as people read them, once per id.
  std::map<uint32_t, std::string> names;
  auto name_of = [&](uint32_t id) -> const std::string& {
    auto [it, added] = names.try_emplace(id);
    if (added) it->second = MakeFrame(FrameSystemName(t.strings.Get(id))).name;
    return it->second;
  };
  for (const auto& [key, ns] : by_cause) {
    const auto& [cause, name, python, op] = key;
    CauseTime& c = out.causes[static_cast<size_t>(cause)];
    c.ns += ns;
    if (name != kNone) c.names[name_of(name)] += ns;
    if (python) {
      c.where[name_of(python)] += ns;
    } else if (op) {
      c.where[std::string(t.strings.Get(op))] += ns;
    }
  }
  out.host_waits = waits.get();
  out.what_ifs = WhatIfsOf(ev, lanes, windows, reader, walker, ex);
  return out;
}

}  // namespace torch2pprof::analysis
