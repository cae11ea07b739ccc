#include "load/snapshot.h"

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "load/byte_source.h"
#include "torch2pprof/error.h"

namespace torch2pprof {

namespace {

using Kind = PickleData::Kind;
using Node = PickleData::Node;

// Reads the snapshot out of the pickle's values; as a sink, takes the ring's entries while
// the pickle is read (most of a snapshot), so that their values need not be held.
class SnapshotBuilder : public PickleSink {
 public:
  // max_items: how many segments, blocks and ring entries the snapshot may hold once
  // shared references are expanded; 0: kItemFloor and a quarter of the pickle's bytes read
  // so far from `source` (no cap without one).
  SnapshotBuilder(const std::string& file, const ByteSource* source, uint64_t max_items)
      : source_(source), max_items_(max_items) {
    s_.file = file;
    s_.stacks.emplace_back();  // 0: no stack
  }

  // What the reader offers as it goes: a ring entry (a dict with the key "action"), a
  // frame (a dict with "filename"), a stack (a list of frames taken), a segment (a dict
  // with "blocks" or "total_size") and a block (a dict with "state") are taken, so that the
  // pickle's values for them are dropped as soon as read; the rest stays values.
  std::optional<uint32_t> Take(const PickleData& data, Node v) override {
    d_ = &data;
    const std::vector<Node>& items = data.Items(v);
    if (data.kind(v) == Kind::kDict) {
      Field what = kOtherField;
      for (size_t i = 0; i < items.size(); i += 2) {
        const Field f = FieldOf(items[i]);
        if (f == kAction || f == kFilename) {
          what = f;
          break;
        }
        if (f == kBlocks || f == kTotalSize) what = kBlocks;
        if (f == kState && what == kOtherField) what = kState;
      }
      if (what == kAction) {
        if (entries_.size() > kIndexMask) Fail("device_traces", "within 2^28 entries");
        Count("device_traces[][]");
        entries_.push_back(Event(v));
        return static_cast<uint32_t>(entries_.size() - 1);
      }
      if (what == kFilename) return kFrameTag | Frame(v, "trace entry");
      if (what == kBlocks) {
        if (taken_segments_.size() > kIndexMask) Fail("segments", "within 2^28 segments");
        taken_segments_.push_back(Segment(v));
        return kSegmentTag | static_cast<uint32_t>(taken_segments_.size() - 1);
      }
      if (what == kState) {
        if (taken_blocks_.size() > kIndexMask) Fail("segment.blocks", "within 2^28 blocks");
        taken_blocks_.push_back(Block(v));
        return kBlockTag | static_cast<uint32_t>(taken_blocks_.size() - 1);
      }
      return std::nullopt;
    }
    if (items.empty()) return std::nullopt;
    // A list of blocks taken: a segment's blocks, held as their numbers.
    if (Tagged(items[0], kBlockTag)) {
      for (Node b : items) {
        if (!Tagged(b, kBlockTag)) return std::nullopt;
      }
      if (block_lists_.size() > kIndexMask) Fail("segment.blocks", "within 2^28 lists");
      std::vector<uint32_t>& list = block_lists_.emplace_back();
      list.reserve(items.size());
      for (Node b : items) list.push_back(d_->Entry(b) & kIndexMask);
      return kBlockListTag | static_cast<uint32_t>(block_lists_.size() - 1);
    }
    // A list of frames taken: a stack. (The usual list: thousands a second.)
    ids_.clear();
    for (Node f : items) {
      if ((f & kTagBits) != (PickleData::kEntryBit | kFrameTag) || f == PickleData::kEmptyList) return std::nullopt;
      ids_.push_back(f & kIndexMask);
    }
    return kStackTag | StackOf(v);
  }

  void Forget(Node first) override {
    if (stack_of_node_.size() > first) stack_of_node_.resize(first);
    if (frame_of_node_.size() > first) frame_of_node_.resize(first);
  }

