// Parses the scanner's chunks on worker threads and hands the batches on in the order
// the chunks were cut, so that the trace built from them never depends on the threads.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "event_batch.h"
#include "json_scanner.h"

namespace torch2pprof {

// Parse workers one load uses at most, whatever --threads says (trace_loader.cc).
inline constexpr int kMaxParseWorkers = 6;

class ParsePool final : public ChunkSink {
 public:
  struct Cancelled {};  // thrown to the scanner's thread once the consumer gave up

  // At most 2 * workers + 2 chunks are in flight: the memory per worker is fixed.
  ParsePool(int workers, bool details);
  ~ParsePool();

  // The scanner's side: a full chunk in, an empty one back.
  std::unique_ptr<Chunk> Emit(std::unique_ptr<Chunk> chunk) override;
  void EmitError(std::exception_ptr error);  // the scanner failed here: an error in its place
  void Close();                              // the scanner is done

  // The consumer's side: the next batch in order, or nullptr after the last; an error
  // in the stream is rethrown in its place. Done() hands the batch back.
  const EventBatch* Next();
  void Done();
  void Cancel();

 private:
  struct Slot {
    std::unique_ptr<Chunk> chunk;
    std::unique_ptr<EventBatch> batch;
    std::exception_ptr error;
    bool ready = false;
  };
  void Work();
  Slot& At(uint64_t seq) { return slots_[seq % slots_.size()]; }

  std::mutex mu_;
  // One condition each for the scanner (a free slot), the workers (a chunk to parse) and
  // the consumer (the next batch): a change wakes only a thread that can go on.
  std::condition_variable space_, work_, ready_;
  std::vector<Slot> slots_;
  std::deque<uint64_t> todo_;  // chunks to parse, by sequence
  std::vector<std::unique_ptr<Chunk>> free_;
  uint64_t next_in_ = 0, next_out_ = 0;
  bool closed_ = false, cancelled_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace torch2pprof
