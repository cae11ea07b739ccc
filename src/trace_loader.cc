// The loader never holds the whole JSON text: a small scanner walks the top level
// and cuts traceEvents into chunks of whole event objects, and simdjson's on-demand
// parser reads each chunk. Memory grows with retained intervals, not with the file.
// With threads > 1 the scanner (read, inflate, cut) and the builder (parse, intern,
// match B/E) run on two threads joined by a short queue; the result is the same.
#include "torch2pprof/trace_loader.h"

#include <algorithm>
#include <charconv>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "byte_source.h"
#include "event_parser.h"
#include "json_blocks.h"
#include "python_spans.h"
#include "torch2pprof/error.h"

namespace torch2pprof {
namespace {

// simdjson's parser needs ~5 bytes per byte of document, so chunks stay small.
constexpr size_t kReadSize = 1 << 20;
constexpr size_t kChunkSize = 512 << 10;      // JSON text per simdjson document
constexpr size_t kMaxHeaderValue = 64 << 20;  // header values kept as raw text up to this size
constexpr size_t kPadding = 64;               // >= simdjson::SIMDJSON_PADDING
constexpr int64_t kDead = std::numeric_limits<int64_t>::min();

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

std::string Describe(char c) {
  if (c >= 0x20 && c < 0x7f) return std::string("'") + c + "'";
  char buf[16];
  std::snprintf(buf, sizeof buf, "byte 0x%02x", static_cast<unsigned char>(c));
  return buf;
}

// A sliding window over the uncompressed stream. Bytes from `mark` on are kept
// when the window refills, so a partly read event survives a refill.
class Window {
 public:
  explicit Window(ByteSource& src) : src_(src) { buf_.resize(kReadSize); }

  // Makes more bytes available after end_; returns how far existing bytes moved
  // toward the front. `ok` is false at the end of the input.
  size_t Refill(bool* ok) {
    size_t keep = std::min(pos, mark);
    size_t shift = keep;
    if (keep > 0) {
      std::memmove(buf_.data(), buf_.data() + keep, end - keep);
      end -= keep;
      pos -= keep;
      if (mark != kNoMark) mark -= keep;
      base_ += keep;
    }
    if (buf_.size() - end < kReadSize / 2) buf_.resize(std::max(buf_.size() * 2, end + kReadSize));
    size_t n = src_.Read(buf_.data() + end, buf_.size() - end);
    end += n;
    *ok = n > 0;
    return shift;
  }

  bool Avail() {
    if (pos < end) return true;
    bool ok;
    Refill(&ok);
    return ok;
  }

  // Skips white space; false at the end of the input.
  bool SkipSpace() {
    for (;;) {
      while (pos < end && IsSpace(buf_[pos])) ++pos;
      if (pos < end) return true;
      if (!Avail()) return false;
    }
  }

  char* data() { return buf_.data(); }
  uint64_t offset(size_t at) const { return base_ + at; }
  uint64_t offset() const { return base_ + pos; }

  static constexpr size_t kNoMark = std::numeric_limits<size_t>::max();
  size_t pos = 0, end = 0, mark = kNoMark;

 private:
  ByteSource& src_;
  std::vector<char> buf_;
  uint64_t base_ = 0;
};

// A piece of traceEvents on its way from the scanner to the builder: "[ev,ev,...]"
// and simdjson's padding, or the scanner's error at this point of the stream.
struct Chunk {
  std::string text;
  size_t len = 0;
  std::vector<ChunkStart> starts;
  std::exception_ptr error;

  void Reset() {
    text.assign(1, '[');
    len = 0;
    starts.clear();
    error = nullptr;
  }
};

// Where the scanner sends a full chunk; returns an empty one to fill next.
class ChunkSink {
 public:
  virtual ~ChunkSink() = default;
  virtual std::unique_ptr<Chunk> Emit(std::unique_ptr<Chunk> chunk) = 0;
};

// Walks the top level of the trace and cuts traceEvents into chunks.
class Scanner {
 public:
  Scanner(ByteSource& src, bool strict, bool allow_truncated)
      : src_(src), win_(src), strict_(strict), allow_truncated_(allow_truncated) {}

  void Run(ChunkSink& sink) {
    sink_ = &sink;
    chunk_ = std::make_unique<Chunk>();
    chunk_->Reset();
    try {
      RunTopLevel();
    } catch (const Truncated&) {
      // --allow-truncated: everything cut before the end is kept.
      FlushChunk();
      truncated_ = true;
    }
  }

