// How a call uses its threads: one Executor per call owns them and their budget; the
// stages fan work out over it (ParallelFor), run a part beside the caller (Beside), or a Crew.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace torch2pprof {

// The threads of one call (a Convert, an Analyze): at most threads - 1 of its own, so
// that with the calling thread no more than `threads` work at once, whatever the stages
// ask for. They start when first needed and are kept for the rest of the call, so the
// stages after the first find them awake (a new thread first waits on its parent's core
// for the scheduler to move it), and are joined when the executor is destroyed: nothing
// outlives the call, so a process may fork between calls. Executor(1) never starts one.
class Executor {
 public:
  explicit Executor(int threads);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  int threads() const { return threads_; }

  // `work` on one of the threads once one is free of the budget; then `finished` on the
  // same thread once it counts as free again (so that what the caller asks next finds
  // it). Neither may throw. Parts still queued when the executor ends are dropped.
  void Submit(std::function<void()> work, std::function<void()> finished);

  // Up to `wanted` of the free threads, held until Release: for parts that others wait
  // for and cannot do themselves (a worker loop), each of which must have a thread.
  // Parts submitted with `held` start at once on them.
  int Hold(int wanted);
  void Release(int count);
  void SubmitHeld(std::function<void()> work, std::function<void()> finished);

 private:
  struct Worker;
  struct Part {
    std::function<void()> work, finished;
    bool held = false;
  };
  void StartLocked(Part part);  // on an idle thread, else a new one
  void DispatchLocked();        // queued parts onto free threads of the budget
  void Serve(Worker* self);

  const int threads_;
  std::mutex mu_;
  std::deque<Part> queue_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<Worker*> idle_;  // the last to go idle first: its cache is the warmest
  int busy_ = 0;               // threads running a queued part, plus those held
  bool stopping_ = false;
};

// The result of a part run beside the caller (Beside). Whoever comes first runs it: a
// thread of the executor, or the first to ask for the result while no thread has started
// it (the part is never waited for before it starts). Dropped unread, it waits for the
// part if a thread is running it (the part refers to the caller's locals), else never
// runs it. The part's function, and what it captured, is gone before a reader wakes.
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
      s_->fn = nullptr;
      MarkDone(*s_);
      return nullptr;
    }
    Wait();
    return s_->error;
  }

  // The thread's side: runs the part unless a reader has claimed it, then tells the
  // readers (after the thread counts as free again).
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
    s.fn = nullptr;  // its captures die here, before any reader resumes
  }
  static void MarkDone(State& s) {
    std::lock_guard<std::mutex> lock(s.mu);
    s.done = true;
    s.changed.notify_all();
  }
  void Settle() const {
    if (!s_->claimed.exchange(true)) {
      Run(*s_);
      MarkDone(*s_);
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

// fn() on a thread of the executor, or where its result is first asked for.
template <typename F>
auto Beside(Executor& ex, F&& fn) -> Pending<std::invoke_result_t<std::decay_t<F>&>> {
  using R = std::invoke_result_t<std::decay_t<F>&>;
  static_assert(!std::is_void_v<R>, "a part beside the caller returns its result");
  Pending<R> pending{std::function<R()>(std::forward<F>(fn))};
  if (ex.threads() > 1) ex.Submit(pending.Work(), pending.Finished());
  return pending;
}

// Parts run beside the caller, each a Pending. Wait (and the destructor) cancels the parts
// no thread has started yet and waits for the others; Wait rethrows the first exception
// one threw. A crew that holds threads (`hold` > 0) starts its first held() parts at once
// on threads held for it, for as long as it lives: parts that must not wait for a thread.
class Crew {
 public:
  explicit Crew(Executor& ex, int hold = 0) : ex_(ex), held_(hold > 0 ? ex.Hold(hold) : 0) {}
  ~Crew() {
    parts_.clear();  // their destructors cancel or wait, as Wait does
    if (held_) ex_.Release(held_);
  }
  Crew(const Crew&) = delete;
  Crew& operator=(const Crew&) = delete;

  int held() const { return held_; }

  void Run(std::function<void()> fn) {
    Pending<bool> part{std::function<bool()>([fn = std::move(fn)] {
      fn();
      return true;
    })};
    if (started_held_ < held_) {
      ++started_held_;
      ex_.SubmitHeld(part.Work(), part.Finished());
    } else if (ex_.threads() > 1) {
      ex_.Submit(part.Work(), part.Finished());
    }
    parts_.push_back(std::move(part));
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
  Executor& ex_;
  const int held_;
  int started_held_ = 0;
  std::vector<Pending<bool>> parts_;
};

// fn(0), ..., fn(count - 1) on up to `threads` threads of the executor (0: all), the
// calling one among them.
inline void ParallelFor(Executor& ex, size_t count, const std::function<void(size_t)>& fn, int threads = 0) {
  const int most = threads > 0 ? std::min(threads, ex.threads()) : ex.threads();
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t k; (k = next.fetch_add(1, std::memory_order_relaxed)) < count;) fn(k);
  };
  Crew crew(ex);
  const int helpers = static_cast<int>(std::min<size_t>(count, static_cast<size_t>(most))) - 1;
  for (int i = 0; i < helpers; ++i) crew.Run(work);
  work();
  crew.Wait();
}

}  // namespace torch2pprof
