// Large buffers that the stages fill once from start to end: HugeVector maps them aligned
// to 2 MiB pages (huge_vector.h); TrimHuge hands back what a complete one never used, and
// ReleaseRead what a buffer read once from its start has left behind.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <mutex>
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

// Faults in, on a thread that would otherwise wait, the pages just past where one writer
// fills its buffers in order. The load's merge is that writer: on a VM a page the host has
// not yet backed costs it 2.0-2.3 ms/MB, while the workers that wait for its turn sit idle
// (README: Performance). A hint only: without MADV_POPULATE_WRITE (Linux < 5.14) it does
// nothing, and nothing is written to the pages either way.
class WriteAhead {
 public:
  explicit WriteAhead(size_t buffers) : buffers_(buffers) {}

  // The writer's side, between writes: where buffer i is, how much of it is written, and
  // how much is reserved. A buffer may move only under Moving()'s hold.
  void Written(size_t i, const void* data, size_t used, size_t capacity);
  std::unique_lock<std::mutex> Moving() { return std::unique_lock<std::mutex>(populate_); }

  // A waiting thread's side: faults in the next 2 MiB page within reach ahead of the
  // writer. False when there is none, or another thread is at it.
  bool Step();

 private:
  struct Buffer {
    uintptr_t data = 0;
    size_t used = 0, capacity = 0;
    size_t ready = 0;   // faulted in (or written) up to here
    size_t growth = 0;  // bytes per Written call, recently
  };
  std::mutex mu_;        // the buffers' places
  std::mutex populate_;  // held while pages are faulted in: a buffer does not move meanwhile
  std::vector<Buffer> buffers_;
  bool unsupported_ = false;  // under populate_
};

}  // namespace torch2pprof
