#include "load/summary_file.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <limits>

#include "base/json_pull.h"
#include "base/magic.h"
#include "base/utf8.h"
#include "load/byte_source.h"
#include "torch2pprof/error.h"
#include "torch2pprof/version.h"

namespace torch2pprof {

namespace {

// What a summary may hold, so that the reduce's sums over 1,024 ranks and their calls stay
// inside 64 bits whatever a file says: times and sizes up to 2^50 (13 days of ns, a PiB),
// starts within 2^61 of the epoch, and a rank's calls and steps summing up to 2^50 each.
constexpr int64_t kMaxValue = int64_t{1} << 50;
constexpr int64_t kMaxStart = int64_t{1} << 61;

std::string PartKey(const StepPart& p) { return std::string(p.key) + "_ns"; }

// ---- writing: one line, keys in a fixed order, written straight into one string (a
// summary of millions of calls is never a tree of values).

void Key(std::string& o, const char* key) {
  if (o.back() != '{' && o.back() != '[') o += ',';
  AppendJsonString(o, key);
  o += ':';
}

void Int(std::string& o, const char* key, int64_t v) {
  Key(o, key);
  o += std::to_string(v);
}

void Text(std::string& o, const char* key, const std::string& v) {
  Key(o, key);
  AppendJsonString(o, v);
}

void EncodeStep(std::string& o, const StepRow& s) {
  o += '{';
  Text(o, "name", s.name);
  Int(o, "start_ns", s.start_ns);
  Int(o, "total_ns", s.total_ns);
  for (const StepPart& p : kStepParts) Int(o, PartKey(p).c_str(), s.*p.field);
  o += '}';
}

// ---- reading: pulled from the stream a value at a time (JsonPull), each field checked
// as it comes, in any order; what is missing is named at the end.

class Reader {
 public:
  Reader(ByteSource& source)
      : file_(source.name()),
        in_(
            [&source](char* buf, size_t n) {
              const size_t got = source.Read(buf, n);
              if (source.InflatesPastCap(source.uncompressed_offset())) {
                ThrowInput(source.name(), static_cast<int64_t>(source.uncompressed_offset()),
                           "not read: a gzipped summary that inflates more than " +
                               std::to_string(ByteSource::kMaxInflation) + " times its size past 64 MiB (" +
                               std::to_string(source.stored_offset()) + " bytes to " +
                               std::to_string(source.uncompressed_offset()) +
                               " so far; summarize's inflate about 10 times): gunzip it to read it as it is");
              }
              return got;
            },
            source.name(), "not a torch2pprof summary: ") {}

  [[noreturn]] void Fail(const std::string& what) const {
    ThrowInput(file_, -1, "not a torch2pprof summary of format " + std::to_string(kSummaryVersion) + ": " + what);
  }
  JsonPull& in() { return in_; }

  // A whole number in [lo, hi].
  int64_t Whole(int64_t lo, int64_t hi, const std::string& what) {
    if (in_.Peek() != JsonPull::Type::kNumber) Fail(what + " is not a whole number");
    const std::string text = in_.Number();
    if (text.find_first_of(".eE") != std::string::npos) {
      double d = 0;
      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
      if (ec == std::errc::result_out_of_range) Fail(what + ": a number beyond a double's range");
      Fail(what + " is not a whole number");
    }
    int64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || v < lo || v > hi) {
      Fail(what + " is out of range (" + std::to_string(lo) + " to " + std::to_string(hi) + ")");
    }
    return v;
  }
  // A time or size (0 to kMaxValue).
  int64_t Int(const std::string& what) { return Whole(0, kMaxValue, what); }
  int64_t Id(const std::string& what) {
    return Whole(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), what);
  }
  int64_t Start(const std::string& what) { return Whole(-kMaxStart, kMaxStart, what); }
  double Double(const std::string& what) {
    if (in_.Peek() != JsonPull::Type::kNumber) Fail(what + " is not a number from 0 to 1e6");
    const std::string text = in_.Number();
    double d = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
    if (ec == std::errc::result_out_of_range) Fail(what + ": a number beyond a double's range");
    if (ec != std::errc() || !(d >= 0 && d <= 1e6)) Fail(what + " is not a number from 0 to 1e6");
    return d;
  }
  std::string String(const std::string& what) {
    if (in_.Peek() != JsonPull::Type::kString) Fail(what + " is not a string");
    return in_.String();
  }
  void Object(const std::string& what) {
    if (in_.Peek() != JsonPull::Type::kObject) Fail(what + " is not an object");
    in_.BeginObject();
  }
  void Array(const std::string& what) {
    if (in_.Peek() != JsonPull::Type::kArray) Fail(what + " is not an array");
    in_.BeginArray();
  }
  // The fields of an object, each given to `field` (which returns false for a key it does
  // not know: skipped); the ones in `required` that never came are named.
  template <typename Field>
  void Fields(const std::string& where, std::vector<std::string> required, Field field) {
    std::string key;
    while (in_.NextKey(&key)) {
      if (!field(key)) {
        in_.Skip();
        continue;
      }
      auto it = std::find(required.begin(), required.end(), key);
      if (it != required.end()) required.erase(it);
    }
    if (!required.empty()) Fail(where + " has no \"" + required.front() + "\"");
  }
  StepRow Step(const std::string& where) {
    StepRow s;
    Object(where);
    std::vector<std::string> required = {"name", "start_ns", "total_ns"};
    for (const StepPart& p : kStepParts) required.push_back(PartKey(p));
    Fields(where, required, [&](const std::string& key) {
      const std::string what = where + "'s \"" + key + "\"";
      if (key == "name") {
        s.name = String(what);
      } else if (key == "start_ns") {
        s.start_ns = Start(what);
      } else if (key == "total_ns") {
        s.total_ns = Int(what);
      } else {
        for (const StepPart& p : kStepParts) {
          if (key == PartKey(p)) {
            s.*p.field = Int(what);
            return true;
          }
        }
        return false;
      }
      return true;
    });
    return s;
  }

