// compare's report: the same table descriptions (report/table.h) as analyze, written as
// text, markdown (a table per section), one JSON document or one offline HTML page.
#include <cmath>

#include "report/html_page.h"
#include "report/snapshot_tables.h"
#include "report/table.h"
#include "torch2pprof/analysis.h"
#include "torch2pprof/report.h"

namespace torch2pprof {

using namespace report;

namespace {

std::string RelativeText(double r) {
  if (std::isinf(r)) return r > 0 ? "new" : "gone";
  return Printf(r >= 0 ? "+%.1f%%" : "%.1f%%", 100 * r);
}
Cell Relative(double r) {
  if (std::isinf(r)) return {Cell::kNull, "", RelativeText(r)};
  return {Cell::kNumber, Printf("%.6g", r), RelativeText(r)};
}
Cell ChangeMicros(int64_t ns) { return {Cell::kNumber, FormatMicros(ns), SignedDuration(ns)}; }
// Calls per step: whole where they are whole ("34", not "34.0").
Cell Calls(double per_step) {
  const bool whole = per_step == std::floor(per_step) && std::fabs(per_step) < 1e15;
  return {Cell::kNumber, Printf("%.6g", per_step), whole ? Printf("%.0f", per_step) : Printf("%.1f", per_step)};
}
// "~" after a change that is within the noise; "?" when too few steps to tell.
std::string Mark(const Significance& s) { return !s.assessed ? " ?" : s.significant ? "" : " ~"; }

// The rows of the steps section: one per run, and the change.
struct StepLine {
  std::string run;
  StepSummary s;
  bool whole_trace;
};

DataTable<StepLine> StepsSummary(const std::vector<StepLine>& rows) {
  return {"runs",
          rows,
          false,
          {{"run", "run", [](const StepLine& l) { return Text(l.run); }},
           {"steps", "steps",
            [](const StepLine& l) {
              return Cell{Cell::kNumber, std::to_string(l.s.steps),
                          std::to_string(l.s.steps) + (l.whole_trace ? " (whole trace)" : "")};
            }},
           {"median_us", "median", [](const StepLine& l) { return Micros(l.s.median_ns); }},
           {"min_us", "min", [](const StepLine& l) { return Micros(l.s.min_ns); }},
           {"max_us", "max", [](const StepLine& l) { return Micros(l.s.max_ns); }}}};
}

DataTable<PartChange> Parts(const Comparison& c) {
  return {"parts",
          c.parts,
          false,
          {{"part", "part (mean per step)", [](const PartChange& p) { return Text(p.part); }},
           {"base_us", "base", [](const PartChange& p) { return Micros(p.mean_ns.base); }},
           {"new_us", "new", [](const PartChange& p) { return Micros(p.mean_ns.next); }},
           {"change_us", "change",
            [](const PartChange& p) {
              Cell cell = ChangeMicros(p.mean_ns.change());
              if (p.mean_ns.change() != 0) cell.display += " (" + RelativeText(p.mean_ns.relative()) + ")";
              cell.display += Mark(p.significance);
              return cell;
            }},
           {"change", "", [](const PartChange& p) { return Relative(p.mean_ns.relative()); }},
           {"significant", "", [](const PartChange& p) {
              return Cell{Cell::kNumber, p.significance.significant ? "true" : "false", ""};
            }}}};
}

DataTable<OperatorChange> Operators(const Comparison& c) {
  return {"operators",
          c.operators,
          true,
          {{"", "operator (per step)",
            [](const OperatorChange& o) { return Text(o.input_dims.empty() ? o.name : o.name + " " + o.input_dims); }},
           {"name", "", [](const OperatorChange& o) { return Text(o.name); }},
           {"input_dims", "", [](const OperatorChange& o) { return Text(o.input_dims); }, true, false},
           {"status", "", [](const OperatorChange& o) { return Text(o.status); }},
           {"base_calls", "base calls", [](const OperatorChange& o) { return Calls(o.base_calls); }},
           {"new_calls", "new calls", [](const OperatorChange& o) { return Calls(o.next_calls); }},
           {"base_host_total_us", "host base", [](const OperatorChange& o) { return Micros(o.host_total.base); }},
           {"new_host_total_us", "host new", [](const OperatorChange& o) { return Micros(o.host_total.next); }},
           {"host_total_change_us", "host change",
            [](const OperatorChange& o) { return ChangeMicros(o.host_total.change()); }},
           {"base_host_self_us", "", [](const OperatorChange& o) { return Micros(o.host_self.base); }},
           {"new_host_self_us", "", [](const OperatorChange& o) { return Micros(o.host_self.next); }},
           {"base_device_total_us", "dev base", [](const OperatorChange& o) { return Micros(o.device_total.base); }},
           {"new_device_total_us", "dev new", [](const OperatorChange& o) { return Micros(o.device_total.next); }},
           {"device_total_change_us", "dev change",
            [](const OperatorChange& o) { return ChangeMicros(o.device_total.change()); }},
           {"base_device_self_us", "", [](const OperatorChange& o) { return Micros(o.device_self.base); }},
           {"new_device_self_us", "", [](const OperatorChange& o) { return Micros(o.device_self.next); }}}};
}

DataTable<KernelChange> Kernels(const Comparison& c) {
  return {"kernels",
          c.kernels,
          true,
          {{"name", "kernel (per step)", [](const KernelChange& k) { return Text(k.name); }},
           {"status", "", [](const KernelChange& k) { return Text(k.status); }},
           {"base_calls", "base calls", [](const KernelChange& k) { return Calls(k.base_calls); }},
           {"new_calls", "new calls", [](const KernelChange& k) { return Calls(k.next_calls); }},
           {"base_total_us", "base", [](const KernelChange& k) { return Micros(k.total.base); }},
           {"new_total_us", "new", [](const KernelChange& k) { return Micros(k.total.next); }},
           {"total_change_us", "change", [](const KernelChange& k) { return ChangeMicros(k.total.change()); }},
           {"base_mean_us", "mean base", [](const KernelChange& k) { return Micros(k.mean.base); }},
           {"new_mean_us", "mean new", [](const KernelChange& k) { return Micros(k.mean.next); }}}};
}

DataTable<DeviceChange> Devices(const Comparison& c) {
  return {
      "gpu",
      c.devices,
      false,
      {{"device", "device", [](const DeviceChange& d) { return Text(d.device); }},
       {"base_utilization", "utilization base",
        [](const DeviceChange& d) { return Fraction(d.base_utilization, true); }},
       {"new_utilization", "utilization new", [](const DeviceChange& d) { return Fraction(d.next_utilization, true); }},
       {"", "change",
        [](const DeviceChange& d) {
          return Text(Printf("%+.1f pp", 100 * (d.next_utilization - d.base_utilization)));
        }},
       {"base_kernel_us", "kernels base", [](const DeviceChange& d) { return Micros(d.kernel.base); }},
       {"new_kernel_us", "kernels new", [](const DeviceChange& d) { return Micros(d.kernel.next); }}}};
}

DataTable<MemoryChange> Memory(const Comparison& c) {
  return {"memory",
          c.memory,
          false,
          {{"device", "device", [](const MemoryChange& m) { return Text(m.device); }},
           {"base_peak_bytes", "peak base", [](const MemoryChange& m) { return ByteCount(m.peak_bytes.base); }},
           {"new_peak_bytes", "peak new", [](const MemoryChange& m) { return ByteCount(m.peak_bytes.next); }},
           {"change_bytes", "change",
            [](const MemoryChange& m) {
              return Cell{Cell::kNumber, std::to_string(m.peak_bytes.change()), SignedBytes(m.peak_bytes.change())};
            }},
           {"change", "", [](const MemoryChange& m) { return Relative(m.peak_bytes.relative()); }}}};
}

std::string RuleValue(const std::string& metric, double v) {
  if (metric == "memory_peak") return Bytes(static_cast<int64_t>(v));
  if (metric == "gpu_util") return PercentOf(v);
  return FormatDuration(static_cast<int64_t>(std::llround(v)));
}

std::string RuleSigned(const std::string& metric, double v) {
  if (metric == "memory_peak") return SignedBytes(static_cast<int64_t>(v));
  if (metric == "gpu_util") return Printf("%+.4f", v);
  return SignedDuration(static_cast<int64_t>(std::llround(v)));
}

// The uncertainty beside a change: the bootstrap interval and the steps behind it.
// The assessed interval in words; the table cell adds the noise mark, sentences say it in words.
std::string IntervalText(const RuleResult& r) {
  return RuleSigned(r.rule.metric, r.significance.low) + " .. " + RuleSigned(r.rule.metric, r.significance.high) +
         " over " + std::to_string(r.base_steps) + "/" + std::to_string(r.next_steps) + " steps";
}

std::string Uncertainty(const RuleResult& r) {
  if (!r.matched) return "no match";
  if (r.one_value) return "one value a run";
  if (!r.significance.assessed) {
    return "not judged: " + std::to_string(r.base_steps) + " and " + std::to_string(r.next_steps) + " steps (" +
           std::to_string(kMinSteps) + " needed)";
  }
  return IntervalText(r) + (r.significance.significant ? "" : " ~");
}

std::string RuleChange(const RuleResult& r) {
  if (r.rule.relative) return std::isinf(r.change) ? "new" : Printf("%+.1f%%", r.change);
  if (r.rule.metric == "memory_peak") return SignedBytes(static_cast<int64_t>(r.change));
  if (r.rule.metric == "gpu_util") return Printf("%+.4f", r.change);
  return SignedDuration(static_cast<int64_t>(std::llround(r.change)));
}

DataTable<RuleResult> Rules(const std::vector<RuleResult>& rules, const char* name) {
  return {
      name,
      rules,
      false,
      {{"rule", "rule", [](const RuleResult& r) { return Text(r.rule.text); }},
       {"base", "base",
        [](const RuleResult& r) {
          return Cell{Cell::kNumber, Printf("%.17g", r.base), RuleValue(r.rule.metric, r.base)};
        }},
       {"new", "new",
        [](const RuleResult& r) {
          return Cell{Cell::kNumber, Printf("%.17g", r.next), RuleValue(r.rule.metric, r.next)};
        }},
       {"change", "change",
        [](const RuleResult& r) {
          if (std::isinf(r.change)) return Cell{Cell::kNull, "", "new"};
          return Cell{Cell::kNumber, Printf("%.17g", r.change), RuleChange(r)};
        }},
       {"side", "", [](const RuleResult& r) { return Text(r.side); }, true, false},
       {"", "95% interval of the change",
        [](const RuleResult& r) { return Text(Uncertainty(r) + (r.side.empty() ? "" : " (" + r.side + ")")); }},
       {"significant", "",
        [](const RuleResult& r) {
          return Cell{Cell::kNumber, r.significance.significant ? "true" : "false", ""};
        }},
       {"one_value", "",
        [](const RuleResult& r) {
          return Cell{Cell::kNumber, r.one_value ? "true" : "false", ""};
        }},
       {"interval_low", "",
        [](const RuleResult& r) {
          return r.significance.assessed ? Cell{Cell::kNumber, Printf("%.17g", r.significance.low), ""} : Null();
        }},
       {"interval_high", "",
        [](const RuleResult& r) {
          return r.significance.assessed ? Cell{Cell::kNumber, Printf("%.17g", r.significance.high), ""} : Null();
        }},
       {"base_steps", "", [](const RuleResult& r) { return Int(static_cast<int64_t>(r.base_steps)); }},
       {"new_steps", "", [](const RuleResult& r) { return Int(static_cast<int64_t>(r.next_steps)); }},
       {"crossed", "",
        [](const RuleResult& r) {
          return Cell{Cell::kNumber, r.crossed ? "true" : "false", ""};
        }},
       {"steps_needed", "",
        [](const RuleResult& r) { return r.steps_needed ? Int(static_cast<int64_t>(r.steps_needed)) : Null(); }},
       {"fired", "fired", [](const RuleResult& r) {
          return Cell{Cell::kNumber, r.fired ? "true" : "false", r.fired ? "FIRED" : r.crossed ? "held (noise)" : "-"};
        }}}};
}

std::string StepVerdict(const Comparison& c) {
  const Significance& s = c.step_significance;
  std::string v = "median step " + FormatDuration(c.step_median.base) + " -> " + FormatDuration(c.step_median.next) +
                  ": " + SignedDuration(c.step_median.change()) + " (" + RelativeText(c.step_median.relative()) + ")";
  if (!s.assessed) {
    return v + " ? (" + std::to_string(c.base_steps.steps) + " and " + std::to_string(c.next_steps.steps) +
           " steps: the noise is judged from " + std::to_string(kMinSteps) +
           " steps a run, so this says nothing of it)";
  }
  v += s.significant ? ", significant" : " ~ (within the noise)";
  return v + ": 95% bootstrap interval of the change of the median " + SignedDuration(std::llround(s.low)) + " .. " +
         SignedDuration(std::llround(s.high));
}

// The change itself, the first line of every format: the median step, and the part of
// the step breakdown whose mean changed most.
std::string Headline(const Comparison& c) {
  std::string h = "step time " + FormatDuration(c.step_median.base) + " -> " + FormatDuration(c.step_median.next) +
                  " (" + RelativeText(c.step_median.relative()) + ")";
  const PartChange* most = nullptr;
  for (const PartChange& p : c.parts) {
    if (p.mean_ns.change() != 0 && (!most || std::llabs(p.mean_ns.change()) > std::llabs(most->mean_ns.change()))) {
      most = &p;
    }
  }
  if (most) {
    h += "; changed most: " + most->part + " " + FormatDuration(most->mean_ns.base) + " -> " +
         FormatDuration(most->mean_ns.next) + " a step (" + SignedDuration(most->mean_ns.change()) + ")";
  }
  return h;
}

std::vector<StepLine> StepLines(const Comparison& c) {
  return {{"base: " + c.base_file, c.base_steps, c.base_whole_trace},
          {"new: " + c.next_file, c.next_steps, c.next_whole_trace}};
}

std::vector<RuleResult> Fired(const Comparison& c) {
  std::vector<RuleResult> out;
  for (const RuleResult& r : c.rules) {
    if (r.fired) out.push_back(r);
  }
  return out;
}

// Added and removed rows say so in their change column's place.
template <typename Row>
DataTable<Row> WithStatus(DataTable<Row> t) {
  for (auto& col : t.columns) {
    if (col.heading == "host change" || col.heading == "change") {
      auto inner = col.cell;
      col.cell = [inner](const Row& r) {
        Cell cell = inner(r);
        if (r.status != "changed") cell.display = r.status;
        return cell;
      };
    }
  }
  return t;
}

}  // namespace

std::string DescribeRule(const RuleResult& r) {
  std::string uncertainty = r.one_value                ? ""
                            : !r.significance.assessed ? "; the noise not judged: " + std::to_string(r.base_steps) +
                                                             " and " + std::to_string(r.next_steps) + " steps (" +
                                                             std::to_string(kMinSteps) + " a run needed)"
                                                       : "; 95% interval " + IntervalText(r);
  if (r.significance.assessed && !r.significance.significant) uncertainty += " (within the noise)";
  return r.rule.text + ": " + RuleChange(r) + (r.side.empty() ? "" : " in " + r.side + " time") + " (" +
         RuleValue(r.rule.metric, r.base) + " -> " + RuleValue(r.rule.metric, r.next) + uncertainty + ")";
}

std::string DescribeHeld(const RuleResult& r) {
  std::string out = r.rule.text + ": " + RuleChange(r) + (r.side.empty() ? "" : " in " + r.side + " time") +
                    " crossed the threshold but did not fire (--noise-aware): ";
  if (!r.significance.assessed) {
    return out + "a run of " + Counted(std::min(r.base_steps, r.next_steps), "step", "steps") +
           " is too few to judge the noise by (" + std::to_string(kMinSteps) +
           " are needed); record more steps "
           "(torch.profiler.schedule(active=...)), or drop --noise-aware so that the threshold decides";
  }
  out += "the 95% interval of the change, " + IntervalText(r) + ", holds 0";
  if (r.steps_needed) {
    out += "; with this spread a change of the threshold's size stands out with about " +
           std::to_string(r.steps_needed) + " steps a run";
  }
  return out;
}

namespace {

// What CI acts on, first: the rules that fired and the exit status, or that none did.
std::string VerdictText(const std::vector<RuleResult>& rules, bool markdown) {
  auto line = [&](const std::string& text) { return markdown ? "- " + text + "\n" : Wrap(text, "  ", "    "); };
  if (rules.empty()) return "Verdict: no --fail-on rule given, nothing gated (exit 0)\n";
  std::string fired, rest;
  size_t n_fired = 0;
  for (const RuleResult& r : rules) {
    if (r.fired) {
      ++n_fired;
      fired += line((markdown ? "**FIRED** " : "FIRED ") + DescribeRule(r));
    } else {
      rest += line(r.crossed ? "held " + DescribeHeld(r) : "not crossed " + DescribeRule(r));
    }
  }
  const std::string head = n_fired ? std::to_string(n_fired) + " of " + std::to_string(rules.size()) +
                                         (rules.size() == 1 ? " rule" : " rules") + " fired (exit 4)"
                                   : "no rule fired (exit 0)";
  return (markdown ? "**Verdict: " + head + "**\n\n" : "Verdict: " + head + "\n") + fired + rest;
}

}  // namespace

std::string RenderCompareText(const Comparison& c, const ReportOptions& o) {
  std::vector<StepLine> lines = StepLines(c);
  std::string out = "torch2pprof compare: " + Headline(c) + "\n" + VerdictText(c.rules, false) + Section("Steps") +
                    WriteText(StepsSummary(lines), 0);
  out += Wrap(StepVerdict(c), "", "  ");
  out += Section(
             "Step breakdown (inside the analysed steps, mean per step; ~ within the noise, ? too few steps to tell)") +
         WriteText(Parts(c), 0);
  out += Section("Operators (the whole trace over its steps, by the larger change of host or device total)");
  out += c.operators.empty() ? "(no operators)\n" : WriteText(WithStatus(Operators(c)), o.top);
  out += Section("Kernels (the whole trace over its steps, by change)");
  out += c.kernels.empty() ? "(no kernels)\n" : WriteText(WithStatus(Kernels(c)), o.top);
  if (!c.devices.empty()) out += Section("GPU") + WriteText(Devices(c), 0);
  if (!c.memory.empty()) out += Section("Memory peak") + WriteText(Memory(c), 0);
  out += "\nCommunication per step: " + FormatDuration(c.communication.base) + " -> " +
         FormatDuration(c.communication.next) + " (" + SignedDuration(c.communication.change()) + ")\n";
  if (!c.rules.empty()) out += Section("Rules (--fail-on)") + WriteText(Rules(c.rules, "rules"), 0);
  return VisibleLines(out);  // the safety net: names were made visible where they were written
}

std::string RenderCompareMarkdown(const Comparison& c, const ReportOptions& o) {
  std::vector<StepLine> lines = StepLines(c);
  std::string out = "## torch2pprof compare: " + Headline(c) + "\n\n" + VerdictText(c.rules, true) + "\n" +
                    Wrap(StepVerdict(c), "", "") + "\n### Steps\n\n" + WriteMarkdown(StepsSummary(lines), 0);
  out += "\n### Step breakdown (inside the analysed steps, mean per step)\n\n" + WriteMarkdown(Parts(c), 0);
  if (!c.operators.empty()) {
    out += "\n### Operators (the whole trace over its steps)\n\n" + WriteMarkdown(WithStatus(Operators(c)), o.top);
  }
  if (!c.kernels.empty()) {
    out += "\n### Kernels (the whole trace over its steps)\n\n" + WriteMarkdown(WithStatus(Kernels(c)), o.top);
  }
  if (!c.devices.empty()) out += "\n### GPU\n\n" + WriteMarkdown(Devices(c), 0);
  if (!c.memory.empty()) out += "\n### Memory peak\n\n" + WriteMarkdown(Memory(c), 0);
  if (!c.rules.empty()) out += "\n### Rules\n\n" + WriteMarkdown(Rules(c.rules, "rules"), 0);
  return VisibleLines(out);  // the safety net: names were made visible where they were written
}

std::string RenderCompareJson(const Comparison& c, const ReportOptions& o) {
  Json j;
  j.Open('{');
  j.Field("headline", Headline(c));
  j.Key("steps");
  j.Open('{');
  std::vector<StepLine> lines = StepLines(c);
  auto run = [&](const char* key, const StepLine& l) {
    j.Key(key);
    j.Open('{');
    j.Field("file", l.run.substr(l.run.find(": ") + 2));
    j.FieldInt("steps", static_cast<int64_t>(l.s.steps));
    j.Key("whole_trace"), j.Raw(l.whole_trace ? "true" : "false");
    j.FieldMicros("median_us", l.s.median_ns), j.FieldMicros("min_us", l.s.min_ns), j.FieldMicros("max_us", l.s.max_ns);
    j.Close('}');
  };
  run("base", lines[0]);
  run("new", lines[1]);
  j.FieldMicros("median_change_us", c.step_median.change());
  Cell rel = Relative(c.step_median.relative());
  j.Key("median_change"), j.Raw(rel.kind == Cell::kNull ? "null" : rel.text);
  j.Field("test", "bootstrap of the median, 95%, 5000 resamples");
  j.Key("assessed"), j.Raw(c.step_significance.assessed ? "true" : "false");
  j.Key("significant"), j.Raw(c.step_significance.significant ? "true" : "false");
  j.FieldMicros("interval_low_us", std::llround(c.step_significance.low));
  j.FieldMicros("interval_high_us", std::llround(c.step_significance.high));
  WriteJson(j, Parts(c), 0);
  j.Close('}');
  WriteJson(j, Operators(c), o.rows);
  WriteJson(j, Kernels(c), o.rows);
  WriteJson(j, Devices(c), 0);
  WriteJson(j, Memory(c), 0);
  j.Key("communication");
  j.Open('{');
  j.FieldMicros("base_us", c.communication.base), j.FieldMicros("new_us", c.communication.next);
  j.FieldMicros("change_us", c.communication.change());
  j.Close('}');
  std::vector<RuleResult> fired = Fired(c);
  WriteJson(j, Rules(fired, "regressions"), 0);
  WriteJson(j, Rules(c.rules, "rules"), 0);
  j.Close('}');
  return j.out + "\n";
}

namespace {

Cell ChangeBytes(const Delta& d) { return Cell{Cell::kNumber, std::to_string(d.change()), SignedBytes(d.change())}; }

DataTable<SnapshotDeviceChange> SnapshotDevices(const SnapshotComparison& c) {
  using R = SnapshotDeviceChange;
  return {"devices",
          c.devices,
          false,
          {{"device", "device", [](const R& d) { return Text(d.device); }},
           {"base_peak_bytes", "peak base", [](const R& d) { return ByteCount(d.peak_bytes.base); }},
           {"new_peak_bytes", "peak new", [](const R& d) { return ByteCount(d.peak_bytes.next); }},
           {"change_bytes", "change", [](const R& d) { return ChangeBytes(d.peak_bytes); }},
           {"change", "", [](const R& d) { return Relative(d.peak_bytes.relative()); }},
           {"base_reserved_bytes", "reserved base", [](const R& d) { return ByteCount(d.reserved_bytes.base); }},
           {"new_reserved_bytes", "reserved new", [](const R& d) { return ByteCount(d.reserved_bytes.next); }},
           {"base_allocated_bytes", "", [](const R& d) { return ByteCount(d.allocated_bytes.base); }},
           {"new_allocated_bytes", "", [](const R& d) { return ByteCount(d.allocated_bytes.next); }}}};
}

DataTable<SiteChange> SiteChanges(const SnapshotComparison& c) {
  return {"sites",
          c.sites,
          true,
          {{"site", "site", [](const SiteChange& s) { return SiteCell(s.site); }},
           {"base_bytes", "base", [](const SiteChange& s) { return ByteCount(s.bytes.base); }},
           {"new_bytes", "new", [](const SiteChange& s) { return ByteCount(s.bytes.next); }},
           {"change_bytes", "change", [](const SiteChange& s) { return ChangeBytes(s.bytes); }}}};
}

// The change itself: the largest device peak of each, and the site whose live bytes
// at the peak changed most.
std::string SnapshotHeadline(const SnapshotComparison& c) {
  Delta peak;
  for (const SnapshotDeviceChange& d : c.devices) {
    peak.base = std::max(peak.base, d.peak_bytes.base), peak.next = std::max(peak.next, d.peak_bytes.next);
  }
  std::string h =
      "memory peak " + Bytes(peak.base) + " -> " + Bytes(peak.next) + " (" + SignedBytes(peak.change()) + ")";
  if (!c.sites.empty()) h += "; changed most: " + c.sites[0].site + " " + SignedBytes(c.sites[0].bytes.change());
  return h;
}

std::string SnapshotRuns(const SnapshotComparison& c, const std::string& indent) {
  return indent + "base: " + VisibleText(c.base_file) + "\n" + indent + "new:  " + VisibleText(c.next_file) + "\n";
}

}  // namespace

std::string RenderSnapshotCompareText(const SnapshotComparison& c, const ReportOptions& o) {
  std::string out = "torch2pprof compare, CUDA memory snapshots: " + SnapshotHeadline(c) + "\n" +
                    VerdictText(c.rules, false) + SnapshotRuns(c, "  ");
  out +=
      Section("Devices (peak: allocated bytes, as asked for; reserved at the dump)") + WriteText(SnapshotDevices(c), 0);
  out += Section("Live at the peak, by site (largest change first; all devices)");
  out += c.sites.empty() ? "(no change)\n" : WriteText(SiteChanges(c), o.top);
  if (!c.rules.empty()) out += Section("Rules (--fail-on)") + WriteText(Rules(c.rules, "rules"), 0);
  return VisibleLines(out);
}

std::string RenderSnapshotCompareMarkdown(const SnapshotComparison& c, const ReportOptions& o) {
  std::string out = "## torch2pprof compare, CUDA memory snapshots: " + SnapshotHeadline(c) + "\n\n" +
                    VerdictText(c.rules, true) + "\n" + SnapshotRuns(c, "- ");
  out += "\n### Devices\n\n" + WriteMarkdown(SnapshotDevices(c), 0);
  if (!c.sites.empty()) out += "\n### Live at the peak, by site\n\n" + WriteMarkdown(SiteChanges(c), o.top);
  if (!c.rules.empty()) out += "\n### Rules\n\n" + WriteMarkdown(Rules(c.rules, "rules"), 0);
  return VisibleLines(out);
}

std::string RenderSnapshotCompareJson(const SnapshotComparison& c, const ReportOptions& o) {
  Json j;
  j.Open('{');
  j.Field("headline", SnapshotHeadline(c));
  j.Field("base_file", c.base_file);
  j.Field("new_file", c.next_file);
  WriteJson(j, SnapshotDevices(c), 0);
  WriteJson(j, SiteChanges(c), o.rows);
  std::vector<RuleResult> fired;
  for (const RuleResult& r : c.rules) {
    if (r.fired) fired.push_back(r);
  }
  WriteJson(j, Rules(fired, "regressions"), 0);
  WriteJson(j, Rules(c.rules, "rules"), 0);
  j.Close('}');
  return j.out + "\n";
}

namespace {

// Text of several lines (the verdict), a paragraph a line.
std::string Pre(const std::string& text) {
  std::string out = "<div class=\"verdict\">";
  size_t from = 0;
  while (from < text.size()) {
    size_t nl = text.find('\n', from);
    if (nl == std::string::npos) nl = text.size();
    if (nl > from) out += "<p>" + Html(text.substr(from, nl - from)) + "</p>";
    from = nl + 1;
  }
  return out + "</div>\n";
}

std::string Runs(const std::string& base, const std::string& next) { return "base: " + base + "; new: " + next; }

}  // namespace

std::string RenderCompareHtml(const Comparison& c, const ReportOptions& o) {
  std::string out =
      PageStart("torch2pprof compare", "torch2pprof compare: " + Headline(c), Runs(c.base_file, c.next_file));
  out += "<nav><a href=\"#verdict\">Verdict</a>" +
         std::string(c.flame.empty() ? "" : "<a href=\"#profile\">Profile</a>") +
         "<a href=\"#steps\">Steps</a><a href=\"#operators\">Operators</a><a href=\"#kernels\">Kernels</a>" +
         std::string(c.devices.empty() && c.memory.empty() ? "" : "<a href=\"#devices\">GPU and memory</a>") +
         "</nav>\n<main>\n";
  out += Section("verdict", "What changed",
                 "<p class=\"headline\"><b>" + Html(Headline(c)) + "</b></p>\n" + Pre(VerdictText(c.rules, false)) +
                     Note(StepVerdict(c)) +
                     (c.rules.empty() ? "" : HtmlTable("rules-table", Rules(c.rules, "rules"), 0, false)));
  if (!c.flame.empty()) {
    out += Section("profile", "What changed, by the code that caused it",
                   FlameBody(c.flame,
                             "Both runs' profiles per step (what compare -o diffs) as one flame graph: each frame as "
                             "wide as its time in the new run (or the base run's, by the select), red where the new "
                             "run spends more there, blue less, the deeper the larger the share of the change; grey "
                             "under 0.1% of the whole. Hover a frame for both values."));
  }
  out +=
      Section("steps", "Steps (inside the analysed steps, mean per step)",
              HtmlTable("steps-table", StepsSummary(StepLines(c)), 0, false) +
                  Note("~ marks a change within the step-to-step noise, ? too few steps to tell.") +
                  HtmlTable("parts-table", Parts(c), 0, false) +
                  Note("Communication per step: " + FormatDuration(c.communication.base) + " -> " +
                       FormatDuration(c.communication.next) + " (" + SignedDuration(c.communication.change()) + ")"));
  out +=
      Section("operators", "Operators (the whole trace over its steps, by the larger change of host or device total)",
              c.operators.empty() ? Note("(no operators)")
                                  : HtmlTable("operators-table", WithStatus(Operators(c)), o.top, true));
  out += Section(
      "kernels", "Kernels (the whole trace over its steps, by change)",
      c.kernels.empty() ? Note("(no kernels)") : HtmlTable("kernels-table", WithStatus(Kernels(c)), o.top, true));
  if (!c.devices.empty() || !c.memory.empty()) {
    out += Section("devices", "GPU and memory peak",
                   (c.devices.empty() ? "" : HtmlTable("devices-table", Devices(c), 0, false)) +
                       (c.memory.empty() ? "" : HtmlTable("memory-table", Memory(c), 0, false)));
  }
  return out + PageEnd();
}

std::string RenderSnapshotCompareHtml(const SnapshotComparison& c, const ReportOptions& o) {
  std::string out =
      PageStart("torch2pprof compare", "torch2pprof compare, CUDA memory snapshots: " + SnapshotHeadline(c),
                Runs(c.base_file, c.next_file));
  out += "<nav><a href=\"#verdict\">Verdict</a>" +
         std::string(c.flame.empty() ? "" : "<a href=\"#profile\">Profile</a>") +
         "<a href=\"#devices\">Devices</a><a href=\"#sites\">Sites</a></nav>\n<main>\n";
  out += Section("verdict", "What changed",
                 "<p class=\"headline\"><b>" + Html(SnapshotHeadline(c)) + "</b></p>\n" +
                     Pre(VerdictText(c.rules, false)) +
                     (c.rules.empty() ? "" : HtmlTable("rules-table", Rules(c.rules, "rules"), 0, false)));
  if (!c.flame.empty()) {
    out += Section("profile", "What changed, by the code that allocated it",
                   FlameBody(c.flame,
                             "Both snapshots' profiles as one flame graph: each frame as wide as its bytes in the new "
                             "snapshot (or the base's, by the select), red where the new one holds more, blue less; "
                             "grey under 0.1% of the whole. Hover a frame for both values."));
  }
  out += Section("devices", "Devices (peak: allocated bytes, as asked for; reserved at the dump)",
                 HtmlTable("devices-table", SnapshotDevices(c), 0, false));
  out += Section("sites", "Live at the peak, by site (largest change first; all devices)",
                 c.sites.empty() ? Note("(no change)") : HtmlTable("sites-table", SiteChanges(c), o.top, true));
  return out + PageEnd();
}

}  // namespace torch2pprof
