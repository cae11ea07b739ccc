// The critical path of each analysed step (model/critical_path.h) read for analyze: per
// step its categories and the events holding most of it, and over the steps each
// nanosecond put down to the one cause a finding may claim (Recommend).
#include <algorithm>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

#include "analysis/stages.h"
#include "base/executor.h"
#include "base/sum_table.h"
#include "base/utf8.h"
#include "model/critical_path.h"
#include "model/frame_names.h"

namespace torch2pprof::analysis {
namespace {

constexpr uint32_t kNone = UINT32_MAX;

// Where the code of a host piece is: its innermost Python frame, else its innermost
// operator (name ids; 0 for none).
struct Code {
  uint32_t python = 0, op = 0;
};

class Reader {
 public:
  // What the walks ask of the lanes they visit (CriticalPathWalker::Host) is made
  // here, up front: the walks then read it from any thread.
  Reader(const Events& ev, const std::vector<LaneStacks>& lanes, const CriticalPathWalker& walker)
      : ev_(ev), lanes_(lanes) {
    const Trace& t = ev.trace();
    stacks_of_.assign(t.lanes.size(), -1);
    for (size_t i = 0; i < lanes.size(); ++i) stacks_of_[lanes[i].lane] = static_cast<int32_t>(i);
    // Each runtime call's first piece: where the code that launched device work is.
    piece_of_.assign(t.intervals.size(), kNone);
    for (const uint32_t e : ev.RuntimeEvents()) {
      if (e < t.intervals.size()) piece_of_[e] = 0;  // marked: looked for below
    }
    for (const LaneStacks& ls : lanes) {
      for (uint32_t p = 0; p < ls.pieces.size(); ++p) {
        const Piece& pc = ls.pieces[p];
        if (pc.first && piece_of_[pc.interval] == 0) piece_of_[pc.interval] = p + 1;
      }
    }
    for (uint32_t& p : piece_of_) p = p == kNone || p == 0 ? kNone : p - 1;
    for (const Launch& l : ev.model().launches) {
      if (l.host_event != Launch::kNoEvent) launched_.push_back({l.host_event, l.device_event});
    }
    std::sort(launched_.begin(), launched_.end());
    info_.resize(t.lanes.size());
    for (const LaneStacks& ls : lanes) {
      if (walker.Host(ls.lane)) Prepare(ls);
    }
  }

  const LaneStacks* StacksOf(uint32_t lane) const {
    return stacks_of_[lane] >= 0 ? &lanes_[static_cast<size_t>(stacks_of_[lane])] : nullptr;
  }

  // The innermost Python frame of the program's own code (a file and a line: built-in
  // calls have none), and the innermost operator inside it.
  Code CodeOf(const LaneStacks& ls, int32_t piece) const { return Info(ls).code[static_cast<size_t>(piece)]; }

  // Per piece of a lane, found once down its stacks: its code, and whether it lies in a
  // DataLoader's next().
  struct PieceInfo {
    std::vector<Code> code;
    std::vector<bool> data_loader;
    std::vector<bool> communication;  // in a collective run on the host (gloo's)
  };
  const PieceInfo& Info(const LaneStacks& ls) const { return info_[ls.lane]; }
  void Prepare(const LaneStacks& ls) {
    PieceInfo& info = info_[ls.lane];
    info.code.resize(ls.pieces.size());
    info.data_loader.resize(ls.pieces.size());
    info.communication.resize(ls.pieces.size());
    for (size_t p = 0; p < ls.pieces.size(); ++p) {
      const int32_t parent = ls.pieces[p].parent;
      const Code up = parent >= 0 ? info.code[static_cast<size_t>(parent)] : Code{};
      const uint32_t e = ls.pieces[p].interval;
      const bool python = ev_.RoleOf(e) == Role::kPythonFunction && HasFile(ev_.Iv(e).name);
      Code& c = info.code[p];
      c.python = python ? ev_.Iv(e).name : up.python;
      c.op = ev_.IsOperatorRow(e) ? ev_.Iv(e).name : python ? 0 : up.op;
      info.data_loader[p] = ev_.IsDataLoader(e) || (parent >= 0 && info.data_loader[static_cast<size_t>(parent)]);
      info.communication[p] =
          ev_.IsCommunication(e) || (parent >= 0 && info.communication[static_cast<size_t>(parent)]);
    }
  }

  bool HasFile(uint32_t name) const {
    if (has_file_.empty()) has_file_.assign(ev_.trace().strings.size(), -1);
    int8_t& f = has_file_[name];
    if (f < 0) f = MakeFrame(FrameSystemName(ev_.trace().strings.Get(name))).filename.empty() ? 0 : 1;
    return f == 1;
  }

