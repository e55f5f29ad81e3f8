#pragma once
// Small graphs several test executables share.

#include <gtest/gtest.h>

#include "ir/graph_builder.h"

namespace latte::testing {

/// A TFLite-style conv's attributes: NHWC, OHWI filters, same padding, stride 1.
inline Attributes NhwcSameConvAttrs() {
  Attributes conv;
  conv.Set("layout", std::string("NHWC"));
  conv.Set("filter_layout", std::string("OHWI"));
  conv.Set("padding", std::string("same"));
  conv.Set("strides", std::vector<std::int64_t>{1, 1});
  return conv;
}

/// x (1x8x8x4) → conv 3x3 (8 filters, NHWC, same) → relu → add(y) → sigmoid → Foo (an op Latte
/// does not know, output 1x8x8x8).
inline Graph ConvReluAddSigmoidFoo() {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 8, 8, 4});
  TensorId y = b.Input("y", {1, 8, 8, 8});
  TensorId w = b.Constant("w", {8, 3, 3, 4});
  TensorId c = b.Op1(OpKind::kConv2D, "conv", {x, w}, NhwcSameConvAttrs());
  TensorId r = b.Op1(OpKind::kRelu, "relu", {c});
  TensorId a = b.Op1(OpKind::kAdd, "add", {r, y});
  TensorId s = b.Op1(OpKind::kSigmoid, "sigmoid", {a});
  TensorId f = b.Op1(OpKind::kOpaque, "foo", {s});
  Node& foo = b.graph().mutable_node(static_cast<NodeId>(b.graph().num_nodes() - 1));
  foo.source_op = "Foo";
  foo.unsupported_reason = "custom op 'Foo'";
  b.graph().mutable_tensor(f).shape = {1, 8, 8, 8};
  b.graph().mutable_tensor(f).shape_known = true;
  auto graph = b.Finish({f});
  EXPECT_TRUE(graph.ok()) << graph.status().message();
  return std::move(graph).value();
}

}  // namespace latte::testing