  void RunTopLevel() {
    if (!win_.SkipSpace()) Fail(0, "the input is empty: expected a JSON trace");
    if (Peek() == '\xef') Fail(win_.offset(), "unexpected byte order mark: expected '{' or '['");
    char c = Peek();
    if (c == '[') {
      ++win_.pos;
      seen_events_ = true;
      ParseEventArray();
    } else if (c == '{') {
      ++win_.pos;
      ParseTopObject();
    } else {
      Fail(win_.offset(), "expected '{' or '[' at the start of a Chrome trace, found " + Describe(c));
    }
    if (win_.SkipSpace()) Fail(win_.offset(), "unexpected data after the end of the trace: " + Describe(Peek()));
    if (!seen_events_) Fail(-1, "not a Chrome trace: the JSON object has no \"traceEvents\" array");
  }

  TraceHeader& header() { return header_; }
  uint64_t not_objects() const { return not_objects_; }
  uint64_t garbage() const { return garbage_; }
  const std::vector<uint64_t>& garbage_offsets() const { return garbage_offsets_; }
  bool truncated() const { return truncated_; }

 private:
  // Events already cut are handed on first, so an earlier error in them wins.
  [[noreturn]] void Fail(int64_t offset, const std::string& msg) {
    if (!failing_) {
      failing_ = true;
      FlushChunk();
    }
    ThrowInput(src_.name(), offset, msg);
  }

  void FlushChunk() {
    if (chunk_->starts.empty()) return;
    chunk_->text.push_back(']');
    chunk_->len = chunk_->text.size();
    chunk_->text.append(kPadding, ' ');
    chunk_ = sink_->Emit(std::move(chunk_));
    chunk_->Reset();
  }

  char Peek() { return win_.data()[win_.pos]; }

  [[noreturn]] void FailTruncated() {
    if (allow_truncated_ && seen_events_) throw Truncated{};
    std::string where = in_events_ ? "inside traceEvents after " + std::to_string(events_scanned_) + " events"
                                   : "before the trace was complete";
    Fail(win_.offset(win_.end), "the trace is truncated: the input ends " + where);
  }

  // Expects one of the characters in `chars` after optional white space.
  char Expect(const char* chars, const char* what) {
    if (!win_.SkipSpace()) FailTruncated();
    char c = Peek();
    if (!std::strchr(chars, c) || c == '\0')
      Fail(win_.offset(), std::string("expected ") + what + ", found " + Describe(c));
    ++win_.pos;
    return c;
  }

  // Scans one JSON value at pos (after white space) and returns [start, end) in the
  // window as offsets relative to the window's mark. Strings are skipped with their
  // escapes; nesting is counted, not validated (simdjson validates events).
  void ScanValue(size_t* start, size_t* stop) {
    if (!win_.SkipSpace()) FailTruncated();
    win_.mark = win_.pos;
    size_t i = win_.pos;
    char first = win_.data()[i];
    int depth = 0;
    bool in_str = false;
    size_t str_start = 0;  // first byte after the opening quote of the current string
    bool scalar = first != '{' && first != '[' && first != '"';
    for (;;) {
      if (i >= win_.end) {
        bool ok;
        size_t shift = win_.Refill(&ok);
        i -= shift;
        str_start -= std::min(str_start, shift);
        if (!ok) {
          if (scalar && depth == 0 && i > win_.mark) break;  // a number at the very end
          FailTruncated();
        }
        continue;
      }
      const char* d = win_.data();
      if (in_str) {
        // Most bytes of an event are inside strings: jump to the next quote (glibc's
        // memchr is vectorised) and count the backslashes before it; an odd number
        // means the quote is escaped. The string's start bounds the look-back.
        const void* q = std::memchr(d + i, '"', win_.end - i);
        if (!q) {
          i = win_.end;
          continue;
        }
        size_t quote = static_cast<size_t>(static_cast<const char*>(q) - d);
        size_t k = quote;
        while (k > str_start && d[k - 1] == '\\') --k;
        i = quote + 1;
        if ((quote - k) % 2 == 1) continue;
        in_str = false;
        if (depth == 0) break;
        continue;
      }
      char c = d[i];
      if (scalar) {
        if (c == ',' || c == '}' || c == ']' || IsSpace(c)) break;
        ++i;
        continue;
      }
      if (c == '"') {
        in_str = true;
        str_start = i + 1;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (--depth == 0) {
          ++i;
          break;
        }
      }
      ++i;
    }
    *start = win_.mark;
    *stop = i;
    win_.pos = i;
  }

