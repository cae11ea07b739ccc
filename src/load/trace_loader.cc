// The loader never holds the whole JSON text: a scanner walks the top level and hands
// on its read buffers as chunks of whole event objects (json_scanner), parsers read each
// chunk with simdjson on-demand into a batch (event_parser, event_batch), and the
// builder merges the batches in file order into the Trace (event_builder). Where the
// call's executor has threads free, chunks are parsed and merged on them while the
// calling thread scans (parse_pool); from a plain file the workers read and cut ranges of
// the text themselves, the scanner cutting only where a range holds more than plain
// events. The result is the same.
#include "load/loader.h"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/executor.h"
#include "load/byte_source.h"
#include "load/event_builder.h"
#include "load/json_scanner.h"
#include "load/parse_pool.h"
#include "torch2pprof/error.h"

namespace torch2pprof {
namespace {

// Parses each chunk as soon as it is cut, and adds it: the one-thread loader.
class DirectSink final : public ChunkSink {
 public:
  DirectSink(EventBuilder& builder, bool details) : builder_(builder), batch_(details) {}
  std::unique_ptr<Chunk> Emit(std::unique_ptr<Chunk> chunk) override {
    batch_.Clear();
    parser_.Parse(chunk->data(), chunk->len, chunk->capacity(), chunk->starts, batch_);
    builder_.Add(batch_);
    return chunk;
  }

