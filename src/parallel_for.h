// How the stages use their threads: fn(0), ..., fn(count - 1) fanned out over segments,
// ranges or lanes (ParallelFor), a part run beside the caller (Beside), or a Crew of both.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>
#include <utility>

namespace torch2pprof {

// Runs work on a thread kept idle from earlier work, else on a new one, and then
// finished on the same thread once it is idle again (so that what runs next finds it).
// Why threads are kept: Linux starts a new thread on its parent's core, where it waits
// for the scheduler to move it to an idle one — 2–4 ms on the 2-core development VM,
// about a scheduler tick, several times a command — while a kept thread woken on an
// idle core runs there within ~40 us. Neither function may throw. The threads are the
// process's, like malloc's arenas: they hold no data between the calls.
void RunOnKeptThread(std::function<void()> work, std::function<void()> finished);

// Parts run on kept threads beside the caller. Wait (and the destructor) waits for all
// of them; Wait rethrows the first exception one threw.
class Crew {
 public:
  Crew() = default;
  Crew(const Crew&) = delete;
  Crew& operator=(const Crew&) = delete;
  ~Crew() { WaitQuietly(); }

  void Run(std::function<void()> fn);
  void Wait();

 private:
  void WaitQuietly();
  std::mutex mu_;
  std::condition_variable idle_;
  int running_ = 0;
  std::exception_ptr error_;
};

// fn(0), ..., fn(count - 1) on up to `threads` threads, the calling one among them.
inline void ParallelFor(size_t count, int threads, const std::function<void(size_t)>& fn) {
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t k; (k = next.fetch_add(1, std::memory_order_relaxed)) < count;) fn(k);
  };
  Crew crew;
  for (int i = 1; i < std::min<int>(threads, static_cast<int>(count)); ++i) crew.Run(work);
  work();
  crew.Wait();
}

// The result of a part run beside the caller. Unlike a bare std::future it waits for
// the part when dropped unread (an exception on the caller's side): the part refers to
// the caller's locals.
template <typename R>
class Pending {
 public:
  explicit Pending(std::future<R> f) : f_(std::move(f)) {}
  Pending(Pending&&) = default;
  Pending& operator=(Pending&&) = delete;
  ~Pending() {
    if (f_.valid() && f_.wait_for(std::chrono::seconds(0)) != std::future_status::deferred) f_.wait();
    if (shared_.valid() && shared_.wait_for(std::chrono::seconds(0)) != std::future_status::deferred) shared_.wait();
  }
  R get() { return f_.get(); }
  // For several readers; this Pending still waits for the part when dropped.
  std::shared_future<R> share() {
    shared_ = f_.share();
    return shared_;
  }

 private:
  std::future<R> f_;
  std::shared_future<R> shared_;
};

// fn() on a kept thread of its own when the command has threads, else run where its
// result is asked for.
template <typename F>
auto Beside(int threads, F&& fn) -> Pending<std::invoke_result_t<std::decay_t<F>&>> {
  using R = std::invoke_result_t<std::decay_t<F>&>;
  static_assert(!std::is_void_v<R>, "a part beside the caller returns its result");
  if (threads <= 1) return Pending<R>(std::async(std::launch::deferred, std::forward<F>(fn)));
  struct State {
    explicit State(F&& f) : fn(std::forward<F>(f)) {}
    std::decay_t<F> fn;
    std::promise<R> promise;
    std::optional<R> value;
    std::exception_ptr error;
  };
  auto state = std::make_shared<State>(std::forward<F>(fn));
  Pending<R> pending(state->promise.get_future());
  RunOnKeptThread(
      [state] {
        try {
          state->value.emplace(state->fn());
        } catch (...) {
          state->error = std::current_exception();
        }
      },
      [state] {
        if (state->error) {
          state->promise.set_exception(state->error);
        } else {
          state->promise.set_value(std::move(*state->value));
        }
      });
  return pending;
}

}  // namespace torch2pprof
