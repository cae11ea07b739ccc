// How the stages use their threads: fn(0), ..., fn(count - 1) fanned out over segments,
// ranges or lanes (ParallelFor), a part run beside the caller (Beside), or a Crew of them.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

namespace torch2pprof {

// Runs work on a thread kept idle from earlier work, else on a new one, and then
// finished on the same thread once it is idle again (so that what runs next finds it).
// Why threads are kept: Linux starts a new thread on its parent's core, where it waits
// for the scheduler to move it to an idle one — 2–4 ms on the 2-core development VM,
// about a scheduler tick, several times a command — while a kept thread woken on an
// idle core runs there within ~40 us. Neither function may throw. The threads are the
// process's, like malloc's arenas: they hold no data between the calls.
void RunOnKeptThread(std::function<void()> work, std::function<void()> finished);

// The result of a part run beside the caller (Beside). Whoever comes first runs it: a
// kept thread, or the first to ask for the result while no thread has started it (the
// part is never waited for before it starts). Dropped unread, it waits for the part if
// a thread is running it (the part refers to the caller's locals), else never runs it.
template <typename R>
class Pending {
 public:
  explicit Pending(std::function<R()> fn) : s_(std::make_shared<State>()) { s_->fn = std::move(fn); }
  Pending(Pending&&) = default;
  Pending& operator=(Pending&&) = delete;
  ~Pending() {
    if (s_) Cancel();
  }

  // The result, moved out: for one reader.
  R get() {
    Settle();
    if (s_->error) std::rethrow_exception(s_->error);
    return std::move(*s_->value);
  }
  // The result, for several readers at once.
  const R& Shared() const {
    Settle();
    if (s_->error) std::rethrow_exception(s_->error);
    return *s_->value;
  }

  // The part will not start now: unless a thread started it (then, once it is done, its
  // exception if it threw one).
  std::exception_ptr Cancel() {
    if (!s_->claimed.exchange(true)) {
      MarkDone();
      return nullptr;
    }
    Wait();
    return s_->error;
  }

  // The kept thread's side: runs the part unless a reader has claimed it, then tells
  // the readers (after the thread is idle again).
  std::function<void()> Work() const {
    return [s = s_] {
      if (s->claimed.exchange(true)) return;
      Run(*s);
      s->ran_on_thread = true;
    };
  }
  std::function<void()> Finished() const {
    return [s = s_] {
      if (s->ran_on_thread) MarkDone(*s);
    };
  }

 private:
  struct State {
    std::function<R()> fn;
    std::atomic<bool> claimed{false};
    bool ran_on_thread = false;  // written before Finished reads it, on the same thread
    std::mutex mu;
    std::condition_variable changed;
    bool done = false;
    std::optional<R> value;
    std::exception_ptr error;
  };
  static void Run(State& s) {
    try {
      s.value.emplace(s.fn());
    } catch (...) {
      s.error = std::current_exception();
    }
  }
  static void MarkDone(State& s) {
    std::lock_guard<std::mutex> lock(s.mu);
    s.done = true;
    s.changed.notify_all();
  }
  void MarkDone() const { MarkDone(*s_); }
  void Settle() const {
    if (!s_->claimed.exchange(true)) {
      Run(*s_);
      MarkDone();
      return;
    }
    Wait();
  }
  void Wait() const {
    std::unique_lock<std::mutex> lock(s_->mu);
    s_->changed.wait(lock, [&] { return s_->done; });
  }
  std::shared_ptr<State> s_;
};

// fn() on a kept thread when the command has threads, else where its result is asked for.
template <typename F>
auto Beside(int threads, F&& fn) -> Pending<std::invoke_result_t<std::decay_t<F>&>> {
  using R = std::invoke_result_t<std::decay_t<F>&>;
  static_assert(!std::is_void_v<R>, "a part beside the caller returns its result");
  Pending<R> pending{std::function<R()>(std::forward<F>(fn))};
  if (threads > 1) RunOnKeptThread(pending.Work(), pending.Finished());
  return pending;
}

// Parts run on kept threads beside the caller, each a Pending: Wait (and the destructor)
// cancels the parts no thread has started yet and waits for the others; Wait rethrows
// the first exception one threw. (A kept thread can start late: woken onto a busy core,
// it may wait there a scheduler tick while another idles. Nobody waits for it then.)
class Crew {
 public:
  void Run(std::function<void()> fn) {
    parts_.push_back(Beside(/*threads=*/2, [fn = std::move(fn)] {
      fn();
      return true;
    }));
  }
  void Wait() {
    std::exception_ptr first;
    for (Pending<bool>& part : parts_) {
      std::exception_ptr error = part.Cancel();
      if (error && !first) first = error;
    }
    parts_.clear();
    if (first) std::rethrow_exception(first);
  }

 private:
  std::vector<Pending<bool>> parts_;  // their destructors cancel or wait, as Wait does
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

}  // namespace torch2pprof
