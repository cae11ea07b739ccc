#include "load/json_scanner.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>

#include "load/exact_time.h"
#include "load/json_blocks.h"
#include "torch2pprof/error.h"
#include "torch2pprof/stages/trace_loader.h"

namespace torch2pprof {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

constexpr size_t kMaxKey = 4096;  // a key of the trace object

std::string Describe(char c) {
  if (c >= 0x20 && c < 0x7f) return std::string("'") + c + "'";
  char buf[16];
  std::snprintf(buf, sizeof buf, "byte 0x%02x", static_cast<unsigned char>(c));
  return buf;
}

}  // namespace

// A sliding window over the uncompressed stream. Bytes from `mark` on are kept when the
// window refills, so a partly read event survives a refill. The window's buffer is what
// a chunk hands to a parser (Detach): it keeps kLead bytes in front of its text for the
// chunk's '[' and kPadding + 1 behind it for the ']' and simdjson's padding.
class Window {
 public:
  static constexpr size_t kLead = 1;

  explicit Window(ByteSource& src) : src_(src) { buf_.resize(kReadSize + kLead + kPadding + 1); }

  // Makes more bytes available after end; returns how far existing bytes moved toward
  // the front. `ok` is false at the end of the input.
  size_t Refill(bool* ok) {
    size_t shift = Move(std::min(pos, mark), buf_);
    if (Room() < kReadSize / 2) buf_.resize(std::max(buf_.size() * 2, end + kReadSize + kPadding + 1));
    // At most one read's worth, however large the buffer grew for a large event: a
    // chunk is what one read brought, and simdjson's buffers grow with the chunk.
    size_t n = src_.Read(buf_.data() + end, std::min(Room(), kReadSize));
    end += n;
    *ok = n > 0;
    return shift;
  }

  // Hands the buffer to *out and goes on in the buffer *out held, with the bytes from
  // `keep` on moved to its front; returns how far they moved.
  size_t Detach(size_t keep, std::vector<char>* out) {
    // Room for what is kept and one read: a buffer that grew for a large event does not
    // make every later buffer as large.
    const size_t need = kLead + (end - keep) + kReadSize + kPadding + 1;
    if (out->size() < need) out->resize(need);
    size_t shift = Move(keep, *out);
    buf_.swap(*out);
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

  // Goes on at `offset` of the input (after ByteSource::Seek), with nothing kept.
  void Reset(uint64_t offset) {
    pos = end = kLead;
    mark = kNoMark;
    base_ = offset;
  }

  char* data() { return buf_.data(); }
  uint64_t offset(size_t at) const { return base_ + (at - kLead); }
  uint64_t offset() const { return offset(pos); }

  static constexpr size_t kNoMark = std::numeric_limits<size_t>::max();
  size_t pos = kLead, end = kLead, mark = kNoMark;

 private:
  size_t Room() const { return buf_.size() - end - kPadding - 1; }
  // [keep, end) to to[kLead...]; positions follow.
  size_t Move(size_t keep, std::vector<char>& to) {
    size_t shift = keep - kLead;
    if (shift == 0 && &to == &buf_) return 0;
    std::memmove(to.data() + kLead, buf_.data() + keep, end - keep);
    end -= shift;
    pos -= shift;
    if (mark != kNoMark) mark -= shift;
    base_ += shift;
    return shift;
  }

  ByteSource& src_;
  std::vector<char> buf_;
  uint64_t base_ = 0;
};

class Scanner::Impl {
 public:
  Impl(ByteSource& src, bool strict, bool allow_truncated, size_t range_bytes)
      : src_(src), win_(src), strict_(strict), allow_truncated_(allow_truncated), range_bytes_(range_bytes) {}

