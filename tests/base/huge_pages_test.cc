#include "base/huge_pages.h"

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <thread>

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

// Resident 4 KiB pages of [begin, begin + bytes), by mincore.
size_t ResidentPages(const void* begin, size_t bytes) {
  std::vector<unsigned char> in((bytes + kPage - 1) / kPage);
  if (mincore(const_cast<void*>(begin), bytes, in.data()) != 0) return 0;
  size_t n = 0;
  for (unsigned char c : in) n += c & 1;
  return n;
}

bool CanPopulate() {
  void* p = mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  const bool ok = madvise(p, kPage, MADV_POPULATE_WRITE) == 0 || errno != EINVAL;
  munmap(p, kPage);
  return ok;
}

constexpr size_t kHugePage = size_t{2} << 20;

// The writer has written 1 MiB in 64 KiB steps: 32 steps ahead reach 3 MiB, so the rest
// of the first 2 MiB page and the second one are faulted in, and nothing past 4 MiB.
// What was written stays, and what was faulted in reads zero.
TEST(WriteAhead, FaultsInThePagesWithinReachOfTheWriterAndNoMore) {
  if (!CanPopulate()) GTEST_SKIP() << "no MADV_POPULATE_WRITE (Linux < 5.14)";
  HugeVector<uint64_t> v;
  v.reserve(size_t{8} << 20);  // 64 MiB
  WriteAhead ahead(2);
  for (int step = 0; step < 16; ++step) {
    for (int k = 0; k < 8192; ++k) v.push_back(v.size() * 3);
    ahead.Written(1, v.data(), v.size() * sizeof(v[0]), v.capacity() * sizeof(v[0]));
  }
  ASSERT_EQ(v.size() * sizeof(v[0]), size_t{1} << 20);
  EXPECT_LE(ResidentPages(v.data() + v.size(), kHugePage), kHugePage / kPage / 2);  // not yet
  int steps = 0;
  while (ahead.Step()) ++steps;
  EXPECT_GE(steps, 1);
  EXPECT_LE(steps, 2);
  const char* at = reinterpret_cast<const char*>(v.data());
  EXPECT_EQ(ResidentPages(at, 2 * kHugePage), 2 * kHugePage / kPage);
  EXPECT_EQ(ResidentPages(at + 2 * kHugePage, size_t{60} << 20), 0u);
  for (size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], i * 3) << i;
  const size_t used = v.size();
  v.resize(v.capacity());
  for (size_t i = used; i < v.size(); ++i) ASSERT_EQ(v[i], 0u) << i;
  EXPECT_FALSE(ahead.Step());
}

// A buffer that moved is faulted in at its new place; buffers below 1 MiB (from malloc)
// never are.
TEST(WriteAhead, FollowsABufferThatMovedAndLeavesSmallOnesAlone) {
  if (!CanPopulate()) GTEST_SKIP() << "no MADV_POPULATE_WRITE (Linux < 5.14)";
  WriteAhead ahead(2);
  std::vector<char> small(64 << 10);
  ahead.Written(0, small.data(), 1024, small.size());
  ahead.Written(0, small.data(), 2048, small.size());
  HugeVector<char> first;
  first.reserve(size_t{16} << 20);
  ahead.Written(1, first.data(), 0, first.capacity());
  ahead.Written(1, first.data(), 64 << 10, first.capacity());
  while (ahead.Step()) {
  }
  EXPECT_GT(ResidentPages(first.data(), kHugePage), 0u);
  HugeVector<char> moved;
  moved.reserve(size_t{32} << 20);
  ahead.Written(1, moved.data(), 64 << 10, moved.capacity());
  EXPECT_EQ(ResidentPages(moved.data(), kHugePage), 0u);
  EXPECT_TRUE(ahead.Step());
  EXPECT_EQ(ResidentPages(moved.data(), kHugePage), kHugePage / kPage);
}

// A writer that grows its buffer under Moving() while another thread steps ahead of it:
// every element is where it was written (TSan: no race between them).
TEST(WriteAhead, AWriterThatGrowsItsBufferWhileAnotherStepsAhead) {
  HugeVector<uint32_t> v;
  v.reserve(1 << 18);
  WriteAhead ahead(1);
  std::atomic<bool> done{false};
  std::thread helper([&] {
    while (!done.load()) {
      if (!ahead.Step()) std::this_thread::yield();
    }
  });
  for (uint32_t batch = 0; batch < 400; ++batch) {
    const size_t n = 20000;
    if (v.capacity() - v.size() < n) {
      std::unique_lock<std::mutex> hold = ahead.Moving();
      v.reserve(2 * v.capacity());
    }
    for (size_t k = 0; k < n; ++k) v.push_back(static_cast<uint32_t>(v.size() * 7));
    ahead.Written(0, v.data(), v.size() * sizeof(v[0]), v.capacity() * sizeof(v[0]));
  }
  done = true;
  helper.join();
  ASSERT_EQ(v.size(), 400u * 20000);
  for (size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], static_cast<uint32_t>(i * 7)) << i;
}

}  // namespace
}  // namespace torch2pprof
