// The tokenizer of the loader: walks the top level of a trace as a byte stream, keeps
// the header's values, and cuts traceEvents into chunks of whole event objects.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "load/byte_source.h"
#include "load/event_parser.h"
#include "torch2pprof/stages/trace.h"

namespace torch2pprof {

// simdjson's parser needs ~5 bytes per byte of document, so chunks stay small: a chunk
// is the whole events of one read.
inline constexpr size_t kReadSize = 512 << 10;
inline constexpr size_t kMaxHeaderValue = 64 << 20;  // header values kept as raw text up to this size
// The most text one element of traceEvents may hold, and text between two elements that
// is no white space or comma: both are held whole while they are read, so past this the
// input is refused (with its offset) rather than held. White space is never held.
inline constexpr size_t kMaxElement = 64 << 20;
inline constexpr size_t kPadding = 64;  // >= simdjson::SIMDJSON_PADDING

// A range of traceEvents that a worker reads and cuts itself (CutRange): the input's
// bytes [offset, offset + len), starting just after '[' or just after an event.
struct Range {
  uint64_t offset = 0;
  size_t len = 0;
  bool after_event = false;  // a comma must come first
};

// Where the scanner goes on cutting itself after handing on ranges: the start of the
// first range a worker could not cut, or the end of the last; `events` were in the
// ranges before it, `bytes` long. It hands on ranges again after the first event that
// ends at or past `scan_to` (the end of the range that could not be cut).
struct Resume {
  uint64_t offset = 0;
  bool after_event = false;
  uint64_t events = 0;
  uint64_t scan_to = 0;
  uint64_t bytes = 0;
};

// A piece of traceEvents on its way from the scanner to a parser: the scanner's read
// buffer itself, not a copy. buf[begin, begin + len) is "[ev, ev, ...]" (the events as
// the input has them, a '[' written over the byte before the first and a ']' over the
// byte after the last), followed by simdjson's padding; starts are relative to begin.
struct Chunk {
  std::vector<char> buf;
  size_t begin = 0, len = 0;
  std::vector<ChunkStart> starts;

  const char* data() const { return buf.data() + begin; }
  size_t capacity() const { return buf.size() - begin; }
};

// Where the scanner sends a full chunk; returns an empty one to fill next.
class ChunkSink {
 public:
  virtual ~ChunkSink() = default;
  virtual std::unique_ptr<Chunk> Emit(std::unique_ptr<Chunk> chunk) = 0;
  // A sink whose workers read and cut ranges themselves, from a seekable source.
  virtual bool TakesRanges() const { return false; }
  // False once a range before it could not be cut: the scanner stops handing on ranges.
  virtual bool EmitRange(const Range&) { return false; }
  // After the last range: waits until every range before the first that could not be
  // cut is merged, and says where the scanner goes on. *resume holds the end of the last
  // range handed on; the sink adds the events and bytes of the ranges merged, or puts
  // the start of the first range that could not be cut in its place.
  virtual void EndRanges(Resume*) {}
};

// Reads `range` into chunk's buffer and cuts it into events, the way the scanner would
// where the text is plain: false unless every element is an object, every gap is white
// space around one comma (none before the first element after '['), and the range ends
// just after an event. Then chunk is ready to parse. Thread-safe for one chunk each.
bool CutRange(const ByteSource& src, const Range& range, Chunk* chunk);

class Window;

// Walks the top level of the trace and cuts traceEvents into chunks. Errors in the
// input throw Error (the chunks cut before go out first, so an earlier error wins).
class Scanner {
 public:
  // range_bytes: how much of the text a range given to the sink's workers holds (at
  // least); 0: one read's worth (kReadSize).
  Scanner(ByteSource& src, bool strict, bool allow_truncated, size_t range_bytes = 0);
  ~Scanner();
  void Run(ChunkSink& sink);

  TraceHeader& header();
  uint64_t not_objects() const;
  uint64_t garbage() const;
  const std::vector<uint64_t>& garbage_offsets() const;
  bool truncated() const;
  uint64_t cut_on_workers() const;  // bytes in the ranges the sink's workers cut

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace torch2pprof
