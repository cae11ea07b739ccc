// The loader on small hand-made traces: both top-level forms, gzip by magic bytes,
// lanes from numbers and strings, B/E matching, metadata, header, and bad input.
#include "torch2pprof/stages/trace_loader.h"

#include <gtest/gtest.h>

#include <fstream>

#include "convert/aggregator.h"
#include "load/input.h"
#include "load/json_scanner.h"
#include "load/loader.h"
#include "model/lane_builder.h"
#include "test_util.h"
#include "torch2pprof/error.h"
#include "torch2pprof/output.h"
#include "torch2pprof/stages/trace_model.h"

namespace torch2pprof {
namespace {

using testing::LoadText;
using testing::TempDir;

std::string Name(const Trace& t, const Interval& iv) { return std::string(t.strings.Get(iv.name)); }

// Loads text expected to be rejected (with --strict); returns the error.
Error LoadError(const std::string& json) {
  try {
    LoadTraceFromMemory(json, "trace.json", LoadOptions{"", 1, false, /*strict=*/true});
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error for: " << json.substr(0, 80);
  return Error(Error::Kind::kInput, "", -1, "");
}

TEST(TraceLoader, ObjectFormWithHeader) {
  Trace t = LoadText(R"({"schemaVersion": 1, "baseTimeNanoseconds": 1700000000000000000,
    "traceName": "run \"7\"", "deviceProperties": [{"id": 0, "name": "A100"}],
    "traceEvents": [{"ph": "X", "name": "aten::add", "cat": "cpu_op", "pid": 1, "tid": 2, "ts": 5.5, "dur": 2}],
    "displayTimeUnit": "ms"})");
  ASSERT_EQ(t.intervals.size(), 1u);
  EXPECT_EQ(Name(t, t.intervals[0]), "aten::add");
  EXPECT_EQ(t.strings.Get(t.intervals[0].cat), "cpu_op");
  EXPECT_EQ(t.intervals[0].start_ns, 5500);
  EXPECT_EQ(t.intervals[0].end_ns, 7500);
  EXPECT_TRUE(t.header.has_base_time);
  EXPECT_EQ(t.header.base_time_ns, 1700000000000000000);
  EXPECT_EQ(t.header.trace_name, "run \"7\"");
  EXPECT_EQ(t.header.raw.at("deviceProperties"), R"([{"id": 0, "name": "A100"}])");
  EXPECT_EQ(t.header.raw.at("displayTimeUnit"), R"("ms")");
  EXPECT_EQ(t.stats.events, 1u);
}

TEST(TraceLoader, BareArrayFormAndTrailingComma) {
  Trace t = LoadText(R"([{"ph": "X", "name": "a", "pid": "CPU functions", "tid": 1, "ts": 0, "dur": 3},])");
  ASSERT_EQ(t.intervals.size(), 1u);
  EXPECT_EQ(t.lanes[0].pid, "CPU functions");
  EXPECT_EQ(t.lanes[0].tid, "1");
}

TEST(TraceLoader, GzipIsDetectedByMagicBytesNotByName) {
  TempDir dir;
  std::string json = R"({"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1}]})";
  std::string path = dir.Write("looks_plain.json", Gzip(json));
  Trace t = LoadTrace(LoadOptions{path});
  EXPECT_EQ(t.intervals.size(), 1u);
  EXPECT_EQ(t.stats.json_bytes, json.size());
}

TEST(TraceLoader, ConcatenatedGzipMembersAreOneStream) {
  TempDir dir;
  std::string a = R"({"traceEvents": [{"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1},)";
  std::string b = R"({"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 3, "dur": 1}]})";
  Trace t = LoadTrace(LoadOptions{dir.Write("two.json.gz", Gzip(a) + Gzip(b))});
  ASSERT_EQ(t.intervals.size(), 2u);
  EXPECT_EQ(Name(t, t.intervals[1]), "b");
}

TEST(TraceLoader, LanesArePidTidPairsOfNumbersOrStrings) {
  Trace t = LoadText(R"([
    {"ph": "X", "name": "a", "pid": 7, "tid": 1, "ts": 0, "dur": 1},
    {"ph": "X", "name": "b", "pid": 8, "tid": 1, "ts": 0, "dur": 1},
    {"ph": "X", "name": "c", "pid": 7, "tid": "stream 7", "ts": 0, "dur": 1},
    {"ph": "X", "name": "d", "pid": 7.0, "tid": 1e0, "ts": 0, "dur": 1},
    {"ph": "X", "name": "e", "pid": 7.5, "tid": -1, "ts": 0, "dur": 1}])");
  ASSERT_EQ(t.lanes.size(), 4u);  // same tid in two pids is two lanes; 7.0 is 7
  EXPECT_EQ(t.intervals[0].lane, t.intervals[3].lane);
  EXPECT_NE(t.intervals[0].lane, t.intervals[1].lane);
  EXPECT_EQ(t.lanes[t.intervals[2].lane].tid, "stream 7");
  EXPECT_EQ(t.lanes[t.intervals[4].lane].pid, "7.5");
  EXPECT_EQ(t.lanes[t.intervals[4].lane].tid, "-1");
}