 private:
  std::string file_;
  JsonPull in_;
};

}  // namespace

// Over 100 lines: the summary's fields in the order of its format, one after another.
std::string EncodeSummary(const SummaryFile& f) {
  const RankSummary& r = f.summary;
  std::string o = "{";
  Int(o, kSummaryMagic, kSummaryVersion);
  Text(o, "producer", std::string("torch2pprof ") + kVersion);
  Text(o, "file", r.file);
  Int(o, "rank", r.rank);
  Int(o, "world_size", r.world_size);
  Text(o, "backend", r.backend);
  Key(o, "warnings");
  o += '[';
  for (size_t i = 0; i < f.warnings.size(); ++i) {
    if (i) o += ',';
    AppendJsonString(o, f.warnings[i]);
  }
  o += ']';
  Int(o, "step_median_ns", r.step_median_ns);
  Int(o, "step_min_ns", r.step_min_ns);
  Int(o, "step_max_ns", r.step_max_ns);
  Int(o, "gpu_span_ns", r.gpu_span_ns);
  Int(o, "gpu_idle_ns", r.gpu_idle_ns);
  Int(o, "compute_ns", r.compute_ns);
  Int(o, "non_compute_ns", r.non_compute_ns);
  Int(o, "comm_kernel_ns", r.comm_kernel_ns);
  Int(o, "overlap_ns", r.overlap_ns);
  Int(o, "communication_ns", r.communication_ns);
  Int(o, "gpu_window_ns", r.gpu_window_ns);
  // The shortest text that reads back as the same double.
  char number[64];
  auto [end, ec] = std::to_chars(number, number + sizeof number, r.gpu_utilization);
  Key(o, "gpu_utilization");
  o.append(number, ec == std::errc() ? end : number);
  Int(o, "memory_peak_bytes", r.memory_peak_bytes);
  Text(o, "memory_device", r.memory_device);
  Key(o, "wall_clock_offset_ns");
  o += r.wall_clock ? std::to_string(r.wall_clock_offset_ns) : "null";
  Int(o, "bus_bytes", r.bus_bytes);
  Int(o, "bus_time_ns", r.bus_time_ns);
  Text(o, "top_finding", r.top_finding);
  Text(o, "top_finding_code", r.top_finding_code);
  Int(o, "top_finding_ns", r.top_finding_ns);
  Key(o, "mean_step");
  EncodeStep(o, r.mean_step);
  Key(o, "steps");
  o += '[';
  for (size_t i = 0; i < r.steps.size(); ++i) {
    if (i) o += ',';
    EncodeStep(o, r.steps[i]);
  }
  o += ']';
  Key(o, "collectives");
  o += '[';
  for (size_t i = 0; i < r.collectives.size(); ++i) {
    const CollectiveStat& c = r.collectives[i];
    o += i ? ",{" : "{";
    Text(o, "name", c.name);
    Text(o, "kind", c.kind);
    Int(o, "calls", static_cast<int64_t>(c.calls));
    Int(o, "total_ns", c.total_ns);
    o += '}';
  }
  o += ']';
  // The rank's profile as a flame graph (RankSummary::flame): what the HTML report over
  // ranks draws, so that a report from summaries is the one from their traces.
  if (!r.flame.empty()) {
    const FlameGraph& g = r.flame;
    Key(o, "profile");
    o += '{';
    auto strings = [&](const char* key, const std::vector<std::string>& v, bool comma) {
      if (comma) o += ',';
      o += '"';
      o += key;
      o += "\":[";
      for (size_t i = 0; i < v.size(); ++i) {
        if (i) o += ',';
        AppendJsonString(o, v[i]);
      }
      o += ']';
    };
    auto numbers = [&](const auto& v) {
      o += '[';
      for (size_t i = 0; i < v.size(); ++i) o += (i ? "," : "") + std::to_string(v[i]);
      o += ']';
    };
    strings("types", g.types, false);
    strings("units", g.units, true);
    strings("names", g.names, true);
    o += ",\"parent\":";
    numbers(g.parent);
    o += ",\"name\":";
    numbers(g.name);
    o += ",\"total\":[";
    for (size_t t = 0; t < g.total.size(); ++t) {
      if (t) o += ',';
      numbers(g.total[t]);
    }
    o += "],\"folded\":" + std::to_string(g.folded);
    auto [share_end, share_ec] = std::to_chars(number, number + sizeof number, g.fold_share);
    o += ",\"share\":";
    o.append(number, share_ec == std::errc() ? share_end : number);
    o += '}';
  }
  // [collective, start_ns, dur_ns]: the list that grows with steps, so without keys.
  Key(o, "calls");
  o += '[';
  for (size_t i = 0; i < r.calls.size(); ++i) {
    const CollectiveCall& c = r.calls[i];
    o += i ? ",[" : "[";
    o += std::to_string(c.collective) + ',' + std::to_string(c.start_ns) + ',' + std::to_string(c.dur_ns) + ']';
  }
  o += "]}\n";
  return o;
}

