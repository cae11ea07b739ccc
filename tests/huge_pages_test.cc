#include "huge_pages.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace torch2pprof {
namespace {

// The advice is only a hint; what must hold is that the vector keeps its elements.
TEST(HugePages, ReserveKeepsTheElementsAndNeverShrinks) {
  std::vector<int64_t> v = {5, -7, 9};
  ReserveHuge(v, 1 << 20);  // 8 MiB: spans whole 2 MiB pages
  EXPECT_GE(v.capacity(), size_t{1} << 20);
  EXPECT_EQ(v, (std::vector<int64_t>{5, -7, 9}));
  const int64_t* data = v.data();
  ReserveHuge(v, 10);  // less than it has: nothing moves
  EXPECT_EQ(v.data(), data);
}

TEST(HugePages, PushGrowsLikePushBack) {
  std::vector<uint32_t> v;
  for (uint32_t i = 0; i < 300000; ++i) PushHuge(v, i * 3);
  ASSERT_EQ(v.size(), 300000u);
  for (uint32_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], i * 3);
}

}  // namespace
}  // namespace torch2pprof