  void Run(ChunkSink& sink) {
    sink_ = &sink;
    chunk_ = std::make_unique<Chunk>();
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
  uint64_t cut_on_workers() const { return cut_on_workers_; }

 private:
  // Events already cut are handed on first, so an earlier error in them wins.
  [[noreturn]] void Fail(int64_t offset, const std::string& msg) {
    if (!failing_) {
      failing_ = true;
      FlushChunk();
    }
    ThrowInput(src_.name(), offset, msg);
  }

  // Hands the events cut since the last chunk to the sink, in the window's buffer: the
  // window goes on in the buffer the sink handed back, with the bytes after the last
  // event moved to its front. Returns how far they moved. (The scanning loop keeps its
  // own position and sets pos before a refill; pos only has to stay among the bytes kept.)
  size_t FlushChunk() {
    if (chunk_->starts.empty()) return 0;
    std::unique_ptr<Chunk> full = std::move(chunk_);
    const size_t begin = chunk_first_ - Window::kLead, end = chunk_end_;
    win_.pos = std::max(win_.pos, end);
    const size_t shift = win_.Detach(end, &full->buf);
    char* d = full->buf.data();
    d[begin] = '[';
    d[end] = ']';
    std::memset(d + end + 1, ' ', kPadding);
    full->begin = begin;
    full->len = end + 1 - begin;
    for (ChunkStart& st : full->starts) st.pos -= begin;
    chunk_ = sink_->Emit(std::move(full));
    chunk_->starts.clear();
    return shift;
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
  // escapes; nesting is counted, not validated (simdjson validates events). A value
  // longer than `keep` is read to its end but not held: false, and start == end.
  bool ScanValue(size_t* start, size_t* stop, size_t keep) {
    if (!win_.SkipSpace()) FailTruncated();
    win_.mark = win_.pos;
    size_t i = win_.pos;
    char first = win_.data()[i];
    int depth = 0;
    bool in_str = false;
    size_t str_start = 0;     // first byte after the opening quote of the current string, or where reading resumed
    bool odd_before = false;  // an odd run of backslashes just before str_start (dropped text)
    bool held = true;
    bool scalar = first != '{' && first != '[' && first != '"';
    for (;;) {
      if (i >= win_.end) {
        if (held && i - win_.mark > keep) held = false;
        if (!held) {
          // Drop what was read; only the parity of a backslash run at the end matters.
          if (in_str) {
            size_t k = i;
            while (k > str_start && win_.data()[k - 1] == '\\') --k;
            odd_before = ((i - k) + (k == str_start && odd_before ? 1 : 0)) % 2 == 1;
            str_start = i;
          }
          win_.pos = i;
          win_.mark = Window::kNoMark;
        }
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
        if (((quote - k) + (k == str_start && odd_before ? 1 : 0)) % 2 == 1) continue;
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
        odd_before = false;
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
    *start = held ? win_.mark : i;
    *stop = i;
    win_.pos = i;
    return held;
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
      if (!ScanValue(&a, &b, kMaxKey) || b - a > kMaxKey)
        Fail(key_offset, "a key longer than 4 KiB in the trace object");
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
        // A header value too long to keep is read past, not held (and not kept).
        if (ScanValue(&a, &b, kMaxHeaderValue)) HandleHeader(key, std::string(win_.data() + a, b - a), value_offset);
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

  // Hands the events from here on to the sink's workers as ranges of about one read
  // each, and goes on itself where a worker could not cut one: the end of traceEvents,
  // text between events that is more than a comma, a truncated input. The scanner
  // reads only where a range may end; every byte of a range is read and checked on a
  // worker, so the scan costs the thread that feeds the workers next to nothing.
  // Returns where the scanner's own cutting hands back to ranges.
  uint64_t CutOnWorkers(bool after_event, bool* after_element) {
    // A file still being written has grown since it was opened: its size now.
    const uint64_t size = src_.RefreshSize();
    Resume resume{win_.offset(), after_event, 0, size};
    while (resume.offset < size) {
      uint64_t end = FindCut(resume.offset + range_bytes_, size);
      src_.CountUpTo(end);
      if (!sink_->EmitRange(Range{resume.offset, static_cast<size_t>(end - resume.offset), resume.after_event})) break;
      resume.offset = end;
      resume.after_event = true;
    }
    sink_->EndRanges(&resume);
    events_scanned_ += resume.events;
    cut_on_workers_ += resume.bytes;
    src_.Seek(resume.offset);
    win_.Reset(resume.offset);
    *after_element = resume.after_event;
    // Where the ranges reached the file's end, there is nothing to hand back to: the scanner
    // reads on to the end itself, whatever the file has grown to by then (handing back after
    // each event past the end had cost a seek and a read's worth of bytes per event).
    return resume.scan_to >= size ? std::numeric_limits<uint64_t>::max() : resume.scan_to;
  }

  // Where a range may end: just after the first '}' from `from` on that white space, a
  // comma and a '{' follow, as between two events (inside a string or an event's
  // arguments it may be no event's end: the worker finds out, and the scanner cuts
  // from there itself). The end of the input where none is found soon.
  uint64_t FindCut(uint64_t from, uint64_t size) {
    constexpr size_t kProbe = 4096;
    constexpr uint64_t kFarthest = 4 << 20;
    char probe[kProbe];
    uint64_t at = from;
    while (at < size && at - from < kFarthest) {
      const size_t n = src_.ReadAt(probe, kProbe, at);
      if (n == 0) break;
      size_t next = n;  // where the next probe starts
      for (size_t brace = 0; brace < n; ++brace) {
        const char* b = static_cast<const char*>(std::memchr(probe + brace, '}', n - brace));
        if (!b) break;
        brace = static_cast<size_t>(b - probe);
        size_t k = brace + 1;
        while (k < n && IsSpace(probe[k])) ++k;
        bool comma = k < n && probe[k] == ',';
        if (comma) {
          ++k;
          while (k < n && IsSpace(probe[k])) ++k;
        }
        if (k == n && n == kProbe && brace > 0) {
          next = brace;  // undecided at the probe's end: the next probe starts at this brace
          break;
        }
        if (comma && k < n && probe[k] == '{') return at + brace + 1;
      }
      at += next;
    }
    return std::min(at, size);
  }

  // Cuts the elements of traceEvents (after its '[') into events: on the sink's
  // workers where it takes ranges, and here where they could not.
  void ParseEventArray() {
    in_events_ = true;
    if (!sink_->TakesRanges() || !src_.seekable()) {
      ScanEvents(false, std::numeric_limits<uint64_t>::max());
    } else {
      bool after_element = false;
      for (;;) {
        uint64_t scan_to = CutOnWorkers(after_element, &after_element);
        if (ScanEvents(after_element, scan_to)) break;
        after_element = true;
      }
    }
    in_events_ = false;
  }

  // Cuts events here, 64 bytes at a time, up to the end of traceEvents (returns true),
  // or up to the first event that ends at or past `hand_back` (false): the events
  // before are handed on. The few bytes between elements are checked by ScanGap.
  // Over 100 lines: the scanner's inner loop over 64-byte blocks; its cases (an event
  // ends, a gap to check, the array ends, the hand-back point) all read the block's masks
  // and the depth it carries from block to block.
  bool ScanEvents(bool after_element, uint64_t hand_back) {
    JsonBlocks blocks;
    // The next blocks' brackets outside strings, found ahead: the window's bytes may move
    // (a chunk handed on, a refill), but the blocks' text and their place from i stay.
    uint64_t open_bits[JsonBlocks::kGroup], close_bits[JsonBlocks::kGroup];
    size_t classified = 0, next = 0;
    int depth = 0;          // nesting below the traceEvents array
    size_t gap = win_.pos;  // where the bytes since the last element (or '[') start
    size_t element = 0;     // where the current element starts
    size_t i = win_.pos;    // the next block
    char tail[64];
    for (;;) {
      // Keep what is still needed when the window refills: the gap, or the element.
      win_.mark = depth == 0 ? gap : element;
      size_t valid = 64;
      uint64_t open, close;
      if (next < classified) {
        open = open_bits[next], close = close_bits[next++];
      } else if (win_.end - i >= 64) {
        classified = std::min(JsonBlocks::kGroup, (win_.end - i) / 64);
        blocks.Group(win_.data() + i, classified, open_bits, close_bits);
        open = open_bits[0], close = close_bits[0];
        next = 1;
      } else {
        bool ok;
        if (depth == 0) {
          // White space and commas between elements are read, not held: a gap of
          // gigabytes of spaces would otherwise stay in the window.
          gap = TrimGap(gap, i, after_element);
          if (i - gap > kMaxElement) {
            Fail(Offset(gap), "more than " + std::to_string(kMaxElement >> 20) +
                                  " MiB of text between two events that is no event: not a trace");
          }
        } else if (i - element > kMaxElement) {
          Fail(Offset(element), "an event longer than " + std::to_string(kMaxElement >> 20) +
                                    " MiB: an element of traceEvents is held whole to be read");
        }
        win_.pos = i;
        // A chunk is the events of one read: handed on before the window moves.
        size_t shift = FlushChunk();
        shift += win_.Refill(&ok);
        i -= shift;
        (depth == 0 ? gap : element) -= shift;
        if (ok) continue;
        valid = win_.end - i;  // the input ended: scan what is left, padded with spaces
        if (valid == 0) EndedBetween(depth, gap, i, after_element);
        std::memcpy(tail, win_.data() + i, valid);
        std::memset(tail + valid, ' ', 64 - valid);
        blocks.Group(tail, 1, &open, &close);
      }
      // As in CutRange: deeper in an event than the block has closing brackets, no
      // element starts or ends in it, and neither does traceEvents.
      const int closes = __builtin_popcountll(close);
      if (valid == 64 && depth > closes) {
        depth += __builtin_popcountll(open) - closes;
        i += 64;
        continue;
      }
      for (uint64_t structural = open | close; structural; structural &= structural - 1) {
        int b = __builtin_ctzll(structural);
        size_t j = i + static_cast<size_t>(b);
        const char* d = win_.data();
        if (open >> b & 1) {
          if (depth++ == 0) {
            if (!ScanGap(gap, j, after_element, false)) dirty_ = true;
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
          return true;
        } else if (--depth == 0) {
          ++events_scanned_;
          carry_ = GapCarry{};
          if (d[element] == '{') {
            size_t shift = AppendEvent(element, j + 1);
            i -= shift;
            j -= shift;
            if (win_.offset(j + 1) >= hand_back) {
              win_.pos = j + 1;
              win_.mark = Window::kNoMark;
              FlushChunk();
              return false;
            }
          } else {
            ++not_objects_;  // an array among the events
            dirty_ = true;
          }
          gap = j + 1;
          after_element = true;
        }
      }
      if (valid < 64) EndedBetween(depth, gap, i + valid, after_element);
      i += 64;
    }
  }

  int64_t Offset(size_t at) const { return static_cast<int64_t>(win_.offset(at)); }

  // The input ended inside traceEvents. Between elements, the text since the last one is
  // read as any gap is, whole: TrimGap had read only up to the last block's start, which
  // depends on where the scan began (a range handed back, or the file's start), so what
  // was counted as garbage depended on the threads.
  [[noreturn]] void EndedBetween(int depth, size_t gap, size_t end, bool after_element) {
    if (depth == 0) ScanGap(gap, end, after_element, true);
    FailTruncated();
  }

  // The event at [from, to) of the window joins the chunk. Where the text since the last
  // event is more than a comma and white space, the chunk ends before it (its text must
  // stay a JSON array); returns how far the window's bytes moved then.
  size_t AppendEvent(size_t from, size_t to) {
    size_t shift = 0;
    if (dirty_ && !chunk_->starts.empty()) {
      shift = FlushChunk();
      from -= shift;
      to -= shift;
    }
    dirty_ = false;
    if (chunk_->starts.empty()) chunk_first_ = from;
    chunk_->starts.emplace_back(from, win_.offset(from));
    chunk_end_ = to;
    return shift;
  }

  // The bytes between two elements of traceEvents (or after '[', or before ']'):
  // white space, the separating comma, and elements that are no objects or arrays.
  // Anything else (a log line, a missing comma) is garbage: counted once per run.
  // Returns whether the gap is exactly a comma and white space.
  bool ScanGap(size_t from, size_t to, bool after_element, bool at_end) {
    const char* d = win_.data();
    // The white space and commas of the gap's start already read (TrimGap) count here.
    bool need_comma = carry_.trimmed ? carry_.need_comma : after_element, in_garbage = false, other = false;
    int commas = carry_.commas;
    carry_ = GapCarry{};
    for (size_t k = from; k < to;) {
      char c = d[k];
      if (IsSpace(c)) {
        ++k;
        continue;
      }
      if (c == ',') {
        if (!need_comma && !in_garbage) Garbage(k, "expected an event in traceEvents, found ','");
        need_comma = in_garbage = false;
        ++commas;
        ++k;
        continue;
      }
      other = true;
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
    return after_element && commas == 1 && !other;
  }

  // Reads the white space and commas at the start of a gap [from, to) as ScanGap would,
  // and returns where the rest of the gap starts: what ScanGap still has to see. The
  // commas read are carried to it.
  size_t TrimGap(size_t from, size_t to, bool after_element) {
    const char* d = win_.data();
    if (!carry_.trimmed) carry_ = GapCarry{true, after_element, 0};
    size_t k = from;
    for (; k < to; ++k) {
      if (IsSpace(d[k])) continue;
      if (d[k] != ',') break;
      if (!carry_.need_comma) Garbage(k, "expected an event in traceEvents, found ','");
      carry_.need_comma = false;
      ++carry_.commas;
    }
    return k;
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
  size_t range_bytes_;
  bool truncated_ = false;
  uint64_t garbage_ = 0;
  std::vector<uint64_t> garbage_offsets_;
  ChunkSink* sink_ = nullptr;
  std::unique_ptr<Chunk> chunk_;  // the events cut since the last chunk: their starts
  size_t chunk_first_ = 0;        // where the first of them starts in the window
  size_t chunk_end_ = 0;          // where the last of them ends
  bool dirty_ = false;            // the text since the last event is no comma alone
  // The start of the current gap read and dropped (white space and commas only).
  struct GapCarry {
    bool trimmed = false;
    bool need_comma = false;
    int commas = 0;
  } carry_;
  TraceHeader header_;
  uint64_t events_scanned_ = 0;
  uint64_t cut_on_workers_ = 0;
  uint64_t not_objects_ = 0;
  bool in_events_ = false;
  bool seen_events_ = false;
  bool failing_ = false;
};

namespace {

// White space around one comma, or (first) white space alone.
bool PlainGap(const char* d, size_t from, size_t to, bool after_event) {
  size_t k = from;
  while (k < to && IsSpace(d[k])) ++k;
  if (after_event) {
    if (k == to || d[k] != ',') return false;
    ++k;
    while (k < to && IsSpace(d[k])) ++k;
  }
  return k == to;
}

}  // namespace

bool CutRange(const ByteSource& src, const Range& range, Chunk* chunk) {
  // The chunk's layout is the scanner's: a byte in front of the text for '[' and
  // kPadding + 1 behind it for ']' and simdjson's padding (the last block scanned reads
  // up to 63 bytes of it, spaces).
  constexpr size_t kLead = Window::kLead;
  std::vector<char>& buf = chunk->buf;
  if (buf.size() < kLead + range.len + kPadding + 1) buf.resize(kLead + range.len + kPadding + 1);
  chunk->starts.clear();
  char* d = buf.data();
  if (src.ReadAt(d + kLead, range.len, range.offset) != range.len) return false;  // the file shrank
  const size_t stop = kLead + range.len;
  std::memset(d + stop, ' ', kPadding + 1);
  JsonBlocks blocks;
  int depth = 0;
  size_t gap = kLead, element = 0, last_end = 0;
  bool after_event = range.after_event;
  for (size_t group = kLead; group < stop; group += 64 * JsonBlocks::kGroup) {
    const size_t blocks_here = std::min(JsonBlocks::kGroup, (stop - group + 63) / 64);
    uint64_t open_bits[JsonBlocks::kGroup], close_bits[JsonBlocks::kGroup];
    blocks.Group(d + group, blocks_here, open_bits, close_bits);
    for (size_t k = 0; k < blocks_here; ++k) {
      const size_t i = group + 64 * k;
      const uint64_t open = open_bits[k], close = close_bits[k];
      // Inside an event deeper than the block has closing brackets, nothing in the block
      // can start or end one: only the depth moves (most blocks of args-heavy events).
      const int closes = __builtin_popcountll(close);
      if (depth > closes) {
        depth += __builtin_popcountll(open) - closes;
        continue;
      }
      for (uint64_t structural = open | close; structural; structural &= structural - 1) {
        int b = __builtin_ctzll(structural);
        size_t j = i + static_cast<size_t>(b);
        if (open >> b & 1) {
          if (depth++ == 0) {
            if (d[j] != '{' || !PlainGap(d, gap, j, after_event)) return false;
            element = j;
          }
        } else {
          if (depth == 0) return false;  // the end of traceEvents, or a stray bracket
          if (--depth == 0) {
            chunk->starts.emplace_back(element, range.offset + (element - kLead));
            gap = last_end = j + 1;
            after_event = true;
          }
        }
      }
    }
  }
  if (depth != 0 || last_end != stop) return false;
  const size_t begin = chunk->starts.front().pos - 1;
  d[begin] = '[';
  d[stop] = ']';
  chunk->begin = begin;
  chunk->len = stop + 1 - begin;
  for (ChunkStart& st : chunk->starts) st.pos -= begin;
  return true;
}

Scanner::Scanner(ByteSource& src, bool strict, bool allow_truncated, size_t range_bytes)
    : impl_(std::make_unique<Impl>(src, strict, allow_truncated, range_bytes ? range_bytes : kReadSize)) {}
Scanner::~Scanner() = default;
void Scanner::Run(ChunkSink& sink) { impl_->Run(sink); }
TraceHeader& Scanner::header() { return impl_->header(); }
uint64_t Scanner::not_objects() const { return impl_->not_objects(); }
uint64_t Scanner::garbage() const { return impl_->garbage(); }
const std::vector<uint64_t>& Scanner::garbage_offsets() const { return impl_->garbage_offsets(); }
bool Scanner::truncated() const { return impl_->truncated(); }
uint64_t Scanner::cut_on_workers() const { return impl_->cut_on_workers(); }

}  // namespace torch2pprof
