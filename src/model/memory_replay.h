// The allocator's history in a memory snapshot, replayed: each device's allocated bytes
// through the recorded window, its peak, and the blocks live at any moment of it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "torch2pprof/stages/snapshot.h"

namespace torch2pprof {

// A block live at a moment of the window, by the way it came to be live.
struct LiveBlock {
  enum Kind : uint8_t {
    kRingAlloc,    // an alloc of the ring not yet freed; entry is the alloc
    kFreedLater,   // allocated before the ring, freed by it later; entry is the free, its stack the free's
    kStillActive,  // allocated before the ring, active at the dump; block and segment say which
  } kind;
  int64_t bytes = 0;
  uint32_t stack = 0;
  int64_t entry = -1;
  const SnapshotSegment* segment = nullptr;
};
// Each device's allocated memory through the recorded window: the level before the
// ring's first entry, then after each entry; its peak and when.
struct DevicePeak {
  int32_t device = 0;
  int64_t dump_bytes = 0;    // bytes asked for by the blocks active at the dump (the ring's unit)
  int64_t before_bytes = 0;  // before the ring's first entry (dump less the ring's net allocation)
  int64_t peak_bytes = 0;
  int64_t peak_entry = -1;  // index of the ring entry after which the peak holds; -1 before the ring
  int64_t peak_time_us = 0;
  int64_t reserved_bytes = 0;  // the segments' total_size at the dump
  // False where the replay goes below zero, above the most ever reserved, or to a peak
  // the blocks live there do not make up: the ring and the segments disagree.
  bool consistent = true;
  std::vector<LiveBlock> live;                   // LiveAfter(peak_entry): the blocks live at the peak
  std::vector<const SnapshotSegment*> segments;  // the device's, in the snapshot's order
};
// By device, in order; a device with no segments and an empty ring is none.
std::vector<DevicePeak> DevicePeaks(const MemorySnapshot& s);

// A block's bytes as asked for (requested_size, at most its size).
int64_t Requested(const SnapshotBlock& b);

// What an entry of the ring does to the allocated bytes (alloc +, free_completed -) and to
// the reserved bytes (segment_alloc and segment_map +, segment_free and segment_unmap -).
int64_t AllocatedChange(const SnapshotEvent& e);
int64_t ReservedChange(const SnapshotEvent& e);

// What the comments and warnings say of a device whose ring and segments disagree.
std::string DisagreeLine(const std::string& device);

// The device's ring (empty where it has none).
const SnapshotRing& Ring(const MemorySnapshot& s, int32_t device);

// The blocks live on the device after ring entry `entry` (-1: before the ring's first),
// replayed from the dump (`segments`: the device's, DevicePeak::segments): their bytes add
// up to the level there where the ring and the segments agree. In the ring's order, then
// the dump's. Its cost is the device's ring and blocks.
std::vector<LiveBlock> LiveAfter(const MemorySnapshot& s, int32_t device,
                                 const std::vector<const SnapshotSegment*>& segments, int64_t entry);

// Whether a frame is the interpreter's or the allocator's own, hidden by default as
// torch.cuda._memory_viz hides it (_frame_filter), and a few more: the interpreter's C
// frames wherever they are (CPython's Objects/, Python/, Include/, Modules/, Parser/ and
// its _Py*/Py* API), the allocator's, ATen's tensor factories, the dispatch wrappers.
bool IsSnapshotPlumbing(std::string_view name, std::string_view filename, int64_t line);
// Whether a frame is Python code: a .py file and a line.
bool IsPythonFrame(std::string_view filename, int64_t line);

// What a snapshot's frames and stacks are called, each fact decided once per string.
// FrameName: as every output names a frame, as a trace's Python frames are named: Python
// frames "function path:line" (the path after site-packages/), an autograd node's apply
// "[backward] Node" (as StackSite), other C++ frames their name as recorded. StackSite: the code a stack's allocation
// is put down to in analyze: its innermost frame of Python code (a .py file and a line; never the interpreter's C
// frames, whose lines are C's); else the autograd node that ran ("[backward] MeanBackward0",
// "[backward] AccumulateGrad": the engine's threads have no Python frame), else the
// operator called ("at::_ops::div_Tensor::call"), else its innermost frame not hidden (C++
// names without their parameters); else "[no stack recorded]". IsPlumbing: as
// IsSnapshotPlumbing. Each fact once per string: frames can share one long name or file name through the pickle's memo,
// and deciding per frame or per stack cost frames x its length (1 MiB file names: gigabytes). A name is held once per
// frame (its name part cut at kFrameNameBytes), a site's text once per frame or name; references stay valid for the
// object's life.
class SnapshotNames {
 public:
  static constexpr size_t kFrameNameBytes = 4096;
  explicit SnapshotNames(const MemorySnapshot& s) : s_(s) {}
  bool IsPlumbing(uint32_t frame);
  const std::string& FrameName(uint32_t frame);
  const std::string& StackSite(uint32_t stack);

 private:
  struct NameFacts {
    bool known = false, plumbing = false, py_api = false, libc = false, op_call = false;
    std::string backward;  // "[backward] Node" for an autograd node's apply, else empty
  };
  struct FileFacts {
    bool known = false, plumbing = false;
  };
  const NameFacts& Name(uint32_t id);
  const FileFacts& File(uint32_t id);
  const std::string& Bare(uint32_t name_id);  // without its parameter list

  const MemorySnapshot& s_;
  std::unordered_map<uint32_t, NameFacts> names_;                 // by string id
  std::unordered_map<uint32_t, FileFacts> files_;                 // by string id
  std::unordered_map<uint32_t, std::string> frame_names_, bare_;  // by frame, by string id
  std::unordered_map<uint32_t, const std::string*> sites_;        // by stack
};

}  // namespace torch2pprof