  MemorySnapshot Build(const PickleData& data) {
    d_ = &data;
    const Node root = d_->root();
    if (d_->kind(root) != Kind::kDict) Fail("", "a dict");
    const std::optional<Node> segments = d_->Get(root, "segments");
    if (!segments || d_->kind(*segments) != Kind::kList) Fail("segments", "a list");
    // A taken segment moves to its place where first named; named again, it is copied.
    std::vector<uint32_t> placed(taken_segments_.size(), UINT32_MAX);
    for (Node seg : d_->Items(*segments)) {
      if (!Tagged(seg, kSegmentTag)) {
        s_.segments.push_back(Segment(seg));
        continue;
      }
      const uint32_t k = d_->Entry(seg) & kIndexMask;
      if (placed[k] == UINT32_MAX) {
        placed[k] = static_cast<uint32_t>(s_.segments.size());
        s_.segments.push_back(std::move(taken_segments_[k]));
      } else {
        Count("segments[]");
        for (size_t b = 0; b < s_.segments[placed[k]].blocks.size(); ++b) Count("segment.blocks[]");
        s_.segments.push_back(s_.segments[placed[k]]);
      }
    }
    std::vector<SnapshotSegment>().swap(taken_segments_);
    std::vector<SnapshotBlock>().swap(taken_blocks_);
    std::vector<std::vector<uint32_t>>().swap(block_lists_);
    if (std::optional<Node> traces = d_->Get(root, "device_traces")) {
      if (d_->kind(*traces) != Kind::kList) Fail("device_traces", "a list");
      const std::vector<Node>& devices = d_->Items(*traces);
      // torch numbers a process's devices with an 8-bit index (16 bits in older versions).
      if (devices.size() > kMaxDevices) {
        Fail("device_traces", "a list of at most " + std::to_string(kMaxDevices) + " devices' rings (it has " +
                                  std::to_string(devices.size()) + ")");
      }
      // The usual case, one ring holding every entry in order: handed over, not copied.
      // Rings may share entries (the memo allows it): then each copies what it holds.
      size_t holding = 0;
      for (Node device : devices) {
        const std::vector<Node>& items = d_->Items(device);
        holding += std::any_of(items.begin(), items.end(), [&](Node e) { return d_->kind(e) == Kind::kEntry; });
      }
      for (Node device : devices) {
        if (d_->kind(device) != Kind::kList) Fail("device_traces[]", "a list");
        SnapshotRing& events = s_.traces.emplace_back();
        const std::vector<Node>& items = d_->Items(device);
        bool whole = holding == 1 && !items.empty() && items.size() == entries_.size();
        for (size_t i = 0; whole && i < items.size(); ++i) {
          whole = d_->kind(items[i]) == Kind::kEntry && d_->Entry(items[i]) == i;
        }
        if (whole) {
          events = std::move(entries_);
          entries_.clear();
          continue;
        }
        for (Node e : items) {
          if (d_->kind(e) == Kind::kEntry && d_->Entry(e) >= entries_.size()) Fail("device_traces[][]", "a dict");
          Count("device_traces[][]");
          events.push_back(d_->kind(e) == Kind::kEntry ? entries_[d_->Entry(e)] : Event(e));
        }
      }
      entries_.clear();
    }
    if (std::optional<Node> marks = d_->Get(root, "external_annotations")) {
      for (Node m : d_->Items(*marks)) {
        if (d_->kind(m) != Kind::kDict) continue;
        const std::string_view stage = Word(m, "stage");
        if (stage != "START" && stage != "END") continue;
        s_.annotations.push_back(SnapshotAnnotation{static_cast<int32_t>(Int(m, "device", 0, "annotation")),
                                                    stage == "START", Text(m, "name", "annotation"),
                                                    Int(m, "time_us", 0, "annotation")});
      }
    }
    if (std::optional<Node> settings = d_->Get(root, "allocator_settings")) {
      if (std::optional<Node> o = d_->Get(*settings, "trace_alloc_overflowed")) s_.overflowed = d_->Int(*o) != 0;
      if (std::optional<Node> m = d_->Get(*settings, "trace_alloc_max_entries")) s_.max_entries = d_->Int(*m);
      if (std::optional<Node> e = d_->Get(*settings, "expandable_segments")) s_.expandable_segments = d_->Int(*e) != 0;
    }
    return std::move(s_);
  }

 private:
  [[noreturn]] void Fail(const std::string& field, const std::string& want) const {
    ThrowInput(s_.file, -1,
               "not a memory snapshot: " + (field.empty() ? std::string("the pickle") : "\"" + field + "\"") +
                   " is not " + want);
  }

