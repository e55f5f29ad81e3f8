#include "ir/fold_pads.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/graph_builder.h"
#include "ir/op_params.h"

namespace latte {
namespace {

using Ints = std::vector<std::int64_t>;

Attributes PadAttrs(Ints pads, double value = 0.0) {
  Attributes a;
  a.Set("pads", std::move(pads));
  a.Set("value", value);
  return a;
}

TensorId Conv(GraphBuilder& b, TensorId x, const std::string& name, const std::string& padding, Ints strides = {2, 2},
              OpKind kind = OpKind::kConv2D) {
  Attributes a;
  a.Set("layout", std::string("NHWC"));
  a.Set("filter_layout", std::string("OHWI"));
  a.Set("padding", padding);
  a.Set("strides", strides);
  if (kind == OpKind::kDepthwiseConv2D) {
    a.Set("filter_layout", std::string("1HWO"));
    return b.Op1(kind, name, {x, b.Constant(name + "_w", {1, 3, 3, 4})}, a);
  }
  return b.Op1(kind, name, {x, b.Constant(name + "_w", {6, 3, 3, 4})}, a);
}

TEST(FoldPadsIntoConvs, AddsThePadToTheConvsResolvedPadding) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 9, 8, 4});
  // NHWC pads [n, h, w, c] begins then ends: top 1, left 2, bottom 3, right 1.
  TensorId p = b.Op1(OpKind::kPad, "pad", {x}, PadAttrs({0, 1, 2, 0, 0, 3, 1, 0}));
  TensorId y = Conv(b, p, "conv", "same");
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto before = GetConvParams(*g, g->node(1));
  ASSERT_TRUE(before.ok()) << before.status().message();  // "same" on the padded 13x11 input

  std::vector<std::vector<NodeId>> sources;
  Graph f = FoldPadsIntoConvs(*g, &sources);
  ASSERT_TRUE(f.Validate().ok());
  ASSERT_EQ(f.num_nodes(), 1u);
  const Node& conv = f.node(0);
  EXPECT_EQ(conv.inputs[0], x);
  EXPECT_EQ(conv.attrs.GetString("padding", ""), "explicit");
  EXPECT_EQ(*conv.attrs.GetInts("pads"),
            (Ints{before->pads.top + 1, before->pads.left + 2, before->pads.bottom + 3, before->pads.right + 1}));
  auto after = GetConvParams(f, conv);
  ASSERT_TRUE(after.ok()) << after.status().message();
  EXPECT_EQ(after->out_h, before->out_h);
  EXPECT_EQ(after->out_w, before->out_w);
  EXPECT_EQ(f.outputs, g->outputs);
  ASSERT_EQ(sources.size(), 1u);
  EXPECT_EQ(sources[0], (std::vector<NodeId>{1, 0}));  // the conv first, then the pad it absorbed
}

TEST(FoldPadsIntoConvs, FoldsIntoADepthwiseConvWithValidPadding) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 8, 8, 4});
  TensorId p = b.Op1(OpKind::kPad, "pad", {x}, PadAttrs({0, 1, 1, 0, 0, 1, 1, 0}));
  TensorId y = Conv(b, p, "dw", "valid", {1, 1}, OpKind::kDepthwiseConv2D);
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  Graph f = FoldPadsIntoConvs(*g);
  ASSERT_EQ(f.num_nodes(), 1u);
  EXPECT_EQ(*f.node(0).attrs.GetInts("pads"), (Ints{1, 1, 1, 1}));
  EXPECT_EQ(f.tensor(f.outputs[0]).shape, (Shape{1, 8, 8, 4}));
}

TEST(FoldPadsIntoConvs, LeavesPadsThatAreNotPlainSpatialZeroPaddingOfOneConv) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 8, 8, 4});
  // Non-zero value, channel padding, reflect mode, a second consumer, a graph output: all stay.
  TensorId p1 = b.Op1(OpKind::kPad, "value1", {x}, PadAttrs({0, 1, 1, 0, 0, 1, 1, 0}, 1.0));
  TensorId c1 = Conv(b, p1, "c1", "valid", {1, 1});
  TensorId p2 = b.Op1(OpKind::kPad, "channels", {c1}, PadAttrs({0, 0, 0, 0, 0, 0, 0, 0}));
  Attributes reflect = PadAttrs({0, 1, 1, 0, 0, 1, 1, 0});
  reflect.Set("mode", std::string("reflect"));
  TensorId p3 = b.Op1(OpKind::kPad, "reflect", {x}, reflect);
  TensorId c3 = Conv(b, p3, "c3", "valid", {1, 1});
  TensorId p4 = b.Op1(OpKind::kPad, "shared", {x}, PadAttrs({0, 1, 1, 0, 0, 1, 1, 0}));
  TensorId c4 = Conv(b, p4, "c4", "valid", {1, 1});
  TensorId m4 = b.Op1(OpKind::kMaxPool2D, "pool", {p4}, [] {
    Attributes a;
    a.Set("kernel", Ints{2, 2});
    a.Set("strides", Ints{2, 2});
    return a;
  }());
  TensorId p5 = b.Op1(OpKind::kPad, "output", {x}, PadAttrs({0, 1, 1, 0, 0, 1, 1, 0}));
  TensorId c5 = Conv(b, p5, "c5", "valid", {1, 1});
  auto g = b.Finish({p2, c3, c4, m4, p5, c5});
  ASSERT_TRUE(g.ok()) << g.status().message();
  Graph f = FoldPadsIntoConvs(*g);
  EXPECT_EQ(f.num_nodes(), g->num_nodes());
  // The same graph where every pad qualifies folds each one, unless `allow` says no.
  GraphBuilder b2;
  TensorId x2 = b2.Input("x", {1, 8, 8, 4});
  TensorId y2 = Conv(b2, b2.Op1(OpKind::kPad, "pad", {x2}, PadAttrs({0, 1, 1, 0, 0, 1, 1, 0})), "c", "valid", {1, 1});
  auto g2 = b2.Finish({y2});
  ASSERT_TRUE(g2.ok()) << g2.status().message();
  EXPECT_EQ(FoldPadsIntoConvs(*g2).num_nodes(), 1u);
  EXPECT_EQ(FoldPadsIntoConvs(*g2, nullptr, [](const Node&, const Node&) { return false; }).num_nodes(), 2u);
}

}  // namespace
}  // namespace latte
