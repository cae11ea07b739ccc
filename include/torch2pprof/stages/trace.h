// The trace as the loader hands it on: lanes, timed intervals in file order, and
// header metadata, with every name interned once and every time in integer ns.
//
// A stage header: for tools that read traces themselves. Unlike torch2pprof.h and the
// headers it includes, it carries no stability promise: it changes with the stages.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "torch2pprof/events.h"

namespace torch2pprof {

class StringIndex;

// Interns strings: equal text gives the same id; id 0 is always "".
// Views returned stay valid for the table's lifetime (also across moves).
class StringTable {
 public:
  StringTable();
  ~StringTable();
  StringTable(StringTable&&) noexcept;
  StringTable& operator=(StringTable&&) noexcept;
  StringTable(const StringTable&) = delete;
  StringTable& operator=(const StringTable&) = delete;

  uint32_t Intern(std::string_view s);
  // Id of s if interned, else -1.
  int64_t Find(std::string_view s) const;
  std::string_view Get(uint32_t id) const { return views_[id]; }
  size_t size() const { return views_.size(); }

 private:
  std::string_view Store(std::string_view s);
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t block_used_ = 0;
  size_t block_size_ = 0;
  std::vector<std::string_view> views_;
  std::unique_ptr<StringIndex> index_;  // private: base/string_index.h
};

// A lane is one (pid, tid) pair: a CPU thread or a GPU stream.
struct Lane {
  std::string pid;           // the trace's pid as text (integral numbers without decimals)
  std::string tid;           // the trace's tid as text
  std::string thread_name;   // from ph "M" thread_name, or empty
  std::string process_name;  // from ph "M" process_name of this pid, or empty
  int32_t device = -1;       // args.device of its device events (GPU streams), or -1
};

// Flow events that link two events across lanes. Ids are per kind: an ac2g flow and a
// fwdbwd flow may share an id.
enum class FlowKind : uint8_t {
  kLaunch,           // ac2g / async_cpu_to_gpu: "s" where the CPU launched work, "f" where the device ran it
  kForwardBackward,  // fwdbwd: "s" on a forward op, "f" at the start of the backward node it created
};

struct Flow {
  int64_t ts_ns;
  uint64_t id;
  uint32_t lane;
  char phase;  // 's' or 'f'
  FlowKind kind;
};

// One timed event: an X event with dur > 0, or a matched B/E pair.
struct Interval {
  int64_t start_ns;  // ts, exact to the nanosecond
  int64_t end_ns;    // ts + dur (or the E's ts); always > start_ns
  uint32_t name;     // StringTable id of the event name, as written
  uint32_t cat;      // StringTable id of the category ("" when absent)
  uint32_t lane;     // index into Trace::lanes
  // The id that links the event to its twin on another lane, + 1 (0: none):
  // args.correlation for runtime calls and device work (the call launched the work);
  // args["External id"] for user_annotation and gpu_user_annotation (the device
  // annotation mirrors the host annotation with the same External id).
  uint32_t link;
};

// The args of an X event that analyze reads (kept with LoadOptions::details).
// (The correlation is Interval::link; a device event's device is its Lane::device.)
struct EventArgs {
  int64_t external_id = -1;  // "External id" (or old "external id"); -1 when absent
  uint32_t input_dims = 0;   // StringTable id of "Input Dims" as JSON text; 0 when absent
  float blocks_per_sm = -1;  // "blocks per SM"; < 0 when absent
  float occupancy = -1;      // "est. achieved occupancy %"; < 0 when absent
};

// "Sequence number" and "Fwd thread id" of an operator: a forward op and the backward
// node it created share a sequence number.
struct SequenceMark {
  uint32_t interval;  // index into Trace::intervals
  int32_t
      fwd_thread;  // "Fwd thread id": the forward op's thread (profiler numbering) on backward nodes; 0 on forward ops
  int64_t sequence;  // "Sequence number"
};

// The message of a collective as PyTorch records it on NCCL kernels and
// record_param_comms ("Collective name", "In msg nelems", "Out msg nelems", "Group
// size", "dtype"; kept with LoadOptions::details).
struct CollectiveArgs {
  uint32_t interval;             // index into Trace::intervals
  uint32_t name = 0, dtype = 0;  // StringTable ids; 0 when absent
  int64_t in_nelems = -1, out_nelems = -1;
  int32_t group_size = -1;
};

// A "[memory]" instant event (kept with LoadOptions::details).
struct MemoryEvent {
  int64_t ts_ns;
  uint32_t lane;
  int32_t device_type;      // "Device Type": 0 CPU, 1 CUDA, ...
  int32_t device_id;        // "Device Id"
  int64_t bytes;            // "Bytes": > 0 allocates, < 0 frees
  uint64_t addr;            // "Addr"; 0 when absent
  int64_t total_allocated;  // "Total Allocated"; -1 when absent
  int64_t total_reserved;   // "Total Reserved"; -1 when absent
};

// Why an event carried no time. One table (kSkipReasons) names and describes each.
enum class Skip : int {
  kZeroDuration,       // X event with dur 0
  kNegativeDuration,   // X event with dur < 0
  kNoDuration,         // X event without dur
  kNoTimestamp,        // X/B/E event without ts
  kUnmatchedEnd,       // E with no open B on its lane
  kUnmatchedBegin,     // B never closed by an E
  kEmptyPair,          // B/E pair whose E is not after its B
  kNotAnObject,        // an element of traceEvents that is not a JSON object
  kBadJson,            // an event that is not JSON even after repair
  kBadValue,           // an event whose ts, dur, pid or tid has an unusable value
  kGarbage,            // text between events that is no JSON value (log lines, missing commas)
  kProfilerSpan,       // the profiler's own span (cat Trace, "PyTorch Profiler (0)"): not work
  kPythonAfterParent,  // a python_function that starts at or after its Python parent's end (repair)
  kCount
};

struct SkipReason {
  const char* key;          // short stable key, e.g. "zero_duration"
  const char* description;  // one line for people
};
extern const std::array<SkipReason, static_cast<int>(Skip::kCount)> kSkipReasons;

struct LoadStats {
  uint64_t json_bytes = 0;      // uncompressed bytes read
  uint64_t cut_on_workers = 0;  // of json_bytes: cut into events on the parse workers (the scanner cut the rest)
  uint64_t events = 0;          // elements of traceEvents
  std::map<std::string, uint64_t> phases;                          // events by ph ("X", "B", "M", ...)
  std::array<uint64_t, static_cast<int>(Skip::kCount)> skipped{};  // by Skip
  uint64_t skipped_total() const;
  // Broken input that was read anyway: events converted after repair (raw control
  // characters, lone backslashes, stray quotes, invalid UTF-8, bare N/A), and the
  // offsets of the first events skipped as kBadJson, kBadValue or kGarbage.
  uint64_t repaired = 0;
  std::vector<uint64_t> bad_offsets;  // at most kMaxBadOffsets, in file order
  uint64_t bad_total() const;
  uint64_t python_clipped = 0;  // python_function events cut back to their Python parent's end (repair)
  bool truncated = false;       // the input ended early (with allow_truncated)
  uint64_t truncated_at = 0;    // uncompressed bytes read when it ended
};
inline constexpr size_t kMaxBadOffsets = 5;

// Top-level keys other than traceEvents.
struct TraceHeader {
  bool has_base_time = false;
  int64_t base_time_ns = 0;  // baseTimeNanoseconds: wall-clock ns of ts == 0
  std::string trace_name;    // traceName
  // Every other top-level key with its raw JSON text (deviceProperties, distributedInfo, ...).
  std::map<std::string, std::string> raw;
};

struct Trace {
  std::string file;  // the input's name as the user gave it
  StringTable strings;
  std::vector<Lane> lanes;          // in order of first appearance
  std::vector<Interval> intervals;  // in file order (of the X, or of the B)
  TraceHeader header;
  LoadStats stats;
  // X events with dur 0 (end == start) in file order: those with a correlation
  // (zero-length launch calls) always, all of them with LoadOptions::details.
  std::vector<Interval> zero_length;
  std::vector<Flow> flows;                  // ac2g and fwdbwd flow events, file order
  std::vector<SequenceMark> sequence;       // operators with a "Sequence number", in interval order
  std::vector<CollectiveArgs> collectives;  // with details: events that name a collective, in interval order
  // With details: "bytes" of copies and sets on the device, (interval, bytes) in interval order.
  std::vector<std::pair<uint32_t, int64_t>> copy_bytes;
  std::vector<MemoryEvent> memory;  // "[memory]" events in file order
  // With LoadOptions::details only:
  std::vector<EventArgs> args;              // parallel to intervals
  std::vector<EventArgs> zero_length_args;  // parallel to zero_length
};

// Events numbered over the trace as loaded: the intervals in file order, then the
// zero-length X events. Stages that read both refer to an event by this number.
inline size_t EventCount(const Trace& t) { return t.intervals.size() + t.zero_length.size(); }
inline const Interval& EventAt(const Trace& t, size_t e) {
  return e < t.intervals.size() ? t.intervals[e] : t.zero_length[e - t.intervals.size()];
}

// The header's distributedInfo (rank, world_size, backend); -1 / "" where absent or
// not an integer / a string.
struct DistributedInfo {
  int64_t rank = -1, world_size = -1;
  std::string backend;
};
DistributedInfo ReadDistributedInfo(const TraceHeader& header);

// The header's deviceProperties, unnamed (DeviceInfo::device empty): the model names
// devices (DeviceName in trace_model.h).
std::vector<DeviceInfo> ReadDeviceProperties(const TraceHeader& header);

// Wall-clock nanoseconds of the trace time `first_start`, where the trace tells it:
// baseTimeNanoseconds + ts, or ts itself when it is an epoch time; else 0.
int64_t WallClockStart(const Trace& trace, int64_t first_start);

}  // namespace torch2pprof
