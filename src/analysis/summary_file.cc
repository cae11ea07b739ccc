#include "analysis/summary_file.h"

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>

#include "torch2pprof/error.h"
#include "torch2pprof/version.h"

namespace torch2pprof {

namespace {

constexpr const char* kMagic = "torch2pprof_summary";

// What a summary may hold, so that the reduce's sums over 1,024 ranks and their calls stay
// inside 64 bits whatever a file says: times and sizes up to 2^50 (13 days of ns, a PiB),
// starts within 2^61 of the epoch, and a rank's calls and steps summing up to 2^50 each.
constexpr int64_t kMaxValue = int64_t{1} << 50;
constexpr int64_t kMaxStart = int64_t{1} << 61;

using Out = nlohmann::ordered_json;
using In = nlohmann::json;

std::string PartKey(const StepPart& p) { return std::string(p.key) + "_ns"; }

Out EncodeStep(const StepRow& s) {
  Out o;
  o["name"] = s.name;
  o["start_ns"] = s.start_ns;
  o["total_ns"] = s.total_ns;
  for (const StepPart& p : kStepParts) o[PartKey(p)] = s.*p.field;
  return o;
}

// Field access that names what is wrong: a summary is input, and may be anything.
class Reader {
 public:
  explicit Reader(const std::string& file) : file_(file) {}

  [[noreturn]] void Fail(const std::string& what) const {
    ThrowInput(file_, -1, "not a torch2pprof summary of format " + std::to_string(kSummaryVersion) + ": " + what);
  }
  const In& Field(const In& o, const char* key, const std::string& where) const {
    if (!o.is_object()) Fail(where + " is not an object");
    auto it = o.find(key);
    if (it == o.end()) Fail(where + " has no \"" + key + "\"");
    return *it;
  }
  // A whole number in [lo, hi].
  int64_t Whole(const In& v, int64_t lo, int64_t hi, const std::string& what) const {
    if (!v.is_number_integer()) Fail(what + " is not a whole number");
    if (v.is_number_unsigned() ? v.get<uint64_t>() > static_cast<uint64_t>(hi)
                               : v.get<int64_t>() < lo || v.get<int64_t>() > hi) {
      Fail(what + " is out of range (" + std::to_string(lo) + " to " + std::to_string(hi) + ")");
    }
    return v.get<int64_t>();
  }
  // A time or size (0 to kMaxValue); ids and counts may be anything 64 bits hold.
  int64_t Int(const In& o, const char* key, const std::string& where = "the summary") const {
    return Whole(Field(o, key, where), 0, kMaxValue, where + "'s \"" + key + "\"");
  }
  int64_t Id(const In& o, const char* key) const {
    return Whole(Field(o, key, "the summary"), std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                 std::string("\"") + key + "\"");
  }
  int64_t Start(const In& o, const char* key, const std::string& where) const {
    return Whole(Field(o, key, where), -kMaxStart, kMaxStart, where + "'s \"" + key + "\"");
  }
  double Double(const In& o, const char* key) const {
    const In& v = Field(o, key, "the summary");
    if (!v.is_number() || !(v.get<double>() >= 0 && v.get<double>() <= 1e6)) {
      Fail(std::string("\"") + key + "\" is not a number from 0 to 1e6");
    }
    return v.get<double>();
  }
  std::string String(const In& o, const char* key, const std::string& where = "the summary") const {
    const In& v = Field(o, key, where);
    if (!v.is_string()) Fail(where + "'s \"" + key + "\" is not a string");
    return v.get<std::string>();
  }
  const In& Array(const In& o, const char* key) const {
    const In& v = Field(o, key, "the summary");
    if (!v.is_array()) Fail(std::string("\"") + key + "\" is not an array");
    return v;
  }
  StepRow Step(const In& o, const std::string& where) const {
    StepRow s;
    s.name = String(o, "name", where);
    s.start_ns = Start(o, "start_ns", where);
    s.total_ns = Int(o, "total_ns", where);
    for (const StepPart& p : kStepParts) s.*p.field = Int(o, PartKey(p).c_str(), where);
    return s;
  }

