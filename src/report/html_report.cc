// analyze's report as one self-contained HTML page: the same tables as text and JSON
// (analysis_tables.cc), charts in inline SVG, and a few lines of script that sort,
// filter and unfold the tables. Nothing is fetched: it opens from disk, offline.
#include <algorithm>
#include <cctype>
#include <cstdio>

#include "report/analysis_tables.h"
#include "report/flame_graph.h"
#include "report/html_assets.h"  // generated from src/report/html/ (cmake/embed_assets.cmake)
#include "report/html_page.h"
#include "report/ranks_tables.h"
#include "report/snapshot_tables.h"
#include "report/svg_chart.h"
#include "report/timeline.h"
#include "torch2pprof/report.h"

namespace torch2pprof {

using namespace report;

namespace {

// Colors of the step parts, in kStepParts order (as torch-tb-profiler's overview).
const char* const kPartColors[std::size(kStepParts)] = {"#4e79a7", "#f28e2b", "#edc948", "#e15759",
                                                        "#76b7b2", "#b07aa1", "#59a14f", "#bab0ac"};

// The slowest steps as timelines (Analysis::timelines), one at a time: the data as JSON
// for the script, which draws it on a canvas in the legend's colours (timeline.js reads
// them from it).
std::string TimelineBody(const Analysis& a) {
  static const char* const kBoundColors[kBounds] = {"#edc948", "#f28e2b", "#b07aa1", "#4e79a7", "#59a14f", "#ff9da7"};
  static const char* const kCauseColors[] = {"rgba(225,87,89,.30)", "rgba(237,201,72,.40)", "rgba(160,160,160,.28)"};
  std::string options;
  for (size_t i = 0; i < a.timelines.size(); ++i) {
    const StepTimeline& t = a.timelines[i];
    options += "<option value=\"" + std::to_string(i) + "\">" + Html(t.step + ": " + FormatDuration(t.length_ns)) +
               (i == 0 ? " (the slowest)" : "") + "</option>";
  }
  std::string legend = "<span>critical path, bound by:</span>";
  for (int b = 0; b < kBounds; ++b) {
    legend +=
        "<span><i style=\"background:" + std::string(kBoundColors[b]) + "\"></i>" + Html(kBoundWords[b]) + "</span>";
  }
  legend += "<span>a stream idle:</span>";
  for (size_t c = 0; c < std::size(kIdleCauseNames); ++c) {
    legend += "<span><i style=\"background:" + std::string(kCauseColors[c]) + "\"></i>" + Html(kIdleCauseNames[c]) +
              "</span>";
  }
  const size_t shown = a.timelines.size(), steps = a.steps.size();
  return Note((shown < steps ? "The " + Count(shown) + " slowest of " + Count(steps) + " analysed steps"
                             : std::string(shown == 1 ? "The analysed step" : "The analysed steps, slowest first")) +
              ", each on its own clock. A lane per thread and stream, nested calls in rows (click a lane's name for "
              "all its rows); the red line is the critical path, what the step waited on, and the lane above it "
              "says what bound each stretch. Shaded gaps are a stream's idle time, by the idle table's causes. "
              "Scroll to zoom, drag to pan; hover for names. analyze --timeline OUT.json writes every event with "
              "the critical path for Perfetto.") +
         "<div class=\"timeline\"><div class=\"tools\" hidden><label>Step <select>" + options +
         "</select></label><button type=\"button\" data-zoom=\"0.5\">Zoom in</button>"
         "<button type=\"button\" data-zoom=\"2\">Zoom out</button>"
         "<button type=\"button\" data-zoom=\"reset\">Whole step</button><span class=\"scope\"></span></div>"
         "<div class=\"legend\">" +
         legend + "</div><div class=\"view\"><canvas></canvas></div><div class=\"info\"></div>" +
         "<script type=\"application/json\">" + ScriptJson(TimelineJson(a)) + "</script></div>\n";
}

// A bar a step up to this many in the step chart (the table has them all).
constexpr size_t kChartSteps = 1000;

std::string Overview(const Analysis& a) {
  const TraceOverview& t = a.trace;
  std::string cards;
  cards += Card("Span", FormatDuration(t.span_ns));
  if (t.wall_clock_ns) cards += Card("Started", WallClock(t.wall_clock_ns));
  int64_t steps_total = 0;
  for (const StepRow& s : a.steps) steps_total += s.total_ns;
  if (!a.steps.empty()) {
    cards += Card(a.whole_trace_step ? "Steps (none: whole trace)" : "Steps analysed",
                  std::to_string(a.steps.size()) + " of " + std::to_string(t.profiler_steps));
    cards += Card("Mean step time", FormatDuration(steps_total / static_cast<int64_t>(a.steps.size())));
  }
  for (const GpuRow& g : a.gpu) {
    cards += Card("GPU utilization " + g.device, g.window_ns > 0 ? PercentOf(g.utilization()) : "-");
  }
  for (const MemoryRow& m : a.memory) {
    if (m.peak_bytes >= kSmallMemory) cards += Card("Peak memory " + m.device, Bytes(m.peak_bytes));
  }
  cards += Card("Events", Count(t.events));
  size_t cpu = 0, dev = 0;
  for (const LaneInfo& l : t.lanes) (l.device ? dev : cpu)++;
  cards += Card("Lanes", std::to_string(cpu) + " CPU, " + std::to_string(dev) + " device");
  for (const DeviceInfo& d : t.devices) {
    cards += Card("Device " + (d.device.empty() ? std::to_string(d.id) : d.device), d.name);
  }
  if (t.rank >= 0) {
    cards += Card("Rank", std::to_string(t.rank) + (t.world_size > 0 ? " of " + std::to_string(t.world_size) : "") +
                              (t.backend.empty() ? "" : " (" + t.backend + ")"));
  }
  std::string out = "<div class=\"cards\">" + cards + "</div>\n";
  std::string skipped;
  for (const auto& [k, n] : t.skipped) skipped += (skipped.empty() ? "" : ", ") + k + " " + Count(n);
  if (!skipped.empty()) out += Note("Events without time, skipped: " + skipped);
  out += "<details><summary>Lanes (" + std::to_string(t.lanes.size()) + ")</summary><div class=\"tbl\"><table>";
  out += "<thead><tr><th>pid/tid</th><th>thread</th><th>kind</th><th>intervals</th><th>busy</th></tr></thead><tbody>";
  for (const LaneInfo& l : t.lanes) {
    out += "<tr><td>" + Html(l.pid + "/" + l.tid) + "</td><td>" + Html(l.name) + "</td><td>" +
           (l.device ? "device" : "cpu") + "</td><td class=\"num\">" + Count(l.intervals) + "</td><td class=\"num\">" +
           FormatDuration(l.busy_ns) + "</td></tr>";
  }
  return out + "</tbody></table></div></details>\n";
}

std::string StepLabel(const std::string& name, size_t i) {
  size_t hash = name.rfind('#');
  return hash != std::string::npos && hash + 1 < name.size() ? "#" + name.substr(hash + 1) : std::to_string(i);
}

std::string Steps(const Analysis& a, int top) {
  if (a.steps.empty()) return Note("(no steps)");
  std::vector<std::string> labels;
  std::vector<ChartSeries> series;
  std::vector<std::vector<int64_t>> values;
  for (size_t k = 0; k < std::size(kStepParts); ++k) series.push_back({kStepParts[k].key, kPartColors[k]});
  // A bar a step up to kChartSteps: past that the bars are thinner than a pixel and the page
  // grows by a rectangle per part and step (50,000 steps made 33 MB); the table has them all.
  const size_t charted = std::min(a.steps.size(), kChartSteps);
  for (size_t i = 0; i < charted; ++i) {
    labels.push_back(StepLabel(a.steps[i].name, i));
    values.emplace_back();
    for (const StepPart& p : kStepParts) values.back().push_back(a.steps[i].*p.field);
  }
  std::string out = a.whole_trace_step ? Note("No ProfilerStep in the trace: the whole trace is one step.") : "";
  out += StackedBars(labels, series, values);
  if (charted < a.steps.size()) {
    out += Note("The chart shows the first " + report::Count(charted) + " of " + report::Count(a.steps.size()) +
                " steps; the table below, --format json and csv have every step.");
  }
  out += Note(
      "Each step's time split into the parts torch-tb-profiler shows, in the order they claim time "
      "(kernel first); the parts sum to the step's time.");
  out += HtmlTable("steps-table", StepsTable(a), top, true);
  if (!a.critical_path.empty()) {
    // What each step waited on, one line a step, then the table with every category.
    out += Note(
        "What each step waited on: its critical path, walked back from the step's end through launches, "
        "stream order and synchronizations; every nanosecond to one event, in HTA's categories.");
    out += "<ul class=\"bound-by\">";
    const size_t listed = std::min(a.critical_path.size(), kHtmlRows);  // as the tables are
    for (size_t i = 0; i < listed; ++i) {
      const CriticalStep& c = a.critical_path[i];
      const int b = static_cast<int>(c.bound_by());
      std::string line = Html(c.step) + ": bound by <b>" + c.bound_words() + "</b> " +
                         Html(Percent(c.bound_ns[b], c.length_ns)) + " of " + Html(FormatDuration(c.length_ns)) + " (" +
                         kBoundNames[b] + ")";
      if (c.most.ns > 0) {
        const std::string& name = a.critical_names[c.most.name];
        const std::string& where = a.critical_names[c.most.where];
        line += "; most in " + Html(name) + (where.empty() || where == name ? "" : " (" + Html(where) + ")");
      }
      out += "<li>" + line + "</li>";
    }
    out += "</ul>";
    if (listed < a.critical_path.size()) {
      out += Note("The first " + report::Count(listed) + " of " + report::Count(a.critical_path.size()) +
                  " steps; --format json and csv have every step.");
    }
    out += HtmlTable("critical-table", CriticalPathTable(a), top, true);
  }
  return out;
}

std::string Gpu(const Analysis& a, int top) {
  if (a.gpu.empty()) return Note("(no device activity)");
  std::vector<ShareBar> bars;
  for (const GpuRow& g : a.gpu) {
    bars.push_back({g.device, g.window_kernel_ns, g.window_ns,
                    "kernels " + FormatDuration(g.window_kernel_ns) + " of " + FormatDuration(g.window_ns)});
  }
  return Note(
             "Utilization: the share of the steps' window (first step start to last step end) in which the device "
             "ran at least one kernel.") +
         ShareBars(bars) + HtmlTable("gpu-table", GpusTable(a), top, false);
}

// Each stream's idle time between its work, by cause, beside the step breakdown.
std::string Idle(const Analysis& a, int top) {
  if (a.idle_time.empty()) return Note("(no device work)");
  std::vector<std::string> labels;
  const std::vector<ChartSeries> series = {{"host wait", "#e15759"}, {"kernel wait", "#edc948"}, {"other", "#bab0ac"}};
  std::vector<std::vector<int64_t>> values;
  for (const IdleRow& r : a.idle_time) {
    labels.push_back(r.device + " " + StreamName(r.stream));
    values.push_back({r.host_wait_ns, r.kernel_wait_ns, r.other_ns});
  }
  std::string out = Note(
      "Time a stream sat idle between its work, as HTA's idle time breakdown splits it: host wait when the next "
      "work's launch call began after the stream went idle (the CPU was late), kernel wait for gaps under " +
      std::to_string(kConsecutiveKernelDelayNs / 1000) +
      " us "
      "(back-to-back launch overhead), other for the rest.");
  out += StackedBars(labels, series, values) + HtmlTable("idle-table", IdleTimeTable(a), top, false);
  if (a.kernel_launches.count > 0) {
    const std::vector<LaunchRow> rows = LaunchRows(a.kernel_launches);
    out += "<h3>Kernel launches</h3>\n" +
           Note(
               "Each launch call (cudaLaunchKernel and the like) to its device work: the call's time, the work's, "
               "and the delay from the call's end to the work's start (HTA's launch statistics).") +
           HtmlTable("launches-table", LaunchesTable(rows), 0, false);
    out += "<h3>Launch queue per stream</h3>\n" +
           Note("Work launched and not yet started on each stream (HTA's queue length), over the changes.") +
           HtmlTable("queue-table", QueueLengthTable(a), top, false);
  }
  return out;
}

// Allocated bytes by site over time (SiteSeries, parallel to `spans`), stacked, at most
// kColumns wide: a column is the span of its stretch with the highest total, as the
// timelines keep the highest level. A click on a site (or its legend) shows its stack,
// where it has one.
std::string SitesOverTime(const std::vector<SiteSeries>& series, const std::vector<AreaPoint>& all, int64_t origin_ns,
                          int64_t peak_ns, int64_t peak, const std::string& note) {
  static const char* const kColors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
                                        "#b07aa1", "#ff9da7", "#9c755f", "#86bcb6", "#d37295", "#a0cbe8"};
  constexpr size_t kColumns = 600;
  const size_t n = all.size();
  if (series.empty() || n == 0) return "";
  std::vector<size_t> pick;  // the span each column shows
  std::vector<AreaPoint> spans;
  for (size_t i = 0; i < n; ++i) {
    const size_t column = i * kColumns / n;
    if (pick.size() <= column) {
      pick.push_back(i);
      spans.push_back({all[i].start_ns, all[i].end_ns, 0});
    } else {
      if (all[i].value > all[pick.back()].value) pick.back() = i;
      spans.back().end_ns = all[i].end_ns;
    }
  }
  // What was allocated before the window or the trace (weights, optimizer state) at the
  // bottom, as it lies under everything the window allocates.
  std::vector<const SiteSeries*> order;
  for (int base = 1; base >= 0; --base) {
    for (const SiteSeries& s : series) {
      if ((s.site == kBeforeWindow || s.site == kBeforeTrace) == (base == 1)) order.push_back(&s);
    }
  }
  std::vector<StackSeries> stacked;
  std::string legend, json = "[";
  for (size_t j = 0; j < order.size(); ++j) {
    const SiteSeries& s = *order[j];
    const bool other = s.site == kOtherSites, before = s.site == kBeforeWindow || s.site == kBeforeTrace;
    const std::string color = other ? "#c9ccd3" : before ? "#e3e3e8" : kColors[j % std::size(kColors)];
    StackSeries x;
    x.color = color;
    x.title = s.site + ": " + Bytes(s.peak_bytes) + " at the peak";
    for (const size_t i : pick) x.values.push_back(s.bytes[i]);
    stacked.push_back(std::move(x));
    legend += "<button type=\"button\" data-i=\"" + std::to_string(j) + "\"><i style=\"background:" + color +
              "\"></i>" + Html(FrameLabel(s.site)) + " <span>" + Html(Bytes(s.peak_bytes)) + "</span></button>";
    Json site;
    site.String(s.site);
    json += (j ? ",{" : "{") + std::string("\"site\":") + site.out + ",\"peak\":" + std::to_string(s.peak_bytes) +
            ",\"stack\":[";
    for (size_t k = 0; k < s.stack.size(); ++k) {
      Json frame;
      frame.String(FrameLabel(s.stack[k]));  // as the tables write names
      json += (k ? "," : "") + frame.out;
    }
    json += "]}";
  }
  json += "]";
  return "<div class=\"sites\">" + Note(note) + StackedBytesOverTime(spans, stacked, origin_ns, peak_ns, peak) +
         "<div class=\"legend\">" + legend + "</div><pre class=\"stack\"></pre><script type=\"application/json\">" +
         ScriptJson(json) + "</script></div>\n";
}

// A snapshot device's, over the ring's window.
std::string SitesOverTime(const SnapshotDevice& d) {
  std::vector<AreaPoint> all;
  for (size_t i = 0; i < d.timeline.size(); ++i) {
    const int64_t start = d.timeline[i].time_us * 1000;
    const int64_t end = i + 1 < d.timeline.size() ? d.timeline[i + 1].time_us * 1000 : start + 1000;
    all.push_back({start, std::max(end, start + 1), d.timeline[i].allocated_bytes});
  }
  if (all.empty()) return "";
  return SitesOverTime(d.site_timeline, all, all.front().start_ns, d.peak_time_us * 1000, d.peak_bytes,
                       "Allocated bytes by the code that allocated them (the peak table's sites; the " +
                           std::to_string(kSiteSeries) +
                           " holding most at the peak, then the others together, then what was allocated before the "
                           "window), stacked over the window as torch's _memory_viz Active Memory Timeline stacks "
                           "them. Click a band or a name for the stack of its largest allocation.");
}

std::string Memory(const Analysis& a, int top) {
  if (a.memory.empty()) return Note("(no [memory] events: profile with profile_memory=True)");
  std::vector<int64_t> marks;
  for (const StepRow& s : a.steps) marks.push_back(s.start_ns);
  std::string out = Note("Allocated bytes over time, from the trace start; dashed lines are step starts.") +
                    HtmlTable("memory-table", MemoryTable(a, top), top, false);
  for (const MemoryRow& m : a.memory) {
    out += "<h3>" + Html(m.device) + ": peak " + Html(Bytes(m.peak_bytes)) + " at +" +
           Html(FormatDuration(m.peak_ns - a.trace.start_ns)) +
           (m.from_totals ? " (Total Allocated)" : " (running sum of Bytes)") + "</h3>\n";
    if (m.peak_bytes < kSmallMemory) continue;  // a few scalars: the heading says it all
    std::vector<AreaPoint> points;
    for (const MemoryBucket& b : m.timeline) points.push_back({b.start_ns, b.end_ns, b.max_bytes});
    out += BytesOverTime(points, a.trace.start_ns, m.peak_ns, m.peak_bytes, marks);
    out +=
        SitesOverTime(m.site_timeline, points, a.trace.start_ns, m.peak_ns, m.peak_bytes,
                      "The same by the operator that allocated (the table below; the " + std::to_string(kSiteSeries) +
                          " holding most at the peak, then the others together, then what was allocated before "
                          "the trace), stacked. Click a band or a name to mark it.");
    if (m.before_trace_bytes > 0) {
      out += Note(Bytes(m.before_trace_bytes) +
                  " of the peak was allocated before the trace began (weights, optimizer state): no operator in the "
                  "trace holds it.");
    }
    if (!m.top_operators.empty()) {
      out +=
          "<div class=\"tbl\"><table><thead><tr><th>operator</th><th>live at peak</th><th>allocations</th>"
          "<th>allocated in the trace</th></tr></thead><tbody>";
      for (size_t i = 0; i < std::min<size_t>(m.top_operators.size(), 10); ++i) {
        const MemoryOperator& op = m.top_operators[i];
        out += "<tr><td class=\"name\" title=\"" + Html(op.name) + "\">" + Html(op.name) +
               "</td><td class=\"num\" data-v=\"" + std::to_string(op.live_bytes) + "\">" + Bytes(op.live_bytes) +
               "</td><td class=\"num\" data-v=\"" + std::to_string(op.allocations) + "\">" + Count(op.allocations) +
               "</td><td class=\"num\" data-v=\"" + std::to_string(op.bytes) + "\">" + Bytes(op.bytes) + "</td></tr>";
      }
      out += "</tbody></table></div>\n";
    }
  }
  return out;
}

std::string Advice(const Analysis& a) {
  if (a.recommendations.empty()) return Note("(none: nothing crossed a threshold)");
  std::string out = Note(
                        "The largest saving a step first: each is what the step would lose without its cause, "
                        "replayed on the steps' dependency graph.") +
                    "<ul class=\"advice\">";
  for (const Recommendation& r : a.recommendations) {
    out += "<li data-id=\"" + Html(std::string(r.id())) + "\" data-saving-us=\"" + FormatMicros(r.saving_ns) +
           "\" data-what-if=\"" + Html(r.what_if) + "\">" +
           (r.saving_ns > 0 ? "<b>saves " + Html(FormatDuration(r.saving_ns)) + " a step:</b> " : std::string()) +
           Html(RecommendationText(a, r)) + "</li>";
  }
  out += "</ul>\n";
  const std::string total = WhatIfTotalText(a);
  return total.empty() ? out : out + Note(Html(total) + ".");
}

// Copies and sets by kind, Tensor Core use, device work by launching operator, and the
// host's waits for the device.
std::string Copies(const Analysis& a, int top) {
  std::string out;
  if (!a.copies.empty()) {
    std::vector<std::string> labels;
    std::vector<std::vector<int64_t>> values;
    for (const CopyRow& r : a.copies) {
      labels.push_back(r.device + " " + r.kind + " (" + (r.gb_per_s() < 0 ? "-" : Printf("%.1f", r.gb_per_s())) +
                       " GB/s)");
      values.push_back({r.time_ns});
    }
    out += Note(
               "Time per kind of copy and set, with its bandwidth over the copies that record bytes (HTA's memory "
               "bandwidth, by the memory kinds Kineto names: pageable host memory is the slow one).") +
           StackedBars(labels, {{"time", "#4e79a7"}}, values) + HtmlTable("copies-table", CopiesTable(a), top, true);
  }
  if (a.tensor_cores.kernel_ns > 0) {
    out += "<h3>Tensor Cores</h3>\n" +
           Note(PercentOf(a.tensor_cores.kernel_time_share()) + " of kernel time ran in Tensor Core kernels.") +
           HtmlTable("tensor-cores-table", TensorCoreOpsTable(a), top, true);
    out += "<h3>Kernels by launching operator</h3>\n" +
           HtmlTable("kernels-by-operator-table", KernelsByOperatorTable(a), top, true);
  }
  if (!a.collective_sizes.empty()) {
    out += "<h3>Collectives by message</h3>\n" +
           Note(
               "NCCL kernels by the message they record; algorithm bandwidth is message bytes over time, bus "
               "bandwidth scales it by the bytes each rank moves (nccl-tests' definitions).") +
           HtmlTable("collective-sizes-table", CollectiveSizesTable(a), top, true);
  }
  if (!a.annotations.empty()) {
    out += "<h3>Annotations (record_function)</h3>\n" +
           Note(
               "Host: the annotation's spans; device: the work launched inside them; backward: the autograd work "
               "of the operators run inside them, which runs after the span on autograd's thread.") +
           HtmlTable("annotations-table", AnnotationsTable(a), top, true);
  }
  if (!a.synchronizations.empty()) {
    out += "<h3>Host waits for the device</h3>\n" +
           HtmlTable("synchronizations-table", SynchronizationsTable(a), top, true);
  }
  return out.empty() ? Note("(no device work)") : out;
}

}  // namespace

