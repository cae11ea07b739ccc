// Folded stacks read as a profile: stacks summed, torch's export_stacks told and its
// spaces given back, deep stacks folded as convert folds them, and each broken line one
// error at its byte offset.
#include "load/folded_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "load/byte_source.h"
#include "torch2pprof/error.h"

namespace torch2pprof {
namespace {

Profile Read(const std::string& text, uint32_t max_depth = kDefaultMaxDepth) {
  ByteSource source(text, "s.txt");
  LoadOptions options;
  options.max_depth = max_depth;
  return ReadFolded(source, options);
}

// Each sample's stack, root first, as "a;b;c", with its value.
std::map<std::string, int64_t> Stacks(const Profile& p) {
  std::map<std::string, int64_t> out;
  for (const Sample& s : p.samples) {
    std::vector<std::string> names;  // leaf first
    for (uint32_t n = s.node; n != 0; n = p.tree[n].parent) names.push_back(p.frames[p.tree[n].frame].system_name);
    std::reverse(names.begin(), names.end());
    std::string stack;
    for (const std::string& name : names) stack += (stack.empty() ? "" : ";") + name;
    out[stack] += s.values.at(0);
  }
  return out;
}

std::string ErrorOf(const std::string& text) {
  try {
    Read(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(FoldedReader, StacksSumWhereTheyRepeatAndValuesAreCounts) {
  const Profile p = Read("main;f 3\nmain;g 4\n\nmain;f 5\r\nmain 1\nmain;f;h -2");
  ASSERT_EQ(p.sample_types.size(), 1u);
  EXPECT_EQ(p.sample_types[0].type, "samples");
  EXPECT_EQ(p.sample_types[0].unit, "count");
  EXPECT_EQ(p.default_sample_type, "samples");
  const std::map<std::string, int64_t> want = {{"main", 1}, {"main;f", 8}, {"main;g", 4}, {"main;f;h", -2}};
  EXPECT_EQ(Stacks(p), want);
  EXPECT_TRUE(ValidateProfile(p).empty()) << ValidateProfile(p);
}

// torch's export_stacks writes each ' ' of a stack entry as '_': its four forms get their
// spaces back, and the value is its metric's microseconds.
TEST(FoldedReader, TorchsExportStacksGetsItsSpacesBack) {
  const Profile p = Read(
      "t.py(4):_<module>;nn.Module:_Linear_0;torch/nn/modules/linear.py(130):_forward;<built-in_function_linear> "
      "70\n"
      "t.py(4):_<module>;torch/_tensor.py(5):___enter__;<built-in_method_run_backward_of_torch._C._EngineBase_"
      "object_at_0x7fd2> 9\n"
      "t.py(4):_<module>;<built-in_method_sum_of_Tensor_object> 2\n"
      "t.py(4):_<module>;my_thing 1\n");
  EXPECT_EQ(p.sample_types[0].type, "time");
  EXPECT_EQ(p.sample_types[0].unit, "microseconds");
  const std::map<std::string, int64_t> want = {
      {"t.py(4): <module>;nn.Module: Linear_0;torch/nn/modules/linear.py(130): forward;<built-in function linear>", 70},
      {"t.py(4): <module>;torch/_tensor.py(5): __enter__;<built-in method run_backward of torch._C._EngineBase object "
       "at 0x7fd2>",
       9},
      {"t.py(4): <module>;<built-in method sum of Tensor object>", 2},
      {"t.py(4): <module>;my_thing", 1}};
  EXPECT_EQ(Stacks(p), want);
}

// A frame with a space is no export_stacks frame: the file is another tool's, left as written.
TEST(FoldedReader, AFileWithSpacesIsNotTorchs) {
  const Profile p = Read("t.py(4):_<module>;f (t.py:3) 5\n");
  EXPECT_EQ(p.sample_types[0].type, "samples");
  EXPECT_EQ(Stacks(p), (std::map<std::string, int64_t>{{"t.py(4):_<module>;f (t.py:3)", 5}}));
}

TEST(FoldedReader, ADeepStackFoldsAsConvertFoldsOne) {
  const Profile p = Read("a;b;c;d;e 7\na;b 1\n", 3);
  EXPECT_EQ(Stacks(p), (std::map<std::string, int64_t>{{"a;b;[deeper frames truncated]", 7}, {"a;b", 1}}));
}

TEST(FoldedReader, ABrokenLineIsOneErrorAtItsOffset) {
  EXPECT_EQ(ErrorOf("main;f 3\nmain;g x\n"),
            "s.txt: byte 16: expected an integer value after the last space of a line of folded stacks");
  EXPECT_EQ(ErrorOf("main;f 3\nno_value\n"),
            "s.txt: byte 9: expected a line of folded stacks: frames separated by ';', a space and an integer value");
  EXPECT_EQ(ErrorOf("main;;f 3\n"),
            "s.txt: byte 5: expected a frame's name between ';'s, found none (';;', or ';' "
            "at an end)");
  EXPECT_EQ(ErrorOf("main;f 99999999999999999999\n"), "s.txt: byte 7: expected a value within 64 bits");
  EXPECT_EQ(ErrorOf("a 9223372036854775807\na 1\n"),
            "s.txt: byte 22: expected values that sum within 64 bits for one stack");
  EXPECT_EQ(ErrorOf("ma\x01in 3\n"),
            "s.txt: byte 2: expected text in a line of folded stacks, found a control "
            "character");
  EXPECT_EQ(ErrorOf("m\xffin 3\n"),
            "s.txt: byte 1: expected UTF-8 text in a line of folded stacks, found bytes of "
            "no character");
}

// Lines longer than a read, and a last line without its '\n'.
TEST(FoldedReader, LinesLongerThanAReadAndAnUnendedLastLine) {
  std::string deep;
  for (int i = 0; i < 200000; ++i) deep += "frame" + std::to_string(i % 7) + ";";
  deep += "leaf";
  const Profile p = Read(deep + " 5\n" + deep + " 6\nx 1", 1u << 20);
  const std::map<std::string, int64_t> got = Stacks(p);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got.at(deep), 11);
  EXPECT_EQ(got.at("x"), 1);
}

}  // namespace
}  // namespace torch2pprof
