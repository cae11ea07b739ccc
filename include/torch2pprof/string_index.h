// Interning: an open-addressing index from strings to their ids in a table of views
// (a parse batch's, a trace's StringTable), one probe in one flat array.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace torch2pprof {

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
