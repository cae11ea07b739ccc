// Collectives by message size and their bandwidth, as nccl-tests reports them
// (doc/PERFORMANCE.md in NVIDIA/nccl-tests), from the messages PyTorch records on the
// NCCL kernels.
#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <tuple>

#include "analysis/stages.h"

namespace torch2pprof::analysis {

namespace {

// Bytes per element of the dtypes PyTorch writes (c10's ScalarType names); 0: unknown.
int64_t DtypeBytes(std::string_view dtype) {
  static constexpr std::pair<std::string_view, int64_t> kSizes[] = {{"Float", 4},
                                                                    {"Double", 8},
                                                                    {"Half", 2},
                                                                    {"BFloat16", 2},
                                                                    {"Int", 4},
                                                                    {"Long", 8},
                                                                    {"Short", 2},
                                                                    {"Char", 1},
                                                                    {"Byte", 1},
                                                                    {"Bool", 1},
                                                                    {"ComplexFloat", 8},
                                                                    {"ComplexDouble", 16},
                                                                    {"ComplexHalf", 4},
                                                                    {"Float8_e4m3fn", 1},
                                                                    {"Float8_e5m2", 1},
                                                                    {"Float8_e4m3fnuz", 1},
                                                                    {"Float8_e5m2fnuz", 1},
                                                                    {"UInt16", 2},
                                                                    {"UInt32", 4},
                                                                    {"UInt64", 8}};
  for (const auto& [name, size] : kSizes) {
    if (name == dtype) return size;
  }
  return 0;
}

enum class Kind { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kOther };

// "all_reduce", "allreduce", "_allgather_base", "reduce_scatter_tensor_coalesced": by
// the name without underscores and case.
Kind KindOf(std::string_view name) {
  std::string n;
  for (char c : name) {
    if (c != '_') n += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (n.find("allreduce") != std::string::npos) return Kind::kAllReduce;
  if (n.find("allgather") != std::string::npos) return Kind::kAllGather;
  if (n.find("reducescatter") != std::string::npos) return Kind::kReduceScatter;
  if (n.find("alltoall") != std::string::npos) return Kind::kAllToAll;
  return Kind::kOther;
}

}  // namespace

Message MessageOf(const Trace& t, const CollectiveArgs& c) {
  Message m;
  const Kind kind = KindOf(t.strings.Get(c.name));
  const int64_t element = DtypeBytes(t.strings.Get(c.dtype));
  // nccl-tests' size: the gathered output for all-gather, the input otherwise.
  const int64_t nelems = kind == Kind::kAllGather ? c.out_nelems : c.in_nelems;
  if (element > 0 && nelems >= 0 && __builtin_mul_overflow(nelems, element, &m.bytes)) m.bytes = -1;
  const double n = c.group_size;
  if (c.group_size > 0) {
    m.bus_factor = kind == Kind::kAllReduce ? 2 * (n - 1) / n : kind == Kind::kOther ? 1 : (n - 1) / n;
  }
  return m;
}

double LinkBusBandwidth(const std::vector<CollectiveSizeRow>& rows) {
  // The fastest the link showed: the best mean bus bandwidth of one message size, among
  // messages of 1 MiB or more where there are some (small ones measure latency, not the link).
  double best = -1, best_large = -1;
  for (const CollectiveSizeRow& r : rows) {
    const double bw = r.busbw_gb_per_s();
    if (bw <= 0 || r.group_size < 2) continue;
    best = std::max(best, bw);
    if (r.message_bytes >= (int64_t{1} << 20)) best_large = std::max(best_large, bw);
  }
  return best_large > 0 ? best_large : best;
}

std::vector<CollectiveSizeRow> CollectiveSizes(const Events& ev) {
  const Trace& t = ev.trace();
  using Key = std::tuple<uint32_t, uint32_t, int32_t, int64_t>;  // name, dtype, group, message bytes
  std::map<Key, CollectiveSizeRow> rows;
  for (const CollectiveArgs& c : t.collectives) {
    if (ev.RoleOf(c.interval) != Role::kKernel) continue;  // the host's span is no transfer time
    const Message m = MessageOf(t, c);
    CollectiveSizeRow& r = rows[{c.name, c.dtype, c.group_size, m.bytes}];
    if (r.calls == 0) {
      r.group_size = c.group_size;
      r.message_bytes = m.bytes;
      r.bus_factor = m.bus_factor;
    }
    ++r.calls;
    r.time_ns += ev.Dur(c.interval);
  }
  std::vector<CollectiveSizeRow> out;
  for (auto& [key, r] : rows) {
    r.collective = std::string(t.strings.Get(std::get<0>(key)));
    r.dtype = std::string(t.strings.Get(std::get<1>(key)));
    out.push_back(std::move(r));
  }
  std::stable_sort(out.begin(), out.end(), [](const CollectiveSizeRow& x, const CollectiveSizeRow& y) {
    return std::tie(y.time_ns, x.collective, x.message_bytes) < std::tie(x.time_ns, y.collective, y.message_bytes);
  });
  return out;
}

}  // namespace torch2pprof::analysis
