// Finds JSON's brackets outside strings, 64 bytes at a time, carrying the in-string
// and escape state from block to block: how the loader cuts traceEvents into events.
#pragma once

#include <cstddef>
#include <cstdint>
#ifdef __PCLMUL__
#include <wmmintrin.h>
#endif

namespace torch2pprof {

// One 64-byte block's characters of interest, a bit per byte, before strings and
// escapes are known. '{' and '[' are both opens, '}' and ']' both closes.
struct RawMasks {
  uint64_t quote, backslash, open, close;
};

// How blocks are classified: AVX2 (32 bytes a compare) where the CPU has it, checked at
// run time so that one binary serves every x86-64; SSE2 (16 bytes) on every x86-64; a
// byte at a time elsewhere. The masks are the same whichever classifies them.
enum class BlockKernel { kBytes, kSse2, kAvx2 };
bool Supported(BlockKernel kernel);
BlockKernel FastestBlockKernel();
// The raw masks of the n 64-byte blocks at p, into out[0, n).
void ClassifyBlocks(BlockKernel kernel, const char* p, size_t n, RawMasks* out);

class JsonBlocks {
 public:
  static constexpr size_t kGroup = 16;  // blocks classified at a time (1 KiB): one call for all

  explicit JsonBlocks(BlockKernel kernel = FastestBlockKernel()) : kernel_(kernel) {}

  // Bit i of open[k] / close[k]: byte i of block k at p is '{' or '[' / '}' or ']'
  // outside a string, for n <= kGroup blocks. Blocks go in order: the state carries from
  // each to the next. The masks first, then the strings in a loop of their own, so that
  // the state carried from block to block stays in a register (GCC spilled it when the
  // caller's bracket walk shared the loop: a store and a load per block on its chain).
  void Group(const char* p, size_t n, uint64_t* open, uint64_t* close) {
    RawMasks raw[kGroup];
    ClassifyBlocks(kernel_, p, n, raw);
    for (size_t k = 0; k < n; ++k) Next(raw[k], &open[k], &close[k]);
  }

 private:
  void Next(const RawMasks& raw, uint64_t* open, uint64_t* close) {
    uint64_t escaped = Escaped(raw.backslash);
    uint64_t quote = raw.quote & ~escaped;
    // The last block ended on a closing quote and this one opens with a quote: that quote
    // was text, so the string goes on (the rule below, wherever the blocks begin: ranges
    // cut on the workers must read as one thread reads).
    if (closed_at_end_ && (quote & 1)) in_string_ = ~uint64_t{0};
    const bool carried_in = in_string_ != 0;
    uint64_t in_string = PrefixXor(quote) ^ in_string_;
    // A quote that would close a string and is followed by another quote closes nothing in
    // valid JSON: torch writes names holding a docstring's unescaped quotes (a
    // python_function "….py(0):         \"\"\"", torch 2.13 compiling with with_stack),
    // and their odd count would turn every string after them inside out. Such quotes are
    // text (docs/reference.md, the dialect); the event parser repairs the event.
    if (quote & ~in_string & (quote >> 1)) in_string = Strings(quote, carried_in);
    in_string_ = static_cast<uint64_t>(static_cast<int64_t>(in_string) >> 63);
    closed_at_end_ = (quote >> 63) && !(in_string >> 63);
    *open = raw.open & ~in_string & ~escaped;
    *close = raw.close & ~in_string & ~escaped;
  }

  // The in-string mask, a quote at a time (rare: blocks with a doubled quote): an opening
  // quote and the bytes up to the closing one; a quote inside a string followed by a
  // quote is text (bit 63's follower is the next block's: see closed_at_end_).
  static uint64_t Strings(uint64_t quote, bool in) {
    uint64_t mask = 0;
    int from = 0;
    for (uint64_t q = quote; q; q &= q - 1) {
      const int b = __builtin_ctzll(q);
      if (in) {
        if (b < 63 && (quote >> (b + 1) & 1)) continue;  // text
        mask |= Span(from, b);
        in = false;
      } else {
        from = b;
        in = true;
      }
    }
    if (in) mask |= Span(from, 64);
    return mask;
  }
  static uint64_t Span(int from, int to) {  // bits [from, to)
    const uint64_t below_to = to >= 64 ? ~uint64_t{0} : (uint64_t{1} << to) - 1;
    return below_to & ~((uint64_t{1} << from) - 1);
  }

  // Characters escaped by a backslash: each backslash not itself escaped escapes the
  // next character, wherever it stands (outside strings only in invalid JSON, which
  // the parser then rejects). Backslashes are rare in traces: a loop over them is cheap.
  uint64_t Escaped(uint64_t backslash) {
    uint64_t escaped = 0;
    if (escape_next_) {
      escaped = 1;
      backslash &= ~uint64_t{1};
    }
    escape_next_ = false;
    while (backslash) {
      int b = __builtin_ctzll(backslash);
      if (b == 63) {
        escape_next_ = true;
        break;
      }
      escaped |= uint64_t{1} << (b + 1);
      backslash &= ~(uint64_t{3} << b);
    }
    return escaped;
  }

  // Bit i: the XOR of bits 0..i, so the bits from an opening quote up to (not
  // including) its closing quote are set.
  static uint64_t PrefixXor(uint64_t x) {
#ifdef __PCLMUL__
    // A carry-less multiply by all ones is the prefix XOR in one instruction.
    const __m128i all = _mm_set1_epi8(static_cast<char>(0xFF));
    return static_cast<uint64_t>(
        _mm_cvtsi128_si64(_mm_clmulepi64_si128(_mm_set_epi64x(0, static_cast<int64_t>(x)), all, 0)));
#else
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    return x;
#endif
  }

  BlockKernel kernel_;
  uint64_t in_string_ = 0;  // all ones when the previous block ended inside a string
  bool escape_next_ = false;
  bool closed_at_end_ = false;  // the previous block's last byte was a quote that closed a string
};

}  // namespace torch2pprof
