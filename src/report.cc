#include "torch2pprof/report.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <ctime>

#include "torch2pprof/error.h"

namespace torch2pprof {
namespace {

constexpr size_t kWidth = 120;

std::string Printf(const char* fmt, double v) {
  char b[64];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}

std::string Count(uint64_t n) {  // 12,345
  std::string s = std::to_string(n), out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i && (s.size() - i) % 3 == 0) out += ',';
    out += s[i];
  }
  return out;
}

std::string Percent(int64_t part, int64_t whole) {
  return whole > 0 ? Printf("%.1f%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole)) : "-";
}

std::string Bytes(int64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b < 0 ? -b : b);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  return (b < 0 ? "-" : "") + (u == 0 ? std::to_string(b < 0 ? -b : b) + " B" : Printf("%.2f ", v) + units[u]);
}

// Columns count code points, not bytes, so UTF-8 names line up.
size_t Columns(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string Fit(const std::string& s, size_t width) {
  if (Columns(s) <= width) return s;
  std::string out;
  size_t cols = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if ((c & 0xC0) != 0x80 && ++cols > width - 1) break;
    out += s[i];
  }
  return out + "\xE2\x80\xA6";  // …
}

// Keeps the end (a path's file name) and elides the start.
std::string FitLeft(const std::string& s, size_t width) {
  if (Columns(s) <= width) return s;
  size_t drop = Columns(s) - (width - 1), i = 0;
  for (size_t cols = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80 && cols++ == drop) break;
  }
  return "\xE2\x80\xA6" + s.substr(i);
}

