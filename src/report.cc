#include "torch2pprof/report.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <ctime>
#include <functional>

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

// ---- tables: each column is described once and written by both JSON and CSV

// A cell: a JSON string, a JSON number (its exact text), or null (empty in CSV).
struct Cell {
  enum Kind { kString, kNumber, kNull } kind;
  std::string text;
};
Cell Text(std::string s) { return {Cell::kString, std::move(s)}; }
Cell Number(std::string s) { return {Cell::kNumber, std::move(s)}; }
Cell Int(int64_t v) { return Number(std::to_string(v)); }
Cell Micros(int64_t ns) { return Number(FormatMicros(ns)); }
Cell Real(double v) { return v < 0 ? Cell{Cell::kNull, ""} : Number(Printf("%.6g", v)); }

template <typename Row>
struct Column {
  std::string name;
  std::function<Cell(const Row&)> cell;
  bool csv = true;            // false: JSON only (shares, derived from other columns)
  bool json_if_empty = true;  // false: JSON leaves the key out when the text is empty
};

template <typename Row>
struct DataTable {
  const char* name;  // the JSON key and the --table name
  const std::vector<Row>& rows;
  bool top;  // -top N applies
  std::vector<Column<Row>> columns;
  std::function<void(Json&, const Row&)> json_more = nullptr;  // nested arrays after the columns
};

template <typename Row>
size_t RowsShown(const DataTable<Row>& t, const ReportOptions& o) {
  return t.top ? Limit(t.rows.size(), o.top) : t.rows.size();
}

template <typename Row>
void WriteJson(Json& j, const DataTable<Row>& t, const ReportOptions& o) {
  j.Key(t.name);
  j.Open('[');
  for (size_t i = 0; i < RowsShown(t, o); ++i) {
    j.Open('{');
    for (const Column<Row>& c : t.columns) {
      Cell cell = c.cell(t.rows[i]);
      if (!c.json_if_empty && cell.text.empty()) continue;
      j.Key(c.name);
      if (cell.kind == Cell::kString) {
        j.String(cell.text);
      } else {
        j.Raw(cell.kind == Cell::kNull ? "null" : cell.text);
      }
    }
    if (t.json_more) t.json_more(j, t.rows[i]);
    j.Close('}');
  }
  j.Close(']');
}

template <typename Row>
std::string WriteCsv(const DataTable<Row>& t, const ReportOptions& o) {
  std::vector<std::string> fields;
  for (const Column<Row>& c : t.columns) {
    if (c.csv) fields.push_back(c.name);
  }
  std::string out = CsvLine(fields);
  for (size_t i = 0; i < RowsShown(t, o); ++i) {
    fields.clear();
    for (const Column<Row>& c : t.columns) {
      if (c.csv) fields.push_back(c.cell(t.rows[i]).text);
    }
    out += CsvLine(fields);
  }
  return out;
}

DataTable<CategoryRow> Categories(const Analysis& a) {
  int64_t busy = 0;
  for (const CategoryRow& c : a.categories) busy += c.self_ns;
  return {"categories",
          a.categories,
          true,
          {{"category", [](const CategoryRow& c) { return Text(c.category); }},
           {"role", [](const CategoryRow& c) { return Text(RoleName(c.role)); }},
           {"events", [](const CategoryRow& c) { return Int(static_cast<int64_t>(c.events)); }},
           {"total_us", [](const CategoryRow& c) { return Micros(c.total_ns); }},
           {"self_us", [](const CategoryRow& c) { return Micros(c.self_ns); }},
           {"share", [busy](const CategoryRow& c) { return Real(Ratio(c.self_ns, busy)); }, false}}};
}

DataTable<StepRow> Steps(const Analysis& a) {
  DataTable<StepRow> t{"steps",
                       a.steps,
                       true,
                       {{"name", [](const StepRow& s) { return Text(s.name); }},
                        {"start_us", [](const StepRow& s) { return Micros(s.start_ns); }},
                        {"total_us", [](const StepRow& s) { return Micros(s.total_ns); }}}};
  for (size_t k = 0; k < 8; ++k) {
    auto field = kStepFields[k];
    t.columns.push_back({std::string(kStepParts[k]) + "_us", [field](const StepRow& s) { return Micros(s.*field); }});
  }
  return t;
}

