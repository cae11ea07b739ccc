#include "base/flat_map.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace torch2pprof {
namespace {

TEST(FlatIndexMap, FirstValueStaysAndFindSeesIt) {
  FlatIndexMap m;
  EXPECT_EQ(m.Find(7), FlatIndexMap::kNone);
  EXPECT_EQ(m.Emplace(7, 3), std::make_pair(3u, true));
  EXPECT_EQ(m.Emplace(7, 9), std::make_pair(3u, false));
  EXPECT_EQ(m.Emplace(0, 0), std::make_pair(0u, true));  // key 0 and value 0 are ordinary
  EXPECT_EQ(m.Find(0), 0u);
  EXPECT_EQ(m.Find(7), 3u);
  EXPECT_EQ(m.Find(8), FlatIndexMap::kNone);
  EXPECT_EQ(m.size(), 2u);
}

TEST(FlatIndexMap, ReservedMapHoldsWhatItWasGiven) {
  FlatIndexMap m;
  m.Reserve(1000);
  for (uint32_t i = 0; i < 1000; ++i) EXPECT_TRUE(m.Emplace(uint64_t{i} * 0x10001, i).second);
  for (uint32_t i = 0; i < 1000; ++i) ASSERT_EQ(m.Find(uint64_t{i} * 0x10001), i);
  EXPECT_EQ(m.size(), 1000u);
}

// The aggregator's keys (parent << 32 | frame) through many growths, against std::map.
TEST(FlatIndexMap, AgreesWithStdMapThroughGrowth) {
  FlatIndexMap m;
  std::map<uint64_t, uint32_t> ref;
  std::mt19937_64 rng(42);
  for (uint32_t i = 0; i < 200000; ++i) {
    uint64_t key = (rng() % 5000) << 32 | (rng() % 64);  // many repeats, clustered keys
    auto [it, added] = ref.emplace(key, static_cast<uint32_t>(ref.size()));
    auto [value, inserted] = m.Emplace(key, added ? it->second : 12345);
    ASSERT_EQ(inserted, added) << i;
    ASSERT_EQ(value, it->second) << i;
  }
  EXPECT_EQ(m.size(), ref.size());
  for (const auto& [key, value] : ref) ASSERT_EQ(m.Find(key), value);
  EXPECT_EQ(m.Find(uint64_t{6000} << 32), FlatIndexMap::kNone);
}

}  // namespace
}  // namespace torch2pprof
