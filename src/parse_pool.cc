#include "parse_pool.h"

namespace torch2pprof {

ParsePool::ParsePool(int workers, bool details) : slots_(static_cast<size_t>(2 * workers + 2)) {
  for (Slot& s : slots_) s.batch = std::make_unique<EventBatch>(details);
  for (int w = 0; w < workers; ++w) workers_.emplace_back([this] { Work(); });
}

ParsePool::~ParsePool() {
  Cancel();
  for (std::thread& t : workers_) t.join();
}

std::unique_ptr<Chunk> ParsePool::Emit(std::unique_ptr<Chunk> chunk) {
  std::unique_lock<std::mutex> lock(mu_);
  space_.wait(lock, [&] { return next_in_ - next_out_ < slots_.size() || cancelled_; });
  if (cancelled_) throw Cancelled{};
  uint64_t seq = next_in_++;
  At(seq).chunk = std::move(chunk);
  todo_.push_back(seq);
  work_.notify_one();
  if (free_.empty()) return std::make_unique<Chunk>();
  std::unique_ptr<Chunk> reuse = std::move(free_.back());
  free_.pop_back();
  return reuse;
}

void ParsePool::EmitError(std::exception_ptr error) {
  std::unique_lock<std::mutex> lock(mu_);
  space_.wait(lock, [&] { return next_in_ - next_out_ < slots_.size() || cancelled_; });
  if (cancelled_) return;
  Slot& s = At(next_in_++);
  s.error = std::move(error);
  s.ready = true;
  ready_.notify_one();
}

void ParsePool::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
  ready_.notify_one();
}

void ParsePool::Cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_ = true;
  space_.notify_all();
  work_.notify_all();
  ready_.notify_all();
}

void ParsePool::Work() {
  EventParser parser;
  for (;;) {
    uint64_t seq;
    Slot* s;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_.wait(lock, [&] { return !todo_.empty() || cancelled_; });
      if (cancelled_) return;
      seq = todo_.front();
      todo_.pop_front();
      s = &At(seq);
    }
    // The slot is this worker's until it is ready: nobody else touches it.
    try {
      s->batch->Clear();
      parser.Parse(s->chunk->data(), s->chunk->len, s->chunk->capacity(), s->chunk->starts, *s->batch);
    } catch (...) {
      s->error = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(std::move(s->chunk));
    s->ready = true;
    // The consumer waits only for the next batch in order.
    if (seq == next_out_) ready_.notify_one();
  }
}

const EventBatch* ParsePool::Next() {
  std::unique_lock<std::mutex> lock(mu_);
  ready_.wait(lock,
              [&] { return (next_out_ < next_in_ && At(next_out_).ready) || (closed_ && next_out_ == next_in_); });
  if (next_out_ == next_in_) return nullptr;
  Slot& s = At(next_out_);
  if (s.error) std::rethrow_exception(s.error);
  return s.batch.get();
}

void ParsePool::Done() {
  std::lock_guard<std::mutex> lock(mu_);
  Slot& s = At(next_out_++);
  s.ready = false;
  s.error = nullptr;
  space_.notify_one();
}

}  // namespace torch2pprof
