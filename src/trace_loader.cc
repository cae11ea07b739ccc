// The loader never holds the whole JSON text: a small scanner walks the top level
// and cuts traceEvents into chunks of whole event objects, and simdjson's on-demand
// parser reads each chunk. Memory grows with retained intervals, not with the file.
#include "torch2pprof/trace_loader.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>
#include <vector>

#include "byte_source.h"
#include "event_parser.h"
#include "torch2pprof/error.h"

namespace torch2pprof {
namespace {

constexpr size_t kReadSize = 4 << 20;
constexpr size_t kChunkSize = 2 << 20;        // JSON text per simdjson document
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

class Loader final : public EventSink {
 public:
  Loader(ByteSource& src, Trace* trace) : src_(src), win_(src), trace_(*trace) {}

  void Run() {
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
    Finish();
  }

 private:
  [[noreturn]] void Fail(uint64_t offset, const std::string& msg) override {
    ThrowInput(src_.name(), static_cast<int64_t>(offset), msg);
  }

  char Peek() { return win_.data()[win_.pos]; }

  [[noreturn]] void FailTruncated() {
    std::string where = in_events_ ? "inside traceEvents after " + std::to_string(trace_.stats.events) + " events"
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
    TraceHeader& h = trace_.header;
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

  void ParseEventArray() {
    in_events_ = true;
    chunk_.clear();
    chunk_.push_back('[');
    bool after_comma = false;
    for (;;) {
      if (!win_.SkipSpace()) FailTruncated();
      char c = Peek();
      if (c == ']') {
        ++win_.pos;  // also accepts a trailing comma, as Chrome's viewer does
        break;
      }
      uint64_t offset = win_.offset();
      size_t a, b;
      ScanValue(&a, &b);
      if (c == '{') {
        if (chunk_.size() > 1) chunk_.push_back(',');
        chunk_starts_.push_back({chunk_.size(), offset});
        chunk_.append(win_.data() + a, b - a);
        if (chunk_.size() >= kChunkSize) FlushChunk();
      } else {
        ++trace_.stats.events;
        ++trace_.stats.skipped[static_cast<int>(Skip::kNotAnObject)];
      }
      win_.mark = Window::kNoMark;
      if (!win_.SkipSpace()) {
        FlushChunk();
        FailTruncated();
      }
      c = Peek();
      ++win_.pos;
      if (c == ']') break;
      if (c != ',') Fail(win_.offset() - 1, "expected ',' or ']' after an event in traceEvents, found " + Describe(c));
      after_comma = true;
    }
    (void)after_comma;
    FlushChunk();
    in_events_ = false;
  }

  void FlushChunk() {
    if (chunk_starts_.empty()) return;
    chunk_.push_back(']');
    size_t len = chunk_.size();
    chunk_.append(kPadding, ' ');
    parser_->Parse(chunk_, len, chunk_starts_, *this);
    chunk_.clear();
    chunk_.push_back('[');
    chunk_starts_.clear();
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
        if (ev.dur == 0) return Skipped(Skip::kZeroDuration);
        if (ev.dur < 0) return Skipped(Skip::kNegativeDuration);
        int64_t end;
        if (__builtin_add_overflow(ev.ts, ev.dur, &end)) Fail(ev.offset, "ts + dur does not fit in 64-bit nanoseconds");
        AddInterval(ev.ts, end, ev.name, ev.cat, LaneId(ev.pid, ev.tid));
        break;
      }
      case 'B': {
        if (!ev.has_ts) return Skipped(Skip::kNoTimestamp);
        uint32_t lane = LaneId(ev.pid, ev.tid);
        AddInterval(ev.ts, kDead, ev.name, ev.cat, lane);
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

  void AddInterval(int64_t start, int64_t end, std::string_view name, std::string_view cat, uint32_t lane) {
    uint32_t name_id = trace_.strings.Intern(name);
    uint32_t cat_id = cat.empty() ? 0 : trace_.strings.Intern(cat);
    trace_.intervals.push_back(Interval{start, end, name_id, cat_id, lane, 0});
  }

  void Finish() {
    if (!seen_events_) Fail(-1, "not a Chrome trace: the JSON object has no \"traceEvents\" array");
    trace_.stats.json_bytes = src_.uncompressed_offset();
    for (int c = 0; c < 256; ++c) {
      if (phase_counts_[c]) trace_.stats.phases[std::string(1, static_cast<char>(c))] += phase_counts_[c];
    }
    for (auto& lane : trace_.lanes) {
      auto it = process_names_.find(lane.pid);
      if (it != process_names_.end()) lane.process_name = it->second;
    }
    if (pending_ > 0) {
      // B events never closed and pairs whose E came too early are dropped; file order stays.
      size_t out = 0;
      for (size_t i = 0; i < trace_.intervals.size(); ++i) {
        if (trace_.intervals[i].end_ns == kDead) continue;
        trace_.intervals[out++] = trace_.intervals[i];
      }
      trace_.intervals.resize(out);
    }
    for (auto& stack : open_) trace_.stats.skipped[static_cast<int>(Skip::kUnmatchedBegin)] += stack.size();
  }

  ByteSource& src_;
  Window win_;
  Trace& trace_;
  std::unique_ptr<EventParser> parser_ = MakeEventParser();
  std::string chunk_;
  std::vector<ChunkStart> chunk_starts_;
  bool in_events_ = false;
  bool seen_events_ = false;
  std::string lane_key_;
  std::unordered_map<std::string, uint32_t> lane_index_;
  std::vector<std::vector<uint32_t>> open_;  // open B intervals per lane
  std::unordered_map<std::string, std::string> process_names_;
  uint64_t phase_counts_[256] = {};
  uint64_t pending_ = 0;
};

}  // namespace

Trace LoadTrace(const LoadOptions& options) {
  Trace trace;
  ByteSource src(options.path);
  trace.file = src.name();
  Loader loader(src, &trace);
  loader.Run();
  return trace;
}

}  // namespace torch2pprof
