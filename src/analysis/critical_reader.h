// What the critical path's readers ask of the host lanes: per piece, its code, whether it
// lies in a DataLoader or a collective, and the cause a finding may claim. Made once
// per trace, then read from any thread (the walks, the what-ifs).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/events.h"
#include "analysis/stages.h"
#include "model/critical_path.h"
#include "model/frame_names.h"

namespace torch2pprof::analysis {

inline constexpr uint32_t kNoId = UINT32_MAX;

// Where the code of a host piece is: its innermost Python frame, else its innermost
// operator (name ids; 0 for none).
struct Code {
  uint32_t python = 0, op = 0;
};

class Reader {
 public:
  // What the walks ask of the lanes they visit (CriticalPathWalker::Host) is made
  // here, up front: the walks then read it from any thread.
  Reader(const Events& ev, const std::vector<LaneStacks>& lanes, const CriticalPathWalker& walker,
         const StepWindows& windows)
      : ev_(ev), lanes_(lanes) {
    const Trace& t = ev.trace();
    for (const LaneRole& l : ev.model().lanes) has_device_ |= l.device;
    one_rank_ = ReadDistributedInfo(t.header).world_size == 1;
    stacks_of_.assign(t.lanes.size(), -1);
    for (size_t i = 0; i < lanes.size(); ++i) stacks_of_[lanes[i].lane] = static_cast<int32_t>(i);
    // Each runtime call's first piece: where the code that launched device work is.
    piece_of_.assign(t.intervals.size(), kNoId);
    for (const uint32_t e : ev.RuntimeEvents()) {
      if (e < t.intervals.size()) piece_of_[e] = 0;  // marked: looked for below
    }
    for (const LaneStacks& ls : lanes) {
      for (uint32_t p = 0; p < ls.pieces.size(); ++p) {
        const Piece& pc = ls.pieces[p];
        if (pc.first && piece_of_[pc.interval] == 0) piece_of_[pc.interval] = p + 1;
      }
    }
    for (uint32_t& p : piece_of_) p = p == kNoId || p == 0 ? kNoId : p - 1;
    for (const Launch& l : ev.model().launches) {
      if (l.host_event != Launch::kNoEvent) launched_.push_back({l.host_event, l.device_event});
    }
    std::sort(launched_.begin(), launched_.end());
    info_.resize(t.lanes.size());
    // The lanes the walks visit, and every thread of a process that runs steps (the
    // what-ifs follow a wait to the thread it waits for).
    std::vector<int32_t> stepping;
    for (const StepWindow& w : windows.steps) stepping.push_back(w.process);
    std::sort(stepping.begin(), stepping.end());
    for (const LaneStacks& ls : lanes) {
      const int32_t process = ev.model().lanes[ls.lane].process;
      if (walker.Host(ls.lane) ||
          (!ev.model().lanes[ls.lane].device && std::binary_search(stepping.begin(), stepping.end(), process))) {
        Prepare(ls);
      }
    }
    // Which kernels are FP32 matmuls off the Tensor Cores, once per kernel and launching
    // operator: the one rule the path's kTensorCores and the what-ifs both read.
    fp32_.assign(t.intervals.size(), false);
    std::map<std::pair<uint32_t, uint32_t>, bool> asked;
    for (const uint32_t e : ev.DeviceEvents()) {
      if (e >= t.intervals.size() || ev.RoleOf(e) != Role::kKernel) continue;
      const uint32_t op = LaunchCode(e).op;
      auto [it, added] = asked.try_emplace({ev.Iv(e).name, op}, false);
      if (added) it->second = IsFp32MatmulKernel(ev.Name(e), op ? t.strings.Get(op) : std::string_view());
      fp32_[e] = it->second;
    }
  }

