// fn(0), ..., fn(count - 1) on up to `threads` threads, the calling one among them: the
// fan-out of the stages whose parts are independent (segments, ranges, lanes).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

namespace torch2pprof {

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

}  // namespace torch2pprof
