// Reads the events of one chunk of traceEvents (a JSON array of event objects) with
// simdjson on-demand, compiled for the build's x86-64 level (the CLI checks the CPU).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "torch2pprof/stages/trace.h"

namespace torch2pprof {

// One event's fields; the views are valid only during EventSink::OnEvent.
// The numbers of an event, as the parser reads them and a batch keeps them.
struct EventValues {
  EventArgs args;              // the ids and kernel metrics in args
  int64_t correlation = -1;    // args.correlation: links a runtime call and its device work
  int32_t device = -1;         // args.device of device events
  int64_t python_id = -1;      // args["Python id"] of python_function events
  int64_t python_parent = -1;  // args["Python parent id"]; -1 when null or absent
  int64_t sequence = -1;       // args["Sequence number"] of operators
  int64_t fwd_thread = -1;     // args["Fwd thread id"]
  // [memory] fields
  int64_t bytes = 0, total_allocated = -1, total_reserved = -1;
  uint64_t addr = 0;
  int32_t device_type = -1, device_id = -1;
  int64_t ts = 0;   // ns
  int64_t dur = 0;  // ns
  bool has_ts = false;
  bool has_dur = false;  // false when absent or null
  uint64_t offset = 0;   // where the event starts in the uncompressed input
  uint64_t id = 0;       // "id" of flow events
  bool has_id = false;
};

struct RawEvent : EventValues {
  std::string_view ph;    // "?" when ph is not a string
  std::string_view name;  // strings as written (unescaped); other JSON as its text
  std::string_view cat;
  std::string_view pid;  // lane text: strings as they are, integral numbers without decimals
  std::string_view tid;
  std::string_view meta_name;   // args.name (thread_name / process_name metadata)
  std::string_view input_dims;  // args["Input Dims"] as JSON text
  // A collective's message and a copy's size (few events have one: kept out of
  // EventValues, which every event carries through a batch).
  std::string_view collective;  // args["Collective name"]
  std::string_view dtype;       // args.dtype
  int64_t in_nelems = -1, out_nelems = -1, group_size = -1;
  int64_t copy_bytes = -1;    // args.bytes of copies and sets on the device
  const char* bad = nullptr;  // set: a field has an unusable value (says what)
};

class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void OnEvent(const RawEvent& event) = 0;
  // An event (or text) that cannot be read: counted, or with --strict an error.
  virtual void Bad(Skip why, uint64_t offset, const std::string& what) = 0;
  // An event read after repairing its JSON.
  virtual void Repaired(uint64_t offset) = 0;
};

// Where each event of a chunk starts: in the chunk, and in the input. Constructed in
// place (emplace_back): one built on the stack and copied in whole read back its
// just-written fields, a failed store-to-load forward per event of the cut.
struct ChunkStart {
  ChunkStart(size_t p, uint64_t o) : pos(p), offset(o) {}
  size_t pos;
  uint64_t offset;
};

// One parser per thread: it keeps simdjson's buffers sized for chunks between calls.
class EventParser {
 public:
  EventParser();
  ~EventParser();
  // text holds "[ev, ev, ...]" in its first len bytes (between events only white space
  // and a comma), and capacity >= len + simdjson's padding bytes may be read.
  void Parse(const char* text, size_t len, size_t capacity, const std::vector<ChunkStart>& starts, EventSink& sink);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace torch2pprof
