#include "ir/layout.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "ir/graph_builder.h"

namespace latte {
namespace {

using Ints = std::vector<std::int64_t>;

std::vector<float> Iota(std::int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  return v;
}

Attributes ConvAttrs(const std::string& filter_layout = "OIHW") {
  Attributes a;
  a.Set("layout", "NCHW");
  a.Set("filter_layout", filter_layout);
  a.Set("padding", "explicit");
  a.Set("pads", Ints{1, 2, 1, 2});
  return a;
}

// The node of the converted graph called `name`, or null.
const Node* Find(const Graph& g, const std::string& name) {
  for (const Node& n : g.nodes())
    if (n.name == name) return &n;
  return nullptr;
}

float At(const Tensor& t, size_t i) {
  float v = 0;
  std::memcpy(&v, t.data->data() + i * sizeof(float), sizeof(float));
  return v;
}

int Count(const Graph& g, OpKind kind) {
  int n = 0;
  for (const Node& node : g.nodes()) n += node.kind == kind;
  return n;
}

TEST(Layout, ConvReluPoolFlattenFullyConnected) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 2, 8, 8});
  TensorId w = b.Constant("w", {4, 2, 3, 5}, Iota(4 * 2 * 3 * 5));
  TensorId y = b.Op1(OpKind::kConv2D, "conv", {x, w, b.Constant("bias", {4})}, ConvAttrs());
  y = b.Op1(OpKind::kRelu, "relu", {y});
  Attributes nchw;
  nchw.Set("layout", "NCHW");
  y = b.Op1(OpKind::kGlobalAvgPool, "gap", {y}, nchw);
  y = b.Op1(OpKind::kFlatten, "flatten", {y});
  y = b.Op1(OpKind::kFullyConnected, "fc", {y, b.Constant("fc_w", {5, 4})});
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();

  auto c = ConvertToNhwc(*g);
  ASSERT_TRUE(c.ok()) << c.status().message();
  ASSERT_EQ(c->outputs.size(), 1u);
  EXPECT_EQ(c->tensor(c->outputs[0]).shape, (Shape{1, 5}));
  EXPECT_EQ(c->tensor(c->inputs[0]).shape, (Shape{1, 2, 8, 8}));  // callers feed NCHW as before
  const Node* conv = Find(*c, "conv");
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->attrs.GetString("layout", ""), "NHWC");
  EXPECT_EQ(conv->attrs.GetString("filter_layout", ""), "OHWI");
  EXPECT_EQ(conv->source_op, g->node(0).source_op);
  EXPECT_EQ(c->tensor(conv->inputs[0]).shape, (Shape{1, 8, 8, 2}));
  EXPECT_EQ(c->tensor(conv->outputs[0]).shape, (Shape{1, 8, 8, 4}));
  const Tensor& wt = c->tensor(conv->inputs[1]);
  ASSERT_EQ(wt.shape, (Shape{4, 3, 5, 2}));
  // OHWI [o][h][w][i] holds OIHW [o][i][h][w] = ((o*2+i)*3+h)*5+w.
  auto oihw = [](int o, int i, int h, int ww) { return static_cast<float>(((o * 2 + i) * 3 + h) * 5 + ww); };
  EXPECT_EQ(At(wt, 0), oihw(0, 0, 0, 0));
  EXPECT_EQ(At(wt, 1), oihw(0, 1, 0, 0));
  EXPECT_EQ(At(wt, 2), oihw(0, 0, 0, 1));
  EXPECT_EQ(At(wt, ((3 * 3 + 2) * 5 + 4) * 2 + 1), oihw(3, 1, 2, 4));
  EXPECT_EQ(Find(*c, "gap")->attrs.GetString("layout", ""), "NHWC");
  EXPECT_EQ(Find(*c, "relu")->inputs[0], conv->outputs[0]);
  // One transpose in (after x), one back before flatten: flatten sees NCHW order.
  EXPECT_EQ(Count(*c, OpKind::kTranspose), 2);
  const Node* flatten = Find(*c, "flatten");
  EXPECT_EQ(c->tensor(flatten->inputs[0]).shape, (Shape{1, 4, 1, 1}));
  EXPECT_EQ(c->node(c->Producer(flatten->inputs[0])).kind, OpKind::kTranspose);
}

