#include "convert/snapshot_profile.h"

#include <iterator>

#include <algorithm>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>

#include "base/utf8.h"
#include "convert/aggregator.h"
#include "model/frame_names.h"
#include "torch2pprof/stages/trace_model.h"
#include "torch2pprof/version.h"

namespace torch2pprof {

namespace {

enum SampleType { kInuseSpace, kInuseObjects, kDumpSpace, kDumpObjects, kAllocSpace, kAllocObjects, kTypes };

class Builder {
 public:
  Builder(const MemorySnapshot& s, const SnapshotProfileOptions& o, Profile* p) : s_(s), o_(o), p_(*p) {
    for (const SampleTypeName& t : kSnapshotSampleTypes) p_.sample_types.push_back({t.type, t.unit});
    static_assert(std::size(kSnapshotSampleTypes) == kTypes, "SampleType indexes kSnapshotSampleTypes");
    p_.default_sample_type = "inuse_space";
    p_.period_type = {"space", "bytes"};
    p_.period = 1;
    p_.tree.push_back(TreeNode{0, 0});
    frame_of_.assign(s.frames.size(), -1);
  }

  // The leaf node of a stack (root to leaf), with an optional pseudo-frame above the
  // stack's root (`root`) or below its leaf (`leaf`).
  uint32_t Node(uint32_t stack, const std::string& root = "", const std::string& leaf = "") {
    // Most samples are a stack alone, and stacks repeat: walked once each.
    const bool plain = root.empty() && leaf.empty();
    if (plain && stack < plain_node_.size() && plain_node_[stack] != 0) return plain_node_[stack];
    uint32_t node = 0;
    if (!root.empty()) node = Child(node, Pseudo(root));
    const std::vector<uint32_t>& frames = s_.stacks[stack];
    for (auto it = frames.rbegin(); it != frames.rend(); ++it) {
      const int32_t f = FrameOf(*it);
      if (f >= 0) node = Child(node, static_cast<uint32_t>(f));
    }
    if (node == 0) node = Child(node, Pseudo("[no stack recorded]"));
    if (!leaf.empty()) node = Child(node, Pseudo(leaf));
    if (plain) {
      if (plain_node_.size() <= stack) plain_node_.resize(s_.stacks.size(), 0);
      plain_node_[stack] = node;
    }
    return node;
  }

  // A sample's labels: its device and stream; a segment's type and private pool where
  // it is one of the dump's blocks; the compile context and the record_function range in
  // force where it is an alloc of the ring (ids into the snapshot's strings, 0: none).
  uint32_t Labels(int32_t device, int64_t stream, uint32_t segment_type = 0, uint32_t pool = 0,
                  uint32_t compile_context = 0, uint32_t annotation = 0) {
    // Looked up by the ids first: a snapshot's millions of entries share a few label sets.
    const std::tuple<int32_t, int64_t, uint32_t, uint32_t, uint32_t, uint32_t> ids{
        device, stream, segment_type, pool, compile_context, annotation};
    auto known = labels_of_ids_.find(ids);
    if (known != labels_of_ids_.end()) return known->second;
    std::vector<Label> l;
    l.push_back({label_key::kDevice, DeviceName("cuda", device), 0, false});
    l.push_back({label_key::kStream, std::to_string(stream), 0, false});
    auto text = [&](const char* key, uint32_t id) {
      if (id) l.push_back({key, std::string(s_.strings.Get(id)), 0, false});
    };
    text("segment_type", segment_type);
    text("pool", pool);
    text("compile_context", compile_context);
    text("annotation", annotation);
    std::string key;
    for (const Label& x : l) key += x.key + "=" + x.str + "\n";
    auto [it, added] = labels_.try_emplace(key, static_cast<uint32_t>(p_.label_sets.size()));
    if (added) p_.label_sets.push_back(std::move(l));
    labels_of_ids_.emplace(ids, it->second);
    return it->second;
  }

  void Add(uint32_t node, uint32_t labels, SampleType type, int64_t value) {
    const uint64_t key = uint64_t{node} << 32 | labels;
    auto [it, added] = samples_.try_emplace(key, static_cast<uint32_t>(p_.samples.size()));
    if (added) p_.samples.push_back(Sample{node, labels, std::vector<int64_t>(kTypes, 0)});
    p_.samples[it->second].values[type] += value;
  }

 private:
  int32_t FrameOf(uint32_t id) {
    int32_t& f = frame_of_[id];
    if (f != -1) return f;
    const SnapshotFrame& sf = s_.frames[id];
    if (!o_.all_frames && names_.IsPlumbing(id)) return f = -2;
    const std::string_view name = s_.strings.Get(sf.name), file = s_.strings.Get(sf.filename);
    Frame frame;
    frame.name = names_.FrameName(id);
    // The name as recorded, held once a frame: cut as the frame's name is.
    frame.system_name = frame.function = CutText(name, SnapshotNames::kFrameNameBytes);
    if (sf.line > 0) {  // a Python frame: its file and line, so -list finds the source
      frame.filename = std::string(BoundedPath(file));
      frame.line = sf.line;
    }
    p_.frames.push_back(std::move(frame));
    return f = static_cast<int32_t>(p_.frames.size() - 1);
  }

