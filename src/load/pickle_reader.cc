#include "load/pickle_reader.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "load/byte_source.h"
#include "torch2pprof/error.h"

namespace torch2pprof {

double PickleData::Float(Node n) const {
  if (kind(n) != Kind::kFloat) return 0;
  double d;
  std::memcpy(&d, &nodes_[n].value, sizeof d);
  return d;
}

std::string_view PickleData::Str(Node n) const {
  if (kind(n) == Kind::kString) return strings_.Get(n & ~kStringBit);
  if (!Slot(n)) return {};
  const Item& i = nodes_[n];
  return i.kind == Kind::kString || i.kind == Kind::kBytes ? strings_.Get(i.ref) : std::string_view();
}

const std::vector<PickleData::Node>& PickleData::Items(Node n) const {
  static const std::vector<Node> kNone;
  if (!Slot(n)) return kNone;
  const Item& i = nodes_[n];
  return i.kind == Kind::kList || i.kind == Kind::kTuple || i.kind == Kind::kDict ? items_[i.ref] : kNone;
}

std::optional<PickleData::Node> PickleData::Get(Node dict, std::string_view key) const {
  if (kind(dict) != Kind::kDict) return std::nullopt;
  const std::vector<Node>& kv = items_[nodes_[dict].ref];
  for (size_t i = 0; i + 1 < kv.size(); i += 2) {
    if (kind(kv[i]) == Kind::kString && Str(kv[i]) == key) return kv[i + 1];
  }
  return std::nullopt;
}

class PickleReader {
 public:
  PickleReader(ByteSource& source, PickleSink* sink) : source_(source), buf_(1 << 20), sink_(sink) {}