  int64_t Int(Node dict, const char* key, int64_t absent, const char* where) const {
    const std::optional<Node> v = d_->Get(dict, key);
    if (!v) return absent;
    if (d_->kind(*v) == Kind::kNone) return absent;
    if (d_->kind(*v) != Kind::kInt && d_->kind(*v) != Kind::kBool) Fail(std::string(where) + "." + key, "an integer");
    return d_->Int(*v);
  }

  // A byte count: at most 2^48 each, and all of them together at most 2^62, so that no
  // sum the profile makes of them (with either sign) leaves 64 bits.
  int64_t Size(Node dict, const char* key, int64_t absent, const char* where) {
    return CheckSize(Int(dict, key, absent, where), (std::string(where) + "." + key).c_str());
  }
  int64_t CheckSize(int64_t v, const char* where) {
    if (v < 0 || v > (int64_t{1} << 48)) Fail(where, "a byte count (0 to 2^48)");
    sizes_ += v;
    if (sizes_ > (int64_t{1} << 62)) Fail(where, "within 2^62 bytes with all other sizes");
    return v;
  }

  // A string field's text, "" when absent or of another type (then no known word).
  std::string_view Word(Node dict, const char* key) const {
    const std::optional<Node> v = d_->Get(dict, key);
    return v && d_->kind(*v) == Kind::kString ? d_->Str(*v) : std::string_view();
  }

  uint32_t Text(Node dict, const char* key, const char* where) {
    const std::optional<Node> v = d_->Get(dict, key);
    if (!v || d_->kind(*v) == Kind::kNone) return 0;
    if (d_->kind(*v) != Kind::kString) Fail(std::string(where) + "." + key, "a string");
    return s_.strings.Intern(d_->Str(*v));
  }

  // A frames list as a stack id: lists and frames shared in the pickle are looked up
  // once, equal stacks are one.
  uint32_t Stack(Node frames, const char* where) { return Stack(std::optional<Node>(frames), where); }
  uint32_t Stack(std::optional<Node> frames, const char* where) {
    if (!frames || d_->kind(*frames) == Kind::kNone) return 0;
    if (Tagged(*frames, kStackTag)) return d_->Entry(*frames) & kIndexMask;
    if (d_->kind(*frames) != Kind::kList) Fail(std::string(where) + ".frames", "a list");
    if (*frames < stack_of_node_.size() && stack_of_node_[*frames]) return stack_of_node_[*frames] - 1;
    ids_.clear();
    for (Node f : d_->Items(*frames)) ids_.push_back(Frame(f, where));
    return StackOf(*frames);
  }

  // The stack of the frame ids in ids_, made where new (the frames list `frames`, whose
  // stack it is).
  uint32_t StackOf(Node frames) {
    // Equal stacks are one: looked up by a hash of their frames, chained where two collide.
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ ids_.size();
    for (uint32_t id : ids_) h = (h ^ id) * 0x100000001B3ULL + (h >> 29);
    uint32_t stack = kNoStack;
    const auto [head, added] = stack_of_hash_.try_emplace(h, kNoStack);
    for (uint32_t k = head->second; k != kNoStack; k = next_same_hash_[k]) {
      if (s_.stacks[k] == ids_) {
        stack = k;
        break;
      }
    }
    if (stack == kNoStack) {
      if (s_.stacks.size() > kIndexMask) Fail("frames", "one of 2^28 stacks");
      stack = static_cast<uint32_t>(s_.stacks.size());
      s_.stacks.push_back(ids_);
      next_same_hash_.resize(s_.stacks.size(), kNoStack);
      next_same_hash_[stack] = head->second;
      head->second = stack;
    }
    if (frames & kImmediateNode) return stack;  // no slot of its own
    if (stack_of_node_.size() <= frames) stack_of_node_.resize(static_cast<size_t>(frames) + 1, 0);
    stack_of_node_[frames] = stack + 1;
    return stack;
  }