  uint32_t Pseudo(const std::string& name) {
    auto [it, added] = pseudo_.try_emplace(name, static_cast<uint32_t>(p_.frames.size()));
    if (added) p_.frames.push_back(Frame{name, name, name, "", 0});
    return it->second;
  }

  uint32_t Child(uint32_t parent, uint32_t frame) {
    const uint64_t key = uint64_t{parent} << 32 | frame;
    auto [it, added] = children_.try_emplace(key, static_cast<uint32_t>(p_.tree.size()));
    if (added) p_.tree.push_back(TreeNode{parent, frame});
    return it->second;
  }

  const MemorySnapshot& s_;
  const SnapshotProfileOptions& o_;
  Profile& p_;
  std::vector<int32_t> frame_of_;  // by snapshot frame: profile frame, -1 not yet, -2 hidden
  SnapshotNames names_{s_};
  std::vector<uint32_t> plain_node_;  // by snapshot stack: its leaf node without pseudo-frames; 0 not yet
  std::unordered_map<std::string, uint32_t> pseudo_, labels_;
  std::map<std::tuple<int32_t, int64_t, uint32_t, uint32_t, uint32_t, uint32_t>, uint32_t> labels_of_ids_;
  std::unordered_map<uint64_t, uint32_t> children_, samples_;
};

// Allocated before the ring's first entry, freed after the peak: the leaf below the stack
// of its free, so that what holds the bytes reads as the free's stack in every view.
constexpr const char* kBeforeWindowFreed = "[allocated before the recorded window; stack of its free]";
constexpr const char* kUnaccounted = "[the ring and the segments disagree]";
constexpr const char* kRounding = "[rounding to the block size]";
constexpr const char* kCachedFree = "[cached free: inactive blocks]";
constexpr const char* kUncovered = "[reserved, in no block]";

std::string Bytes(int64_t b) { return std::to_string(b) + " bytes"; }

// The innermost record_function range open at each ring entry's time on the device
// (external_annotations' START and END; an END closes the latest open range of its name).
// The marks are replayed once, in time order, keeping the innermost range after each; an
// entry reads it at its time (by search where the ring's time goes back): linear in the
// marks and the ring, whatever their order.
std::vector<uint32_t> Annotations(const MemorySnapshot& s, int32_t device, const SnapshotRing& ring) {
  std::vector<uint32_t> out(ring.size(), 0);
  std::vector<const SnapshotAnnotation*> marks;
  for (const SnapshotAnnotation& a : s.annotations) {
    if (a.device == device) marks.push_back(&a);
  }
  if (marks.empty()) return out;
  std::stable_sort(marks.begin(), marks.end(),
                   [](const SnapshotAnnotation* a, const SnapshotAnnotation* b) { return a->time_us < b->time_us; });
  // The open ranges: names in opening order, closed ones marked so (an END may close one
  // below the top); per name, its open positions, latest last.
  std::vector<uint32_t> open;
  std::vector<bool> closed;
  std::unordered_map<uint32_t, std::vector<size_t>> open_of;
  std::vector<uint32_t> innermost(marks.size() + 1, 0);  // after the first k marks
  for (size_t k = 0; k < marks.size(); ++k) {
    const SnapshotAnnotation& m = *marks[k];
    if (m.start) {
      open_of[m.name].push_back(open.size());
      open.push_back(m.name);
      closed.push_back(false);
    } else if (auto it = open_of.find(m.name); it != open_of.end() && !it->second.empty()) {
      closed[it->second.back()] = true;
      it->second.pop_back();
    }
    while (!open.empty() && closed.back()) open.pop_back(), closed.pop_back();
    innermost[k + 1] = open.empty() ? 0 : open.back();
  }
  size_t k = 0;
  int64_t last = std::numeric_limits<int64_t>::min();
  for (size_t i = 0; i < ring.size(); ++i) {
    const int64_t t = ring[i].time_us;
    if (t < last) {  // the ring is in time order; where not, found again by search
      k = static_cast<size_t>(std::upper_bound(marks.begin(), marks.end(), t,
                                               [](int64_t v, const SnapshotAnnotation* m) { return v < m->time_us; }) -
                              marks.begin());
    }
    last = t;
    while (k < marks.size() && marks[k]->time_us <= t) ++k;
    out[i] = innermost[k];
  }
  return out;
}

}  // namespace

Profile SnapshotProfile(const MemorySnapshot& s, const std::vector<DevicePeak>& peaks,
                        const SnapshotProfileOptions& options) {
  Profile p;
  Builder b(s, options, &p);
  p.source_file = s.file.substr(s.file.find_last_of('/') == std::string::npos ? 0 : s.file.find_last_of('/') + 1);
  p.comments.push_back(InputComment(std::string("torch2pprof ") + kVersion, p.source_file, -1));
  // The dump: each segment's blocks, summing to its total_size.
  for (const SnapshotSegment& seg : s.segments) {
    const uint32_t labels = b.Labels(seg.device, seg.stream, seg.segment_type, seg.pool);
    int64_t covered = 0;
    for (const SnapshotBlock& blk : seg.blocks) {
      covered += blk.size;
      if (blk.state == BlockState::kActiveAllocated || blk.state == BlockState::kActivePendingFree) {
        const int64_t used = Requested(blk);
        b.Add(b.Node(blk.stack), labels, kDumpSpace, used);
        b.Add(b.Node(blk.stack), labels, kDumpObjects, 1);
        if (blk.size > used) b.Add(b.Node(blk.stack, "", kRounding), labels, kDumpSpace, blk.size - used);
      } else {
        b.Add(b.Node(0, kCachedFree), labels, kDumpSpace, blk.size);
        b.Add(b.Node(0, kCachedFree), labels, kDumpObjects, 1);
      }
    }
    if (seg.total_size > covered) b.Add(b.Node(0, kUncovered), labels, kDumpSpace, seg.total_size - covered);
  }
  // The window: every alloc; and each device's allocations live at its peak.
  for (const DevicePeak& peak : peaks) {
    const SnapshotRing& ring = Ring(s, peak.device);
    const std::vector<uint32_t> annotation = Annotations(s, peak.device, ring);
    for (size_t i = 0; i < ring.size(); ++i) {
      const SnapshotEvent& e = ring[i];
      if (e.action != SnapshotAction::kAlloc) continue;
      const SnapshotContext& c = s.contexts[e.context];
      const uint32_t labels = b.Labels(peak.device, c.stream, 0, 0, c.compile_context, annotation[i]);
      b.Add(b.Node(e.stack), labels, kAllocSpace, e.size);
      b.Add(b.Node(e.stack), labels, kAllocObjects, 1);
    }
    // Each block live at the peak under its allocation stack, except one allocated before
    // the ring and freed after the peak: a free records only its own stack.
    int64_t rest = peak.peak_bytes;
    for (const LiveBlock& live : peak.live) {
      uint32_t node = 0, labels = 0;
      if (live.segment) {
        const SnapshotSegment& seg = *live.segment;
        node = b.Node(live.stack);
        labels = b.Labels(peak.device, seg.stream, seg.segment_type, seg.pool);
      } else {
        const SnapshotEvent& e = ring[static_cast<size_t>(live.entry)];
        node = live.kind == LiveBlock::kFreedLater ? b.Node(live.stack, "", kBeforeWindowFreed) : b.Node(live.stack);
        const SnapshotContext& c = s.contexts[e.context];
        labels = b.Labels(peak.device, c.stream, 0, 0, c.compile_context, annotation[static_cast<size_t>(live.entry)]);
      }
      b.Add(node, labels, kInuseSpace, live.bytes);
      b.Add(node, labels, kInuseObjects, 1);
      rest -= live.bytes;
    }
    // Where the ring and the segments agree, nothing is left; where not, the difference
    // stands apart (the comments say they disagree).
    if (rest != 0) b.Add(b.Node(0, kUnaccounted), b.Labels(peak.device, 0), kInuseSpace, rest);
    std::string line = "device " + std::to_string(peak.device) + ": peak " + Bytes(peak.peak_bytes) +
                       (peak.peak_entry < 0 ? std::string(" before the recorded window")
                                            : " after ring entry " + std::to_string(peak.peak_entry) + " (time_us " +
                                                  std::to_string(peak.peak_time_us) + ")") +
                       "; " + Bytes(peak.dump_bytes) + " allocated and " + Bytes(peak.reserved_bytes) +
                       " reserved at the dump";
    p.comments.push_back(line);
    if (!peak.consistent) {
      p.comments.push_back(DisagreeLine("device " + std::to_string(peak.device)));
    }
  }
  for (size_t d = 0; d < s.traces.size(); ++d) {
    for (const SnapshotEvent& e : s.traces[d]) {
      if (e.action != SnapshotAction::kOom) continue;
      p.comments.push_back("device " + std::to_string(d) + ": out of memory asking for " + Bytes(e.size) +
                           (DeviceFree(e) >= 0 ? " with " + Bytes(DeviceFree(e)) + " free on the device" : "") +
                           " (time_us " + std::to_string(e.time_us) + ")");
    }
  }
  if (s.overflowed) {
    p.comments.push_back(
        "the ring buffer overflowed (trace_alloc_overflowed): the window starts at its oldest "
        "entry; blocks allocated before it and freed after the peak sit under " +
        std::string(kBeforeWindowFreed) + ", below the stack that freed them");
  }
  return p;
}

}  // namespace torch2pprof
