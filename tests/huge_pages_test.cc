#include "huge_pages.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <fstream>
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

// Resident bytes of this process, from /proc/self/statm.
int64_t Resident() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

TEST(HugePages, TrimHandsBackTheUnusedCapacityAndKeepsTheElements) {
  std::vector<uint64_t> v;
  ReserveHuge(v, 4 << 20);  // 32 MiB
  v.assign(4 << 20, 1);     // every page resident, huge or not
  v.resize((1 << 20) + 5);
  for (size_t i = 0; i < v.size(); ++i) v[i] = i * 7;
  const int64_t before = Resident();
  TrimHuge(v);
  const int64_t freed = before - Resident();
  // 3M elements past the last used page: 24 MiB less resident (allow for other noise).
  EXPECT_GT(freed, int64_t{22} << 20) << freed;
  ASSERT_EQ(v.size(), (size_t{1} << 20) + 5);
  for (size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], i * 7) << i;
  // The capacity is still there: growing into it works as before.
  const uint64_t* data = v.data();
  for (uint64_t i = 0; i < 1000; ++i) v.push_back(i);
  EXPECT_EQ(v.data(), data);
  EXPECT_EQ(v.back(), 999u);
  EXPECT_EQ(v[(1 << 20) + 4], uint64_t{(1 << 20) + 4} * 7);
}

}  // namespace
}  // namespace torch2pprof
