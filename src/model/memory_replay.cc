#include "model/memory_replay.h"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "base/utf8.h"
#include "model/frame_names.h"

namespace torch2pprof {

namespace {

// IsSnapshotPlumbing's tests of the name alone and of the file name alone.
bool PlumbingName(std::string_view name) {
  // torch/cuda/_memory_viz.py's _frame_filter: the same parts of names and file names.
  static constexpr std::string_view kFunctions[] = {"unwind::unwind",    "CapturedTraceback::gather",
                                                    "gather_with_cpp",   "_start",
                                                    "__libc_start_main", "PyEval_",
                                                    "PyObject_",         "PyFunction_"};
  for (std::string_view f : kFunctions) {
    if (name.find(f) != std::string_view::npos) return true;
  }
  // More than _memory_viz hides (docs/reference.md): the caching allocator's own frames
  // and ATen's tensor factories below the operator, so that a stack ends at the operator
  // that asked for memory.
  if (name.find("CachingAllocator::") != std::string_view::npos) return true;
  if (name.find("at::detail::empty") != std::string_view::npos) return true;  // the tensor factories
  return name.find("at::detail::_empty") != std::string_view::npos;
}

bool PlumbingFile(std::string_view filename) {
  static constexpr std::string_view kFiles[] = {"core/boxing",
                                                "/Register",
                                                "/Redispatch",
                                                "pythonrun.c",
                                                "Modules/main.c",
                                                "Objects/call.c",
                                                "Objects/methodobject.c",
                                                "pycore_ceval.h",
                                                "ceval.c",
                                                "cpython/abstract.h"};
  for (std::string_view f : kFiles) {
    if (filename.find(f) != std::string_view::npos) return true;
  }
  // The interpreter's C frames: CPython's sources (recorded with their lines when the
  // unwinder has its debug information); the generated dispatch wrappers where the file
  // name has no directory ("RegisterCUDA_0.cpp").
  static constexpr std::string_view kCPython[] = {"Objects/", "Python/", "Include/", "Modules/", "Parser/"};
  const bool c_source = filename.size() > 2 &&
                        (filename.substr(filename.size() - 2) == ".c" || filename.substr(filename.size() - 2) == ".h");
  if (c_source) {
    for (std::string_view dir : kCPython) {
      const size_t at = filename.find(dir);
      if (at != std::string_view::npos && (at == 0 || filename[at - 1] == '/')) return true;
    }
  }
  return filename.rfind("Register", 0) == 0 || filename.rfind("Redispatch", 0) == 0;
}

// The interpreter's C API by name (without a file): _Py*, Py_*, PyX*.
bool PyApi(std::string_view name) {
  return name.rfind("_Py", 0) == 0 ||
         (name.size() > 2 && name.rfind("Py", 0) == 0 && (name[2] == '_' || (name[2] >= 'A' && name[2] <= 'Z')));
}

}  // namespace

bool IsSnapshotPlumbing(std::string_view name, std::string_view filename, int64_t line) {
  // Among C++ frames, the rest of the interpreter's C API (PyMethod_New,
  // _PyObject_MakeTpCall, Py_RunMain) and the C library's start, which _memory_viz leaves
  // between Python frames.
  return PlumbingName(name) || PlumbingFile(filename) || (PyApi(name) && !IsPythonFrame(filename, line)) ||
         (line == 0 && name.rfind("__libc_", 0) == 0);
}

bool IsPythonFrame(std::string_view filename, int64_t line) {
  return line > 0 && filename.size() > 3 && filename.substr(filename.size() - 3) == ".py";
}

int64_t Requested(const SnapshotBlock& b) { return std::clamp<int64_t>(b.requested_size, 0, b.size); }

std::vector<DevicePeak> DevicePeaks(const MemorySnapshot& s) {
  std::map<int32_t, DevicePeak> by;
  for (const SnapshotSegment& seg : s.segments) {
    DevicePeak& p = by[seg.device];
    p.device = seg.device;
    p.segments.push_back(&seg);
    p.reserved_bytes += seg.total_size;
    for (const SnapshotBlock& b : seg.blocks) {
      // The ring records the bytes asked for, not the block's rounded size: the level is
      // replayed in the ring's unit (the rounding shows in dump_space).
      if (b.state == BlockState::kActiveAllocated || b.state == BlockState::kActivePendingFree) {
        p.dump_bytes += Requested(b);
      }
    }
  }
  // A device with no segments and an empty ring is no device of the snapshot's.
  for (size_t d = 0; d < s.traces.size(); ++d) {
    if (!s.traces[d].empty()) by[static_cast<int32_t>(d)].device = static_cast<int32_t>(d);
  }
  std::vector<DevicePeak> out;
  for (auto& [device, p] : by) {
    const SnapshotRing* ring =
        device >= 0 && static_cast<size_t>(device) < s.traces.size() ? &s.traces[static_cast<size_t>(device)] : nullptr;
    // Allocated: alloc adds, free_completed takes away (free_requested is no free yet).
    // Reserved: segment_alloc and segment_map add, segment_free and segment_unmap take away.
    auto allocated = AllocatedChange;
    auto reserved = ReservedChange;
    int64_t net = 0, net_reserved = 0;
    if (ring) {
      for (const SnapshotEvent& e : *ring) net += allocated(e), net_reserved += reserved(e);
    }
    p.before_bytes = p.dump_bytes - net;
    p.peak_bytes = p.before_bytes;
    int64_t level = p.before_bytes, reserve = p.reserved_bytes - net_reserved;
    // The replays must agree: never less than nothing allocated, and a peak no higher
    // than the most ever reserved. (Moment by moment they need not: the ring logs a
    // block's alloc and its segment's in either order around a retry.)
    int64_t most_reserved = reserve;
    p.consistent = level >= 0;
    if (ring) {
      for (size_t i = 0; i < ring->size(); ++i) {
        const SnapshotEvent& e = (*ring)[i];
        level += allocated(e), reserve += reserved(e);
        most_reserved = std::max(most_reserved, reserve);
        if (level < 0) p.consistent = false;
        if (level > p.peak_bytes) {
          p.peak_bytes = level;
          p.peak_entry = static_cast<int64_t>(i);
          p.peak_time_us = e.time_us;
        }
      }
    }
    if (p.peak_bytes > most_reserved) p.consistent = false;
    // And the blocks live at the peak must make up its level.
    p.live = LiveAfter(s, device, p.segments, p.peak_entry);
    int64_t live = 0;
    for (const LiveBlock& b : p.live) live += b.bytes;
    if (live != p.peak_bytes) p.consistent = false;
    out.push_back(std::move(p));
  }
  return out;
}

int64_t AllocatedChange(const SnapshotEvent& e) {
  // free_requested is no free yet: the block waits for its stream.
  return e.action == SnapshotAction::kAlloc ? e.size : e.action == SnapshotAction::kFreeCompleted ? -e.size : 0;
}

int64_t ReservedChange(const SnapshotEvent& e) {
  const SnapshotAction a = e.action;
  return a == SnapshotAction::kSegmentAlloc || a == SnapshotAction::kSegmentMap    ? e.size
         : a == SnapshotAction::kSegmentFree || a == SnapshotAction::kSegmentUnmap ? -e.size
                                                                                   : 0;
}

std::string DisagreeLine(const std::string& device) {
  return device +
         ": the ring and the segments disagree: replayed back from the dump, the ring frees more than was "
         "allocated, allocates more than was reserved, or leaves bytes no block explains (a synthetic or edited "
         "snapshot?); the peak is the replay's";
}

const SnapshotRing& Ring(const MemorySnapshot& s, int32_t device) {
  static const SnapshotRing kNone;
  return device >= 0 && static_cast<size_t>(device) < s.traces.size() ? s.traces[static_cast<size_t>(device)] : kNone;
}

std::vector<LiveBlock> LiveAfter(const MemorySnapshot& s, int32_t device,
                                 const std::vector<const SnapshotSegment*>& segments, int64_t entry) {
  // Live: the ring's allocs not freed by then; the blocks allocated before the ring and
  // freed after the moment (the ring frees an address it never allocated); the blocks
  // active at the dump whose address the ring never allocates.
  const SnapshotRing& ring = Ring(s, device);
  std::unordered_map<int64_t, size_t> open;  // by address: the ring's alloc not yet freed
  std::unordered_set<int64_t> touched;       // addresses the ring allocates
  std::vector<LiveBlock> out;
  for (size_t i = 0; i < ring.size(); ++i) {
    const SnapshotEvent& e = ring[i];
    const bool by_then = static_cast<int64_t>(i) <= entry;
    if (e.action == SnapshotAction::kAlloc) {
      touched.insert(e.addr);
      if (by_then) open[e.addr] = i;
    } else if (e.action == SnapshotAction::kFreeCompleted) {
      if (by_then) {
        open.erase(e.addr);
      } else if (!touched.count(e.addr)) {
        out.push_back(LiveBlock{LiveBlock::kFreedLater, e.size, e.stack, static_cast<int64_t>(i), nullptr});
      }
    }
  }
  std::vector<size_t> allocs;
  for (const auto& [addr, i] : open) allocs.push_back(i);
  std::sort(allocs.begin(), allocs.end());
  for (size_t i : allocs) {
    out.push_back(LiveBlock{LiveBlock::kRingAlloc, ring[i].size, ring[i].stack, static_cast<int64_t>(i), nullptr});
  }
  for (const SnapshotSegment* seg : segments) {
    for (const SnapshotBlock& blk : seg->blocks) {
      if (blk.state != BlockState::kActiveAllocated && blk.state != BlockState::kActivePendingFree) continue;
      if (touched.count(blk.address)) continue;
      out.push_back(LiveBlock{LiveBlock::kStillActive, Requested(blk), blk.stack, -1, seg});
    }
  }
  return out;
}

const SnapshotNames::NameFacts& SnapshotNames::Name(uint32_t id) {
  NameFacts& f = names_[id];
  if (f.known) return f;
  f.known = true;
  const std::string_view n = s_.strings.Get(id);
  f.plumbing = PlumbingName(n);
  f.py_api = PyApi(n);
  f.libc = n.rfind("__libc_", 0) == 0;
  static constexpr std::string_view kAutograd = "torch::autograd::", kApply = "::apply", kOp = "at::_ops::";
  f.op_call = n.rfind(kOp, 0) == 0 && n.find("::call(") != std::string_view::npos;
  if (n.rfind(kAutograd, 0) == 0) {
    const std::string_view node = WithoutParameters(n);
    if (node.size() > kApply.size() && node.substr(node.size() - kApply.size()) == kApply) {
      const std::string_view cls = node.substr(0, node.size() - kApply.size());
      f.backward = "[backward] " + std::string(cls.substr(cls.rfind("::") + 2));
    }
  }
  return f;
}

const SnapshotNames::FileFacts& SnapshotNames::File(uint32_t id) {
  FileFacts& f = files_[id];
  if (!f.known) f.known = true, f.plumbing = PlumbingFile(s_.strings.Get(id));
  return f;
}

const std::string& SnapshotNames::Bare(uint32_t name_id) {
  auto [it, added] = bare_.try_emplace(name_id);
  if (added) it->second = std::string(WithoutParameters(s_.strings.Get(name_id)));
  return it->second;
}

bool SnapshotNames::IsPlumbing(uint32_t frame) {
  const SnapshotFrame& f = s_.frames[frame];
  const NameFacts& n = Name(f.name);
  return n.plumbing || File(f.filename).plumbing || (n.py_api && !IsPythonFrame(s_.strings.Get(f.filename), f.line)) ||
         (f.line == 0 && n.libc);
}

const std::string& SnapshotNames::FrameName(uint32_t frame) {
  auto [it, added] = frame_names_.try_emplace(frame);
  if (!added) return it->second;
  const SnapshotFrame& f = s_.frames[frame];
  // An autograd node's apply is named as analyze's sites name it, so that a profile's
  // frames and the report's sites agree and pprof's -show='^\[' keeps the gradients.
  const std::string& backward = Name(f.name).backward;
  if (!backward.empty()) return it->second = backward;
  it->second = CutText(s_.strings.Get(f.name), kFrameNameBytes);
  if (f.line > 0) it->second += " " + std::string(ShortPath(s_.strings.Get(f.filename))) + ":" + std::to_string(f.line);
  return it->second;
}

const std::string& SnapshotNames::StackSite(uint32_t stack) {
  const std::string*& site = sites_[stack];
  if (site) return *site;
  static const std::string kNoStack = "[no stack recorded]";
  const std::vector<uint32_t>& frames = s_.stacks[stack];  // innermost first
  for (uint32_t f : frames) {
    if (IsPythonFrame(s_.strings.Get(s_.frames[f].filename), s_.frames[f].line)) return *(site = &FrameName(f));
  }
  // No Python frame (the autograd engine's threads, C++ callers): the backward node that
  // ran (a torch::autograd node's apply: generated::MmBackward0, AccumulateGrad), else the
  // operator called, else the innermost frame shown; a C++ name without its parameter list.
  for (uint32_t f : frames) {
    const NameFacts& n = Name(s_.frames[f].name);
    if (!n.backward.empty()) return *(site = &n.backward);
  }
  for (uint32_t f : frames) {
    if (Name(s_.frames[f].name).op_call) return *(site = &Bare(s_.frames[f].name));
  }
  for (uint32_t f : frames) {
    if (!IsPlumbing(f)) return *(site = &Bare(s_.frames[f].name));
  }
  return *(site = &kNoStack);
}

}  // namespace torch2pprof