namespace {

// The summary's first key and its format: a summary of another format is refused by name.
void ReadMagic(Reader& in, const std::string& file) {
  JsonPull& json = in.in();
  if (json.Peek() != JsonPull::Type::kObject) {
    if (json.Peek() == JsonPull::Type::kEnd) {
      json.Fail("invalid JSON (expected one object, as summarize writes)");
    }
    in.Fail("no \"" + std::string(kSummaryMagic) + "\" (write one with summarize)");
  }
  json.BeginObject();
  std::string key;
  if (!json.NextKey(&key) || key != kSummaryMagic) {
    in.Fail("no \"" + std::string(kSummaryMagic) + "\" (write one with summarize)");
  }
  {
    std::string version = json.Peek() == JsonPull::Type::kNumber ? json.Number() : "";
    if (version != std::to_string(kSummaryVersion)) {
      if (version.empty()) json.Skip(), version = "of another kind";
      ThrowInput(file, -1,
                 "a torch2pprof summary of format " + version + ": this torch2pprof " + kVersion + " reads format " +
                     std::to_string(kSummaryVersion) + " (summarize the trace again with it)");
    }
  }
}

// "collectives": [{name, kind, calls, total_ns}, ...]
void ReadCollectives(Reader& in, const std::string& what, RankSummary* r) {
  JsonPull& json = in.in();
  in.Array(what);
  while (json.NextElement()) {
    const std::string where = "collective " + std::to_string(r->collectives.size());
    CollectiveStat c;
    in.Object(where);
    in.Fields(where, {"name", "kind", "calls", "total_ns"}, [&](const std::string& ck) {
      const std::string cwhat = where + "'s \"" + ck + "\"";
      if (ck == "name") {
        c.name = in.String(cwhat);
      } else if (ck == "kind") {
        c.kind = in.String(cwhat);
      } else if (ck == "calls") {
        c.calls = static_cast<uint64_t>(in.Int(cwhat));
      } else if (ck == "total_ns") {
        c.total_ns = in.Int(cwhat);
      } else {
        return false;
      }
      return true;
    });
    r->collectives.push_back(std::move(c));
  }
}

// "calls": [[collective, start_ns, dur_ns], ...]; the largest collective index is checked
// once "collectives" is read too, whatever their order.
void ReadCalls(Reader& in, const std::string& what, RankSummary* r, int64_t* max_collective, uint64_t* max_at) {
  JsonPull& json = in.in();
  in.Array(what);
  int64_t sum = 0;
  while (json.NextElement()) {
    const std::string where = "call " + std::to_string(r->calls.size());
    if (json.Peek() != JsonPull::Type::kArray) in.Fail(where + " is not [collective, start_ns, dur_ns]");
    json.BeginArray();
    int64_t v[3];
    for (int64_t& x : v) {
      if (!json.NextElement()) in.Fail(where + " is not [collective, start_ns, dur_ns]");
      const bool first = &x == &v[0];
      x = first         ? in.Whole(0, std::numeric_limits<uint32_t>::max(),
                                   where + "'s collective (an index into \"collectives\")")
          : &x == &v[1] ? in.Whole(-kMaxStart, kMaxStart, where + "'s start")
                        : in.Whole(0, kMaxValue, where + "'s duration");
    }
    if (json.NextElement()) in.Fail(where + " is not [collective, start_ns, dur_ns]");
    if ((sum += v[2]) > kMaxValue) in.Fail("the calls sum past 2^50 ns");
    if (v[0] > *max_collective) *max_collective = v[0], *max_at = r->calls.size();
    r->calls.push_back({static_cast<uint32_t>(v[0]), v[1], v[2]});
  }
}

}  // namespace

