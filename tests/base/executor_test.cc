#include "base/executor.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

namespace torch2pprof {
namespace {

// Kernel thread ids: unlike std::thread::id (glibc reuses a finished thread's), a new
// thread's differs from every recent one's.
long Tid() { return static_cast<long>(::syscall(SYS_gettid)); }

// The process's threads, as the kernel counts them.
int ThreadsNow() {
  int n = 0;
  if (DIR* d = ::opendir("/proc/self/task")) {
    while (dirent* e = ::readdir(d)) n += e->d_name[0] != '.';
    ::closedir(d);
  }
  return n;
}

// Each call waits until `threads` threads have arrived, so that every thread of a
// ParallelFor over `threads` indexes takes exactly one; the set of threads seen.
std::set<long> OneIndexPerThread(Executor& ex, int threads) {
  std::mutex mu;
  std::condition_variable all_in;
  int arrived = 0;
  std::set<long> seen;
  ParallelFor(ex, static_cast<size_t>(threads), [&](size_t) {
    std::unique_lock<std::mutex> lock(mu);
    seen.insert(Tid());
    ++arrived;
    all_in.notify_all();
    EXPECT_TRUE(all_in.wait_for(lock, std::chrono::seconds(20), [&] { return arrived == threads; }));
  });
  return seen;
}

TEST(Executor, EveryIndexOnceOnAtMostTheThreadsOfTheBudget) {
  for (int threads : {1, 2, 3, 8}) {
    Executor ex(threads);
    std::vector<std::atomic<int>> runs(1000);
    std::mutex mu;
    std::set<long> seen;
    ParallelFor(ex, runs.size(), [&](size_t k) {
      ++runs[k];
      std::lock_guard<std::mutex> lock(mu);
      seen.insert(Tid());
    });
    for (size_t k = 0; k < runs.size(); ++k) ASSERT_EQ(runs[k], 1) << k;
    EXPECT_LE(seen.size(), static_cast<size_t>(threads));
  }
  Executor ex(4);
  std::set<long> four = OneIndexPerThread(ex, 4);
  EXPECT_EQ(four.size(), 4u);
  EXPECT_EQ(four.count(Tid()), 1u);  // the caller is one of them
}

TEST(Executor, NestedWorkNeverHasMoreThreadsBusyThanTheBudget) {
  // Stages that fan out inside parts that fan out: each asks for every thread, and
  // together they must still not exceed the call's budget.
  for (int threads : {2, 3, 5}) {
    Executor ex(threads);
    std::atomic<int> busy{0}, most{0};
    ParallelFor(ex, 8, [&](size_t) {
      ParallelFor(ex, 64, [&](size_t) {
        int now = ++busy;
        for (int m = most; now > m && !most.compare_exchange_weak(m, now);) {
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        --busy;
      });
    });
    EXPECT_LE(most, threads);
    EXPECT_GE(most, 1);
  }
}

TEST(Executor, TheNextStageRunsOnTheThreadsTheLastOneStarted) {
  Executor ex(3);
  std::set<long> first = OneIndexPerThread(ex, 3);
  std::set<long> second = OneIndexPerThread(ex, 3);
  EXPECT_EQ(first, second);
  ASSERT_EQ(second.size(), 3u);
  // And a part beside the caller runs on one of them, not on a new thread (waited for
  // here: asked for before a thread starts it, the caller would run it itself).
  std::atomic<long> beside{0};
  auto part = Beside(ex, [&] { return beside = Tid(); });
  while (!beside) std::this_thread::yield();
  EXPECT_EQ(part.get(), beside);
  EXPECT_EQ(first.count(beside), 1u);
  EXPECT_NE(beside, Tid());
}

TEST(Executor, NoThreadOutlivesItsExecutor) {
  {
    Executor warm(2);  // a sanitizer's own thread, where one starts with the first thread
    OneIndexPerThread(warm, 2);
  }
  const int before = ThreadsNow();
  {
    Executor ex(4);
    EXPECT_EQ(OneIndexPerThread(ex, 4).size(), 4u);
    EXPECT_EQ(ThreadsNow(), before + 3);
  }
  EXPECT_EQ(ThreadsNow(), before);
}

TEST(Executor, AForkedChildRunsItsOwnCalls) {
  // The usual embedding is a Python process, which may fork after a call (DataLoader
  // workers): the child must find no thread it believes it has.
  {
    Executor ex(3);
    OneIndexPerThread(ex, 3);
  }
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    Executor ex(3);
    std::atomic<int> sum{0};
    ParallelFor(ex, 100, [&](size_t k) { sum += static_cast<int>(k); });
    ::_exit(sum == 4950 ? 0 : 1);
  }
  int status = 0;
  pid_t done = 0;
  for (int i = 0; i < 2000 && (done = ::waitpid(child, &status, WNOHANG)) == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (done == 0) {
    ::kill(child, SIGKILL);
    ::waitpid(child, &status, 0);
    FAIL() << "the forked child hung";
  }
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(Executor, HeldThreadsStartTheirPartsWhileTheRestIsBusy) {
  Executor ex(3);
  Crew holders(ex, 5);
  EXPECT_EQ(holders.held(), 2);  // the budget less the caller
  Crew none(ex, 1);
  EXPECT_EQ(none.held(), 0);
  // Parts that wait for each other: each must have a thread of its own.
  std::mutex mu;
  std::condition_variable both_in;
  int arrived = 0;
  for (int i = 0; i < 2; ++i) {
    holders.Run([&] {
      std::unique_lock<std::mutex> lock(mu);
      ++arrived;
      both_in.notify_all();
      both_in.wait(lock, [&] { return arrived == 2; });
    });
  }
  // Meanwhile other work finds no free thread and runs on the caller alone.
  std::set<long> seen;
  ParallelFor(ex, 50, [&](size_t) {
    std::lock_guard<std::mutex> lock(mu);
    seen.insert(Tid());
  });
  EXPECT_EQ(seen, std::set<long>{Tid()});
  {
    std::unique_lock<std::mutex> lock(mu);
    EXPECT_TRUE(both_in.wait_for(lock, std::chrono::seconds(20), [&] { return arrived == 2; }));
  }
  holders.Wait();
}

TEST(Executor, AnExceptionOnAHelperReachesTheCaller) {
  Executor ex(2);
  const long caller = Tid();
  std::mutex mu;
  std::condition_variable both_in;
  int arrived = 0;
  EXPECT_THROW(ParallelFor(ex, 2,
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
  Crew crew(ex);
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
  Executor one(1);
  bool ran = false;
  auto part = Beside(one, [&] {
    ran = true;
    return Tid();
  });
  EXPECT_FALSE(ran);
  EXPECT_EQ(part.get(), Tid());
  EXPECT_TRUE(ran);
  bool never = false;
  {
    auto dropped = Beside(one, [&] { return never = true; });
  }
  EXPECT_FALSE(never);  // dropped unread: a deferred part never runs
}

TEST(Beside, WhatThePartCapturedIsGoneWhenTheReaderWakes) {
  Executor ex(2);
  auto token = std::make_shared<int>(7);
  std::weak_ptr<int> watch = token;
  std::atomic<bool> started{false};
  auto part = Beside(ex, [t = std::move(token), &started] {
    started = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return *t;
  });
  while (!started) std::this_thread::yield();
  EXPECT_EQ(part.get(), 7);
  EXPECT_TRUE(watch.expired());  // not destroyed later on the thread, beside the caller
}

TEST(Beside, ADroppedPartIsWaitedForOnceAThreadRunsIt) {
  // The part refers to the caller's locals: dropping its result, as an exception on the
  // caller's side does, must not leave it running.
  Executor ex(2);
  std::atomic<bool> started{false}, done{false};
  try {
    auto part = Beside(ex, [&] {
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
  auto failing = Beside(ex, []() -> int { throw std::invalid_argument("part"); });
  EXPECT_THROW(failing.get(), std::invalid_argument);
}

TEST(Beside, WhoeverComesFirstRunsThePartOnce) {
  // The reader first: the thread that starts later finds it taken.
  Executor one(1);
  std::atomic<int> runs{0};
  auto first = Beside(one, [&] { return ++runs; });
  EXPECT_EQ(first.get(), 1);
  first.Work()();
  first.Finished()();
  EXPECT_EQ(runs, 1);
  // The thread first: the reader gets its result without running it again.
  auto second = Beside(one, [&] { return ++runs * 10; });
  second.Work()();
  second.Finished()();
  EXPECT_EQ(second.get(), 20);
  EXPECT_EQ(runs, 2);
  // Several readers at once: one runs it, the others wait for its result.
  auto shared = Beside(one, [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return std::vector<int>{++runs};
  });
  std::vector<int> seen(4);
  Executor four(4);
  ParallelFor(four, seen.size(), [&](size_t k) { seen[k] = shared.Shared().at(0); });
  EXPECT_EQ(seen, std::vector<int>(4, 3));
  EXPECT_EQ(runs, 3);
}

}  // namespace
}  // namespace torch2pprof
