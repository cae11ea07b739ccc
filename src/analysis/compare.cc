#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>

#include "analysis/statistics.h"
#include "torch2pprof/analysis.h"
#include "torch2pprof/compare.h"
#include "torch2pprof/error.h"
#include "torch2pprof/snapshot.h"

namespace torch2pprof {
namespace {

uint64_t Seed(const std::string& name) {  // FNV-1a: each metric its own fixed stream
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ULL;
  return h;
}

int64_t PerStep(int64_t total, size_t steps) {
  return static_cast<int64_t>(
      std::llround(static_cast<double>(total) / static_cast<double>(std::max<size_t>(1, steps))));
}

StepSummary Summarize(const Analysis& a) {
  StepSummary s;
  s.steps = a.steps.size();
  if (a.steps.empty()) return s;
  std::vector<int64_t> t;
  for (const StepRow& r : a.steps) t.push_back(r.total_ns);
  std::sort(t.begin(), t.end());
  s.min_ns = t.front();
  s.max_ns = t.back();
  s.median_ns = Median(t);
  return s;
}

std::vector<int64_t> PartValues(const Analysis& a, int64_t StepRow::*field) {
  std::vector<int64_t> v;
  for (const StepRow& r : a.steps) v.push_back(r.*field);
  return v;
}

int64_t Mean(const std::vector<int64_t>& v) {
  if (v.empty()) return 0;
  double sum = 0;
  for (int64_t x : v) sum += static_cast<double>(x);
  return static_cast<int64_t>(std::llround(sum / static_cast<double>(v.size())));
}

// Sums of the per-step values of the rows a glob matches, by step.
template <typename Row, typename Get>
std::vector<int64_t> MatchedPerStep(const std::vector<Row>& rows, const std::string& glob, size_t steps, Get get,
                                    bool* matched) {
  std::vector<int64_t> sum(steps, 0);
  for (const Row& r : rows) {
    if (fnmatch(glob.c_str(), r.name.c_str(), 0) != 0) continue;
    *matched = true;
    get(r).AddTo(&sum);
  }
  return sum;
}

int64_t MemoryPeak(const Analysis& a) {
  int64_t peak = 0;
  for (const MemoryRow& m : a.memory) peak = std::max(peak, m.peak_bytes);
  return peak;
}

// One side a rule reads: the values of each run, their change in the rule's terms, and
// how far the change stands out of the step-to-step spread.
struct Measured {
  double base = 0, next = 0, change = 0;
  Significance significance;
  bool one_value = false;
  bool crossed = false;
};

void Judge(const Rule& rule, Measured* m) {
  if (rule.relative) {
    m->change = m->base != 0 ? 100.0 * (m->next - m->base) / std::fabs(m->base)
                             : (m->next == 0 ? 0 : std::copysign(std::numeric_limits<double>::infinity(), m->next));
  } else {
    m->change = m->next - m->base;
  }
  m->crossed = rule.op == ">"    ? m->change > rule.threshold
               : rule.op == ">=" ? m->change >= rule.threshold
               : rule.op == "<"  ? m->change < rule.threshold
                                 : m->change <= rule.threshold;
  // No change is no finding, whatever an interval of a constant's resamples says.
  if (m->change == 0) m->significance.significant = false;
}

// How many steps a run would tell a change of the threshold's size from this spread:
// the interval's half-width shrinks as 1/sqrt(steps). 0 where it cannot be said.
uint64_t StepsNeeded(const RuleResult& r) {
  if (!r.significance.assessed) return 0;
  const double half = (r.significance.high - r.significance.low) / 2;
  const double target =
      r.rule.relative ? std::fabs(r.base) * std::fabs(r.rule.threshold) / 100 : std::fabs(r.rule.threshold);
  if (!(target > 0) || !(half > 0)) return 0;
  const double now = static_cast<double>(std::min(r.base_steps, r.next_steps));
  return static_cast<uint64_t>(std::max(std::ceil(now * (half / target) * (half / target)), now + 1));
}

// A rule fires when its metric crossed the threshold; with noise_aware, only when the
// change also stands out of the step-to-step spread (a metric of one value a run has
// none, and the threshold decides).
RuleResult Evaluate(const Rule& rule, const Analysis& base, const Analysis& next, const Comparison& c,
                    bool noise_aware) {
  RuleResult r;
  r.rule = rule;
  const size_t bs = std::max<size_t>(1, base.steps.size()), ns = std::max<size_t>(1, next.steps.size());
  r.base_steps = bs, r.next_steps = ns;
  std::vector<std::pair<std::string, Measured>> sides;  // each total the rule reads
  auto one = [&](double b, double n) {
    Measured m;
    m.base = b, m.next = n, m.one_value = true;
    sides.push_back({"", m});
  };
  auto part = [&](const char* name) {
    for (const PartChange& p : c.parts) {
      if (p.part != name) continue;
      Measured m;
      m.base = static_cast<double>(p.mean_ns.base), m.next = static_cast<double>(p.mean_ns.next);
      m.significance = p.significance;
      sides.push_back({"", m});
    }
  };
  auto per_step = [&](const std::string& side, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
    Measured m;
    m.base = static_cast<double>(Mean(a)), m.next = static_cast<double>(Mean(b));
    m.significance = Bootstrap(a, b, 'a', Seed(rule.metric + side));
    sides.push_back({side, m});
  };
  auto starts = [&](const char* prefix) { return rule.metric.rfind(prefix, 0) == 0; };
  if (rule.metric == "step_time") {
    Measured m;
    m.base = static_cast<double>(c.step_median.base), m.next = static_cast<double>(c.step_median.next);
    m.significance = c.step_significance;
    sides.push_back({"", m});
  } else if (rule.metric == "kernel_time") {
    part("kernel");
  } else if (rule.metric == "comm_time") {
    part("communication");
  } else if (rule.metric == "memory_peak") {
    one(static_cast<double>(MemoryPeak(base)), static_cast<double>(MemoryPeak(next)));
  } else if (rule.metric == "gpu_util") {
    one(GpuUtilization(base.gpu), GpuUtilization(next.gpu));
  } else if (starts("kernel:")) {
    bool matched = false;
    const std::string glob = rule.metric.substr(7);
    auto total = [](const KernelRow& k) -> const StepSeries& { return k.step_total; };
    auto a = MatchedPerStep(base.kernels, glob, bs, total, &matched);
    auto b = MatchedPerStep(next.kernels, glob, ns, total, &matched);
    r.matched = matched;
    per_step("", a, b);
  } else {
    // op: the operators' host and device totals per step, either of which may cross;
    // op_host: and op_device: one of them.
    const bool host = !starts("op_device:"), device = !starts("op_host:");
    const std::string glob = rule.metric.substr(rule.metric.find(':') + 1);
    bool matched = false;
    auto host_total = [](const OperatorRow& o) -> const StepSeries& { return o.step_host_total; };
    auto device_total = [](const OperatorRow& o) -> const StepSeries& { return o.step_device_total; };
    if (host) {
      per_step("host", MatchedPerStep(base.operators, glob, bs, host_total, &matched),
               MatchedPerStep(next.operators, glob, ns, host_total, &matched));
    }
    if (device) {
      per_step("device", MatchedPerStep(base.operators, glob, bs, device_total, &matched),
               MatchedPerStep(next.operators, glob, ns, device_total, &matched));
    }
    r.matched = matched;
  }
  // The side that decides: the first that fires, else the first that crossed, else the first.
  for (auto& [side, m] : sides) Judge(rule, &m);
  auto fires = [&](const Measured& m) {
    return r.matched && m.crossed && (!noise_aware || m.one_value || m.significance.significant);
  };
  const std::pair<std::string, Measured>* chosen = &sides.front();
  for (const auto& s : sides) {
    if (fires(s.second)) {
      chosen = &s;
      break;
    }
  }
  if (!fires(chosen->second)) {
    for (const auto& s : sides) {
      if (s.second.crossed) {
        chosen = &s;
        break;
      }
    }
  }
  const Measured& m = chosen->second;
  r.side = chosen->first;
  r.base = m.base, r.next = m.next, r.change = m.change;
  r.significance = m.significance, r.one_value = m.one_value;
  if (r.one_value) r.base_steps = r.next_steps = 1;
  r.crossed = r.matched && m.crossed;
  r.fired = fires(m);
  if (r.crossed && !r.fired) r.steps_needed = StepsNeeded(r);
  return r;
}

}  // namespace

double Delta::relative() const {
  if (base == 0)
    return next == 0 ? 0 : std::copysign(std::numeric_limits<double>::infinity(), static_cast<double>(next));
  return static_cast<double>(next - base) / static_cast<double>(base < 0 ? -base : base);
}

Rule ParseRule(const std::string& text) {
  auto fail = [&](const std::string& why) -> Rule {
    throw Error(Error::Kind::kUsage, "", -1,
                "--fail-on '" + text + "': " + why +
                    " (METRIC>THRESHOLD, e.g. step_time>+5%, memory_peak>+100MiB, op:aten::mm>+2ms; metrics: "
                    "step_time, kernel_time, comm_time, memory_peak, gpu_util, op:GLOB, op_host:GLOB, op_device:GLOB, "
                    "kernel:GLOB)");
  };
  Rule r;
  r.text = text;
  size_t at = text.find_first_of("<>");
  if (at == std::string::npos || at == 0) return fail("no comparison (> >= < <=)");
  r.metric = text.substr(0, at);
  r.op = text.substr(at, text.size() > at + 1 && text[at + 1] == '=' ? 2 : 1);
  std::string value = text.substr(at + r.op.size());
  enum Kind { kTime, kBytes, kFraction } kind;
  auto glob = [&](const char* prefix) {
    return r.metric.rfind(prefix, 0) == 0 && r.metric.size() > std::string(prefix).size();
  };
  if (r.metric == "step_time" || r.metric == "kernel_time" || r.metric == "comm_time" || glob("op:") ||
      glob("op_host:") || glob("op_device:") || glob("kernel:")) {
    kind = kTime;
  } else if (r.metric == "memory_peak") {
    kind = kBytes;
  } else if (r.metric == "gpu_util") {
    kind = kFraction;
  } else {
    return fail("unknown metric '" + r.metric + "'");
  }
  char* end = nullptr;
  double v = std::strtod(value.c_str(), &end);
  if (value.empty() || end == value.c_str() || !std::isfinite(v)) return fail("no number after " + r.op);
  std::string unit = end;
  static const std::map<std::string, double> kTimeUnits = {{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}};
  static const std::map<std::string, double> kByteUnits = {
      {"B", 1}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}};
  // A time or a size needs its unit: "step_time>+5" read as 5 ns let a 15% slowdown pass.
  if (unit.empty() && kind != kFraction) {
    return fail("the threshold '" + value + "' has no unit: write " + value + "% for a share of the base value, or " +
                value + (kind == kTime ? "ms (ns, us, ms, s)" : "MiB (B, KiB, MiB, GiB, KB, MB, GB)"));
  }
  if (unit == "%") {
    r.relative = true;
    r.threshold = v;
  } else if (kind == kTime && kTimeUnits.count(unit)) {
    r.threshold = v * kTimeUnits.at(unit);
  } else if (kind == kBytes && kByteUnits.count(unit)) {
    r.threshold = v * kByteUnits.at(unit);
  } else if (kind == kFraction && unit.empty()) {
    r.threshold = v;
  } else {
    return fail("unit '" + unit + "' does not fit " + r.metric +
                (kind == kTime    ? " (%, ns, us, ms, s)"
                 : kind == kBytes ? " (%, B, KiB, MiB, GiB, KB, MB, GB)"
                                  : " (%, or a fraction)"));
  }
  return r;
}

