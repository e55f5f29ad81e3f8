// What a node's preparation keeps, measured on the real kernel backends: at least the weights
// (each backend repacks them into its own layout), nothing for an activation folded into the op.
#include "search/node_memory.h"

#include <gtest/gtest.h>

#include "ir/graph_builder.h"
#include "run/onednn/onednn_backend.h"
#include "run/xnnpack/xnnpack_backend.h"
#include "test_graphs.h"

namespace latte {
namespace {

// x (1x16x16x64) → conv 3x3, 64 filters (147,456 bytes of weights) → relu.
Graph ConvRelu() {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 16, 16, 64});
  TensorId w = b.Constant("w", {64, 3, 3, 64});
  TensorId bias = b.Constant("bias", {64});
  TensorId c = b.Op1(OpKind::kConv2D, "conv", {x, w, bias}, testing::NhwcSameConvAttrs());
  TensorId r = b.Op1(OpKind::kRelu, "relu", {c});
  auto graph = b.Finish({r});
  EXPECT_TRUE(graph.ok()) << graph.status().message();
  return std::move(graph).value();
}

TEST(NodeMemory, APreparedConvKeepsItsRepackedWeightsOnEachBackend) {
  BackendRegistry registry;
  RegisterXnnpackBackend(registry);
  RegisterOnednnBackend(registry);
  Graph graph = ConvRelu();
  auto memory = MeasureNodeMemory(graph, {{"xnnpack"}, {"onednn"}}, registry, RunOptions{});
  ASSERT_TRUE(memory.ok()) << memory.status().message();
  ASSERT_EQ(memory->per_node.size(), 2u);
  constexpr std::size_t kWeightBytes = 64 * 3 * 3 * 64 * 4;
  for (std::size_t b = 0; b < 2; ++b) {
    SCOPED_TRACE(memory->backends[b].Label());
    const NodeOnBackend& conv = memory->per_node[0][b];
    EXPECT_TRUE(conv.supported) << conv.why;
    EXPECT_GE(conv.prepared_bytes, kWeightBytes);
    EXPECT_LE(conv.prepared_bytes, 4 * kWeightBytes + (1 << 20));
    EXPECT_TRUE(memory->per_node[1][b].supported);
    EXPECT_EQ(memory->per_node[1][b].prepared_bytes, 0u);  // the relu is folded into the conv
  }
}

// At int8 the conv runs int8 and keeps at least its int8 weights (not always less than at fp32: the
// resident set also grows by the pages the transient quantized copy touched); a softmax after it,
// which XNNPACK has no int8 operator for, stays fp32, saying why.
TEST(NodeMemory, AnInt8ChoiceKeepsInt8WeightsAndSaysWhichNodesRunInt8) {
  BackendRegistry registry;
  RegisterXnnpackBackend(registry);
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 16, 16, 64});
  TensorId c = b.Op1(OpKind::kConv2D, "conv", {x, b.Constant("w", {64, 3, 3, 64}), b.Constant("bias", {64})},
                     testing::NhwcSameConvAttrs());
  Attributes axis;
  axis.Set("axis", std::int64_t{-1});
  TensorId y = b.Op1(OpKind::kSoftmax, "softmax", {c}, axis);
  auto graph = b.Finish({y});
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  auto memory = MeasureNodeMemory(*graph, {{"xnnpack"}, {"xnnpack", Precision::kInt8}}, registry, RunOptions{});
  ASSERT_TRUE(memory.ok()) << memory.status().message();
  EXPECT_EQ(memory->backends[1].Label(), "xnnpack@int8");
  const NodeOnBackend &fp32 = memory->per_node[0][0], &int8 = memory->per_node[0][1];
  EXPECT_FALSE(fp32.int8);
  EXPECT_TRUE(int8.int8) << int8.fp32_why;
  constexpr std::size_t kWeightBytes = 64 * 3 * 3 * 64;  // as int8
  EXPECT_GE(int8.prepared_bytes, kWeightBytes);
  const NodeOnBackend& softmax = memory->per_node[1][1];
  EXPECT_TRUE(softmax.supported) << softmax.why;
  EXPECT_FALSE(softmax.int8);
  EXPECT_EQ(softmax.fp32_why, "xnnpack has no int8 softmax (qu8 only)");
}

TEST(NodeMemory, AnUnknownBackendIsAnError) {
  BackendRegistry registry;
  RegisterXnnpackBackend(registry);
  Graph graph = ConvRelu();
  auto memory = MeasureNodeMemory(graph, {{"xnnpack"}, {"tpu"}}, registry, RunOptions{});
  ASSERT_FALSE(memory.ok());
  EXPECT_NE(memory.status().message().find("tpu"), std::string::npos) << memory.status().message();
}

}  // namespace
}  // namespace latte
