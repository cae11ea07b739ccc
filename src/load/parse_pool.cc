#include "load/parse_pool.h"

#include <utility>

namespace torch2pprof {

ParsePool::ParsePool(Crew& workers, bool details, Merge merge, const ByteSource* ranges)
    : merge_(std::move(merge)),
      slots_(static_cast<size_t>(workers.held() + 3)),
      details_(details),
      spare_(static_cast<size_t>(workers.held() + 1)),
      ranges_(ranges),
      workers_(workers) {
  for (int w = 0; w < workers.held(); ++w) workers_.Run([this, w] { Work(w); });
}

ParsePool::~ParsePool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    StopLocked(nullptr);
  }
  workers_.Wait();
}

void ParsePool::StopLocked(std::exception_ptr error) {
  if (!stopped_) error_ = std::move(error);
  stopped_ = true;
  space_.notify_all();
  work_.notify_all();
  turn_.notify_all();
  done_.notify_all();
}

std::unique_ptr<Chunk> ParsePool::Emit(std::unique_ptr<Chunk> chunk) {
  std::unique_lock<std::mutex> lock(mu_);
  space_.wait(lock, [&] { return next_in_ - next_out_ < slots_.size() || stopped_; });
  if (stopped_) throw Cancelled{};
  uint64_t seq = next_in_++;
  At(seq).chunk = std::move(chunk);
  At(seq).state = State::kParsing;
  At(seq).range = Range{};
  todo_.push_back(seq);
  work_.notify_one();
  HelpIfFull(lock);
  if (free_.empty()) return std::make_unique<Chunk>();
  std::unique_ptr<Chunk> reuse = std::move(free_.back());
  free_.pop_back();
  return reuse;
}

bool ParsePool::EmitRange(const Range& range) {
  std::unique_lock<std::mutex> lock(mu_);
  space_.wait(lock, [&] { return next_in_ - next_out_ < slots_.size() || stopped_ || fell_back_; });
  if (stopped_) throw Cancelled{};
  if (fell_back_) return false;
  uint64_t seq = next_in_++;
  Slot& s = At(seq);
  if (free_.empty()) {
    s.chunk = std::make_unique<Chunk>();
  } else {
    s.chunk = std::move(free_.back());
    free_.pop_back();
  }
  s.range = range;
  s.state = State::kParsing;
  todo_.push_back(seq);
  work_.notify_one();
  HelpIfFull(lock);
  return true;
}

void ParsePool::HelpIfFull(std::unique_lock<std::mutex>& lock) {
  if (workers_.held() > kMostWorkersHelped || todo_.empty() || next_in_ - next_out_ < slots_.size()) return;
  // Every slot is taken, and the next chunk would wait for one: the oldest waiting chunk
  // is parsed here instead, as by one more worker (the last index). So the scanner, whose
  // chunks the workers wait for, is never a third thread on two busy cores, and a load
  // whose workers have not started yet still moves.
  if (!helper_) helper_ = std::make_unique<EventParser>();
  uint64_t oldest = todo_.front();
  todo_.pop_front();
  ParseAndMerge(oldest, static_cast<int>(spare_.size()) - 1, *helper_, lock);
  if (stopped_) throw Cancelled{};
}

void ParsePool::EndRanges(Resume* resume) {
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [&] { return stopped_ || (next_out_ == next_in_ && !merging_); });
  if (stopped_) throw Cancelled{};
  if (fell_back_) {
    *resume = resume_;
  } else {
    resume->events = range_events_;
    resume->bytes = range_bytes_;
  }
  fell_back_ = false;
  range_events_ = range_bytes_ = 0;
}

void ParsePool::EmitError(std::exception_ptr error) {
  std::unique_lock<std::mutex> lock(mu_);
  space_.wait(lock, [&] { return next_in_ - next_out_ < slots_.size() || stopped_; });
  if (stopped_) return;
  uint64_t seq = next_in_++;
  At(seq).error = std::move(error);
  At(seq).range = Range{};
  At(seq).state = State::kParsing;
  Parsed(seq, lock);
}

