// The parser side of the loader: merges batches of parsed events, in file order, into
// the Trace — lanes, intervals, B/E pairs, flows, memory events, skips and repairs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "load/event_batch.h"
#include "load/python_spans.h"
#include "torch2pprof/stages/trace.h"
#include "torch2pprof/stages/trace_loader.h"

namespace torch2pprof {

class EventBuilder {
 public:
  // expected_events: an upper estimate of the events, to reserve the trace's tables.
  EventBuilder(Trace* trace, const std::string& file, const LoadOptions& options, size_t expected_events);

  // The next batch in file order. With strict, bad input throws Error here.
  void Add(const EventBatch& batch);
  // Closes the load: unmatched B events, the Python span repair, lane names.
  void Finish();

 private:
  struct Event;  // a batch event with global string ids
  void OnEvent(const BatchEvent& e, const std::vector<uint32_t>& ids);
  void Bad(Skip why, uint64_t offset, const std::string& what);
  [[noreturn]] void Fail(uint64_t offset, const std::string& message);
  uint32_t LaneId(uint32_t pid, uint32_t tid);
  void Skipped(Skip why) { ++trace_.stats.skipped[static_cast<int>(why)]; }
  uint32_t Link(const BatchEvent& e, uint32_t cat) const;
  void Append(std::vector<Interval>& intervals, std::vector<EventArgs>& args, int64_t start, int64_t end,
              const BatchEvent& e, uint32_t name, uint32_t cat, uint32_t lane, uint32_t link, uint32_t input_dims);
  void AddPythonSpan(uint32_t lane, uint32_t interval, const BatchEvent& e, int64_t end);
  void AddInterval(int64_t start, int64_t end, const BatchEvent& e, uint32_t name, uint32_t cat, uint32_t lane,
                   uint32_t link, uint32_t input_dims);
  // What the builder needs to know of a category: a flag set, once per string id.
  uint8_t CategoryFlags(uint32_t cat);
  Trace& trace_;
  std::string file_;
  bool details_;
  bool strict_;
  std::vector<uint32_t> ids_;                     // batch string -> trace string id, per batch
  std::unordered_map<uint64_t, uint32_t> lanes_;  // (pid id, tid id) -> lane
  uint64_t last_lane_key_ = UINT64_MAX;
  uint32_t last_lane_ = 0;
  std::vector<std::vector<uint32_t>> open_;               // open B intervals per lane
  std::unordered_map<uint32_t, uint32_t> process_names_;  // pid id -> name id
  std::vector<uint8_t> category_flags_;                   // by string id; 0x80: known
  uint64_t phase_counts_[256] = {};
  uint64_t pending_ = 0;
  std::vector<PythonSpan> python_;  // python_function events, for the repair at the end
  // String ids of the names the builder looks for.
  uint32_t memory_name_, thread_name_, process_name_;
};

}  // namespace torch2pprof