DataTable<OperatorRow> Operators(const Analysis& a) {
  return {"operators",
          a.operators,
          true,
          {{"name", [](const OperatorRow& r) { return Text(r.name); }},
           {"input_dims", [](const OperatorRow& r) { return Text(r.input_dims); }, true, false},
           {"calls", [](const OperatorRow& r) { return Int(static_cast<int64_t>(r.calls)); }},
           {"host_total_us", [](const OperatorRow& r) { return Micros(r.host_total_ns); }},
           {"host_self_us", [](const OperatorRow& r) { return Micros(r.host_self_ns); }},
           {"device_total_us", [](const OperatorRow& r) { return Micros(r.device_total_ns); }},
           {"device_self_us", [](const OperatorRow& r) { return Micros(r.device_self_ns); }},
           {"host_mean_us", [](const OperatorRow& r) { return Number(MeanMicros(r.host_total_ns, r.calls)); }},
           {"host_max_us", [](const OperatorRow& r) { return Micros(r.host_max_ns); }}}};
}

DataTable<KernelRow> Kernels(const Analysis& a) {
  int64_t total = a.kernel_total_ns;
  return {"kernels",
          a.kernels,
          true,
          {{"name", [](const KernelRow& k) { return Text(k.name); }},
           {"calls", [](const KernelRow& k) { return Int(static_cast<int64_t>(k.calls)); }},
           {"total_us", [](const KernelRow& k) { return Micros(k.total_ns); }},
           {"mean_us", [](const KernelRow& k) { return Number(MeanMicros(k.total_ns, k.calls)); }},
           {"min_us", [](const KernelRow& k) { return Micros(k.min_ns); }},
           {"max_us", [](const KernelRow& k) { return Micros(k.max_ns); }},
           {"share", [total](const KernelRow& k) { return Real(Ratio(k.total_ns, total)); }, false},
           {"blocks_per_sm", [](const KernelRow& k) { return Real(k.blocks_per_sm); }},
           {"occupancy", [](const KernelRow& k) { return Real(k.occupancy); }}}};
}

DataTable<GpuRow> Gpus(const Analysis& a) {
  return {"gpu",
          a.gpu,
          false,
          {{"device", [](const GpuRow& g) { return Text(g.device); }},
           {"name", [](const GpuRow& g) { return Text(g.name); }},
           {"streams", [](const GpuRow& g) { return Int(g.streams); }},
           {"busy_us", [](const GpuRow& g) { return Micros(g.busy_ns); }},
           {"kernel_us", [](const GpuRow& g) { return Micros(g.kernel_ns); }},
           {"steps_window_us", [](const GpuRow& g) { return Micros(g.window_ns); }},
           {"steps_kernel_us", [](const GpuRow& g) { return Micros(g.window_kernel_ns); }},
           {"utilization", [](const GpuRow& g) { return Real(Ratio(g.window_kernel_ns, g.window_ns)); }, false}}};
}

DataTable<MemoryRow> Memory(const Analysis& a, const ReportOptions& o) {
  DataTable<MemoryRow> t{"memory",
                         a.memory,
                         false,
                         {{"device", [](const MemoryRow& m) { return Text(m.device); }},
                          {"allocations", [](const MemoryRow& m) { return Int(static_cast<int64_t>(m.allocations)); }},
                          {"allocated_bytes", [](const MemoryRow& m) { return Int(m.allocated_bytes); }},
                          {"frees", [](const MemoryRow& m) { return Int(static_cast<int64_t>(m.frees)); }},
                          {"freed_bytes", [](const MemoryRow& m) { return Int(m.freed_bytes); }},
                          {"peak_bytes", [](const MemoryRow& m) { return Int(m.peak_bytes); }},
                          {"peak_us", [](const MemoryRow& m) { return Micros(m.peak_ns); }},
                          {"before_trace_bytes", [](const MemoryRow& m) { return Int(m.before_trace_bytes); }}}};
  int top = o.top;
  t.json_more = [top](Json& j, const MemoryRow& m) {
    j.Key("top_operators");
    j.Open('[');
    for (size_t i = 0; i < Limit(m.top_operators.size(), top); ++i) {
      const MemoryOperator& op = m.top_operators[i];
      j.Open('{');
      j.Field("name", op.name), j.FieldInt("allocations", static_cast<int64_t>(op.allocations)),
          j.FieldInt("bytes", op.bytes);
      j.Close('}');
    }
    j.Close(']');
  };
  return t;
}

DataTable<ModuleRow> Modules(const Analysis& a) {
  return {"modules",
          a.modules,
          true,
          {{"name", [](const ModuleRow& m) { return Text(m.name); }},
           {"kind", [](const ModuleRow& m) { return Text(m.kind); }},
           {"file", [](const ModuleRow& m) { return Text(m.file); }, true, false},
           {"line",
            [](const ModuleRow& m) {
              return m.line ? Int(m.line) : Cell{Cell::kNull, ""};
            }},
           {"calls", [](const ModuleRow& m) { return Int(static_cast<int64_t>(m.calls)); }},
           {"host_total_us", [](const ModuleRow& m) { return Micros(m.host_total_ns); }},
           {"host_self_us", [](const ModuleRow& m) { return Micros(m.host_self_ns); }},
           {"device_total_us", [](const ModuleRow& m) { return Micros(m.device_total_ns); }}}};
}

