#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <new>

#include "huge_pages.h"
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

}  // namespace

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
