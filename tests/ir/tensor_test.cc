#include "ir/tensor.h"

#include <gtest/gtest.h>

#include <cstring>

namespace latte {
namespace {

TEST(Tensor, ShapeToStringAndParse) {
  EXPECT_EQ(ShapeToString({1, 3, 224, 224}), "1x3x224x224");
  EXPECT_EQ(ShapeToString({-1, 3}), "?x3");
  EXPECT_EQ(ShapeToString({}), "scalar");
  EXPECT_EQ(ShapeToString({}, false), "*");
  auto s = ParseShape("1x3x48x192");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, (Shape{1, 3, 48, 192}));
  EXPECT_FALSE(ParseShape("").ok());
  EXPECT_FALSE(ParseShape("1x0").ok());
  EXPECT_FALSE(ParseShape("1xx2").ok());
  EXPECT_FALSE(ParseShape("-1x2").ok());
  EXPECT_FALSE(ParseShape("99999999999999999999").ok());
}

TEST(Tensor, ElementsAndBytesWithOverflow) {
  Tensor t;
  t.shape = {2, 3, 4};
  t.shape_known = true;
  t.dtype = DataType::kFloat16;
  EXPECT_EQ(t.num_elements(), 24);
  EXPECT_EQ(t.num_bytes(), 48);
  t.shape = {1ll << 40, 1ll << 40};
  EXPECT_FALSE(t.num_elements().has_value());
  t.shape = {-1, 3};
  EXPECT_FALSE(t.fully_known());
  EXPECT_FALSE(t.num_bytes().has_value());
  t.shape_known = false;
  t.shape = {};
  EXPECT_FALSE(t.num_elements().has_value());
}

TEST(Tensor, ConstantReaders) {
  Tensor t;
  t.dtype = DataType::kInt32;
  std::vector<std::int32_t> v = {1, -2, 3};
  auto bytes = std::make_shared<std::vector<std::uint8_t>>(12);
  std::memcpy(bytes->data(), v.data(), 12);
  t.data = bytes;
  auto ints = ConstantInts(t);
  ASSERT_TRUE(ints.ok());
  EXPECT_EQ(*ints, (std::vector<std::int64_t>{1, -2, 3}));
  EXPECT_FALSE(ConstantFloats(t).ok());

  Tensor h;
  h.dtype = DataType::kFloat16;
  h.data = std::make_shared<std::vector<std::uint8_t>>(std::vector<std::uint8_t>{0x00, 0x3c, 0x00, 0xc0});
  auto floats = ConstantFloats(h);
  ASSERT_TRUE(floats.ok());
  EXPECT_EQ(*floats, (std::vector<float>{1.0f, -2.0f}));
  Tensor activation;
  EXPECT_FALSE(ConstantInts(activation).ok());
}

}  // namespace
}  // namespace latte
