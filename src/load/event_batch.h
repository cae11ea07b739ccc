// One chunk's events as a parse worker read them, their strings interned in the batch:
// workers fill batches side by side, the builder alone merges them into the Trace.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/string_index.h"
#include "load/event_parser.h"

namespace torch2pprof {

// A RawEvent with its strings as ids into EventBatch::strings (0 is ""); or, in file
// order among the events, an unreadable event or the note that the next was repaired.
struct BatchEvent : EventValues {
  BatchEvent() = default;
  explicit BatchEvent(const EventValues& values) : EventValues(values) {}
  enum Kind : uint8_t { kEvent, kBad, kRepaired } kind = kEvent;
  Skip bad = Skip::kBadJson;  // kBad: why
  uint32_t ph = 0, name = 0, cat = 0, pid = 0, tid = 0, meta_name = 0, input_dims = 0;
  uint32_t message = 0;  // kBad: what, for --strict
};

// Args few events have, beside the batch's events: a collective's message (name 0:
// none) and a copy's bytes (-1: none).
struct BatchRare {
  uint32_t event;  // index into the batch's events
  uint32_t name, dtype;
  int64_t in_nelems, out_nelems;
  int32_t group_size;
  int64_t copy_bytes;
};

class EventBatch final : public EventSink {
 public:
  // details: keep "Input Dims" (analyze reads it; convert does not).
  explicit EventBatch(bool details = true);
  void Clear();
  void OnEvent(const RawEvent& event) override;
  void Bad(Skip why, uint64_t offset, const std::string& what) override;
  void Repaired(uint64_t offset) override;

  const std::vector<std::string_view>& strings() const { return strings_; }
  const std::vector<BatchEvent>& events() const { return events_; }
  const std::vector<BatchRare>& rare() const { return rare_; }

 private:
  uint32_t Intern(std::string_view s);
  // A field mostly repeats the event before's (ph, cat, pid, tid): compared first,
  // it is interned without a hash.
  uint32_t InternLike(std::string_view s, uint32_t* last);
  uint32_t last_[4] = {};
  std::vector<std::string_view> strings_;
  StringIndex index_;
  std::vector<std::vector<char>> blocks_;  // the strings' text, reused batch after batch
  size_t block_ = 0, used_ = 0;
  std::vector<BatchEvent> events_;
  std::vector<BatchRare> rare_;  // by event
  bool details_;
};

}  // namespace torch2pprof
