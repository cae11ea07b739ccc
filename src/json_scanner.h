// The tokenizer of the loader: walks the top level of a trace as a byte stream, keeps
// the header's values, and cuts traceEvents into chunks of whole event objects.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "byte_source.h"
#include "event_parser.h"
#include "torch2pprof/trace.h"

namespace torch2pprof {

// simdjson's parser needs ~5 bytes per byte of document, so chunks stay small: a chunk
// is the whole events of one read.
inline constexpr size_t kReadSize = 512 << 10;
inline constexpr size_t kMaxHeaderValue = 64 << 20;  // header values kept as raw text up to this size
inline constexpr size_t kPadding = 64;               // >= simdjson::SIMDJSON_PADDING

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
};

class Window;

// Walks the top level of the trace and cuts traceEvents into chunks. Errors in the
// input throw Error (the chunks cut before go out first, so an earlier error wins).
class Scanner {
 public:
  Scanner(ByteSource& src, bool strict, bool allow_truncated);
  ~Scanner();
  void Run(ChunkSink& sink);

  TraceHeader& header();
  uint64_t not_objects() const;
  uint64_t garbage() const;
  const std::vector<uint64_t>& garbage_offsets() const;
  bool truncated() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace torch2pprof
