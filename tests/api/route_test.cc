// The API's routing: each call reads an input once and routes it by what it is, so a
// trace, a snapshot and a summary each reach their own analysis, and an input a call
// cannot take is one error that names what it is.
#include <gtest/gtest.h>

#include <string>

#include "test_util.h"
#include "torch2pprof/error.h"
#include "torch2pprof/torch2pprof.h"

namespace torch2pprof {
namespace {

const std::string kTrace = std::string(TESTDATA_DIR) + "/convert/python_stacks.json";
const std::string kSnapshot = std::string(TESTDATA_DIR) + "/snapshots/oom_train.pickle.gz";

// The error a call throws, as (kind, message); kind kInternal-like -1 when none.
template <typename F>
std::pair<int, std::string> ErrorOf(F call) {
  try {
    call();
  } catch (const Error& e) {
    return {static_cast<int>(e.kind()), e.what()};
  }
  return {-1, ""};
}

TEST(Route, AnalyzeTakesEachKindToItsAnalysis) {
  AnalyzeOptions o;
  o.threads = 1;
  o.input = kTrace;
  AnalyzeResult trace = Analyze(o);
  EXPECT_EQ(trace.kind, InputKind::kTrace);
  EXPECT_FALSE(trace.analysis.operators.empty());
  o.input = kSnapshot;
  AnalyzeResult snapshot = Analyze(o);
  EXPECT_EQ(snapshot.kind, InputKind::kSnapshot);
  EXPECT_FALSE(snapshot.snapshot.devices.empty());
  // A summary is the report over ranks, of one rank.
  testing::TempDir dir;
  SummarizeOptions s;
  s.input = kTrace;
  s.output = dir.path() + "/t.summary.json";
  s.threads = 1;
  Summarize(s);
  o.input = s.output;
  AnalyzeResult summary = Analyze(o);
  EXPECT_EQ(summary.kind, InputKind::kSummary);
  ASSERT_EQ(summary.ranks.ranks.size(), 1u);
}

TEST(Route, TheKindIsToldBeforeAnyWork) {
  AnalyzeOptions o;
  o.threads = 1;
  o.input = kSnapshot;
  int told = 0;
  o.on_input_kind = [&](InputKind k) {
    ++told;
    if (k == InputKind::kSnapshot) throw Error(Error::Kind::kUsage, "", -1, "refused");
  };
  EXPECT_EQ(ErrorOf([&] { Analyze(o); }),
            std::make_pair(static_cast<int>(Error::Kind::kUsage), std::string("refused")));
  EXPECT_EQ(told, 1);
}

TEST(Route, AnInputACallCannotTakeSaysWhatItIs) {
  SummarizeOptions s;
  s.input = kSnapshot;
  s.output = "-";
  auto [kind, message] = ErrorOf([&] { Summarize(s); });
  EXPECT_NE(kind, -1);
  EXPECT_NE(message.find("memory snapshot"), std::string::npos) << message;
  CompareRunsOptions c;
  c.base = kTrace;
  c.next = kSnapshot;
  std::tie(kind, message) = ErrorOf([&] { Compare(c); });
  EXPECT_NE(kind, -1);
  EXPECT_NE(message.find("snapshot"), std::string::npos) << message;
}

TEST(Route, CompareIsOneCallForTracesAndSnapshots) {
  CompareRunsOptions c;
  c.threads = 1;
  c.base = c.next = kTrace;
  CompareRunsResult traces = Compare(c);
  EXPECT_EQ(traces.kind, InputKind::kTrace);
  EXPECT_FALSE(traces.comparison.regressed);
  c.base = c.next = kSnapshot;
  CompareRunsResult snapshots = Compare(c);
  EXPECT_EQ(snapshots.kind, InputKind::kSnapshot);
  EXPECT_FALSE(snapshots.snapshots.devices.empty());
  for (const auto& d : snapshots.snapshots.devices) EXPECT_EQ(d.peak_bytes.change(), 0);
}

}  // namespace
}  // namespace torch2pprof
