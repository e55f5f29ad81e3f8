#include "ir/fuse_activations.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/graph_builder.h"

namespace latte {
namespace {

Attributes Clip(double lo, double hi) {
  Attributes a;
  a.Set("min", lo);
  a.Set("max", hi);
  return a;
}

TensorId Conv(GraphBuilder& b, TensorId x, const std::string& name) {
  Attributes a;
  a.Set("filter_layout", "OHWI");
  a.Set("padding", "same");
  return b.Op1(OpKind::kConv2D, name, {x, b.Constant(name + "_w", {4, 3, 3, 4})}, a);
}

TEST(FuseActivations, FoldsClampsIntoTheirProducer) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 8, 8, 4});
  TensorId y = b.Op1(OpKind::kRelu, "relu", {Conv(b, x, "c1")});
  y = b.Op1(OpKind::kClip, "clip6", {Conv(b, y, "c2")}, Clip(0, 6));
  y = b.Op1(OpKind::kClip, "clip1", {b.Op1(OpKind::kAdd, "add", {y, x})}, Clip(-1, 1));
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  std::vector<std::vector<NodeId>> sources;
  Graph f = FuseActivations(*g, &sources);
  ASSERT_TRUE(f.Validate().ok());
  ASSERT_EQ(f.num_nodes(), 3u);
  EXPECT_EQ(f.node(0).attrs.GetString("activation", ""), "relu");
  EXPECT_EQ(f.node(1).attrs.GetString("activation", ""), "relu6");
  EXPECT_EQ(f.node(2).kind, OpKind::kAdd);
  EXPECT_EQ(f.node(2).attrs.GetString("activation", ""), "relu_n1_to_1");
  EXPECT_EQ(f.outputs, g->outputs);
  EXPECT_EQ(f.node(2).outputs[0], g->outputs[0]);  // tensor ids unchanged
  ASSERT_EQ(sources.size(), 3u);
  EXPECT_EQ(g->node(sources[0][0]).name, "c1");
  ASSERT_EQ(sources[0].size(), 2u);
  EXPECT_EQ(g->node(sources[0][1]).name, "relu");
  EXPECT_EQ(g->node(sources[2][1]).name, "clip1");
}

TEST(FuseActivations, LeavesWhatCannotBeFolded) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 8, 8, 4});
  TensorId c1 = Conv(b, x, "c1");
  TensorId r1 = b.Op1(OpKind::kRelu, "r1", {c1});                   // c1 has two consumers
  TensorId m = b.Op1(OpKind::kMul, "mul", {r1, c1});
  TensorId r2 = b.Op1(OpKind::kRelu, "r2", {m});                    // mul takes no activation
  TensorId c2 = Conv(b, r2, "c2");
  TensorId r3 = b.Op1(OpKind::kClip, "clip", {c2}, Clip(0, 3));     // not one of the fused bounds
  TensorId c3 = Conv(b, r3, "c3");
  TensorId r4 = b.Op1(OpKind::kRelu, "r4", {c3});                   // c3 is a graph output
  auto g = b.Finish({r4, c3});
  ASSERT_TRUE(g.ok()) << g.status().message();
  Graph f = FuseActivations(*g);
  EXPECT_EQ(f.num_nodes(), g->num_nodes());
  for (const Node& n : f.nodes()) EXPECT_EQ(n.attrs.GetString("activation", "none"), "none") << n.name;
}

TEST(FuseActivations, DoesNotStackOnAnExistingActivation) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 8, 8, 4});
  TensorId c = Conv(b, x, "c");
  b.graph().mutable_node(0).attrs.Set("activation", "relu6");
  auto g = b.Finish({b.Op1(OpKind::kRelu, "r", {c})});
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(FuseActivations(*g).num_nodes(), 2u);
}

}  // namespace
}  // namespace latte
