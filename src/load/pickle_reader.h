// Reads a pickle of plain data (what torch.cuda.memory._dump_snapshot writes) without
// executing anything: protocols 2-5, a whitelist of opcodes, shared objects kept shared.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "torch2pprof/stages/trace.h"

namespace torch2pprof {

class ByteSource;

// The values of a pickle as nodes: a memo reference (BINGET) is the node it names, not
// a copy, so a frame repeated on a thousand stacks is one node; equal strings are one
// string, however often they were written out.
class PickleData {
 public:
  // kEntry: a container a PickleSink took while reading; Entry(n) is its number.
  enum class Kind : uint8_t { kNone, kBool, kInt, kFloat, kString, kBytes, kList, kTuple, kDict, kEntry };
  using Node = uint32_t;
  // A node is a value's slot, or holds what it names itself: an entry (its number) or a
  // string (its id), so that a string, however often named again, holds no slot.
  static constexpr Node kEntryBit = Node{1} << 31, kStringBit = Node{1} << 30;
  // An empty list placed in a container while reading with a sink (a segment's frames,
  // an empty ring): one node for all, so that none pins the values read around it.
  static constexpr Node kEmptyList = kEntryBit | (kEntryBit - 2);  // no sink's entry number

  Node root() const { return root_; }
  size_t size() const { return nodes_.size(); }
  // Any number names a value: one past the values (left in a container by a hostile
  // stream after a sink's values were dropped) is None.
  Kind kind(Node n) const {
    return n == kEmptyList  ? Kind::kList
           : n & kEntryBit  ? Kind::kEntry
           : n & kStringBit ? Kind::kString
           : Slot(n)        ? nodes_[n].kind
                            : Kind::kNone;
  }
  uint32_t Entry(Node n) const { return n & ~kEntryBit; }
  // The value of a kBool or kInt node (others: 0); of a kFloat node, Float.
  int64_t Int(Node n) const {
    return Slot(n) && (nodes_[n].kind == Kind::kInt || nodes_[n].kind == Kind::kBool) ? nodes_[n].value : 0;
  }
  double Float(Node n) const;
  // The text of a kString or kBytes node ("" for others).
  std::string_view Str(Node n) const;
  // A kString or kBytes node's string id: equal strings have one id.
  uint32_t StrId(Node n) const {
    return n & kEntryBit ? ~0u : n & kStringBit ? n & ~kStringBit : kind(n) == Kind::kBytes ? nodes_[n].ref : ~0u;
  }
  // The items of a list or tuple; a dict's keys and values, alternating. Empty for others.
  const std::vector<Node>& Items(Node n) const;
  // A dict's value under a string key, or none.
  std::optional<Node> Get(Node dict, std::string_view key) const;

 private:
  friend class PickleReader;
  bool Slot(Node n) const { return !(n & (kEntryBit | kStringBit)) && n < nodes_.size(); }
  struct Item {
    Kind kind;
    uint32_t ref;   // kString, kBytes: string id; containers: index into items_
    int64_t value;  // kBool, kInt; kFloat: the double's bits; containers: memo index + 1, 0 none
  };
  std::vector<Item> nodes_;
  // Containers' items; those from items_used_ on are free, kept for their capacity (a
  // snapshot's millions of small dicts come and go as they are taken).
  std::vector<std::vector<Node>> items_;
  size_t items_used_ = 0;
  StringTable strings_;
  Node root_ = 0;
};

// Takes containers as the reader puts them into others, so that the millions of small
// dicts and lists of a snapshot's rings need not be held as values: a taken container
// becomes an entry (kind kEntry, Entry(n) the number the sink gave it), a memo reference
// to it names the entry, and, where nothing else refers to them, its values' memory is
// reused.
class PickleSink {
 public:
  virtual ~PickleSink() = default;
  // The container's number as an entry (below 2^31 - 2), or none to leave it a value; its
  // items are set (an item may be an entry). May throw Error.
  virtual std::optional<uint32_t> Take(const PickleData& data, PickleData::Node container) = 0;
  // Values from `first` on are gone: their numbers will name other values.
  virtual void Forget(PickleData::Node first) = 0;
};

// Reads the whole pickle from source. Any opcode outside plain data (GLOBAL, REDUCE,
// BUILD, INST, OBJ, ..., and protocols 0 and 1) is an Error naming it and its byte
// offset; so are a truncated or malformed stream and integers beyond 64 bits.
PickleData ReadPickle(ByteSource& source, PickleSink* sink = nullptr);

}  // namespace torch2pprof
