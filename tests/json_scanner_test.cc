// The scanner's chunks: each one is a read buffer handed on as it is, "[ev, ev, ...]"
// over the input's own text, and one read's worth however large the window grew.
#include "json_scanner.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "byte_source.h"

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

}  // namespace
}  // namespace torch2pprof
