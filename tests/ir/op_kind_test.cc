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

// The kernel family column of op_kinds.def: what kernel_graph groups by and the samplers draw by.
TEST(OpKind, KernelFamiliesComeFromTheList) {
  EXPECT_EQ(KernelFamilyOf(OpKind::kDepthwiseConv2D), KernelFamily::kConv);
  EXPECT_EQ(KernelFamilyOf(OpKind::kTransposeConv2D), KernelFamily::kConv);
  EXPECT_EQ(KernelFamilyOf(OpKind::kHardSwish), KernelFamily::kUnary);
  EXPECT_EQ(KernelFamilyOf(OpKind::kBatchNorm), KernelFamily::kUnary);
  EXPECT_EQ(KernelFamilyOf(OpKind::kFlatten), KernelFamily::kReshape);
  EXPECT_EQ(KernelFamilyOf(OpKind::kSlice), KernelFamily::kSlice);
  EXPECT_EQ(KernelFamilyOf(OpKind::kSplit), KernelFamily::kNone);
  EXPECT_EQ(KernelFamilyOf(OpKind::kOpaque), KernelFamily::kNone);
  std::set<std::string> binary;
  for (OpKind kind : AllOpKinds()) {
    EXPECT_EQ(IsBinaryElementwise(kind), KernelFamilyOf(kind) == KernelFamily::kBinary) << OpName(kind);
    if (IsBinaryElementwise(kind)) binary.insert(std::string(OpName(kind)));
    // Every activation and elementwise op is a one- or two-input kernel, or where's three.
    const OpCategory category = OpCategoryOf(kind);
    if (category == OpCategory::kActivation || category == OpCategory::kElementwise) {
      EXPECT_TRUE(KernelFamilyOf(kind) == KernelFamily::kUnary || KernelFamilyOf(kind) == KernelFamily::kBinary ||
                  kind == OpKind::kWhere)
          << OpName(kind);
    }
  }
  EXPECT_EQ(binary, (std::set<std::string>{"add", "sub", "mul", "div", "pow", "maximum", "minimum", "squared_difference",
                                           "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
                                           "logical_and", "logical_or"}));
  EXPECT_EQ(KernelFamilyOf(OpKind::kLayerNorm), KernelFamily::kLayerNorm);
  EXPECT_EQ(KernelFamilyOf(OpKind::kGather), KernelFamily::kGather);
  EXPECT_EQ(KernelFamilyOf(OpKind::kArgMax), KernelFamily::kReduce);
}

// Comparisons and logic write bool, argmax and argmin int64; every other kind its input's type.
TEST(OpKind, FixedOutputTypes) {
  for (OpKind kind : AllOpKinds()) {
    const DataType fixed = FixedOutputType(kind);
    if (IsComparisonOrLogic(kind)) EXPECT_EQ(fixed, DataType::kBool) << OpName(kind);
    else if (kind == OpKind::kArgMax || kind == OpKind::kArgMin) EXPECT_EQ(fixed, DataType::kInt64);
    else EXPECT_EQ(fixed, DataType::kUnknown) << OpName(kind);
  }
  EXPECT_TRUE(IsLogic(OpKind::kLogicalNot));
  EXPECT_FALSE(IsLogic(OpKind::kEqual));
  EXPECT_TRUE(IsComparisonOrLogic(OpKind::kNotEqual));
  EXPECT_FALSE(IsComparisonOrLogic(OpKind::kWhere));
}

}  // namespace
}  // namespace latte
