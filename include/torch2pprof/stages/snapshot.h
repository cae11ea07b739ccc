// A CUDA memory snapshot as load/snapshot hands it on: the segments and blocks at the
// dump, each device's ring of allocator actions, the stacks, every name interned once.
//
// A stage header: the model replays it, convert and analyze read it. Unlike torch2pprof.h
// and the headers it includes, it carries no stability promise: it changes with the stages.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "torch2pprof/stages/trace.h"

namespace torch2pprof {

// One frame as the snapshot records it; C++ frames have line 0.
struct SnapshotFrame {
  uint32_t name = 0, filename = 0;  // MemorySnapshot::strings
  int64_t line = 0;
};

enum class BlockState : uint8_t { kActiveAllocated, kActivePendingFree, kInactive, kOther };

struct SnapshotBlock {
  int64_t address = 0, size = 0, requested_size = 0;
  BlockState state = BlockState::kOther;
  uint32_t stack = 0;  // MemorySnapshot::stacks; 0 is the empty stack
};

struct SnapshotSegment {
  int32_t device = 0;
  int64_t address = 0, total_size = 0, stream = 0;
  uint32_t segment_type = 0;  // "small", "large"
  uint32_t pool = 0;          // segment_pool_id as text, "" for the default pool
  bool expandable = false;
  uint32_t stack = 0;
  std::vector<SnapshotBlock> blocks;
};

enum class SnapshotAction : uint8_t {
  kAlloc,
  kFreeRequested,
  kFreeCompleted,
  kSegmentAlloc,
  kSegmentFree,
  kSegmentMap,
  kSegmentUnmap,
  kSnapshot,
  kOom,
  kOther
};

// One entry of a device's ring buffer of allocator actions: 32 bytes, as a snapshot
// holds millions of them and little else.
struct SnapshotEvent {
  SnapshotEvent() : size(0), action(SnapshotAction::kOther) {}
  // An oom's addr is the bytes free on the device (device_free, -1 absent): torch
  // writes device_free in the place of an oom's address, which has none.
  int64_t addr = 0;
  int64_t time_us = 0;
  int64_t size : 56;  // at most 2^48 (the reader's rule)
  SnapshotAction action : 8;
  uint32_t stack = 0;
  uint32_t context = 0;  // MemorySnapshot::contexts: the stream and compile_context
};

static_assert(sizeof(SnapshotEvent) == 32, "a ring entry is 32 bytes");

// An oom's bytes free on the device, -1 where absent (and for other actions).
inline int64_t DeviceFree(const SnapshotEvent& e) { return e.action == SnapshotAction::kOom ? e.addr : -1; }

// What a ring entry shares with many others: its stream and torch.compile context.
struct SnapshotContext {
  int64_t stream = 0;
  uint32_t compile_context = 0;  // strings; 0 absent
};

// A device's ring in chunks of at most 4,096 entries, each grown as a vector: millions of
// entries are never copied as the ring grows (a chunk is), a short ring costs its entries,
// and an empty one allocates nothing (a snapshot may list many empty rings).
class SnapshotRing {
 public:
  static constexpr size_t kChunk = 4096;
  SnapshotRing() = default;
  SnapshotRing(std::initializer_list<SnapshotEvent> events) {
    for (const SnapshotEvent& e : events) push_back(e);
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const SnapshotEvent& operator[](size_t i) const { return chunks_[i / kChunk][i % kChunk]; }
  SnapshotEvent& operator[](size_t i) { return chunks_[i / kChunk][i % kChunk]; }
  const SnapshotEvent& front() const { return (*this)[0]; }
  const SnapshotEvent& back() const { return (*this)[size_ - 1]; }
  void push_back(const SnapshotEvent& e) {
    if (chunks_.empty() || chunks_.back().size() == kChunk) chunks_.emplace_back();
    chunks_.back().push_back(e);
    ++size_;
  }
  void clear() {
    chunks_.clear();
    size_ = 0;
  }

  class const_iterator {
   public:
    const_iterator(const SnapshotRing* r, size_t i) : r_(r), i_(i) {}
    const SnapshotEvent& operator*() const { return (*r_)[i_]; }
    const SnapshotEvent* operator->() const { return &(*r_)[i_]; }
    const_iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator==(const const_iterator& o) const { return i_ == o.i_; }
    bool operator!=(const const_iterator& o) const { return i_ != o.i_; }

   private:
    const SnapshotRing* r_;
    size_t i_;
  };
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size_}; }

 private:
  std::vector<std::vector<SnapshotEvent>> chunks_;
  size_t size_ = 0;
};

// A record_function range's start or end (external_annotations).
struct SnapshotAnnotation {
  int32_t device = 0;
  bool start = true;
  uint32_t name = 0;  // strings
  int64_t time_us = 0;
};

struct MemorySnapshot {
  std::string file;
  StringTable strings;
  std::vector<SnapshotFrame> frames;
  std::vector<std::vector<uint32_t>> stacks;  // frame ids, innermost first; [0] is empty
  std::vector<SnapshotSegment> segments;
  std::vector<SnapshotRing> traces;              // by device
  std::vector<SnapshotContext> contexts = {{}};  // [0]: stream 0, no compile context
  std::vector<SnapshotAnnotation> annotations;
  bool overflowed = false;       // allocator_settings' trace_alloc_overflowed
  int64_t max_entries = -1;      // the ring's trace_alloc_max_entries; -1 unknown
  int expandable_segments = -1;  // allocator_settings' expandable_segments: 0, 1; -1 unknown
};

}  // namespace torch2pprof