  // A kernel that is a matmul or convolution in FP32, off the Tensor Cores.
  bool IsFp32Matmul(uint32_t d) const { return d < fp32_.size() && fp32_[d]; }

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
    std::vector<bool> optimizer;      // in an optimizer's step (Optimizer.step#...)
    std::vector<bool> copies;         // an operator that called a pageable copy (its syncs are the copy's)
    std::vector<bool> compiling;      // in torch.compile compiling a frame: one-time work
    std::vector<bool> fsdp;           // FSDP's own work where the world has one rank (none elsewhere)
    bool runs_backward = false;       // it runs autograd nodes: a run_backward on another thread waits for it
  };
  const PieceInfo& Info(const LaneStacks& ls) const { return info_[ls.lane]; }
  bool Prepared(uint32_t lane) const { return !info_[lane].code.empty(); }
  // What a name says, decided once per name as the lanes are prepared: a blocking wait
  // (time.sleep among them), a synchronization.
  static constexpr uint8_t kWaitName = 1, kSleepName = 2, kSyncName = 4, kCompileName = 8;
  uint8_t KindOf(uint32_t name) const { return name < kind_.size() && kind_[name] > 0 ? kind_[name] - 1 : 0; }
  // Event e is a blocking wait for another thread (TraceModel::Waits).
  bool Waits(uint32_t e) const { return ev_.model().Waits(ev_.Iv(e), (KindOf(ev_.Iv(e).name) & kWaitName) != 0); }