// An aligned table: the first column is the flexible (name) one, the rest right-aligned.
class Table {
 public:
  explicit Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string Render() const {
    size_t n = rows_[0].size();
    std::vector<size_t> w(n, 0);
    for (const auto& r : rows_) {
      for (size_t i = 0; i < n; ++i) w[i] = std::max(w[i], Columns(r[i]));
    }
    size_t fixed = 0;
    for (size_t i = 1; i < n; ++i) fixed += w[i] + 2;
    w[0] = std::min(w[0], kWidth > fixed + 10 ? kWidth - fixed : 10);
    std::string out;
    for (const auto& r : rows_) {
      std::string line = Fit(r[0], w[0]);
      line += std::string(w[0] - Columns(line), ' ');
      for (size_t i = 1; i < n; ++i) line += "  " + std::string(w[i] - Columns(r[i]), ' ') + r[i];
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n";
    }
    return out;
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

// Words wrapped at kWidth columns; the first line starts with `first`, the others with `rest`.
std::string Wrap(const std::string& text, const std::string& first, const std::string& rest) {
  std::string out, line = first;
  size_t pos = 0;
  bool empty = true;
  while (pos < text.size()) {
    size_t sp = text.find(' ', pos);
    std::string word = text.substr(pos, sp == std::string::npos ? std::string::npos : sp - pos);
    pos = sp == std::string::npos ? text.size() : sp + 1;
    if (!empty && Columns(line) + 1 + Columns(word) > kWidth) {
      out += line + "\n";
      line = rest;
      empty = true;
    }
    line += (empty ? "" : " ") + word;
    empty = false;
  }
  return out + line + "\n";
}

size_t Limit(size_t rows, int top) { return top > 0 ? std::min(rows, static_cast<size_t>(top)) : rows; }

std::string WallClock(int64_t ns) {
  if (ns <= 0) return "";
  std::time_t secs = static_cast<std::time_t>(ns / 1000000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char b[64];
  std::strftime(b, sizeof b, "%Y-%m-%d %H:%M:%S", &tm);
  return std::string(b) + Printf(".%06.0f UTC", static_cast<double>((ns % 1000000000) / 1000));
}

int64_t StepSum(const Analysis& a, int64_t StepRow::*field) {
  int64_t n = 0;
  for (const StepRow& s : a.steps) n += s.*field;
  return n;
}

// ---- JSON: written by hand so that numbers are exact decimal text.

class Json {
 public:
  std::string out;
  void Open(char c) {
    Sep();
    out += c;
    first_.push_back(true);
  }
  void Close(char c) {
    bool empty = first_.back();
    first_.pop_back();
    if (!empty) Newline();
    out += c;
  }
  void Key(const std::string& k) {
    Sep();
    Str(k);
    out += ": ";
    after_key_ = true;
  }
  void String(const std::string& s) {
    Sep();
    Str(s);
  }
  void Raw(const std::string& number) {
    Sep();
    out += number;
  }
  void Int(int64_t v) { Raw(std::to_string(v)); }
  void Micros(int64_t ns) { Raw(FormatMicros(ns)); }
  void Double(double v, const char* fmt = "%.6g") { Raw(v < 0 ? "null" : Printf(fmt, v)); }
  void Field(const std::string& k, const std::string& v) { Key(k), String(v); }
  void FieldInt(const std::string& k, int64_t v) { Key(k), Int(v); }
  void FieldMicros(const std::string& k, int64_t ns) { Key(k), Micros(ns); }

 private:
  void Newline() { out += "\n" + std::string(2 * first_.size(), ' '); }
  void Sep() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (first_.empty()) return;
    if (!first_.back()) out += ",";
    first_.back() = false;
    Newline();
  }
  void Str(const std::string& s) {
    out += '"';
    for (unsigned char c : s) {
      if (c == '"' || c == '\\') {
        out += '\\';
        out += static_cast<char>(c);
      } else if (c < 0x20) {
        char b[8];
        std::snprintf(b, sizeof b, "\\u%04x", c);
        out += b;
      } else {
        out += static_cast<char>(c);
      }
    }
    out += '"';
  }
  std::vector<bool> first_;
  bool after_key_ = false;
};

std::string MeanMicros(int64_t total_ns, uint64_t calls) {
  if (calls == 0) return "0";
  return Printf("%.3f", static_cast<double>(total_ns) / static_cast<double>(calls) / 1000.0);
}

double Ratio(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// ---- CSV

std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string CsvLine(const std::vector<std::string>& fields) {
  std::string line;
  for (size_t i = 0; i < fields.size(); ++i) line += (i ? "," : "") + CsvField(fields[i]);
  return line + "\n";
}

const char* kStepParts[] = {"kernel",  "memcpy",     "memset",   "communication",
                            "runtime", "dataloader", "cpu_exec", "other"};
int64_t StepRow::*const kStepFields[] = {&StepRow::kernel_ns,        &StepRow::memcpy_ns,  &StepRow::memset_ns,
                                         &StepRow::communication_ns, &StepRow::runtime_ns, &StepRow::dataloader_ns,
                                         &StepRow::cpu_exec_ns,      &StepRow::other_ns};

}  // namespace

std::string FormatMicros(int64_t ns) {
  bool neg = ns < 0;
  uint64_t v = neg ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  std::string s = std::to_string(v / 1000);
  uint64_t frac = v % 1000;
  if (frac) {
    char b[8];
    std::snprintf(b, sizeof b, ".%03" PRIu64, frac);
    std::string f = b;
    while (f.back() == '0') f.pop_back();
    s += f;
  }
  return (neg ? "-" : "") + s;
}

std::string FormatDuration(int64_t ns) {
  double v = static_cast<double>(ns);
  double a = v < 0 ? -v : v;
  if (a < 1e3) return std::to_string(ns) + "ns";
  if (a < 1e6) return Printf(a < 1e4 ? "%.2fus" : a < 1e5 ? "%.1fus" : "%.0fus", v / 1e3);
  if (a < 1e9) return Printf(a < 1e7 ? "%.2fms" : a < 1e8 ? "%.1fms" : "%.0fms", v / 1e6);
  return Printf(a < 1e10 ? "%.3fs" : "%.2fs", v / 1e9);
}

const std::vector<std::string>& CsvTables() {
  static const std::vector<std::string> tables = {"categories", "steps", "operators", "kernels", "gpu", "memory"};
  return tables;
}

std::string RenderText(const Analysis& a, const ReportOptions& o) {
  std::string out;
  const TraceOverview& t = a.trace;
  auto section = [&](const std::string& title) {
    out += "\n" + title + "\n" + std::string(Columns(title), '-') + "\n";
  };

  out += "torch2pprof analyze: " + FitLeft(t.file, kWidth - 21) + "\n";
  section("Overview");
  std::string span = "Span      " + FormatDuration(t.span_ns);
  if (t.wall_clock_ns) span += " from " + WallClock(t.wall_clock_ns);
  out += span + "\n";
  std::string phases;
  for (const auto& [ph, n] : t.phases) phases += (phases.empty() ? "" : ", ") + ph + " " + Count(n);
  out += "Events    " + Count(t.events) + " (" + phases + ")\n";
  size_t cpu = 0, dev = 0;
  for (const LaneInfo& l : t.lanes) (l.device ? dev : cpu)++;
  out += "Lanes     " + std::to_string(cpu) + " CPU threads, " + std::to_string(dev) + " device streams\n";
  for (const DeviceInfo& d : t.devices) {
    std::string line = "Device    " + std::to_string(d.id) + ": " + d.name;
    if (d.total_memory > 0) line += ", " + Bytes(d.total_memory);
    if (d.sms > 0) line += ", " + std::to_string(d.sms) + " SMs";
    if (!d.compute.empty()) line += ", compute " + d.compute;
    out += Fit(line, kWidth) + "\n";
  }
  if (t.rank >= 0) {
    out += "Rank      " + std::to_string(t.rank) + (t.world_size > 0 ? " of " + std::to_string(t.world_size) : "") +
           (t.backend.empty() ? "" : " (" + t.backend + ")") + "\n";
  }
  out += "Steps     " +
         (a.whole_trace_step ? std::string("no ProfilerStep: the whole trace is one step")
                             : std::to_string(a.steps.size()) + " analysed of " + std::to_string(t.profiler_steps) +
                                   " ProfilerStep events") +
         "\n";
  if (!t.skipped.empty()) {
    std::string s;
    for (const auto& [k, n] : t.skipped) s += (s.empty() ? "" : ", ") + k + " " + Count(n);
    out += Fit("Skipped   " + s, kWidth) + "\n";
  }
  Table lanes({"Lane (pid/tid)", "thread", "kind", "intervals", "busy"});
  for (const LaneInfo& l : t.lanes) {
    lanes.Add({l.pid + "/" + l.tid, Fit(l.name, 30), l.device ? "device" : "cpu", Count(l.intervals),
               FormatDuration(l.busy_ns)});
  }
  out += "\n" + lanes.Render();

  int64_t busy = 0;
  for (const CategoryRow& c : a.categories) busy += c.self_ns;
  section("Categories");
  Table cats({"category", "role", "events", "total", "self", "share"});
  for (size_t i = 0; i < Limit(a.categories.size(), o.top); ++i) {
    const CategoryRow& c = a.categories[i];
    cats.Add({c.category.empty() ? "(none)" : c.category, RoleName(c.role), Count(c.events), FormatDuration(c.total_ns),
              FormatDuration(c.self_ns), Percent(c.self_ns, busy)});
  }
  out += cats.Render();

  section(a.whole_trace_step ? "Step breakdown (no ProfilerStep: whole trace)" : "Step breakdown");
  Table steps({"step", "total", "kernel", "memcpy", "memset", "comm", "runtime", "dataload", "cpu exec", "other"});
  size_t shown = Limit(a.steps.size(), o.top);
  for (size_t i = 0; i < shown; ++i) {
    const StepRow& s = a.steps[i];
    std::vector<std::string> row = {s.name, FormatDuration(s.total_ns)};
    for (auto f : kStepFields) row.push_back(FormatDuration(s.*f));
    steps.Add(row);
  }
  if (!a.steps.empty()) {
    int64_t n = static_cast<int64_t>(a.steps.size());
    std::vector<std::string> avg = {"average of " + std::to_string(n),
                                    FormatDuration(StepSum(a, &StepRow::total_ns) / n)};
    for (auto f : kStepFields) avg.push_back(FormatDuration(StepSum(a, f) / n));
    steps.Add(avg);
    int64_t total = StepSum(a, &StepRow::total_ns);
    std::vector<std::string> share = {"share of step time", "100%"};
    for (auto f : kStepFields) share.push_back(Percent(StepSum(a, f), total));
    steps.Add(share);
  }
  out += steps.Render();
  if (shown < a.steps.size()) out += "(" + std::to_string(a.steps.size() - shown) + " more steps; -top 0 shows all)\n";

  section("Operators (by host total; host self excludes child operators and their own launches)");
  Table ops({"operator", "calls", "host total", "host self", "dev total", "dev self", "mean", "max"});
  for (size_t i = 0; i < Limit(a.operators.size(), o.top); ++i) {
    const OperatorRow& r = a.operators[i];
    std::string name = r.input_dims.empty() ? r.name : r.name + " " + r.input_dims;
    ops.Add({name, Count(r.calls), FormatDuration(r.host_total_ns), FormatDuration(r.host_self_ns),
             FormatDuration(r.device_total_ns), FormatDuration(r.device_self_ns),
             FormatDuration(r.calls ? r.host_total_ns / static_cast<int64_t>(r.calls) : 0),
             FormatDuration(r.host_max_ns)});
  }
  out += a.operators.empty() ? "(no operators)\n" : ops.Render();

  section("Kernels (by total)");
  Table ks({"kernel", "calls", "total", "mean", "min", "max", "share", "blk/SM", "occ %"});
  for (size_t i = 0; i < Limit(a.kernels.size(), o.top); ++i) {
    const KernelRow& k = a.kernels[i];
    ks.Add({k.name, Count(k.calls), FormatDuration(k.total_ns),
            FormatDuration(k.calls ? k.total_ns / static_cast<int64_t>(k.calls) : 0), FormatDuration(k.min_ns),
            FormatDuration(k.max_ns), Percent(k.total_ns, a.kernel_total_ns),
            k.blocks_per_sm < 0 ? "-" : Printf("%.2f", k.blocks_per_sm),
            k.occupancy < 0 ? "-" : Printf("%.1f", k.occupancy)});
  }
  out += a.kernels.empty() ? "(no kernels)\n" : ks.Render();

  section("GPU");
  Table g({"device", "streams", "busy", "kernels", "kernel share", "utilization in steps"});
  for (const GpuRow& r : a.gpu) {
    g.Add({std::to_string(r.device) + (r.name.empty() ? "" : " " + r.name), std::to_string(r.streams),
           FormatDuration(r.busy_ns), FormatDuration(r.kernel_ns), Percent(r.kernel_ns, r.busy_ns),
           Percent(r.window_kernel_ns, r.window_ns)});
  }
  out += a.gpu.empty() ? "(no device activity)\n" : g.Render();

  section("Memory");
  if (a.memory.empty()) out += "(no [memory] events: profile with profile_memory=True)\n";
  for (const MemoryRow& m : a.memory) {
    out += "Device type " + std::to_string(m.device_type) + " id " + std::to_string(m.device_id) + ": " +
           Count(m.allocations) + " allocations, " + Bytes(m.allocated_bytes) + "; " + Count(m.frees) + " frees, " +
           Bytes(m.freed_bytes) + "; peak " + Bytes(m.peak_bytes) + " at +" + FormatDuration(m.peak_ns - t.start_ns) +
           (m.from_totals ? " (Total Allocated)" : " (sum of Bytes)") + "\n";
    Table mt({"  operator", "allocations", "bytes"});
    for (size_t i = 0; i < Limit(m.top_operators.size(), std::min(o.top > 0 ? o.top : 1 << 30, 5)); ++i) {
      const MemoryOperator& op = m.top_operators[i];
      mt.Add({"  " + op.name, Count(op.allocations), Bytes(op.bytes)});
    }
    out += mt.Render();
  }

  section("Recommendations");
  if (a.recommendations.empty()) out += "(none: nothing crossed a threshold)\n";
  for (const Recommendation& r : a.recommendations) out += Wrap(r.text, "- ", "  ");
  return out;
}

std::string RenderJson(const Analysis& a, const ReportOptions& o) {
  Json j;
  const TraceOverview& t = a.trace;
  j.Open('{');
  j.Key("trace");
  j.Open('{');
  j.Field("file", t.file);
  j.FieldMicros("start_us", t.start_ns);
  j.FieldMicros("span_us", t.span_ns);
  j.FieldInt("wall_clock_start_ns", t.wall_clock_ns);
  j.FieldInt("events", static_cast<int64_t>(t.events));
  j.Key("phases");
  j.Open('{');
  for (const auto& [ph, n] : t.phases) j.FieldInt(ph, static_cast<int64_t>(n));
  j.Close('}');
  j.Key("lanes");
  j.Open('[');
  for (const LaneInfo& l : t.lanes) {
    j.Open('{');
    j.Field("pid", l.pid), j.Field("tid", l.tid), j.Field("thread", l.name),
        j.Field("kind", l.device ? "device" : "cpu");
    j.FieldInt("intervals", static_cast<int64_t>(l.intervals)), j.FieldMicros("busy_us", l.busy_ns);
    j.Close('}');
  }
  j.Close(']');
  j.Key("devices");
  j.Open('[');
  for (const DeviceInfo& d : t.devices) {
    j.Open('{');
    j.FieldInt("id", d.id), j.Field("name", d.name), j.FieldInt("total_memory_bytes", d.total_memory);
    j.FieldInt("sms", d.sms), j.Field("compute_capability", d.compute);
    j.Close('}');
  }
  j.Close(']');
  j.FieldInt("rank", t.rank), j.FieldInt("world_size", t.world_size), j.Field("backend", t.backend);
  j.FieldInt("profiler_steps", static_cast<int64_t>(t.profiler_steps));
  j.Key("skipped");
  j.Open('{');
  for (const auto& [k, n] : t.skipped) j.FieldInt(k, static_cast<int64_t>(n));
  j.Close('}');
  j.Close('}');

  int64_t busy = 0;
  for (const CategoryRow& c : a.categories) busy += c.self_ns;
  j.Key("categories");
  j.Open('[');
  for (size_t i = 0; i < Limit(a.categories.size(), o.top); ++i) {
    const CategoryRow& c = a.categories[i];
    j.Open('{');
    j.Field("category", c.category), j.Field("role", RoleName(c.role)),
        j.FieldInt("events", static_cast<int64_t>(c.events));
    j.FieldMicros("total_us", c.total_ns), j.FieldMicros("self_us", c.self_ns);
    j.Key("share"), j.Double(Ratio(c.self_ns, busy));
    j.Close('}');
  }
  j.Close(']');

  j.Key("steps");
  j.Open('[');
  for (size_t i = 0; i < Limit(a.steps.size(), o.top); ++i) {
    const StepRow& s = a.steps[i];
    j.Open('{');
    j.Field("name", s.name), j.FieldMicros("start_us", s.start_ns), j.FieldMicros("total_us", s.total_ns);
    for (size_t k = 0; k < 8; ++k) j.FieldMicros(std::string(kStepParts[k]) + "_us", s.*kStepFields[k]);
    j.Close('}');
  }
  j.Close(']');

  j.Key("operators");
  j.Open('[');
  for (size_t i = 0; i < Limit(a.operators.size(), o.top); ++i) {
    const OperatorRow& r = a.operators[i];
    j.Open('{');
    j.Field("name", r.name);
    if (!r.input_dims.empty()) j.Field("input_dims", r.input_dims);
    j.FieldInt("calls", static_cast<int64_t>(r.calls));
    j.FieldMicros("host_total_us", r.host_total_ns), j.FieldMicros("host_self_us", r.host_self_ns);
    j.FieldMicros("device_total_us", r.device_total_ns), j.FieldMicros("device_self_us", r.device_self_ns);
    j.Key("host_mean_us"), j.Raw(MeanMicros(r.host_total_ns, r.calls));
    j.FieldMicros("host_max_us", r.host_max_ns);
    j.Close('}');
  }
  j.Close(']');

  j.Key("kernels");
  j.Open('[');
  for (size_t i = 0; i < Limit(a.kernels.size(), o.top); ++i) {
    const KernelRow& k = a.kernels[i];
    j.Open('{');
    j.Field("name", k.name), j.FieldInt("calls", static_cast<int64_t>(k.calls)), j.FieldMicros("total_us", k.total_ns);
    j.Key("mean_us"), j.Raw(MeanMicros(k.total_ns, k.calls));
    j.FieldMicros("min_us", k.min_ns), j.FieldMicros("max_us", k.max_ns);
    j.Key("share"), j.Double(Ratio(k.total_ns, a.kernel_total_ns));
    j.Key("blocks_per_sm"), j.Double(k.blocks_per_sm);
    j.Key("occupancy"), j.Double(k.occupancy);
    j.Close('}');
  }
  j.Close(']');

  j.Key("gpu");
  j.Open('[');
  for (const GpuRow& g : a.gpu) {
    j.Open('{');
    j.FieldInt("device", g.device), j.Field("name", g.name), j.FieldInt("streams", g.streams);
    j.FieldMicros("busy_us", g.busy_ns), j.FieldMicros("kernel_us", g.kernel_ns);
    j.FieldMicros("steps_window_us", g.window_ns), j.FieldMicros("steps_kernel_us", g.window_kernel_ns);
    j.Key("utilization"), j.Double(Ratio(g.window_kernel_ns, g.window_ns));
    j.Close('}');
  }
  j.Close(']');

  j.Key("memory");
  j.Open('[');
  for (const MemoryRow& m : a.memory) {
    j.Open('{');
    j.FieldInt("device_type", m.device_type), j.FieldInt("device_id", m.device_id);
    j.FieldInt("allocations", static_cast<int64_t>(m.allocations)), j.FieldInt("allocated_bytes", m.allocated_bytes);
    j.FieldInt("frees", static_cast<int64_t>(m.frees)), j.FieldInt("freed_bytes", m.freed_bytes);
    j.FieldInt("peak_bytes", m.peak_bytes), j.FieldMicros("peak_us", m.peak_ns);
    j.Key("top_operators");
    j.Open('[');
    for (size_t i = 0; i < Limit(m.top_operators.size(), o.top); ++i) {
      const MemoryOperator& op = m.top_operators[i];
      j.Open('{');
      j.Field("name", op.name), j.FieldInt("allocations", static_cast<int64_t>(op.allocations)),
          j.FieldInt("bytes", op.bytes);
      j.Close('}');
    }
    j.Close(']');
    j.Close('}');
  }
  j.Close(']');

  j.Key("recommendations");
  j.Open('[');
  for (const Recommendation& r : a.recommendations) {
    j.Open('{');
    j.Field("id", r.id), j.Field("text", r.text);
    j.Close('}');
  }
  j.Close(']');
  j.Close('}');
  return j.out + "\n";
}

std::string RenderCsv(const Analysis& a, const ReportOptions& o) {
  const std::string& table = o.table;
  std::string out;
  auto us = [](int64_t ns) { return FormatMicros(ns); };
  if (table == "categories") {
    out += CsvLine({"category", "role", "events", "total_us", "self_us"});
    for (size_t i = 0; i < Limit(a.categories.size(), o.top); ++i) {
      const CategoryRow& c = a.categories[i];
      out += CsvLine({c.category, RoleName(c.role), std::to_string(c.events), us(c.total_ns), us(c.self_ns)});
    }
  } else if (table == "steps") {
    std::vector<std::string> h = {"name", "start_us", "total_us"};
    for (const char* p : kStepParts) h.push_back(std::string(p) + "_us");
    out += CsvLine(h);
    for (size_t i = 0; i < Limit(a.steps.size(), o.top); ++i) {
      const StepRow& s = a.steps[i];
      std::vector<std::string> row = {s.name, us(s.start_ns), us(s.total_ns)};
      for (auto f : kStepFields) row.push_back(us(s.*f));
      out += CsvLine(row);
    }
  } else if (table == "operators") {
    out += CsvLine({"name", "input_dims", "calls", "host_total_us", "host_self_us", "device_total_us", "device_self_us",
                    "host_mean_us", "host_max_us"});
    for (size_t i = 0; i < Limit(a.operators.size(), o.top); ++i) {
      const OperatorRow& r = a.operators[i];
      out += CsvLine({r.name, r.input_dims, std::to_string(r.calls), us(r.host_total_ns), us(r.host_self_ns),
                      us(r.device_total_ns), us(r.device_self_ns), MeanMicros(r.host_total_ns, r.calls),
                      us(r.host_max_ns)});
    }
  } else if (table == "kernels") {
    out += CsvLine({"name", "calls", "total_us", "mean_us", "min_us", "max_us", "blocks_per_sm", "occupancy"});
    for (size_t i = 0; i < Limit(a.kernels.size(), o.top); ++i) {
      const KernelRow& k = a.kernels[i];
      out += CsvLine({k.name, std::to_string(k.calls), us(k.total_ns), MeanMicros(k.total_ns, k.calls), us(k.min_ns),
                      us(k.max_ns), k.blocks_per_sm < 0 ? "" : Printf("%.6g", k.blocks_per_sm),
                      k.occupancy < 0 ? "" : Printf("%.6g", k.occupancy)});
    }
  } else if (table == "gpu") {
    out += CsvLine({"device", "name", "streams", "busy_us", "kernel_us", "steps_window_us", "steps_kernel_us"});
    for (const GpuRow& g : a.gpu) {
      out += CsvLine({std::to_string(g.device), g.name, std::to_string(g.streams), us(g.busy_ns), us(g.kernel_ns),
                      us(g.window_ns), us(g.window_kernel_ns)});
    }
  } else if (table == "memory") {
    out += CsvLine({"device_type", "device_id", "allocations", "allocated_bytes", "frees", "freed_bytes", "peak_bytes",
                    "peak_us"});
    for (const MemoryRow& m : a.memory) {
      out += CsvLine({std::to_string(m.device_type), std::to_string(m.device_id), std::to_string(m.allocations),
                      std::to_string(m.allocated_bytes), std::to_string(m.frees), std::to_string(m.freed_bytes),
                      std::to_string(m.peak_bytes), us(m.peak_ns)});
    }
  } else {
    std::string names;
    for (const std::string& n : CsvTables()) names += (names.empty() ? "" : ", ") + n;
    throw Error(Error::Kind::kUsage, "", -1, "--table must be one of " + names + " (got '" + table + "')");
  }
  return out;
}

}  // namespace torch2pprof