  // Over 100 lines: one switch over the pickle's opcodes, a case each; an opcode with no
  // case is refused (the whitelist is the switch).
  PickleData Read() {
    for (;;) {
      op_offset_ = offset_;
      const uint8_t op = Byte();
      switch (op) {
        case 0x80:  // PROTO
          if (Byte() < 2) Fail("a pickle of protocol 0 or 1; memory snapshots are written with protocol 2 or later");
          break;
        case 0x95:  // FRAME: a length hint only
          Bytes(8);
          break;
        case '.':  // STOP
          if (stack_.size() != 1 || !marks_.empty()) Fail("STOP with " + std::to_string(stack_.size()) + " values");
          d_.root_ = stack_.back();
          d_.items_.resize(d_.items_used_);
          return std::move(d_);
        case '(':  // MARK
          if (marks_.size() >= kMaxMarks) {
            Fail("more than " + std::to_string(kMaxMarks) +
                 " MARKs open at once: deeper than any pickle Python writes (its containers nest "
                 "within its recursion limit)");
          }
          marks_.push_back(stack_.size());
          break;
        case '}':  // EMPTY_DICT
          Push(Container(PickleData::Kind::kDict));
          break;
        case ']':  // EMPTY_LIST
          Push(Container(PickleData::Kind::kList));
          break;
        case ')':  // EMPTY_TUPLE
          Push(Container(PickleData::Kind::kTuple));
          break;
        case 't': {  // TUPLE: the items since the mark
          const size_t from = PopMark();
          Tuple(from);
          break;
        }
        case 0x85:  // TUPLE1
        case 0x86:  // TUPLE2
        case 0x87:  // TUPLE3
          Need(op - 0x84u);
          Tuple(stack_.size() - (op - 0x84u));
          break;
        case 'a': {  // APPEND
          Need(2);
          Append(stack_.size() - 1);
          break;
        }
        case 'e': {  // APPENDS
          const size_t from = PopMark();
          if (from == 0) Fail("APPENDS without a list");
          Append(from);
          break;
        }
        case 's': {  // SETITEM
          Need(3);
          const Node v = Pop(), k = Pop();
          std::vector<Node>& items = Items(Top(), PickleData::Kind::kDict);
          Named(k), Named(v);
          items.push_back(k), items.push_back(Offer(v));
          break;
        }
        case 'u': {  // SETITEMS
          const size_t from = PopMark();
          if (from == 0 || (stack_.size() - from) % 2) Fail("SETITEMS without a dict or with an odd count");
          std::vector<Node>& items = Items(stack_[from - 1], PickleData::Kind::kDict);
          Reserve(items, stack_.size() - from);
          for (size_t i = from; i < stack_.size(); i += 2) {
            Named(stack_[i]), Named(stack_[i + 1]);
            items.push_back(stack_[i]), items.push_back(Offer(stack_[i + 1]));
          }
          stack_.resize(from);
          break;
        }
        case 'J': {  // BININT: 4 bytes, signed
          int32_t v;
          std::memcpy(&v, Bytes(4), 4);
          Push(Value(PickleData::Kind::kInt, v));
          break;
        }
        case 'K':  // BININT1
          Push(Value(PickleData::Kind::kInt, Byte()));
          break;
        case 'M': {  // BININT2
          const uint8_t* b = Bytes(2);
          Push(Value(PickleData::Kind::kInt, b[0] | b[1] << 8));
          break;
        }
        case 0x8a:  // LONG1
          Push(Long(Byte()));
          break;
        case 0x8b: {  // LONG4
          uint32_t n;
          std::memcpy(&n, Bytes(4), 4);
          Push(Long(n));
          break;
        }
        case 'G': {  // BINFLOAT: big-endian double
          const uint8_t* b = Bytes(8);
          uint64_t bits = 0;
          for (int i = 0; i < 8; ++i) bits = bits << 8 | b[i];
          Push(Value(PickleData::Kind::kFloat, static_cast<int64_t>(bits)));
          break;
        }
        case 0x88:  // NEWTRUE
        case 0x89:  // NEWFALSE
          Push(Value(PickleData::Kind::kBool, op == 0x88));
          break;
        case 'N':  // NONE
          Push(Value(PickleData::Kind::kNone, 0));
          break;
        case 0x8c:  // SHORT_BINUNICODE
          Push(Text(PickleData::Kind::kString, Byte()));
          break;
        case 'X': {  // BINUNICODE
          uint32_t n;
          std::memcpy(&n, Bytes(4), 4);
          Push(Text(PickleData::Kind::kString, n));
          break;
        }
        case 0x8d:    // BINUNICODE8
        case 0x8e: {  // BINBYTES8
          uint64_t n;
          std::memcpy(&n, Bytes(8), 8);
          Push(Text(op == 0x8d ? PickleData::Kind::kString : PickleData::Kind::kBytes, n));
          break;
        }
        case 'C':  // SHORT_BINBYTES
          Push(Text(PickleData::Kind::kBytes, Byte()));
          break;
        case 'B': {  // BINBYTES
          uint32_t n;
          std::memcpy(&n, Bytes(4), 4);
          Push(Text(PickleData::Kind::kBytes, n));
          break;
        }
        case 'q':  // BINPUT
          Put(Byte());
          break;
        case 'r': {  // LONG_BINPUT
          uint32_t i;
          std::memcpy(&i, Bytes(4), 4);
          Put(i);
          break;
        }
        case 0x94:  // MEMOIZE: the next memo index
          Put(static_cast<uint32_t>(memo_.size()));
          break;
        case 'h':  // BINGET
          Get(Byte());
          break;
        case 'j': {  // LONG_BINGET
          uint32_t i;
          std::memcpy(&i, Bytes(4), 4);
          Get(i);
          break;
        }
        case '0':  // POP
          if (!marks_.empty() && marks_.back() == stack_.size()) {
            marks_.pop_back();
          } else {
            Need(1);
            Discard(Pop());
          }
          break;
        case '1': {  // POP_MARK
          const size_t from = PopMark();
          while (stack_.size() > from) Discard(Pop());
          break;
        }
        case '2':  // DUP
          Need(1);
          Push(Top());
          break;
        default:
          Fail(Forbidden(op));
      }
    }
  }