  void ParseTopObject() {
    if (!win_.SkipSpace()) FailTruncated();
    if (Peek() == '}') {
      ++win_.pos;
      return;
    }
    for (;;) {
      if (!win_.SkipSpace()) FailTruncated();
      if (Peek() != '"') Fail(win_.offset(), "expected a key string in the trace object, found " + Describe(Peek()));
      size_t a, b;
      uint64_t key_offset = win_.offset();
      ScanValue(&a, &b);
      std::string key = DecodeString(std::string(win_.data() + a, b - a), key_offset);
      win_.mark = Window::kNoMark;
      Expect(":", "':' after a key");
      if (key == "traceEvents") {
        if (!win_.SkipSpace()) FailTruncated();
        if (Peek() != '[') Fail(win_.offset(), "expected '[' to open traceEvents, found " + Describe(Peek()));
        ++win_.pos;
        seen_events_ = true;
        ParseEventArray();
      } else {
        uint64_t value_offset = win_.offset();
        ScanValue(&a, &b);
        if (b - a <= kMaxHeaderValue) HandleHeader(key, std::string(win_.data() + a, b - a), value_offset);
        win_.mark = Window::kNoMark;
      }
      if (Expect(",}", "',' or '}' in the trace object") == '}') return;
    }
  }

  std::string DecodeString(const std::string& raw, uint64_t offset) {
    if (raw.find('\\') == std::string::npos && raw.size() >= 2) return raw.substr(1, raw.size() - 2);
    try {
      return nlohmann::json::parse(raw).get<std::string>();
    } catch (const std::exception&) {
      Fail(offset, "invalid JSON string");
    }
  }

  void HandleHeader(const std::string& key, std::string raw, uint64_t offset) {
    TraceHeader& h = header_;
    if (key == "baseTimeNanoseconds") {
      std::string text = !raw.empty() && raw.front() == '"' ? DecodeString(raw, offset) : raw;
      int64_t ns = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), ns);
      if (ec == std::errc() && end == text.data() + text.size()) {
        h.has_base_time = true;
        h.base_time_ns = ns;
      }
    } else if (key == "traceName" && !raw.empty() && raw.front() == '"') {
      h.trace_name = DecodeString(raw, offset);
    }
    h.raw[key] = std::move(raw);
  }

  // Cuts the elements of traceEvents (after its '[') into events, 64 bytes at a
  // time; the few bytes between elements are checked by ScanGap.
  void ParseEventArray() {
    in_events_ = true;
    JsonBlocks blocks;
    int depth = 0;               // nesting below the traceEvents array
    size_t gap = win_.pos;       // where the bytes since the last element (or '[') start
    bool after_element = false;  // whether an element precedes the gap
    size_t element = 0;          // where the current element starts
    size_t i = win_.pos;         // the next block
    char tail[64];
    for (;;) {
      // Keep what is still needed when the window refills: the gap, or the element.
      win_.mark = depth == 0 ? gap : element;
      const char* block;
      size_t valid = 64;
      if (win_.end - i < 64) {
        bool ok;
        win_.pos = i;
        size_t shift = win_.Refill(&ok);
        i -= shift;
        (depth == 0 ? gap : element) -= shift;
        if (ok) continue;
        valid = win_.end - i;  // the input ended: scan what is left, padded with spaces
        if (valid == 0) FailTruncated();
        std::memcpy(tail, win_.data() + i, valid);
        std::memset(tail + valid, ' ', 64 - valid);
        block = tail;
      } else {
        block = win_.data() + i;
      }
      uint64_t open, close;
      blocks.Next(block, &open, &close);
      for (uint64_t structural = open | close; structural; structural &= structural - 1) {
        int b = __builtin_ctzll(structural);
        size_t j = i + static_cast<size_t>(b);
        const char* d = win_.data();
        if (open >> b & 1) {
          if (depth++ == 0) {
            ScanGap(gap, j, after_element, false);
            element = j;
          }
        } else if (depth == 0) {
          if (d[j] != ']') {
            if (strict_) Fail(Offset(j), "expected ',' or ']' after an event in traceEvents, found '}'");
            continue;  // a stray '}' between events: ScanGap counts it as garbage
          }
          ScanGap(gap, j, after_element, true);
          win_.pos = j + 1;
          win_.mark = Window::kNoMark;
          FlushChunk();
          in_events_ = false;
          return;
        } else if (--depth == 0) {
          ++events_scanned_;
          if (d[element] == '{') {
            AppendEvent(element, j + 1);
          } else {
            ++not_objects_;  // an array among the events
          }
          gap = j + 1;
          after_element = true;
        }
      }
      if (valid < 64) FailTruncated();
      i += 64;
    }
  }

  int64_t Offset(size_t at) const { return static_cast<int64_t>(win_.offset(at)); }