TEST(TraceLoader, BeginEndPairsMatchPerLaneInFileOrder) {
  Trace t = LoadText(R"([
    {"ph": "B", "name": "outer", "pid": 1, "tid": 1, "ts": 10},
    {"ph": "B", "name": "other lane", "pid": 1, "tid": 2, "ts": 11},
    {"ph": "B", "name": "inner", "pid": 1, "tid": 1, "ts": 12},
    {"ph": "E", "pid": 1, "tid": 1, "ts": 15},
    {"ph": "E", "pid": 1, "tid": 2, "ts": 16},
    {"ph": "E", "pid": 1, "tid": 1, "ts": 20},
    {"ph": "E", "pid": 1, "tid": 1, "ts": 21},
    {"ph": "B", "name": "empty", "pid": 1, "tid": 1, "ts": 30},
    {"ph": "E", "pid": 1, "tid": 1, "ts": 30},
    {"ph": "B", "name": "open", "pid": 1, "tid": 1, "ts": 40}])");
  ASSERT_EQ(t.intervals.size(), 3u);  // in the order of their B events
  EXPECT_EQ(Name(t, t.intervals[0]), "outer");
  EXPECT_EQ(t.intervals[0].end_ns, 20000);
  EXPECT_EQ(Name(t, t.intervals[1]), "other lane");
  EXPECT_EQ(t.intervals[1].end_ns, 16000);
  EXPECT_EQ(Name(t, t.intervals[2]), "inner");
  EXPECT_EQ(t.intervals[2].end_ns, 15000);
  EXPECT_EQ(t.stats.skipped[static_cast<int>(Skip::kUnmatchedEnd)], 1u);
  EXPECT_EQ(t.stats.skipped[static_cast<int>(Skip::kEmptyPair)], 1u);
  EXPECT_EQ(t.stats.skipped[static_cast<int>(Skip::kUnmatchedBegin)], 1u);
}

TEST(TraceLoader, EventsWithoutTimeAreCountedByReason) {
  Trace t = LoadText(R"([
    {"ph": "X", "name": "zero", "pid": 1, "tid": 1, "ts": 1, "dur": 0},
    {"ph": "X", "name": "negative", "pid": 1, "tid": 1, "ts": 1, "dur": -2},
    {"ph": "X", "name": "no dur", "pid": 1, "tid": 1, "ts": 1},
    {"ph": "X", "name": "null dur", "pid": 1, "tid": 1, "ts": 1, "dur": null},
    {"ph": "X", "name": "no ts", "pid": 1, "tid": 1, "dur": 4},
    {"ph": "i", "name": "[memory]", "pid": 1, "tid": 1, "ts": 1, "s": "t"},
    {"ph": "s", "id": 1, "pid": 1, "tid": 1, "ts": 1}, 17, "text",
    {"ph": "X", "name": "ok", "pid": 1, "tid": 1, "ts": 1, "dur": 1}])");
  EXPECT_EQ(t.intervals.size(), 1u);
  EXPECT_EQ(t.stats.events, 10u);
  auto skipped = [&](Skip s) { return t.stats.skipped[static_cast<int>(s)]; };
  EXPECT_EQ(skipped(Skip::kZeroDuration), 1u);
  EXPECT_EQ(skipped(Skip::kNegativeDuration), 1u);
  EXPECT_EQ(skipped(Skip::kNoDuration), 2u);
  EXPECT_EQ(skipped(Skip::kNoTimestamp), 1u);
  EXPECT_EQ(skipped(Skip::kNotAnObject), 2u);
  EXPECT_EQ(t.stats.phases.at("X"), 6u);
  EXPECT_EQ(t.stats.phases.at("i"), 1u);
  EXPECT_EQ(t.stats.phases.at("s"), 1u);
}

TEST(TraceLoader, ThreadAndProcessNamesFromMetadata) {
  Trace t = LoadText(R"([
    {"ph": "X", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 1},
    {"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "args": {"name": "stream 7"}},
    {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"labels": "x", "name": "GPU 0"}}])");
  ASSERT_GE(t.lanes.size(), 1u);
  EXPECT_EQ(t.lanes[0].thread_name, "stream 7");
  EXPECT_EQ(t.lanes[0].process_name, "GPU 0");
}