  uint32_t Frame(Node f, const char* where) {
    if (Tagged(f, kFrameTag)) return d_->Entry(f) & kIndexMask;
    if (f < frame_of_node_.size() && frame_of_node_[f]) return frame_of_node_[f] - 1;
    if (d_->kind(f) != Kind::kDict) Fail(std::string(where) + ".frames[]", "a dict");
    SnapshotFrame frame{Text(f, "name", "frame"), Text(f, "filename", "frame"), Int(f, "line", 0, "frame")};
    auto [it, added] = frame_of_text_.try_emplace(std::make_tuple(frame.name, frame.filename, frame.line),
                                                  static_cast<uint32_t>(s_.frames.size()));
    if (added) {
      if (s_.frames.size() > kIndexMask) Fail(std::string(where) + ".frames[]", "one of 2^28 frames");
      s_.frames.push_back(frame);
    }
    if (frame_of_node_.size() <= f) frame_of_node_.resize(static_cast<size_t>(f) + 1, 0);
    frame_of_node_[f] = it->second + 1;
    return it->second;
  }

  // One more segment, block or copied ring entry, within the cap: a memo reference names
  // a whole segment, blocks list or ring again for a few bytes, so a small file can name
  // billions of them.
  void Count(const char* where) {
    ++items_;
    if (max_items_ == 0 && !source_) return;
    const uint64_t cap = max_items_ ? max_items_ : kItemFloor + source_->uncompressed_offset() / 4;
    if (items_ <= cap) return;
    ThrowInput(s_.file, -1,
               "not read: the snapshot expands to more than " + std::to_string(cap) +
                   " segments, blocks and ring entries (at " + where +
                   ") through references to shared ones; the cap is " +
                   (max_items_ ? std::string("--max-snapshot-items")
                               : std::to_string(kItemFloor) + " and a quarter of the pickle's bytes") +
                   ", and a snapshot torch writes holds far fewer: raise it with --max-snapshot-items N");
  }

  SnapshotSegment Segment(Node seg) {
    if (d_->kind(seg) != Kind::kDict) Fail("segments[]", "a dict");
    Count("segments[]");
    SnapshotSegment s;
    s.device = static_cast<int32_t>(Int(seg, "device", 0, "segment"));
    s.address = Int(seg, "address", 0, "segment");
    s.total_size = Size(seg, "total_size", 0, "segment");
    s.stream = Int(seg, "stream", 0, "segment");
    s.segment_type = Text(seg, "segment_type", "segment");
    s.expandable = Int(seg, "is_expandable", 0, "segment") != 0;
    s.stack = Stack(d_->Get(seg, "frames"), "segment");
    if (std::optional<Node> pool = d_->Get(seg, "segment_pool_id")) {
      // (0, 0) is the default pool; a CUDA graph's or FSDP's private pool is another pair.
      const std::vector<Node>& ids = d_->Items(*pool);
      if (ids.size() == 2 && (d_->Int(ids[0]) != 0 || d_->Int(ids[1]) != 0)) {
        s.pool =
            s_.strings.Intern("(" + std::to_string(d_->Int(ids[0])) + ", " + std::to_string(d_->Int(ids[1])) + ")");
      }
    }
    std::optional<Node> blocks = d_->Get(seg, "blocks");
    if (blocks && Tagged(*blocks, kBlockListTag)) {
      for (uint32_t b : block_lists_[d_->Entry(*blocks) & kIndexMask]) {
        Count("segment.blocks[]");
        s.blocks.push_back(taken_blocks_[b]);
      }
      blocks.reset();
    }
    if (blocks && d_->kind(*blocks) != Kind::kList) Fail("segment.blocks", "a list");
    if (blocks) {
      for (Node b : d_->Items(*blocks)) {
        if (Tagged(b, kBlockTag)) {  // taken as read: a copy, counted (it may be named again)
          Count("segment.blocks[]");
          s.blocks.push_back(taken_blocks_[d_->Entry(b) & kIndexMask]);
        } else {
          s.blocks.push_back(Block(b));
        }
      }
    }
    return s;
  }

