#include "torch2pprof/stages/trace.h"

#include <cctype>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>

#include "base/string_index.h"

namespace torch2pprof {
namespace {
std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}
}  // namespace

const std::array<SkipReason, static_cast<int>(Skip::kCount)> kSkipReasons = {{
    {"zero_duration", "X events with dur 0 (instants carry no time)"},
    {"negative_duration", "X events with a negative dur"},
    {"no_duration", "X events without dur"},
    {"no_timestamp", "X, B or E events without ts"},
    {"unmatched_end", "E events with no open B on their lane"},
    {"unmatched_begin", "B events never closed by an E"},
    {"empty_pair", "B/E pairs whose E is not after the B"},
    {"not_an_object", "elements of traceEvents that are not JSON objects"},
    {"bad_json", "events that are not JSON even after repair"},
    {"bad_value", "events whose ts, dur, pid or tid has an unusable value"},
    {"garbage", "text between events that is no JSON value"},
    {"profiler_span", "the profiler's own span (cat Trace), which is not work"},
    {"python_after_parent", "python_function events that start at or after their Python parent's end"},
}};

uint64_t LoadStats::bad_total() const {
  return skipped[static_cast<int>(Skip::kBadJson)] + skipped[static_cast<int>(Skip::kBadValue)] +
         skipped[static_cast<int>(Skip::kGarbage)];
}

uint64_t LoadStats::skipped_total() const {
  uint64_t n = 0;
  for (uint64_t k : skipped) n += k;
  return n;
}

DistributedInfo ReadDistributedInfo(const TraceHeader& header) {
  DistributedInfo d;
  auto it = header.raw.find("distributedInfo");
  if (it == header.raw.end()) return d;
  nlohmann::json info = nlohmann::json::parse(it->second, nullptr, false);
  if (!info.is_object()) return d;
  auto integer = [&](const char* key) {
    auto v = info.find(key);
    return v != info.end() && v->is_number_integer() && (!v->is_number_unsigned() || v->get<uint64_t>() <= INT64_MAX)
               ? v->get<int64_t>()
               : -1;
  };
  d.rank = integer("rank");
  d.world_size = integer("world_size");
  auto backend = info.find("backend");
  if (backend != info.end() && backend->is_string()) d.backend = backend->get<std::string>();
  return d;
}

namespace {
// Header values of the wrong type are ignored, never thrown about.
std::string JsonString(const nlohmann::json& o, const char* key) {
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

int64_t JsonInt(const nlohmann::json& o, const char* key, int64_t fallback = -1) {
  auto it = o.find(key);
  if (it == o.end() || !it->is_number()) return fallback;
  if (it->is_number_float()) {
    double d = it->get<double>();
    return d >= -9.2e18 && d <= 9.2e18 ? static_cast<int64_t>(d) : fallback;
  }
  if (it->is_number_unsigned()) {
    uint64_t u = it->get<uint64_t>();
    return u <= static_cast<uint64_t>(INT64_MAX) ? static_cast<int64_t>(u) : fallback;
  }
  return it->get<int64_t>();
}
}  // namespace

std::vector<DeviceInfo> ReadDeviceProperties(const TraceHeader& header) {
  std::vector<DeviceInfo> out;
  auto it = header.raw.find("deviceProperties");
  if (it == header.raw.end()) return out;
  nlohmann::json props = nlohmann::json::parse(it->second, nullptr, false);
  if (!props.is_array()) return out;
  for (const auto& d : props) {
    if (!d.is_object()) continue;
    DeviceInfo info;
    info.id = JsonInt(d, "id");
    info.name = JsonString(d, "name");
    info.total_memory = JsonInt(d, "totalGlobalMem");
    info.sms = JsonInt(d, "numSms");
    if (JsonInt(d, "computeMajor") >= 0) {
      info.compute = std::to_string(JsonInt(d, "computeMajor")) + "." + std::to_string(JsonInt(d, "computeMinor", 0));
    }
    out.push_back(info);
  }
  return out;
}

int64_t WallClockStart(const Trace& trace, int64_t first_start) {
  // Plausible epochs: 2000-01-01 to 2100-01-01 in nanoseconds.
  constexpr int64_t kLow = 946684800LL * 1000000000LL, kHigh = 4102444800LL * 1000000000LL;
  auto plausible = [&](int64_t t) { return t >= kLow && t < kHigh; };
  int64_t with_base;
  if (trace.header.has_base_time && !__builtin_add_overflow(trace.header.base_time_ns, first_start, &with_base) &&
      plausible(with_base)) {
    return with_base;
  }
  return plausible(first_start) ? first_start : 0;
}

Role RoleOfCategory(std::string_view category) {
  std::string c = Lower(category);
  // torch 1.13's exporter writes no category; it records only operators and record_functions.
  if (c.empty() || c == "cpu_op" || c == "operator" || c == "python") return Role::kOperator;
  if (c == "cuda_runtime" || c == "runtime" || c == "mtia_runtime" || c == "xpu_runtime" || c == "glow_runtime" ||
      c == "privateuse1_runtime" || c == "cuda_driver") {
    return Role::kRuntime;
  }
  if (c == "kernel" || c == "mtia_ccp_events") return Role::kKernel;
  if (c == "gpu_memcpy" || c == "memcpy") return Role::kMemcpy;
  if (c == "gpu_memset" || c == "memset") return Role::kMemset;
  if (c == "user_annotation") return Role::kUserAnnotation;
  if (c == "gpu_user_annotation") return Role::kDeviceAnnotation;
  if (c == "python_function") return Role::kPythonFunction;
  if (c == "trace") return Role::kTrace;
  return Role::kOther;
}

const char* RoleName(Role role) {
  switch (role) {
    case Role::kOperator:
      return "operator";
    case Role::kRuntime:
      return "runtime";
    case Role::kKernel:
      return "kernel";
    case Role::kMemcpy:
      return "memcpy";
    case Role::kMemset:
      return "memset";
    case Role::kUserAnnotation:
      return "annotation";
    case Role::kPythonFunction:
      return "python";
    case Role::kDeviceAnnotation:
      return "device annotation";
    case Role::kTrace:
      return "trace";
    case Role::kOther:
      break;
  }
  return "other";
}

StringTable::StringTable() : index_(std::make_unique<StringIndex>()) { Intern(""); }
StringTable::~StringTable() = default;
StringTable::StringTable(StringTable&&) noexcept = default;
StringTable& StringTable::operator=(StringTable&&) noexcept = default;

std::string_view StringTable::Store(std::string_view s) {
  if (s.empty()) return std::string_view();
  if (block_used_ + s.size() > block_size_) {
    // Large strings get a block of their own; small ones share 64 KiB blocks.
    size_t size = std::max<size_t>(s.size(), 64 * 1024);
    blocks_.emplace_back(new char[size]);
    block_size_ = size;
    block_used_ = 0;
  }
  char* p = blocks_.back().get() + block_used_;
  std::memcpy(p, s.data(), s.size());
  block_used_ += s.size();
  return std::string_view(p, s.size());
}

uint32_t StringTable::Intern(std::string_view s) {
  const uint32_t hash = StringIndex::Hash(s);
  uint32_t id = index_->Find(s, hash, views_);
  if (id != StringIndex::kNone) return id;
  id = static_cast<uint32_t>(views_.size());
  views_.push_back(Store(s));
  index_->Insert(hash, id);
  return id;
}

int64_t StringTable::Find(std::string_view s) const {
  uint32_t id = index_->Find(s, StringIndex::Hash(s), views_);
  return id == StringIndex::kNone ? -1 : static_cast<int64_t>(id);
}

}  // namespace torch2pprof
