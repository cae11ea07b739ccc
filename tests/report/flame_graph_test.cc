// The flame graph's tree: inclusive values per type summed from the samples, small
// frames folded into their callers (whose values keep them), and a bound on its size.
#include "report/flame_graph.h"
#include "report/svg_chart.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <numeric>

namespace torch2pprof {
namespace {

// root -> a -> {b, c}; root -> d. Samples: b 600, c 1 (gpu), d 399; work on a alone.
Profile Small() {
  Profile p;
  p.sample_types = {{"gpu", "nanoseconds"}, {"work", "nanoseconds"}, {"calls", "count"}};
  for (const char* n : {"a", "b", "c", "d"}) {
    Frame f;
    f.name = f.function = f.system_name = n;
    p.frames.push_back(f);
  }
  p.tree = {{0, 0}, {0, 0}, {1, 1}, {1, 2}, {0, 3}};  // node i: {parent, frame}
  p.label_sets = {{}};
  p.samples = {{2, 0, {600, 0, 0}}, {3, 0, {1, 0, 0}}, {4, 0, {399, 0, 0}}, {1, 0, {0, 50, 0}}};
  return p;
}

TEST(FlameGraph, InclusiveValuesPerTypeFromTheSamples) {
  const FlameGraph f = FlameOf(Small(), {"gpu", "work", "calls", "missing"}, 0.0);
  ASSERT_EQ(f.types, (std::vector<std::string>{"gpu", "work"}));  // calls sums to 0, missing is absent
  ASSERT_EQ(f.parent.size(), 5u);
  EXPECT_EQ(f.total[0][0], 1000);  // the root holds every sample
  EXPECT_EQ(f.total[1][0], 50);
  // a holds b and c; its parent is the root.
  size_t a = 0;
  for (size_t i = 1; i < f.parent.size(); ++i) {
    if (f.names[f.name[i]] == "a") a = i;
  }
  ASSERT_NE(a, 0u);
  EXPECT_EQ(f.parent[a], 0u);
  EXPECT_EQ(f.total[0][a], 601);
  EXPECT_EQ(f.total[1][a], 50);
  EXPECT_EQ(f.folded, 0u);
}

TEST(FlameGraph, SmallFramesFoldIntoTheirCallersWhichKeepTheirValue) {
  const FlameGraph f = FlameOf(Small(), {"gpu", "work"}, 0.01);  // c holds 0.1% of gpu, none of work
  EXPECT_EQ(f.folded, 1u);
  EXPECT_EQ(f.parent.size(), 4u);
  for (size_t i = 1; i < f.parent.size(); ++i) EXPECT_NE(f.names[f.name[i]], "c");
  EXPECT_EQ(f.total[0][0], 1000);
  // Every kept node's parent was kept before it, and holds at least its value.
  for (size_t i = 1; i < f.parent.size(); ++i) {
    EXPECT_LT(f.parent[i], i);
    for (const auto& t : f.total) EXPECT_GE(t[f.parent[i]], t[i]);
  }
}

TEST(FlameGraph, EveryFoldedNodeCountsThoseUnderAFoldedOneToo) {
  const FlameGraph f = FlameOf(Small(), {"gpu"}, 0.7);  // a (601 of 1000) folds, with b and c under it; d too
  EXPECT_EQ(f.parent.size(), 1u);
  EXPECT_EQ(f.folded, 4u);
}

TEST(FlameGraph, TheShareDoublesUntilTheGraphFits) {
  const FlameGraph f = FlameOf(Small(), {"gpu"}, 0.0001, 3);
  EXPECT_LE(f.parent.size(), 3u);
  EXPECT_GT(f.fold_share, 0.0001);
  EXPECT_EQ(f.total[0][0], 1000);
}

TEST(FlameGraph, JsonHoldsTheTree) {
  const FlameGraph f = FlameOf(Small(), {"gpu", "work"}, 0.0);
  const nlohmann::json j = nlohmann::json::parse(FlameJson(f));
  EXPECT_EQ(j["types"], nlohmann::json({"gpu", "work"}));
  EXPECT_EQ(j["parent"].size(), f.parent.size());
  EXPECT_EQ(j["total"][0][0], 1000);
  EXPECT_EQ(j["folded"], 0);
}

// Names a user's code chose, embedded in the page's <script>: nothing the HTML tokenizer
// acts on survives, and JSON reads back the very same strings.
TEST(FlameGraph, ScriptJsonLeavesNothingTheTokenizerReadsAndTheSameStrings) {
  Profile p = Small();
  const std::string names[] = {"</script><b>x", "<!--<script>", "a & b > c", "line\xe2\x80\xa8sep\xe2\x80\xa9par"};
  for (size_t i = 0; i < 4; ++i) p.frames[i].name = p.frames[i].function = names[i];
  const std::string raw = FlameJson(FlameOf(p, {"gpu", "work"}, 0.0));
  const std::string safe = report::ScriptJson(raw);
  for (const char* bad : {"<", ">", "&", "\xe2\x80\xa8", "\xe2\x80\xa9"})
    EXPECT_EQ(safe.find(bad), std::string::npos) << bad;
  EXPECT_EQ(nlohmann::json::parse(safe), nlohmann::json::parse(raw));
  EXPECT_NE(raw.find("<!--<script>"), std::string::npos);  // the test holds the payloads
}

}  // namespace
}  // namespace torch2pprof