  SnapshotBlock Block(Node b) {
    if (d_->kind(b) != Kind::kDict) Fail("segment.blocks[]", "a dict");
    Count("segment.blocks[]");
    SnapshotBlock block;
    block.address = Int(b, "address", 0, "block");
    block.size = Size(b, "size", 0, "block");
    block.requested_size = Size(b, "requested_size", block.size, "block");
    const std::string_view state = Word(b, "state");
    block.state = state == "active_allocated"      ? BlockState::kActiveAllocated
                  : state == "active_pending_free" ? BlockState::kActivePendingFree
                  : state == "inactive"            ? BlockState::kInactive
                                                   : BlockState::kOther;
    block.stack = Stack(d_->Get(b, "frames"), "block");
    // Older snapshots keep the stack and the requested size in history[0].
    if (std::optional<Node> history = d_->Get(b, "history")) {
      const std::vector<Node>& h = d_->Items(*history);
      if (!h.empty() && d_->kind(h[0]) == Kind::kDict) {
        if (block.stack == 0) block.stack = Stack(d_->Get(h[0], "frames"), "block.history");
        block.requested_size = Size(h[0], "real_size", block.requested_size, "block.history");
      }
    }
    return block;
  }

  SnapshotEvent Event(Node e) {
    if (d_->kind(e) != Kind::kDict) Fail("device_traces[][]", "a dict");
    static const std::map<std::string_view, SnapshotAction> kActions = {
        {"alloc", SnapshotAction::kAlloc},
        {"free_requested", SnapshotAction::kFreeRequested},
        {"free_completed", SnapshotAction::kFreeCompleted},
        {"segment_alloc", SnapshotAction::kSegmentAlloc},
        {"segment_free", SnapshotAction::kSegmentFree},
        {"segment_map", SnapshotAction::kSegmentMap},
        {"segment_unmap", SnapshotAction::kSegmentUnmap},
        {"snapshot", SnapshotAction::kSnapshot},
        {"oom", SnapshotAction::kOom}};
    // The entries are most of a snapshot: their fields are read in one pass, each key
    // told by its interned string (the pickle's strings are interned once each).
    SnapshotEvent ev;
    int64_t addr = 0, device_free = -1;
    SnapshotContext context;
    const std::vector<Node>& kv = d_->Items(e);
    for (size_t i = 0; i + 1 < kv.size(); i += 2) {
      const Node v = kv[i + 1];
      switch (FieldOf(kv[i])) {
        case kAction: {
          const auto action = kActions.find(d_->kind(v) == Kind::kString ? d_->Str(v) : std::string_view());
          ev.action = action == kActions.end() ? SnapshotAction::kOther : action->second;
          break;
        }
        case kAddr:
          addr = Number(v, 0, "trace entry.addr");
          break;
        case kSize:
          ev.size = CheckSize(Number(v, 0, "trace entry.size"), "trace entry.size");
          break;
        case kStream:
          context.stream = Number(v, 0, "trace entry.stream");
          break;
        case kTime:
          ev.time_us = Number(v, 0, "trace entry.time_us");
          break;
        case kDeviceFree:
          device_free = Number(v, -1, "trace entry.device_free");
          break;
        case kFrames:
          ev.stack = Stack(v, "trace entry");
          break;
        case kCompileContext:
          if (d_->kind(v) != Kind::kNone && d_->kind(v) != Kind::kString)
            Fail("trace entry.compile_context", "a string");
          // torch writes "N/A" where no torch.compile context was in force: no label.
          if (d_->kind(v) == Kind::kString && d_->Str(v) != "N/A")
            context.compile_context = s_.strings.Intern(d_->Str(v));
          break;
        default:
          break;
      }
    }
    ev.addr = ev.action == SnapshotAction::kOom ? device_free : addr;
    ev.context = Context(context);
    return ev;
  }

  // The context's number in s_.contexts; entries in a row mostly share one.
  uint32_t Context(const SnapshotContext& c) {
    const SnapshotContext& last = s_.contexts[last_context_];
    if (last.stream == c.stream && last.compile_context == c.compile_context) return last_context_;
    auto [it, added] = context_ids_.try_emplace(std::make_pair(c.stream, c.compile_context),
                                                static_cast<uint32_t>(s_.contexts.size()));
    if (added) s_.contexts.push_back(c);
    return last_context_ = it->second;
  }

  // An integer value (None: absent).
  int64_t Number(Node v, int64_t absent, const char* where) const {
    if (d_->kind(v) == Kind::kNone) return absent;
    if (d_->kind(v) != Kind::kInt && d_->kind(v) != Kind::kBool) Fail(where, "an integer");
    return d_->Int(v);
  }

