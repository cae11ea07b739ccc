// One median: analyze over ranks and compare read the median step time from the same
// rule, so the two never report different medians of one run.
#include "analysis/statistics.h"

#include <gtest/gtest.h>

#include <string>

#include "test_util.h"
#include "torch2pprof/torch2pprof.h"

namespace torch2pprof {
namespace {

TEST(Statistics, MedianIsTheMiddleOrTheMeanOfTheTwoMiddleValues) {
  EXPECT_EQ(Median(std::vector<int64_t>{}), 0);
  EXPECT_EQ(Median(std::vector<int64_t>{5}), 5);
  EXPECT_EQ(Median(std::vector<int64_t>{10, 1, 4, 2}), 3);                           // (2 + 4) / 2
  EXPECT_EQ(Median(std::vector<int64_t>{1, 2}), 1);                                  // 1.5, rounded toward the lower
  EXPECT_EQ(Median(std::vector<int64_t>{-4, -1}), -3);                               // -2.5, toward the lower
  EXPECT_EQ(Median(std::vector<int64_t>{INT64_MAX, INT64_MAX - 2}), INT64_MAX - 1);  // no overflow
  EXPECT_DOUBLE_EQ(Median(std::vector<double>{10, 1, 4, 2}), 3);
  EXPECT_DOUBLE_EQ(Median(std::vector<double>{1, 2}), 1.5);
}

// Four CPU steps of 10, 20, 40 and 100 us: the median is 30 us (the lower middle would be
// 20, the upper 40). A rank's median step and compare's median step are that one number.
TEST(Statistics, RanksAndCompareReadOneMedianStep) {
  std::string events;
  int64_t ts = 0;
  for (int k : {10, 20, 40, 100}) {
    events += std::string(events.empty() ? "" : ",") + R"({"ph":"X","cat":"user_annotation","name":"ProfilerStep#)" +
              std::to_string(k) + R"(","pid":1,"tid":1,"ts":)" + std::to_string(ts) + R"(,"dur":)" + std::to_string(k) +
              "}";
    ts += 200;
  }
  testing::TempDir dir;
  const std::string path = dir.Write("t.json", "[" + events + "]");
  AnalyzeRanksOptions ranks;
  ranks.inputs = {path, dir.Write("u.json", "[" + events + "]")};
  AnalyzeRanksResult across = AnalyzeRanks(ranks);
  AnalyzeOptions one;
  one.input = path;
  one.per_step = true;
  Analysis a = Analyze(one).analysis;
  ASSERT_EQ(a.steps.size(), 4u);
  Comparison c = Compare(a, a);
  EXPECT_EQ(c.base_steps.median_ns, 30000);
  EXPECT_EQ(across.analysis.ranks[0].step_median_ns, 30000);
  EXPECT_EQ(across.analysis.median_step_ns, 30000);
}

}  // namespace
}  // namespace torch2pprof