 private:
  EventBuilder& builder_;
  EventParser parser_;
  EventBatch batch_;
};

Trace Load(ByteSource& src, const LoadOptions& options, Executor& ex) {
  Trace trace;
  trace.file = src.name();
  src.set_allow_truncated(options.allow_truncated, " (--allow-truncated keeps the events before the cut)");
  // An upper estimate of the events, for the builder's reservations: Kineto writes
  // ~150-300 bytes per event and gzip shrinks it 14-16x.
  uint64_t expected_json = src.input_size() * (src.gzipped() ? 20 : 1);
  size_t expected_events = static_cast<size_t>(std::min<uint64_t>(expected_json / 100, uint64_t{1} << 31));
  EventBuilder builder(&trace, trace.file, options, expected_events);
  Scanner scanner(src, options.strict, options.allow_truncated, options.range_bytes);
  // Past ~8 workers the in-order merge, one thread, sets the pace and each worker only
  // adds its buffers (measured: docs/performance.md, the parse workers on 16 cores).
  // The workers hold their threads for the whole load: the scanner waits for them. Where
  // the executor has none free (several loads side by side), the load is this thread's.
  Crew workers(ex, std::min(ex.threads() - 1, kMaxParseWorkers));
  if (workers.held() == 0) {
    DirectSink sink(builder, options.details);
    scanner.Run(sink);
  } else {
    // A file's text is read and cut on the workers too (ParsePool::EmitRange); gzip's
    // inflate and a pipe are read and cut in order by the scanner. Either way the
    // scanner parses a chunk itself whenever the workers fall behind.
    // The pool, its workers' parsers, chunks and batches, is freed at the end of this
    // block, before the rest of the load allocates (analyze's peak is lower so).
    ParsePool pool(
        workers, options.details, [&builder](const EventBatch& batch) { builder.Add(batch); },
        src.seekable() ? &src : nullptr);
    try {
      scanner.Run(pool);
    } catch (const ParsePool::Cancelled&) {
    } catch (...) {
      pool.EmitError(std::current_exception());  // after what was cut before: an earlier error wins
    }
    pool.Finish();
  }
  trace.header = std::move(scanner.header());
  trace.stats.json_bytes = src.uncompressed_offset();
  trace.stats.cut_on_workers = scanner.cut_on_workers();
  trace.stats.events += scanner.not_objects();
  trace.stats.skipped[static_cast<int>(Skip::kNotAnObject)] += scanner.not_objects();
  trace.stats.skipped[static_cast<int>(Skip::kGarbage)] += scanner.garbage();
  std::vector<uint64_t>& bad = trace.stats.bad_offsets;
  bad.insert(bad.end(), scanner.garbage_offsets().begin(), scanner.garbage_offsets().end());
  std::sort(bad.begin(), bad.end());
  if (bad.size() > kMaxBadOffsets) bad.resize(kMaxBadOffsets);
  trace.stats.truncated = scanner.truncated() || src.truncated();
  if (trace.stats.truncated) trace.stats.truncated_at = src.uncompressed_offset();
  builder.Finish();
  return trace;
}

// The stage functions read traces alone.
void ExpectTrace(const Input& in) {
  if (!in.probe().refused.empty()) ThrowInput(in.name(), -1, in.probe().refused);
  if (in.kind() != InputKind::kTrace)
    ThrowInput(in.name(), -1, std::string(InputKindName(in.kind())) + ", not a trace");
}

// An input of any kind, read into what its route says (ReadingOf).
LoadedInput LoadOne(const LoadOptions& options, Executor& ex, const std::function<void(const Input&)>& check) {
  LoadedInput out;
  out.input = std::make_unique<Input>(options.path, options.bytes_read);
  Input& in = *out.input;
  out.kind = in.kind();
  out.file = in.name();
  check(in);
  const Reading& reading = ReadingOf(in.kind());
  if (reading.into == ReadInto::kTrace) {
    out.trace = Load(in.source(), options, ex);
    out.input.reset();
  } else if (reading.profile) {
    out.profile = reading.profile(in.source(), options);
    out.input.reset();
  }
  return out;
}

}  // namespace

Trace LoadTrace(ByteSource& source, const LoadOptions& options, Executor& ex) { return Load(source, options, ex); }

Trace LoadTrace(const LoadOptions& options, Executor& ex) {
  Input in(options.path, options.bytes_read);
  ExpectTrace(in);
  return Load(in.source(), options, ex);
}

Trace LoadTrace(const LoadOptions& options) {
  Executor ex(options.threads);
  return LoadTrace(options, ex);
}

void LoadEach(const std::vector<LoadOptions>& inputs, int workers, const std::function<void(Trace&)>& use) {
  Executor ex(workers);
  LoadEach(inputs, ex, ExpectTrace, [&](LoadedInput& in) { use(in.trace); });
}

// Several inputs: a window of loads on the executor's threads, used strictly in order.
void LoadEach(const std::vector<LoadOptions>& inputs, Executor& ex, const std::function<void(const Input&)>& check,
              const std::function<void(LoadedInput&)>& use) {
  const size_t n = inputs.size();
  // At most `window` inputs in memory, the one in use included; the loaders hold their
  // threads (the caller waits for them), the caller's `use` is the last of the budget.
  const size_t window = static_cast<size_t>(ex.threads());
  auto one_by_one = [&] {
    for (const LoadOptions& input : inputs) {
      LoadedInput loaded = LoadOne(input, ex, check);
      use(loaded);
    }
  };
  if (n <= 1) return one_by_one();
  Crew pool(ex, static_cast<int>(std::min(window, n)));
  if (pool.held() == 0) return one_by_one();
  std::vector<std::unique_ptr<LoadedInput>> ready(n);
  std::vector<std::exception_ptr> errors(n);
  std::mutex mu;
  std::condition_variable changed;
  size_t next = 0, used = 0;
  bool stop = false;
  auto load = [&] {
    for (;;) {
      size_t i;
      {
        std::unique_lock<std::mutex> lock(mu);
        changed.wait(lock, [&] { return stop || next >= n || next < used + window; });
        if (stop || next >= n) return;
        i = next++;
      }
      std::unique_ptr<LoadedInput> loaded;
      std::exception_ptr error;
      try {
        loaded = std::make_unique<LoadedInput>(LoadOne(inputs[i], ex, check));
      } catch (...) {
        error = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mu);
      ready[i] = std::move(loaded);
      errors[i] = error;
      changed.notify_all();
    }
  };
  for (int t = 0; t < pool.held(); ++t) pool.Run(load);
  auto finish = [&] {
    {
      std::lock_guard<std::mutex> lock(mu);
      stop = true;
    }
    changed.notify_all();
    pool.Wait();
  };
  try {
    for (size_t i = 0; i < n; ++i) {
      std::unique_ptr<LoadedInput> loaded;
      {
        std::unique_lock<std::mutex> lock(mu);
        changed.wait(lock, [&] { return ready[i] || errors[i]; });
        if (errors[i]) std::rethrow_exception(errors[i]);
        loaded = std::move(ready[i]);
      }
      use(*loaded);
      loaded.reset();  // before the next load may start
      std::lock_guard<std::mutex> lock(mu);
      ++used;
      changed.notify_all();
    }
  } catch (...) {
    finish();
    throw;
  }
  finish();
}

std::vector<std::string> LoadWarnings(const Trace& trace) {
  std::vector<std::string> out;
  const LoadStats& st = trace.stats;
  if (st.bad_total() > 0) {
    std::string why, where;
    for (Skip k : {Skip::kBadJson, Skip::kBadValue, Skip::kGarbage}) {
      uint64_t n = st.skipped[static_cast<int>(k)];
      if (n)
        why += (why.empty() ? "" : ", ") + std::string(kSkipReasons[static_cast<int>(k)].key) + " " + std::to_string(n);
    }
    for (uint64_t off : st.bad_offsets) where += (where.empty() ? "" : ", ") + std::to_string(off);
    out.push_back(trace.file + ": warning: skipped " + std::to_string(st.bad_total()) + " unreadable events or text (" +
                  why + ") at bytes " + where + (st.bad_total() > st.bad_offsets.size() ? ", ..." : "") +
                  "; --strict makes this an error");
  }
  if (st.repaired > 0) {
    out.push_back(trace.file + ": warning: repaired and kept " + std::to_string(st.repaired) +
                  " events with broken JSON (control characters, lone backslashes, stray quotes, invalid UTF-8 or "
                  "bare values in strings)");
  }
  uint64_t python_dropped = st.skipped[static_cast<int>(Skip::kPythonAfterParent)];
  if (st.python_clipped + python_dropped > 0) {
    out.push_back(trace.file + ": warning: " + std::to_string(st.python_clipped + python_dropped) +
                  " python_function events outlived their Python parent: " + std::to_string(st.python_clipped) +
                  " now end with it, " + std::to_string(python_dropped) +
                  " that began after it were dropped (docs/reference.md: broken traces)");
  }
  if (st.truncated) {
    out.push_back(trace.file + ": byte " + std::to_string(st.truncated_at) +
                  ": warning: the trace is truncated; kept the " + std::to_string(st.events) +
                  " complete events before the cut");
  }
  return out;
}

Trace LoadTraceFromMemory(std::string_view data, const std::string& name, const LoadOptions& options) {
  ByteSource src(data, name);
  Executor ex(options.threads);
  return Load(src, options, ex);
}

}  // namespace torch2pprof