TEST(TraceLoader, EscapesUnicodeAndKeyOrder) {
  Trace t = LoadText(
      R"([{"dur": 2, "ts": 1, "tid": 1, "pid": 1, "name": "a\"b\\c \u00e9\ud83d\ude00", "args": {"x": [1, {"y": "]}"}]}, "ph": "X"}])");
  ASSERT_EQ(t.intervals.size(), 1u);
  EXPECT_EQ(Name(t, t.intervals[0]), "a\"b\\c \xc3\xa9\xf0\x9f\x98\x80");
}

TEST(TraceLoader, QuotesAndBackslashesInsideStringsAtEveryReadBoundary) {
  // The scanner finds the end of each event by skipping strings; an escaped quote,
  // an escaped backslash right before a closing quote, and brackets in strings must
  // not fool it, wherever the read boundaries (kReadSize) fall.
  std::string event =
      R"({"ph": "X", "name": "q\"}]\\", "args": {"s": "\\\\\"{[", "t": "\\"}, "pid": 1, "tid": 1, "ts": 1, "dur": 1})";
  std::string json = "[";
  size_t n = 0;
  while (json.size() < (9u << 20)) {
    json += (n ? ",\n" : "") + std::string(n % 7, ' ') + event;
    ++n;
  }
  Trace t = LoadText(json + "]");
  ASSERT_EQ(t.intervals.size(), n);
  EXPECT_EQ(t.strings.Get(t.intervals[n - 1].name), "q\"}]\\");
}

TEST(TraceLoader, ManyChunksAndEventsLargerThanTheReadBuffer) {
  // A chunk is one read (kReadSize): 30,000 events and one 5 MB event cross many.
  std::string json = "{\"traceEvents\": [";
  for (int i = 0; i < 30000; ++i) {
    json += "{\"ph\": \"X\", \"name\": \"op" + std::to_string(i % 97) +
            "\", \"pid\": 1, \"tid\": 1, \"ts\": " + std::to_string(i * 10) +
            ".125, \"dur\": 5, \"args\": {\"pad\": \"" + std::string(60, 'x') + "\"}},\n";
  }
  json +=
      "{\"ph\": \"X\", \"name\": \"" + std::string(5 << 20, 'n') + "\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 1}";
  json += "]}";
  Trace t = LoadText(json);
  ASSERT_EQ(t.intervals.size(), 30001u);
  EXPECT_EQ(t.intervals[29999].start_ns, 299990125);
  EXPECT_EQ(Name(t, t.intervals[29999]), "op" + std::to_string(29999 % 97));
  EXPECT_EQ(t.strings.Get(t.intervals[30000].name).size(), 5u << 20);
  EXPECT_EQ(t.stats.json_bytes, json.size());
}

TEST(TraceLoader, TextBetweenEventsThatIsMoreThanACommaAcrossManyChunks) {
  // A chunk is the scanner's read buffer itself, so the text between its events must
  // be a comma and white space; elsewhere the chunk ends. 40,000 events (about 6 reads),
  // every 997th gap holding something else, every 1,009th event broken (a control
  // character: the chunk is then read event by event, each event's end found before
  // the comma and the white space around it).
  const char* gaps[] = {" ,\n  ", ", 17, ", ", [1, 2],\n", " } ,", ", ,", ", \"x\" ,"};
  std::string json = "{\"traceEvents\": [";
  std::vector<std::string> names;
  uint64_t not_objects = 0, garbage = 0, repaired = 0;
  for (int i = 0; i < 40000; ++i) {
    if (i > 0) {
      const char* gap = i % 997 == 0 ? gaps[(i / 997) % 6] : (i % 3 ? ",\n  " : "\n  ,  ");
      json += gap;
      std::string g = gap;
      not_objects += g == ", 17, " || g == ", [1, 2],\n" || g == ", \"x\" ,";
      garbage += g == " } ," || g == ", ,";
    }
    std::string name = "op" + std::to_string(i);
    if (i % 1009 == 5) {
      json += "{\"ph\": \"X\", \"name\": \"" + name + "\x01\", \"pid\": 1, \"tid\": 1, \"ts\": " + std::to_string(i) +
              ", \"dur\": 1}";
      name += "\x01";
      ++repaired;
    } else {
      json += "{\"ph\": \"X\", \"name\": \"" + name + "\", \"pid\": 1, \"tid\": 1, \"ts\": " + std::to_string(i) +
              ", \"dur\": 1, \"args\": {\"pad\": \"" + std::string(40, 'p') + "\"}}";
    }
    names.push_back(name);
  }
  json += "]}";
  ASSERT_GT(json.size(), 5 * kReadSize);
  ASSERT_GT(garbage, 0u);
  ASSERT_GT(not_objects, 0u);
  testing::TempDir dir;
  std::string path = dir.Write("gaps.json", json);
  for (int threads : {1, 3}) {
    Trace t = LoadTrace(LoadOptions{path, threads});
    ASSERT_EQ(t.intervals.size(), names.size()) << threads;
    for (size_t i = 0; i < names.size(); ++i) {
      ASSERT_EQ(Name(t, t.intervals[i]), names[i]) << threads << " " << i;
      ASSERT_EQ(t.intervals[i].start_ns, static_cast<int64_t>(i) * 1000) << threads << " " << i;
    }
    EXPECT_EQ(t.stats.skipped[static_cast<int>(Skip::kNotAnObject)], not_objects) << threads;
    EXPECT_EQ(t.stats.skipped[static_cast<int>(Skip::kGarbage)], garbage) << threads;
    EXPECT_EQ(t.stats.repaired, repaired) << threads;
    EXPECT_EQ(t.stats.json_bytes, json.size());
  }
}

