#include "base/executor.h"

namespace torch2pprof {

struct Executor::Worker {
  std::condition_variable wake;
  Part part;
  bool has_part = false;
  std::thread thread;
};

Executor::Executor(int threads) : threads_(std::max(1, threads)) {}

Executor::~Executor() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    queue_.clear();
    for (auto& w : workers_) w->wake.notify_one();
  }
  for (auto& w : workers_) w->thread.join();
}

void Executor::Submit(std::function<void()> work, std::function<void()> finished) {
  std::lock_guard<std::mutex> lock(mu_);
  queue_.push_back(Part{std::move(work), std::move(finished), false});
  DispatchLocked();
}

int Executor::Hold(int wanted) {
  std::lock_guard<std::mutex> lock(mu_);
  int granted = std::max(0, std::min(wanted, threads_ - 1 - busy_));
  busy_ += granted;
  return granted;
}

void Executor::Release(int count) {
  std::lock_guard<std::mutex> lock(mu_);
  busy_ -= count;
  DispatchLocked();
}

void Executor::SubmitHeld(std::function<void()> work, std::function<void()> finished) {
  std::lock_guard<std::mutex> lock(mu_);
  StartLocked(Part{std::move(work), std::move(finished), true});
}

void Executor::DispatchLocked() {
  while (!queue_.empty() && busy_ < threads_ - 1) {
    ++busy_;
    Part part = std::move(queue_.front());
    queue_.pop_front();
    StartLocked(std::move(part));
  }
}

void Executor::StartLocked(Part part) {
  Worker* w;
  if (!idle_.empty()) {
    w = idle_.back();
    idle_.pop_back();
  } else {
    workers_.push_back(std::make_unique<Worker>());
    w = workers_.back().get();
    w->thread = std::thread([this, w] { Serve(w); });
  }
  w->part = std::move(part);
  w->has_part = true;
  w->wake.notify_one();
}

void Executor::Serve(Worker* self) {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    self->wake.wait(lock, [&] { return self->has_part || stopping_; });
    if (!self->has_part) return;
    Part part = std::move(self->part);
    self->has_part = false;
    lock.unlock();
    part.work();
    part.work = nullptr;  // what it captured goes before the caller hears it finished
    lock.lock();
    if (!part.held) --busy_;  // a held thread stays counted until its holder releases it
    idle_.push_back(self);
    DispatchLocked();
    lock.unlock();
    part.finished();
    part.finished = nullptr;
    lock.lock();
  }
}

}  // namespace torch2pprof
