#include "torch2pprof/output.h"

#include <gtest/gtest.h>

#include "torch2pprof/error.h"

namespace torch2pprof {
namespace {

Label Text(const std::string& key, const std::string& value) { return Label{key, value, 0, false}; }
Label Num(const std::string& key, int64_t value) { return Label{key, "", value, true}; }

// root -> main -> "a;b" -> "c\nd"; root -> main -> leaf; two threads, two value columns.
Profile Small() {
  Profile p;
  p.sample_types = {{"calls", "count"}, {"wall", "nanoseconds"}};
  p.default_sample_type = "wall";
  p.frames = {{"main", "main", "main", "", 0},
              {"a;b", "a;b", "a;b", "", 0},
              {"c\nd", "c\nd", "c\nd", "", 0},
              {" leaf ", "leaf", "leaf", "", 0}};
  p.tree = {{0, 0}, {0, 0}, {1, 1}, {2, 2}, {1, 3}};
  p.label_sets = {{Num("tid", 7), Text("thread", "thread 7 (python3)")},
                  {Num("tid", 8)},
                  {},
                  {Num("rank", 3), Num("tid", 7), Text("thread", "thread 7 (python3)")}};
  p.samples = {
      {3, 0, {1, 500}},  // main;a,b;c d on thread 7
      {3, 0, {0, 0}},    // nothing: no line
      {4, 1, {2, 70}},   // main;leaf on tid 8
      {1, 0, {0, 30}},   // main on thread 7
      {1, 2, {1, 5}},    // main, no thread
      {4, 3, {0, 9}},    // rank 3
  };
  return p;
}

TEST(FoldedWriter, StacksRootToLeafWithTheThreadFirstSortedAndSummed) {
  EXPECT_EQ(WriteFolded(Small()),
            "main 5\n"
            "rank 3;thread 7 (python3);main;leaf 9\n"
            "thread 7 (python3);main 30\n"
            "thread 7 (python3);main;a,b;c d 500\n"
            "tid 8;main;leaf 70\n");
}

TEST(FoldedWriter, TheChosenSampleTypeAndRoot) {
  EXPECT_EQ(WriteFolded(Small(), "calls", FoldedRoot::kNone),
            "main 1\n"
            "main;a,b;c d 1\n"
            "main;leaf 2\n");
  EXPECT_EQ(WriteFolded(Small(), "wall", FoldedRoot::kRank),
            "main 35\n"
            "main;a,b;c d 500\n"
            "main;leaf 70\n"
            "rank 3;main;leaf 9\n");
}

TEST(FoldedWriter, DeviceTimeIsRootedAtItsDeviceSoThreadsDoNotSplitALayer) {
  // The forward's kernel was launched by thread 7, its backward's by the autograd thread 9:
  // by thread they would be two towers; by device, one.
  Profile p;
  p.sample_types = {{"wall", "nanoseconds"}, {"gpu", "nanoseconds"}};
  p.default_sample_type = "wall";
  p.frames = {{"layer", "layer", "layer", "", 0}, {"[backward] MmBackward0", "", "", "", 0}, {"k", "k", "k", "", 0}};
  p.tree = {{0, 0}, {0, 0}, {1, 2}, {1, 1}, {3, 2}};
  p.label_sets = {
      {Num("tid", 7), Text("device", "cuda:0")}, {Num("tid", 9), Text("device", "cuda:0")}, {Num("tid", 7)}};
  p.samples = {{2, 0, {0, 10}}, {4, 1, {0, 20}}, {1, 2, {5, 0}}};
  EXPECT_EQ(WriteFolded(p, "gpu"), "cuda:0;layer;[backward] MmBackward0;k 20\ncuda:0;layer;k 10\n");
  EXPECT_EQ(WriteFolded(p, "gpu", FoldedRoot::kThread), "tid 7;layer;k 10\ntid 9;layer;[backward] MmBackward0;k 20\n");
  EXPECT_EQ(WriteFolded(p, "wall"), "tid 7;layer 5\n");                       // host time: by thread
  EXPECT_EQ(WriteFolded(p, "wall", FoldedRoot::kDevice), "tid 7;layer 5\n");  // no device: its thread
}

TEST(FoldedWriter, IdenticalStacksOfOneRootAddUp) {
  Profile p = Small();
  p.label_sets[1] = p.label_sets[0];  // tid 8's samples now belong to thread 7
  p.samples.push_back({4, 0, {0, 1}});
  EXPECT_NE(WriteFolded(p).find("thread 7 (python3);main;leaf 71\n"), std::string::npos) << WriteFolded(p);
}

TEST(FoldedWriter, AnUnknownSampleTypeIsAUsageErrorNamingTheKnownOnes) {
  try {
    WriteFolded(Small(), "gpu");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::kUsage);
    EXPECT_NE(std::string(e.what()).find("calls, wall"), std::string::npos) << e.what();
  }
  EXPECT_EQ(SampleTypeIndex(Small(), ""), 1u);
  EXPECT_EQ(SampleTypeIndex(Small(), "calls"), 0u);
}

}  // namespace
}  // namespace torch2pprof
