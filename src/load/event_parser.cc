// simdjson's on-demand API has no runtime dispatch: it is compiled for the kernel
// the build's -march allows (CMake's TORCH2PPROF_MARCH; SSE2 alone would mean the
// slow fallback kernel). The CLI checks at start-up that the CPU has that baseline.
#include "load/event_parser.h"

#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "load/exact_time.h"
#include "load/json_repair.h"
#include "torch2pprof/stages/trace_loader.h"

namespace torch2pprof {

namespace {

// Text of a pid or tid number token: integral values without decimals or exponent.
std::string_view LaneNumberText(std::string_view raw, std::string* scratch) {
  // One pass: find_first_of(".eE") is a memchr per character, for every pid and tid.
  bool integral = true;
  for (char c : raw) integral &= c != '.' && c != 'e' && c != 'E';
  if (integral) return raw;
  int64_t ns;
  // Integral exactly when the value in "nanoseconds" is a multiple of 1000.
  if (ParseMicrosToNanos(raw, &ns) && ns % 1000 == 0) {
    *scratch = std::to_string(ns / 1000);
    return *scratch;
  }
  return raw;
}

namespace od = simdjson::ondemand;

}  // namespace

class EventParser::Impl {
 public:
  void Parse(const char* text, size_t len, size_t capacity, const std::vector<ChunkStart>& starts, EventSink& sink) {
    od::document doc;
    size_t done = 0;
    // simdjson reallocates whenever a document is longer than any before it; chunks
    // creep up a few bytes at a time, and each new buffer (~5 bytes per byte of chunk)
    // was faulted in afresh: two thirds of the page faults of a 2-thread convert.
    if (len > parser_.capacity()) {
      simdjson::error_code grown = parser_.allocate(len + len / 8);
      (void)grown;  // a failure: iterate tries again and says so
    }
    auto err = parser_.iterate(text, len, capacity).get(doc);
    if (!err) err = ReadAll(doc, starts, sink, &done);
    if (!err) return;
    // Something in this chunk is not JSON: read the rest of it event by event.
    for (size_t i = done; i < starts.size(); ++i) {
      size_t a = starts[i].pos;
      // The event ends before the white space and the comma before the next one, or
      // before the final ']'.
      size_t b = i + 1 < starts.size() ? starts[i + 1].pos : len - 1;
      std::string_view event = Trim(std::string_view(text + a, b - a));
      if (i + 1 < starts.size() && !event.empty() && event.back() == ',')
        event = Trim(event.substr(0, event.size() - 1));
      ReadAlone(event, starts[i].offset, sink, true);
    }
  }

 private:
  simdjson::error_code ReadAll(od::document& doc, const std::vector<ChunkStart>& starts, EventSink& sink,
                               size_t* done) {
    od::array arr;
    if (auto err = doc.get_array().get(arr)) return err;
    for (auto element : arr) {
      od::object obj;
      if (auto err = element.get_object().get(obj)) return err;
      RawEvent ev;
      ev.offset = starts[*done].offset;
      if (auto err = ReadEvent(obj, &ev)) return err;
      Deliver(ev, sink);
      ++*done;
    }
    return simdjson::SUCCESS;
  }

  void Deliver(const RawEvent& ev, EventSink& sink) {
    if (ev.bad) {
      sink.Bad(Skip::kBadValue, ev.offset, ev.bad);
    } else {
      sink.OnEvent(ev);
    }
  }

