#include "ir/op_kind.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace latte {
namespace {

TEST(OpKind, NamesRoundTripAndAreUnique) {
  std::set<std::string> names;
  for (OpKind kind : AllOpKinds()) {
    std::string name(OpName(kind));
    EXPECT_TRUE(names.insert(name).second) << "duplicate op name " << name;
    auto back = OpFromName(name);
    ASSERT_TRUE(back.has_value()) << name;
    EXPECT_EQ(*back, kind);
  }
  EXPECT_FALSE(OpFromName("no_such_op").has_value());
}

TEST(OpKind, KnownNamesAndCategories) {
  EXPECT_EQ(OpName(OpKind::kConv2D), "conv2d");
  EXPECT_EQ(OpName(OpKind::kDepthwiseConv2D), "depthwise_conv2d");
  EXPECT_EQ(OpCategoryOf(OpKind::kConv2D), OpCategory::kCompute);
  EXPECT_EQ(OpCategoryOf(OpKind::kAdd), OpCategory::kElementwise);
  EXPECT_EQ(OpCategoryOf(OpKind::kOpaque), OpCategory::kUnknown);
  EXPECT_EQ(OpCategoryName(OpCategory::kDataMovement), "data_movement");
}

}  // namespace
}  // namespace latte
