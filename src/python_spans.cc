#include "python_spans.h"

#include <algorithm>

#include "flat_map.h"

namespace torch2pprof {

namespace {

// The span with a (lane, Python id); the last one written wins. Kineto numbers Python
// events 1, 2, 3, ... per trace, so a lane's ids are usually dense: then a table by id,
// under a third of the time of hashing them (gpt2_big: 188,877 ids, 1 to 188,877); else
// a map.
class SpanById {
 public:
  static constexpr uint32_t kNone = FlatIndexMap::kNone;

  explicit SpanById(const HugeVector<PythonSpan>& spans) {
    for (const PythonSpan& s : spans) {
      if (s.id < 0) continue;
      if (s.lane >= lanes_.size()) lanes_.resize(s.lane + 1);
      Lane& l = lanes_[s.lane];
      l.min = std::min(l.min, s.id), l.max = std::max(l.max, s.id), ++l.count;
    }
    size_t cells = 0;
    for (Lane& l : lanes_) {
      if (!l.count) continue;
      uint64_t width = static_cast<uint64_t>(l.max) - static_cast<uint64_t>(l.min) + 1;
      dense_ = dense_ && width <= 2 * l.count + 1024;
      l.base = cells;
      cells += width;
    }
    if (dense_) {
      table_.assign(cells, kNone);
    } else {
      map_.Reserve(spans.size());
    }
    for (size_t i = spans.size(); i-- > 0;) {  // backwards: the first one stored stays
      if (spans[i].id < 0) continue;
      if (dense_) {
        uint32_t& cell = table_[Cell(spans[i].lane, spans[i].id)];
        if (cell == kNone) cell = static_cast<uint32_t>(i);
      } else {
        map_.Emplace(Key(spans[i].lane, spans[i].id), static_cast<uint32_t>(i));
      }
    }
  }

  uint32_t Find(uint32_t lane, int64_t id) const {
    if (!dense_) return map_.Find(Key(lane, id));
    if (lane >= lanes_.size() || id < lanes_[lane].min || id > lanes_[lane].max) return kNone;
    return table_[Cell(lane, id)];
  }

 private:
  struct Lane {  // the lane's ids; a lane without any never matches (min > max)
    int64_t min = INT64_MAX, max = INT64_MIN;
    size_t count = 0, base = 0;
  };
  static uint64_t Key(uint32_t lane, int64_t id) {
    return (static_cast<uint64_t>(lane) << 40) ^ static_cast<uint64_t>(id);
  }
  size_t Cell(uint32_t lane, int64_t id) const {
    return lanes_[lane].base + static_cast<size_t>(id - lanes_[lane].min);
  }
  bool dense_ = true;
  std::vector<Lane> lanes_;
  HugeVector<uint32_t> table_;
  FlatIndexMap map_;
};

}  // namespace

PythonRepair RepairPythonSpans(const HugeVector<PythonSpan>& spans) {
  constexpr int64_t kDropped = INT64_MIN, kUnknown = INT64_MAX;
  const SpanById by_id(spans);
  auto parent_of = [&](size_t i) -> int64_t {
    if (spans[i].parent < 0) return -1;
    uint32_t p = by_id.Find(spans[i].lane, spans[i].parent);
    return p == SpanById::kNone || p == i ? -1 : static_cast<int64_t>(p);
  };
  // end[i]: the repaired end (kDropped when nothing is left), filled parents first
  // with an explicit stack: Python stacks can be thousands of frames deep.
  HugeVector<int64_t> end(spans.size(), kUnknown);
  HugeVector<uint8_t> on_path(spans.size(), 0);
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