  void AppendEvent(size_t from, size_t to) {
    std::string& text = chunk_->text;
    if (text.size() > 1) text.push_back(',');
    chunk_->starts.push_back({text.size(), win_.offset(from)});
    text.append(win_.data() + from, to - from);
    if (text.size() >= kChunkSize) FlushChunk();
  }

  // The bytes between two elements of traceEvents (or after '[', or before ']'):
  // white space, the separating comma, and elements that are no objects or arrays.
  // Anything else (a log line, a missing comma) is garbage: counted once per run.
  void ScanGap(size_t from, size_t to, bool after_element, bool at_end) {
    const char* d = win_.data();
    bool need_comma = after_element, in_garbage = false;
    for (size_t k = from; k < to;) {
      char c = d[k];
      if (IsSpace(c)) {
        ++k;
        continue;
      }
      if (c == ',') {
        if (!need_comma && !in_garbage) Garbage(k, "expected an event in traceEvents, found ','");
        need_comma = in_garbage = false;
        ++k;
        continue;
      }
      size_t e = k + 1;
      if (c == '"') {
        while (e < to && !(d[e] == '"' && d[e - 1] != '\\')) ++e;
        e = std::min(e + 1, to);
      } else {
        while (e < to && !IsSpace(d[e]) && d[e] != ',') ++e;
      }
      std::string_view token(d + k, e - k);
      bool scalar = (c == '"' && token.size() >= 2 && token.back() == '"') || token == "true" || token == "false" ||
                    token == "null" || IsNumberToken(token);
      if (!need_comma && !in_garbage && scalar) {
        ++events_scanned_;
        ++not_objects_;
        need_comma = true;
      } else if (!in_garbage) {
        Garbage(k, std::string(need_comma ? "expected ',' or ']' after an event in traceEvents, found "
                                          : "expected an event in traceEvents, found ") +
                       Describe(c));
        in_garbage = true;
      }
      k = e;
    }
    if (need_comma && !at_end && !in_garbage) {
      Garbage(to, "expected ',' or ']' after an event in traceEvents, found " + Describe(d[to]));
    }
  }

  static bool IsNumberToken(std::string_view t) {
    int64_t ignored;
    return !t.empty() && (t[0] == '-' || (t[0] >= '0' && t[0] <= '9')) &&
           (ParseMicrosToNanos(t, &ignored) || t.find_first_not_of("-+.eE0123456789") == std::string_view::npos);
  }

  struct Truncated {};

  // Text between events that is no JSON value: counted (or, strict, an error).
  void Garbage(size_t at, const std::string& what) {
    if (strict_) Fail(Offset(at), what + " (--strict)");
    ++garbage_;
    if (garbage_offsets_.size() < kMaxBadOffsets) garbage_offsets_.push_back(win_.offset(at));
  }

  ByteSource& src_;
  Window win_;
  bool strict_;
  bool allow_truncated_;
  bool truncated_ = false;
  uint64_t garbage_ = 0;
  std::vector<uint64_t> garbage_offsets_;
  ChunkSink* sink_ = nullptr;
  std::unique_ptr<Chunk> chunk_;
  TraceHeader header_;
  uint64_t events_scanned_ = 0;
  uint64_t not_objects_ = 0;
  bool in_events_ = false;
  bool seen_events_ = false;
  bool failing_ = false;
};

// Turns parsed events into lanes and intervals.
class EventBuilder final : public EventSink {
 public:
  EventBuilder(Trace* trace, const std::string& file, const LoadOptions& options)
      : trace_(*trace), file_(file), details_(options.details), strict_(options.strict) {}

  void Bad(Skip why, uint64_t offset, const std::string& what) override {
    ++trace_.stats.events;  // it was an element of traceEvents all the same
    if (strict_) Fail(offset, what + " (--strict)");
    Skipped(why);
    if (trace_.stats.bad_offsets.size() < kMaxBadOffsets) trace_.stats.bad_offsets.push_back(offset);
  }

  void Repaired(uint64_t offset) override {
    if (strict_) Fail(offset, "invalid JSON in an event (--strict)");
    ++trace_.stats.repaired;
  }

  void Parse(const Chunk& chunk) { parser_->Parse(chunk.text, chunk.len, chunk.starts, *this); }

  [[noreturn]] void Fail(uint64_t offset, const std::string& msg) override {
    ThrowInput(file_, static_cast<int64_t>(offset), msg);
  }

  uint32_t LaneId(std::string_view pid, std::string_view tid) {
    lane_key_.assign(pid);
    lane_key_.push_back('\0');
    lane_key_.append(tid);
    auto it = lane_index_.find(lane_key_);
    if (it != lane_index_.end()) return it->second;
    uint32_t id = static_cast<uint32_t>(trace_.lanes.size());
    trace_.lanes.push_back(Lane{std::string(pid), std::string(tid), "", ""});
    open_.emplace_back();
    lane_index_.emplace(lane_key_, id);
    return id;
  }