 private:
  using Node = PickleData::Node;

  [[noreturn]] void Fail(const std::string& what) const {
    ThrowInput(source_.name(), static_cast<int64_t>(op_offset_), "not a memory snapshot: " + what);
  }

  // What an opcode outside the whitelist is, for its error line.
  static std::string Forbidden(uint8_t op) {
    struct Named {
      uint8_t op;
      const char* name;
    };
    static constexpr Named kCode[] = {{'c', "GLOBAL"},     {0x93, "STACK_GLOBAL"}, {'R', "REDUCE"},
                                      {'b', "BUILD"},      {'i', "INST"},          {'o', "OBJ"},
                                      {0x81, "NEWOBJ"},    {0x92, "NEWOBJ_EX"},    {'P', "PERSID"},
                                      {'Q', "BINPERSID"},  {0x82, "EXT1"},         {0x83, "EXT2"},
                                      {0x84, "EXT4"},      {0x97, "NEXT_BUFFER"},  {0x98, "READONLY_BUFFER"},
                                      {0x8f, "EMPTY_SET"}, {0x90, "ADDITEMS"},     {0x91, "FROZENSET"}};
    for (const Named& n : kCode) {
      if (n.op == op) {
        return std::string("opcode ") + n.name +
               " builds objects or reads outside the stream; a snapshot holds "
               "plain data only, and nothing in a file is executed";
      }
    }
    static constexpr char kHex[] = "0123456789abcdef";
    std::string hex = "0x";
    hex += kHex[op >> 4], hex += kHex[op & 15];
    return "opcode " + hex + " is not one of protocol 2-5's plain-data opcodes";
  }

  uint8_t Byte() { return *Bytes(1); }

  // n contiguous bytes of the stream (n <= the buffer's size).
  const uint8_t* Bytes(size_t n) {
    if (end_ - pos_ < n) Refill(n);
    const uint8_t* p = buf_.data() + pos_;
    pos_ += n, offset_ += n;
    return p;
  }

  void Refill(size_t n) {
    std::memmove(buf_.data(), buf_.data() + pos_, end_ - pos_);
    end_ -= pos_, pos_ = 0;
    while (end_ < n) {
      const size_t got = source_.Read(reinterpret_cast<char*>(buf_.data()) + end_, buf_.size() - end_);
      if (got == 0) Fail("the stream ends inside a value (a truncated file)");
      end_ += got;
    }
    // torch's snapshots inflate 9 to 20 times: one that inflates far more is made to take
    // the machine (a megabyte of gzip that would be gigabytes of one string or of MARKs).
    const uint64_t inflated = offset_ + end_ - pos_;
    if (source_.InflatesPastCap(inflated)) {
      ThrowInput(source_.name(), static_cast<int64_t>(offset_),
                 "not read: a gzipped snapshot that inflates more than " + std::to_string(kMaxInflation) +
                     " times its size past 64 MiB (" + std::to_string(source_.stored_offset()) + " bytes to " +
                     std::to_string(inflated) +
                     " so far; torch's inflate about 20 times): gunzip it to read it as it is");
    }
  }

  Node Add(PickleData::Item item) {
    if (d_.nodes_.size() >= PickleData::kStringBit) Fail("more than 2^30 values held at once");
    // Values held at once grow with the pickle's bytes, never faster: each costs 16 bytes.
    if (d_.nodes_.size() >= kHeldFloor + offset_ / 4) {
      Fail("more than " + std::to_string(d_.nodes_.size()) +
           " values held at once: more than a quarter of the bytes read (past 2^22), which a snapshot never holds");
    }
    ++made_;
    d_.nodes_.push_back(item);
    return static_cast<Node>(d_.nodes_.size() - 1);
  }
  Node Value(PickleData::Kind kind, int64_t v) { return Add({kind, 0, v}); }
  Node Container(PickleData::Kind kind) {
    if (d_.items_used_ < d_.items_.size()) {
      d_.items_[d_.items_used_].clear();
    } else {
      d_.items_.emplace_back();
    }
    return Add({kind, static_cast<uint32_t>(d_.items_used_++), 0});
  }

