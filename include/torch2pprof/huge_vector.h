// The allocator of the trace's large tables: a buffer of 1 MiB or more is mapped on its
// own, aligned to 2 MiB and advised huge pages, so that every 2 MiB of it is one page fault.
#pragma once

#include <cstddef>
#include <vector>

namespace torch2pprof {

// Buffers from malloc start 16 bytes into a mapping at no particular alignment: the part
// before the first 2 MiB boundary (1 MiB on average, per table) faulted in 4 KiB pages,
// about 2,500 faults of a convert on gpt2_big, each ~10 us on a VM.
void* AllocateHuge(size_t bytes);
void FreeHuge(void* p, size_t bytes);

template <typename T>
struct HugeAllocator {
  using value_type = T;
  HugeAllocator() = default;
  template <typename U>
  HugeAllocator(const HugeAllocator<U>&) {}  // NOLINT: rebinding is implicit
  T* allocate(size_t n) { return static_cast<T*>(AllocateHuge(n * sizeof(T))); }
  void deallocate(T* p, size_t n) { FreeHuge(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const HugeAllocator<U>&) const {
    return true;
  }
  template <typename U>
  bool operator!=(const HugeAllocator<U>&) const {
    return false;
  }
};

template <typename T>
using HugeVector = std::vector<T, HugeAllocator<T>>;

}  // namespace torch2pprof