  void OnEvent(const RawEvent& ev) override {
    ++trace_.stats.events;
    CountPhase(ev.ph);
    if (ev.ph.size() != 1) return;
    switch (ev.ph[0]) {
      case 'X': {
        if (!ev.has_ts) return Skipped(Skip::kNoTimestamp);
        if (!ev.has_dur) return Skipped(Skip::kNoDuration);
        if (IsProfilerSpan(ev.cat)) return Skipped(Skip::kProfilerSpan);
        bool python = ev.cat == "python_function";
        if (python && ev.python_id >= 0 && ev.dur <= 0) {
          python_.push_back(PythonSpan{LaneId(ev.pid, ev.tid), PythonSpan::kNotAnInterval, ev.python_id,
                                       ev.python_parent, ev.ts, ev.ts + ev.dur});
        }
        if (ev.dur == 0) {
          // Zero-length launch calls still launch kernels: kept when they carry a correlation.
          if (details_ || Correlation(ev)) {
            uint32_t lane = LaneId(ev.pid, ev.tid);
            trace_.zero_length.push_back(MakeInterval(ev.ts, ev.ts, ev, lane));
            if (details_) trace_.zero_length_args.push_back(Args(ev));
          }
          return Skipped(Skip::kZeroDuration);
        }
        if (ev.dur < 0) return Skipped(Skip::kNegativeDuration);
        int64_t end;
        if (__builtin_add_overflow(ev.ts, ev.dur, &end)) Fail(ev.offset, "ts + dur does not fit in 64-bit nanoseconds");
        uint32_t lane = LaneId(ev.pid, ev.tid);
        AddInterval(ev.ts, end, ev, lane);
        if (details_) trace_.args.push_back(Args(ev));
        if (python && ev.python_id >= 0) {
          python_.push_back(PythonSpan{lane, static_cast<uint32_t>(trace_.intervals.size() - 1), ev.python_id,
                                       ev.python_parent, ev.ts, end});
        }
        break;
      }
      case 'B': {
        if (!ev.has_ts) return Skipped(Skip::kNoTimestamp);
        uint32_t lane = LaneId(ev.pid, ev.tid);
        AddInterval(ev.ts, kDead, ev, lane);
        if (details_) trace_.args.push_back(Args(ev));
        open_[lane].push_back(static_cast<uint32_t>(trace_.intervals.size() - 1));
        ++pending_;
        break;
      }
      case 'E': {
        if (!ev.has_ts) return Skipped(Skip::kNoTimestamp);
        auto& stack = open_[LaneId(ev.pid, ev.tid)];
        if (stack.empty()) return Skipped(Skip::kUnmatchedEnd);
        Interval& iv = trace_.intervals[stack.back()];
        stack.pop_back();
        if (ev.ts > iv.start_ns) {
          iv.end_ns = ev.ts;
          --pending_;
        } else {
          Skipped(Skip::kEmptyPair);
        }
        break;
      }
      case 's':
      case 'f':
        if (ev.has_id && ev.has_ts) {
          if (ev.cat == "ac2g" || ev.cat == "async_cpu_to_gpu") {
            trace_.flows.push_back(Flow{ev.ts, ev.id, LaneId(ev.pid, ev.tid), ev.ph[0], FlowKind::kLaunch});
          } else if (ev.cat == "fwdbwd") {
            trace_.flows.push_back(Flow{ev.ts, ev.id, LaneId(ev.pid, ev.tid), ev.ph[0], FlowKind::kForwardBackward});
          }
        }
        break;
      case 'i':
      case 'I':
        if (ev.name == "[memory]" && ev.has_ts) {
          trace_.memory.push_back(MemoryEvent{ev.ts, LaneId(ev.pid, ev.tid), ev.device_type, ev.device_id, ev.bytes,
                                              ev.addr, ev.total_allocated, ev.total_reserved});
        }
        break;
      case 'M':
        if (ev.name == "thread_name") {
          trace_.lanes[LaneId(ev.pid, ev.tid)].thread_name = std::string(ev.meta_name);
        } else if (ev.name == "process_name") {
          process_names_[std::string(ev.pid)] = std::string(ev.meta_name);
        }
        break;
      default:
        break;
    }
  }

  void Skipped(Skip why) { ++trace_.stats.skipped[static_cast<int>(why)]; }

  void CountPhase(std::string_view ph) {
    if (ph.size() == 1) {
      ++phase_counts_[static_cast<unsigned char>(ph[0])];
    } else {
      ++trace_.stats.phases[ph.empty() ? "(none)" : std::string(ph)];
    }
  }

