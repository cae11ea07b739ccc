// Rendering: exact microseconds, JSON that nlohmann parses, text within 120 columns.
#include "torch2pprof/report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "analysis/analyzer.h"
#include "report/svg_chart.h"
#include "report/table.h"
#include "test_util.h"
#include "torch2pprof/error.h"
#include "torch2pprof/stages/trace_loader.h"
#include "torch2pprof/torch2pprof.h"

namespace torch2pprof {
namespace {

Analysis Sample() {
  testing::TempDir dir;
  std::string path = std::string(TESTDATA_DIR) + "/real/kineto__resnet50_num_workers_4__worker0.pt.trace.json.gz";
  Trace trace = LoadTrace(LoadOptions{path, 1, true});
  return Analyze(trace, BuildModel(trace));
}

const Analysis& Shared() {
  static const Analysis a = Sample();
  return a;
}

TEST(Report, MicrosecondsAreExactDecimalText) {
  EXPECT_EQ(FormatMicros(1712195495519695800), "1712195495519695.8");
  EXPECT_EQ(FormatMicros(12345), "12.345");
  EXPECT_EQ(FormatMicros(12000), "12");
  EXPECT_EQ(FormatMicros(1), "0.001");
  EXPECT_EQ(FormatMicros(0), "0");
  EXPECT_EQ(FormatMicros(-1500), "-1.5");
}

TEST(Report, DurationsForPeople) {
  EXPECT_EQ(FormatDuration(850), "850ns");
  EXPECT_EQ(FormatDuration(12345), "12.3us");
  EXPECT_EQ(FormatDuration(4560000), "4.56ms");
  EXPECT_EQ(FormatDuration(1234567890), "1.235s");
}

TEST(Report, JsonParsesAndHasTheDocumentedKeys) {
  const Analysis& a = Shared();
  nlohmann::json j = nlohmann::json::parse(RenderJson(a, ReportOptions{0, 0, ""}));
  for (const char* key : {"trace", "categories", "steps", "operators", "kernels", "gpu", "memory", "recommendations"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  ASSERT_EQ(j["steps"].size(), a.steps.size());
  for (const char* key : {"name", "start_us", "total_us", "kernel_us", "memcpy_us", "memset_us", "communication_us",
                          "runtime_us", "dataloader_us", "cpu_exec_us", "other_us"}) {
    EXPECT_TRUE(j["steps"][0].contains(key)) << key;
  }
  ASSERT_EQ(j["operators"].size(), a.operators.size());  // -top 0: all rows
  EXPECT_EQ(j["operators"][0]["name"], a.operators[0].name);
  EXPECT_EQ(j["operators"][0]["host_total_us"].get<double>() * 1000, static_cast<double>(a.operators[0].host_total_ns));
  for (const char* key : {"name", "calls", "host_total_us", "host_self_us", "device_total_us", "device_self_us"}) {
    EXPECT_TRUE(j["operators"][0].contains(key)) << key;
  }
  for (const char* key : {"name", "calls", "total_us", "mean_us", "min_us", "max_us"}) {
    EXPECT_TRUE(j["kernels"][0].contains(key)) << key;
  }
  nlohmann::json top = nlohmann::json::parse(RenderJson(a, ReportOptions{20, 5, ""}));
  EXPECT_EQ(top["operators"].size(), 5u);
}

TEST(Report, TextFitsInOneHundredTwentyColumnsAndAgreesWithJson) {
  const Analysis& a = Shared();
  std::string text = RenderText(a, ReportOptions{0, 0, ""});
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    size_t cols = 0;
    for (unsigned char c : line) cols += (c & 0xC0) != 0x80;
    EXPECT_LE(cols, 120u) << line;
  }
  // The first operator and its host total appear as the text shows them.
  EXPECT_NE(text.find(a.operators[0].name), std::string::npos);
  EXPECT_NE(text.find(FormatDuration(a.operators[0].host_total_ns)), std::string::npos);
  for (const StepRow& s : a.steps) EXPECT_NE(text.find(s.name), std::string::npos);
}

// Every finding has its own sentence, never its bare id, and its id is the JSON's.
TEST(Report, EveryFindingHasASentenceOfItsOwn) {
  Analysis a;
  std::set<std::string> sentences;
  for (size_t i = 0; i < static_cast<size_t>(Finding::kCount); ++i) {
    Recommendation r;
    r.finding = static_cast<Finding>(i);
    r.cause_ns = 1000;
    const std::string text = RecommendationText(a, r);
    EXPECT_GT(text.size(), 40u) << r.id();
    EXPECT_NE(text, std::string(r.id()));
    EXPECT_TRUE(sentences.insert(text).second) << text;
    EXPECT_EQ(FindingOf(r.id()), r.finding);
  }
  EXPECT_EQ(FindingOf("no_such_finding"), Finding::kCount);
}

TEST(Report, LongAdviceAndPathsStayWithinTheWidth) {
  Analysis a;
  a.trace.file = "/very/long/" + std::string(200, 'd') + "/trace.json.gz";
  std::string title = RenderText(a, ReportOptions{}).substr(0, RenderText(a, ReportOptions{}).find('\n'));
  EXPECT_EQ(title.substr(title.size() - 20), "dddddd/trace.json.gz");
  size_t cols = 0;
  for (unsigned char c : title) cols += (c & 0xC0) != 0x80;
  EXPECT_EQ(cols, 120u);
  std::string words;
  for (int i = 0; i < 60; ++i) words += "word" + std::to_string(i) + " ";
  Recommendation long_names;  // a finding whose evidence names a long run of words
  long_names.finding = Finding::kHostBound;
  long_names.cause_ns = 1000;
  long_names.names = {{words + "end", 1000}};
  a.recommendations.push_back(long_names);
  std::string text = RenderText(a, ReportOptions{});
  std::istringstream lines(text.substr(text.find("Recommendations")));
  std::string line, joined;
  while (std::getline(lines, line) && !line.empty()) {  // the section, up to the blank line after it
    EXPECT_LE(line.size(), 120u) << line;
    EXPECT_NE(line.back(), ' ') << line;
    if (line.rfind("- ", 0) == 0 || line.rfind("  ", 0) == 0) joined += line.substr(2) + " ";
  }
  EXPECT_EQ(joined, RecommendationText(a, long_names) + " ");
  EXPECT_NE(joined.find(words + "end (1.00us)"), std::string::npos) << joined;
}

TEST(Report, CsvTablesAndQuoting) {
  Analysis a;
  a.kernels.push_back(KernelRow{"void k<float, 2>(int, \"x\")", 2, 3500, 1000, 2500, -1, -1, {}});
  std::string csv = RenderCsv(a, ReportOptions{0, 0, "kernels"});
  EXPECT_EQ(csv,
            "name,calls,total_us,mean_us,min_us,max_us,blocks_per_sm,occupancy\n"
            "\"void k<float, 2>(int, \"\"x\"\")\",2,3.5,1.75,1,2.5,,\n");
  EXPECT_THROW(RenderCsv(a, ReportOptions{0, 0, "bogus"}), Error);
  for (const std::string& t : CsvTables()) EXPECT_NO_THROW(RenderCsv(Shared(), ReportOptions{3, 3, t})) << t;
}

// The HTML report's table rows: each <tr> of the table with this id, as its cells' data-v
// (exact numbers) or text, and whether the row starts hidden.
struct HtmlRow {
  bool hidden = false;
  std::vector<std::string> cells;
};
std::vector<HtmlRow> HtmlRows(const std::string& html, const std::string& id) {
  size_t at = html.find("<table id=\"" + id + "\"");
  size_t body = html.find("<tbody>", at), end = html.find("</tbody>", body);
  std::vector<HtmlRow> rows;
  for (size_t tr = html.find("<tr", body); tr < end; tr = html.find("<tr", tr + 1)) {
    HtmlRow row;
    size_t close = html.find("</tr>", tr);
    row.hidden = html.compare(tr, 10, "<tr hidden") == 0;
    for (size_t td = html.find("<td", tr); td < close; td = html.find("<td", td + 1)) {
      size_t gt = html.find('>', td), v = html.find("data-v=\"", td);
      if (v < gt) {
        row.cells.push_back(html.substr(v + 8, html.find('"', v + 8) - v - 8));
      } else {
        row.cells.push_back(html.substr(gt + 1, html.find("</td>", gt) - gt - 1));
      }
    }
    rows.push_back(row);
  }
  return rows;
}

TEST(Report, HtmlTablesCarryTheExactNumbersAndHideRowsPastTop) {
  const Analysis& a = Shared();
  std::string html = RenderHtml(a, ReportOptions{5, 0, ""});
  std::vector<HtmlRow> steps = HtmlRows(html, "steps-table");
  ASSERT_EQ(steps.size(), a.steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    const StepRow& s = a.steps[i];
    // step, total, then the parts in kStepParts order
    std::vector<std::string> want = {s.name,
                                     FormatMicros(s.total_ns),
                                     FormatMicros(s.kernel_ns),
                                     FormatMicros(s.memcpy_ns),
                                     FormatMicros(s.memset_ns),
                                     FormatMicros(s.communication_ns),
                                     FormatMicros(s.runtime_ns),
                                     FormatMicros(s.dataloader_ns),
                                     FormatMicros(s.cpu_exec_ns),
                                     FormatMicros(s.other_ns)};
    EXPECT_EQ(steps[i].cells, want) << i;
    EXPECT_EQ(steps[i].hidden, i >= 5);
  }
  // Every operator is in the page; the first -top rows show.
  std::vector<HtmlRow> ops = HtmlRows(html, "operators-table");
  ASSERT_EQ(ops.size(), a.operators.size());
  ASSERT_GT(ops.size(), 5u);
  for (size_t i = 0; i < ops.size(); ++i) {
    EXPECT_EQ(ops[i].hidden, i >= 5) << i;
    EXPECT_EQ(ops[i].cells[2], FormatMicros(a.operators[i].host_total_ns)) << i;
  }
  EXPECT_EQ(HtmlRows(html, "kernels-table").size(), a.kernels.size());
  // Per device's memory its level and, where it has site series, the same by operator;
  // the step chart with a bar per step, the GPU's, the idle time's and the copies'.
  size_t charts = 0, memory = 0;
  for (size_t at = html.find("<svg"); at != std::string::npos; at = html.find("<svg", at + 1)) ++charts;
  for (const MemoryRow& m : a.memory) memory += 1 + (m.site_timeline.empty() ? 0 : 1);
  EXPECT_EQ(charts, 1 + (a.gpu.empty() ? 0 : 1) + (a.idle_time.empty() ? 0 : 1) + (a.copies.empty() ? 0 : 1) + memory);
}

TEST(Report, HtmlEscapesNamesAndFetchesNothing) {
  Analysis a;
  a.trace.file = "/tmp/<b>&trace.json";
  a.operators.push_back(OperatorRow{"</script><script>alert(\"x\")</script>", "", 1, 10, 10, 0, 0, 10, {}, {}});
  a.kernels.push_back(KernelRow{"void k<float, 2>(int, 'x')", 2, 3500, 1000, 2500, -1, -1, {}});
  Recommendation named;
  named.finding = Finding::kHostBound;
  named.names = {{"a < b & c", 5}};
  a.recommendations.push_back(named);
  std::string html = RenderHtml(a, ReportOptions{});
  EXPECT_EQ(html.find("<b>&trace"), std::string::npos);
  EXPECT_NE(html.find("/tmp/&lt;b&gt;&amp;trace.json"), std::string::npos);
  EXPECT_EQ(html.find("alert(\"x\")"), std::string::npos);
  EXPECT_NE(html.find("&lt;/script&gt;&lt;script&gt;alert(&quot;x&quot;)"), std::string::npos);
  EXPECT_NE(html.find("void k&lt;float, 2&gt;(int, &#39;x&#39;)"), std::string::npos);
  EXPECT_NE(html.find("a &lt; b &amp; c"), std::string::npos);
  // Exactly one script, ours; nothing that loads from anywhere.
  size_t scripts = 0;
  for (size_t at = html.find("<script"); at != std::string::npos; at = html.find("<script", at + 1)) ++scripts;
  EXPECT_EQ(scripts, 1u);
  for (const char* fetch : {"src=", "http:", "https:", "url(", "@import", "fetch(", "XMLHttpRequest", "<link"}) {
    EXPECT_EQ(html.find(fetch), std::string::npos) << fetch;
  }
  EXPECT_NE(html.find("default-src 'none'"), std::string::npos);
}

TEST(Report, ChartAxesStayFewTicksFarFromTheOrigin) {
  // A memory timeline 1.7e17 ns after the trace's start and 3 ns long: adding a 1 ns
  // tick step to such a double does not move it (the fuzzer's hang).
  int64_t t0 = 171219549551000000;
  std::string svg = report::BytesOverTime({{t0, t0 + 1, 100}, {t0 + 1, t0 + 3, 250}}, 0, t0 + 1, 250, {});
  size_t ticks = 0;
  for (size_t at = svg.find("class=\"tick\""); at != std::string::npos; at = svg.find("class=\"tick\"", at + 1))
    ++ticks;
  EXPECT_GT(ticks, 2u);
  EXPECT_LE(ticks, 2u * 21);  // bytes and time axes, at most 21 labels each
  EXPECT_NE(svg.find("peak 250 B"), std::string::npos);
}

}  // namespace
}  // namespace torch2pprof

namespace torch2pprof {
namespace {

TEST(ReportNames, TwoNamesThatDifferOnlyPastTheCutStayApart) {
  const std::string common =
      "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<" + std::string(60, 'x') + ", ";
  std::vector<std::string> names = {common + "std::plus<float>, float>(int)",
                                    common + "std::multiplies<float>, float>(int)", "aten::mm"};
  std::vector<std::vector<std::string>> shown = report::DistinctNames(names, 50);
  ASSERT_EQ(shown.size(), 3u);
  EXPECT_EQ(shown[2], std::vector<std::string>{"aten::mm"});  // it fits: as it is
  ASSERT_EQ(shown[0].size(), 1u);
  ASSERT_EQ(shown[1].size(), 1u);
  EXPECT_NE(shown[0][0], shown[1][0]);
  for (const auto& s : shown) EXPECT_LE(report::Columns(s[0]), 50u) << s[0];
  EXPECT_NE(shown[0][0].find("plus"), std::string::npos) << shown[0][0];
  EXPECT_EQ(shown[0][0].rfind("multi_tensor_apply_kernel<", 0), 0u)
      << shown[0][0];  // the prefix every kernel has is gone
}

TEST(ReportNames, NamesThatStillReadAlikeAreWrittenWhole) {
  // The same 70 characters, then a difference in the last one: at 20 columns no cut keeps both
  // apart with context, so both are written whole over several lines.
  std::vector<std::string> names = {std::string(70, 'a') + "1", std::string(70, 'a') + "2"};
  auto shown = report::DistinctNames(names, 20);
  for (size_t i = 0; i < 2; ++i) {
    std::string joined;
    for (const std::string& line : shown[i]) joined += line;
    EXPECT_TRUE(joined == names[i] || shown[i].size() == 1) << joined;
  }
  EXPECT_NE(shown[0], shown[1]);
}

TEST(ReportNames, ShortNamesDropWhatEveryKernelAndBackwardNodeRepeats) {
  EXPECT_EQ(report::ShortName("void at::native::(anonymous namespace)::k<at::native::F<float> >(int)"), "k<F<float> >");
  EXPECT_EQ(report::ShortName("autograd::engine::evaluate_function: AddmmBackward0"),
            "evaluate_function: AddmmBackward0");
  EXPECT_EQ(report::ShortName("aten::mm"), "aten::mm");
}

TEST(ReportNames, MarkdownNeverCutsAName) {
  std::string name(300, 'k');
  std::string md = report::MarkdownTable({{"kernel", "calls"}, {name + "|x", "1"}});
  EXPECT_NE(md.find(name + "\\|x"), std::string::npos);
}

TEST(Report, JsonKeepsEveryRowUnlessTopIsGivenAndSaysHowMany) {
  testing::TempDir dir;
  Trace trace = LoadTrace(LoadOptions{dir.Write("t.json", R"([
    {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
    {"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1},
    {"ph": "X", "cat": "cpu_op", "name": "b", "pid": 1, "tid": 1, "ts": 3, "dur": 1},
    {"ph": "X", "cat": "cpu_op", "name": "c", "pid": 1, "tid": 1, "ts": 5, "dur": 1},
    {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#2", "pid": 1, "tid": 1, "ts": 10, "dur": 20}])"),
                                      1, true});
  const Analysis a = Analyze(trace, BuildModel(trace));
  ASSERT_EQ(a.operators.size(), 3u);
  nlohmann::json all = nlohmann::json::parse(RenderJson(a, ReportOptions{}));  // -top not given
  EXPECT_EQ(all["operators"].size(), a.operators.size());
  EXPECT_EQ(all["counts"]["operators"], a.operators.size());
  EXPECT_EQ(all["steps"].size(), a.steps.size());
  ASSERT_TRUE(all.contains("step_average"));
  EXPECT_EQ(all["step_average"]["steps"], a.steps.size());
  nlohmann::json top = nlohmann::json::parse(RenderJson(a, ReportOptions{2, 2, ""}));
  EXPECT_EQ(top["operators"].size(), std::min<size_t>(2, a.operators.size()));
  EXPECT_EQ(top["counts"]["operators"], a.operators.size());
}

// GPU utilization is GpuRow::utilization(), read by every output: analyze's JSON and
// text, the ranks table and compare give the same number for the same run.
TEST(Report, EveryOutputReadsOneGpuUtilization) {
  AnalyzeOptions one;
  one.input = std::string(TESTDATA_DIR) + "/real/torch211/lm_train.pt.trace.json.gz";
  one.per_step = true;
  const Analysis a = Analyze(one).analysis;
  ASSERT_FALSE(a.gpu.empty());
  const GpuRow& g = a.gpu[0];
  ASSERT_GT(g.window_ns, 0);
  const double want = static_cast<double>(g.window_kernel_ns) / static_cast<double>(g.window_ns);
  EXPECT_DOUBLE_EQ(g.utilization(), want);
  ReportOptions o;
  nlohmann::json j = nlohmann::json::parse(RenderJson(a, o));
  EXPECT_EQ(j["gpu"][0]["utilization"].dump(), report::Printf("%.6g", want));
  const std::string percent = report::Printf("%.1f%%", 100 * want);
  EXPECT_NE(RenderText(a, o).find(percent), std::string::npos) << percent;
  EXPECT_NE(RenderHtml(a, o).find(percent), std::string::npos) << percent;
  Comparison c = Compare(a, a);
  ASSERT_EQ(c.devices.size(), 1u);
  EXPECT_DOUBLE_EQ(c.devices[0].base_utilization, want);
  AnalyzeRanksOptions ranks;
  ranks.inputs = {one.input};
  EXPECT_DOUBLE_EQ(AnalyzeRanks(ranks).analysis.ranks[0].gpu_utilization, want);
}
}  // namespace
}  // namespace torch2pprof

namespace torch2pprof {
namespace {

// analyze's one table of renderers: each kind's result in each format is what that kind's
// renderer writes, --table is checked against that kind's tables, and a kind with no
// report is refused.
TEST(ReportKinds, EachKindRendersThroughItsOwnRenderers) {
  ReportOptions o;
  AnalyzeResult trace, snapshot, summary, profile;
  trace.kind = InputKind::kTrace;
  snapshot.kind = InputKind::kSnapshot;
  summary.kind = InputKind::kSummary;
  profile.kind = InputKind::kProfile;
  EXPECT_EQ(RenderReport(trace, "text", o), RenderText(trace.analysis, o));
  EXPECT_EQ(RenderReport(trace, "json", o), RenderJson(trace.analysis, o));
  EXPECT_EQ(RenderReport(trace, "csv", o), RenderCsv(trace.analysis, o));
  EXPECT_EQ(RenderReport(snapshot, "json", o), RenderSnapshotJson(snapshot.snapshot, o));
  EXPECT_EQ(RenderReport(snapshot, "csv", o), RenderSnapshotCsv(snapshot.snapshot, o));
  EXPECT_EQ(RenderReport(snapshot, "html", o), RenderSnapshotHtml(snapshot.snapshot, o));
  EXPECT_EQ(RenderReport(summary, "text", o), RenderRanksText(summary.ranks, o));
  EXPECT_EQ(RenderReport(summary, "csv", o), RenderRanksCsv(summary.ranks, o));
  EXPECT_THROW(RenderReport(profile, "text", o), Error);
  EXPECT_THROW(RenderReport(trace, "xml", o), Error);
  // The default table is each registry's marked one.
  EXPECT_EQ(RenderReport(trace, "csv", o), RenderCsv(trace.analysis, ReportOptions{20, 0, DefaultCsvTable()}));
  EXPECT_EQ(DefaultCsvTable(), "operators");
  EXPECT_EQ(DefaultSnapshotCsvTable(), "devices");
  EXPECT_EQ(DefaultRanksCsvTable(), "ranks");
  EXPECT_NO_THROW(CheckReportTable(InputKind::kSnapshot, "peak_sites"));
  EXPECT_NO_THROW(CheckReportTable(InputKind::kSnapshot, ""));
  EXPECT_THROW(CheckReportTable(InputKind::kSnapshot, "kernels"), Error);
  EXPECT_THROW(CheckReportTable(InputKind::kSummary, "kernels"), Error);
  EXPECT_NO_THROW(CheckReportTable(InputKind::kTrace, "kernels"));
  for (InputKind k : {InputKind::kTrace, InputKind::kSnapshot, InputKind::kProfile, InputKind::kSummary}) {
    EXPECT_EQ(WordsOf(k).kind, k);
    EXPECT_STRNE(WordsOf(k).files, "");
  }
}

}  // namespace
}  // namespace torch2pprof

namespace torch2pprof {
namespace {

// JSON, CSV and counts come from one list of views: every CSV table is a JSON key, and
// every count is its list's length.
TEST(ReportViews, CsvTablesAndCountsAreTheJsonsOwnKeys) {
  const nlohmann::ordered_json j = nlohmann::ordered_json::parse(RenderJson(Shared(), ReportOptions{}));
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys.front(), "trace");
  EXPECT_EQ(keys.back(), "counts");
  for (const std::string& t : CsvTables()) EXPECT_TRUE(j.contains(t)) << t;
  ASSERT_GE(j["counts"].size(), 15u);
  for (auto it = j["counts"].begin(); it != j["counts"].end(); ++it) {
    ASSERT_TRUE(j.contains(it.key())) << it.key();
    ASSERT_TRUE(j[it.key()].is_array()) << it.key();
    EXPECT_EQ(j[it.key()].size(), it.value().get<size_t>()) << it.key();
  }
}

}  // namespace
}  // namespace torch2pprof
