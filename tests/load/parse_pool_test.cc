// The parse pool: batches are merged one at a time in the order their chunks were
// emitted, whichever worker parsed them and however long each took; the first error in
// that order is the one Finish throws, and nothing after it is merged.
#include "load/parse_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace torch2pprof {
namespace {

// A chunk of `count` events named "c<chunk>.<k>", each with a padding string whose
// length varies, so that chunks take the workers different times.
std::unique_ptr<Chunk> MakeChunk(int chunk, int count) {
  auto c = std::make_unique<Chunk>();
  std::string text = "[";
  for (int k = 0; k < count; ++k) {
    if (k) text += ", ";
    c->starts.push_back(ChunkStart{text.size(), static_cast<uint64_t>(chunk) * 1000000 + text.size()});
    text += "{\"ph\": \"X\", \"name\": \"c" + std::to_string(chunk) + "." + std::to_string(k) +
            "\", \"ts\": 1, \"dur\": 2, \"pad\": \"" + std::string(static_cast<size_t>((chunk * 37 + k) % 400), 'p') +
            "\"}";
  }
  text += "]";
  c->len = text.size();
  text.append(kPadding, ' ');
  c->buf.assign(text.begin(), text.end());
  return c;
}

int EventsIn(int chunk) { return 1 + (chunk * 7919) % 300; }

// The names of the events merged, in the order they were merged; the merge runs on
// one thread at a time (checked: a second one inside it fails the test).
struct Merged {
  std::vector<std::string> names;
  std::mutex busy;
  void Add(const EventBatch& batch) {
    std::unique_lock<std::mutex> one(busy, std::try_to_lock);
    ASSERT_TRUE(one.owns_lock()) << "two merges at once";
    for (const BatchEvent& e : batch.events()) names.emplace_back(batch.strings()[e.name]);
  }
};

std::vector<std::string> Expected(int chunks) {
  std::vector<std::string> names;
  for (int c = 0; c < chunks; ++c) {
    for (int k = 0; k < EventsIn(c); ++k) names.push_back("c" + std::to_string(c) + "." + std::to_string(k));
  }
  return names;
}

// The emitting thread parses the oldest waiting chunk itself whenever every slot is
// taken (up to kMostWorkersHelped workers): its batches merge in the same order.
TEST(ParsePool, MergesInTheOrderChunksWereEmittedWithAnyNumberOfWorkers) {
  constexpr int kChunks = 400;
  for (int workers : {1, 2, 3, 6}) {
    Executor ex(workers + 1);
    Crew crew(ex, workers);
    ASSERT_EQ(crew.held(), workers);
    Merged merged;
    ParsePool pool(crew, false, [&](const EventBatch& b) { merged.Add(b); });
    for (int c = 0; c < kChunks; ++c) pool.Emit(MakeChunk(c, EventsIn(c)));
    pool.Finish();
    EXPECT_EQ(merged.names, Expected(kChunks)) << workers << " workers";
  }
}

// 200 chunks through a pool of `workers` whose merges are slow, so the pipeline fills:
// the batches merged on the emitting thread (it merges only what it parsed). The order
// holds whichever thread parsed.
int MergesOnTheEmitter(int workers) {
  Merged merged;
  std::atomic<int> on_emitter{0};
  const std::thread::id emitter = std::this_thread::get_id();
  Executor ex(workers + 1);
  Crew crew(ex, workers);
  EXPECT_EQ(crew.held(), workers);
  ParsePool pool(crew, false, [&](const EventBatch& b) {
    if (std::this_thread::get_id() == emitter) ++on_emitter;
    std::this_thread::sleep_for(std::chrono::microseconds(300));
    merged.Add(b);
  });
  for (int c = 0; c < 200; ++c) pool.Emit(MakeChunk(c, EventsIn(c)));
  pool.Finish();
  EXPECT_EQ(merged.names, Expected(200)) << workers << " workers";
  return on_emitter.load();
}

// A worker that merges slowly: the pipeline fills, and the emitting thread parses (and
// merges, when their turn comes) chunks of its own. The order holds, and an error in one
// of them is thrown in its place.
TEST(ParsePool, TheEmittingThreadHelpsWhenTheWorkersFallBehind) {
  for (int workers : {1, 2}) EXPECT_GT(MergesOnTheEmitter(workers), 0) << workers << " workers";
}

// With more workers than kMostWorkersHelped the emitting thread never parses (nor so
// merges): it waits for a slot, and the order still holds.
TEST(ParsePool, WithManyWorkersTheEmittingThreadOnlyEmits) { EXPECT_EQ(MergesOnTheEmitter(kMostWorkersHelped + 3), 0); }

TEST(ParsePool, TheFirstFailedMergeIsThrownAndNothingAfterItIsMerged) {
  for (int workers : {1, 2, 5}) {
    Merged merged;
    int batches = 0;
    Executor ex(workers + 1);
    Crew crew(ex, workers);
    ParsePool pool(crew, false, [&](const EventBatch& b) {
      if (batches++ == 150) throw std::runtime_error("merge 150");
      merged.Add(b);
    });
    try {
      for (int c = 0; c < 400; ++c) pool.Emit(MakeChunk(c, EventsIn(c)));
    } catch (const ParsePool::Cancelled&) {  // the scanner stops once a merge failed
    }
    try {
      pool.Finish();
      ADD_FAILURE() << "no error";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), "merge 150");
    }
    EXPECT_EQ(merged.names, Expected(150)) << workers << " workers";
  }
}

TEST(ParsePool, AnErrorOfTheScannerComesAfterEveryChunkEmittedBeforeIt) {
  for (int workers : {1, 2, 4}) {
    Merged merged;
    Executor ex(workers + 1);
    Crew crew(ex, workers);
    ParsePool pool(crew, false, [&](const EventBatch& b) { merged.Add(b); });
    for (int c = 0; c < 60; ++c) pool.Emit(MakeChunk(c, EventsIn(c)));
    pool.EmitError(std::make_exception_ptr(std::runtime_error("scanner")));
    EXPECT_THROW(pool.Finish(), std::runtime_error);
    EXPECT_EQ(merged.names, Expected(60)) << workers << " workers";
  }
}

}  // namespace
}  // namespace torch2pprof
