// How the stages use their threads: fn(0), ..., fn(count - 1) fanned out over segments,
// ranges or lanes (ParallelFor), and a part run beside the caller (Beside).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <future>
#include <thread>
#include <vector>

namespace torch2pprof {

// fn(0), ..., fn(count - 1) on up to `threads` threads, the calling one among them.
inline void ParallelFor(size_t count, int threads, const std::function<void(size_t)>& fn) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t k; (k = next.fetch_add(1, std::memory_order_relaxed)) < count;) fn(k);
  };
  std::vector<std::thread> pool;
  for (int i = 1; i < std::min<int>(threads, static_cast<int>(count)); ++i) pool.emplace_back(work);
  work();
  for (std::thread& th : pool) th.join();
}

// The std::async policy of a part that can run beside the caller: a thread of its own
// when the command has threads, else run where its result is asked for.
inline std::launch Beside(int threads) { return threads > 1 ? std::launch::async : std::launch::deferred; }

}  // namespace torch2pprof