namespace report {

std::string PageStart(const std::string& title, const std::string& heading, const std::string& subtitle) {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
         "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
         "script-src 'unsafe-inline'; img-src data:\">"
         "<title>" +
         Html(title) + "</title><style>" + kHtmlStyle + "</style></head>\n<body>\n<header><h1>" + Html(heading) +
         "</h1><div class=\"file\">" + Html(subtitle) + "</div></header>\n";
}

std::string PageEnd() { return "</main>\n<script>" + std::string(kHtmlScript) + "</script>\n</body></html>\n"; }

}  // namespace report

std::string RenderHtml(const Analysis& a, const ReportOptions& o) {
  std::string file = a.trace.file;
  size_t slash = file.find_last_of('/');
  std::string base = slash == std::string::npos ? file : file.substr(slash + 1);
  std::string out = PageStart("torch2pprof: " + base, "torch2pprof analyze", file);
  // The views drawn alike: a section each, after the GPU's, where they have rows.
  std::string drawn_links, drawn;
  for (const DrawnView& v : DrawnViews()) {
    if (v.count(a) == 0) continue;
    std::string id = v.name;
    std::replace(id.begin(), id.end(), '_', '-');
    // The bar stays one line: a link is the title's words before its parenthesis.
    const std::string title = v.title;
    drawn_links += "<a href=\"#" + id + "\">" + Html(title.substr(0, title.find(" ("))) + "</a>";
    std::string note = v.note;  // a sentence on the page, in parentheses in the text
    if (!note.empty()) note[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(note[0])));
    drawn += Section(id, v.title, Note(note + ".") + v.html(a, id + "-table", o.top));
  }
  out += "<nav><a href=\"#advice\">Recommendations</a>" +
         std::string(a.flame.empty() ? "" : "<a href=\"#profile\">Profile</a>") +
         std::string(a.timelines.empty() ? "" : "<a href=\"#timeline\">Timeline</a>") +
         "<a href=\"#overview\">Overview</a><a href=\"#steps\">Steps</a>"
         "<a href=\"#idle\">Idle</a><a href=\"#copies\">Copies</a><a href=\"#operators\">Operators</a>"
         "<a href=\"#kernels\">Kernels</a><a href=\"#gpu\">GPU</a>" +
         drawn_links + "<a href=\"#memory\">Memory</a>" +
         std::string(a.modules.empty() && a.python_functions.empty() ? "" : "<a href=\"#modules\">Modules</a>") +
         "<a href=\"#categories\">Categories</a></nav>\n<main>\n";
  out += Section("advice", "Recommendations", Advice(a));
  if (!a.flame.empty()) {
    out += Section("profile", "Profile: where the time goes, by the code that caused it",
                   FlameBody(a.flame,
                             "convert's call tree (the backward pass under the forward operator that created it), "
                             "summed over threads and steps."));
  }
  if (!a.timelines.empty()) {
    out += Section("timeline", "Timeline: inside the slowest steps", TimelineBody(a));
  }
  out += Section("overview", "Overview", Overview(a));
  out += Section("steps", a.whole_trace_step ? "Step breakdown (whole trace)" : "Step breakdown", Steps(a, o.top));
  // Why the steps take what they take, beside them: idle time by cause, then copies.
  out += Section("idle", "GPU idle time and launches", Idle(a, o.top));
  out += Section("copies", "Copies, Tensor Cores and device work by operator", Copies(a, o.top));
  out += Section("operators", "Operators",
                 Note("By host total; host self leaves out child operators and their own launches. Click a heading "
                      "to sort.") +
                     (a.operators.empty() ? Note("(no operators)")
                                          : HtmlTable("operators-table", OperatorsTable(a), o.top, true)));
  out += Section("kernels", "Kernels",
                 a.kernels.empty() ? Note("(no kernels)") : HtmlTable("kernels-table", KernelsTable(a), o.top, true));
  out += Section("gpu", "GPU", Gpu(a, o.top));
  out += drawn;
  out += Section("memory", "Memory", Memory(a, o.top));
  if (!a.modules.empty() || !a.python_functions.empty()) {
    std::string body = Note(
        "Each module instance under the instance that called it, with the backward moved under the forward op "
        "that created it; self leaves out child modules, host time leaves out waits. Sort by a column to rank.");
    if (!a.modules.empty()) {
      body += HtmlTable("modules-table", ModulesTable(a), o.top, true);
      body += "<h3>Module classes</h3>\n" + HtmlTable("module-classes-table", ModuleClassesTable(a), o.top, true);
    }
    if (!a.python_functions.empty()) {
      body += "<h3>Python functions</h3>\n" + HtmlTable("python-functions-table", PythonFunctionsTable(a), o.top, true);
    }
    out += Section("modules", "Modules", body);
  }
  out += Section("categories", "Categories", HtmlTable("categories-table", CategoriesTable(a), o.top, true));
  return out + PageEnd();
}

