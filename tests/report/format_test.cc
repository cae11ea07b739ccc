// How numbers and names are written for people: units, shares, widths in code points,
// cuts that keep what matters, wrapping within the report's 120 columns.
#include "report/format.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "torch2pprof/report.h"

namespace torch2pprof::report {
namespace {

TEST(Format, CountsGroupThousands) {
  EXPECT_EQ(Count(0), "0");
  EXPECT_EQ(Count(999), "999");
  EXPECT_EQ(Count(1000), "1,000");
  EXPECT_EQ(Count(1234567), "1,234,567");
  EXPECT_EQ(FormatCount(18446744073709551615ULL), "18,446,744,073,709,551,615");
}

TEST(Format, SharesSayDashWhereThereIsNoWhole) {
  EXPECT_EQ(Percent(1, 8), "12.5%");
  EXPECT_EQ(Percent(5, 0), "-");
  EXPECT_EQ(PercentOf(0.123), "12.3%");
}

TEST(Format, BytesInBinaryUnits) {
  EXPECT_EQ(Bytes(0), "0 B");
  EXPECT_EQ(Bytes(1023), "1023 B");
  EXPECT_EQ(Bytes(1536), "1.50 KiB");
  EXPECT_EQ(Bytes(int64_t{3} << 30), "3.00 GiB");
  EXPECT_EQ(Bytes(-2048), "-2.00 KiB");
  EXPECT_EQ(SignedBytes(1 << 20), "+1.00 MiB");
  EXPECT_EQ(SignedDuration(-850), "-850ns");
}

TEST(Format, WidthsAreCodePointsAndCutsNeverSplitOne) {
  const std::string name = "aten::\xC3\xA9l\xC3\xA9ment_wise";  // two 2-byte code points
  EXPECT_EQ(Columns(name), 18u);
  EXPECT_EQ(Fit(name, 18), name);
  const std::string cut = Fit(name, 9);
  EXPECT_EQ(Columns(cut), 9u);
  EXPECT_EQ(cut, "aten::\xC3\xA9l\xE2\x80\xA6");
  // FitLeft keeps the end: a path's file name.
  const std::string path = "/very/long/directory/gen_traces.py";
  EXPECT_EQ(FitLeft(path, 14), "\xE2\x80\xA6gen_traces.py");
  EXPECT_EQ(Columns(FitLeft(path, 14)), 14u);
}

TEST(Format, WrapKeepsEveryLineWithinTheWidthAndEveryWord) {
  std::string text;
  for (int i = 0; i < 60; ++i) text += "word" + std::to_string(i) + " ";
  text += "end";
  const std::string wrapped = Wrap(text, "  ", "    ");
  size_t lines = 0, words = 0;
  for (size_t at = 0; at < wrapped.size();) {
    const size_t nl = wrapped.find('\n', at);
    const std::string line = wrapped.substr(at, nl - at);
    EXPECT_LE(Columns(line), kWidth) << line;
    EXPECT_EQ(line.rfind(lines == 0 ? "  w" : "    w", 0), 0u) << line;
    for (size_t p = line.find_first_not_of(' '); p != std::string::npos;
         p = line.find(' ', p) == std::string::npos ? std::string::npos : line.find(' ', p) + 1)
      ++words;
    ++lines;
    at = nl + 1;
  }
  EXPECT_GT(lines, 3u);
  EXPECT_EQ(words, 61u);
}

TEST(Format, JsonKeepsNumbersAsExactText) {
  Json j;
  j.Open('{');
  j.FieldMicros("t_us", 1712195495519695800);
  j.Field("name", "a\"b\n");
  j.FieldInt("n", -3);
  j.Close('}');
  EXPECT_NE(j.out.find("\"t_us\": 1712195495519695.8"), std::string::npos) << j.out;
  EXPECT_EQ(nlohmann::json::parse(j.out)["name"], "a\"b\n") << j.out;  // control characters escaped
  EXPECT_NE(j.out.find("\"n\": -3"), std::string::npos) << j.out;
}

TEST(Format, WallClockIsUtcToTheMicrosecond) {
  EXPECT_EQ(WallClock(0), "");
  EXPECT_EQ(WallClock(1712195495519695800), "2024-04-04 01:51:35.519695 UTC");
}

}  // namespace
}  // namespace torch2pprof::report
