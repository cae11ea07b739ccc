// One rule for what is open at an instant (model/open_at.h), and the stages that ask it
// agree: at an instant where one operator ends and the next begins, the one beginning
// holds it, for convert's allocation stacks and analyze's allocating operator alike.
#include "model/open_at.h"

#include <gtest/gtest.h>

#include "analysis/analyzer.h"
#include "test_util.h"
#include "torch2pprof/stages/trace_model.h"

namespace torch2pprof {
namespace {

TEST(OpenAt, AnEventHoldsItsStartNotItsEnd) {
  EXPECT_TRUE(Holds(10, 20, 10));
  EXPECT_TRUE(Holds(10, 20, 19));
  EXPECT_FALSE(Holds(10, 20, 20));
  EXPECT_FALSE(Holds(10, 20, 9));
  EXPECT_TRUE(Holds(10, 10, 10));  // zero-length: its own instant
  EXPECT_FALSE(Holds(10, 10, 11));
}

TEST(OpenAt, SweepVisitsTheStackThatHoldsEachInstant) {
  // 0:[0,100) holds 1:[10,20) and 2:[20,30), and 3, zero-length at 30.
  const std::vector<std::pair<int64_t, int64_t>> spans = {{0, 100}, {10, 20}, {20, 30}, {30, 30}};
  const std::vector<uint32_t> events = {0, 1, 2, 3};
  const std::vector<std::pair<int64_t, int>> queries = {{5, 0}, {10, 1}, {20, 2}, {29, 3}, {30, 4}, {31, 5}, {100, 6}};
  std::vector<std::vector<uint32_t>> got(queries.size());
  SweepOpen(
      events, [&](uint32_t e) { return spans[e]; }, queries,
      [&](int q, const std::vector<uint32_t>& stack) { got[static_cast<size_t>(q)] = stack; });
  EXPECT_EQ(got[0], (std::vector<uint32_t>{0}));
  EXPECT_EQ(got[1], (std::vector<uint32_t>{0, 1}));
  EXPECT_EQ(got[2], (std::vector<uint32_t>{0, 2}));  // 1 ended where 2 began
  EXPECT_EQ(got[3], (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(got[4], (std::vector<uint32_t>{0, 3}));
  EXPECT_EQ(got[5], (std::vector<uint32_t>{0}));
  EXPECT_EQ(got[6], (std::vector<uint32_t>{}));
}

TEST(OpenAt, ConvertAndAnalyzeGiveAnAllocationOneOwner) {
  // aten::empty ends at 20, where aten::zeros begins; the allocation at 20 is aten::zeros'.
  const std::string trace = R"([
    {"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1, "tid": 1, "ts": 10, "dur": 10},
    {"ph": "X", "cat": "cpu_op", "name": "aten::zeros", "pid": 1, "tid": 1, "ts": 20, "dur": 10},
    {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 20,
     "args": {"Bytes": 4096, "Device Type": 1, "Device Id": 0, "Addr": 7}}])";
  testing::Decoded d = testing::ConvertText(trace);
  int alloc = -1;
  for (size_t i = 0; i < d.sample_types.size(); ++i) {
    if (d.sample_types[i] == "alloc_space/bytes") alloc = static_cast<int>(i);
  }
  ASSERT_GE(alloc, 0);
  std::string leaf;
  for (const auto& [stack, values] : d.stacks) {
    if (values[static_cast<size_t>(alloc)] != 4096) continue;
    const std::string frames = stack.substr(stack.find('|') + 1);
    leaf = frames.substr(frames.rfind(';') == std::string::npos ? 0 : frames.rfind(';') + 1);
  }
  EXPECT_EQ(leaf, "aten::zeros");
  Trace t = testing::LoadText(trace);
  Analysis a = Analyze(t, BuildModel(t));
  ASSERT_EQ(a.memory.size(), 1u);
  ASSERT_EQ(a.memory[0].top_operators.size(), 1u);
  EXPECT_EQ(a.memory[0].top_operators[0].name, "aten::zeros");
}

}  // namespace
}  // namespace torch2pprof