std::string RenderRanksHtml(const RanksAnalysis& a, const ReportOptions& o) {
  const size_t n = a.ranks.size();
  std::string title = std::to_string(n) + " ranks";
  if (n > 0 && a.ranks[0].world_size > 0) title += " (world size " + std::to_string(a.ranks[0].world_size) + ")";
  std::string out = PageStart("torch2pprof: " + title, "torch2pprof analyze: " + title,
                              n ? a.ranks.front().file + (n > 1 ? " … " + a.ranks.back().file : "") : "");
  out += "<nav><a href=\"#advice\">Recommendations</a><a href=\"#straggler\">Straggler</a>" +
         std::string(a.flame.empty() ? "" : "<a href=\"#profile\">Profile</a>") +
         "<a href=\"#ranks\">Ranks</a>"
         "<a href=\"#slow\">Slow ranks</a>"
         "<a href=\"#collectives\">Collectives</a><a href=\"#alignment\">Step alignment</a></nav>\n<main>\n";
  const std::string pct = std::to_string(static_cast<int>(100 * a.threshold + 0.5)) + "%";
  std::string late;
  // Each straggler's line links to its frame in the profile below (the script zooms there).
  auto profile_link = [&](size_t i) {
    if (a.flame.empty() || a.ranks[i].flame.empty()) return std::string();
    const int64_t rank = a.ranks[i].rank >= 0 ? a.ranks[i].rank : static_cast<int64_t>(i);
    return " <a href=\"#profile\" class=\"flame-root\" data-frame=\"rank " + std::to_string(rank) +
           "\">its profile</a>";
  };
  for (const Straggler& l : a.stragglers) {
    late += "<p class=\"late\">" + Html(LateSentence(a, l, "; ")) + profile_link(l.rank) + "</p>\n";
  }
  if (a.stragglers.empty()) late = Note(NoLateRank(a));
  if (n <= kManyRanks) {
    // Each rank's mean step, part by part: the late rank's own part stands out, and the
    // others' communication holds their wait for it.
    std::vector<std::string> labels;
    std::vector<ChartSeries> series;
    std::vector<std::vector<int64_t>> values;
    for (size_t k = 0; k < std::size(kStepParts); ++k) series.push_back({kStepParts[k].key, kPartColors[k]});
    for (size_t i = 0; i < n; ++i) {
      labels.push_back("rank " + RankName(a, i));
      values.emplace_back();
      for (const StepPart& p : kStepParts) values.back().push_back(a.ranks[i].mean_step.*p.field);
    }
    late += "<h3>Mean step per rank</h3>\n" + StackedBars(labels, series, values);
    std::vector<ShareBar> bars;
    for (size_t i = 0; i < n && i < a.waits.size(); ++i) {
      bars.push_back({"rank " + RankName(a, i), a.waits[i].wait_ns, a.ranks[i].step_median_ns,
                      "waits " + FormatDuration(a.waits[i].wait_ns) + " of a " +
                          FormatDuration(a.ranks[i].step_median_ns) + " step"});
    }
    late += "<h3>Wait in collectives per step, of the median step</h3>\n" + ShareBars(bars);
  } else {
    late += Note("Past " + std::to_string(kManyRanks) +
                 " ranks the page draws no bar per rank: the tables below list them all, and sort.");
  }
  std::string advice = a.recommendations.empty()
                           ? Note("(none: nothing crossed a threshold)")
                           : Note("Per step, largest possible saving first.") + "<ul class=\"advice\">";
  for (const RankRecommendation& r : a.recommendations) {
    advice += "<li data-id=\"" + Html(std::string(r.id())) + "\" data-saving-us=\"" + FormatMicros(r.saving_ns) +
              "\">" +
              (r.saving_ns > 0 ? "<b>up to " + Html(FormatDuration(r.saving_ns)) + " a step:</b> " : std::string()) +
              Html(RankRecommendationText(a, r)) + "</li>";
  }
  if (!a.recommendations.empty()) advice += "</ul>\n";
  out += Section("advice", "Recommendations", advice);
  out += Section("straggler", "Straggler (the rank the others wait for in collectives)",
                 late + (a.stragglers.empty() ? "" : HtmlTable("late-table", StragglersTable(a), o.top, false)));
  if (!a.flame.empty()) {
    size_t with = 0;
    for (const RankSummary& r : a.ranks) with += !r.flame.empty();
    size_t drawn = 0;
    for (size_t i = 1; i < a.flame.parent.size(); ++i) drawn += a.flame.parent[i] == 0;
    std::string note =
        "Each rank's profile (device time, host work) under a frame of its own: click a rank to compare its code "
        "with the others', search to find a layer in all of them.";
    if (drawn < with) {
      note += " The " + std::to_string(drawn) + " drawn of " + std::to_string(with) +
              " ranks: the stragglers and slow ranks first, then by rank.";
    }
    if (with < a.ranks.size()) {
      note += " " + std::to_string(a.ranks.size() - with) + " ranks have no profile (summaries written without one).";
    }
    out += Section("profile", "Profile: each rank's time by the code that caused it", FlameBody(a.flame, note));
  }
  std::string ranks = Note(
      "Per step: steps, their median and maximum, each part's mean, wait and transfer in collectives. Over the whole "
      "trace, as HTA defines them: GPU utilization, compute, idle, overlap. Click a heading to sort.");
  ranks += Note(WaitNote(a));
  ranks += HtmlTable("ranks-table", RanksTable(a), o.top, true);
  if (n > kManyRanks) ranks += "<h3>Over the ranks</h3>\n" + HtmlTable("spreads-table", SpreadTable(a), 0, false);
  out += Section("ranks", "Ranks", ranks);
  out += Section("slow", "Slow ranks (median step or compute time more than " + pct + " above the median of ranks)",
                 a.slow_ranks.empty() ? Note(NoSlowRank(a)) : HtmlTable("slow-table", SlowRanksTable(a), o.top, true));
  out += Section("collectives", "Collectives (time per rank; the rank with least time usually arrived last)",
                 a.collectives.empty() ? Note("(no nccl:/gloo: collectives or communication kernels)")
                                       : HtmlTable("collectives-table", CollectivesTable(a), o.top, true) +
                                             (CollectivesNote(a).empty() ? "" : Note(CollectivesNote(a))));
  out += Section(
      "alignment", "Step alignment (step N on every rank)",
      (AlignmentNote(a).empty() ? "" : Note(AlignmentNote(a))) +
          (a.steps.empty() ? Note("(no steps)") : HtmlTable("alignment-table", AlignmentTable(a), o.top, true)));
  return out + PageEnd();
}

