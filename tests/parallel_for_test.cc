#include "parallel_for.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

namespace torch2pprof {
namespace {

// Kernel thread ids: unlike std::thread::id (glibc reuses a finished thread's), a new
// thread's differs from every recent one's.
long Tid() { return static_cast<long>(::syscall(SYS_gettid)); }

// Each call waits until `threads` threads have arrived, so that every thread of a
// ParallelFor over `threads` indexes takes exactly one; the set of threads seen.
std::set<long> OneIndexPerThread(int threads) {
  std::mutex mu;
  std::condition_variable all_in;
  int arrived = 0;
  std::set<long> seen;
  ParallelFor(static_cast<size_t>(threads), threads, [&](size_t) {
    std::unique_lock<std::mutex> lock(mu);
    seen.insert(Tid());
    ++arrived;
    all_in.notify_all();
    EXPECT_TRUE(all_in.wait_for(lock, std::chrono::seconds(20), [&] { return arrived == threads; }));
  });
  return seen;
}

TEST(ParallelFor, EveryIndexOnceOnAtMostTheThreadsAskedFor) {
  for (int threads : {1, 2, 3, 8}) {
    std::vector<std::atomic<int>> runs(1000);
    std::mutex mu;
    std::set<long> seen;
    ParallelFor(runs.size(), threads, [&](size_t k) {
      ++runs[k];
      std::lock_guard<std::mutex> lock(mu);
      seen.insert(Tid());
    });
    for (size_t k = 0; k < runs.size(); ++k) ASSERT_EQ(runs[k], 1) << k;
    EXPECT_LE(seen.size(), static_cast<size_t>(threads));
  }
  std::set<long> four = OneIndexPerThread(4);
  EXPECT_EQ(four.size(), 4u);
  EXPECT_EQ(four.count(Tid()), 1u);  // the caller is one of them
}

TEST(ParallelFor, TheNextStageRunsOnTheThreadsTheLastOneKept) {
  std::set<long> first = OneIndexPerThread(3);
  std::set<long> second = OneIndexPerThread(3);
  EXPECT_EQ(first, second);
  ASSERT_EQ(second.size(), 3u);
  // And a part beside the caller runs on one of them, not on a new thread.
  long beside = Beside(2, [] { return Tid(); }).get();
  EXPECT_EQ(first.count(beside), 1u);
  EXPECT_NE(beside, Tid());
}

TEST(ParallelFor, AnExceptionOnAHelperReachesTheCaller) {
  const long caller = Tid();
  std::mutex mu;
  std::condition_variable both_in;
  int arrived = 0;
  EXPECT_THROW(ParallelFor(2, 2,
                           [&](size_t) {
                             {
                               std::unique_lock<std::mutex> lock(mu);
                               ++arrived;
                               both_in.notify_all();
                               both_in.wait_for(lock, std::chrono::seconds(20), [&] { return arrived == 2; });
                             }
                             // The helper throws; the caller finishes its index, waits
                             // for the helper, and gets the exception.
                             if (Tid() != caller) throw std::runtime_error("helper");
                           }),
               std::runtime_error);
  Crew crew;
  crew.Run([] { throw std::out_of_range("first"); });
  EXPECT_THROW(crew.Wait(), std::out_of_range);
  crew.Run([] {});
  EXPECT_NO_THROW(crew.Wait());  // the error was handed over once
}

TEST(Beside, WithOneThreadTheCallerRunsItWhenAskedFor) {
  bool ran = false;
  auto part = Beside(1, [&] {
    ran = true;
    return Tid();
  });
  EXPECT_FALSE(ran);
  EXPECT_EQ(part.get(), Tid());
  EXPECT_TRUE(ran);
  bool never = false;
  {
    auto dropped = Beside(1, [&] { return never = true; });
  }
  EXPECT_FALSE(never);  // dropped unread: a deferred part never runs
}

TEST(Beside, ADroppedPartIsWaitedFor) {
  // The part refers to the caller's locals: dropping its result, as an exception on the
  // caller's side does, must not leave it running.
  std::atomic<bool> done{false};
  try {
    auto part = Beside(2, [&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      done = true;
      return 1;
    });
    std::shared_future<int> shared = part.share();
    throw std::runtime_error("the caller failed");
  } catch (const std::runtime_error&) {
    EXPECT_TRUE(done);
  }
  auto failing = Beside(2, []() -> int { throw std::invalid_argument("part"); });
  EXPECT_THROW(failing.get(), std::invalid_argument);
}

}  // namespace
}  // namespace torch2pprof
