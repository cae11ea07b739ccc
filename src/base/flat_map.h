// An open-addressing map from 64-bit keys to 32-bit indexes, for the lookups the
// aggregator makes per piece (a child node, a sample): one probe in one array, no node
// allocated per entry, which std::unordered_map spends most of its time on here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace torch2pprof {

class FlatIndexMap {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;  // never a value: values are indexes

  // The value of key, or, when the key is new, `value` stored under it.
  // Returns the value and whether it was inserted.
  std::pair<uint32_t, bool> Emplace(uint64_t key, uint32_t value) {
    if ((size_ + 1) * 4 > slots_.size() * 3) Grow();
    size_t mask = slots_.size() - 1;
    for (size_t i = Hash(key) & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.value == kNone) {
        s = Slot{key, value};
        ++size_;
        return {value, true};
      }
      if (s.key == key) return {s.value, false};
    }
  }
  uint32_t Find(uint64_t key) const {
    if (slots_.empty()) return kNone;
    size_t mask = slots_.size() - 1;
    for (size_t i = Hash(key) & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.value == kNone || s.key == key) return s.value;
    }
  }
  size_t size() const { return size_; }
  // Room for n keys without growing.
  void Reserve(size_t n) {
    size_t slots = 64;
    while (n * 4 > slots * 3) slots *= 2;
    if (slots > slots_.size()) Rehash(slots);
  }

 private:
  struct Slot {
    uint64_t key = 0;
    uint32_t value = kNone;
  };
  static size_t Hash(uint64_t key) {
    key ^= key >> 29;
    key *= 0x9E3779B97F4A7C15ULL;
    return static_cast<size_t>(key ^ (key >> 32));
  }
  void Grow() { Rehash(slots_.empty() ? 64 : slots_.size() * 2); }
  void Rehash(size_t n) {  // n: a power of 2, for the mask
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.resize(n);
    size_t mask = n - 1;
    for (const Slot& s : old) {
      if (s.value == kNone) continue;
      size_t i = Hash(s.key) & mask;
      while (slots_[i].value != kNone) i = (i + 1) & mask;
      slots_[i] = s;
    }
  }
  std::vector<Slot> slots_;
  size_t size_ = 0;
};

}  // namespace torch2pprof
