// Decimal microseconds to integer nanoseconds: exact, half-even below 1 ns.
#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <string>
#include <utility>

#include "load/exact_time.h"
#include "torch2pprof/stages/trace_loader.h"

namespace torch2pprof {
namespace {

int64_t Ns(const char* text) {
  int64_t v = -777;
  EXPECT_TRUE(ParseMicrosToNanos(text, &v)) << text;
  return v;
}

bool Rejects(const char* text) {
  int64_t v;
  return !ParseMicrosToNanos(text, &v);
}

TEST(ExactTime, SixteenDigitEpochsKeepEveryNanosecond) {
  // A double holds ~15.9 digits: 1712195495519695.8 would come back as ...695.75.
  EXPECT_EQ(Ns("1712195495519695.8"), 1712195495519695800);
  EXPECT_EQ(Ns("1712195495519695.801"), 1712195495519695801);
  EXPECT_EQ(Ns("4203669603069.091"), 4203669603069091);
}

TEST(ExactTime, IntegersFractionsAndExponents) {
  EXPECT_EQ(Ns("0"), 0);
  EXPECT_EQ(Ns("35"), 35000);
  EXPECT_EQ(Ns("63.813"), 63813);
  EXPECT_EQ(Ns("0.001"), 1);
  EXPECT_EQ(Ns("1.5e3"), 1500000);
  EXPECT_EQ(Ns("1E-3"), 1);
  EXPECT_EQ(Ns("1.7121954955199e15"), 1712195495519900000);
  EXPECT_EQ(Ns("-2.5"), -2500);
  EXPECT_EQ(Ns(" 7 "), 7000);  // simdjson hands number tokens over with trailing white space
}

TEST(ExactTime, BelowOneNanosecondRoundsHalfToEven) {
  EXPECT_EQ(Ns("0.0004"), 0);
  EXPECT_EQ(Ns("0.0005"), 0);                                       // 0.5 ns -> 0 (even)
  EXPECT_EQ(Ns("0.0015"), 2);                                       // 1.5 ns -> 2 (even)
  EXPECT_EQ(Ns("0.0025"), 2);                                       // 2.5 ns -> 2 (even)
  EXPECT_EQ(Ns("0.00250000000000000000000000000000000000001"), 3);  // just above half
  EXPECT_EQ(Ns("0.0006"), 1);
  EXPECT_EQ(Ns("-0.0015"), -2);
  EXPECT_EQ(Ns("1e-400"), 0);
}

TEST(ExactTime, LimitsOfSixtyFourBits) {
  EXPECT_EQ(Ns("9223372036854775.807"), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(Ns("-9223372036854775.808"), std::numeric_limits<int64_t>::min());
  EXPECT_TRUE(Rejects("9223372036854775.808"));
  EXPECT_TRUE(Rejects("1e20"));
  EXPECT_TRUE(Rejects("123456789012345678901234567890"));
}

// Kineto's usual numbers (up to 16 digits, up to 3 decimals) take a short path; at
// its edges the results must be those of exact arithmetic.
TEST(ExactTime, KinetosUsualNumbersAndTheirEdges) {
  const std::pair<const char*, int64_t> cases[] = {
      {"4553773957368.553", 4553773957368553},
      {"-4553773957368.553", -4553773957368553},
      {"189.1", 189100},
      {"189.13", 189130},
      {"-0", 0},
      {"007.5", 7500},
      {"1234567890123456", 1234567890123456000},
      {"9223372036854774.999", 9223372036854774999},
      {"9223372036854775", 9223372036854775000},
      {"1712195495519695.8012", 1712195495519695801},  // 0.2 ns
      {"1712195495519695.8015", 1712195495519695802},  // 1.5 ns -> even
      {"1712195495519695.8025", 1712195495519695802},  // 2.5 ns -> even
  };
  for (const auto& [text, ns] : cases) EXPECT_EQ(Ns(text), ns) << text;
  EXPECT_TRUE(Rejects("12345678901234567"));  // 17 digits: past 2^63 ns
  EXPECT_TRUE(Rejects("-"));
  EXPECT_TRUE(Rejects("5."));
}

// Random decimals against 128-bit arithmetic done here: integer part times 1000 plus
// the fraction in nanoseconds, rounded half to even.
TEST(ExactTime, RandomDecimalsMatchExactArithmetic) {
  std::mt19937_64 rng(13);
  for (int k = 0; k < 200000; ++k) {
    int digits = 1 + static_cast<int>(rng() % 16), decimals = static_cast<int>(rng() % 6);
    std::string text = rng() % 4 == 0 ? "-" : "";
    __int128 whole = 0, frac = 0, scale = 1;
    for (int d = 0; d < digits; ++d) {
      int digit = static_cast<int>(rng() % 10);
      text += static_cast<char>('0' + digit);
      whole = whole * 10 + digit;
    }
    if (decimals) text += '.';
    for (int d = 0; d < decimals; ++d) {
      int digit = static_cast<int>(rng() % 10);
      text += static_cast<char>('0' + digit);
      frac = frac * 10 + digit;
      scale *= 10;
    }
    __int128 ns = frac * 1000 / scale, rest = frac * 1000 % scale;
    if (2 * rest > scale || (2 * rest == scale && ns % 2 == 1)) ++ns;
    __int128 total = whole * 1000 + ns;
    if (text[0] == '-') total = -total;
    int64_t got = 0;
    bool fits = total >= std::numeric_limits<int64_t>::min() && total <= std::numeric_limits<int64_t>::max();
    ASSERT_EQ(ParseMicrosToNanos(text, &got), fits) << text;
    if (fits) {
      ASSERT_EQ(got, static_cast<int64_t>(total)) << text;
    }
  }
}

// Digits are read eight at a time where eight bytes remain: every byte value at every
// place of a Kineto-like number, each against what a digit-by-digit reading gives.
TEST(ExactTime, EveryByteAtEveryPlaceOfAnEpoch) {
  const std::string base = "1712195495519695.801";
  for (size_t at = 0; at < base.size(); ++at) {
    for (int byte = 1; byte < 256; ++byte) {
      std::string text = base;
      text[at] = static_cast<char>(byte);
      int64_t got = -1;
      const bool ok = ParseMicrosToNanos(text, &got);
      // By hand: digits everywhere but the point (or the point moved onto a digit's
      // place, which still reads as a decimal when it is the only one).
      bool digits = true;
      size_t points = 0, point = 0;
      for (size_t k = 0; k < text.size(); ++k) {
        if (text[k] == '.') {
          ++points, point = k;
        } else if (text[k] < '0' || text[k] > '9') {
          digits = false;
        }
      }
      if (!digits || points != 1 || point == 0 || point + 1 == text.size()) {
        // Not a plain decimal (signs, exponents and spaces are covered elsewhere): one of
        // those the general path accepts, or a rejection.
        if (ok) {
          EXPECT_TRUE(byte == ' ' || byte == '\t' || byte == '\n' || byte == '\r' || byte == '-' || byte == '+' ||
                      byte == 'e' || byte == 'E')
              << text;
        }
        continue;
      }
      // The exact value in 128 bits, rounded half to even below 1 ns.
      unsigned __int128 m = 0;
      int frac = 0;
      for (size_t k = 0; k < text.size(); ++k) {
        if (text[k] == '.') continue;
        m = m * 10 + static_cast<unsigned>(text[k] - '0');
        frac += k > point;
      }
      for (; frac < 3; ++frac) m *= 10;
      unsigned __int128 div = 1;
      for (; frac > 3; --frac) div *= 10;
      unsigned __int128 q = m / div, r = m % div;
      if (2 * r > div || (2 * r == div && (q & 1))) ++q;
      if (q > static_cast<unsigned __int128>(std::numeric_limits<int64_t>::max())) {
        EXPECT_FALSE(ok) << text;
        continue;
      }
      ASSERT_TRUE(ok) << text;
      EXPECT_EQ(got, static_cast<int64_t>(q)) << text;
    }
  }
}

TEST(ExactTime, RejectsWhatIsNotANumber) {
  for (const char* bad : {"", "abc", "1.", ".5", "1e", "--1", "1.2.3", "0x10", "NaN", "inf", "1 2"}) {
    EXPECT_TRUE(Rejects(bad)) << bad;
  }
}

}  // namespace
}  // namespace torch2pprof