// "profile": the flame graph EncodeSummary writes, checked so that the page's script can
// trust it: a tree (each node's parent before it), names and values in range, at most
// kMaxProfileNodes nodes.
constexpr size_t kMaxProfileNodes = 100000;
FlameGraph ReadProfile(Reader& in, const std::string& what) {
  JsonPull& json = in.in();
  FlameGraph g;
  auto strings = [&](const std::string& where, std::vector<std::string>* out) {
    in.Array(where);
    while (json.NextElement()) {
      out->push_back(in.String(where + "'s elements"));
      if (out->size() > kMaxProfileNodes) in.Fail(where + " holds more than " + std::to_string(kMaxProfileNodes));
    }
  };
  auto wholes = [&](const std::string& where, auto* out, int64_t hi) {
    in.Array(where);
    while (json.NextElement()) {
      out->push_back(static_cast<typename std::decay_t<decltype(*out)>::value_type>(in.Whole(0, hi, where)));
      if (out->size() > kMaxProfileNodes) in.Fail(where + " holds more than " + std::to_string(kMaxProfileNodes));
    }
  };
  in.Object(what);
  in.Fields(what, {"types", "units", "names", "parent", "name", "total", "folded", "share"}, [&](const std::string& k) {
    const std::string where = what + "'s \"" + k + "\"";
    if (k == "types") {
      strings(where, &g.types);
    } else if (k == "units") {
      strings(where, &g.units);
    } else if (k == "names") {
      strings(where, &g.names);
    } else if (k == "parent") {
      wholes(where, &g.parent, static_cast<int64_t>(kMaxProfileNodes));
    } else if (k == "name") {
      wholes(where, &g.name, static_cast<int64_t>(kMaxProfileNodes));
    } else if (k == "total") {
      in.Array(where);
      while (json.NextElement()) {
        g.total.emplace_back();
        wholes(where, &g.total.back(), kMaxValue);
        if (g.total.size() > 16) in.Fail(where + " holds more than 16 types");
      }
    } else if (k == "folded") {
      g.folded = static_cast<uint64_t>(in.Int(where));
    } else if (k == "share") {
      g.fold_share = in.Double(where);
    } else {
      return false;
    }
    return true;
  });
  const size_t n = g.parent.size();
  if (g.units.size() != g.types.size() || g.total.size() != g.types.size()) {
    in.Fail(what + ": \"types\", \"units\" and \"total\" differ in length");
  }
  if (g.name.size() != n || n == 0 || g.parent[0] != 0) in.Fail(what + ": \"parent\" and \"name\" are no tree");
  for (size_t i = 1; i < n; ++i) {
    if (g.parent[i] >= i) in.Fail(what + ": node " + std::to_string(i) + "'s parent does not come before it");
  }
  for (const uint32_t k : g.name) {
    if (k >= g.names.size()) in.Fail(what + ": a name index is out of range");
  }
  for (const std::vector<int64_t>& t : g.total) {
    if (t.size() != n) in.Fail(what + ": a \"total\" is not one value a node");
  }
  return g;
}

