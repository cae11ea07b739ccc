#include "load/python_spans.h"

#include <algorithm>

#include "base/flat_map.h"

namespace torch2pprof {

namespace {

// The span with a (lane, Python id); the last one written wins. Kineto numbers Python
// events 1, 2, 3, ... per trace, so a lane's ids fill a few ranges: then a table by id in
// blocks of 1,024, found through the lane's directory of blocks, under a third of the
// time of hashing them (a real trace: one range, 1 to the number of spans). A trace with several runs
// of ids per lane (threads that take turns; tiled inputs) stays in the table. Ids spread
// so thin that the table or the directories would outgrow the spans go to a map.
class SpanById {
 public:
  static constexpr uint32_t kNone = FlatIndexMap::kNone;

  explicit SpanById(const std::vector<PythonSpan>& spans) {
    size_t count = 0;
    for (const PythonSpan& s : spans) {
      if (s.id < 0) continue;
      if (s.lane >= lanes_.size()) lanes_.resize(s.lane + 1);
      Lane& l = lanes_[s.lane];
      l.min = std::min(l.min, s.id), l.max = std::max(l.max, s.id);
      ++count;
    }
    // A directory entry per block a lane's ids span, a table cell per id in a used block.
    uint64_t entries = 0;
    for (Lane& l : lanes_) {
      if (l.min > l.max) continue;
      entries += BlockIndex(l, l.max) + 1;
    }
    dense_ = entries <= count + (uint64_t{1} << 16);
    if (dense_) {
      for (Lane& l : lanes_) {
        if (l.min <= l.max) l.blocks.assign(BlockIndex(l, l.max) + 1, kNone);
      }
      size_t used = 0;
      for (const PythonSpan& s : spans) {
        if (s.id < 0) continue;
        Lane& l = lanes_[s.lane];
        uint32_t& b = l.blocks[BlockIndex(l, s.id)];
        if (b == kNone) b = static_cast<uint32_t>(used++);
      }
      dense_ = used * kBlock <= 4 * count + kBlock * lanes_.size();
      if (dense_) table_.assign(used * kBlock, kNone);
    }
    if (!dense_) {
      maps_.resize(lanes_.size());
      std::vector<Lane>().swap(lanes_);
    }
    for (size_t i = spans.size(); i-- > 0;) {  // backwards: the first one stored stays
      if (spans[i].id < 0) continue;
      if (dense_) {
        const Lane& l = lanes_[spans[i].lane];
        uint32_t& cell = table_[Cell(l.blocks[BlockIndex(l, spans[i].id)], spans[i].id)];
        if (cell == kNone) cell = static_cast<uint32_t>(i);
      } else {
        maps_[spans[i].lane].Emplace(static_cast<uint64_t>(spans[i].id), static_cast<uint32_t>(i));
      }
    }
  }

  uint32_t Find(uint32_t lane, int64_t id) const {
    if (!dense_) return lane < maps_.size() ? maps_[lane].Find(static_cast<uint64_t>(id)) : kNone;
    if (lane >= lanes_.size() || id < lanes_[lane].min || id > lanes_[lane].max) return kNone;
    const Lane& l = lanes_[lane];
    const uint32_t block = l.blocks[BlockIndex(l, id)];
    return block == kNone ? kNone : table_[Cell(block, id)];
  }

 private:
  static constexpr int kBlockBits = 10;
  static constexpr size_t kBlock = size_t{1} << kBlockBits;
  struct Lane {  // the lane's ids; a lane without any never matches (min > max)
    int64_t min = INT64_MAX, max = INT64_MIN;
    std::vector<uint32_t> blocks;  // by block from min's: its place in the table, or kNone
  };
  static int64_t Block(int64_t id) { return id >> kBlockBits; }  // ids are >= 0 here
  // Where id's block is in l's directory; id within [l.min, l.max].
  static size_t BlockIndex(const Lane& l, int64_t id) { return static_cast<size_t>(Block(id) - Block(l.min)); }
  static size_t Cell(uint32_t block, int64_t id) {
    return (static_cast<size_t>(block) << kBlockBits) | static_cast<size_t>(id & (kBlock - 1));
  }
  bool dense_ = true;
  std::vector<Lane> lanes_;
  std::vector<uint32_t> table_;
  std::vector<FlatIndexMap> maps_;  // by lane: a key of lane and id in 64 bits would not be exact
};

}  // namespace

PythonRepair RepairPythonSpans(const std::vector<PythonSpan>& spans) {
  constexpr int64_t kDropped = INT64_MIN, kUnknown = INT64_MAX;
  const SpanById by_id(spans);
  auto parent_of = [&](size_t i) -> int64_t {
    if (spans[i].parent < 0) return -1;
    uint32_t p = by_id.Find(spans[i].lane, spans[i].parent);
    return p == SpanById::kNone || p == i ? -1 : static_cast<int64_t>(p);
  };
  // end[i]: the repaired end (kDropped when nothing is left), filled parents first
  // with an explicit stack: Python stacks can be thousands of frames deep.
  std::vector<int64_t> end(spans.size(), kUnknown);
  std::vector<uint8_t> on_path(spans.size(), 0);
  std::vector<size_t> path;
  for (size_t root = 0; root < spans.size(); ++root) {
    if (end[root] != kUnknown) continue;
    path.push_back(root);
    on_path[root] = 1;
    while (!path.empty()) {
      size_t i = path.back();
      int64_t p = parent_of(i);
      if (p >= 0 && on_path[static_cast<size_t>(p)]) p = -1;  // a cycle: i is treated as a root
      if (p >= 0 && end[static_cast<size_t>(p)] == kUnknown) {
        path.push_back(static_cast<size_t>(p));
        on_path[static_cast<size_t>(p)] = 1;
        continue;
      }
      int64_t e = spans[i].end_ns;
      if (p >= 0) {
        int64_t pe = end[static_cast<size_t>(p)];
        if (pe == kDropped || spans[i].start_ns >= pe) {
          e = kDropped;
        } else if (e > pe) {
          e = pe;
        }
      }
      end[i] = e;
      on_path[i] = 0;
      path.pop_back();
    }
  }
  PythonRepair r;
  for (size_t i = 0; i < spans.size(); ++i) {
    if (spans[i].interval == PythonSpan::kNotAnInterval) continue;
    if (end[i] == kDropped) {
      r.dropped.push_back(spans[i].interval);
    } else if (end[i] != spans[i].end_ns) {
      r.clipped.push_back({spans[i].interval, end[i]});
    }
  }
  return r;
}

}  // namespace torch2pprof
