#include "huge_pages.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace torch2pprof {
namespace {

// Large buffers are mappings of their own on a 2 MiB boundary: from malloc they start
// 16 bytes into a mapping anywhere, and the part before the first boundary faults in
// 4 KiB pages.
TEST(HugeVector, LargeBuffersStartOnA2MiBBoundary) {
  for (size_t n : {size_t{1} << 17, size_t{3} << 20, size_t{5'000'001}}) {
    HugeVector<int64_t> v;
    v.reserve(n);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(v.data()) % (2 << 20), 0u) << n;
  }
}

TEST(HugeVector, KeepsTheElementsAsItGrowsFromSmallToLarge) {
  HugeVector<uint32_t> v;
  for (uint32_t i = 0; i < 3'000'000; ++i) v.push_back(i * 3);  // malloc, then own mappings
  ASSERT_EQ(v.size(), 3'000'000u);
  for (uint32_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], i * 3) << i;
  HugeVector<uint32_t> copy = v;
  v.clear();
  v.shrink_to_fit();
  EXPECT_EQ(copy[2'999'999], 2'999'999u * 3);
}

// The kernel may back the buffer with huge pages where THP is "always" or "madvise":
// smaps says whether its mapping is eligible.
TEST(HugeVector, LargeBuffersAreEligibleForHugePages) {
  std::ifstream mode("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes((std::istreambuf_iterator<char>(mode)), std::istreambuf_iterator<char>());
  if (modes.find("[never]") != std::string::npos || modes.empty()) GTEST_SKIP() << "THP: " << modes;
  HugeVector<char> v(8 << 20, 'x');
  const uintptr_t at = reinterpret_cast<uintptr_t>(v.data());
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false, eligible = false, found = false;
  while (std::getline(smaps, line)) {
    uintptr_t lo, hi;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2) {
      inside = lo <= at && at < hi;
    } else if (inside && line.rfind("THPeligible:", 0) == 0) {
      found = true;
      eligible = line.find('1') != std::string::npos;
    }
  }
  if (!found) GTEST_SKIP() << "no THPeligible in smaps";
  EXPECT_TRUE(eligible);
}

// Resident bytes of this process, from /proc/self/statm.
int64_t Resident() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

TEST(HugePages, TrimHandsBackTheUnusedCapacityAndKeepsTheElements) {
  HugeVector<uint64_t> v;
  v.reserve(4 << 20);    // 32 MiB
  v.assign(4 << 20, 1);  // every page resident, huge or not
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

TEST(HugePages, WhatWasReadIsHandedBackAndTheRestKept) {
  HugeVector<uint64_t> v(4 << 20, 3);  // 32 MiB, every page resident
  for (size_t i = 0; i < v.size(); ++i) v[i] = i * 5;
  const int64_t before = Resident();
  // From mid-page to mid-page: only the pages wholly inside are handed back.
  const size_t from = 100, to = (size_t{3} << 20) + 100;
  ReleaseRead(v.data() + from, v.data() + to);
  const int64_t freed = before - Resident();
  EXPECT_GT(freed, int64_t{22} << 20) << freed;  // 24 MiB less, but for the two partial pages
  EXPECT_LE(freed, int64_t{24} << 20) << freed;
  // The partial pages at both ends, and everything after, keep their values.
  for (size_t i = 0; i < 512; ++i) ASSERT_EQ(v[i], i * 5) << i;
  for (size_t i = to - 100; i < v.size(); ++i) ASSERT_EQ(v[i], i * 5) << i;
}

}  // namespace
}  // namespace torch2pprof