// torch 2.13 compiling with with_stack writes a Python function's name holding a
// docstring's unescaped quotes (extern_node_serializer.py(0): eight spaces and """). Their
// odd count must not turn the events after them inside out: they are text, and the event
// is repaired. Many events on both sides, read in one chunk and across many, on one
// thread and on several.
TEST(TraceLoader, DoubledQuotesInANameAreTextAndTheEventIsRepaired) {
  std::string json = "{\"traceEvents\": [";
  const int n = 30000;
  for (int i = 0; i < n; ++i) {
    if (i) json += ",\n  ";
    std::string name = "op" + std::to_string(i);
    if (i % 7001 == 3) name = "torch/_inductor/extern_node_serializer.py(0):         \"\"\"";
    json += "{\"ph\": \"X\", \"cat\": \"python_function\", \"name\": \"" + name +
            "\", \"pid\": 1, \"tid\": 1, \"ts\": " + std::to_string(i) +
            ", \"dur\": 1, \"args\": {\"Python id\": " + std::to_string(i) + "}}";
  }
  json += "]}";
  ASSERT_GT(json.size(), 4 * kReadSize);
  testing::TempDir dir;
  const std::string path = dir.Write("quotes.json", json);
  for (int threads : {1, 3}) {
    Trace t = LoadTrace(LoadOptions{path, threads});
    ASSERT_EQ(t.intervals.size(), static_cast<size_t>(n)) << threads;
    EXPECT_EQ(t.stats.repaired, static_cast<uint64_t>((n - 3 + 7000) / 7001)) << threads;
    for (int i = 0; i < n; ++i) {
      const std::string want =
          i % 7001 == 3 ? "torch/_inductor/extern_node_serializer.py(0):         \"\"\"" : "op" + std::to_string(i);
      ASSERT_EQ(Name(t, t.intervals[static_cast<size_t>(i)]), want) << threads << " " << i;
    }
  }
}

// The same, cut into ranges of a few bytes on the workers: whatever byte a block begins
// at, a quote that follows a quote is read alike (a doubled quote across two blocks of
// one reader and inside one block of another made them cut the events apart).
TEST(TraceLoader, DoubledQuotesReadAlikeWhereverTheBlocksBegin) {
  for (int pad = 0; pad < 70; ++pad) {
    std::string json = "{\"traceEvents\": [" + std::string(static_cast<size_t>(pad), ' ');
    for (int i = 0; i < 12; ++i) {
      if (i) json += ",";
      const std::string name = i % 3 == 1 ? "a(0): " + std::string(static_cast<size_t>(i), 'x') + "\"\"\"" : "op";
      json += "{\"ph\": \"X\", \"name\": \"" + name + "\", \"pid\": 1, \"tid\": 1, \"ts\": " + std::to_string(i) +
              ", \"dur\": 1}";
    }
    json += "]}";
    LoadOptions one;
    one.threads = 1;
    LoadOptions cut = one;
    cut.threads = 2;
    cut.range_bytes = 1 + static_cast<uint64_t>(pad % 13);
    const Trace a = LoadTraceFromMemory(json, "q.json", one), b = LoadTraceFromMemory(json, "q.json", cut);
    ASSERT_EQ(a.intervals.size(), 12u) << pad;
    ASSERT_EQ(b.intervals.size(), a.intervals.size()) << pad;
    for (size_t i = 0; i < a.intervals.size(); ++i) ASSERT_EQ(Name(a, a.intervals[i]), Name(b, b.intervals[i])) << pad;
  }
}

TEST(TraceLoader, StdinIsDash) {
  // Only the name matters here; reading stdin itself is covered end to end.
  EXPECT_THROW(LoadTrace(LoadOptions{"/nonexistent/trace.json"}), Error);
}

