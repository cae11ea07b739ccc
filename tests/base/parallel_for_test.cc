#include "base/parallel_for.h"

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
  // And a part beside the caller runs on one of them, not on a new thread (waited for
  // here: asked for before a thread starts it, the caller would run it itself).
  std::atomic<long> beside{0};
  auto part = Beside(2, [&] { return beside = Tid(); });
  while (!beside) std::this_thread::yield();
  EXPECT_EQ(part.get(), beside);
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
  std::atomic<bool> started{false};
  crew.Run([&] {
    started = true;
    throw std::out_of_range("first");
  });
  while (!started) std::this_thread::yield();  // Wait would cancel it before it started
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

TEST(Beside, ADroppedPartIsWaitedForOnceAThreadRunsIt) {
  // The part refers to the caller's locals: dropping its result, as an exception on the
  // caller's side does, must not leave it running.
  std::atomic<bool> started{false}, done{false};
  try {
    auto part = Beside(2, [&] {
      started = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      done = true;
      return 1;
    });
    while (!started) std::this_thread::yield();
    throw std::runtime_error("the caller failed");
  } catch (const std::runtime_error&) {
    EXPECT_TRUE(done);
  }
  auto failing = Beside(2, []() -> int { throw std::invalid_argument("part"); });
  EXPECT_THROW(failing.get(), std::invalid_argument);
}

TEST(Beside, WhoeverComesFirstRunsThePartOnce) {
  // The reader first: the thread that starts later finds it taken.
  std::atomic<int> runs{0};
  auto first = Beside(1, [&] { return ++runs; });
  EXPECT_EQ(first.get(), 1);
  first.Work()();
  first.Finished()();
  EXPECT_EQ(runs, 1);
  // The thread first: the reader gets its result without running it again.
  auto second = Beside(1, [&] { return ++runs * 10; });
  second.Work()();
  second.Finished()();
  EXPECT_EQ(second.get(), 20);
  EXPECT_EQ(runs, 2);
  // Several readers at once: one runs it, the others wait for its result.
  auto shared = Beside(1, [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return std::vector<int>{++runs};
  });
  std::vector<int> seen(4);
  ParallelFor(seen.size(), 4, [&](size_t k) { seen[k] = shared.Shared().at(0); });
  EXPECT_EQ(seen, std::vector<int>(4, 3));
  EXPECT_EQ(runs, 3);
}

}  // namespace
}  // namespace torch2pprof
