// Sums of nanoseconds (or any int64) by a 128-bit key, for summing many stretches into few
// keys (a step's critical path: thousands of stretches, far fewer events): one probe in
// one array, no node allocated per key; read out once, in key order.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <tuple>
#include <utility>
#include <vector>

namespace torch2pprof {

struct SumKey {
  uint64_t hi = 0, lo = 0;
  bool operator==(const SumKey& o) const { return hi == o.hi && lo == o.lo; }
  bool operator<(const SumKey& o) const { return std::tie(hi, lo) < std::tie(o.hi, o.lo); }
};

class SumTable {
 public:
  void Add(const SumKey& k, int64_t v) {
    if ((size_ + 1) * 2 > slots_.size()) Grow();
    Slot& s = Find(k);
    if (!s.used) s.used = true, s.key = k, ++size_;
    s.sum += v;
  }
  size_t size() const { return size_; }
  // Each key once with its sum, in key order.
  std::vector<std::pair<SumKey, int64_t>> Sorted() const {
    std::vector<std::pair<SumKey, int64_t>> out;
    out.reserve(size_);
    for (const Slot& s : slots_) {
      if (s.used) out.push_back({s.key, s.sum});
    }
    std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    return out;
  }

 private:
  struct Slot {
    SumKey key;
    int64_t sum = 0;
    bool used = false;
  };
  // splitmix64's finalizer over both halves: every bit of the key reaches the index.
  static uint64_t Mix(uint64_t x) {
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
  }
  Slot& Find(const SumKey& k) {
    const size_t mask = slots_.size() - 1;
    size_t i = static_cast<size_t>(Mix(Mix(k.hi) ^ k.lo)) & mask;
    while (slots_[i].used && !(slots_[i].key == k)) i = (i + 1) & mask;
    return slots_[i];
  }
  void Grow() {
    std::vector<Slot> old(std::max<size_t>(16, slots_.size() * 2));
    old.swap(slots_);
    for (const Slot& s : old) {
      if (s.used) Find(s.key) = s;
    }
  }
  std::vector<Slot> slots_;
  size_t size_ = 0;
};

}  // namespace torch2pprof
