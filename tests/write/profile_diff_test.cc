// The diff profile: base negated and labelled, frames and stacks merged by name.
#include <gtest/gtest.h>

#include "convert/aggregator.h"
#include "test_util.h"
#include "torch2pprof/output.h"
#include "torch2pprof/profile.h"

namespace torch2pprof {
namespace {

TEST(ProfileDiff, BaseNegatedAndLabelledStacksMerged) {
  Profile base = Aggregate(testing::LoadText(R"([
    {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
    {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 2, "dur": 3}])"));
  Profile next = Aggregate(testing::LoadText(R"([
    {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 0, "dur": 12},
    {"ph": "X", "name": "c", "pid": 1, "tid": 1, "ts": 2, "dur": 5},
    {"ph": "X", "name": "k", "cat": "kernel", "pid": 0, "tid": 7, "ts": 2, "dur": 1, "args": {"device": 0}}])"));
  Profile d = DiffProfile(base, next);
  EXPECT_EQ(ValidateProfile(d), "");
  auto decoded = testing::DecodeProfile(Gzip(EncodeProfile(d)));
  EXPECT_EQ(decoded.sample_types,
            (std::vector<std::string>{"calls/count", "wall/nanoseconds", "work/nanoseconds", "gpu/nanoseconds"}));
  EXPECT_EQ(decoded.stacks.at("pid=1,pprof::base=true,tid=1|a"), (std::vector<int64_t>{-1, -7000, -7000, 0}));
  EXPECT_EQ(decoded.stacks.at("pid=1,pprof::base=true,tid=1|a;b"), (std::vector<int64_t>{-1, -3000, -3000, 0}));
  EXPECT_EQ(decoded.stacks.at("pid=1,tid=1|a"), (std::vector<int64_t>{1, 7000, 7000, 0}));
  EXPECT_EQ(decoded.stacks.at("pid=1,tid=1|a;c"), (std::vector<int64_t>{1, 5000, 5000, 0}));
  EXPECT_EQ(d.frames.size(), 5u);  // a once, b, c, k and k's "(no launch found)" root
}

}  // namespace
}  // namespace torch2pprof