  // id + 1, or 0: CUPTI correlation ids are 32-bit, and so are External ids.
  static uint32_t IdLink(int64_t id) { return id >= 0 && id < 0xFFFFFFFFLL ? static_cast<uint32_t>(id + 1) : 0; }
  static uint32_t Correlation(const RawEvent& ev) { return IdLink(ev.correlation); }
  // Interval::link: the External id for annotations (host and device), else the correlation.
  static uint32_t Link(const RawEvent& ev) {
    bool annotation = ev.cat == "user_annotation" || ev.cat == "gpu_user_annotation";
    return annotation ? IdLink(ev.args.external_id) : Correlation(ev);
  }

  Interval MakeInterval(int64_t start, int64_t end, const RawEvent& ev, uint32_t lane) {
    uint32_t name_id = trace_.strings.Intern(ev.name);
    uint32_t cat_id = ev.cat.empty() ? 0 : trace_.strings.Intern(ev.cat);
    if (ev.device >= 0 && trace_.lanes[lane].device < 0) trace_.lanes[lane].device = ev.device;
    return Interval{start, end, name_id, cat_id, lane, Link(ev)};
  }

  void AddInterval(int64_t start, int64_t end, const RawEvent& ev, uint32_t lane) {
    trace_.intervals.push_back(MakeInterval(start, end, ev, lane));
    if (ev.sequence >= 0) {
      trace_.sequence.push_back(SequenceMark{static_cast<uint32_t>(trace_.intervals.size() - 1),
                                             static_cast<int32_t>(ev.fwd_thread < 0 ? 0 : ev.fwd_thread), ev.sequence});
    }
  }

  // The profiler's own span: category "Trace" in any case.
  static bool IsProfilerSpan(std::string_view cat) {
    return cat.size() == 5 && (cat[0] | 0x20) == 't' && (cat[1] | 0x20) == 'r' && (cat[2] | 0x20) == 'a' &&
           (cat[3] | 0x20) == 'c' && (cat[4] | 0x20) == 'e';
  }

  EventArgs Args(const RawEvent& ev) {
    EventArgs a = ev.args;
    a.input_dims = ev.input_dims.empty() ? 0 : trace_.strings.Intern(ev.input_dims);
    return a;
  }

  void Finish() {
    for (int c = 0; c < 256; ++c) {
      if (phase_counts_[c]) trace_.stats.phases[std::string(1, static_cast<char>(c))] += phase_counts_[c];
    }
    for (auto& lane : trace_.lanes) {
      auto it = process_names_.find(lane.pid);
      if (it != process_names_.end()) lane.process_name = it->second;
    }
    if (!python_.empty()) {
      PythonRepair repair = RepairPythonSpans(python_);
      std::vector<PythonSpan>().swap(python_);
      for (const auto& [i, end] : repair.clipped) trace_.intervals[i].end_ns = end;
      for (uint32_t i : repair.dropped) trace_.intervals[i].end_ns = kDead;
      trace_.stats.python_clipped = repair.clipped.size();
      trace_.stats.skipped[static_cast<int>(Skip::kPythonAfterParent)] = repair.dropped.size();
      pending_ += repair.dropped.size();
    }
    if (pending_ > 0) {
      // B events never closed, pairs whose E came too early and dropped Python spans
      // leave; file order stays, and what refers to an interval follows it.
      constexpr uint32_t kGone = UINT32_MAX;
      std::vector<uint32_t> moved(trace_.intervals.size(), kGone);
      size_t out = 0;
      for (size_t i = 0; i < trace_.intervals.size(); ++i) {
        if (trace_.intervals[i].end_ns == kDead) continue;
        moved[i] = static_cast<uint32_t>(out);
        if (details_) trace_.args[out] = trace_.args[i];
        trace_.intervals[out++] = trace_.intervals[i];
      }
      trace_.intervals.resize(out);
      if (details_) trace_.args.resize(out);
      size_t kept = 0;
      for (SequenceMark m : trace_.sequence) {
        if (moved[m.interval] == kGone) continue;
        m.interval = moved[m.interval];
        trace_.sequence[kept++] = m;
      }
      trace_.sequence.resize(kept);
    }
    for (auto& stack : open_) trace_.stats.skipped[static_cast<int>(Skip::kUnmatchedBegin)] += stack.size();
  }

