#include "base/parallel_for.h"

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

}  // namespace torch2pprof