  void Prepare(const LaneStacks& ls) {
    PieceInfo& info = info_[ls.lane];
    if (kind_.empty()) kind_.assign(ev_.trace().strings.size(), 0);
    for (const Piece& pc : ls.pieces) {
      uint8_t& k = kind_[ev_.Iv(pc.interval).name];
      if (k) continue;
      const std::string_view n = ev_.trace().strings.Get(ev_.Iv(pc.interval).name);
      const bool wait = IsBlockingWaitEvent(n);
      k = static_cast<uint8_t>(1 + (wait ? kWaitName : 0) + (wait && n == kSleepFrame ? kSleepName : 0) +
                               (IsSyncCall(n) ? kSyncName : 0) + (IsCompiling(n) ? kCompileName : 0));
    }
    for (const Piece& pc : ls.pieces) info.runs_backward |= ev_.model().Has(ev_.Iv(pc.interval), kBackwardNodeName);
    info.code.resize(ls.pieces.size());
    info.data_loader.resize(ls.pieces.size());
    info.communication.resize(ls.pieces.size());
    info.optimizer.resize(ls.pieces.size());
    info.copies.resize(ls.pieces.size());
    info.compiling.resize(ls.pieces.size());
    info.fsdp.resize(ls.pieces.size());
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
      info.optimizer[p] = (ev_.IsHostOp(e) && ev_.Name(e).substr(0, 15) == "Optimizer.step#") ||
                          (parent >= 0 && info.optimizer[static_cast<size_t>(parent)]);
      info.compiling[p] =
          (KindOf(ev_.Iv(e).name) & kCompileName) || (parent >= 0 && info.compiling[static_cast<size_t>(parent)]);
      // FSDP's hooks (FSDP::pre_forward, post_backward_reduce, …), its own operators
      // (fsdp::all_gather_copy_in, fsdp::chunk_cat) and its Python, with the DTensor
      // dispatch its sharded parameters go through (with_stack; the hooks run from
      // nn.Module's call, never around the model's forward): with one rank they shard
      // nothing.
      const std::string_view n = ev_.Name(e);
      info.fsdp[p] = one_rank_ && ((n.substr(0, 6) == "FSDP::" || n.substr(0, 6) == "fsdp::") ||
                                   (python && (n.find("/distributed/fsdp/") != std::string_view::npos ||
                                               n.find("/distributed/tensor/") != std::string_view::npos)) ||
                                   (parent >= 0 && info.fsdp[static_cast<size_t>(parent)]));
      if (parent >= 0 && ev_.RoleOf(e) == Role::kRuntime && IsPageableCopyCall(e))
        info.copies[static_cast<size_t>(parent)] = true;
    }
  }

  // torch.compile compiling a frame: Dynamo's timed phases (`entire_frame_compile`, and
  // every "… (dynamo_timed)" record_function), written with or without with_stack.
  static bool IsCompiling(std::string_view n) {
    constexpr std::string_view kTimed = " (dynamo_timed)";
    return n == "entire_frame_compile" || (n.size() > kTimed.size() && n.substr(n.size() - kTimed.size()) == kTimed);
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
    return p == kNoId || !ls || Info(*ls).code.empty() ? Code{} : CodeOf(*ls, static_cast<int32_t>(p));
  }

  // What the host was doing in a piece (-1: no event): the cause a finding may claim.
  Cause HostCause(const LaneStacks* ls, int32_t piece) const {
    if (!ls || piece < 0) return kPythonOverhead;
    if (Info(*ls).compiling[static_cast<size_t>(piece)]) return kInit;
    if (Info(*ls).fsdp[static_cast<size_t>(piece)]) return kFsdp;
    if (Info(*ls).data_loader[static_cast<size_t>(piece)]) return kDataLoaderWait;
    if (Info(*ls).communication[static_cast<size_t>(piece)]) return kCommunication;
    const uint32_t e = ls->pieces[static_cast<size_t>(piece)].interval;
    const Role r = ev_.RoleOf(e);
    const uint8_t kind = KindOf(ev_.Iv(e).name);
    if (r == Role::kPythonFunction && Waits(e)) return (kind & kSleepName) ? kSleep : kThreadWait;
    if (r == Role::kRuntime) {
      if (kind & kSyncName) return CopyOwnSync(*ls, piece) ? kPageableCopy : kSyncWait;
      if (IsPageableCopyCall(e)) return kPageableCopy;
      if (ev_.Dur(e) >= kInitCallNs) return kInit;
    }
    if (Info(*ls).optimizer[static_cast<size_t>(piece)]) return kOptimizer;
    if (r == Role::kRuntime) return kLaunchOverhead;
    // A step's or an annotation's own time is code that ran no operator.
    if (r == Role::kPythonFunction || ev_.IsStep(e) || r == Role::kUserAnnotation) return kPythonOverhead;
    if (IsHostCompute(*ls, piece)) return kHostCompute;
    return kHostOps;
  }

  // Without a device an operator's own time is its work; only a short one is mostly
  // dispatch (kHostComputeNs). The cause and the what-ifs' fewer_host_ops both ask this.
  bool IsHostCompute(const LaneStacks& ls, int32_t piece) const {
    return !has_device_ && ls.pieces[static_cast<size_t>(piece)].self_ns >= kHostComputeNs;
  }

  // A synchronization inside the operator that copied through pageable memory (aten::copy_
  // of a non-pinned tensor): the copy's own wait, not the program's.
  bool CopyOwnSync(const LaneStacks& ls, int32_t piece) const {
    const int32_t parent = ls.pieces[static_cast<size_t>(piece)].parent;
    return parent >= 0 && Info(ls).copies[static_cast<size_t>(parent)];
  }

  // The device work runtime call `call` launched (event numbers).
  std::vector<uint32_t> LaunchedBy(uint32_t call) const {
    std::vector<uint32_t> out;
    auto it = std::lower_bound(launched_.begin(), launched_.end(), std::make_pair(call, uint32_t{0}));
    for (; it != launched_.end() && it->first == call; ++it) out.push_back(it->second);
    return out;
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
  bool has_device_ = false;
  bool one_rank_ =
      false;  // distributedInfo says world_size 1  // device work in the trace: operators' host time is their dispatch
  const std::vector<LaneStacks>& lanes_;
  std::vector<int32_t> stacks_of_;
  std::vector<uint32_t> piece_of_;
  std::vector<std::pair<uint32_t, uint32_t>> launched_;
  mutable std::vector<int8_t> has_file_;  // by name id: -1 not yet known
  std::vector<PieceInfo> info_;           // by lane: those the walks visit
  std::vector<bool> fp32_;                // by event: IsFp32Matmul
  std::vector<uint8_t> kind_;             // by name id: 1 + KindOf's bits, 0 not yet known
};

}  // namespace torch2pprof::analysis
