// Finds JSON's brackets outside strings, 64 bytes at a time, carrying the in-string
// and escape state from block to block: how the loader cuts traceEvents into events.
#pragma once

#include <cstdint>
#ifdef __SSE2__
#include <emmintrin.h>
#endif
#ifdef __PCLMUL__
#include <wmmintrin.h>
#endif

namespace torch2pprof {

class JsonBlocks {
 public:
  // Bit i of *open / *close: p[i] is '{' or '[' / '}' or ']' outside a string.
  void Next(const char* p, uint64_t* open, uint64_t* close) {
    uint64_t quote = 0, backslash = 0, opens = 0, closes = 0;
#ifdef __SSE2__
    for (int k = 0; k < 4; ++k) {
      __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * k));
      // '{' 0x7b and '[' 0x5b differ in bit 0x20 only, as do '}' and ']'.
      __m128i folded = _mm_or_si128(v, _mm_set1_epi8(0x20));
      auto bits = [&](__m128i eq) {
        return static_cast<uint64_t>(static_cast<uint32_t>(_mm_movemask_epi8(eq))) << (16 * k);
      };
      quote |= bits(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')));
      backslash |= bits(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
      opens |= bits(_mm_cmpeq_epi8(folded, _mm_set1_epi8('{')));
      closes |= bits(_mm_cmpeq_epi8(folded, _mm_set1_epi8('}')));
    }
#else
    for (int i = 0; i < 64; ++i) {
      char c = p[i];
      uint64_t bit = uint64_t{1} << i;
      if (c == '"') quote |= bit;
      if (c == '\\') backslash |= bit;
      if (c == '{' || c == '[') opens |= bit;
      if (c == '}' || c == ']') closes |= bit;
    }
#endif
    uint64_t escaped = Escaped(backslash);
    quote &= ~escaped;
    uint64_t in_string = PrefixXor(quote) ^ in_string_;
    in_string_ = static_cast<uint64_t>(static_cast<int64_t>(in_string) >> 63);
    *open = opens & ~in_string & ~escaped;
    *close = closes & ~in_string & ~escaped;
  }

 private:
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

  uint64_t in_string_ = 0;  // all ones when the previous block ended inside a string
  bool escape_next_ = false;
};

}  // namespace torch2pprof
