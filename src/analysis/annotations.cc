// Time per record_function annotation: its own span on the host, the device time its
// launches caused, and the backward pass of the operators it ran (on the autograd
// thread, outside the span).
#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>

#include "analysis/stages.h"
#include "base/sorted_runs.h"
#include "model/open_at.h"

namespace torch2pprof::analysis {

std::vector<AnnotationRow> Annotations(const Events& ev) {
  const TraceModel& m = ev.model();
  const Trace& t = ev.trace();
  const size_t lanes = t.lanes.size();
  std::vector<std::vector<uint32_t>> spans(lanes), backward_roots(lanes);
  if (ev.AnnotationEvents().empty()) return {};
  // Runtime calls that launched work, as (start, the device time launched): the sums
  // below only add these up, in any order the same.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> calls(lanes);
  for (const uint32_t e : ev.AnnotationEvents()) spans[ev.Iv(e).lane].push_back(e);
  for (const auto& [e, launched] : ev.Launched()) {
    if (launched > 0 && ev.RoleOf(e) == Role::kRuntime) calls[ev.Iv(e).lane].emplace_back(ev.Iv(e).start_ns, launched);
  }
  for (const BackwardLink& b : m.backward) backward_roots[ev.Iv(b.backward).lane].push_back(b.backward);
  auto span = [&](uint32_t e) { return std::pair{ev.Iv(e).start_ns, ev.Iv(e).end_ns}; };
  auto by_start = [&](std::vector<uint32_t>& v) {
    std::sort(v.begin(), v.end(), [&](uint32_t x, uint32_t y) {
      return std::make_tuple(ev.Iv(x).start_ns, -ev.Iv(x).end_ns, x) <
             std::make_tuple(ev.Iv(y).start_ns, -ev.Iv(y).end_ns, y);
    });
  };
  std::unordered_map<uint32_t, int64_t> device;  // by annotation and backward root: the device time launched
  // An event's annotations: those open on its lane at its start.
  for (size_t lane = 0; lane < lanes; ++lane) {
    by_start(spans[lane]);
    by_start(backward_roots[lane]);
    SortRuns(calls[lane].begin(), calls[lane].end(), std::less<>());
    SweepOpen(spans[lane], span, calls[lane], [&](int64_t launched, const std::vector<uint32_t>& open) {
      for (uint32_t a : open) device[a] += launched;
    });
    SweepOpen(backward_roots[lane], span, calls[lane], [&](int64_t launched, const std::vector<uint32_t>& open) {
      if (!open.empty()) device[open.back()] += launched;
    });
  }
  // Each backward link's forward operator, by lane and start: its annotations are
  // annotation_pool[annotations_of[link]], a (first, count) range.
  std::vector<std::vector<std::pair<int64_t, uint32_t>>> forwards(lanes);
  for (uint32_t k = 0; k < m.backward.size(); ++k) {
    const Interval& f = ev.Iv(m.backward[k].forward);
    if (!spans[f.lane].empty()) forwards[f.lane].emplace_back(f.start_ns, k);
  }
  std::vector<std::pair<uint32_t, uint32_t>> annotations_of(m.backward.size(), {0, 0});
  std::vector<uint32_t> annotation_pool;
  for (size_t lane = 0; lane < lanes; ++lane) {
    if (forwards[lane].empty()) continue;
    SortRuns(forwards[lane].begin(), forwards[lane].end(), std::less<>());
    SweepOpen(spans[lane], span, forwards[lane], [&](uint32_t link, const std::vector<uint32_t>& open) {
      annotations_of[link] = {static_cast<uint32_t>(annotation_pool.size()), static_cast<uint32_t>(open.size())};
      annotation_pool.insert(annotation_pool.end(), open.begin(), open.end());
    });
  }
  std::map<uint32_t, AnnotationRow> rows;  // by name id
  for (const std::vector<uint32_t>& lane : spans) {
    for (uint32_t a : lane) {
      AnnotationRow& r = rows[ev.Iv(a).name];
      ++r.calls;
      r.host_ns += ev.Dur(a);
      r.device_ns += device.count(a) ? device[a] : 0;
    }
  }
  // The backward of the operators each annotation ran, once per annotation and root: a
  // root already inside the annotation's own span (autograd on the same thread) is in
  // its host and device time.
  for (uint32_t k = 0; k < m.backward.size(); ++k) {
    const BackwardLink& b = m.backward[k];
    const Interval& root = ev.Iv(b.backward);
    const auto [first, count] = annotations_of[k];
    for (uint32_t i = first; i < first + count; ++i) {
      const uint32_t a = annotation_pool[i];
      const Interval& ann = ev.Iv(a);
      if (ann.lane == root.lane && ann.start_ns <= root.start_ns && root.end_ns <= ann.end_ns) continue;
      AnnotationRow& r = rows[ann.name];
      r.backward_host_ns += root.end_ns - root.start_ns;
      r.backward_device_ns += device.count(b.backward) ? device[b.backward] : 0;
    }
  }
  std::vector<AnnotationRow> out;
  for (auto& [name, r] : rows) {
    r.name = std::string(t.strings.Get(name));
    out.push_back(std::move(r));
  }
  std::stable_sort(out.begin(), out.end(), [](const AnnotationRow& x, const AnnotationRow& y) {
    return std::tie(y.host_ns, x.name) < std::tie(x.host_ns, y.name);
  });
  return out;
}

}  // namespace torch2pprof::analysis
