// Large buffers that the stages fill once from start to end: backed by 2 MiB pages where
// the kernel allows them (THP "madvise" or "always"), one page fault per 2 MiB, not 512.
// Page faults were a fifth of convert's time on a VM (about 7 us each, 16,000 of them on
// gpt2_big); a buffer's last huge page is resident in full, at most 2 MiB per buffer.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace torch2pprof {

// Advises huge pages for the 2 MiB-aligned part of [data, data + bytes).
inline void HugePages(void* data, size_t bytes) {
  constexpr uintptr_t kHuge = 2 << 20;
  uintptr_t begin = (reinterpret_cast<uintptr_t>(data) + kHuge - 1) & ~(kHuge - 1);
  uintptr_t end = (reinterpret_cast<uintptr_t>(data) + bytes) & ~(kHuge - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

// v.reserve(n), advised huge pages before the elements are copied over (the copy is
// what touches the new pages first).
template <typename T>
void ReserveHuge(std::vector<T>& v, size_t n) {
  if (n <= v.capacity()) return;
  std::vector<T> bigger;
  bigger.reserve(n);
  HugePages(bigger.data(), bigger.capacity() * sizeof(T));
  bigger.insert(bigger.end(), v.begin(), v.end());
  v.swap(bigger);
}

// v.push_back(x) for vectors that grow to megabytes: capacity doubles into huge pages.
template <typename T>
void PushHuge(std::vector<T>& v, const T& x) {
  if (v.size() == v.capacity()) ReserveHuge(v, std::max<size_t>(1024, 2 * v.capacity()));
  v.push_back(x);
}

// Once v is complete: its capacity past the last 4 KiB page in use is handed back. With
// huge pages the last 2 MiB page is resident in full however little of it is used; the
// kernel splits it, and a table of the trace no longer costs up to 2 MiB more than it
// holds (analyze's peak: 73 -> 67 MB on gpt2_big). The capacity stays; a later write
// there faults in a fresh page.
template <typename T>
void TrimHuge(std::vector<T>& v) {
  constexpr uintptr_t kPage = 4096;
  uintptr_t begin = (reinterpret_cast<uintptr_t>(v.data() + v.size()) + kPage - 1) & ~(kPage - 1);
  uintptr_t end = reinterpret_cast<uintptr_t>(v.data() + v.capacity()) & ~(kPage - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

}  // namespace torch2pprof
