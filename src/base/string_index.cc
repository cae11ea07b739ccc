#include "base/string_index.h"

#include <cstring>
#ifdef __SSE4_2__
#include <nmmintrin.h>
#endif

namespace torch2pprof {

uint32_t StringIndex::Hash(std::string_view s) {
  uint64_t h = s.size();
  const char* p = s.data();
  size_t i = 0;
#ifdef __SSE4_2__
  // CRC32C, 8 bytes an instruction (x86-64-v2 has it).
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = _mm_crc32_u64(h, w);
  }
  // The tail as one word read in place (a copy to the stack made the load wait for
  // the copy's stores): the last 8 bytes, overlapping, or the string's few bytes.
  if (i < s.size()) {
    const size_t n = s.size();
    uint64_t w;
    if (n >= 8) {
      std::memcpy(&w, p + n - 8, 8);
    } else if (n >= 4) {
      uint32_t lo, hi;
      std::memcpy(&lo, p, 4);
      std::memcpy(&hi, p + n - 4, 4);
      w = uint64_t{hi} << 32 | lo;
    } else {
      const unsigned char mid = static_cast<unsigned char>(p[n / 2]);  // one_meaning: not a median (a middle byte)
      w = uint64_t{static_cast<unsigned char>(p[0])} | uint64_t{mid} << 8 |
          uint64_t{static_cast<unsigned char>(p[n - 1])} << 16;
    }
    h = _mm_crc32_u64(h, w);
  }
#else
  for (; i < s.size(); ++i) h = (h ^ static_cast<unsigned char>(p[i])) * 0x100000001B3ULL;  // FNV-1a
#endif
  // The slot comes from the low bits: mixed, so that they depend on all of them.
  h *= 0x9E3779B97F4A7C15ULL;
  return static_cast<uint32_t>(h >> 32);
}

uint32_t StringIndex::Find(std::string_view s, uint32_t hash, const std::vector<std::string_view>& views) const {
  if (slots_.empty()) return kNone;
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const Slot& slot = slots_[i];
    if (slot.id == kNone) return kNone;
    if (slot.hash == hash && SameText(views[slot.id], s)) return slot.id;
  }
}

void StringIndex::Insert(uint32_t hash, uint32_t id) {
  if ((size_ + 1) * 4 > slots_.size() * 3) Rehash(slots_.empty() ? 256 : slots_.size() * 2);
  Place(Slot{hash, id});
  ++size_;
}

void StringIndex::Clear() {
  for (Slot& slot : slots_) slot.id = kNone;
  size_ = 0;
}

void StringIndex::Place(Slot s) {
  const size_t mask = slots_.size() - 1;
  size_t i = s.hash & mask;
  while (slots_[i].id != kNone) i = (i + 1) & mask;
  slots_[i] = s;
}

void StringIndex::Rehash(size_t n) {  // a power of 2, for the mask
  std::vector<Slot> old(n);
  old.swap(slots_);
  for (const Slot& s : old) {
    if (s.id != kNone) Place(s);
  }
}

}  // namespace torch2pprof