struct BadCase {
  const char* what;
  std::string json;
  int64_t offset;  // -1: no offset in the message
  const char* message_part;
};

TEST(TraceLoader, BadInputNamesFileOffsetAndExpectation) {
  const BadCase cases[] = {
      {"empty file", "", 0, "empty"},
      {"not JSON", "hello", 0, "expected '{' or '['"},
      {"no traceEvents", R"({"a": 1})", -1, "no \"traceEvents\""},
      {"cut inside an event", R"({"traceEvents": [{"ph": "X", "na)", 32, "truncated"},
      {"cut after an event", R"({"traceEvents": [{"ph": "X"})", 28, "truncated"},
      {"missing comma", R"([{"ph": "X"} {"ph": "X"}])", 13, "expected ',' or ']'"},
      {"bad JSON inside an event", R"([{"ph": "X"}, {"ph": X}])", 14, "invalid JSON"},
      {"trailing garbage", R"([{"ph": "X"}] xyz)", 14, "after the end"},
      {"ts of the wrong type", R"([{"ph": "X", "ts": [1], "dur": 1}])", 1, "\"ts\" is not a number"},
      {"ts beyond 64 bits", R"([{"ph": "X", "ts": 99999999999999999999, "dur": 1}])", 1, "fits in 64-bit"},
      {"dur that is text", R"([{"ph": "X", "ts": 1, "dur": "soon"}])", 1, "\"dur\" is not a number"},
      {"invalid UTF-8", std::string("[{\"ph\": \"X\"}, {\"name\": \"\xff\"}]"), 14, "invalid JSON"},
  };
  for (const BadCase& c : cases) {
    Error e = LoadError(c.json);
    EXPECT_EQ(e.kind(), Error::Kind::kInput) << c.what;
    EXPECT_EQ(e.offset(), c.offset) << c.what << ": " << e.what();
    EXPECT_NE(e.message().find(c.message_part), std::string::npos) << c.what << ": " << e.what();
    EXPECT_EQ(e.file(), "trace.json") << c.what;
  }
}

TEST(TraceLoader, TruncatedGzipIsAnError) {
  TempDir dir;
  std::string json = "[" + std::string(100000, ' ') + "]";
  std::string gz = Gzip(json);
  std::string path = dir.Write("cut.json.gz", gz.substr(0, gz.size() / 2));
  try {
    LoadTrace(LoadOptions{path});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("gzip stream is truncated"), std::string::npos) << e.what();
  }
}

TEST(TraceLoader, MissingFileAndDirectory) {
  TempDir dir;
  for (const std::string& path : {dir.path() + "/missing.json", dir.path()}) {
    try {
      LoadTrace(LoadOptions{path});
      FAIL() << path;
    } catch (const Error& e) {
      EXPECT_EQ(e.offset(), -1);
      EXPECT_EQ(e.file(), path);
    }
  }
}

}  // namespace
}  // namespace torch2pprof