TEST(Layout, PerChannelAddConstantBroadcastsInNhwc) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 3, 6, 6});
  TensorId y = b.Op1(OpKind::kConv2D, "conv", {x, b.Constant("w", {4, 3, 3, 3})}, ConvAttrs());
  TensorId z = b.Op1(OpKind::kAdd, "add", {y, b.Constant("bias3", {4, 1, 1}, {1, 2, 3, 4})});
  TensorId u = b.Op1(OpKind::kMul, "mul", {b.Constant("scale4", {1, 4, 1, 1}, {1, 2, 3, 4}), z});
  auto g = b.Finish({u});
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto c = ConvertToNhwc(*g);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->tensor(c->outputs[0]).shape, g->tensor(g->outputs[0]).shape);
  EXPECT_EQ(c->tensor(c->outputs[0]).name, g->tensor(g->outputs[0]).name);
  const Node* add = Find(*c, "add");
  EXPECT_EQ(c->tensor(add->inputs[1]).shape, (Shape{1, 1, 4}));
  EXPECT_EQ(At(c->tensor(add->inputs[1]), 3), 4.0f);
  const Node* mul = Find(*c, "mul");
  EXPECT_EQ(c->tensor(mul->inputs[0]).shape, (Shape{1, 1, 1, 4}));
  EXPECT_EQ(c->tensor(mul->outputs[0]).shape, (Shape{1, 6, 8, 4}));
  const Node& last = c->node(c->Producer(c->outputs[0]));
  EXPECT_EQ(last.kind, OpKind::kTranspose);
  EXPECT_EQ(last.attrs.GetInts("perm"), (Ints{0, 3, 1, 2}));
}

TEST(Layout, ConcatOnChannelsBecomesAxis3) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 3, 6, 6});
  TensorId p = b.Op1(OpKind::kConv2D, "a", {x, b.Constant("wa", {4, 3, 3, 3})}, ConvAttrs());
  TensorId q = b.Op1(OpKind::kConv2D, "b", {x, b.Constant("wb", {2, 3, 3, 3})}, ConvAttrs());
  Attributes axis;
  axis.Set("axis", std::int64_t{1});
  TensorId y = b.Op1(OpKind::kConcat, "cat", {p, q}, axis);
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto c = ConvertToNhwc(*g);
  ASSERT_TRUE(c.ok()) << c.status().message();
  const Node* cat = Find(*c, "cat");
  EXPECT_EQ(cat->attrs.GetInt("axis", -1), 3);
  EXPECT_EQ(c->tensor(cat->outputs[0]).shape, (Shape{1, 6, 8, 6}));
  EXPECT_EQ(c->tensor(c->outputs[0]).shape, (Shape{1, 6, 6, 8}));
  EXPECT_EQ(Count(*c, OpKind::kTranspose), 2);  // x is transposed once for both convs
}

TEST(Layout, DepthwiseWeightsBecome1HWO) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 3, 6, 6});
  Attributes a = ConvAttrs();
  a.Set("groups", std::int64_t{3});
  a.Set("depth_multiplier", std::int64_t{2});
  TensorId y = b.Op1(OpKind::kDepthwiseConv2D, "dw", {x, b.Constant("w", {6, 1, 3, 3}, Iota(54))}, a);
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto c = ConvertToNhwc(*g);
  ASSERT_TRUE(c.ok()) << c.status().message();
  const Node* dw = Find(*c, "dw");
  EXPECT_EQ(dw->attrs.GetString("filter_layout", ""), "1HWO");
  EXPECT_EQ(dw->attrs.GetString("layout", ""), "NHWC");
  const Tensor& w = c->tensor(dw->inputs[1]);
  ASSERT_EQ(w.shape, (Shape{1, 3, 3, 6}));
  // [0][h][w][o] holds [o][0][h][w] = o*9 + h*3 + w.
  EXPECT_EQ(At(w, 0), 0.0f);
  EXPECT_EQ(At(w, 1), 9.0f);
  EXPECT_EQ(At(w, 6), 1.0f);
  EXPECT_EQ(At(w, (2 * 3 + 1) * 6 + 5), 5.0f * 9 + 2 * 3 + 1);
  EXPECT_EQ(c->tensor(c->outputs[0]).shape, g->tensor(g->outputs[0]).shape);
}

TEST(Layout, OpsWithoutAnNhwcFormStayNchwBehindTransposes) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 3, 6, 6});
  TensorId y = b.Op1(OpKind::kConv2D, "conv", {x, b.Constant("w", {4, 3, 3, 3})}, ConvAttrs());
  Attributes sm;
  sm.Set("axis", std::int64_t{1});
  sm.Set("coerce_2d", std::int64_t{1});  // over C*H*W flattened: no NHWC equivalent
  TensorId z = b.Op1(OpKind::kSoftmax, "softmax", {y}, sm);
  auto g = b.Finish({z});
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto c = ConvertToNhwc(*g);
  ASSERT_TRUE(c.ok()) << c.status().message();
  const Node* s = Find(*c, "softmax");
  EXPECT_EQ(s->attrs.GetInt("axis", 0), 1);
  EXPECT_EQ(c->tensor(s->inputs[0]).shape, (Shape{1, 4, 6, 8}));
  EXPECT_EQ(c->tensor(c->outputs[0]).shape, (Shape{1, 4, 6, 8}));
}

