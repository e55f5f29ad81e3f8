#include "ir/cost.h"

#include <gtest/gtest.h>

#include "ir/graph_builder.h"

namespace latte {
namespace {

using Ints = std::vector<std::int64_t>;

TEST(Cost, ConvMacsByFormula) {
  // 1x32x32x16 input, 3x3 stride 1 same, 24 filters: MACs = 32*32*24 * 3*3*16.
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 32, 32, 16});
  TensorId w = b.Constant("w", {24, 3, 3, 16});
  TensorId bias = b.Constant("b", {24});
  Attributes a;
  a.Set("filter_layout", "OHWI");
  a.Set("padding", "same");
  a.Set("activation", "relu");
  TensorId y = b.Op1(OpKind::kConv2D, "conv", {x, w, bias}, a);
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto c = ComputeNodeCost(*g, 0);
  ASSERT_TRUE(c.ok()) << c.status().message();
  const std::int64_t out = 32 * 32 * 24;
  EXPECT_EQ(c->macs, out * 3 * 3 * 16);
  EXPECT_EQ(c->flops, 2 * c->macs + out /*bias*/ + out /*relu*/);
  EXPECT_EQ(c->params, 24 * 3 * 3 * 16 + 24);
  EXPECT_EQ(c->weight_bytes, 4 * c->params);
  EXPECT_EQ(c->input_bytes, 4 * 32 * 32 * 16);
  EXPECT_EQ(c->output_bytes, 4 * out);
}

TEST(Cost, GroupedDepthwiseTransposedAndFullyConnected) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 8, 10, 10});  // NCHW
  Attributes grouped;
  grouped.Set("layout", "NCHW");
  grouped.Set("filter_layout", "OIHW");
  grouped.Set("groups", std::int64_t{2});
  grouped.Set("strides", Ints{2, 2});
  grouped.Set("padding", "valid");
  TensorId g1 = b.Op1(OpKind::kConv2D, "grouped", {x, b.Constant("w1", {6, 4, 2, 2})}, grouped);
  Attributes dw;
  dw.Set("layout", "NCHW");
  dw.Set("filter_layout", "OIHW");
  dw.Set("padding", "same");
  TensorId d = b.Op1(OpKind::kDepthwiseConv2D, "dw", {g1, b.Constant("w2", {12, 1, 3, 3})}, dw);
  Attributes tc;
  tc.Set("layout", "NCHW");
  tc.Set("filter_layout", "IOHW");
  tc.Set("strides", Ints{2, 2});
  tc.Set("padding", "valid");
  TensorId t = b.Op1(OpKind::kTransposeConv2D, "tconv", {d, b.Constant("w3", {12, 5, 2, 2})}, tc);
  TensorId f = b.Op1(OpKind::kFlatten, "flatten", {t});
  TensorId fc = b.Op1(OpKind::kFullyConnected, "fc", {f, b.Constant("w4", {7, 5 * 10 * 10}), b.Constant("b4", {7})});
  auto g = b.Finish({fc});
  ASSERT_TRUE(g.ok()) << g.status().message();
  // grouped: out 1x6x5x5, each output sums 2*2*(8/2) products.
  EXPECT_EQ(ComputeNodeCost(*g, 0)->macs, 6 * 5 * 5 * 2 * 2 * 4);
  // depthwise 6 → 12 channels (multiplier 2): each output sums 3*3*1.
  EXPECT_EQ(g->tensor(d).shape, (Shape{1, 12, 5, 5}));
  EXPECT_EQ(ComputeNodeCost(*g, 1)->macs, 12 * 5 * 5 * 3 * 3);
  // transposed: each of 12*5*5 input values scatters a 2x2 patch into 5 output channels.
  EXPECT_EQ(g->tensor(t).shape, (Shape{1, 5, 10, 10}));
  EXPECT_EQ(ComputeNodeCost(*g, 2)->macs, 12 * 5 * 5 * 2 * 2 * 5);
  EXPECT_EQ(ComputeNodeCost(*g, 3)->macs, 0);
  EXPECT_EQ(ComputeNodeCost(*g, 3)->flops, 0);
  EXPECT_EQ(ComputeNodeCost(*g, 4)->macs, 500 * 7);
  EXPECT_EQ(ComputeNodeCost(*g, 4)->params, 500 * 7 + 7);
}

TEST(Cost, OpaqueAndUnknownShapesAreNeverZero) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 8});
  TensorId y = b.Op1(OpKind::kOpaque, "mystery", {x});
  b.graph().mutable_node(0).source_op = "Mystery";
  b.graph().mutable_node(0).unsupported_reason = "custom op 'Mystery'";
  TensorId z = b.Op1(OpKind::kRelu, "relu", {y});
  auto g = b.Finish({z});
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto opaque = ComputeNodeCost(*g, 0);
  ASSERT_FALSE(opaque.ok());
  EXPECT_EQ(opaque.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(opaque.status().message().find("custom op 'Mystery'"), std::string::npos);
  auto downstream = ComputeNodeCost(*g, 1);
  ASSERT_FALSE(downstream.ok());
  EXPECT_NE(downstream.status().message().find("unknown shape"), std::string::npos);
}

TEST(Cost, ElementwiseAndPools) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 4, 4, 2});
  TensorId s = b.Op1(OpKind::kHardSwish, "hs", {x});
  Attributes pool;
  pool.Set("kernel", Ints{2, 2});
  pool.Set("strides", Ints{2, 2});
  TensorId p = b.Op1(OpKind::kAvgPool2D, "pool", {s}, pool);
  TensorId m = b.Op1(OpKind::kAdd, "add", {p, b.Constant("c", {2})});
  auto g = b.Finish({m});
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(ComputeNodeCost(*g, 0)->flops, 32 * 4);
  EXPECT_EQ(ComputeNodeCost(*g, 1)->flops, 8 * 4);
  EXPECT_EQ(ComputeNodeCost(*g, 2)->flops, 8);
  EXPECT_EQ(ComputeNodeCost(*g, 2)->params, 2);
}

}  // namespace
}  // namespace latte