  // A string or bytes of n bytes, read in pieces as they arrive (a length the file does
  // not hold fails at its end, not in an allocation).
  Node Text(PickleData::Kind kind, uint64_t n) {
    if (n > kMaxString) {
      Fail("a string of " + std::to_string(n) + " bytes: longer than " + std::to_string(kMaxString) +
           ", and a snapshot's strings are names, file names and contexts");
    }
    if (n <= buf_.size()) {  // in the buffer whole: interned from there
      const uint8_t* p = Bytes(static_cast<size_t>(n));
      return Interned(kind, d_.strings_.Intern(std::string_view(reinterpret_cast<const char*>(p), n)));
    }
    std::string s;
    while (s.size() < n) {
      const size_t piece = static_cast<size_t>(std::min<uint64_t>(n - s.size(), buf_.size()));
      const uint8_t* p = Bytes(piece);
      s.append(reinterpret_cast<const char*>(p), piece);
    }
    return Interned(kind, d_.strings_.Intern(s));
  }
  // A string is its id (no slot); bytes, rare in a snapshot, take a slot.
  Node Interned(PickleData::Kind kind, uint32_t id) {
    if (kind == PickleData::Kind::kBytes) return Add({kind, id, 0});
    if (id >= PickleData::kStringBit) Fail("more than 2^30 distinct strings");
    ++made_;
    return PickleData::kStringBit | id;
  }

  // LONG1/LONG4: n bytes of two's complement, little-endian; beyond 64 bits is refused.
  Node Long(uint64_t n) {
    if (n > 8) {
      // Sign extension bytes beyond the 8th may only repeat the sign.
      if (n > 64) Fail("an integer beyond 64 bits");
    }
    const uint8_t* b = Bytes(static_cast<size_t>(n));
    uint64_t v = 0;
    for (size_t i = 0; i < n && i < 8; ++i) v |= uint64_t{b[i]} << (8 * i);
    const bool negative = n > 0 && (b[n - 1] & 0x80);
    if (n < 8 && negative) v |= ~uint64_t{0} << (8 * n);
    for (size_t i = 8; i < n; ++i) {
      if (b[i] != (negative ? 0xff : 0x00)) Fail("an integer beyond 64 bits");
    }
    if (n >= 8 && ((v >> 63) != 0) != negative) Fail("an integer beyond 64 bits");
    return Value(PickleData::Kind::kInt, static_cast<int64_t>(v));
  }

  // A value popped and never to be named again: where it is the last one made (a stream
  // of values pushed and popped), its slot goes.
  void Discard(Node n) {
    if (n & kImmediate || n + 1 != d_.nodes_.size()) return;
    if ((last_named_ != kNoNode && n <= last_named_) || (!stack_.empty() && stack_.back() == n)) return;
    const PickleData::Kind k = d_.nodes_[n].kind;
    if (k == PickleData::Kind::kList || k == PickleData::Kind::kTuple || k == PickleData::Kind::kDict) {
      if (d_.nodes_[n].ref + 1 != d_.items_used_) return;
      --d_.items_used_;
    }
    d_.nodes_.pop_back();
  }