DataTable<Recommendation> Recommendations(const Analysis& a) {
  return {"recommendations",
          a.recommendations,
          false,
          {{"id", [](const Recommendation& r) { return Text(r.id); }},
           {"text", [](const Recommendation& r) { return Text(r.text); }}}};
}

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
  static const std::vector<std::string> tables = {"categories", "steps",  "operators", "kernels",
                                                  "gpu",        "memory", "modules"};
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
    std::string line = "Device    " + (d.device.empty() ? std::to_string(d.id) : d.device) + ": " + d.name;
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
                                   " ProfilerStep events (host side)") +
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
    g.Add({r.device + (r.name.empty() ? "" : " " + r.name), std::to_string(r.streams), FormatDuration(r.busy_ns),
           FormatDuration(r.kernel_ns), Percent(r.kernel_ns, r.busy_ns), Percent(r.window_kernel_ns, r.window_ns)});
  }
  out += a.gpu.empty() ? "(no device activity)\n" : g.Render();

  section("Memory");
  if (a.memory.empty()) out += "(no [memory] events: profile with profile_memory=True)\n";
  for (const MemoryRow& m : a.memory) {
    out += m.device + ": " + Count(m.allocations) + " allocations, " + Bytes(m.allocated_bytes) + "; " +
           Count(m.frees) + " frees, " + Bytes(m.freed_bytes) + "; peak " + Bytes(m.peak_bytes) + " at +" +
           FormatDuration(m.peak_ns - t.start_ns) + (m.from_totals ? " (Total Allocated)" : " (sum of Bytes)") + "\n";
    if (m.before_trace_bytes > 0) {
      out += Wrap(Bytes(m.before_trace_bytes) +
                      " of the peak was allocated before the trace began (weights, "
                      "optimizer state): no operator in the trace holds it.",
                  "  ", "  ");
    }
    Table mt({"  operator", "allocations", "bytes"});
    for (size_t i = 0; i < Limit(m.top_operators.size(), std::min(o.top > 0 ? o.top : 1 << 30, 5)); ++i) {
      const MemoryOperator& op = m.top_operators[i];
      mt.Add({"  " + op.name, Count(op.allocations), Bytes(op.bytes)});
    }
    out += mt.Render();
  }

  if (!a.modules.empty()) {
    // Two views of one table: where the host time goes, and where the device time was launched.
    for (bool device : {false, true}) {
      section(device ? "Modules and Python functions by device time (backward included)"
                     : "Modules and Python functions by host time (backward included, waits left out)");
      std::vector<const ModuleRow*> rows;
      for (const ModuleRow& m : a.modules) rows.push_back(&m);
      if (device) {
        std::stable_sort(rows.begin(), rows.end(), [](const ModuleRow* x, const ModuleRow* y) {
          return x->device_total_ns > y->device_total_ns;
        });
      }
      Table mt({"frame", "kind", "calls", "host total", "host self", "device total"});
      for (size_t i = 0; i < Limit(rows.size(), o.top); ++i) {
        const ModuleRow& m = *rows[i];
        mt.Add({m.name, m.kind, Count(m.calls), FormatDuration(m.host_total_ns), FormatDuration(m.host_self_ns),
                FormatDuration(m.device_total_ns)});
      }
      out += mt.Render();
    }
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
    j.FieldInt("id", d.id), j.Field("device", d.device), j.Field("name", d.name);
    j.FieldInt("total_memory_bytes", d.total_memory);
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

  WriteJson(j, Categories(a), o);
  WriteJson(j, Steps(a), o);
  WriteJson(j, Operators(a), o);
  WriteJson(j, Kernels(a), o);
  WriteJson(j, Gpus(a), o);
  WriteJson(j, Memory(a, o), o);
  WriteJson(j, Modules(a), o);
  WriteJson(j, Recommendations(a), o);
  j.Close('}');
  return j.out + "\n";
}

std::string RenderCsv(const Analysis& a, const ReportOptions& o) {
  const std::string& table = o.table;
  if (table == "categories") return WriteCsv(Categories(a), o);
  if (table == "steps") return WriteCsv(Steps(a), o);
  if (table == "operators") return WriteCsv(Operators(a), o);
  if (table == "kernels") return WriteCsv(Kernels(a), o);
  if (table == "gpu") return WriteCsv(Gpus(a), o);
  if (table == "memory") return WriteCsv(Memory(a, o), o);
  if (table == "modules") return WriteCsv(Modules(a), o);
  std::string names;
  for (const std::string& n : CsvTables()) names += (names.empty() ? "" : ", ") + n;
  throw Error(Error::Kind::kUsage, "", -1, "--table must be one of " + names + " (got '" + table + "')");
}

}  // namespace torch2pprof