namespace torch2pprof {
namespace {

std::string BigTrace(int events, const std::string& tail) {
  std::string json = "{\"traceEvents\": [";
  for (int i = 0; i < events; ++i) {
    json += "{\"ph\": \"" + std::string(i % 5 == 0 ? "B" : (i % 5 == 1 ? "E" : "X")) + "\", \"name\": \"op" +
            std::to_string(i % 31) + "\", \"pid\": 1, \"tid\": " + std::to_string(i % 3) +
            ", \"ts\": " + std::to_string(i) + ".5, \"dur\": 3, \"args\": {\"pad\": \"" + std::string(100, 'p') +
            "\"}},";
  }
  return json + tail;
}

// Plain files are cut on the workers; gzip is inflated and cut by the scanner, which
// then parses chunks itself whenever the workers fall behind.
TEST(TraceLoaderThreads, AnyNumberOfParseWorkersGivesTheSameTrace) {
  testing::TempDir dir;
  const std::string json = BigTrace(60000, "{\"ph\": \"X\"}]}");
  const std::string path = dir.Write("t.json", json), gz = dir.Write("t.json.gz", Gzip(json));
  Trace one = LoadTrace(LoadOptions{path, 1});
  for (auto [threads, input] :
       std::vector<std::pair<int, std::string>>{{2, path}, {3, path}, {8, path}, {1, gz}, {2, gz}, {3, gz}, {8, gz}}) {
    SCOPED_TRACE(input + ", " + std::to_string(threads) + " threads");
    Trace two = LoadTrace(LoadOptions{input, threads});
    ASSERT_EQ(one.intervals.size(), two.intervals.size());
    for (size_t i = 0; i < one.intervals.size(); ++i) {
      const Interval &a = one.intervals[i], &b = two.intervals[i];
      ASSERT_EQ(std::tie(a.start_ns, a.end_ns, a.lane), std::tie(b.start_ns, b.end_ns, b.lane)) << i;
      ASSERT_EQ(one.strings.Get(a.name), two.strings.Get(b.name)) << i;
    }
    EXPECT_EQ(one.stats.events, two.stats.events);
    EXPECT_EQ(one.stats.skipped, two.stats.skipped);
    EXPECT_EQ(one.stats.phases, two.stats.phases);
    EXPECT_EQ(one.stats.json_bytes, two.stats.json_bytes);
    EXPECT_EQ(one.lanes.size(), two.lanes.size());
  }
}

// Events of ~60 bytes, under the 100 a byte count reserves for: the tables outgrow their
// reservation while the merge writes them and idle workers fault in pages ahead of it
// (EventBuilder, WriteAhead). The trace is the same at any number of workers.
TEST(TraceLoaderThreads, TablesThatOutgrowTheirReservationGiveTheSameTrace) {
  testing::TempDir dir;
  std::string json = "[";
  constexpr int kEvents = 200000;
  for (int i = 0; i < kEvents; ++i) {
    json += "{\"ph\":\"X\",\"name\":\"n" + std::to_string(i % 97) + "\",\"ts\":" + std::to_string(i) +
            ",\"dur\":1,\"pid\":1,\"tid\":" + std::to_string(i % 3) + "},";
  }
  json.back() = ']';
  ASSERT_LT(json.size() / kEvents, 100u);
  std::string path = dir.Write("t.json", json);
  Trace one = LoadTrace(LoadOptions{path, 1});
  ASSERT_EQ(one.intervals.size(), static_cast<size_t>(kEvents));
  for (int threads : {2, 3, 6}) {
    Trace more = LoadTrace(LoadOptions{path, threads});
    ASSERT_EQ(more.intervals.size(), one.intervals.size()) << threads;
    for (size_t i = 0; i < one.intervals.size(); ++i) {
      const Interval &a = one.intervals[i], &b = more.intervals[i];
      ASSERT_EQ(a.start_ns, static_cast<int64_t>(i) * 1000) << i;
      ASSERT_EQ(std::tie(a.start_ns, a.end_ns, a.lane), std::tie(b.start_ns, b.end_ns, b.lane)) << threads << " " << i;
      ASSERT_EQ(one.strings.Get(a.name), more.strings.Get(b.name)) << threads << " " << i;
    }
  }
}

// The error reported is the first one in the file, whichever thread finds it.
TEST(TraceLoaderThreads, TheEarliestErrorWins) {
  auto strict = [](const std::string& path, int threads) { return LoadOptions{path, threads, false, true}; };
  testing::TempDir dir;
  // A bad event early, then a truncated end: the bad event is reported.
  std::string early = BigTrace(100, "{\"ph\": \"X\", \"ts\": {}},") + BigTrace(60000, "").substr(17);
  std::string path = dir.Write("early.json", early);
  for (int threads : {1, 2, 5}) {
    try {
      LoadTrace(strict(path, threads));
      FAIL() << threads;
    } catch (const Error& e) {
      EXPECT_NE(e.message().find("\"ts\" is not a number"), std::string::npos) << threads << ": " << e.what();
    }
  }
  // A bad event in the last chunk, the scanner long done: reported, no hang.
  std::string late = BigTrace(60000, "{\"ph\": \"X\", \"ts\": {}}]}");
  path = dir.Write("late.json", late);
  for (int threads : {1, 2, 5}) {
    try {
      LoadTrace(strict(path, threads));
      FAIL() << threads;
    } catch (const Error& e) {
      EXPECT_EQ(e.offset(), static_cast<int64_t>(late.size() - 23)) << threads << ": " << e.what();
    }
  }
  // The scanner fails (truncation) with every event before it fine.
  path = dir.Write("cut.json", BigTrace(60000, ""));
  for (int threads : {1, 2, 5}) {
    try {
      LoadTrace(LoadOptions{path, threads});
      FAIL() << threads;
    } catch (const Error& e) {
      EXPECT_NE(e.message().find("truncated: the input ends inside traceEvents after 60000 events"), std::string::npos)
          << e.what();
    }
  }
}

// Several inputs are loaded side by side but used strictly in the order given; the
// first failure in that order is the one reported, whatever finishes first.
TEST(TraceLoaderEach, UsesInOrderAndTheFirstFailureInOrderWins) {
  TempDir dir;
  std::vector<LoadOptions> inputs;
  for (int i = 0; i < 7; ++i) {
    std::string events;
    for (int k = 0; k <= i * 50; ++k) {
      events += std::string(k ? "," : "") + R"({"ph": "X", "name": "e", "pid": 1, "tid": 1, "ts": )" +
                std::to_string(k) + R"(, "dur": 1})";
    }
    inputs.push_back(LoadOptions{dir.Write("t" + std::to_string(i) + ".json", "[" + events + "]")});
  }
  for (int workers : {1, 2, 3, 8}) {
    std::vector<size_t> sizes;
    LoadEach(inputs, workers, [&](Trace& t) { sizes.push_back(t.intervals.size()); });
    EXPECT_EQ(sizes, (std::vector<size_t>{1, 51, 101, 151, 201, 251, 301})) << workers;
  }
  std::vector<LoadOptions> bad = inputs;
  bad[2].path = dir.Write("bad2.json", "[{\"ph\": ");
  bad[5].path = dir.Write("bad5.json", "nope");
  for (int workers : {1, 2, 8}) {
    size_t used = 0;
    try {
      LoadEach(bad, workers, [&](Trace&) { ++used; });
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.file(), bad[2].path) << workers;
    }
    EXPECT_EQ(used, 2u) << workers;
  }
  // An error thrown by `use` ends it the same way.
  size_t used = 0;
  EXPECT_THROW(LoadEach(inputs, 2,
                        [&](Trace&) {
                          if (++used == 3) throw Error(Error::Kind::kInput, "x", -1, "stop");
                        }),
               Error);
  EXPECT_EQ(used, 3u);
}

}  // namespace
}  // namespace torch2pprof