  Trace& trace_;
  std::string file_;
  bool details_;
  bool strict_;
  std::vector<PythonSpan> python_;  // python_function events, for the repair at the end
  std::unique_ptr<EventParser> parser_ = MakeEventParser();
  std::string lane_key_;
  std::unordered_map<std::string, uint32_t> lane_index_;
  std::vector<std::vector<uint32_t>> open_;  // open B intervals per lane
  std::unordered_map<std::string, std::string> process_names_;
  uint64_t phase_counts_[256] = {};
  uint64_t pending_ = 0;
};

// Parses each chunk as soon as it is cut: the one-thread loader.
class DirectSink final : public ChunkSink {
 public:
  explicit DirectSink(EventBuilder& builder) : builder_(builder) {}
  std::unique_ptr<Chunk> Emit(std::unique_ptr<Chunk> chunk) override {
    builder_.Parse(*chunk);
    return chunk;
  }

 private:
  EventBuilder& builder_;
};

// A bounded queue of chunks from the scanner's thread to the builder's; emptied
// chunks come back for reuse, so the buffers are allocated once.
class ChunkQueue final : public ChunkSink {
 public:
  struct Cancelled {};

  std::unique_ptr<Chunk> Emit(std::unique_ptr<Chunk> chunk) override {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [&] { return ready_.size() < kDepth || cancelled_; });
    if (cancelled_) throw Cancelled{};
    ready_.push_back(std::move(chunk));
    changed_.notify_all();
    if (free_.empty()) return std::make_unique<Chunk>();
    std::unique_ptr<Chunk> reuse = std::move(free_.back());
    free_.pop_back();
    return reuse;
  }

  void EmitError(std::exception_ptr error) {
    auto chunk = std::make_unique<Chunk>();
    chunk->error = std::move(error);
    std::lock_guard<std::mutex> lock(mu_);
    ready_.push_back(std::move(chunk));
    changed_.notify_all();
  }

  // The next chunk, or nullptr once the scanner is done and all are taken.
  std::unique_ptr<Chunk> Pop() {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [&] { return !ready_.empty() || closed_; });
    if (ready_.empty()) return nullptr;
    std::unique_ptr<Chunk> chunk = std::move(ready_.front());
    ready_.pop_front();
    changed_.notify_all();
    return chunk;
  }

  void Recycle(std::unique_ptr<Chunk> chunk) {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(std::move(chunk));
  }

  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    changed_.notify_all();
  }

  void Cancel() {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
    changed_.notify_all();
  }

 private:
  static constexpr size_t kDepth = 3;
  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<std::unique_ptr<Chunk>> ready_;
  std::vector<std::unique_ptr<Chunk>> free_;
  bool closed_ = false;
  bool cancelled_ = false;
};

}  // namespace

namespace {

Trace Load(ByteSource& src, const LoadOptions& options) {
  Trace trace;
  trace.file = src.name();
  src.set_allow_truncated(options.allow_truncated);
  // Reserving address space for the expected intervals avoids the copies (and the
  // transient 3x memory) of vector growth; pages never written are never resident.
  // Kineto writes ~150-300 bytes per event and gzip shrinks it 14-16x.
  uint64_t expected_json = src.input_size() * (src.gzipped() ? 20 : 1);
  trace.intervals.reserve(static_cast<size_t>(std::min<uint64_t>(expected_json / 100, uint64_t{1} << 31)));
  if (options.details) trace.args.reserve(trace.intervals.capacity());
  EventBuilder builder(&trace, trace.file, options);
  Scanner scanner(src, options.strict, options.allow_truncated);
  if (options.threads <= 1) {
    DirectSink sink(builder);
    scanner.Run(sink);
  } else {
    ChunkQueue queue;
    std::thread producer([&] {
      try {
        scanner.Run(queue);
      } catch (const ChunkQueue::Cancelled&) {
      } catch (...) {
        queue.EmitError(std::current_exception());
      }
      queue.Close();
    });
    try {
      while (std::unique_ptr<Chunk> chunk = queue.Pop()) {
        if (chunk->error) std::rethrow_exception(chunk->error);
        builder.Parse(*chunk);
        queue.Recycle(std::move(chunk));
      }
    } catch (...) {
      queue.Cancel();
      producer.join();
      throw;
    }
    producer.join();
  }
  trace.header = std::move(scanner.header());
  trace.stats.json_bytes = src.uncompressed_offset();
  trace.stats.events += scanner.not_objects();
  trace.stats.skipped[static_cast<int>(Skip::kNotAnObject)] += scanner.not_objects();
  trace.stats.skipped[static_cast<int>(Skip::kGarbage)] += scanner.garbage();
  std::vector<uint64_t>& bad = trace.stats.bad_offsets;
  bad.insert(bad.end(), scanner.garbage_offsets().begin(), scanner.garbage_offsets().end());
  std::sort(bad.begin(), bad.end());
  if (bad.size() > kMaxBadOffsets) bad.resize(kMaxBadOffsets);
  trace.stats.truncated = scanner.truncated() || src.truncated();
  if (trace.stats.truncated) trace.stats.truncated_at = src.uncompressed_offset();
  builder.Finish();
  return trace;
}

}  // namespace