std::string RenderSnapshotHtml(const SnapshotAnalysis& a, const ReportOptions& o) {
  const size_t slash = a.file.find_last_of('/');
  const std::string base = slash == std::string::npos ? a.file : a.file.substr(slash + 1);
  std::string out = PageStart("torch2pprof: " + base, "torch2pprof analyze: CUDA memory snapshot", a.file);
  out += "<nav><a href=\"#devices\">Devices</a>" +
         std::string(a.flame.empty() ? "" : "<a href=\"#profile\">Profile</a>") +
         "<a href=\"#timeline\">Timeline</a><a href=\"#peak\">Peak</a>"
         "<a href=\"#oom\">Out of memory</a></nav>\n<main>\n";
  std::string devices =
      Note(
          "At the dump. Free space as torch's _memory_viz segment summary splits it: rounding to the block size is "
          "internal, cached free blocks external; blocks whose free waits for their stream are pending.") +
      HtmlTable("devices-table", DevicesTable(a), 0, false);
  if (a.overflowed) devices += Note("The ring of allocator actions overflowed: the window starts at its oldest entry.");
  out += Section("devices", "Devices", devices);
  if (!a.flame.empty()) {
    out += Section("profile", "Profile: memory by the stack that allocated it",
                   FlameBody(a.flame, "convert's profile of the snapshot, summed over devices."));
  }
  std::string timeline = Note(
      "Allocated (bytes asked for) over the recorded window, from its first entry; the dot "
      "is the peak. Reserved below it.");
  for (const SnapshotDevice& d : a.devices) {
    timeline += "<h3>" + Html(PeakSentence(d)) + "</h3>\n";
    if (d.timeline.empty()) continue;
    timeline += SitesOverTime(d);
    std::vector<AreaPoint> allocated, reserved;
    int64_t most_reserved = 0, most_reserved_at = 0;
    for (size_t i = 0; i < d.timeline.size(); ++i) {
      const SnapshotLevel& l = d.timeline[i];
      const int64_t start = l.time_us * 1000;
      const int64_t end = i + 1 < d.timeline.size() ? d.timeline[i + 1].time_us * 1000 : start + 1000;
      allocated.push_back({start, std::max(end, start + 1), l.allocated_bytes});
      reserved.push_back({start, std::max(end, start + 1), l.reserved_bytes});
      if (l.reserved_bytes > most_reserved) most_reserved = l.reserved_bytes, most_reserved_at = start;
    }
    const int64_t origin = d.timeline.front().time_us * 1000;
    timeline += BytesOverTime(allocated, origin, d.peak_time_us * 1000, d.peak_bytes, {});
    timeline += "<h3>" + Html(d.device + ": reserved") + "</h3>\n" +
                BytesOverTime(reserved, origin, most_reserved_at, most_reserved, {});
  }
  out += Section("timeline", "Timeline", timeline);
  const std::vector<SiteRow> peak = PeakSiteRows(a);
  out +=
      Section("peak", "Live at the peak",
              Note("By the code that allocated it: the innermost Python line of the allocation stack, else the "
                   "backward node or the operator. go tool pprof on the profile convert writes has the whole stacks.") +
                  (peak.empty() ? Note("(nothing allocated)")
                                : HtmlTable("peak-table", SitesTable("peak_sites", peak, false), o.top, true)));
  const std::vector<OomRow> ooms = OomRows(a);
  const std::vector<SiteRow> oom_sites = OomSiteRows(a);
  out +=
      Section("oom", "Out of memory",
              ooms.empty() ? Note("(no oom entry in the ring)")
                           : HtmlTable("oom-table", OomsTable(ooms), 0, false) + "<h3>Live at each</h3>\n" +
                                 HtmlTable("oom-sites-table", SitesTable("oom_sites", oom_sites, true), o.top, true));
  return out + PageEnd();
}

}  // namespace torch2pprof