Comparison Compare(const Analysis& base, const Analysis& next, const CompareOptions& options) {
  Comparison c;
  c.base_file = base.trace.file;
  c.next_file = next.trace.file;
  c.base_steps = Summarize(base);
  c.next_steps = Summarize(next);
  c.base_whole_trace = base.whole_trace_step;
  c.next_whole_trace = next.whole_trace_step;
  c.step_median = Delta{c.base_steps.median_ns, c.next_steps.median_ns};
  c.step_significance =
      Bootstrap(PartValues(base, &StepRow::total_ns), PartValues(next, &StepRow::total_ns), 'm', Seed("step_time"));
  for (const StepPart& part : kStepParts) {
    std::vector<int64_t> a = PartValues(base, part.field), b = PartValues(next, part.field);
    c.parts.push_back(PartChange{part.key, Delta{Mean(a), Mean(b)}, Bootstrap(a, b, 'a', Seed(part.key))});
    if (part.field == &StepRow::communication_ns) c.communication = c.parts.back().mean_ns;
  }
  const size_t bs = std::max<size_t>(1, base.steps.size()), ns = std::max<size_t>(1, next.steps.size());

  // Operators and kernels matched by name (and Input Dims when grouped by shape).
  std::map<std::pair<std::string, std::string>, std::pair<const OperatorRow*, const OperatorRow*>> ops;
  for (const OperatorRow& r : base.operators) ops[{r.name, r.input_dims}].first = &r;
  for (const OperatorRow& r : next.operators) ops[{r.name, r.input_dims}].second = &r;
  for (const auto& [key, pair] : ops) {
    OperatorChange o;
    o.name = key.first;
    o.input_dims = key.second;
    o.status = !pair.first ? "added" : !pair.second ? "removed" : "changed";
    auto fill = [](const OperatorRow* r, size_t steps, double* calls, int64_t Delta::*side, OperatorChange& out) {
      if (!r) return;
      *calls = static_cast<double>(r->calls) / static_cast<double>(steps);
      out.host_total.*side = PerStep(r->host_total_ns, steps);
      out.host_self.*side = PerStep(r->host_self_ns, steps);
      out.device_total.*side = PerStep(r->device_total_ns, steps);
      out.device_self.*side = PerStep(r->device_self_ns, steps);
    };
    fill(pair.first, bs, &o.base_calls, &Delta::base, o);
    fill(pair.second, ns, &o.next_calls, &Delta::next, o);
    c.operators.push_back(o);
  }
  auto op_change = [](const OperatorChange& o) {
    return std::max(std::llabs(o.host_total.change()), std::llabs(o.device_total.change()));
  };
  std::stable_sort(c.operators.begin(), c.operators.end(),
                   [&](const OperatorChange& x, const OperatorChange& y) { return op_change(x) > op_change(y); });

  std::map<std::string, std::pair<const KernelRow*, const KernelRow*>> kernels;
  for (const KernelRow& r : base.kernels) kernels[r.name].first = &r;
  for (const KernelRow& r : next.kernels) kernels[r.name].second = &r;
  for (const auto& [name, pair] : kernels) {
    KernelChange k;
    k.name = name;
    k.status = !pair.first ? "added" : !pair.second ? "removed" : "changed";
    if (pair.first) {
      k.base_calls = static_cast<double>(pair.first->calls) / static_cast<double>(bs);
      k.total.base = PerStep(pair.first->total_ns, bs);
      k.mean.base = pair.first->calls ? pair.first->total_ns / static_cast<int64_t>(pair.first->calls) : 0;
    }
    if (pair.second) {
      k.next_calls = static_cast<double>(pair.second->calls) / static_cast<double>(ns);
      k.total.next = PerStep(pair.second->total_ns, ns);
      k.mean.next = pair.second->calls ? pair.second->total_ns / static_cast<int64_t>(pair.second->calls) : 0;
    }
    c.kernels.push_back(k);
  }
  std::stable_sort(c.kernels.begin(), c.kernels.end(), [](const KernelChange& x, const KernelChange& y) {
    return std::llabs(x.total.change()) > std::llabs(y.total.change());
  });

  std::map<std::string, std::pair<const GpuRow*, const GpuRow*>> gpus;
  for (const GpuRow& g : base.gpu) gpus[g.device].first = &g;
  for (const GpuRow& g : next.gpu) gpus[g.device].second = &g;
  for (const auto& [device, pair] : gpus) {
    DeviceChange d;
    d.device = device;
    auto util = [](const GpuRow* g) { return g ? g->utilization() : 0; };
    d.base_utilization = util(pair.first);
    d.next_utilization = util(pair.second);
    d.kernel = Delta{pair.first ? PerStep(pair.first->kernel_ns, bs) : 0,
                     pair.second ? PerStep(pair.second->kernel_ns, ns) : 0};
    c.devices.push_back(d);
  }
  std::map<std::string, Delta> memory;
  for (const MemoryRow& m : base.memory) memory[m.device].base = m.peak_bytes;
  for (const MemoryRow& m : next.memory) memory[m.device].next = m.peak_bytes;
  for (const auto& [device, peak] : memory) c.memory.push_back(MemoryChange{device, peak});

  for (const Rule& rule : options.rules) {
    c.rules.push_back(Evaluate(rule, base, next, c, options.noise_aware));
    c.regressed |= c.rules.back().fired;
  }
  return c;
}

