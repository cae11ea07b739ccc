// simdjson's on-demand API has no runtime dispatch: it is compiled for the kernel
// the build's -march allows (CMake's TORCH2PPROF_MARCH; SSE2 alone would mean the
// slow fallback kernel). The CLI checks at start-up that the CPU has that baseline.
#include "event_parser.h"

#include <simdjson.h>

#include <algorithm>

#include "torch2pprof/trace_loader.h"

namespace torch2pprof {

std::string_view LaneNumberText(std::string_view raw, std::string* scratch) {
  if (raw.find_first_of(".eE") == std::string_view::npos) return raw;
  int64_t ns;
  // Integral exactly when the value in "nanoseconds" is a multiple of 1000.
  if (ParseMicrosToNanos(raw, &ns) && ns % 1000 == 0) {
    *scratch = std::to_string(ns / 1000);
    return *scratch;
  }
  return raw;
}

namespace {
namespace od = simdjson::ondemand;

class Impl final : public EventParser {
 public:
  void Parse(const std::string& chunk, size_t len, const std::vector<ChunkStart>& starts, EventSink& sink) override {
    od::document doc;
    auto err = parser_.iterate(chunk.data(), len, chunk.size()).get(doc);
    if (err) LocateStage1Error(chunk, len, starts, sink, err);
    od::array arr;
    if ((err = doc.get_array().get(arr))) Fail(doc, chunk, len, starts, 0, sink, err);
    size_t index = 0;
    RawEvent ev;
    for (auto element : arr) {
      od::object obj;
      if ((err = element.get_object().get(obj))) Fail(doc, chunk, len, starts, index, sink, err);
      ev = RawEvent();
      ev.offset = starts[index].offset;
      if ((err = ReadEvent(obj, &ev, sink))) Fail(doc, chunk, len, starts, index, sink, err);
      sink.OnEvent(ev);
      ++index;
    }
  }

 private:
  static uint64_t OffsetOf(const std::string& chunk, const std::vector<ChunkStart>& starts, const char* p) {
    size_t pos = static_cast<size_t>(p - chunk.data());
    size_t lo = 0, hi = starts.size();
    while (hi - lo > 1) {
      size_t mid = (lo + hi) / 2;
      (starts[mid].pos <= pos ? lo : hi) = mid;
    }
    return starts[lo].offset + (pos >= starts[lo].pos ? pos - starts[lo].pos : 0);
  }

  [[noreturn]] static void Fail(od::document& doc, const std::string& chunk, size_t len,
                                const std::vector<ChunkStart>& starts, size_t event, EventSink& sink,
                                simdjson::error_code err) {
    uint64_t off = starts[std::min(event, starts.size() - 1)].offset;
    const char* loc = nullptr;
    if (doc.current_location().get(loc) == simdjson::SUCCESS && loc >= chunk.data() && loc < chunk.data() + len) {
      off = std::max(off, OffsetOf(chunk, starts, loc));
    }
    sink.Fail(off, std::string("invalid JSON in an event: ") + simdjson::error_message(err));
    __builtin_unreachable();
  }

