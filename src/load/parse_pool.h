// Parses the scanner's chunks on worker threads and merges the batches in the order the
// chunks were cut, so that the trace built from them never depends on the threads.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "base/executor.h"
#include "load/byte_source.h"
#include "load/event_batch.h"
#include "load/json_scanner.h"

namespace torch2pprof {

// Parse workers one load uses at most, whatever --threads says (load/trace_loader.cc).
inline constexpr int kMaxParseWorkers = 8;
// The emitting thread parses a chunk itself (when every slot is taken) only in a pool of
// at most this many workers. With more, the chunk it parses holds up the ranges it hands
// out, and the workers, each done sooner, wait for them (measured: docs/performance.md,
// "The scanner's help, past 3 workers").
inline constexpr int kMostWorkersHelped = 3;

// A worker that parsed a batch merges it itself when its turn comes: the batch is still
// in its core's cache (read on another core, a batch cost the parse a fifth more). It
// waits for the turn only while every earlier batch is parsed and waits to be merged
// (a short wait); while an earlier one is still being parsed it leaves its batch to the
// worker that merges the one before, and parses the next chunk.
class ParsePool final : public ChunkSink {
 public:
  struct Cancelled {};  // thrown to the scanner once a merge or parse failed
  using Merge = std::function<void(const EventBatch&)>;

  // Its workers are `workers`' parts, one per thread it holds; at most held() + 3 chunks
  // are in flight (a parser left behind rarely holds more than one): the memory per worker
  // is fixed. merge runs on one thread at a time, batch after batch in file order. With
  // `ranges`, the workers read and cut ranges of it themselves (EmitRange). The thread
  // that emits chunks or ranges parses the oldest waiting one itself whenever every slot
  // is taken, in a pool of at most kMostWorkersHelped workers: it then counts as one of
  // the call's threads (see Emit). With more, it waits for a slot.
  ParsePool(Crew& workers, bool details, Merge merge, const ByteSource* ranges = nullptr);
  ~ParsePool();

  // The scanner's side: a full chunk in, an empty one back.
  std::unique_ptr<Chunk> Emit(std::unique_ptr<Chunk> chunk) override;
  void EmitError(std::exception_ptr error);  // the scanner failed here: an error in its place
  // A range a worker reads and cuts. Once one could not be cut, the ranges after it are
  // dropped as they come, and the scanner cuts from its start itself.
  bool TakesRanges() const override { return ranges_ != nullptr; }
  bool EmitRange(const Range& range) override;
  void EndRanges(Resume* resume) override;
  // After the scanner's last chunk: waits until every batch is merged and the workers
  // call merge no more, and rethrows the first error in file order.
  void Finish();

 private:
  enum class State : uint8_t {
    kFree,
    kParsing,  // emitted, not yet parsed
    kWaiting,  // parsed; its worker waits to merge it
    kLeft,     // parsed; whoever merges the one before merges it
  };
  struct Slot {
    std::unique_ptr<Chunk> chunk;
    EventBatch* batch = nullptr;  // the parsing worker's own
    int worker = -1;
    std::exception_ptr error;
    State state = State::kFree;
    Range range;         // len > 0: a range the worker reads and cuts, `events` long once cut
    bool uncut = false;  // a range the worker could not cut
    size_t events = 0;
  };
  void Work(int worker);
  // Parses seq, taken from todo_, on this thread as `worker`, then merges or leaves it.
  // Called and returns with the lock held.
  void ParseAndMerge(uint64_t seq, int worker, EventParser& parser, std::unique_lock<std::mutex>& lock);
  EventBatch* TakeBatch(int worker);  // with the lock held
  // seq was parsed (or failed) on this thread: merge it and the batches left after it
  // when its turn comes, or leave it.
  void Parsed(uint64_t seq, std::unique_lock<std::mutex>& lock);
  void StopLocked(std::exception_ptr error);  // with the lock held
  Slot& At(uint64_t seq) { return slots_[seq % slots_.size()]; }

  // The scanner's side of Emit and EmitRange: parses the oldest waiting chunk once every
  // slot is taken. Called and returns with the lock held; throws Cancelled once stopped.
  void HelpIfFull(std::unique_lock<std::mutex>& lock);

  Merge merge_;
  std::unique_ptr<EventParser> helper_;  // the emitting thread's, once it helps
  std::mutex mu_;
  // The scanner waits for a free slot, workers for a chunk or their turn, Finish for the end.
  std::condition_variable space_, work_, turn_, done_;
  std::vector<Slot> slots_;
  std::deque<uint64_t> todo_;  // chunks to parse, by sequence
  std::vector<std::unique_ptr<Chunk>> free_;
  // Batches by worker: a worker fills the one it merged last, still in its core's cache.
  bool details_;
  std::vector<std::unique_ptr<EventBatch>> batches_;
  std::vector<std::vector<EventBatch*>> spare_;
  uint64_t next_in_ = 0, next_out_ = 0;  // next_out_: the next batch to merge
  bool merging_ = false, stopped_ = false;
  const ByteSource* ranges_;
  // Set at the first range that could not be cut, until EndRanges: later ones are dropped.
  bool fell_back_ = false;
  Resume resume_;
  uint64_t range_events_ = 0, range_bytes_ = 0;  // in the ranges merged since the last EndRanges
  std::exception_ptr error_;                     // the first in file order
  Crew& workers_;                                // waited for in the destructor, before the rest goes
};

}  // namespace torch2pprof