TEST(Layout, UnconvertibleOpsFailNamingTheNode) {
  {
    GraphBuilder b;
    TensorId x = b.Input("x", {1, 4, 5, 5});
    Attributes a;
    a.Set("layout", "NCHW");
    a.Set("filter_layout", "IOHW");
    a.Set("groups", std::int64_t{2});
    a.Set("strides", Ints{2, 2});
    TensorId y = b.Op1(OpKind::kTransposeConv2D, "up", {x, b.Constant("w", {4, 3, 2, 2})}, a);
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    auto c = ConvertToNhwc(*g);
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.status().code(), StatusCode::kUnsupported);
    EXPECT_NE(c.status().message().find("'up'"), std::string::npos) << c.status().message();
  }
  {
    GraphBuilder b;
    TensorId x = b.Input("x", {1, 3, 6, 6});
    TensorId w = b.Input("w", {4, 3, 3, 3});  // weights fed at run time
    TensorId y = b.Op1(OpKind::kConv2D, "runtime_w", {x, w}, ConvAttrs());
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    auto c = ConvertToNhwc(*g);
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.status().code(), StatusCode::kUnsupported);
    EXPECT_NE(c.status().message().find("'runtime_w'"), std::string::npos) << c.status().message();
  }
}

TEST(Layout, TransposeConvWeightsBecomeOhwi) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 3, 4, 4});
  Attributes a;
  a.Set("layout", "NCHW");
  a.Set("filter_layout", "IOHW");
  a.Set("strides", Ints{2, 2});
  a.Set("padding", "valid");
  TensorId y = b.Op1(OpKind::kTransposeConv2D, "up", {x, b.Constant("w", {3, 2, 2, 2}, Iota(24))}, a);
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto c = ConvertToNhwc(*g);
  ASSERT_TRUE(c.ok()) << c.status().message();
  const Node* up = Find(*c, "up");
  const Tensor& w = c->tensor(up->inputs[1]);
  ASSERT_EQ(w.shape, (Shape{2, 2, 2, 3}));
  // OHWI [o][h][w][i] holds IOHW [i][o][h][w] = ((i*2+o)*2+h)*2+w.
  EXPECT_EQ(At(w, 1), 8.0f);
  EXPECT_EQ(At(w, ((1 * 2 + 1) * 2 + 1) * 3 + 2), static_cast<float>(((2 * 2 + 1) * 2 + 1) * 2 + 1));
  EXPECT_EQ(c->tensor(c->outputs[0]).shape, g->tensor(g->outputs[0]).shape);
}

}  // namespace
}  // namespace latte

namespace latte {
namespace {

TEST(Layout, AxisOpsAreRemapped) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 3, 6, 6});
  TensorId y = b.Op1(OpKind::kConv2D, "conv", {x, b.Constant("w", {4, 3, 3, 3})}, ConvAttrs());
  Attributes pad;
  pad.Set("pads", Ints{0, 1, 2, 3, 0, 5, 6, 7});  // begins N C H W, ends N C H W
  y = b.Op1(OpKind::kPad, "pad", {y}, pad);
  Attributes mean;
  mean.Set("axes", Ints{2, -1});
  y = b.Op1(OpKind::kMean, "mean", {y}, mean);
  Attributes sm;
  sm.Set("axis", std::int64_t{1});
  y = b.Op1(OpKind::kSoftmax, "softmax", {y}, sm);
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto c = ConvertToNhwc(*g);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(Find(*c, "pad")->attrs.GetInts("pads"), (Ints{0, 2, 3, 1, 0, 6, 7, 5}));
  EXPECT_EQ(Find(*c, "mean")->attrs.GetInts("axes"), (Ints{1, 2}));
  EXPECT_EQ(Find(*c, "softmax")->attrs.GetInt("axis", 0), 3);
  EXPECT_EQ(c->tensor(c->outputs[0]).shape, g->tensor(g->outputs[0]).shape);
  EXPECT_EQ(Count(*c, OpKind::kTranspose), 2);
}

}  // namespace
}  // namespace latte
