// Rendering: exact microseconds, JSON that nlohmann parses, text within 120 columns.
#include "torch2pprof/report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "test_util.h"
#include "torch2pprof/error.h"
#include "torch2pprof/trace_loader.h"

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
  nlohmann::json j = nlohmann::json::parse(RenderJson(a, ReportOptions{0, ""}));
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
  nlohmann::json top = nlohmann::json::parse(RenderJson(a, ReportOptions{5, ""}));
  EXPECT_EQ(top["operators"].size(), 5u);
}

TEST(Report, TextFitsInOneHundredTwentyColumnsAndAgreesWithJson) {
  const Analysis& a = Shared();
  std::string text = RenderText(a, ReportOptions{0, ""});
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
  a.recommendations.push_back({"x", words + "end"});
  std::string text = RenderText(a, ReportOptions{});
  std::istringstream lines(text.substr(text.find("Recommendations")));
  std::string line, joined;
  while (std::getline(lines, line)) {
    EXPECT_LE(line.size(), 120u) << line;
    EXPECT_NE(line.back(), ' ') << line;
    if (line.rfind("- ", 0) == 0 || line.rfind("  ", 0) == 0) joined += line.substr(2) + " ";
  }
  EXPECT_EQ(joined, words + "end ");
}

TEST(Report, CsvTablesAndQuoting) {
  Analysis a;
  a.kernels.push_back(KernelRow{"void k<float, 2>(int, \"x\")", 2, 3500, 1000, 2500, -1, -1, {}});
  std::string csv = RenderCsv(a, ReportOptions{0, "kernels"});
  EXPECT_EQ(csv,
            "name,calls,total_us,mean_us,min_us,max_us,blocks_per_sm,occupancy\n"
            "\"void k<float, 2>(int, \"\"x\"\")\",2,3.5,1.750,1,2.5,,\n");
  EXPECT_THROW(RenderCsv(a, ReportOptions{0, "bogus"}), Error);
  for (const std::string& t : CsvTables()) EXPECT_NO_THROW(RenderCsv(Shared(), ReportOptions{3, t})) << t;
}

}  // namespace
}  // namespace torch2pprof