  // Stage 1 failures (bad UTF-8, an unclosed string) point at no event: re-parse
  // the chunk's events one by one to name the first bad one.
  [[noreturn]] static void LocateStage1Error(const std::string& chunk, size_t len,
                                             const std::vector<ChunkStart>& starts, EventSink& sink,
                                             simdjson::error_code chunk_err) {
    std::string one;
    od::parser p;
    for (size_t i = 0; i < starts.size(); ++i) {
      size_t a = starts[i].pos;
      size_t b = i + 1 < starts.size() ? starts[i + 1].pos - 1 : len - 1;
      one.assign(chunk.data() + a, b - a);
      size_t n = one.size();
      one.append(simdjson::SIMDJSON_PADDING, ' ');
      od::document d;
      auto err = p.iterate(one.data(), n, one.size()).get(d);
      if (err) sink.Fail(starts[i].offset, std::string("invalid JSON in an event: ") + simdjson::error_message(err));
    }
    sink.Fail(starts.front().offset, std::string("invalid JSON in traceEvents: ") + simdjson::error_message(chunk_err));
    __builtin_unreachable();
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

  static simdjson::error_code LaneValue(od::value& v, std::string_view* out, std::string* scratch) {
    od::json_type type;
    if (auto err = v.type().get(type)) return err;
    if (type == od::json_type::string) return v.get_string().get(*out);
    std::string_view raw = Trim(v.raw_json_token());
    *out = type == od::json_type::number ? LaneNumberText(raw, scratch) : raw;
    return simdjson::SUCCESS;
  }

  // ts and dur: a number, or a string holding one; null counts as absent.
  static simdjson::error_code TimeValue(od::value& v, int64_t* out, bool* present, uint64_t offset, const char* key,
                                        EventSink& sink) {
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
      sink.Fail(offset, std::string("event field \"") + key + "\" must be a number of microseconds");
    }
    if (!ParseMicrosToNanos(text, out)) {
      sink.Fail(offset, std::string("event field \"") + key +
                            "\" is not a number of microseconds that fits in 64-bit nanoseconds: " +
                            std::string(text.substr(0, 40)));
    }
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

  static simdjson::error_code Double(od::value& v, double* out) {
    auto err = v.get_double().get(*out);
    return err == simdjson::INCORRECT_TYPE ? simdjson::SUCCESS : err;
  }

  // The args keys torch2pprof reads; everything else is skipped unparsed.
  static simdjson::error_code ReadArgs(od::value& v, RawEvent* ev) {
    od::object args;
    auto err = v.get_object().get(args);
    if (err == simdjson::INCORRECT_TYPE) return simdjson::SUCCESS;  // args that are no object carry nothing we use
    if (err) return err;
    for (auto field : args) {
      od::raw_json_string key;
      if ((err = field.key().get(key))) return err;
      od::value val = field.value();
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
            err = Double(val, &ev->args.occupancy);
          break;
        case 'c':
          if (key == "correlation") err = Int(val, &ev->args.correlation);
          break;
        case 'd':
          if (key == "device") {
            n = -1;
            err = Int(val, &n);
            ev->args.device = static_cast<int32_t>(n);
          }
          break;
        case 'b':
          if (key == "blocks per SM") err = Double(val, &ev->args.blocks_per_sm);
          break;
        case 'I':
          if (key == "Input Dims") {
            od::array dims;
            err = val.get_array().get(dims);
            if (!err) err = dims.raw_json().get(ev->input_dims);
            if (err == simdjson::INCORRECT_TYPE) err = simdjson::SUCCESS;
            ev->input_dims = Trim(ev->input_dims);
          }
          break;
        case 'B':
          if (key == "Bytes") err = Int(val, &ev->bytes);
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

  simdjson::error_code ReadEvent(od::object& obj, RawEvent* ev, EventSink& sink) {
    for (auto field : obj) {
      od::raw_json_string key;
      if (auto err = field.key().get(key)) return err;
      od::value v = field.value();
      simdjson::error_code err = simdjson::SUCCESS;
      // Switch on the first byte so most keys cost one comparison.
      switch (key.raw()[0]) {
        case 'p':
          if (key == "ph") {
            err = v.get_string().get(ev->ph);
            if (err == simdjson::INCORRECT_TYPE && !(err = NonString(v, &ev->ph))) ev->ph = "?";
          } else if (key == "pid") {
            err = LaneValue(v, &ev->pid, &pid_scratch_);
          }
          break;
        case 't':
          if (key == "ts") {
            err = TimeValue(v, &ev->ts, &ev->has_ts, ev->offset, "ts", sink);
          } else if (key == "tid") {
            err = LaneValue(v, &ev->tid, &tid_scratch_);
          }
          break;
        case 'd':
          if (key == "dur") err = TimeValue(v, &ev->dur, &ev->has_dur, ev->offset, "dur", sink);
          break;
        case 'n':
          if (key == "name") {
            err = v.get_string().get(ev->name);
            if (err == simdjson::INCORRECT_TYPE) err = NonString(v, &ev->name);
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
        default:
          break;
      }
      if (err) return err;
    }
    return simdjson::SUCCESS;
  }

  od::parser parser_;
  std::string pid_scratch_, tid_scratch_;
};

}  // namespace

const char* EventParserKernel() { return simdjson::builtin_implementation()->name().c_str(); }

std::unique_ptr<EventParser> MakeEventParser() { return std::make_unique<Impl>(); }

}  // namespace torch2pprof
