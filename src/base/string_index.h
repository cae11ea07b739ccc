// Interning: an open-addressing index from strings to their ids in a table of views
// (a parse batch's, a trace's StringTable), one probe in one flat array.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace torch2pprof {

// Whether two texts are equal. Interning compares mostly short ones (a phase, a
// category, a pid, a tid, each against the event before's): word loads in place, where
// a call to memcmp cost 3% of a one-thread convert. Long ones still go to memcmp.
inline bool SameText(std::string_view a, std::string_view b) {
  const size_t n = a.size();
  if (n != b.size()) return false;
  const char *p = a.data(), *q = b.data();
  auto same = [&](size_t at, auto word) {  // sizeof(word) bytes at `at`, within both
    decltype(word) x, y;
    std::memcpy(&x, p + at, sizeof x);
    std::memcpy(&y, q + at, sizeof y);
    return x == y;
  };
  if (n > 32) return std::memcmp(p, q, n) == 0;
  if (n >= 8) {  // 8-byte words, the last one overlapping
    for (size_t i = 0; i + 8 < n; i += 8) {
      if (!same(i, uint64_t{})) return false;
    }
    return same(n - 8, uint64_t{});
  }
  if (n >= 4) return same(0, uint32_t{}) && same(n - 4, uint32_t{});
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != q[i]) return false;
  }
  return true;
}

// The index holds (hash, id) pairs; the strings stay in their table, which Find reads
// to confirm a match. std::unordered_map<std::string_view, uint32_t> spent a node per
// string, and murmur over the bytes of every event's name: 9% of a convert's samples.
class StringIndex {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  static uint32_t Hash(std::string_view s);
  // The id whose string (views[id]) is s, or kNone.
  uint32_t Find(std::string_view s, uint32_t hash, const std::vector<std::string_view>& views) const;
  // Adds the id of a string not yet in the index.
  void Insert(uint32_t hash, uint32_t id);
  // Empty, keeping the slots' memory.
  void Clear();

 private:
  struct Slot {
    uint32_t hash;
    uint32_t id = kNone;
  };
  void Place(Slot s);
  void Rehash(size_t n);
  std::vector<Slot> slots_;
  size_t size_ = 0;
};

}  // namespace torch2pprof
