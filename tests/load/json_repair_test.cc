#include "load/json_repair.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace torch2pprof {
namespace {

// nlohmann/json is the independent reader: a repaired event must be JSON to it, not only
// to simdjson, which the loader uses.
nlohmann::json Read(const std::string& text) { return nlohmann::json::parse(text); }

TEST(JsonRepair, ValidJsonComesBackUnchanged) {
  for (const char* text : {
           R"({"ph":"X","name":"aten::mm","ts":1.5,"dur":2,"args":{"a":[1,-2.5e3,true,false,null]}})",
           R"({"name":"quote \" and backslash \\ and \/ \b\f\n\r\t \u00e9 \ud83d\ude00"})",
           "{\"name\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"}",  // é € 😀 as UTF-8
           R"({ "a" : 1 , "b" : [ ] , "c" : { } })",
       }) {
    EXPECT_EQ(RepairJson(text), text);
  }
}

TEST(JsonRepair, ControlCharactersInStringsAreEscaped) {
  std::string text = std::string("{\"name\":\"a\x01") + "b\tc\nd\"}";
  std::string fixed = RepairJson(text);
  EXPECT_EQ(fixed, "{\"name\":\"a\\u0001b\\u0009c\\u000ad\"}");
  EXPECT_EQ(Read(fixed)["name"], std::string("a\x01") + "b\tc\nd");
}

TEST(JsonRepair, ALoneBackslashIsKeptAsABackslash) {
  std::string fixed = RepairJson(R"({"file":"C:\Users\me\gen.py","ok":"\n\u0041"})");
  EXPECT_EQ(Read(fixed)["file"], "C:\\Users\\me\\gen.py");
  EXPECT_EQ(Read(fixed)["ok"], "\nA");  // valid escapes stay escapes
  // \u with fewer than four hex digits is no escape.
  EXPECT_EQ(Read(RepairJson(R"({"a":"\u12"})"))["a"], "\\u12");
}

TEST(JsonRepair, AQuoteThatClosesNothingIsPartOfTheText) {
  std::string fixed = RepairJson(R"({"name":"say "hi" now","n":1})");
  EXPECT_EQ(Read(fixed)["name"], "say \"hi\" now");
  EXPECT_EQ(Read(fixed)["n"], 1);
  // A quote followed by white space and then a separator closes the string.
  EXPECT_EQ(Read(RepairJson("{\"a\":\"x\"  ,\"b\":\"y\"\n}"))["b"], "y");
}

TEST(JsonRepair, BytesOfNoCharacterBecomeTheReplacementCharacter) {
  const std::string fffd = "\xEF\xBF\xBD";
  for (const char* bad : {"\xff", "\x80", "\xc0\xaf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82"}) {
    std::string fixed = RepairJson(std::string("{\"a\":\"x") + bad + "y\"}");
    std::string value = Read(fixed)["a"];
    EXPECT_EQ(value.substr(0, 1), "x") << fixed;
    EXPECT_EQ(value.substr(value.size() - 1), "y") << fixed;
    EXPECT_NE(value.find(fffd), std::string::npos) << fixed;
  }
}

TEST(JsonRepair, BareTokensThatAreNoJsonValueBecomeNull) {
  std::string fixed = RepairJson(R"({"a":N/A,"b":NaN,"c":None,"d":-0.5E+2,"e":01x,"f":true})");
  nlohmann::json j = Read(fixed);
  EXPECT_TRUE(j["a"].is_null());
  EXPECT_TRUE(j["b"].is_null());
  EXPECT_TRUE(j["c"].is_null());
  EXPECT_EQ(j["d"], -50.0);
  EXPECT_TRUE(j["e"].is_null());
  EXPECT_EQ(j["f"], true);
}

}  // namespace
}  // namespace torch2pprof
