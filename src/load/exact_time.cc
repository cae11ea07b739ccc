// Decimal microseconds to integer nanoseconds without ever going through a double:
// a 16-digit epoch with 3 decimals has 19 significant digits, more than a double holds.
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>

#include "load/exact_time.h"
#include "torch2pprof/stages/trace_loader.h"

namespace torch2pprof {
namespace {
using u128 = unsigned __int128;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

u128 Pow10(int k) {
  u128 p = 1;
  for (int i = 0; i < k; ++i) p *= 10;
  return p;
}

// Whether the 8 bytes of w (little-endian, the first byte lowest) are all '0'..'9': a
// byte's high nibble is 3, and adding 6 leaves it 3 only for '0'..'9'.
bool EightDigits(uint64_t w) {
  return ((w & 0xF0F0F0F0F0F0F0F0ULL) | (((w + 0x0606060606060606ULL) & 0xF0F0F0F0F0F0F0F0ULL) >> 4)) ==
         0x3333333333333333ULL;
}

// The value of eight decimal digits, the first the most significant: pairs, then
// quadruples, then the eight combined, each step one multiply (a digit's value sits in
// the low nibble of its byte).
uint64_t ValueOfEightDigits(uint64_t w) {
  w = ((w & 0x0F0F0F0F0F0F0F0FULL) * (10 * 256 + 1)) >> 8;      // 2-digit values in every other byte
  w = ((w & 0x00FF00FF00FF00FFULL) * (100 * 65536 + 1)) >> 16;  // 4-digit values in every other 16 bits
  return static_cast<uint32_t>(((w & 0x0000FFFF0000FFFFULL) * (10000ULL * (1ULL << 32) + 1)) >> 32);  // 8 digits
}

// What Kineto writes: up to 16 integer digits (epoch microseconds) and up to 3
// decimals, no exponent. Nothing there needs rounding or 128 bits, and it is most
// of a trace's numbers.
bool PlainMicros(std::string_view t, int64_t* out) {
  constexpr int64_t kMaxMicros = std::numeric_limits<int64_t>::max() / 1000;  // 9223372036854775
  size_t i = 0, n = t.size();
  bool neg = i < n && t[i] == '-';
  i += neg;
  int64_t v = 0;
  size_t start = i;
  // Eight digits at a time where eight bytes remain: an epoch's 16 digits in two steps
  // instead of a chain of 16 multiply-adds.
  while (n - i >= 8 && i - start + 8 <= 16) {
    uint64_t w;
    std::memcpy(&w, t.data() + i, 8);
    if (!EightDigits(w)) break;
    v = v * 100000000 + static_cast<int64_t>(ValueOfEightDigits(w));
    i += 8;
  }
  while (i < n && i - start < 16 && IsDigit(t[i])) v = v * 10 + (t[i++] - '0');
  // 9223372036854775.807 is the largest value; at kMaxMicros the decimals decide.
  if (i == start || v >= kMaxMicros || (i < n && IsDigit(t[i]))) return false;
  int64_t frac = 0, scale = 1000;
  if (i < n && t[i] == '.') {
    size_t f = ++i;
    while (i < n && i - f < 3 && IsDigit(t[i])) {
      frac = frac * 10 + (t[i++] - '0');
      scale /= 10;
    }
    if (i == f) return false;
  }
  if (i != n) return false;  // more decimals, an exponent, white space: the general path
  v = v * 1000 + frac * scale;
  *out = neg ? -v : v;
  return true;
}

// Everything else: white space, a sign, more digits, an exponent; exact in 128 bits.
// Not inlined into ParseMicrosToNanos, whose usual path then saves no registers.
__attribute__((noinline)) bool GeneralMicros(std::string_view t, int64_t* out) {
  while (!t.empty() && (t.front() == ' ' || t.front() == '\t' || t.front() == '\n' || t.front() == '\r'))
    t.remove_prefix(1);
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t' || t.back() == '\n' || t.back() == '\r'))
    t.remove_suffix(1);
  size_t i = 0, n = t.size();
  bool neg = false;
  if (i < n && (t[i] == '-' || t[i] == '+')) neg = t[i++] == '-';
  constexpr int kMaxDigits = 36;  // 10^36 < 2^127: the mantissa never overflows
  u128 m = 0;
  int sig = 0;
  int64_t exp10 = 0;
  bool sticky = false;  // non-zero digits dropped beyond kMaxDigits
  size_t int_digits = 0, frac_digits = 0;
  for (; i < n && IsDigit(t[i]); ++i, ++int_digits) {
    int d = t[i] - '0';
    if (m == 0 && d == 0) continue;
    if (sig < kMaxDigits) {
      m = m * 10 + static_cast<unsigned>(d);
      ++sig;
    } else {
      ++exp10;
      sticky |= d != 0;
    }
  }
  if (i < n && t[i] == '.') {
    ++i;
    for (; i < n && IsDigit(t[i]); ++i, ++frac_digits) {
      int d = t[i] - '0';
      if (sig < kMaxDigits) {
        if (m != 0 || d != 0) {
          m = m * 10 + static_cast<unsigned>(d);
          ++sig;
        }
        --exp10;
      } else {
        sticky |= d != 0;
      }
    }
    if (frac_digits == 0) return false;
  }
  if (int_digits == 0) return false;  // JSON numbers have an integer part: no ".5"
  if (i < n && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    bool eneg = false;
    if (i < n && (t[i] == '-' || t[i] == '+')) eneg = t[i++] == '-';
    if (i >= n || !IsDigit(t[i])) return false;
    int64_t e = 0;
    for (; i < n && IsDigit(t[i]); ++i) e = e < 100000 ? e * 10 + (t[i] - '0') : e;
    exp10 += eneg ? -e : e;
  }
  if (i != n) return false;
  exp10 += 3;  // microseconds -> nanoseconds
  u128 q;
  if (m == 0) {
    q = 0;
  } else if (exp10 >= 0) {
    if (exp10 > 19) return false;
    q = m;
    for (int64_t k = 0; k < exp10; ++k) {
      q *= 10;
      if (q > (static_cast<u128>(1) << 64)) return false;
    }
  } else if (-exp10 > 38) {
    q = 0;  // m < 10^36: far below half a nanosecond
  } else {
    u128 p = Pow10(static_cast<int>(-exp10));
    q = m / p;
    u128 r = m % p, half = p / 2;
    if (r > half || (r == half && (sticky || (q & 1)))) ++q;
  }
  const u128 limit = static_cast<u128>(std::numeric_limits<int64_t>::max()) + (neg ? 1 : 0);
  if (q > limit) return false;
  *out = neg ? static_cast<int64_t>(-static_cast<__int128>(q)) : static_cast<int64_t>(q);
  return true;
}

}  // namespace

bool ParseMicrosToNanos(std::string_view t, int64_t* out) { return PlainMicros(t, out) || GeneralMicros(t, out); }

}  // namespace torch2pprof
