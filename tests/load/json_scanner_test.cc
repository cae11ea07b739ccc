// The scanner's chunks: each one is a read buffer handed on as it is, "[ev, ev, ...]"
// over the input's own text, and one read's worth however large the window grew.
#include "load/json_scanner.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "load/byte_source.h"

namespace torch2pprof {
namespace {

// Keeps each chunk's JSON text and where its events start; hands back a fresh chunk.
class Recorder final : public ChunkSink {
 public:
  std::unique_ptr<Chunk> Emit(std::unique_ptr<Chunk> chunk) override {
    texts.emplace_back(chunk->data(), chunk->len);
    std::vector<size_t> at;
    for (const ChunkStart& s : chunk->starts) at.push_back(s.pos);
    starts.push_back(at);
    // simdjson reads up to kPadding bytes past the text.
    EXPECT_GE(chunk->capacity(), chunk->len + kPadding);
    return std::make_unique<Chunk>();
  }
  std::vector<std::string> texts;
  std::vector<std::vector<size_t>> starts;
};

std::string Event(int i, size_t pad) {
  return "{\"ph\": \"X\", \"name\": \"e" + std::to_string(i) + "\", \"ts\": " + std::to_string(i) + ", \"pad\": \"" +
         std::string(pad, 'p') + "\"}";
}

TEST(JsonScanner, ChunksAreTheInputsTextAndOneReadEachAfterALargeEvent) {
  std::string json = "{\"traceEvents\": [";
  std::vector<std::string> events;
  for (int i = 0; i < 20000; ++i) {
    // A 3 MB event early on makes the window grow; the chunks after it must not.
    events.push_back(Event(i, i == 100 ? (3 << 20) : 100));
    json += (i ? ",\n  " : "") + events.back();
  }
  json += "]}";
  ByteSource src(json, "t.json");
  Scanner scanner(src, /*strict=*/true, /*allow_truncated=*/false);
  Recorder r;
  scanner.Run(r);
  ASSERT_GT(r.texts.size(), 5u);
  size_t k = 0;
  for (size_t c = 0; c < r.texts.size(); ++c) {
    const std::string& text = r.texts[c];
    EXPECT_EQ(text.front(), '[');
    EXPECT_EQ(text.back(), ']');
    // One read and the partial event kept from the read before; only the chunk that
    // holds the large event is larger.
    if (k > 100 || k + r.starts[c].size() <= 100) {
      EXPECT_LE(text.size(), kReadSize + 1024) << c;
    }
    for (size_t s = 0; s < r.starts[c].size(); ++s, ++k) {
      ASSERT_LT(k, events.size());
      // Each event is there as the input wrote it, and only ",\n  " lies between.
      ASSERT_EQ(text.compare(r.starts[c][s], events[k].size(), events[k]), 0) << k;
      size_t after = r.starts[c][s] + events[k].size();
      ASSERT_EQ(text.substr(after, s + 1 < r.starts[c].size() ? 4 : 1), s + 1 < r.starts[c].size() ? ",\n  " : "]");
    }
  }
  EXPECT_EQ(k, events.size());
}

// A range cut on a worker: the events the scanner would cut, in a chunk of the same
// layout, where the text is plain events; refused wherever the scanner has more to decide.
TEST(CutRange, PlainEventsAreCutAsTheScannerCutsThem) {
  const std::string e1 = R"({"a": "}, {"})", e2 = R"({"b": [1, {"c": 2}], "d": "\\"})", e3 = R"({"e": "\"}, {"})";
  const std::string head = R"({"traceEvents": [ )";
  const std::string text = head + e1 + ", " + e2 + ",\n " + e3 + "]}";
  ByteSource src(text, "t.json");
  const uint64_t p1 = head.size(), p2 = p1 + e1.size() + 2, p3 = p2 + e2.size() + 3;
  const uint64_t end1 = p1 + e1.size(), end2 = p2 + e2.size(), end3 = p3 + e3.size();
  auto cut = [&](uint64_t from, uint64_t to, bool after_event, Chunk* chunk) {
    return CutRange(src, Range{from, static_cast<size_t>(to - from), after_event}, chunk);
  };
  // From just after '[' (white space before the first event, no comma) to e2's end.
  Chunk chunk;
  ASSERT_TRUE(cut(p1 - 1, end2, false, &chunk));
  EXPECT_EQ(std::string(chunk.data(), chunk.len), "[" + e1 + ", " + e2 + "]");
  ASSERT_EQ(chunk.starts.size(), 2u);
  EXPECT_EQ(chunk.starts[0].pos, 1u);
  EXPECT_EQ(chunk.starts[0].offset, p1);
  EXPECT_EQ(chunk.starts[1].pos, 1 + e1.size() + 2);
  EXPECT_EQ(chunk.starts[1].offset, p2);
  EXPECT_GE(chunk.capacity(), chunk.len + kPadding);
  // After an event: a comma first. The chunk's buffer is reused.
  ASSERT_TRUE(cut(end2, end3, true, &chunk));
  EXPECT_EQ(std::string(chunk.data(), chunk.len), "[" + e3 + "]");
  ASSERT_EQ(chunk.starts.size(), 1u);
  EXPECT_EQ(chunk.starts[0].offset, p3);
  ASSERT_TRUE(cut(end1, end2, true, &chunk));
  EXPECT_EQ(chunk.starts[0].offset, p2);

  EXPECT_FALSE(cut(end2, end3, false, &chunk));        // a comma where none may be
  EXPECT_FALSE(cut(p1 - 1, end1, true, &chunk));       // no comma where one must be
  EXPECT_FALSE(cut(p1 - 1, end2 - 1, false, &chunk));  // ends inside an event
  EXPECT_FALSE(cut(end2, end3 + 1, true, &chunk));     // reaches the end of traceEvents
  EXPECT_FALSE(cut(end2, end3 + 2, true, &chunk));
  EXPECT_FALSE(cut(p1 - 1, end1 + 1, false, &chunk));  // ends after an event's comma
  // Ends after a '}' inside a string, where the scanner's guess of an end can land.
  EXPECT_FALSE(cut(p1 - 1, p1 + e1.find('}') + 1, false, &chunk));
  EXPECT_FALSE(cut(end2, p3 + e3.find('}') + 1, true, &chunk));
  EXPECT_FALSE(cut(text.size() - 1, text.size() + 10, true, &chunk));  // past the end of the input

  // Text between events that is more than a comma, and elements that are no objects.
  for (const std::string gap : {", x, ", ", , ", " ", ", [1], ", ", 17, ", " } , ", ", \"s\", "}) {
    const std::string bad = head + e1 + gap + e2 + "]}";
    ByteSource bad_src(bad, "t.json");
    EXPECT_FALSE(CutRange(
        bad_src, Range{p1 - 1, static_cast<size_t>(p1 + e1.size() + gap.size() + e2.size() - p1 + 1), false}, &chunk))
        << gap;
  }
}

}  // namespace
}  // namespace torch2pprof
