// One table description written four ways, and the CSV tables named once: what --table
// offers is what can be written, and a wrong name is one usage error that lists them.
#include "report/table.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "torch2pprof/error.h"

namespace torch2pprof::report {
namespace {

struct Row {
  std::string name;
  int64_t ns;
};

DataTable<Row> Table(const std::vector<Row>& rows) {
  return {"things",
          rows,
          true,
          {{"name", "name", [](const Row& r) { return Text(r.name); }},
           {"total_us", "total", [](const Row& r) { return Micros(r.ns); }}}};
}

TEST(Table, OneDescriptionFourFormats) {
  const std::vector<Row> rows = {{"a,b", 1500}, {"c\"d", 2000000}};
  const DataTable<Row> t = Table(rows);
  EXPECT_EQ(WriteCsv(t, 0), "name,total_us\n\"a,b\",1.5\n\"c\"\"d\",2000\n");
  Json j;
  j.Open('{');
  WriteJson(j, t, 0);
  j.Close('}');
  const nlohmann::json parsed = nlohmann::json::parse(j.out);
  ASSERT_EQ(parsed["things"].size(), 2u);
  EXPECT_EQ(parsed["things"][1]["name"], "c\"d");
  EXPECT_EQ(parsed["things"][1]["total_us"].dump(), "2000");
  const std::string text = WriteText(t, 1);  // -top 1
  EXPECT_NE(text.find("1.50us"), std::string::npos) << text;
  EXPECT_EQ(text.find("2.00ms"), std::string::npos) << text;
  EXPECT_NE(WriteMarkdown(t, 0).find("| c\"d |"), std::string::npos) << WriteMarkdown(t, 0);
}

int writes = 0;
const CsvTable<std::vector<Row>> kTables[] = {
    {"things", [](const std::vector<Row>& rows, int top) { return ++writes, WriteCsv(Table(rows), top); }},
    {"other", [](const std::vector<Row>&, int) { return std::string("x\n"); }},
};

TEST(Table, TheRegistryNamesWhatItWrites) {
  EXPECT_EQ(CsvNames(kTables), (std::vector<std::string>{"things", "other"}));
  const std::vector<Row> rows = {{"a", 1}, {"b", 2}, {"c", 3}};
  ReportOptions o;
  o.table = "things";
  o.rows = 2;
  EXPECT_EQ(WriteCsvTable(kTables, rows, o, ""), "name,total_us\na,0.001\nb,0.002\n");
  EXPECT_EQ(writes, 1);
  o.table = "nothing";
  try {
    WriteCsvTable(kTables, rows, o, "for a test, ");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::kUsage);
    EXPECT_STREQ(e.what(), "for a test, --table must be one of things, other (got 'nothing')");
  }
  EXPECT_EQ(writes, 1);
  EXPECT_NO_THROW(CheckCsvTable("other", CsvNames(kTables), ""));
}

}  // namespace
}  // namespace torch2pprof::report