namespace torch2pprof {
namespace {

// What a load gives, as one string: the encoded profile, the warnings and counts, or
// the error.
std::string Outcome(const std::string& json, LoadOptions options) {
  try {
    Trace t = options.path.empty() ? LoadTraceFromMemory(json, "t.json", options) : LoadTrace(options);
    TraceModel m = BuildModel(t);
    std::string out = EncodeProfile(Aggregate(t));
    for (const std::string& w : LoadWarnings(t)) out += "\n" + w;
    out += "\nevents " + std::to_string(t.stats.events) + " bytes " + std::to_string(t.stats.json_bytes);
    return out;
  } catch (const Error& e) {
    return std::string("error: ") + e.what();
  }
}

// Events separated by the text the scanner has to decide on: every 37th gap holds
// something else than a comma; strings and arguments hold "}, {" (where the scanner's
// guess of a range's end lands), one event is large, one broken.
std::string Awkward(int events) {
  const char* gaps[] = {", 17, ", ", [1, 2],\n", " } ,", ", ,", ", \"x\" ,", "\n  ", ",\n  \"}, {\",\n  "};
  std::string json = "{\"schemaVersion\": 1, \"traceEvents\": [\n  ";
  for (int i = 0; i < events; ++i) {
    if (i > 0) json += i % 37 == 0 ? gaps[(i / 37) % 7] : (i % 2 ? ",\n  " : ", ");
    std::string args = i % 5 == 0   ? R"({"list": [{"a": 1}, {"b": "}, {"}], "q": "\\\"}, {\\"})"
                       : i % 7 == 0 ? "{\"pad\": \"" + std::string(i == 700 ? 20000 : 50, 'p') + "\"}"
                                    : "{}";
    json += "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"op" + std::to_string(i % 13) + (i == 333 ? "\x01" : "") +
            "\", \"pid\": 1, \"tid\": " + std::to_string(i % 3) + ", \"ts\": " + std::to_string(i * 10) +
            ", \"dur\": 4, \"args\": " + args + "}";
  }
  return json + "\n], \"deviceProperties\": [{\"id\": 0}, {\"id\": 1}], \"traceName\": \"t\"}";
}

