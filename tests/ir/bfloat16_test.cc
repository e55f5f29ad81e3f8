// bfloat16 conversion (ir/dtype): the rounding oneDNN and AVX-512 BF16 apply, checked on values
// whose nearest bfloat16 is known by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "ir/dtype.h"

namespace latte {
namespace {

TEST(Bfloat16, KnownValues) {
  EXPECT_EQ(FloatToBf16(0.0f), 0x0000);
  EXPECT_EQ(FloatToBf16(-0.0f), 0x8000);
  EXPECT_EQ(FloatToBf16(1.0f), 0x3f80);
  EXPECT_EQ(FloatToBf16(-2.0f), 0xc000);
  EXPECT_EQ(Bf16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(Bf16ToFloat(0x4049), 3.140625f);  // π's nearest bfloat16
  EXPECT_EQ(FloatToBf16(3.14159265f), 0x4049);
  EXPECT_TRUE(std::isinf(Bf16ToFloat(0x7f80)));
  EXPECT_EQ(DataTypeSize(DataType::kBFloat16), 2u);
  EXPECT_EQ(DataTypeName(DataType::kBFloat16), "bfloat16");
  EXPECT_EQ(*DataTypeFromPrecision("bf16"), DataType::kBFloat16);
}

TEST(Bfloat16, RoundsToNearestEven) {
  // bfloat16 keeps 8 significant bits: next after 1 is 1 + 2^-7. 1 + 2^-8 is the tie: to even (1).
  EXPECT_EQ(FloatToBf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(FloatToBf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);  // tie between 0x3f81 and 0x3f82: even
  EXPECT_EQ(FloatToBf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)), 0x3f81);  // past the tie: up
  EXPECT_EQ(FloatToBf16(std::numeric_limits<float>::max()), 0x7f80);  // rounds past the largest: inf
  const std::uint16_t nan = FloatToBf16(std::numeric_limits<float>::quiet_NaN());
  EXPECT_TRUE(std::isnan(Bf16ToFloat(nan)));
  // A NaN whose payload sits only in the low 16 bits must not be truncated to inf.
  const std::uint32_t low_payload = 0x7f800001u;
  float low_nan;
  std::memcpy(&low_nan, &low_payload, sizeof low_nan);
  EXPECT_TRUE(std::isnan(Bf16ToFloat(FloatToBf16(low_nan))));
}

TEST(Bfloat16, EveryFiniteBfloat16RoundTrips) {
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const auto h = static_cast<std::uint16_t>(bits);
    const float f = Bf16ToFloat(h);
    if (std::isnan(f)) continue;
    EXPECT_EQ(FloatToBf16(f), h) << "bits " << bits;
  }
}

}  // namespace
}  // namespace latte