// Over 100 lines: one dispatch over the summary's keys as they stream in, each read with
// its own check.
SummaryFile ReadSummary(ByteSource& source) {
  Reader in(source);
  JsonPull& json = in.in();
  ReadMagic(in, source.name());
  SummaryFile f;
  RankSummary& r = f.summary;
  struct IntField {
    const char* key;
    int64_t RankSummary::*field;
  };
  static constexpr IntField kInts[] = {
      {"step_median_ns", &RankSummary::step_median_ns}, {"step_min_ns", &RankSummary::step_min_ns},
      {"step_max_ns", &RankSummary::step_max_ns},       {"gpu_span_ns", &RankSummary::gpu_span_ns},
      {"gpu_idle_ns", &RankSummary::gpu_idle_ns},       {"compute_ns", &RankSummary::compute_ns},
      {"non_compute_ns", &RankSummary::non_compute_ns}, {"comm_kernel_ns", &RankSummary::comm_kernel_ns},
      {"overlap_ns", &RankSummary::overlap_ns},         {"communication_ns", &RankSummary::communication_ns},
      {"gpu_window_ns", &RankSummary::gpu_window_ns},   {"memory_peak_bytes", &RankSummary::memory_peak_bytes},
      {"bus_bytes", &RankSummary::bus_bytes},           {"bus_time_ns", &RankSummary::bus_time_ns},
      {"top_finding_ns", &RankSummary::top_finding_ns},
  };
  // Fields later writers added: read where they are, 0 where an earlier summary has none.
  static constexpr const char* kOptional[] = {"bus_bytes", "bus_time_ns", "top_finding_ns"};
  std::vector<std::string> required = {"file",          "rank",
                                       "world_size",    "backend",
                                       "warnings",      "gpu_utilization",
                                       "memory_device", "wall_clock_offset_ns",
                                       "mean_step",     "steps",
                                       "collectives",   "calls"};
  for (const IntField& i : kInts) {
    if (std::find(std::begin(kOptional), std::end(kOptional), std::string_view(i.key)) == std::end(kOptional)) {
      required.push_back(i.key);
    }
  }
  // Calls name collectives by index: checked once both are read, whatever their order.
  int64_t max_collective = -1;
  uint64_t max_at = 0;
  in.Fields("the summary", required, [&](const std::string& k) {
    const std::string what = "\"" + k + "\"";
    for (const IntField& i : kInts) {
      if (k == i.key) {
        r.*i.field = in.Int("the summary's " + what);
        return true;
      }
    }
    if (k == "file") {
      r.file = in.String("the summary's " + what);
    } else if (k == "rank") {
      r.rank = in.Id(what);
    } else if (k == "world_size") {
      r.world_size = in.Id(what);
    } else if (k == "backend") {
      r.backend = in.String(what);
    } else if (k == "memory_device") {
      r.memory_device = in.String("the summary's " + what);
    } else if (k == "top_finding") {
      r.top_finding = in.String("the summary's " + what);
      // Its title is written from its id: one no finding has is no summary this reads.
      if (!r.top_finding.empty() && FindingOf(r.top_finding) == Finding::kCount) {
        in.Fail("the summary's " + what + " is no finding's id");
      }
    } else if (k == "top_finding_code") {
      r.top_finding_code = in.String("the summary's " + what);
    } else if (k == "gpu_utilization") {
      r.gpu_utilization = in.Double(what);
    } else if (k == "wall_clock_offset_ns") {
      if (json.Peek() == JsonPull::Type::kNull) {
        json.Null();
      } else {
        r.wall_clock = true;
        r.wall_clock_offset_ns = in.Whole(-kMaxStart, kMaxStart, what);
      }
    } else if (k == "warnings") {
      in.Array(what);
      while (json.NextElement()) {
        if (json.Peek() != JsonPull::Type::kString) in.Fail("\"warnings\" holds something other than strings");
        f.warnings.push_back(json.String());
      }
    } else if (k == "mean_step") {
      r.mean_step = in.Step(what);
    } else if (k == "steps") {
      in.Array(what);
      int64_t sum = 0;
      while (json.NextElement()) {
        r.steps.push_back(in.Step("step " + std::to_string(r.steps.size())));
        if ((sum += r.steps.back().total_ns) > kMaxValue) in.Fail("the steps sum past 2^50 ns");
      }
    } else if (k == "collectives") {
      ReadCollectives(in, what, &r);
    } else if (k == "calls") {
      ReadCalls(in, what, &r, &max_collective, &max_at);
    } else if (k == "profile") {
      r.flame = ReadProfile(in, "the summary's " + what);
    } else {
      return false;
    }
    return true;
  });
  json.End();
  if (max_collective >= static_cast<int64_t>(r.collectives.size())) {
    in.Fail("call " + std::to_string(max_at) + "'s collective (an index into \"collectives\") is out of range (0 to " +
            std::to_string(static_cast<int64_t>(r.collectives.size()) - 1) + ")");
  }
  return f;
}

SummaryFile DecodeSummary(const std::string& file, std::string_view text) {
  ByteSource source(text, file);
  return ReadSummary(source);
}

}  // namespace torch2pprof