  // One event on its own; repaired, or split where a broken one swallowed others.
  void ReadAlone(std::string_view text, uint64_t offset, EventSink& sink, bool may_split) {
    simdjson::error_code err = ReadText(text, offset, sink);
    if (!err) return;
    std::string fixed = RepairJson(text);
    if (fixed != text && !ReadText(fixed, offset, sink, /*repaired=*/true)) return;
    if (may_split) {
      // "...},\n{..." inside one element: a stray quote hid where events end.
      std::vector<size_t> cuts;
      for (size_t k = 1; k + 1 < text.size(); ++k) {
        if (text[k] != '}') continue;
        size_t j = k + 1;
        while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j]))) ++j;
        if (j >= text.size() || text[j] != ',') continue;
        ++j;
        while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j]))) ++j;
        if (j < text.size() && text[j] == '{') cuts.push_back(k + 1), cuts.push_back(j);
      }
      if (!cuts.empty()) {
        size_t from = 0;
        for (size_t c = 0; c <= cuts.size(); c += 2) {
          size_t to = c < cuts.size() ? cuts[c] : text.size();
          ReadAlone(text.substr(from, to - from), offset + from, sink, false);
          if (c + 1 < cuts.size()) from = cuts[c + 1];
        }
        return;
      }
    }
    sink.Bad(Skip::kBadJson, offset, std::string("invalid JSON in an event: ") + simdjson::error_message(err));
  }

  simdjson::error_code ReadText(std::string_view text, uint64_t offset, EventSink& sink, bool repaired = false) {
    one_.assign(text.data(), text.size());
    size_t n = one_.size();
    one_.append(simdjson::SIMDJSON_PADDING, ' ');
    od::document doc;
    od::object obj;
    RawEvent ev;
    ev.offset = offset;
    auto err = one_parser_.iterate(one_.data(), n, one_.size()).get(doc);
    if (!err) err = doc.get_object().get(obj);
    if (!err) err = ReadEvent(obj, &ev);
    if (err) return err;
    if (repaired) sink.Repaired(offset);
    Deliver(ev, sink);
    return simdjson::SUCCESS;
  }

  // A value that is not a string: its JSON text, after checking that it is JSON
  // at all (on-demand does not validate values it is not asked to parse).
  static simdjson::error_code NonString(od::value& v, std::string_view* out) {
    od::json_type type;
    if (auto err = v.type().get(type)) return err;
    *out = Trim(v.raw_json_token());
    return simdjson::SUCCESS;
  }

  static std::string_view Trim(std::string_view s) {
    while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t'))
      s.remove_suffix(1);
    return s;
  }

  static simdjson::error_code LaneValue(od::value& v, std::string_view* out, std::string* scratch, RawEvent* ev) {
    od::json_type type;
    if (auto err = v.type().get(type)) return err;
    if (type == od::json_type::string) return v.get_string().get(*out);
    if (type == od::json_type::object || type == od::json_type::array) {
      ev->bad = "pid or tid is an object or array";
      return simdjson::SUCCESS;
    }
    std::string_view raw = Trim(v.raw_json_token());
    *out = type == od::json_type::number ? LaneNumberText(raw, scratch) : raw;
    return simdjson::SUCCESS;
  }

  // ts and dur: a number, or a string holding one; null counts as absent.
  static simdjson::error_code TimeValue(od::value& v, int64_t* out, bool* present, RawEvent* ev, const char* bad_type,
                                        const char* bad_number) {
    od::json_type type;
    if (auto err = v.type().get(type)) return err;
    std::string_view text;
    if (type == od::json_type::null) {
      *present = false;
      return simdjson::SUCCESS;
    }
    if (type == od::json_type::number) {
      text = Trim(v.raw_json_token());
    } else if (type == od::json_type::string) {
      if (auto err = v.get_string().get(text)) return err;
    } else {
      ev->bad = bad_type;
      return simdjson::SUCCESS;
    }
    if (!ParseMicrosToNanos(text, out)) ev->bad = bad_number;
    *present = true;
    return simdjson::SUCCESS;
  }

  static simdjson::error_code Int(od::value& v, int64_t* out) {
    auto err = v.get_int64().get(*out);
    if (err == simdjson::INCORRECT_TYPE || err == simdjson::NUMBER_OUT_OF_RANGE) {
      double d;  // 3.0 or 1e3 where an integer was meant
      if (v.get_double().get(d) == simdjson::SUCCESS && d >= -9.2e18 && d <= 9.2e18) *out = static_cast<int64_t>(d);
      return simdjson::SUCCESS;  // other types: left as absent
    }
    return err;
  }

  // A string, or left as absent when the value is of another type.
  static simdjson::error_code String(od::value& v, std::string_view* out) {
    auto err = v.get_string().get(*out);
    return err == simdjson::INCORRECT_TYPE ? simdjson::SUCCESS : err;
  }

  static simdjson::error_code Float(od::value& v, float* out) {
    double d;
    auto err = v.get_double().get(d);
    if (!err) *out = static_cast<float>(d);
    return err == simdjson::INCORRECT_TYPE ? simdjson::SUCCESS : err;
  }

  // The args keys torch2pprof reads; everything else is skipped unparsed.
  // Over 100 lines: one switch over the args' keys as simdjson's on-demand parser hands
  // them on, which must be read in order, once.
  static simdjson::error_code ReadArgs(od::value& v, RawEvent* ev) {
    od::object args;
    auto err = v.get_object().get(args);
    if (err == simdjson::INCORRECT_TYPE) return simdjson::SUCCESS;  // args that are no object carry nothing we use
    if (err) return err;
    // Fields are used where the iterator's result holds them. Copies of simdjson's field
    // and value (`auto field`, `od::value v = field.value()`) were built on the stack
    // piece by piece and read back whole: a failed store-to-load forward each, 15% of
    // the parse's samples (ReadEvent too).
    for (auto result : args) {
      if ((err = result.error())) return err;
      od::field&& field = std::move(result).value_unsafe();
      od::raw_json_string key = field.key();
      od::value& val = field.value();
      int64_t n;
      switch (key.raw()[0]) {
        case 'n':
          if (key == "name") {
            err = val.get_string().get(ev->meta_name);
            if (err == simdjson::INCORRECT_TYPE) err = simdjson::SUCCESS;
          }
          break;
        case 'E':
        case 'e':
          if (key == "External id" || key == "external id")
            err = Int(val, &ev->args.external_id);
          else if (key == "est. achieved occupancy %")
            err = Float(val, &ev->args.occupancy);
          break;
        case 'c':
          if (key == "correlation") err = Int(val, &ev->correlation);
          break;
        case 'd':
          if (key == "device") {
            n = -1;
            err = Int(val, &n);
            ev->device = static_cast<int32_t>(n);
          } else if (key == "dtype") {
            err = String(val, &ev->dtype);
          }
          break;
        case 'C':
          if (key == "Collective name") err = String(val, &ev->collective);
          break;
        case 'O':
          if (key == "Out msg nelems") err = Int(val, &ev->out_nelems);
          break;
        case 'G':
          if (key == "Group size") err = Int(val, &ev->group_size);
          break;
        case 'b':
          if (key == "blocks per SM") {
            err = Float(val, &ev->args.blocks_per_sm);
          } else if (key == "bytes") {
            err = Int(val, &ev->copy_bytes);
            // As "Bytes": a size that could overflow a sum of sizes is no size.
            if (ev->copy_bytes < 0 || ev->copy_bytes >= kTimeLimit) ev->copy_bytes = -1;
          }
          break;
        case 'P':
          if (key == "Python id")
            err = Int(val, &ev->python_id);
          else if (key == "Python parent id")
            err = Int(val, &ev->python_parent);
          break;
        case 'S':
          if (key == "Sequence number") err = Int(val, &ev->sequence);
          break;
        case 'F':
          if (key == "Fwd thread id") err = Int(val, &ev->fwd_thread);
          break;
        case 'I':
          if (key == "In msg nelems") {
            err = Int(val, &ev->in_nelems);
          } else if (key == "Input Dims") {
            od::array dims;
            err = val.get_array().get(dims);
            if (!err) err = dims.raw_json().get(ev->input_dims);
            if (err == simdjson::INCORRECT_TYPE) err = simdjson::SUCCESS;
            ev->input_dims = Trim(ev->input_dims);
          }
          break;
        case 'B':
          if (key == "Bytes") {
            err = Int(val, &ev->bytes);
            // An allocation beyond 2^62 bytes is no allocation: as none, so that negating
            // and summing sizes stays within 64 bits.
            if (ev->bytes <= -kTimeLimit || ev->bytes >= kTimeLimit) ev->bytes = 0;
          }
          break;
        case 'A':
          if (key == "Addr") {
            err = val.get_uint64().get(ev->addr);
            if (err == simdjson::INCORRECT_TYPE || err == simdjson::NUMBER_OUT_OF_RANGE) err = simdjson::SUCCESS;
          }
          break;
        case 'T':
          if (key == "Total Allocated")
            err = Int(val, &ev->total_allocated);
          else if (key == "Total Reserved")
            err = Int(val, &ev->total_reserved);
          break;
        case 'D':
          if (key == "Device Type" || key == "Device Id") {
            n = -1;
            err = Int(val, &n);
            (key == "Device Type" ? ev->device_type : ev->device_id) = static_cast<int32_t>(n);
          }
          break;
        default:
          break;
      }
      if (err) return err;
    }
    return simdjson::SUCCESS;
  }

  simdjson::error_code ReadEvent(od::object& obj, RawEvent* ev) {
    for (auto result : obj) {
      if (auto err = result.error()) return err;
      od::field&& field = std::move(result).value_unsafe();
      od::raw_json_string key = field.key();
      od::value& v = field.value();
      simdjson::error_code err = simdjson::SUCCESS;
      // Switch on the first byte so most keys cost one comparison.
      switch (key.raw()[0]) {
        case 'p':
          if (key == "ph") {
            err = v.get_string().get(ev->ph);
            if (err == simdjson::INCORRECT_TYPE && !(err = NonString(v, &ev->ph))) ev->ph = "?";
          } else if (key == "pid") {
            err = LaneValue(v, &ev->pid, &pid_scratch_, ev);
          }
          break;
        case 't':
          if (key == "ts") {
            err = TimeValue(v, &ev->ts, &ev->has_ts, ev, "\"ts\" is not a number of microseconds",
                            "\"ts\" is not a number of microseconds that fits in 64-bit nanoseconds");
          } else if (key == "tid") {
            err = LaneValue(v, &ev->tid, &tid_scratch_, ev);
          }
          break;
        case 'd':
          if (key == "dur") {
            err = TimeValue(v, &ev->dur, &ev->has_dur, ev, "\"dur\" is not a number of microseconds",
                            "\"dur\" is not a number of microseconds that fits in 64-bit nanoseconds");
          }
          break;
        case 'n':
          if (key == "name") {
            err = v.get_string().get(ev->name);
            if (err == simdjson::INCORRECT_TYPE) {
              od::json_type type;
              err = v.type().get(type);
              if (!err && (type == od::json_type::object || type == od::json_type::array)) {
                ev->bad = "name is an object or array";
              } else if (!err) {
                err = NonString(v, &ev->name);  // a number or literal: its JSON text
              }
            }
          }
          break;
        case 'c':
          if (key == "cat") {
            err = v.get_string().get(ev->cat);
            if (err == simdjson::INCORRECT_TYPE) err = NonString(v, &ev->cat);
          }
          break;
        case 'a':
          if (key == "args") err = ReadArgs(v, ev);
          break;
        case 'i':
          if (key == "id") {
            std::string_view text;
            err = v.get_uint64().get(ev->id);
            if (!err) {
              ev->has_id = true;
            } else if (err == simdjson::INCORRECT_TYPE && !(err = v.get_string().get(text))) {
              // Chrome also writes ids as strings ("0x1f"); others are left unlinked.
              char* end = nullptr;
              std::string t(text);
              ev->id = std::strtoull(t.c_str(), &end, 0);
              ev->has_id = !t.empty() && end && *end == '\0';
            } else {
              err = simdjson::SUCCESS;
            }
          }
          break;
        default:
          break;
      }
      if (err) return err;
    }
    // Times are kept within +-2^62 ns (146 years either side of the epoch, or of the
    // trace's start), so that any two of them are less than 2^63 apart: a span, a
    // duration or a gap can never wrap. An event past that carries no usable time.
    int64_t end = 0;
    if (!ev->bad && ev->has_ts &&
        (ev->ts <= -kTimeLimit || ev->ts >= kTimeLimit ||
         (ev->has_dur && (ev->dur <= -kTimeLimit || ev->dur >= kTimeLimit ||
                          __builtin_add_overflow(ev->ts, ev->dur, &end) || end >= kTimeLimit || end <= -kTimeLimit)))) {
      ev->bad = "\"ts\" or \"ts\" + \"dur\" lies more than 2^62 ns (146 years) from 0";
    }
    return simdjson::SUCCESS;
  }

  static constexpr int64_t kTimeLimit = int64_t{1} << 62;

  od::parser parser_;
  od::parser one_parser_;  // for events read alone, so parser_'s buffers stay sized for chunks
  std::string one_;
  std::string pid_scratch_, tid_scratch_;
};

EventParser::EventParser() : impl_(std::make_unique<Impl>()) {}
EventParser::~EventParser() = default;
void EventParser::Parse(const char* text, size_t len, size_t capacity, const std::vector<ChunkStart>& starts,
                        EventSink& sink) {
  impl_->Parse(text, len, capacity, starts, sink);
}

}  // namespace torch2pprof