 private:
  const std::string& file_;
};

}  // namespace

std::string EncodeSummary(const SummaryFile& f) {
  const RankSummary& r = f.summary;
  Out o;
  o[kMagic] = kSummaryVersion;
  o["producer"] = std::string("torch2pprof ") + kVersion;
  o["file"] = r.file;
  o["rank"] = r.rank;
  o["world_size"] = r.world_size;
  o["backend"] = r.backend;
  o["warnings"] = f.warnings;
  o["step_median_ns"] = r.step_median_ns;
  o["step_min_ns"] = r.step_min_ns;
  o["step_max_ns"] = r.step_max_ns;
  o["gpu_span_ns"] = r.gpu_span_ns;
  o["gpu_idle_ns"] = r.gpu_idle_ns;
  o["compute_ns"] = r.compute_ns;
  o["non_compute_ns"] = r.non_compute_ns;
  o["comm_kernel_ns"] = r.comm_kernel_ns;
  o["overlap_ns"] = r.overlap_ns;
  o["communication_ns"] = r.communication_ns;
  o["gpu_window_ns"] = r.gpu_window_ns;
  o["gpu_utilization"] = r.gpu_utilization;
  o["memory_peak_bytes"] = r.memory_peak_bytes;
  o["memory_device"] = r.memory_device;
  o["wall_clock_offset_ns"] = r.wall_clock ? Out(r.wall_clock_offset_ns) : Out(nullptr);
  o["mean_step"] = EncodeStep(r.mean_step);
  Out steps = Out::array();
  for (const StepRow& s : r.steps) steps.push_back(EncodeStep(s));
  o["steps"] = std::move(steps);
  Out collectives = Out::array();
  for (const CollectiveStat& c : r.collectives) {
    collectives.push_back(Out{{"name", c.name}, {"kind", c.kind}, {"calls", c.calls}, {"total_ns", c.total_ns}});
  }
  o["collectives"] = std::move(collectives);
  // [collective, start_ns, dur_ns]: the list that grows with steps, so without keys.
  Out calls = Out::array();
  for (const CollectiveCall& c : r.calls) calls.push_back(Out::array({c.collective, c.start_ns, c.dur_ns}));
  o["calls"] = std::move(calls);
  // Shortest round-trip doubles; names that are not UTF-8 are written with U+FFFD (JSON
  // cannot hold them), which the text report would show them as anyway.
  return o.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

bool LooksLikeSummary(std::string_view head) {
  size_t i = 0;
  while (i < head.size() && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t')) ++i;
  if (i == head.size() || head[i] != '{') return false;
  ++i;
  while (i < head.size() && (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t')) ++i;
  return head.substr(i, 21) == std::string("\"") + kMagic + "\"";
}

SummaryFile DecodeSummary(const std::string& file, std::string_view text) {
  In o;
  try {
    o = In::parse(text.begin(), text.end());
  } catch (const In::parse_error& e) {
    // nlohmann counts bytes from 1, past the byte that failed.
    ThrowInput(file, e.byte > 0 ? static_cast<int64_t>(e.byte) - 1 : 0,
               "not a torch2pprof summary: invalid JSON (expected one object, as summarize writes)");
  } catch (const In::out_of_range&) {
    // A number past a double's range ("1E999"): nlohmann gives no offset for it.
    ThrowInput(file, -1, "not a torch2pprof summary: a number beyond a double's range");
  }
  Reader in(file);
  if (!o.is_object() || !o.contains(kMagic)) in.Fail("no \"torch2pprof_summary\" (write one with summarize)");
  const In& version = o[kMagic];
  if (!version.is_number_integer() || version.get<int64_t>() != kSummaryVersion) {
    ThrowInput(file, -1,
               "a torch2pprof summary of format " + version.dump() + ": this torch2pprof " + kVersion +
                   " reads format " + std::to_string(kSummaryVersion) + " (summarize the trace again with it)");
  }
  SummaryFile f;
  RankSummary& r = f.summary;
  r.file = in.String(o, "file");
  r.rank = in.Id(o, "rank");
  r.world_size = in.Id(o, "world_size");
  r.backend = in.String(o, "backend");
  const In& warnings = in.Array(o, "warnings");
  for (const In& w : warnings) {
    if (!w.is_string()) in.Fail("\"warnings\" holds something other than strings");
    f.warnings.push_back(w.get<std::string>());
  }
  r.step_median_ns = in.Int(o, "step_median_ns");
  r.step_min_ns = in.Int(o, "step_min_ns");
  r.step_max_ns = in.Int(o, "step_max_ns");
  r.gpu_span_ns = in.Int(o, "gpu_span_ns");
  r.gpu_idle_ns = in.Int(o, "gpu_idle_ns");
  r.compute_ns = in.Int(o, "compute_ns");
  r.non_compute_ns = in.Int(o, "non_compute_ns");
  r.comm_kernel_ns = in.Int(o, "comm_kernel_ns");
  r.overlap_ns = in.Int(o, "overlap_ns");
  r.communication_ns = in.Int(o, "communication_ns");
  r.gpu_window_ns = in.Int(o, "gpu_window_ns");
  r.gpu_utilization = in.Double(o, "gpu_utilization");
  r.memory_peak_bytes = in.Int(o, "memory_peak_bytes");
  r.memory_device = in.String(o, "memory_device");
  const In& offset = in.Field(o, "wall_clock_offset_ns", "the summary");
  if (!offset.is_null()) {
    r.wall_clock = true;
    r.wall_clock_offset_ns = in.Whole(offset, -kMaxStart, kMaxStart, "\"wall_clock_offset_ns\"");
  }
  r.mean_step = in.Step(in.Field(o, "mean_step", "the summary"), "\"mean_step\"");
  const In& steps = in.Array(o, "steps");
  int64_t sum = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    r.steps.push_back(in.Step(steps[i], "step " + std::to_string(i)));
    if ((sum += r.steps.back().total_ns) > kMaxValue) in.Fail("the steps sum past 2^50 ns");
  }
  const In& collectives = in.Array(o, "collectives");
  for (size_t i = 0; i < collectives.size(); ++i) {
    const std::string where = "collective " + std::to_string(i);
    CollectiveStat c;
    c.name = in.String(collectives[i], "name", where);
    c.kind = in.String(collectives[i], "kind", where);
    c.calls = static_cast<uint64_t>(in.Int(collectives[i], "calls", where));
    c.total_ns = in.Int(collectives[i], "total_ns", where);
    r.collectives.push_back(std::move(c));
  }
  const In& calls = in.Array(o, "calls");
  r.calls.reserve(calls.size());
  sum = 0;
  for (size_t i = 0; i < calls.size(); ++i) {
    const In& c = calls[i];
    const std::string where = "call " + std::to_string(i);
    if (!c.is_array() || c.size() != 3) in.Fail(where + " is not [collective, start_ns, dur_ns]");
    const int64_t which = in.Whole(c[0], 0, static_cast<int64_t>(r.collectives.size()) - 1,
                                   where + "'s collective (an index into \"collectives\")");
    const int64_t start = in.Whole(c[1], -kMaxStart, kMaxStart, where + "'s start");
    const int64_t dur = in.Whole(c[2], 0, kMaxValue, where + "'s duration");
    if ((sum += dur) > kMaxValue) in.Fail("the calls sum past 2^50 ns");
    r.calls.push_back({static_cast<uint32_t>(which), start, dur});
  }
  return f;
}

}  // namespace torch2pprof