  // An entry's key, told by its string id (each string of the pickle has one), looked at
  // once per distinct key.
  enum Field : uint8_t {
    kOtherField,
    kAction,
    kAddr,
    kSize,
    kStream,
    kTime,
    kDeviceFree,
    kFrames,
    kCompileContext,
    kFilename,
    kBlocks,
    kTotalSize,
    kState
  };
  Field FieldOf(Node key) {
    const uint32_t id = d_->StrId(key);
    if (id == ~0u) return kOtherField;
    if (id >= field_of_string_.size()) field_of_string_.resize(static_cast<size_t>(id) + 1, 0);
    uint8_t& f = field_of_string_[id];
    if (f == 0) {
      static const std::map<std::string_view, Field> kFields = {{"action", kAction},
                                                                {"addr", kAddr},
                                                                {"size", kSize},
                                                                {"stream", kStream},
                                                                {"time_us", kTime},
                                                                {"device_free", kDeviceFree},
                                                                {"frames", kFrames},
                                                                {"compile_context", kCompileContext},
                                                                {"filename", kFilename},
                                                                {"blocks", kBlocks},
                                                                {"total_size", kTotalSize},
                                                                {"state", kState}};
      const auto it = kFields.find(d_->Str(key));
      f = static_cast<uint8_t>((it == kFields.end() ? kOtherField : it->second) + 1);
    }
    return static_cast<Field>(f - 1);
  }

  static constexpr size_t kMaxDevices = 65536;
  static constexpr uint64_t kItemFloor = uint64_t{1} << 22;
  const ByteSource* source_;
  const PickleData* d_ = nullptr;
  MemorySnapshot s_;
  const uint64_t max_items_;
  uint64_t items_ = 0;
  // An entry's number: what it is in the top bits, its index below (ring entries: tag 0).
  static constexpr uint32_t kIndexMask = (uint32_t{1} << 28) - 1;
  static constexpr uint32_t kFrameTag = uint32_t{1} << 28, kStackTag = uint32_t{2} << 28;
  static constexpr uint32_t kSegmentTag = uint32_t{3} << 28, kBlockTag = uint32_t{4} << 28;
  static constexpr uint32_t kBlockListTag = uint32_t{5} << 28;
  static constexpr uint32_t kTagBits = PickleData::kEntryBit | (uint32_t{7} << 28);
  static constexpr uint32_t kImmediateNode = PickleData::kEntryBit | PickleData::kStringBit;
  // Whether a value is an entry this builder made with that tag (a frame, a stack).
  bool Tagged(Node n, uint32_t tag) const { return d_->kind(n) == Kind::kEntry && (d_->Entry(n) & ~kIndexMask) == tag; }
  SnapshotRing entries_;
  std::vector<SnapshotSegment> taken_segments_;  // taken as read, in their order
  std::vector<SnapshotBlock> taken_blocks_;
  std::vector<std::vector<uint32_t>> block_lists_;  // taken lists of taken blocks
  std::map<std::pair<int64_t, uint32_t>, uint32_t> context_ids_ = {{{0, 0}, 0}};
  uint32_t last_context_ = 0;
  std::vector<uint8_t> field_of_string_;  // by string id: 0 not looked at yet, else Field + 1
  int64_t sizes_ = 0;
  // By the pickle's value number, what was made of it + 1 (0: not yet); cut where the
  // reader drops values (Forget), whose numbers then name others.
  std::vector<uint32_t> stack_of_node_, frame_of_node_;
  static constexpr uint32_t kNoStack = UINT32_MAX;
  std::unordered_map<uint64_t, uint32_t> stack_of_hash_;  // the last stack with that hash
  std::vector<uint32_t> next_same_hash_;                  // by stack: the one before it with its hash
  std::vector<uint32_t> ids_;                             // Stack's buffer
  std::map<std::tuple<uint32_t, uint32_t, int64_t>, uint32_t> frame_of_text_;
};

}  // namespace

MemorySnapshot ReadSnapshot(const PickleData& data, const std::string& file, uint64_t max_items) {
  return SnapshotBuilder(file, nullptr, max_items).Build(data);
}

MemorySnapshot ReadSnapshot(ByteSource& source, const std::string& file, uint64_t max_items) {
  SnapshotBuilder builder(file, &source, max_items);
  const PickleData data = ReadPickle(source, &builder);
  return builder.Build(data);
}

}  // namespace torch2pprof
