// Decimal microseconds to integer nanoseconds: exact, half-even below 1 ns.
#include <gtest/gtest.h>

#include <limits>

#include "torch2pprof/trace_loader.h"

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

TEST(ExactTime, RejectsWhatIsNotANumber) {
  for (const char* bad : {"", "abc", "1.", ".5", "1e", "--1", "1.2.3", "0x10", "NaN", "inf", "1 2"}) {
    EXPECT_TRUE(Rejects(bad)) << bad;
  }
}

}  // namespace
}  // namespace torch2pprof