SnapshotComparison CompareSnapshots(const SnapshotAnalysis& base, const SnapshotAnalysis& next,
                                    const CompareOptions& options) {
  SnapshotComparison c;
  c.base_file = base.file;
  c.next_file = next.file;
  std::map<std::string, std::pair<const SnapshotDevice*, const SnapshotDevice*>> devices;
  for (const SnapshotDevice& d : base.devices) devices[d.device].first = &d;
  for (const SnapshotDevice& d : next.devices) devices[d.device].second = &d;
  int64_t base_peak = 0, next_peak = 0;
  for (const auto& [name, pair] : devices) {
    SnapshotDeviceChange d;
    d.device = name;
    if (pair.first) {
      d.peak_bytes.base = pair.first->peak_bytes, d.reserved_bytes.base = pair.first->reserved_bytes;
      d.allocated_bytes.base = pair.first->allocated_bytes;
      base_peak = std::max(base_peak, pair.first->peak_bytes);
    }
    if (pair.second) {
      d.peak_bytes.next = pair.second->peak_bytes, d.reserved_bytes.next = pair.second->reserved_bytes;
      d.allocated_bytes.next = pair.second->allocated_bytes;
      next_peak = std::max(next_peak, pair.second->peak_bytes);
    }
    c.devices.push_back(d);
  }
  std::map<std::string, Delta> sites;
  for (const SnapshotDevice& d : base.devices) {
    for (const SnapshotSite& site : d.peak_sites) sites[site.site].base += site.bytes;
  }
  for (const SnapshotDevice& d : next.devices) {
    for (const SnapshotSite& site : d.peak_sites) sites[site.site].next += site.bytes;
  }
  for (const auto& [site, delta] : sites) {
    if (delta.change() != 0) c.sites.push_back(SiteChange{site, delta});
  }
  std::stable_sort(c.sites.begin(), c.sites.end(), [](const SiteChange& a, const SiteChange& b) {
    return std::llabs(a.bytes.change()) > std::llabs(b.bytes.change());
  });
  for (const Rule& rule : options.rules) {
    if (rule.metric != "memory_peak") {
      throw Error(Error::Kind::kUsage, "", -1,
                  "--fail-on " + rule.text + ": memory snapshots compare by memory_peak only (e.g. memory_peak>+5%)");
    }
    RuleResult r;
    r.rule = rule;
    Measured m;
    m.base = static_cast<double>(base_peak), m.next = static_cast<double>(next_peak), m.one_value = true;
    Judge(rule, &m);
    r.base = m.base, r.next = m.next, r.change = m.change, r.one_value = true;
    r.base_steps = r.next_steps = 1;
    r.crossed = m.crossed;
    r.fired = m.crossed;  // one value a snapshot: the threshold decides
    c.rules.push_back(r);
    c.regressed |= r.fired;
  }
  return c;
}

}  // namespace torch2pprof