void ParsePool::Finish() {
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [&] { return stopped_ || (next_out_ == next_in_ && !merging_); });
  StopLocked(nullptr);
  if (error_) std::rethrow_exception(error_);
}

void ParsePool::Work(int worker) {
  EventParser parser;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    work_.wait(lock, [&] { return !todo_.empty() || stopped_; });
    if (stopped_) return;
    uint64_t seq = todo_.front();
    todo_.pop_front();
    ParseAndMerge(seq, worker, parser, lock);
  }
}

void ParsePool::ParseAndMerge(uint64_t seq, int worker, EventParser& parser, std::unique_lock<std::mutex>& lock) {
  Slot& s = At(seq);
  s.batch = TakeBatch(worker);
  s.worker = worker;
  lock.unlock();
  // The slot is this thread's until it is parsed: nobody else touches it.
  try {
    s.batch->Clear();
    s.uncut = s.range.len > 0 && !CutRange(*ranges_, s.range, s.chunk.get());
    s.events = s.chunk->starts.size();
    if (!s.uncut) parser.Parse(s.chunk->data(), s.chunk->len, s.chunk->capacity(), s.chunk->starts, *s.batch);
  } catch (...) {
    s.error = std::current_exception();
  }
  lock.lock();
  free_.push_back(std::move(s.chunk));
  Parsed(seq, lock);
}

EventBatch* ParsePool::TakeBatch(int worker) {
  // One batch per slot at most, as many as ever in flight: a worker whose own are all in
  // flight takes another's spare once every slot has one.
  std::vector<EventBatch*>* from = &spare_[static_cast<size_t>(worker)];
  if (from->empty() && batches_.size() < slots_.size()) {
    batches_.push_back(std::make_unique<EventBatch>(details_));
    return batches_.back().get();
  }
  for (size_t w = 0; from->empty(); ++w) from = &spare_[w];
  EventBatch* batch = from->back();
  from->pop_back();
  return batch;
}

void ParsePool::Parsed(uint64_t seq, std::unique_lock<std::mutex>& lock) {
  At(seq).state = State::kWaiting;
  for (;;) {
    if (stopped_ || next_out_ > seq) return;
    if (seq == next_out_ && !merging_) break;
    bool earlier_parsing = false;
    for (uint64_t k = next_out_; k < seq && !earlier_parsing; ++k) earlier_parsing = At(k).state == State::kParsing;
    if (earlier_parsing) {
      At(seq).state = State::kLeft;
      return;
    }
    turn_.wait(lock);
  }
  merging_ = true;
  do {
    Slot& s = At(next_out_);
    // From a range that could not be cut on, the text is the scanner's: dropped.
    if (!fell_back_ && s.uncut) {
      fell_back_ = true;
      resume_ = Resume{s.range.offset, s.range.after_event, range_events_, s.range.offset + s.range.len, range_bytes_};
      space_.notify_one();
    }
    const bool drop = fell_back_;
    if (!drop && s.range.len > 0) range_events_ += s.events, range_bytes_ += s.range.len;
    std::exception_ptr error = drop ? nullptr : s.error;
    lock.unlock();
    if (!error && !drop) {
      try {
        merge_(*s.batch);  // a slot of EmitError has no batch, and an error
      } catch (...) {
        error = std::current_exception();
      }
    }
    lock.lock();
    s.error = nullptr;
    s.uncut = false;
    s.state = State::kFree;
    if (s.batch) spare_[static_cast<size_t>(s.worker)].push_back(s.batch);
    s.batch = nullptr;
    ++next_out_;
    space_.notify_one();
    if (error) {
      // Stopped before the lock is let go: no later batch may be merged (and fail first).
      merging_ = false;
      StopLocked(error);
      return;
    }
  } while (next_out_ < next_in_ && At(next_out_).state == State::kLeft && !stopped_);
  merging_ = false;
  turn_.notify_all();
  if (next_out_ == next_in_) done_.notify_all();
}

}  // namespace torch2pprof
