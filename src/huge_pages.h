// Large buffers that the stages fill once from start to end: HugeVector maps them aligned
// to 2 MiB pages (huge_vector.h); TrimHuge hands back what a complete one never used, and
// ReleaseRead what a buffer read once from its start has left behind.
#pragma once

#include <sys/mman.h>

#include <cstdint>
#include <vector>

#include "torch2pprof/huge_vector.h"

namespace torch2pprof {

inline constexpr uintptr_t kPage = 4096;  // the small page the kernel maps and hands back

// Hands back the 4 KiB pages wholly inside [begin, end): the kernel frees them, and a
// later write there faults in a fresh zeroed page.
inline void HandBack(uintptr_t begin, uintptr_t end) {
  uintptr_t from = (begin + kPage - 1) & ~(kPage - 1);
  uintptr_t to = end & ~(kPage - 1);
  if (to > from) madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
}

// Once v is complete: its capacity past the last 4 KiB page in use is handed back. With
// huge pages the last 2 MiB page is resident in full however little of it is used; the
// kernel splits it, and a table of the trace no longer costs up to 2 MiB more than it
// holds (analyze's peak: 73 -> 67 MB on gpt2_big). The capacity stays; a later write
// there faults in a fresh page.
template <typename T, typename A>
void TrimHuge(std::vector<T, A>& v) {
  HandBack(reinterpret_cast<uintptr_t>(v.data() + v.size()), reinterpret_cast<uintptr_t>(v.data() + v.capacity()));
}

// A buffer read once from start to end: what [begin, end) holds was read and will not be
// again, so its whole pages are handed back while the rest is still being read.
template <typename T>
void ReleaseRead(const T* begin, const T* end) {
  HandBack(reinterpret_cast<uintptr_t>(begin), reinterpret_cast<uintptr_t>(end));
}

}  // namespace torch2pprof
