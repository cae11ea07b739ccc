#include "json_scanner.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "json_blocks.h"
#include "torch2pprof/error.h"
#include "torch2pprof/trace_loader.h"

namespace torch2pprof {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

std::string Describe(char c) {
  if (c >= 0x20 && c < 0x7f) return std::string("'") + c + "'";
  char buf[16];
  std::snprintf(buf, sizeof buf, "byte 0x%02x", static_cast<unsigned char>(c));
  return buf;
}

// A sliding window over the uncompressed stream. Bytes from `mark` on are kept

}  // namespace

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

class Scanner::Impl {
 public:
  Impl(ByteSource& src, bool strict, bool allow_truncated)
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
    Fail(win_.offset(win_.end),
         "the trace is truncated: the input ends " + where +
             (seen_events_ && !allow_truncated_ ? " (--allow-truncated keeps the events before the cut)" : ""));
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

Scanner::Scanner(ByteSource& src, bool strict, bool allow_truncated)
    : impl_(std::make_unique<Impl>(src, strict, allow_truncated)) {}
Scanner::~Scanner() = default;
void Scanner::Run(ChunkSink& sink) { impl_->Run(sink); }
TraceHeader& Scanner::header() { return impl_->header(); }
uint64_t Scanner::not_objects() const { return impl_->not_objects(); }
uint64_t Scanner::garbage() const { return impl_->garbage(); }
const std::vector<uint64_t>& Scanner::garbage_offsets() const { return impl_->garbage_offsets(); }
bool Scanner::truncated() const { return impl_->truncated(); }

}  // namespace torch2pprof
