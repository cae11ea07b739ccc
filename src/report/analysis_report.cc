// analyze's report: text for people, one JSON document or a CSV table for scripts, all
// written from the tables of analysis_tables.cc.
#include <algorithm>

#include "base/utf8.h"
#include "report/analysis_tables.h"
#include "report/html_page.h"
#include "torch2pprof/error.h"
#include "torch2pprof/report.h"

namespace torch2pprof {

using namespace report;

namespace {

std::string Overview(const Analysis& a) {
  const TraceOverview& t = a.trace;
  std::string out = Section("Overview");
  std::string span = "Span      " + FormatDuration(t.span_ns);
  if (t.wall_clock_ns) span += " from " + WallClock(t.wall_clock_ns);
  out += span + "\n";
  std::string phases;
  for (const auto& [ph, n] : t.phases) phases += (phases.empty() ? "" : ", ") + ph + " " + Count(n);
  out += "Events    " + Count(t.events) + " (" + phases + ")\n";
  size_t cpu = 0, dev = 0;
  for (const LaneInfo& l : t.lanes) (l.device ? dev : cpu)++;
  out += "Lanes     " + Counted(cpu, "CPU thread", "CPU threads") + ", " +
         Counted(dev, "device stream", "device streams") + "\n";
  for (const DeviceInfo& d : t.devices) {
    std::string line = "Device    " + VisibleText((d.device.empty() ? std::to_string(d.id) : d.device) + ": " + d.name);
    if (d.total_memory > 0) line += ", " + Bytes(d.total_memory);
    if (d.sms > 0) line += ", " + std::to_string(d.sms) + " SMs";
    if (!d.compute.empty()) line += ", compute " + d.compute;
    out += Fit(line, kWidth) + "\n";
  }
  if (t.rank >= 0) {
    out += "Rank      " + std::to_string(t.rank) + (t.world_size > 0 ? " of " + std::to_string(t.world_size) : "") +
           (t.backend.empty() ? "" : " (" + VisibleText(t.backend) + ")") + "\n";
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
  std::vector<std::vector<std::string>> lanes = {{"Lane (pid/tid)", "thread", "kind", "intervals", "busy", "work"}};
  for (const LaneInfo& l : t.lanes) {
    lanes.push_back({l.pid + "/" + l.tid, Fit(l.name, 30), l.device ? "device" : "cpu", Count(l.intervals),
                     FormatDuration(l.busy_ns), l.work_ns < 0 ? "-" : FormatDuration(l.work_ns)});
  }
  return out + "\n" + AlignedText(lanes) +
         "(busy: the time a thread ran events, or a stream ran device work; work: busy less blocking waits)\n";
}

// First in the report: what to change, the largest saving first, each the step time a
// replay of the steps' graph without its cause saves; then all of them together.
std::string Recommendations(const Analysis& a) {
  const WhatIfTotal& w = a.what_if;
  std::string out = Section("Recommendations (saving a step, over " + Count(w.steps) +
                            (w.steps == 1 ? " step" : " steps") + ", largest first)");
  if (a.recommendations.empty()) return out + "(none: nothing crossed a threshold)\n";
  for (const Recommendation& r : a.recommendations) {
    out += Wrap(
        (r.saving_ns > 0 ? "[saves " + FormatDuration(r.saving_ns) + "] " : std::string()) + RecommendationText(a, r),
        "- ", "  ");
  }
  const std::string total = WhatIfTotalText(a);
  if (!total.empty()) out += Wrap("(" + total + ")", "", "");
  return out;
}

std::string Memory(const Analysis& a, int top) {
  std::string out = Section("Memory");
  if (a.memory.empty()) return out + "(no [memory] events: profile with profile_memory=True)\n";
  for (const MemoryRow& m : a.memory) {
    out += m.device + ": peak " + Bytes(m.peak_bytes) + " at +" + FormatDuration(m.peak_ns - a.trace.start_ns) +
           (m.from_totals ? " (Total Allocated)" : " (sum of Bytes)") + "; " + Count(m.allocations) + " allocations, " +
           Bytes(m.allocated_bytes) + "; " + Count(m.frees) + " frees, " + Bytes(m.freed_bytes) + "\n";
    if (m.peak_bytes < kSmallMemory) continue;  // a few scalars on the CPU: the line says it all
    if (m.before_trace_bytes > 0) {
      out += Wrap(Bytes(m.before_trace_bytes) +
                      " of the peak was allocated before the trace began (weights, optimizer state): no operator in "
                      "the trace holds it.",
                  "  ", "  ");
    }
    std::vector<std::vector<std::string>> ops = {
        {"operator (what holds the peak)", "live at peak", "allocations", "allocated in the trace"}};
    for (size_t i = 0; i < Limit(m.top_operators.size(), std::min(top > 0 ? top : 1 << 30, 5)); ++i) {
      const MemoryOperator& op = m.top_operators[i];
      ops.push_back({op.name, Bytes(op.live_bytes), Count(op.allocations), Bytes(op.bytes)});
    }
    out += AlignedText(ops, 2);
  }
  return out;
}

std::string Modules(const Analysis& a, int top) {
  std::string out;
  if (!a.modules.empty()) {
    const bool device =
        std::any_of(a.modules.begin(), a.modules.end(), [](const ModuleNode& m) { return m.device_total_ns; });
    out += Section(std::string("Modules (each under its caller, by ") + (device ? "device" : "host") +
                   " total; self: not in a child module; backward included)");
    out += WriteText(ModulesTable(a), top);
    out += Section(std::string("Module classes (by ") + (device ? "device" : "host") + " self)");
    out += WriteText(ModuleClassesTable(a), top);
  }
  if (!a.python_functions.empty()) {
    out += Section("Python functions (by host self; waits left out)");
    out += WriteText(PythonFunctionsTable(a), top);
  }
  return out;
}

// The steps' average, as the text's footer shows it: each part's mean per step and its
// share of the step time.
void WriteStepAverage(Json& j, const Analysis& a) {
  if (a.steps.empty()) return;
  auto sum = [&](int64_t StepRow::*f) {
    int64_t n = 0;
    for (const StepRow& s : a.steps) n += s.*f;
    return n;
  };
  const double n = static_cast<double>(a.steps.size());
  const int64_t total = sum(&StepRow::total_ns);
  auto mean = [&](int64_t ns) { return Printf("%.3f", static_cast<double>(ns) / n / 1000.0); };
  j.Key("step_average");
  j.Open('{');
  j.FieldInt("steps", static_cast<int64_t>(a.steps.size()));
  j.Key("total_us"), j.Raw(mean(total));
  for (const StepPart& part : kStepParts) j.Key(std::string(part.key) + "_us"), j.Raw(mean(sum(part.field)));
  j.Key("share");
  j.Open('{');
  for (const StepPart& part : kStepParts) {
    j.Key(part.key), j.Raw(total > 0 ? Printf("%.6g", static_cast<double>(sum(part.field)) / total) : "0");
  }
  j.Close('}');
  j.Close('}');
}

// The trace's overview: the JSON's first object.
void WriteTraceJson(Json& j, const Analysis& a) {
  const TraceOverview& t = a.trace;
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
    if (l.work_ns < 0) {
      j.Key("work_us"), j.Raw("null");
    } else {
      j.FieldMicros("work_us", l.work_ns);
    }
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
}

// The findings' changes replayed together: what a step would take, and what remains.
void WriteWhatIfJson(Json& j, const Analysis& a) {
  j.Key("what_if");
  j.Open('{');
  j.FieldInt("steps", static_cast<int64_t>(a.what_if.steps));
  j.FieldInt("changes", static_cast<int64_t>(a.what_if.changes));
  j.FieldMicros("step_us", a.what_if.step_ns);
  j.FieldMicros("together_us", a.what_if.together_ns);
  j.FieldMicros("device_us", a.what_if.device_ns);
  j.Close('}');
}

// A generation loop, per token (null: none found).
void WriteGenerationJson(Json& j, const Analysis& a) {
  j.Key("generation");
  if (a.context.tokens_per_step > 0 && a.what_if.step_ns > 0) {
    const int64_t tokens = static_cast<int64_t>(a.context.tokens_per_step);
    j.Open('{');
    j.Field("module", a.context.token_module);
    j.FieldInt("tokens_per_step", tokens);
    j.FieldMicros("token_us", a.what_if.step_ns / tokens);
    j.FieldMicros("token_device_us", a.what_if.device_ns / tokens);
    j.Close('}');
  } else {
    j.Raw("null");
  }
}

// Each part of analyze's JSON, in its order: its key (also the --table name and the
// counts key), how JSON writes it, its CSV table and its row count where it has them. A
// new view is an entry here; CSV, --help, JSON and counts follow. A view with a title is
// drawn alike in text and HTML, a section of its own after the device views; the others'
// sections are written by hand, grouping views as people read them.
struct View {
  const char* name;
  void (*json)(Json& j, const Analysis& a, int rows);
  std::string (*csv)(const Analysis& a, int rows);  // nullptr: no CSV table
  size_t (*count)(const Analysis& a);               // nullptr: no list to count
  CsvDefault by_default = kNotDefault;
  const char* title = nullptr;  // drawn alike: its section's title, and what it means
  const char* note = nullptr;
  std::string (*text)(const Analysis& a, int top) = nullptr;
  std::string (*html)(const Analysis& a, const std::string& id, int top) = nullptr;
};

template <auto Table>
void JsonOf(Json& j, const Analysis& a, int rows) {
  WriteJson(j, Table(a), rows);
}
template <auto Table>
std::string CsvOf(const Analysis& a, int rows) {
  return WriteCsv(Table(a), rows);
}
template <auto Field>
size_t CountOf(const Analysis& a) {
  return (a.*Field).size();
}

// A view that is one table of one Analysis field, in JSON and CSV alike.
template <auto Table, auto Field>
constexpr View TableView(const char* name, CsvDefault by_default = kNotDefault) {
  return {name, JsonOf<Table>, CsvOf<Table>, CountOf<Field>, by_default};
}
template <auto Table>
std::string TextOf(const Analysis& a, int top) {
  return WriteText(Table(a), top);
}
template <auto Table>
std::string HtmlOf(const Analysis& a, const std::string& id, int top) {
  return HtmlTable(id, Table(a), top, true);
}
// The same, drawn alike in text and HTML under `title`, with `note` beneath.
template <auto Table, auto Field>
constexpr View DrawnTableView(const char* name, const char* title, const char* note) {
  return {name, JsonOf<Table>, CsvOf<Table>, CountOf<Field>, kNotDefault, title, note, TextOf<Table>, HtmlOf<Table>};
}

// HTA's kernel breakdown, per device (KernelTypeRow).
DataTable<KernelTypeRow> KernelTypesTable(const Analysis& a) {
  return {"kernel_types",
          a.kernel_types,
          false,
          {{"device", "device", [](const KernelTypeRow& r) { return Text(r.device); }},
           {"type", "kernel types running", [](const KernelTypeRow& r) { return Text(r.type); }},
           {"time_us", "time", [](const KernelTypeRow& r) { return Micros(r.time_ns); }},
           {"share", "of busy", [](const KernelTypeRow& r) { return Share(r.time_ns, r.busy_ns); }},
           {"busy_us", "", [](const KernelTypeRow& r) { return Micros(r.busy_ns); }}}};
}

// HTA's temporal breakdown, per device (TemporalRow).
DataTable<TemporalRow> TemporalTable(const Analysis& a) {
  return {
      "temporal_breakdown",
      a.temporal_breakdown,
      false,
      {{"device", "device", [](const TemporalRow& r) { return Text(r.device); }},
       {"span_us", "span", [](const TemporalRow& r) { return Micros(r.span_ns); }},
       {"compute_us", "computation", [](const TemporalRow& r) { return Micros(r.compute_ns); }},
       {"compute_share", "%", [](const TemporalRow& r) { return Share(r.compute_ns, r.span_ns); }},
       {"non_compute_us", "other work", [](const TemporalRow& r) { return Micros(r.non_compute_ns); }},
       {"non_compute_share", "%", [](const TemporalRow& r) { return Share(r.non_compute_ns, r.span_ns); }},
       {"idle_us", "idle", [](const TemporalRow& r) { return Micros(r.idle_ns); }},
       {"idle_share", "%", [](const TemporalRow& r) { return Share(r.idle_ns, r.span_ns); }},
       {"comm_us", "communication", [](const TemporalRow& r) { return Micros(r.comm_ns); }},
       {"overlap_us", "", [](const TemporalRow& r) { return Micros(r.overlap_ns); }},
       {"overlap_share", "beside computation", [](const TemporalRow& r) { return Share(r.overlap_ns, r.comm_ns); }}}};
}

const View kViews[] = {
    {"trace", [](Json& j, const Analysis& a, int) { WriteTraceJson(j, a); }, nullptr, nullptr},
    TableView<CategoriesTable, &Analysis::categories>("categories"),
    TableView<StepsTable, &Analysis::steps>("steps"),
    {"step_average", [](Json& j, const Analysis& a, int) { WriteStepAverage(j, a); }, nullptr, nullptr},
    TableView<CriticalPathTable, &Analysis::critical_path>("critical_path"),
    TableView<CriticalTopTable, &Analysis::critical_top>("critical_top"),
    TableView<OperatorsTable, &Analysis::operators>("operators", kDefault),
    TableView<KernelsTable, &Analysis::kernels>("kernels"),
    TableView<GpusTable, &Analysis::gpu>("gpu"),
    TableView<IdleTimeTable, &Analysis::idle_time>("idle_time"),
    // Every launch is a row of its own: the whole table, whatever the row limit.
    {"kernel_launches", [](Json& j, const Analysis& a, int) { WriteLaunchesJson(j, a.kernel_launches); },
     [](const Analysis& a, int) { return WriteCsv(LaunchesTable(LaunchRows(a.kernel_launches)), 0); }, nullptr},
    TableView<QueueLengthTable, &Analysis::queue_length>("queue_length"),
    TableView<CopiesTable, &Analysis::copies>("copies"),
    DrawnTableView<KernelTypesTable, &Analysis::kernel_types>(
        "kernel_types", "Device time by kernel type (as HTA's kernel breakdown)",
        "each instant a device worked goes to the set of kernel types running then, over all its streams: "
        "COMPUTATION, COMMUNICATION (NCCL kernels), MEMORY (copies and sets); of busy: of the device's busy time"),
    DrawnTableView<TemporalTable, &Analysis::temporal_breakdown>(
        "temporal_breakdown", "Device time: computation, other work, idle (as HTA's temporal breakdown)",
        "from a device's first work to its last: the time it ran computation kernels on any stream, the time it ran "
        "only communication kernels, copies or sets, and the time it ran nothing, with their shares of that span; "
        "communication: its kernels' time, and the share of it some computation kernel ran beside (HTA's "
        "comm/compute overlap)"),
    {"tensor_cores", [](Json& j, const Analysis& a, int rows) { WriteTensorCoresJson(j, a, rows); },
     [](const Analysis& a, int rows) { return WriteCsv(TensorCoreOpsTable(a), rows); }, nullptr},
    TableView<KernelsByOperatorTable, &Analysis::kernels_by_operator>("kernels_by_operator"),
    TableView<SynchronizationsTable, &Analysis::synchronizations>("synchronizations"),
    TableView<AnnotationsTable, &Analysis::annotations>("annotations"),
    TableView<CollectiveSizesTable, &Analysis::collective_sizes>("collective_sizes"),
    // The memory rows carry their top operators, cut to the row limit too.
    {"memory", [](Json& j, const Analysis& a, int rows) { WriteJson(j, MemoryTable(a, rows), rows); },
     [](const Analysis& a, int rows) { return WriteCsv(MemoryTable(a, rows), rows); }, CountOf<&Analysis::memory>},
    TableView<ModulesTable, &Analysis::modules>("modules"),
    TableView<ModuleClassesTable, &Analysis::module_classes>("module_classes"),
    TableView<PythonFunctionsTable, &Analysis::python_functions>("python_functions"),
    {"recommendations", JsonOf<RecommendationsTable>, nullptr, CountOf<&Analysis::recommendations>},
    {"what_if", [](Json& j, const Analysis& a, int) { WriteWhatIfJson(j, a); }, nullptr, nullptr},
    {"generation", [](Json& j, const Analysis& a, int) { WriteGenerationJson(j, a); }, nullptr, nullptr},
};

// The views with a CSV table, in the views' order: the registry --table and --help read.
const std::vector<CsvTable<Analysis>>& CsvViews() {
  static const std::vector<CsvTable<Analysis>> tables = [] {
    std::vector<CsvTable<Analysis>> v;
    for (const View& view : kViews) {
      if (view.csv) v.push_back({view.name, view.csv, view.by_default});
    }
    return v;
  }();
  return tables;
}

}  // namespace

std::vector<DrawnView> report::DrawnViews() {
  std::vector<DrawnView> drawn;
  for (const View& v : kViews) {
    if (v.title) drawn.push_back({v.name, v.title, v.note, v.count, v.html});
  }
  return drawn;
}

const std::vector<std::string>& CsvTables() {
  static const std::vector<std::string> tables = CsvNames(CsvViews());
  return tables;
}

const std::string& DefaultCsvTable() {
  static const std::string table = DefaultName(CsvViews());
  return table;
}

std::string RenderText(const Analysis& a, const ReportOptions& o) {
  std::string out = "torch2pprof analyze: " + FitLeft(VisibleText(a.trace.file), kWidth - 21) + "\n";
  out += Recommendations(a);
  out += Overview(a);
  out += Section("Categories") + WriteText(CategoriesTable(a), o.top);
  out += Section(a.whole_trace_step ? "Step breakdown (no ProfilerStep: whole trace)" : "Step breakdown");
  out += WriteText(StepsTable(a), o.top);
  size_t shown = Limit(a.steps.size(), o.top);
  if (shown < a.steps.size()) out += "(" + std::to_string(a.steps.size() - shown) + " more steps; -top 0 shows all)\n";
  if (!a.critical_path.empty()) {
    out += Section("Critical path (what each step waited on: every nanosecond to one event, in HTA's categories)");
    out += WriteText(CriticalPathTable(a), o.top);
    out +=
        "(walked back from each step's end through launches, stream order and synchronizations; "
        "docs/reference.md: critical path)\n\n";
    out += WriteText(CriticalTopTable(a), o.top);
  }
  out += Section("Operators (by host total; host self excludes child operators and their own launches)");
  out += a.operators.empty() ? "(no operators)\n" : WriteText(OperatorsTable(a), o.top);
  out += Section("Kernels (by total)");
  out += a.kernels.empty() ? "(no kernels)\n" : WriteText(KernelsTable(a), o.top);
  if (!a.kernels.empty()) {
    out += Wrap(
        "(blk/SM: thread blocks per SM; occ %: estimated achieved occupancy; both from Kineto's kernel records, "
        "weighted by duration; - where a kernel has none)",
        "", " ");
  }
  out += Section("GPU");
  out += a.gpu.empty() ? "(no device activity)\n" : WriteText(GpusTable(a), o.top);
  if (!a.idle_time.empty()) {
    out += Section("GPU idle time by cause (per stream, between its work; as HTA's idle time breakdown)");
    out += WriteText(IdleTimeTable(a), o.top);
    out += "(host wait: the work's launch began after the stream went idle; kernel wait: gaps under " +
           std::to_string(kConsecutiveKernelDelayNs / 1000) +
           "us; other: "
           "the rest)\n";
  }
  if (a.kernel_launches.count > 0) {
    const std::string per_step =
        a.steps.empty() ? "" : ", " + Count(a.kernel_launches.step_count / a.steps.size()) + " per step";
    out += Section("Kernel launches (" + Count(a.kernel_launches.count) + " launch calls to their device work" +
                   per_step + "; as HTA's launch statistics)");
    const std::vector<LaunchRow> rows = LaunchRows(a.kernel_launches);
    out += WriteText(LaunchesTable(rows), 0);
    out += Section("Launch queue per stream (work launched, not yet started; as HTA's queue length)");
    out += WriteText(QueueLengthTable(a), o.top);
  }
  if (!a.copies.empty()) {
    out += Section(
        "Copies and sets (by device and time; GB/s over those that record bytes; as HTA's memory "
        "bandwidth)");
    out += WriteText(CopiesTable(a), o.top);
  }
  if (a.tensor_cores.kernel_ns > 0) {
    const TensorCoreUse& tc = a.tensor_cores;
    out += Section("Tensor Cores (operators by kernel time; eligible: autocast runs them in lower precision)");
    out += PercentOf(tc.kernel_time_share()) + " of kernel time ran in Tensor Core kernels (" +
           FormatDuration(tc.tensor_core_ns) + " of " + FormatDuration(tc.kernel_ns) + ")\n\n";
    out += WriteText(TensorCoreOpsTable(a), o.top);
    out += Section("Kernels by launching operator (by total)");
    out += WriteText(KernelsByOperatorTable(a), o.top);
  }
  if (!a.synchronizations.empty()) {
    out += Section("Host waits for the device (within the steps; by call and launching operator)");
    out += WriteText(SynchronizationsTable(a), o.top);
  }
  if (!a.collective_sizes.empty()) {
    out += Section("Collectives by message (NCCL kernels; bandwidth as nccl-tests defines it)");
    out += WriteText(CollectiveSizesTable(a), o.top);
  }
  if (!a.annotations.empty()) {
    out += Section("Annotations (record_function, by host time; backward: the autograd work of the operators inside)");
    out += WriteText(AnnotationsTable(a), o.top);
  }
  for (const View& v : kViews) {
    if (!v.title || v.count(a) == 0) continue;
    out += Section(v.title) + v.text(a, o.top) + Wrap("(" + std::string(v.note) + ")", "", " ");
  }
  out += Memory(a, o.top);
  out += Modules(a, o.top);
  return VisibleLines(out);  // the safety net: names were made visible where they were written
}

std::string RenderJson(const Analysis& a, const ReportOptions& o) {
  Json j;
  j.Open('{');
  // Every list whole unless -top was given; counts says how many rows each has in all.
  for (const View& v : kViews) v.json(j, a, o.rows);
  j.Key("counts");
  j.Open('{');
  for (const View& v : kViews) {
    if (v.count) j.FieldInt(v.name, static_cast<int64_t>(v.count(a)));
  }
  j.Close('}');
  j.Close('}');
  return j.out + "\n";
}

std::string RenderCsv(const Analysis& a, const ReportOptions& o) { return WriteCsvTable(CsvViews(), a, o, ""); }

}  // namespace torch2pprof