  void Push(Node n) {
    if (stack_.size() >= kMaxStack) {
      Fail("more than " + std::to_string(kMaxStack) +
           " values on the stack at once: Python's pickler appends and sets items in batches of 1,000");
    }
    stack_.push_back(n);
  }
  Node Pop() {
    const Node n = stack_.back();
    stack_.pop_back();
    return n;
  }
  Node Top() const { return stack_.back(); }
  // At least n values above the innermost mark.
  void Need(size_t n) const {
    const size_t floor = marks_.empty() ? 0 : marks_.back();
    if (stack_.size() < floor + n) Fail("an opcode without its operands");
  }
  size_t PopMark() {
    if (marks_.empty()) Fail("an opcode that needs a MARK without one");
    const size_t from = marks_.back();
    marks_.pop_back();
    return from;
  }
  void Tuple(size_t from) {
    for (size_t i = from; i < stack_.size(); ++i) Named(stack_[i]);
    const Node t = Container(PickleData::Kind::kTuple);
    d_.items_[d_.nodes_[t].ref].assign(stack_.begin() + static_cast<ptrdiff_t>(from), stack_.end());
    stack_.resize(from);
    Push(t);
  }
  std::vector<Node>& Items(Node n, PickleData::Kind want) {
    if (d_.kind(n) != want) Fail(want == PickleData::Kind::kList ? "APPEND to no list" : "SETITEM on no dict");
    if (n == PickleData::kEmptyList) Fail("APPEND to an empty list already placed in another");
    return d_.items_[d_.nodes_[n].ref];
  }
  // The memo by index: a pickler numbers what it stores from 0 (MEMOIZE) and never past
  // the objects written, so an index beyond the values read so far is refused, and the
  // table stays as small as the data.
  void Put(uint32_t index) {
    Need(1);
    if (index > made_) Fail("a memo index beyond the values read");
    if (index >= memo_.size()) {
      // Grown by half, not doubled: a pickler memoizes every container and string, so the
      // memo is as long as the pickle has objects.
      if (index >= memo_.capacity()) memo_.reserve(std::max<size_t>(index + 1, memo_.capacity() / 2 * 3 + 1024));
      memo_.resize(static_cast<size_t>(index) + 1, kNoNode);
    }
    memo_[index] = Top();
    Named(Top());
    if (sink_ && !(Top() & kImmediate)) {
      puts_.push_back({index, Top()});
      const PickleData::Kind k = d_.kind(Top());
      if (k == PickleData::Kind::kList || k == PickleData::Kind::kDict) d_.nodes_[Top()].value = int64_t{index} + 1;
    }
  }
  void Get(uint32_t index) {
    if (index >= memo_.size() || memo_[index] == kNoNode) Fail("a memo reference to nothing stored");
    Push(memo_[index]);
  }

  // A container as it goes into another: the sink may take it (then the parent holds the
  // sink's entry in its place). Strings and numbers stay values.
  Node Offer(Node v) {
    if (!sink_ || v & kImmediate) return v;
    const PickleData::Kind k = d_.kind(v);
    if (k != PickleData::Kind::kDict && k != PickleData::Kind::kList) return v;
    if (k == PickleData::Kind::kList && d_.items_[d_.nodes_[v].ref].empty()) {
      const int64_t memo = d_.nodes_[v].value;
      if (memo > 0 && memo_[static_cast<size_t>(memo - 1)] == v)
        memo_[static_cast<size_t>(memo - 1)] = PickleData::kEmptyList;
      return PickleData::kEmptyList;
    }
    const std::optional<uint32_t> entry = sink_->Take(d_, v);
    if (!entry) return v;
    if (*entry >= PickleData::kEntryBit - 2) Fail("more than 2^31 - 2 entries");
    // From now on the memo names the entry (a frame shared by many stacks, a stack by an
    // alloc and its free), so the value can go as soon as nothing else holds it.
    const int64_t memo = d_.nodes_[v].value;
    if (memo > 0 && memo_[static_cast<size_t>(memo - 1)] == v)
      memo_[static_cast<size_t>(memo - 1)] = PickleData::kEntryBit | *entry;
    return PickleData::kEntryBit | *entry;
  }

  // Room for n more items at once, growing as push_back would.
  static void Reserve(std::vector<Node>& items, size_t n) {
    if (items.capacity() - items.size() < n) items.reserve(std::max(items.size() + n, 2 * items.capacity()));
  }