// Where the text is plain events, workers read and cut ranges of it themselves, and
// the scanner goes on from the first range they could not cut: the trace (and the
// error, and the warnings) are the one-thread loader's, wherever the ranges end; with
// 6 threads (5 workers) the scanner only hands out ranges and never parses one.
TEST(TraceLoaderThreads, RangesCutOnWorkersGiveTheScannersTrace) {
  std::vector<std::pair<std::string, std::string>> texts;
  const std::string plain = BigTrace(1500, "{\"ph\": \"X\"}]}");
  const std::string awkward = Awkward(1500);
  texts.emplace_back("plain", plain);
  texts.emplace_back("awkward", awkward);
  texts.emplace_back("bare array", "[" + plain.substr(plain.find('[') + 1, plain.size() - plain.find('[') - 2));
  texts.emplace_back("empty", "{\"traceEvents\": [ ], \"x\": [{}, {}]}");
  for (const std::string* t : {&plain, &awkward}) {
    const size_t at = t->size() / 2, sep = t->find("}, {", at);
    texts.emplace_back("cut inside an event", t->substr(0, at));
    texts.emplace_back("cut after an event", t->substr(0, sep + 1));
    texts.emplace_back("cut after a comma", t->substr(0, sep + 2));
    texts.emplace_back("cut after a number", t->substr(0, sep + 2) + " 17");
    texts.emplace_back("cut after garbage", t->substr(0, sep + 1) + " x");
    // The fuzzer's: a gap of commas and text to the end, its quote never closed; where
    // the scan of that gap began (a range handed back, or the file's start) once
    // decided how much of it counted as garbage.
    for (size_t pad = 0; pad < 64; pad += 7) {
      texts.emplace_back("cut in a gap of commas and text",
                         t->substr(0, sep + 1) + std::string(pad, ' ') + ", ,me\": \"c\", \"p\": 1}]}");
    }
  }
  testing::TempDir dir;
  for (const auto& [name, json] : texts) {
    const std::string path = dir.Write("t.json", json);
    for (bool strict : {false, true}) {
      for (bool allow_truncated : {false, true}) {
        LoadOptions o{"", 1, /*details=*/true, strict, allow_truncated};
        const std::string one = Outcome(json, o);
        LoadOptions file = o;
        file.path = path;
        const std::string one_file = Outcome(json, file);
        for (size_t range : {1, 61, 500, 4096}) {
          for (int threads : {2, 3, 6}) {
            o.threads = file.threads = threads;
            o.range_bytes = file.range_bytes = range;
            EXPECT_TRUE(Outcome(json, o) == one)
                << name << ": ranges of " << range << ", " << threads << " threads" << (strict ? ", strict" : "")
                << (allow_truncated ? ", truncated ok" : "");
            if (range % 2) {
              EXPECT_TRUE(Outcome(json, file) == one_file) << name << " (file): ranges of " << range;
            }
          }
        }
      }
    }
  }
}

// The bytes the workers cut: every range but the last, which holds traceEvents' end;
// none on one thread or from gzip, whose text the scanner's thread inflates and cuts.
TEST(TraceLoaderThreads, TheWorkersCutEveryRangeButTheLast) {
  const std::string json = BigTrace(2000, "{\"ph\": \"X\"}]}");
  // Ranges of one byte end at each event's end; the last starts after the 2,000th event.
  const uint64_t expected = json.rfind("},{") + 1 - (json.find('[') + 1);
  LoadOptions o{"", 3};
  o.range_bytes = 1;
  Trace t = LoadTraceFromMemory(json, "t.json", o);
  EXPECT_EQ(t.stats.cut_on_workers, expected);
  EXPECT_EQ(t.stats.json_bytes, json.size());
  o.threads = 1;
  Trace one = LoadTraceFromMemory(json, "t.json", o);
  EXPECT_EQ(one.stats.cut_on_workers, 0u);
  EXPECT_EQ(one.intervals.size(), t.intervals.size());
  o.threads = 3;
  EXPECT_EQ(LoadTraceFromMemory(Gzip(json), "t.json.gz", o).stats.cut_on_workers, 0u);
}

// Every byte of a file counts once toward the progress display, though the scanner
// reads the last ranges again after the workers.
TEST(TraceLoaderThreads, TheReadCounterCountsEachByteOnce) {
  testing::TempDir dir;
  const std::string json = Awkward(3000);
  const std::string path = dir.Write("t.json", json);
  for (int threads : {1, 3}) {
    std::atomic<uint64_t> read{0};
    LoadOptions o{path, threads};
    o.bytes_read = &read;
    o.range_bytes = 1000;
    LoadTrace(o);
    EXPECT_EQ(read.load(), json.size()) << threads;
  }
}

// A file still being written: opened while half of it was there, read when all of it is.
// Its size is read again when the workers start cutting ranges, so the part written after
// the open is cut on them too, not left to the scanner one event at a time.
TEST(TraceLoaderThreads, AFileThatGrewAfterItWasOpenedIsReadToItsEndOnTheWorkers) {
  TempDir dir;
  const std::string json = BigTrace(3000, "{\"ph\": \"X\"}]}");
  const size_t half = json.size() / 2;
  const std::string path = dir.Write("t.json", json.substr(0, half));
  Input in(path);
  std::ofstream(path, std::ios::app | std::ios::binary) << json.substr(half);
  LoadOptions o{path, 3};
  o.range_bytes = 1000;
  Executor ex(3);
  const Trace grown = LoadTrace(in.source(), o, ex);
  const Trace whole = LoadTraceFromMemory(json, "t.json", o);
  EXPECT_FALSE(grown.stats.truncated);
  EXPECT_EQ(grown.intervals.size(), whole.intervals.size());
  EXPECT_EQ(grown.stats.json_bytes, json.size());
  EXPECT_GT(grown.stats.cut_on_workers, half);
}

}  // namespace
}  // namespace torch2pprof
