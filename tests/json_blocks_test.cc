// The block scanner against a byte-at-a-time reference on random JSON-like text.
#include "json_blocks.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace torch2pprof {
namespace {

// Positions of brackets outside strings, found one byte at a time. A backslash
// escapes the next byte wherever it stands (outside strings only invalid JSON has
// one, and the parser rejects that event).
void Reference(const std::string& s, std::vector<size_t>* open, std::vector<size_t>* close) {
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (escaped) {
      escaped = false;
      continue;
    }
    if (c == '\\') {
      escaped = true;
      continue;
    }
    if (in_string) {
      if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '{' || c == '[') open->push_back(i);
    if (c == '}' || c == ']') close->push_back(i);
  }
}

TEST(JsonBlocks, MatchesAByteAtATimeScanner) {
  std::mt19937 rng(12345);
  const char alphabet[] = "\"\\{}[]a ,:";
  for (int round = 0; round < 2000; ++round) {
    std::string s(64 * (1 + rng() % 6), ' ');
    // Mostly plain text with bursts of quotes and backslashes, so long runs of
    // backslashes and escapes at block edges both occur.
    for (char& c : s) c = alphabet[rng() % (rng() % 4 == 0 ? 2 : sizeof alphabet - 1)];
    std::vector<size_t> want_open, want_close, got_open, got_close;
    Reference(s, &want_open, &want_close);
    JsonBlocks blocks;
    for (size_t base = 0; base < s.size(); base += 64) {
      uint64_t open, close;
      blocks.Next(s.data() + base, &open, &close);
      for (int b = 0; b < 64; ++b) {
        if (open >> b & 1) got_open.push_back(base + b);
        if (close >> b & 1) got_close.push_back(base + b);
      }
    }
    ASSERT_EQ(got_open, want_open) << s;
    ASSERT_EQ(got_close, want_close) << s;
  }
}

TEST(JsonBlocks, EscapeAcrossTheBlockEdge) {
  // A backslash as byte 63 escapes byte 0 of the next block: that quote stays in the string.
  std::string s = "\"" + std::string(62, 'a') + "\\" + "\"{}\"[" + std::string(59, ' ');
  JsonBlocks blocks;
  uint64_t open, close;
  blocks.Next(s.data(), &open, &close);
  EXPECT_EQ(open | close, 0u);
  blocks.Next(s.data() + 64, &open, &close);
  EXPECT_EQ(open, uint64_t{1} << 4);  // only the '[' after the closing quote
  EXPECT_EQ(close, 0u);
}

}  // namespace
}  // namespace torch2pprof