  // The code that launched device event d: that of its runtime call.
  Code LaunchCode(uint32_t d) const {
    const Launch* l = ev_.model().LaunchOf(d);
    if (!l || l->host_event == Launch::kNoEvent || l->host_event >= piece_of_.size()) return {};
    const uint32_t p = piece_of_[l->host_event];
    const LaneStacks* ls = StacksOf(ev_.Iv(l->host_event).lane);
    return p == kNone || !ls || Info(*ls).code.empty() ? Code{} : CodeOf(*ls, static_cast<int32_t>(p));
  }

  // What the host was doing in a piece (-1: no event): the cause a finding may claim.
  Cause HostCause(const LaneStacks* ls, int32_t piece) const {
    if (!ls || piece < 0) return kPythonOverhead;
    if (Info(*ls).data_loader[static_cast<size_t>(piece)]) return kDataLoaderWait;
    if (Info(*ls).communication[static_cast<size_t>(piece)]) return kCommunication;
    const uint32_t e = ls->pieces[static_cast<size_t>(piece)].interval;
    const Role r = ev_.RoleOf(e);
    if (r == Role::kRuntime) {
      if (IsSyncCall(ev_.Name(e))) return kSyncWait;
      if (IsPageableCopyCall(e)) return kPageableCopy;
      return kLaunchOverhead;
    }
    // A step's or an annotation's own time is code that ran no operator.
    if (r == Role::kPythonFunction || ev_.IsStep(e) || r == Role::kUserAnnotation) return kPythonOverhead;
    return kHostOps;
  }

  bool IsPageableCopyCall(uint32_t call) const {
    auto it = std::lower_bound(launched_.begin(), launched_.end(), std::make_pair(call, uint32_t{0}));
    for (; it != launched_.end() && it->first == call; ++it) {
      if (IsPageableCopy(it->second)) return true;
    }
    return false;
  }

  bool IsPageableCopy(uint32_t d) const {
    return ev_.RoleOf(d) == Role::kMemcpy && ev_.Name(d).find("Pageable") != std::string_view::npos;
  }

 private:
  const Events& ev_;
  const std::vector<LaneStacks>& lanes_;
  std::vector<int32_t> stacks_of_;
  std::vector<uint32_t> piece_of_;
  std::vector<std::pair<uint32_t, uint32_t>> launched_;
  mutable std::vector<int8_t> has_file_;  // by name id: -1 not yet known
  std::vector<PieceInfo> info_;           // by lane: those the walks visit
};

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

}  // namespace

CriticalResult Critical(const Events& ev, const std::vector<LaneStacks>& lanes, const StepWindows& windows,
                        Executor& ex) {
  const Trace& t = ev.trace();
  const TraceModel& m = ev.model();
  CriticalResult out;
  const CriticalPathWalker walker(t, m, lanes, windows);
  const Reader reader(ev, lanes, walker);
  // The host's side of the streams' waits reads what the walks read: it runs beside them.
  auto waits = Beside(ex, [&] { return HostWaits(ev, windows, walker, reader); });
  // Each step walked and read on the threads; what it adds to the totals (sums, so in any
  // order) goes in under a lock once the step is read.
  out.steps.resize(windows.steps.size());
  SumTable all_table, cause_table;
  std::mutex totals;
  std::vector<Key> most_keys(windows.steps.size(), Key{0, 0, 0, 0});
  walker.WalkAll(ex, [&](size_t k, const StepCriticalPath& path) {
    CriticalStep& step = out.steps[k];
    step.step = windows.steps[k].name;
    step.length_ns = path.length_ns;
    std::copy(std::begin(path.by_bound), std::end(path.by_bound), std::begin(step.bound_ns));
    // After the host waited for the device in a synchronization, the device idles until
    // the host launches again: that host time (launching, not loading data) is what the
    // wait serialised, counted apart for Recommend.
    bool after_sync = false;
    std::array<int64_t, kCauses> after{};
    int64_t device_ns = 0;
    std::vector<CriticalResult::Kernel> kernels;
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
        if (cause == kSyncWait) {
          after_sync = true;
        } else if (after_sync && (cause == kPythonOverhead || cause == kLaunchOverhead || cause == kHostOps)) {
          after[static_cast<size_t>(cause)] += ns;
        }
      } else {
        after_sync = false;
        if (s.bound == Bound::kGpuCompute || s.bound == Bound::kGpuCommunication) device_ns += ns;
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
        } else {
          // Kernels: which run off the Tensor Cores is known once the operators are (Recommend).
          const Launch* l = m.LaunchOf(s.event);
          if (ev.RoleOf(s.event) == Role::kKernel && l && l->host_event != Launch::kNoEvent) {
            kernels.push_back({l->host_event, ev.Iv(s.event).name, code.python, code.op, ns});
          }
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
    out.kernels.insert(out.kernels.end(), kernels.begin(), kernels.end());
    out.total_ns += step.length_ns;
    out.device_ns += device_ns;
    for (size_t c = 0; c < kCauses; ++c) out.after_sync[c] += after[c];
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
  return out;
}

}  // namespace torch2pprof::analysis
