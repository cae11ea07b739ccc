// AppendJsonString is how every JSON torch2pprof writes holds a name: checked against an
// independent strict parser (nlohmann/json refuses bytes that are not UTF-8 and raw
// control characters), on every byte and on random bytes.
#include "base/utf8.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>

namespace torch2pprof {
namespace {

std::string Json(const std::string& s) {
  std::string out;
  AppendJsonString(out, s);
  return out;
}

// What a strict reader gets back: the text with each byte of no character as U+FFFD.
void RoundTrips(const std::string& s) {
  const std::string j = Json(s);
  nlohmann::json parsed;
  ASSERT_NO_THROW(parsed = nlohmann::json::parse(j)) << j;
  EXPECT_EQ(parsed.get<std::string>(), ValidUtf8(s)) << j;
  // Nothing a terminal acts on is left raw: no C0, DEL or C1 byte pair.
  for (size_t i = 0; i < j.size(); ++i) {
    const auto c = static_cast<unsigned char>(j[i]);
    EXPECT_FALSE(c < 0x20 || c == 0x7F) << j;
    EXPECT_FALSE(c == 0xC2 && i + 1 < j.size() && static_cast<unsigned char>(j[i + 1]) < 0xA0) << j;
  }
}

TEST(AppendJsonString, EveryByteAloneAndInText) {
  for (int b = 0; b < 256; ++b) {
    const std::string one(1, static_cast<char>(b));
    RoundTrips(one);
    RoundTrips("a" + one + "b");
  }
}

TEST(AppendJsonString, NamesAsTheyCome) {
  EXPECT_EQ(Json("aten::mm"), "\"aten::mm\"");
  EXPECT_EQ(Json("say \"hi\"\\"), "\"say \\\"hi\\\"\\\\\"");
  EXPECT_EQ(Json("a\nb\tc\x7f"), "\"a\\u000ab\\u0009c\\u007f\"");
  EXPECT_EQ(Json("\xc2\x9b[2J"), "\"\\u009b[2J\"");  // C1's CSI, escaped
  EXPECT_EQ(Json("µs €"), "\"µs €\"");               // characters stay themselves
  EXPECT_EQ(Json("\xff\xc3"), "\"\xEF\xBF\xBD\xEF\xBF\xBD\"");
  for (const char* s : {"\xc2\xa0", "\xe2\x82\xac", "\xf0\x9f\x94\xa5", "\xed\xa0\x80", "\xf4\x90\x80\x80"}) {
    RoundTrips(s);
  }
}

TEST(AppendJsonString, RandomBytes) {
  std::mt19937 rng(7);
  for (int n = 0; n < 2000; ++n) {
    std::string s(rng() % 24, '\0');
    // Mostly bytes that start or continue UTF-8 sequences, so that valid ones occur.
    for (char& c : s) c = static_cast<char>(rng() % 3 ? 0x80 + rng() % 0x80 : rng() % 0x100);
    RoundTrips(s);
  }
}

}  // namespace
}  // namespace torch2pprof
