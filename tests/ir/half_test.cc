#include "ir/half.h"

#include <gtest/gtest.h>

#include <cmath>

namespace latte {
namespace {

TEST(Half, KnownValues) {
  EXPECT_EQ(HalfToFloat(0x0000), 0.0f);
  EXPECT_EQ(HalfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(HalfToFloat(0xc000), -2.0f);
  EXPECT_EQ(HalfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(HalfToFloat(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(HalfToFloat(0x3555), 0.333251953125f);
  EXPECT_TRUE(std::isinf(HalfToFloat(0x7c00)));
  EXPECT_TRUE(std::isnan(HalfToFloat(0x7e00)));
}

TEST(Half, EveryFiniteHalfRoundTrips) {
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const auto h = static_cast<std::uint16_t>(bits);
    const float f = HalfToFloat(h);
    if (std::isnan(f)) continue;
    EXPECT_EQ(FloatToHalf(f), h) << "bits " << bits;
  }
}

TEST(Half, RoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1 and the next half (1 + 2^-10): ties go to even (1).
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  EXPECT_EQ(FloatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  EXPECT_EQ(FloatToHalf(1e6f), 0x7c00);                            // overflow → inf
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -26)), 0x0000);           // below half the smallest subnormal
  EXPECT_EQ(FloatToHalf(std::ldexp(3.0f, -26)), 0x0001);           // rounds up to the smallest subnormal
}

}  // namespace
}  // namespace latte
