#include "report/analysis_tables.h"

namespace torch2pprof::report {

namespace {

// A sum over the analysed steps as its mean per step.
Cell PerStep(int64_t sum_ns, uint64_t steps) { return steps ? Micros(sum_ns / static_cast<int64_t>(steps)) : Null(); }
// A count or size over the analysed steps as its mean per step.
Cell PerStepReal(uint64_t sum, uint64_t steps) {
  return steps ? Real(static_cast<double>(sum) / static_cast<double>(steps), "%.1f") : Null();
}

}  // namespace

DataTable<CategoryRow> CategoriesTable(const Analysis& a) {
  int64_t busy = 0;
  for (const CategoryRow& c : a.categories) busy += c.self_ns;
  return {"categories",
          a.categories,
          true,
          {{"category", "category",
            [](const CategoryRow& c) {
              return Cell{Cell::kString, c.category, c.category.empty() ? "(none)" : c.category};
            }},
           {"role", "role", [](const CategoryRow& c) { return Text(RoleName(c.role)); }},
           {"events", "events", [](const CategoryRow& c) { return Int(static_cast<int64_t>(c.events)); }},
           {"total_us", "", [](const CategoryRow& c) { return Micros(c.total_ns); }},
           {"covered_us", "covered", [](const CategoryRow& c) { return Micros(c.covered_ns); }},
           {"self_us", "self", [](const CategoryRow& c) { return Micros(c.self_ns); }},
           {"share", "share", [busy](const CategoryRow& c) { return Share(c.self_ns, busy); }, false}}};
}

DataTable<StepRow> StepsTable(const Analysis& a) {
  DataTable<StepRow> t{"steps",
                       a.steps,
                       true,
                       {{"name", "step", [](const StepRow& s) { return Text(s.name); }},
                        {"start_us", "", [](const StepRow& s) { return Micros(s.start_ns); }},
                        {"total_us", "total", [](const StepRow& s) { return Micros(s.total_ns); }}}};
  for (const StepPart& part : kStepParts) {
    auto field = part.field;
    t.columns.push_back(
        {std::string(part.key) + "_us", part.heading, [field](const StepRow& s) { return Micros(s.*field); }});
  }
  if (!a.steps.empty()) {
    auto sum = [&](int64_t StepRow::*f) {
      int64_t n = 0;
      for (const StepRow& s : a.steps) n += s.*f;
      return n;
    };
    int64_t n = static_cast<int64_t>(a.steps.size()), total = sum(&StepRow::total_ns);
    std::vector<std::string> avg = {"average of " + std::to_string(n), FormatDuration(total / n)};
    std::vector<std::string> share = {"share of step time", "100%"};
    for (const StepPart& part : kStepParts) {
      avg.push_back(FormatDuration(sum(part.field) / n));
      share.push_back(Percent(sum(part.field), total));
    }
    t.text_footer = {avg, share};
  }
  return t;
}

DataTable<OperatorRow> OperatorsTable(const Analysis& a) {
  return {"operators",
          a.operators,
          true,
          {{"", "operator",
            [](const OperatorRow& r) { return Text(r.input_dims.empty() ? r.name : r.name + " " + r.input_dims); }},
           {"name", "", [](const OperatorRow& r) { return Text(r.name); }},
           {"input_dims", "", [](const OperatorRow& r) { return Text(r.input_dims); }, true, false},
           {"calls", "calls", [](const OperatorRow& r) { return Int(static_cast<int64_t>(r.calls)); }},
           {"host_total_us", "host total", [](const OperatorRow& r) { return Micros(r.host_total_ns); }},
           {"host_self_us", "host self", [](const OperatorRow& r) { return Micros(r.host_self_ns); }},
           {"device_total_us", "dev total", [](const OperatorRow& r) { return Micros(r.device_total_ns); }},
           {"device_self_us", "dev self", [](const OperatorRow& r) { return Micros(r.device_self_ns); }},
           {"host_mean_us", "mean", [](const OperatorRow& r) { return MeanMicros(r.host_total_ns, r.calls); }},
           {"host_max_us", "max", [](const OperatorRow& r) { return Micros(r.host_max_ns); }}}};
}

DataTable<KernelRow> KernelsTable(const Analysis& a) {
  int64_t total = a.kernel_total_ns;
  return {"kernels",
          a.kernels,
          true,
          {{"name", "kernel", [](const KernelRow& k) { return Text(k.name); }},
           {"calls", "calls", [](const KernelRow& k) { return Int(static_cast<int64_t>(k.calls)); }},
           {"total_us", "total", [](const KernelRow& k) { return Micros(k.total_ns); }},
           {"mean_us", "mean", [](const KernelRow& k) { return MeanMicros(k.total_ns, k.calls); }},
           {"min_us", "min", [](const KernelRow& k) { return Micros(k.min_ns); }},
           {"max_us", "max", [](const KernelRow& k) { return Micros(k.max_ns); }},
           {"share", "share", [total](const KernelRow& k) { return Share(k.total_ns, total); }, false},
           {"blocks_per_sm", "blk/SM", [](const KernelRow& k) { return Real(k.blocks_per_sm); }},
           {"occupancy", "occ %", [](const KernelRow& k) { return Real(k.occupancy, "%.1f"); }}}};
}

DataTable<GpuRow> GpusTable(const Analysis& a) {
  return {"gpu",
          a.gpu,
          false,
          {{"", "device", [](const GpuRow& g) { return Text(g.device + (g.name.empty() ? "" : " " + g.name)); }},
           {"device", "", [](const GpuRow& g) { return Text(g.device); }},
           {"name", "", [](const GpuRow& g) { return Text(g.name); }},
           {"streams", "streams", [](const GpuRow& g) { return Int(g.streams); }},
           {"busy_us", "busy", [](const GpuRow& g) { return Micros(g.busy_ns); }},
           {"kernel_us", "kernels", [](const GpuRow& g) { return Micros(g.kernel_ns); }},
           {"", "kernel share", [](const GpuRow& g) { return Share(g.kernel_ns, g.busy_ns); }},
           {"steps_window_us", "", [](const GpuRow& g) { return Micros(g.window_ns); }},
           {"steps_kernel_us", "", [](const GpuRow& g) { return Micros(g.window_kernel_ns); }},
           {"utilization", "utilization in steps",
            [](const GpuRow& g) { return Fraction(g.utilization(), g.window_ns > 0); }, false}}};
}

DataTable<IdleRow> IdleTimeTable(const Analysis& a) {
  const uint64_t n = a.steps.size();
  return {
      "idle_time",
      a.idle_time,
      false,
      {{"device", "device", [](const IdleRow& r) { return Text(r.device); }},
       {"stream", "stream", [](const IdleRow& r) { return Text(r.stream); }},
       {"busy_us", "busy", [](const IdleRow& r) { return Micros(r.busy_ns); }},
       {"idle_us", "idle between work", [](const IdleRow& r) { return Micros(r.idle_ns()); }},
       {"host_wait_us", "host wait", [](const IdleRow& r) { return Micros(r.host_wait_ns); }},
       {"kernel_wait_us", "kernel wait", [](const IdleRow& r) { return Micros(r.kernel_wait_ns); }},
       {"other_us", "other", [](const IdleRow& r) { return Micros(r.other_ns); }},
       {"", "host wait share", [](const IdleRow& r) { return Share(r.host_wait_ns, r.idle_ns()); }},
       {"host_wait_per_step_us", "host wait/step", [n](const IdleRow& r) { return PerStep(r.step_host_wait_ns, n); }},
       {"kernel_wait_per_step_us", "", [n](const IdleRow& r) { return PerStep(r.step_kernel_wait_ns, n); }},
       {"other_per_step_us", "", [n](const IdleRow& r) { return PerStep(r.step_other_ns, n); }},
       {"gaps", "", [](const IdleRow& r) { return Int(static_cast<int64_t>(r.gaps)); }}}};
}

DataTable<CopyRow> CopiesTable(const Analysis& a) {
  const uint64_t n = a.steps.size();
  return {"copies",
          a.copies,
          false,
          {{"device", "device", [](const CopyRow& r) { return Text(r.device); }},
           {"kind", "kind", [](const CopyRow& r) { return Text(r.kind); }},
           {"count", "count", [](const CopyRow& r) { return Int(static_cast<int64_t>(r.count)); }},
           {"bytes", "bytes", [](const CopyRow& r) { return ByteCount(r.bytes); }},
           {"time_us", "time", [](const CopyRow& r) { return Micros(r.time_ns); }},
           {"gb_per_s", "GB/s", [](const CopyRow& r) { return Real(r.gb_per_s(), "%.2f"); }},
           {"peak_gb_per_s", "peak GB/s", [](const CopyRow& r) { return Real(r.peak_gb_per_s, "%.2f"); }},
           {"with_bytes", "", [](const CopyRow& r) { return Int(static_cast<int64_t>(r.with_bytes)); }},
           {"count_per_step", "", [n](const CopyRow& r) { return PerStepReal(r.step_count, n); }},
           {"time_per_step_us", "time/step", [n](const CopyRow& r) { return PerStep(r.step_time_ns, n); }},
           {"bytes_per_step", "",
            [n](const CopyRow& r) { return n ? ByteCount(r.step_bytes / static_cast<int64_t>(n)) : Null(); }}}};
}

DataTable<KernelOpRow> KernelsByOperatorTable(const Analysis& a) {
  const int64_t total = a.kernel_total_ns;
  return {"kernels_by_operator",
          a.kernels_by_operator,
          true,
          {{"", "operator > kernel", [](const KernelOpRow& r) { return Text(r.op + " > " + r.kernel); }},
           {"operator", "", [](const KernelOpRow& r) { return Text(r.op); }},
           {"kernel", "", [](const KernelOpRow& r) { return Text(r.kernel); }},
           {"calls", "calls", [](const KernelOpRow& r) { return Int(static_cast<int64_t>(r.calls)); }},
           {"total_us", "total", [](const KernelOpRow& r) { return Micros(r.total_ns); }},
           {"mean_us", "mean", [](const KernelOpRow& r) { return MeanMicros(r.total_ns, r.calls); }},
           {"min_us", "", [](const KernelOpRow& r) { return Micros(r.min_ns); }},
           {"max_us", "max", [](const KernelOpRow& r) { return Micros(r.max_ns); }},
           {"share", "", [total](const KernelOpRow& r) { return Share(r.total_ns, total); }, false},
           {"bytes", "", [](const KernelOpRow& r) { return r.bytes < 0 ? Null() : ByteCount(r.bytes); }},
           {"tensor_cores", "TC", [](const KernelOpRow& r) {
              return Cell{Cell::kNumber, r.tensor_cores ? "true" : "false", r.tensor_cores ? "yes" : ""};
            }}}};
}

DataTable<AnnotationRow> AnnotationsTable(const Analysis& a) {
  return {
      "annotations",
      a.annotations,
      true,
      {{"name", "annotation", [](const AnnotationRow& r) { return Text(r.name); }},
       {"calls", "calls", [](const AnnotationRow& r) { return Int(static_cast<int64_t>(r.calls)); }},
       {"host_us", "host", [](const AnnotationRow& r) { return Micros(r.host_ns); }},
       {"device_us", "device", [](const AnnotationRow& r) { return Micros(r.device_ns); }},
       {"backward_host_us", "backward host", [](const AnnotationRow& r) { return Micros(r.backward_host_ns); }},
       {"backward_device_us", "backward device", [](const AnnotationRow& r) { return Micros(r.backward_device_ns); }}}};
}

DataTable<CollectiveSizeRow> CollectiveSizesTable(const Analysis& a) {
  return {"collective_sizes",
          a.collective_sizes,
          true,
          {{"collective", "collective", [](const CollectiveSizeRow& r) { return Text(r.collective); }},
           {"dtype", "dtype", [](const CollectiveSizeRow& r) { return Text(r.dtype); }},
           {"group_size", "ranks", [](const CollectiveSizeRow& r) { return SignedInt(r.group_size); }},
           {"message_bytes", "message",
            [](const CollectiveSizeRow& r) { return r.message_bytes < 0 ? Null() : ByteCount(r.message_bytes); }},
           {"calls", "calls", [](const CollectiveSizeRow& r) { return Int(static_cast<int64_t>(r.calls)); }},
           {"time_us", "time", [](const CollectiveSizeRow& r) { return Micros(r.time_ns); }},
           {"algbw_gb_per_s", "algbw GB/s", [](const CollectiveSizeRow& r) { return Real(r.algbw_gb_per_s()); }},
           {"busbw_gb_per_s", "busbw GB/s", [](const CollectiveSizeRow& r) { return Real(r.busbw_gb_per_s()); }}}};
}

DataTable<SyncRow> SynchronizationsTable(const Analysis& a) {
  return {"synchronizations",
          a.synchronizations,
          true,
          {{"call", "call", [](const SyncRow& r) { return Text(r.call); }},
           {"operator", "operator", [](const SyncRow& r) { return Text(r.op); }},
           {"count", "count", [](const SyncRow& r) { return Int(static_cast<int64_t>(r.count)); }},
           {"total_us", "total", [](const SyncRow& r) { return Micros(r.total_ns); }}}};
}

DataTable<TensorCoreOp> TensorCoreOpsTable(const Analysis& a) {
  return {"operators",
          a.tensor_cores.ops,
          true,
          {{"operator", "operator", [](const TensorCoreOp& r) { return Text(r.op); }},
           {"kernel_us", "kernels", [](const TensorCoreOp& r) { return Micros(r.kernel_ns); }},
           {"tensor_core_us", "on Tensor Cores", [](const TensorCoreOp& r) { return Micros(r.tensor_core_ns); }},
           {"share", "share", [](const TensorCoreOp& r) { return Share(r.tensor_core_ns, r.kernel_ns); }},
           {"eligible", "eligible", [](const TensorCoreOp& r) {
              return Cell{Cell::kNumber, r.eligible ? "true" : "false", r.eligible ? "yes" : ""};
            }}}};
}

void WriteTensorCoresJson(Json& j, const Analysis& a, int top) {
  const TensorCoreUse& tc = a.tensor_cores;
  j.Key("tensor_cores");
  j.Open('{');
  j.Key("kernel_time_share"), j.Raw(Printf("%.6g", tc.kernel_time_share()));
  j.FieldMicros("kernel_us", tc.kernel_ns);
  j.FieldMicros("tensor_core_us", tc.tensor_core_ns);
  WriteJson(j, TensorCoreOpsTable(a), top);
  j.Close('}');
}

DataTable<QueueRow> QueueLengthTable(const Analysis& a) {
  return {"queue_length",
          a.queue_length,
          false,
          {{"device", "device", [](const QueueRow& r) { return Text(r.device); }},
           {"stream", "stream", [](const QueueRow& r) { return Text(r.stream); }},
           {"launches", "launches", [](const QueueRow& r) { return Int(static_cast<int64_t>(r.launches)); }},
           {"mean", "mean", [](const QueueRow& r) { return Real(r.mean, "%.2f"); }},
           {"p50", "p50", [](const QueueRow& r) { return Int(r.length.p50); }},
           {"p90", "p90", [](const QueueRow& r) { return Int(r.length.p90); }},
           {"max", "max", [](const QueueRow& r) { return Int(r.length.max); }}}};
}

std::vector<LaunchRow> LaunchRows(const LaunchStats& s) {
  return {{"launch_delay", "launch delay", &s.launch_delay, s.count, s.long_delays, "over 100us"},
          {"cpu_duration", "launch call (CPU)", &s.cpu_duration, s.count, s.slow_launches, "over 50us"},
          {"gpu_duration", "device time (GPU)", &s.gpu_duration, s.count, s.short_kernels, "shorter than its call"}};
}

DataTable<LaunchRow> LaunchesTable(const std::vector<LaunchRow>& rows) {
  return {"kernel_launches",
          rows,
          false,
          {{"measure", "", [](const LaunchRow& r) { return Text(r.key); }},
           {"", "measure", [](const LaunchRow& r) { return Text(r.measure); }},
           {"count", "launches", [](const LaunchRow& r) { return Int(static_cast<int64_t>(r.count)); }},
           {"mean_us", "mean", [](const LaunchRow& r) { return Micros(r.p->mean); }},
           {"p50_us", "p50", [](const LaunchRow& r) { return Micros(r.p->p50); }},
           {"p90_us", "p90", [](const LaunchRow& r) { return Micros(r.p->p90); }},
           {"p99_us", "p99", [](const LaunchRow& r) { return Micros(r.p->p99); }},
           {"max_us", "max", [](const LaunchRow& r) { return Micros(r.p->max); }},
           {"outliers", "outliers", [](const LaunchRow& r) { return Int(static_cast<int64_t>(r.outliers)); }},
           {"outlier_rule", "outliers are", [](const LaunchRow& r) { return Text(r.outlier_rule); }}}};
}

void WriteLaunchesJson(Json& j, const LaunchStats& s) {
  j.Key("kernel_launches");
  j.Open('{');
  j.FieldInt("count", static_cast<int64_t>(s.count));
  j.FieldInt("step_count", static_cast<int64_t>(s.step_count));
  for (const LaunchRow& r : LaunchRows(s)) {
    j.Key(std::string(r.key) + "_us");
    j.Open('{');
    j.FieldMicros("mean", r.p->mean), j.FieldMicros("p50", r.p->p50), j.FieldMicros("p90", r.p->p90);
    j.FieldMicros("p99", r.p->p99), j.FieldMicros("max", r.p->max);
    j.Close('}');
  }
  j.FieldInt("long_delays", static_cast<int64_t>(s.long_delays));
  j.FieldInt("slow_launches", static_cast<int64_t>(s.slow_launches));
  j.FieldInt("short_kernels", static_cast<int64_t>(s.short_kernels));
  j.FieldMicros("long_delay_over_us", kLongDelayNs);
  j.FieldMicros("slow_launch_over_us", kSlowLaunchNs);
  j.Close('}');
}

DataTable<MemoryRow> MemoryTable(const Analysis& a, int top) {
  DataTable<MemoryRow> t{
      "memory",
      a.memory,
      false,
      {{"device", "device", [](const MemoryRow& m) { return Text(m.device); }},
       {"allocations", "allocations", [](const MemoryRow& m) { return Int(static_cast<int64_t>(m.allocations)); }},
       {"allocated_bytes", "allocated", [](const MemoryRow& m) { return ByteCount(m.allocated_bytes); }},
       {"frees", "frees", [](const MemoryRow& m) { return Int(static_cast<int64_t>(m.frees)); }},
       {"freed_bytes", "freed", [](const MemoryRow& m) { return ByteCount(m.freed_bytes); }},
       {"peak_bytes", "peak", [](const MemoryRow& m) { return ByteCount(m.peak_bytes); }},
       {"peak_us", "", [](const MemoryRow& m) { return Micros(m.peak_ns); }},
       {"before_trace_bytes", "before the trace", [](const MemoryRow& m) { return ByteCount(m.before_trace_bytes); }}}};
  t.json_more = [top](Json& j, const MemoryRow& m) {
    j.Key("top_operators");
    j.Open('[');
    for (size_t i = 0; i < Limit(m.top_operators.size(), top); ++i) {
      const MemoryOperator& op = m.top_operators[i];
      j.Open('{');
      j.Field("name", op.name), j.FieldInt("allocations", static_cast<int64_t>(op.allocations)),
          j.FieldInt("bytes", op.bytes);
      j.FieldInt("live_allocations", static_cast<int64_t>(op.live_allocations)),
          j.FieldInt("live_bytes", op.live_bytes);
      j.Close('}');
    }
    j.Close(']');
    // By the operator that allocated, parallel to the chart's buckets (the HTML stacks them).
    j.Key("site_series");
    j.Open('[');
    for (const SiteSeries& s : m.site_timeline) {
      j.Open('{');
      j.Field("site", s.site), j.FieldInt("peak_bytes", s.peak_bytes);
      j.Key("bytes");
      j.Open('[');
      for (const int64_t v : s.bytes) j.Int(v);
      j.Close(']');
      j.Close('}');
    }
    j.Close(']');
  };
  return t;
}

DataTable<ModuleNode> ModulesTable(const Analysis& a) {
  // People read the tree by its indentation; scripts by parent and depth.
  return {"modules",
          a.modules,
          true,
          {{"", "module",
            [](const ModuleNode& m) { return Text(std::string(2 * static_cast<size_t>(m.depth), ' ') + m.name); }},
           {"name", "", [](const ModuleNode& m) { return Text(m.name); }},
           {"class", "", [](const ModuleNode& m) { return Text(m.module_class); }},
           {"parent", "", [](const ModuleNode& m) { return m.parent < 0 ? Null() : Int(m.parent); }},
           {"depth", "", [](const ModuleNode& m) { return Int(m.depth); }},
           {"calls", "calls", [](const ModuleNode& m) { return Int(static_cast<int64_t>(m.calls)); }},
           {"host_self_us", "host self", [](const ModuleNode& m) { return Micros(m.host_self_ns); }},
           {"host_total_us", "host total", [](const ModuleNode& m) { return Micros(m.host_total_ns); }},
           {"device_self_us", "dev self", [](const ModuleNode& m) { return Micros(m.device_self_ns); }},
           {"device_total_us", "dev total", [](const ModuleNode& m) { return Micros(m.device_total_ns); }}}};
}

DataTable<ModuleClassRow> ModuleClassesTable(const Analysis& a) {
  return {"module_classes",
          a.module_classes,
          true,
          {{"name", "class", [](const ModuleClassRow& c) { return Text(c.name); }},
           {"instances", "instances", [](const ModuleClassRow& c) { return Int(static_cast<int64_t>(c.instances)); }},
           {"calls", "calls", [](const ModuleClassRow& c) { return Int(static_cast<int64_t>(c.calls)); }},
           {"host_self_us", "host self", [](const ModuleClassRow& c) { return Micros(c.host_self_ns); }},
           {"host_total_us", "host total", [](const ModuleClassRow& c) { return Micros(c.host_total_ns); }},
           {"device_self_us", "dev self", [](const ModuleClassRow& c) { return Micros(c.device_self_ns); }},
           {"device_total_us", "dev total", [](const ModuleClassRow& c) { return Micros(c.device_total_ns); }}}};
}

DataTable<PythonFunctionRow> PythonFunctionsTable(const Analysis& a) {
  return {"python_functions",
          a.python_functions,
          true,
          {{"name", "function", [](const PythonFunctionRow& r) { return Text(r.name); }},
           {"file", "", [](const PythonFunctionRow& r) { return Text(r.file); }},
           {"line", "", [](const PythonFunctionRow& r) { return Int(r.line); }},
           {"calls", "calls", [](const PythonFunctionRow& r) { return Int(static_cast<int64_t>(r.calls)); }},
           {"host_self_us", "host self", [](const PythonFunctionRow& r) { return Micros(r.host_self_ns); }},
           {"host_total_us", "host total", [](const PythonFunctionRow& r) { return Micros(r.host_total_ns); }},
           {"device_total_us", "dev total", [](const PythonFunctionRow& r) { return Micros(r.device_total_ns); }}}};
}

DataTable<CriticalStep> CriticalPathTable(const Analysis& a) {
  // Short headings for the categories, in kBoundNames order.
  static constexpr const char* kHeadings[kBounds] = {"k-k gap", "launch", "dataload", "cpu", "compute", "comm"};
  DataTable<CriticalStep> t{
      "critical_path",
      a.critical_path,
      true,
      {{"step", "step", [](const CriticalStep& s) { return Text(s.step); }},
       {"length_us", "length", [](const CriticalStep& s) { return Micros(s.length_ns); }},
       {"", "bound by", [](const CriticalStep& s) {
          const int b = static_cast<int>(s.bound_by());
          // HTA's categories are the columns beside it.
          return Cell{Cell::kString, "", std::string(s.bound_words()) + " " + Percent(s.bound_ns[b], s.length_ns)};
        }}}};
  for (int b = 0; b < kBounds; ++b) {
    t.columns.push_back({"", kHeadings[b], [b](const CriticalStep& s) { return Micros(s.bound_ns[b]); }});
  }
  // CSV: a column per category by its HTA name; JSON: "bound_by", the categories as an
  // object, then the category holding most and the events holding most.
  for (int b = 0; b < kBounds; ++b) {
    Column<CriticalStep> c{std::string(kBoundNames[b]) + "_us", "",
                           [b](const CriticalStep& s) { return Micros(s.bound_ns[b]); }};
    c.json = false;
    t.columns.push_back(std::move(c));
  }
  t.json_more = [&a](Json& j, const CriticalStep& s) {
    j.Key("bound_by");
    j.Open('{');
    for (int b = 0; b < kBounds; ++b) j.FieldMicros(kBoundNames[b], s.bound_ns[b]);
    j.Close('}');
    j.Field("bound_by_most", kBoundNames[static_cast<int>(s.bound_by())]);
    j.Field("bound_by_words", s.bound_words());
    j.FieldMicros("copy_us", s.copy_ns);
    if (s.most.ns > 0) {
      j.Key("most");
      j.Open('{');
      j.Field("name", a.critical_names[s.most.name]), j.Field("bound", kBoundNames[static_cast<int>(s.most.bound)]);
      j.Field("where", a.critical_names[s.most.where]), j.FieldMicros("us", s.most.ns);
      j.Close('}');
    }
  };
  return t;
}

DataTable<CriticalItem> CriticalTopTable(const Analysis& a) {
  int64_t total = 0;
  for (const CriticalStep& s : a.critical_path) total += s.length_ns;
  return {"critical_top",
          a.critical_top,
          true,
          {{"name", "", [](const CriticalItem& i) { return Text(i.name); }},
           {"", "event", [](const CriticalItem& i) { return Text(Fit(i.name, 36)); }},
           {"bound", "bound by", [](const CriticalItem& i) { return Text(kBoundNames[static_cast<int>(i.bound)]); }},
           {"where", "", [](const CriticalItem& i) { return Text(i.where); }},
           {"", "code", [](const CriticalItem& i) { return Text(FitLeft(i.where, 36)); }},
           {"us", "time", [](const CriticalItem& i) { return Micros(i.ns); }},
           {"", "of steps", [total](const CriticalItem& i) { return Share(i.ns, total); }}}};
}

DataTable<Recommendation> RecommendationsTable(const Analysis& a) {
  return {"recommendations",
          a.recommendations,
          false,
          {{"id", "", [](const Recommendation& r) { return Text(std::string(r.id())); }},
           {"saving_us", "", [](const Recommendation& r) { return Micros(r.saving_ns); }},
           {"what_if", "", [](const Recommendation& r) { return Text(r.what_if); }},
           {"cause", "", [](const Recommendation& r) { return Text(r.cause); }},
           {"cause_us", "", [](const Recommendation& r) { return Micros(r.cause_ns); }},
           {"text", "", [&a](const Recommendation& r) { return Text(RecommendationText(a, r)); }}}};
}

}  // namespace torch2pprof::report
