#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <new>

#include "base/huge_pages.h"
#include "torch2pprof/huge_vector.h"

namespace torch2pprof {
namespace {

constexpr size_t kHuge = size_t{2} << 20;
// Below this a buffer comes from malloc: a mapping of its own would cost a system call
// and a 2 MiB page for what fits in a few 4 KiB ones.
constexpr size_t kOwnMapping = size_t{1} << 20;

// Whole 2 MiB pages where the buffer covers them; its tail past the last 2 MiB boundary
// is 4 KiB pages, so a buffer filled to its end is never resident beyond it.
size_t MappedSize(size_t bytes) { return (bytes + kPage - 1) & ~(kPage - 1); }

// How far ahead of the writer pages are faulted in, in its recent writes between two
// Written calls (the load's batches): a cold 2 MiB page takes ~4.5 ms on this VM, the
// time to merge ~20 of gpt2_big's batches. A table written slowly is not faulted in pages
// ahead that it may never reach; the pages ahead are unused memory until TrimHuge.
constexpr size_t kWritesAhead = 32;

}  // namespace

void WriteAhead::Written(size_t i, const void* data, size_t used, size_t capacity) {
  std::lock_guard<std::mutex> lock(mu_);
  Buffer& b = buffers_[i];
  const uintptr_t at = reinterpret_cast<uintptr_t>(data);
  if (at != b.data) b.ready = 0;  // moved: what was faulted in belongs to the old place
  // The recent rate: a burst counts at once and fades over a few writes.
  b.growth = std::max(b.growth - b.growth / 8, used > b.used ? used - b.used : 0);
  b.data = at;
  b.used = used;
  b.capacity = capacity;
}

bool WriteAhead::Step() {
  std::unique_lock<std::mutex> hold(populate_, std::try_to_lock);
  if (!hold.owns_lock() || unsupported_) return false;
  uintptr_t from = 0, to = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (Buffer& b : buffers_) {
      // Only buffers of their own mapping (huge_vector.h), and only what they reserved.
      if (b.capacity < kOwnMapping) continue;
      const size_t start = std::max(b.ready, b.used) & ~(kPage - 1);
      const size_t reach = b.used + kWritesAhead * b.growth;
      const size_t target = std::min((reach + kHuge - 1) & ~(kHuge - 1), b.capacity & ~(kPage - 1));
      if (start >= target) continue;
      const size_t end = std::min(target, (start + kHuge) & ~(kHuge - 1));
      from = b.data + start;
      to = b.data + end;
      b.ready = end;
      break;
    }
  }
  if (from == to) return false;
  if (madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE) != 0 && errno == EINVAL) {
    unsupported_ = true;
  }
  return true;
}

void* AllocateHuge(size_t bytes) {
  if (bytes < kOwnMapping) {
    void* p = std::malloc(bytes == 0 ? 1 : bytes);
    if (!p) throw std::bad_alloc();
    return p;
  }
  // Map 2 MiB more than needed, and unmap what lies before the first 2 MiB boundary and
  // after the buffer: the kernel places mappings at 4 KiB boundaries.
  const size_t size = MappedSize(bytes);
  void* map = mmap(nullptr, size + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED) throw std::bad_alloc();
  const uintptr_t start = reinterpret_cast<uintptr_t>(map);
  const uintptr_t aligned = (start + kHuge - 1) & ~(kHuge - 1);
  if (aligned > start) munmap(map, aligned - start);
  munmap(reinterpret_cast<void*>(aligned + size), start + kHuge - aligned);  // never empty
  void* p = reinterpret_cast<void*>(aligned);
  madvise(p, size, MADV_HUGEPAGE);  // a hint: without THP the buffer is 4 KiB pages
  return p;
}

void FreeHuge(void* p, size_t bytes) {
  if (bytes < kOwnMapping) {
    std::free(p);
    return;
  }
  munmap(p, MappedSize(bytes));
}

}  // namespace torch2pprof