Trace LoadTrace(const LoadOptions& options) {
  ByteSource src(options.path);
  return Load(src, options);
}

// Several inputs: a window of loads on worker threads, used strictly in order.
void LoadEach(const std::vector<LoadOptions>& inputs, int workers, const std::function<void(Trace&)>& use) {
  const size_t n = inputs.size();
  const size_t window = static_cast<size_t>(std::max(1, workers));
  if (n <= 1 || window == 1) {
    for (const LoadOptions& input : inputs) {
      Trace trace = LoadTrace(input);
      use(trace);
    }
    return;
  }
  std::vector<std::unique_ptr<Trace>> ready(n);
  std::vector<std::exception_ptr> errors(n);
  std::mutex mu;
  std::condition_variable changed;
  size_t next = 0, used = 0;
  bool stop = false;
  auto load = [&] {
    for (;;) {
      size_t i;
      {
        std::unique_lock<std::mutex> lock(mu);
        changed.wait(lock, [&] { return stop || next >= n || next < used + window; });
        if (stop || next >= n) return;
        i = next++;
      }
      std::unique_ptr<Trace> trace;
      std::exception_ptr error;
      try {
        trace = std::make_unique<Trace>(LoadTrace(inputs[i]));
      } catch (...) {
        error = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mu);
      ready[i] = std::move(trace);
      errors[i] = error;
      changed.notify_all();
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 0; t < std::min(window, n); ++t) pool.emplace_back(load);
  auto finish = [&] {
    {
      std::lock_guard<std::mutex> lock(mu);
      stop = true;
    }
    changed.notify_all();
    for (auto& th : pool) th.join();
  };
  try {
    for (size_t i = 0; i < n; ++i) {
      std::unique_ptr<Trace> trace;
      {
        std::unique_lock<std::mutex> lock(mu);
        changed.wait(lock, [&] { return ready[i] || errors[i]; });
        if (errors[i]) std::rethrow_exception(errors[i]);
        trace = std::move(ready[i]);
      }
      use(*trace);
      trace.reset();  // before the next load may start
      std::lock_guard<std::mutex> lock(mu);
      ++used;
      changed.notify_all();
    }
  } catch (...) {
    finish();
    throw;
  }
  finish();
}

std::vector<std::string> LoadWarnings(const Trace& trace) {
  std::vector<std::string> out;
  const LoadStats& st = trace.stats;
  if (st.bad_total() > 0) {
    std::string why, where;
    for (Skip k : {Skip::kBadJson, Skip::kBadValue, Skip::kGarbage}) {
      uint64_t n = st.skipped[static_cast<int>(k)];
      if (n)
        why += (why.empty() ? "" : ", ") + std::string(kSkipReasons[static_cast<int>(k)].key) + " " + std::to_string(n);
    }
    for (uint64_t off : st.bad_offsets) where += (where.empty() ? "" : ", ") + std::to_string(off);
    out.push_back(trace.file + ": warning: skipped " + std::to_string(st.bad_total()) + " unreadable events or text (" +
                  why + ") at bytes " + where + (st.bad_total() > st.bad_offsets.size() ? ", ..." : "") +
                  "; --strict makes this an error");
  }
  if (st.repaired > 0) {
    out.push_back(trace.file + ": warning: repaired and kept " + std::to_string(st.repaired) +
                  " events with broken JSON (control characters, lone backslashes, stray quotes, invalid UTF-8 or "
                  "bare values in strings)");
  }
  uint64_t python_dropped = st.skipped[static_cast<int>(Skip::kPythonAfterParent)];
  if (st.python_clipped + python_dropped > 0) {
    out.push_back(trace.file + ": warning: " + std::to_string(st.python_clipped + python_dropped) +
                  " python_function events outlived their Python parent: " + std::to_string(st.python_clipped) +
                  " now end with it, " + std::to_string(python_dropped) +
                  " that began after it were dropped (README: broken traces)");
  }
  if (st.truncated) {
    out.push_back(trace.file + ": byte " + std::to_string(st.truncated_at) +
                  ": warning: the trace is truncated; kept the " + std::to_string(st.events) +
                  " complete events before the cut");
  }
  return out;
}

Trace LoadTraceFromMemory(std::string_view data, const std::string& name, const LoadOptions& options) {
  ByteSource src(data, name);
  return Load(src, options);
}

}  // namespace torch2pprof
