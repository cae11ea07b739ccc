// The block scanner against a byte-at-a-time reference on random JSON-like text.
#include "load/json_blocks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace torch2pprof {
namespace {

// Positions of brackets outside strings, found one byte at a time. A backslash
// escapes the next byte wherever it stands (outside strings only invalid JSON has
// one, and the parser rejects that event). Inside a string a quote followed by a quote
// is text (a docstring's quotes in a name torch wrote), wherever the blocks begin.
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
      if (c == '"' && !(i + 1 < s.size() && s[i + 1] == '"')) in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '{' || c == '[') open->push_back(i);
    if (c == '}' || c == ']') close->push_back(i);
  }
}

const BlockKernel kKernels[] = {BlockKernel::kBytes, BlockKernel::kSse2, BlockKernel::kAvx2};

TEST(JsonBlocks, MatchesAByteAtATimeScanner) {
  for (BlockKernel kernel : kKernels) {
    if (!Supported(kernel)) continue;
    std::mt19937 rng(12345);
    const char alphabet[] = "\"\\{}[]a ,:";
    for (int round = 0; round < 2000; ++round) {
      std::string s(64 * (1 + rng() % 6), ' ');
      // Mostly plain text with bursts of quotes and backslashes, so long runs of
      // backslashes and escapes at block edges both occur.
      for (char& c : s) c = alphabet[rng() % (rng() % 4 == 0 ? 2 : sizeof alphabet - 1)];
      std::vector<size_t> want_open, want_close, got_open, got_close;
      Reference(s, &want_open, &want_close);
      // In groups of every size up to a whole one, so that the state carries across
      // groups as well as across the blocks of one.
      JsonBlocks blocks(kernel);
      const size_t blocks_in_s = s.size() / 64;
      for (size_t k = 0, group = 1; k < blocks_in_s; k += group, group = group % JsonBlocks::kGroup + 1) {
        const size_t n = std::min(group, blocks_in_s - k);
        uint64_t open[JsonBlocks::kGroup], close[JsonBlocks::kGroup];
        blocks.Group(s.data() + 64 * k, n, open, close);
        for (size_t g = 0; g < n; ++g) {
          for (int b = 0; b < 64; ++b) {
            if (open[g] >> b & 1) got_open.push_back(64 * (k + g) + b);
            if (close[g] >> b & 1) got_close.push_back(64 * (k + g) + b);
          }
        }
      }
      ASSERT_EQ(got_open, want_open) << static_cast<int>(kernel) << " " << s;
      ASSERT_EQ(got_close, want_close) << static_cast<int>(kernel) << " " << s;
    }
  }
}

// Every byte value, at every position of a block: the kernels' masks are the byte loop's.
TEST(JsonBlocks, KernelsClassifyEveryByteAlike) {
  std::mt19937 rng(777);
  std::string s(64 * 512, ' ');
  for (char& c : s) c = static_cast<char>(rng() % 256);
  for (size_t i = 0; i < 256; ++i) s[i * 64 + i % 64] = static_cast<char>(i);  // each value once in each lane
  std::vector<RawMasks> want(s.size() / 64);
  ClassifyBlocks(BlockKernel::kBytes, s.data(), want.size(), want.data());
  uint64_t brackets = 0;
  for (const RawMasks& m : want) brackets += __builtin_popcountll(m.open) + __builtin_popcountll(m.close);
  EXPECT_GT(brackets, 400u);  // 4 of 256 byte values, 32,768 bytes: about 512
  for (BlockKernel kernel : kKernels) {
    if (!Supported(kernel)) continue;
    // From every offset in a buffer, so that unaligned loads are what is tested.
    for (size_t offset : {0, 1, 17, 33}) {
      std::string shifted(offset, 'x');
      shifted += s;
      std::vector<RawMasks> got(want.size());
      ClassifyBlocks(kernel, shifted.data() + offset, got.size(), got.data());
      for (size_t k = 0; k < want.size(); ++k) {
        ASSERT_EQ(got[k].quote, want[k].quote) << static_cast<int>(kernel) << " block " << k;
        ASSERT_EQ(got[k].backslash, want[k].backslash) << static_cast<int>(kernel) << " block " << k;
        ASSERT_EQ(got[k].open, want[k].open) << static_cast<int>(kernel) << " block " << k;
        ASSERT_EQ(got[k].close, want[k].close) << static_cast<int>(kernel) << " block " << k;
      }
    }
  }
}

TEST(JsonBlocks, EscapeAcrossTheBlockEdge) {
  // A backslash as byte 63 escapes byte 0 of the next block: that quote stays in the string.
  std::string s = "\"" + std::string(62, 'a') + "\\" + "\"{}\"[" + std::string(59, ' ');
  JsonBlocks blocks;
  uint64_t open, close;
  blocks.Group(s.data(), 1, &open, &close);
  EXPECT_EQ(open | close, 0u);
  blocks.Group(s.data() + 64, 1, &open, &close);
  EXPECT_EQ(open, uint64_t{1} << 4);  // only the '[' after the closing quote
  EXPECT_EQ(close, 0u);
}

}  // namespace
}  // namespace torch2pprof
