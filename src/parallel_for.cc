#include "parallel_for.h"

#include <thread>
#include <vector>

namespace torch2pprof {
namespace {

struct KeptThread {
  std::condition_variable wake;
  std::function<void()> work, finished;
};

struct KeptThreads {
  std::mutex mu;
  std::vector<KeptThread*> idle;  // the last to go idle first: its cache is the warmest
};

// Never destroyed: its threads still wait on it while the process exits.
KeptThreads& Kept() {
  static KeptThreads* kept = new KeptThreads;
  return *kept;
}

void Serve(KeptThread* self) {
  KeptThreads& kept = Kept();
  std::unique_lock<std::mutex> lock(kept.mu);
  for (;;) {
    self->wake.wait(lock, [&] { return self->work != nullptr; });
    std::function<void()> work = std::move(self->work), finished = std::move(self->finished);
    self->work = nullptr;
    lock.unlock();
    work();
    work = nullptr;  // what it captured goes before the caller hears it finished
    lock.lock();
    kept.idle.push_back(self);
    lock.unlock();
    finished();
    finished = nullptr;
    lock.lock();
  }
}

}  // namespace

void RunOnKeptThread(std::function<void()> work, std::function<void()> finished) {
  KeptThreads& kept = Kept();
  std::unique_lock<std::mutex> lock(kept.mu);
  if (!kept.idle.empty()) {
    KeptThread* t = kept.idle.back();
    kept.idle.pop_back();
    t->work = std::move(work);
    t->finished = std::move(finished);
    lock.unlock();
    t->wake.notify_one();
    return;
  }
  lock.unlock();
  auto* t = new KeptThread;  // kept for the process's life, as its thread
  t->work = std::move(work);
  t->finished = std::move(finished);
  std::thread(Serve, t).detach();
}

void Crew::Run(std::function<void()> fn) {
  auto part = std::make_shared<Part>();
  part->fn = std::move(fn);
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++running_;
    parts_.push_back(part);
  }
  // A part that Wait cancelled touches neither its function nor this Crew, which may be
  // gone by the time its thread starts.
  RunOnKeptThread(
      [part] {
        if (part->claimed.exchange(true)) {
          part->fn = nullptr;
          return;
        }
        try {
          part->fn();
        } catch (...) {
          part->error = std::current_exception();
        }
      },
      [this, part] {
        if (!part->fn) return;  // cancelled
        part->fn = nullptr;
        // Notified under the lock: once it is let go the waiter may destroy this Crew.
        std::lock_guard<std::mutex> lock(mu_);
        if (part->error && !error_) error_ = part->error;
        --running_;
        idle_.notify_all();
      });
}

void Crew::WaitQuietly() {
  std::unique_lock<std::mutex> lock(mu_);
  for (const std::shared_ptr<Part>& part : parts_) {
    if (!part->claimed.exchange(true)) --running_;  // not started: it never will
  }
  parts_.clear();
  idle_.wait(lock, [&] { return running_ == 0; });
}

void Crew::Wait() {
  WaitQuietly();
  std::lock_guard<std::mutex> lock(mu_);
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

}  // namespace torch2pprof