  // The values stack_[from...] appended to the list below them, each offered to the sink.
  // Where it took them all, the values made since the first (its numbers, strings and
  // containers that nothing remembers) are dropped and their numbers reused.
  void Append(size_t from) {
    std::vector<Node>& items = Items(stack_[from - 1], PickleData::Kind::kList);
    Reserve(items, stack_.size() - from);
    bool all = sink_ != nullptr;
    Node first = kNoNode;
    for (size_t i = from; i < stack_.size(); ++i) {
      const Node v = stack_[i], item = Offer(v);
      Named(v);
      items.push_back(item);
      if (!(item & PickleData::kEntryBit)) {
        all = false;
      } else if (!(v & kImmediate)) {
        first = std::min(first, v);
      }
    }
    stack_.resize(from);
    if (all && first != kNoNode) Reclaim(first);
  }

  void Reclaim(Node first) {
    // What the memo holds from `first` on: a value not taken that later ones may name is
    // kept (the cut is after it), as are the stack's values; the taken ones it names by
    // their entries (Offer).
    Node keep = first;
    size_t p = puts_.size();
    kept_.clear();
    while (p > 0 && puts_[p - 1].node >= first) {
      --p;
      const MemoStore& put = puts_[p];
      if (memo_[put.index] != put.node) continue;  // taken, or stored over since
      keep = std::max(keep, put.node + 1);
      kept_.push_back(put);
    }
    puts_.resize(p);
    puts_.insert(puts_.end(), kept_.rbegin(), kept_.rend());
    for (Node n : stack_) {
      if (!(n & kImmediate)) keep = std::max(keep, n + 1);  // the stack's values stay
    }
    if (keep >= d_.nodes_.size()) return;
    size_t items_cut = d_.items_used_;
    for (size_t n = keep; n < d_.nodes_.size(); ++n) {
      const PickleData::Kind k = d_.nodes_[n].kind;
      if (k == PickleData::Kind::kList || k == PickleData::Kind::kTuple || k == PickleData::Kind::kDict) {
        items_cut = std::min<size_t>(items_cut, d_.nodes_[n].ref);
      }
    }
    d_.nodes_.resize(keep);
    d_.items_used_ = items_cut;
    sink_->Forget(keep);
  }

  static constexpr size_t kMaxMarks = 65536;
  static constexpr uint64_t kHeldFloor = uint64_t{1} << 22;
  static constexpr size_t kMaxStack = size_t{1} << 24;
  static constexpr uint64_t kMaxString = uint64_t{64} << 20;
  static constexpr uint64_t kMaxInflation = ByteSource::kMaxInflation;
  ByteSource& source_;
  std::vector<uint8_t> buf_;
  size_t pos_ = 0, end_ = 0;
  uint64_t offset_ = 0, op_offset_ = 0;
  std::vector<Node> stack_;
  std::vector<size_t> marks_;
  static constexpr Node kNoNode = ~Node{0};
  static constexpr Node kImmediate = PickleData::kEntryBit | PickleData::kStringBit;  // nodes that hold no slot
  std::vector<Node> memo_;
  // The highest value the memo or a container ever named (kNoNode: none): no value at or
  // below it is discarded (a DUP's copy is the only other way to hold one: on the stack).
  Node last_named_ = kNoNode;
  void Named(Node n) {
    if (!(n & kImmediate) && (last_named_ == kNoNode || n > last_named_)) last_named_ = n;
  }
  PickleSink* sink_;
  uint64_t made_ = 0;  // values made, those dropped included: what the memo's indices may reach
  struct MemoStore {
    uint32_t index;
    Node node;
  };
  std::vector<MemoStore> puts_;  // with a sink: the memo's stores of values not yet dropped, in order
  std::vector<MemoStore> kept_;  // Reclaim's: the stores it keeps
  PickleData d_;
};

PickleData ReadPickle(ByteSource& source, PickleSink* sink) { return PickleReader(source, sink).Read(); }

}  // namespace torch2pprof
