// Single ops on ONNX Runtime (each a one-node exported model) against the naive reference
// kernels: checks the exporter's weight layouts, padding, fused activations and op mappings.

#include <gtest/gtest.h>

#include <cmath>

#include "ir/graph_builder.h"
#include "ir/op_params.h"
#include "run/backend_test_util.h"
#include "run/ort/ort_backend.h"

namespace latte {
namespace {

using reference::Floats;
using testing::Attrs;
using testing::ExpectClose;
using testing::Random;
using Ints = std::vector<std::int64_t>;

Floats RunOnOrt(const Graph& graph, const std::vector<Floats>& inputs) {
  auto backend = OrtBackend::Create(RunOptions{});
  if (!backend.ok()) {
    ADD_FAILURE() << backend.status().message();
    return {};
  }
  return testing::RunOnBackend(**backend, graph, inputs);
}

TEST(OrtOps, ConvAndDepthwiseNhwcWithFusedActivation) {
  const Shape xs{1, 7, 6, 4};
  for (bool depthwise : {false, true}) {
    GraphBuilder b;
    const std::int64_t out_c = depthwise ? 4 : 5;
    const Shape ws = depthwise ? Shape{1, 3, 3, 4} : Shape{out_c, 3, 3, 4};
    Floats w = Random(reference::Product(ws), 11), bias = Random(out_c, 12);
    Attributes a = Attrs({{"filter_layout", std::string(depthwise ? "1HWO" : "OHWI")}, {"strides", Ints{2, 1}},
                          {"padding", std::string("same")}, {"activation", std::string("relu6")}});
    if (depthwise) a.Set("groups", std::int64_t{4}), a.Set("depth_multiplier", std::int64_t{1});
    TensorId y = b.Op1(depthwise ? OpKind::kDepthwiseConv2D : OpKind::kConv2D, "conv",
                       {b.Input("x", xs), b.Constant("w", ws, w), b.Constant("b", {out_c}, bias)}, a);
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    auto p = GetConvParams(*g, g->node(0));
    ASSERT_TRUE(p.ok()) << p.status().message();
    Floats x = Random(reference::Product(xs), 13, -3, 3);
    Floats want = reference::Conv2D(x, w, bias, *p, depthwise);
    reference::Activate(want, "relu6");
    ExpectClose(RunOnOrt(*g, {x}), want, depthwise ? "depthwise" : "conv");
  }
}

TEST(OrtOps, TransposeConvOhwiWithOutputShapeAndBias) {
  const Shape xs{1, 5, 5, 2};
  GraphBuilder b;
  Floats w = Random(3 * 3 * 3 * 2, 21), bias = Random(3, 22);
  TensorId y = b.Op1(OpKind::kTransposeConv2D, "tconv",
                     {b.Input("x", xs), b.Constant("w", {3, 3, 3, 2}, w), b.Constant("b", {3}, bias)},
                     Attrs({{"filter_layout", std::string("OHWI")}, {"strides", Ints{2, 2}},
                            {"padding", std::string("same")}, {"output_shape", Ints{1, 10, 10, 3}}}));
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto p = GetConvParams(*g, g->node(0));
  ASSERT_TRUE(p.ok()) << p.status().message();
  Floats x = Random(reference::Product(xs), 23);
  ExpectClose(RunOnOrt(*g, {x}), reference::TransposeConv2D(x, w, bias, *p), "transpose_conv2d");
}

TEST(OrtOps, FullyConnectedBothWeightLayouts) {
  for (bool io : {false, true}) {
    GraphBuilder b;
    Floats w = Random(6 * 4, 31), bias = Random(4, 32);
    TensorId y = b.Op1(OpKind::kFullyConnected, "fc",
                       {b.Input("x", {3, 6}), b.Constant("w", io ? Shape{6, 4} : Shape{4, 6}, w), b.Constant("b", {4}, bias)},
                       Attrs({{"weights_layout", std::string(io ? "IO" : "OI")}}));
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    Floats x = Random(18, 33);
    ExpectClose(RunOnOrt(*g, {x}), reference::FullyConnected(x, w, bias, 3, 6, 4, io), io ? "IO" : "OI");
  }
}

TEST(OrtOps, AvgPoolSamePaddingDoesNotCountPads) {
  const Shape xs{1, 5, 5, 3};
  GraphBuilder b;
  TensorId y = b.Op1(OpKind::kAvgPool2D, "pool", {b.Input("x", xs)},
                     Attrs({{"kernel", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"padding", std::string("same")},
                            {"layout", std::string("NHWC")}}));
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto p = GetPoolParams(*g, g->node(0));
  ASSERT_TRUE(p.ok()) << p.status().message();
  Floats x = Random(reference::Product(xs), 41);
  ExpectClose(RunOnOrt(*g, {x}), reference::Pool2D(x, *p, false), "avg_pool2d");
}

TEST(OrtOps, SoftmaxPadDepthToSpace) {
  {
    GraphBuilder b;
    TensorId y = b.Op1(OpKind::kSoftmax, "softmax", {b.Input("x", {3, 5})}, Attrs({{"axis", std::int64_t{-1}}}));
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    Floats x = Random(15, 51, -4, 4);
    ExpectClose(RunOnOrt(*g, {x}), reference::Softmax(x, 5), "softmax");
  }
  {
    const Shape xs{1, 3, 4, 2};
    const Ints pads{0, 1, 0, 0, 0, 2, 1, 1};
    GraphBuilder b;
    TensorId y = b.Op1(OpKind::kPad, "pad", {b.Input("x", xs)},
                       Attrs({{"pads", pads}, {"mode", std::string("constant")}, {"value", 0.5}}));
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    Floats x = Random(reference::Product(xs), 52);
    ExpectClose(RunOnOrt(*g, {x}), reference::Pad(x, xs, pads, 0.5f), "pad");
  }
  {
    const Shape xs{1, 3, 5, 12};
    GraphBuilder b;
    TensorId y = b.Op1(OpKind::kDepthToSpace, "d2s", {b.Input("x", xs)},
                       Attrs({{"block_size", std::int64_t{2}}, {"layout", std::string("NHWC")}}));
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    Floats x = Random(reference::Product(xs), 53);
    ExpectClose(RunOnOrt(*g, {x}), reference::DepthToSpace(x, xs, 2), "depth_to_space");
  }
}

TEST(OrtOps, ComposedElementwiseOps) {
  struct Case {
    OpKind kind;
    float (*want)(float, float);
  };
  const Case cases[] = {
      {OpKind::kSquaredDifference, [](float a, float b) { return (a - b) * (a - b); }},
      {OpKind::kRsqrt, [](float a, float) { return 1.0f / std::sqrt(a); }},
      {OpKind::kGelu, [](float a, float) { return 0.5f * a * (1.0f + std::erf(a / std::sqrt(2.0f))); }},
      {OpKind::kRelu6, [](float a, float) { return std::min(std::max(a, 0.0f), 6.0f); }},
      {OpKind::kSquare, [](float a, float) { return a * a; }},  // ONNX has no Square: Mul(x, x)
  };
  for (const Case& c : cases) {
    const bool binary = c.kind == OpKind::kSquaredDifference;
    GraphBuilder b;
    std::vector<TensorId> inputs = {b.Input("a", {2, 6})};
    if (binary) inputs.push_back(b.Input("b", {2, 6}));
    TensorId y = b.Op1(c.kind, "op", inputs);
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    const bool positive = c.kind == OpKind::kRsqrt;
    Floats a = Random(12, 61, positive ? 0.1f : -8.0f, 8.0f), bb = Random(12, 62);
    Floats want(12);
    for (size_t i = 0; i < 12; ++i) want[i] = c.want(a[i], bb[i]);
    std::vector<Floats> in = {a};
    if (binary) in.push_back(bb);
    ExpectClose(RunOnOrt(*g, in), want, std::string(OpName(c.kind)));
  }
}

}  // namespace
}  // namespace latte
