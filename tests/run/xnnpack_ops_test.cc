// The XNNPACK backend against naive references: one-node graphs per supported op, the
// precise "no" answers, thread-count independence and the registry entry.

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "ir/graph_builder.h"
#include "ir/op_params.h"
#include "run/tensor_buffers.h"
#include "run/xnnpack/xnnpack_backend.h"
#include "run/backend_test_util.h"
#include "run/reference_ops.h"

namespace latte {
namespace {

using reference::Floats;
using ::latte::testing::Attrs;
using ::latte::testing::ExpectClose;
using ::latte::testing::Random;
using Ints = std::vector<std::int64_t>;

std::unique_ptr<Backend> MakeBackend(int threads = 1, Precision precision = Precision::kFp32) {
  RunOptions options;
  options.num_threads = threads;
  options.precision = precision;
  auto backend = XnnpackBackend::Create(options);
  EXPECT_TRUE(backend.ok()) << backend.status().message();
  return backend.ok() ? std::move(*backend) : nullptr;
}

Floats RunOnXnnpack(const Graph& graph, const std::vector<Floats>& inputs, int threads = 1) {
  auto backend = MakeBackend(threads);
  return backend ? ::latte::testing::RunOnBackend(*backend, graph, inputs) : Floats{};
}

// --- conv2d / depthwise_conv2d / transpose_conv2d -------------------------------------------

struct ConvCase {
  Shape x;
  std::int64_t out_c, kernel, stride;
  std::string padding;
  std::int64_t groups = 1, dilation = 1;
  std::string activation = "none";
  bool bias = true;
};

std::string Describe(const ConvCase& c) {
  return ShapeToString(c.x) + " →" + std::to_string(c.out_c) + " k" + std::to_string(c.kernel) + " s" + std::to_string(c.stride) +
         " " + c.padding + " g" + std::to_string(c.groups) + " d" + std::to_string(c.dilation) + " " + c.activation;
}

TEST(XnnpackOps, Conv2DMatchesReference) {
  const ConvCase cases[] = {
      {{1, 7, 9, 3}, 5, 3, 1, "same"},
      {{1, 7, 9, 3}, 5, 3, 2, "same", 1, 1, "relu6"},
      {{2, 8, 11, 4}, 6, 3, 2, "valid", 2, 1, "relu", false},
      {{1, 9, 9, 8}, 8, 1, 1, "valid", 1, 1, "relu_n1_to_1"},
      {{1, 13, 10, 6}, 9, 5, 2, "same", 3},
      {{1, 12, 12, 3}, 4, 3, 1, "same", 1, 2},
      {{1, 9, 9, 8}, 7, 1, 2, "valid"},  // stride larger than the kernel
      {{1, 6, 6, 4}, 4, 3, 1, "same", 4},  // depthwise written as a grouped conv
  };
  std::uint32_t seed = 1;
  for (const ConvCase& c : cases) {
    GraphBuilder b;
    TensorId x = b.Input("x", c.x);
    const std::int64_t in_c = c.x[3];
    Floats w = Random(c.out_c * c.kernel * c.kernel * (in_c / c.groups), seed++);
    Floats bias = c.bias ? Random(c.out_c, seed++) : Floats{};
    TensorId wt = b.Constant("w", {c.out_c, c.kernel, c.kernel, in_c / c.groups}, w);
    std::vector<TensorId> inputs{x, wt};
    if (c.bias) inputs.push_back(b.Constant("b", {c.out_c}, bias));
    TensorId y = b.Op1(OpKind::kConv2D, "conv", inputs,
                       Attrs({{"filter_layout", std::string("OHWI")}, {"strides", Ints{c.stride, c.stride}},
                              {"dilations", Ints{c.dilation, c.dilation}}, {"padding", c.padding}, {"groups", c.groups},
                              {"activation", c.activation}, {"layout", std::string("NHWC")}}));
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    auto p = GetConvParams(*g, g->node(0));
    ASSERT_TRUE(p.ok()) << p.status().message();
    Floats input = Random(reference::Product(c.x), seed++);
    ExpectClose(RunOnXnnpack(*g, {input}), reference::Conv2D(input, w, bias, *p, false), Describe(c));
  }
}

TEST(XnnpackOps, DepthwiseConv2DMatchesReference) {
  struct Case {
    Shape x;
    std::int64_t multiplier, kernel, stride;
    std::string padding, activation;
    std::int64_t dilation = 1;
  };
  const Case cases[] = {
      {{1, 9, 7, 8}, 1, 3, 1, "same", "none"},
      {{1, 9, 7, 5}, 2, 3, 2, "same", "relu"},
      {{2, 10, 11, 3}, 2, 5, 2, "valid", "relu6"},
      {{1, 11, 11, 4}, 1, 3, 1, "same", "none", 2},  // dilation 2
  };
  std::uint32_t seed = 100;
  for (const Case& c : cases) {
    GraphBuilder b;
    TensorId x = b.Input("x", c.x);
    const std::int64_t out_c = c.x[3] * c.multiplier;
    Floats w = Random(c.kernel * c.kernel * out_c, seed++), bias = Random(out_c, seed++);
    TensorId y = b.Op1(OpKind::kDepthwiseConv2D, "dw",
                       {x, b.Constant("w", {1, c.kernel, c.kernel, out_c}, w), b.Constant("b", {out_c}, bias)},
                       Attrs({{"filter_layout", std::string("1HWO")}, {"strides", Ints{c.stride, c.stride}},
                              {"dilations", Ints{c.dilation, c.dilation}},
                              {"padding", c.padding}, {"groups", c.x[3]}, {"depth_multiplier", c.multiplier},
                              {"activation", c.activation}}));
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    auto p = GetConvParams(*g, g->node(0));
    ASSERT_TRUE(p.ok()) << p.status().message();
    Floats input = Random(reference::Product(c.x), seed++);
    ExpectClose(RunOnXnnpack(*g, {input}), reference::Conv2D(input, w, bias, *p, true),
                ShapeToString(c.x) + " m" + std::to_string(c.multiplier) + " s" + std::to_string(c.stride));
  }
}

TEST(XnnpackOps, TransposeConv2DMatchesReference) {
  struct Case {
    Shape x;
    std::int64_t out_c, kernel, stride;
    std::string padding;
    Ints output_shape;  // empty: from padding
  };
  const Case cases[] = {
      {{1, 5, 7, 3}, 4, 3, 2, "same", {}},
      {{1, 5, 7, 3}, 4, 4, 2, "same", {1, 10, 14, 4}},
      {{1, 4, 6, 6}, 2, 3, 1, "valid", {}},
      {{2, 3, 5, 4}, 3, 2, 2, "valid", {}},
      {{1, 5, 5, 2}, 3, 3, 2, "same", {1, 10, 10, 3}},  // needs an adjustment of 1
      {{1, 4, 5, 3}, 2, 3, 2, "explicit", {}},           // pads 1 and output_padding 1 (ONNX style)
  };
  std::uint32_t seed = 200;
  for (const Case& c : cases) {
    GraphBuilder b;
    TensorId x = b.Input("x", c.x);
    Floats w = Random(c.out_c * c.kernel * c.kernel * c.x[3], seed++), bias = Random(c.out_c, seed++);
    Attributes attrs = Attrs({{"filter_layout", std::string("OHWI")}, {"strides", Ints{c.stride, c.stride}},
                              {"padding", c.padding}, {"activation", std::string("relu")}});
    if (!c.output_shape.empty()) attrs.Set("output_shape", c.output_shape);
    if (c.padding == "explicit") attrs.Set("pads", Ints{1, 1, 1, 1}), attrs.Set("output_padding", Ints{1, 1});
    TensorId y = b.Op1(OpKind::kTransposeConv2D, "tconv",
                       {x, b.Constant("w", {c.out_c, c.kernel, c.kernel, c.x[3]}, w), b.Constant("b", {c.out_c}, bias)}, attrs);
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    auto p = GetConvParams(*g, g->node(0));
    ASSERT_TRUE(p.ok()) << p.status().message();
    Floats input = Random(reference::Product(c.x), seed++);
    ExpectClose(RunOnXnnpack(*g, {input}), reference::TransposeConv2D(input, w, bias, *p),
                ShapeToString(c.x) + " k" + std::to_string(c.kernel) + " " + c.padding + " → " + ShapeToString(g->tensor(y).shape));
  }
}

// --- fully_connected ----------------------------------------------------------------------

TEST(XnnpackOps, FullyConnectedOIAndIO) {
  for (bool io : {false, true}) {
    GraphBuilder b;
    const Shape xs = io ? Shape{2, 3, 11} : Shape{5, 11};
    TensorId x = b.Input("x", xs);
    Floats w = Random(11 * 7, 300), bias = Random(7, 301);
    TensorId wt = b.Constant("w", io ? Shape{11, 7} : Shape{7, 11}, w);
    TensorId y = b.Op1(OpKind::kFullyConnected, "fc", {x, wt, b.Constant("b", {7}, bias)},
                       Attrs({{"weights_layout", std::string(io ? "IO" : "OI")}, {"activation", std::string("relu")}}));
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    Floats input = Random(reference::Product(xs), 302);
    Floats want = reference::FullyConnected(input, w, bias, reference::Product(xs) / 11, 11, 7, io);
    reference::Activate(want, "relu");
    ExpectClose(RunOnXnnpack(*g, {input}), want, io ? "IO" : "OI");
  }
}

// --- pools, global pools, mean ------------------------------------------------------------

TEST(XnnpackOps, MaxAndAvgPoolMatchReference) {
  struct Case {
    OpKind kind;
    Shape x;
    std::int64_t kernel, stride;
    std::string padding;
  };
  const Case cases[] = {
      {OpKind::kMaxPool2D, {1, 9, 7, 5}, 2, 2, "valid"},  {OpKind::kMaxPool2D, {2, 9, 7, 5}, 3, 2, "same"},
      {OpKind::kMaxPool2D, {1, 8, 8, 3}, 3, 1, "same"},   {OpKind::kAvgPool2D, {1, 9, 7, 5}, 2, 2, "valid"},
      {OpKind::kAvgPool2D, {2, 9, 7, 5}, 3, 2, "same"},   {OpKind::kAvgPool2D, {1, 8, 10, 4}, 3, 1, "same"},
      {OpKind::kMaxPool2D, {1, 10, 9, 3}, 2, 3, "valid"}, {OpKind::kAvgPool2D, {1, 10, 9, 3}, 2, 3, "valid"},
      {OpKind::kAvgPool2D, {2, 7, 7, 5}, 7, 7, "valid"},  // the whole map: planned as a global average pool
      {OpKind::kAvgPool2D, {1, 6, 6, 3}, 6, 1, "valid"},
  };
  std::uint32_t seed = 400;
  for (const Case& c : cases) {
    GraphBuilder b;
    TensorId x = b.Input("x", c.x);
    TensorId y = b.Op1(c.kind, "pool", {x},
                       Attrs({{"kernel", Ints{c.kernel, c.kernel}}, {"strides", Ints{c.stride, c.stride}}, {"padding", c.padding}}));
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    auto p = GetPoolParams(*g, g->node(0));
    ASSERT_TRUE(p.ok()) << p.status().message();
    Floats input = Random(reference::Product(c.x), seed++);
    ExpectClose(RunOnXnnpack(*g, {input}), reference::Pool2D(input, *p, c.kind == OpKind::kMaxPool2D),
                std::string(OpName(c.kind)) + " " + ShapeToString(c.x) + " " + c.padding);
  }
}

TEST(XnnpackOps, GlobalMaxPool) {
  const Shape xs{2, 5, 7, 3};
  GraphBuilder b;
  TensorId y = b.Op1(OpKind::kGlobalMaxPool, "gmp", {b.Input("x", xs)});
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto p = GetPoolParams(*g, g->node(0));
  ASSERT_TRUE(p.ok()) << p.status().message();
  Floats input = Random(reference::Product(xs), 450);
  ExpectClose(RunOnXnnpack(*g, {input}), reference::Pool2D(input, *p, true), "global_max_pool");
}

TEST(XnnpackOps, GlobalAvgPoolAndMean) {
  const Shape xs{2, 5, 7, 3};
  Floats input = Random(reference::Product(xs), 500);
  {
    GraphBuilder b;
    TensorId y = b.Op1(OpKind::kGlobalAvgPool, "gap", {b.Input("x", xs)});
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    ExpectClose(RunOnXnnpack(*g, {input}), reference::MeanMiddle(input, 2, 35, 3), "global_avg_pool");
  }
  for (std::int64_t keep : {0, 1}) {
    GraphBuilder b;
    TensorId y = b.Op1(OpKind::kMean, "mean", {b.Input("x", xs)}, Attrs({{"axes", Ints{1, -2}}, {"keepdims", keep}}));
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    ExpectClose(RunOnXnnpack(*g, {input}), reference::MeanMiddle(input, 2, 35, 3), "mean keepdims " + std::to_string(keep));
  }
  {
    GraphBuilder b;
    TensorId y = b.Op1(OpKind::kMean, "mean", {b.Input("x", xs)}, Attrs({{"axes", Ints{3}}, {"keepdims", std::int64_t{1}}}));
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    ExpectClose(RunOnXnnpack(*g, {input}), reference::MeanMiddle(input, 70, 3, 1), "mean over channels");
  }
  {
    GraphBuilder b;
    TensorId y = b.Op1(OpKind::kMean, "mean", {b.Input("x", xs)}, Attrs({{"keepdims", std::int64_t{1}}}));
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    ExpectClose(RunOnXnnpack(*g, {input}), reference::MeanMiddle(input, 1, 210, 1), "mean over all axes");
  }
}

// --- elementwise ---------------------------------------------------------------------------

TEST(XnnpackOps, BinaryOpsBroadcast) {
  struct Kind {
    OpKind kind;
    std::function<float(float, float)> f;
  };
  const Kind kinds[] = {
      {OpKind::kAdd, [](float a, float b) { return a + b; }},
      {OpKind::kSub, [](float a, float b) { return a - b; }},
      {OpKind::kMul, [](float a, float b) { return a * b; }},
      {OpKind::kDiv, [](float a, float b) { return a / b; }},
      {OpKind::kMaximum, [](float a, float b) { return std::max(a, b); }},
      {OpKind::kMinimum, [](float a, float b) { return std::min(a, b); }},
      {OpKind::kSquaredDifference, [](float a, float b) { return (a - b) * (a - b); }},
  };
  const std::pair<Shape, Shape> shapes[] = {
      {{1, 5, 7, 3}, {1, 5, 7, 3}}, {{1, 5, 7, 3}, {3}}, {{2, 1, 7, 1}, {1, 5, 1, 3}}, {{1, 1, 1, 3}, {2, 5, 7, 3}}, {{4, 9}, {1}}, {{4, 9}, {}},
  };
  std::uint32_t seed = 600;
  for (const Kind& k : kinds)
    for (const auto& [as, bs] : shapes)
      for (bool constant_b : {false, true}) {
        GraphBuilder b;
        TensorId a = b.Input("a", as);
        // Divisors away from zero keep the reference's rounding comparable.
        Floats av = Random(reference::Product(as), seed++), bv = Random(reference::Product(bs), seed++, 0.5f, 2.0f);
        TensorId bt = constant_b ? b.Constant("b", bs, bv) : b.Input("b", bs);
        const std::string act = k.kind == OpKind::kAdd ? "relu" : "none";
        TensorId y = b.Op1(k.kind, "op", {a, bt}, Attrs({{"activation", act}}));
        auto g = b.Finish({y});
        ASSERT_TRUE(g.ok()) << g.status().message();
        Floats want = reference::Binary(av, as, bv, bs, g->tensor(y).shape, k.f);
        reference::Activate(want, act);
        std::vector<Floats> inputs{av};
        if (!constant_b) inputs.push_back(bv);
        ExpectClose(RunOnXnnpack(*g, inputs), want,
                    std::string(OpName(k.kind)) + " " + ShapeToString(as) + " " + ShapeToString(bs) + (constant_b ? " const" : ""));
      }
}

TEST(XnnpackOps, UnaryOpsMatchReference) {
  struct Case {
    OpKind kind;
    Attributes attrs;
    std::function<float(float)> f;
    float lo = -4.0f;
  };
  const Case cases[] = {
      {OpKind::kRelu, {}, [](float v) { return std::max(v, 0.0f); }},
      {OpKind::kRelu6, {}, [](float v) { return std::min(std::max(v, 0.0f), 6.0f); }},
      {OpKind::kReluN1To1, {}, [](float v) { return std::min(std::max(v, -1.0f), 1.0f); }},
      {OpKind::kClip, Attrs({{"min", -0.5}, {"max", 2.5}}), [](float v) { return std::min(std::max(v, -0.5f), 2.5f); }},
      {OpKind::kClip, Attrs({{"min", 0.25}}), [](float v) { return std::max(v, 0.25f); }},
      {OpKind::kSigmoid, {}, [](float v) { return 1.0f / (1.0f + std::exp(-v)); }},
      {OpKind::kHardSwish, {}, [](float v) { return v * std::min(std::max(v + 3.0f, 0.0f), 6.0f) / 6.0f; }},
      {OpKind::kLeakyRelu, Attrs({{"alpha", 0.2}}), [](float v) { return v < 0 ? 0.2f * v : v; }},
      {OpKind::kElu, Attrs({{"alpha", 1.5}}), [](float v) { return v < 0 ? 1.5f * (std::exp(v) - 1.0f) : v; }},
      {OpKind::kAbs, {}, [](float v) { return std::abs(v); }},
      {OpKind::kNeg, {}, [](float v) { return -v; }},
      {OpKind::kFloor, {}, [](float v) { return std::floor(v); }},
      {OpKind::kCeil, {}, [](float v) { return std::ceil(v); }},
      {OpKind::kRound, {}, [](float v) { return std::nearbyint(v); }},  // halves to even
      {OpKind::kSqrt, {}, [](float v) { return std::sqrt(v); }, 0.0f},
      {OpKind::kSquare, {}, [](float v) { return v * v; }},
      // A fused activation on an op without an output range: a clamp after it.
      {OpKind::kSigmoid, Attrs({{"activation", std::string("relu_n1_to_1")}}), [](float v) { return 1.0f / (1.0f + std::exp(-v)); }},
      {OpKind::kNeg, Attrs({{"activation", std::string("relu")}}), [](float v) { return std::max(-v, 0.0f); }},
  };
  const Shape xs{1, 7, 5, 6};
  std::uint32_t seed = 700;
  for (const Case& c : cases) {
    GraphBuilder b;
    TensorId y = b.Op1(c.kind, "op", {b.Input("x", xs)}, c.attrs);
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    Floats input = Random(reference::Product(xs), seed++, c.lo, 4.0f);
    Floats want(input.size());
    for (size_t i = 0; i < input.size(); ++i) want[i] = c.f(input[i]);
    ExpectClose(RunOnXnnpack(*g, {input}), want, std::string(OpName(c.kind)));
  }
}

TEST(XnnpackOps, PReluPerChannelAndScalarSlope) {
  const Shape xs{1, 5, 7, 4};
  for (const Shape& ss : {Shape{4}, Shape{1, 1, 4}, Shape{1}}) {
    GraphBuilder b;
    Floats slope = Random(reference::Product(ss), 800, 0.0f, 0.5f);
    TensorId y = b.Op1(OpKind::kPRelu, "prelu", {b.Input("x", xs), b.Constant("slope", ss, slope)});
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    Floats input = Random(reference::Product(xs), 801);
    Floats want = reference::Binary(input, xs, slope, ss, xs, [](float v, float s) { return v < 0 ? v * s : v; });
    ExpectClose(RunOnXnnpack(*g, {input}), want, "prelu slope " + ShapeToString(ss));
  }
}

TEST(XnnpackOps, SoftmaxOverLastAxis) {
  const Shape xs{3, 2, 17};
  GraphBuilder b;
  TensorId y = b.Op1(OpKind::kSoftmax, "softmax", {b.Input("x", xs)}, Attrs({{"axis", std::int64_t{-1}}}));
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  Floats input = Random(reference::Product(xs), 900, -5.0f, 5.0f);
  ExpectClose(RunOnXnnpack(*g, {input}), reference::Softmax(input, 17), "softmax");
}

// --- data movement -------------------------------------------------------------------------

TEST(XnnpackOps, ResizeBilinearCoordinateModes) {
  const Shape xs{2, 5, 7, 3};
  for (const char* coords : {"half_pixel", "align_corners", "asymmetric"})
    for (const Ints& size : {Ints{10, 14}, Ints{9, 4}, Ints{5, 7}, Ints{1, 3}}) {
      GraphBuilder b;
      TensorId y = b.Op1(OpKind::kResize, "resize", {b.Input("x", xs)},
                         Attrs({{"mode", std::string("bilinear")}, {"sizes", size}, {"coordinate_transformation", std::string(coords)},
                                {"layout", std::string("NHWC")}}));
      auto g = b.Finish({y});
      ASSERT_TRUE(g.ok()) << g.status().message();
      Floats input = Random(reference::Product(xs), 1000);
      ExpectClose(RunOnXnnpack(*g, {input}), reference::ResizeBilinear(input, xs, size[0], size[1], coords),
                  std::string(coords) + " to " + std::to_string(size[0]) + "x" + std::to_string(size[1]));
    }
}

TEST(XnnpackOps, PadConstant) {
  const Shape xs{1, 3, 4, 2};
  const Ints pads{0, 1, 2, 0, 0, 2, 1, 3};
  GraphBuilder b;
  TensorId y = b.Op1(OpKind::kPad, "pad", {b.Input("x", xs)}, Attrs({{"pads", pads}, {"value", 0.5}}));
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  Floats input = Random(reference::Product(xs), 1100);
  ExpectClose(RunOnXnnpack(*g, {input}), reference::Pad(input, xs, pads, 0.5f), "pad");
}

TEST(XnnpackOps, ConcatOnChannelsAndOnAnInnerAxis) {
  for (std::int64_t axis : {3, 1, -4}) {
    GraphBuilder b;
    std::vector<Shape> shapes{{1, 3, 4, 2}, {1, 3, 4, 5}, {1, 3, 4, 1}};
    for (auto& s : shapes) std::swap(s[static_cast<size_t>(axis < 0 ? axis + 4 : axis)], s[3]);
    std::vector<Floats> values;
    std::vector<TensorId> ids;
    for (size_t i = 0; i < shapes.size(); ++i) {
      values.push_back(Random(reference::Product(shapes[i]), 1200 + static_cast<std::uint32_t>(i)));
      // The last input is a constant: a concat may read weights too.
      std::string name = "x";
      name += std::to_string(i);
      ids.push_back(i + 1 < shapes.size() ? b.Input(name, shapes[i]) : b.Constant("c", shapes[i], values[i]));
    }
    TensorId y = b.Op1(OpKind::kConcat, "concat", ids, Attrs({{"axis", axis}}));
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    // Reference: for each outer index, each input's contiguous inner block in turn.
    const std::int64_t a = axis < 0 ? axis + 4 : axis;
    std::int64_t outer = 1;
    for (std::int64_t d = 0; d < a; ++d) outer *= shapes[0][static_cast<size_t>(d)];
    Floats want;
    for (std::int64_t o = 0; o < outer; ++o)
      for (const Floats& v : values) {
        const auto inner = static_cast<std::int64_t>(v.size()) / outer;
        want.insert(want.end(), v.begin() + o * inner, v.begin() + (o + 1) * inner);
      }
    ExpectClose(RunOnXnnpack(*g, {values[0], values[1]}), want, "concat axis " + std::to_string(axis));
  }
}

TEST(XnnpackOps, ReshapeFamilyCopies) {
  const Shape xs{1, 3, 5, 2};
  Floats input = Random(reference::Product(xs), 1300);
  const std::pair<OpKind, Attributes> cases[] = {
      {OpKind::kReshape, Attrs({{"shape", Ints{5, -1}}})},
      {OpKind::kFlatten, Attrs({{"axis", std::int64_t{1}}})},
      {OpKind::kSqueeze, Attrs({{"axes", Ints{0}}})},
      {OpKind::kUnsqueeze, Attrs({{"axes", Ints{0}}})},
      {OpKind::kIdentity, {}},
  };
  for (const auto& [kind, attrs] : cases) {
    GraphBuilder b;
    TensorId y = b.Op1(kind, "op", {b.Input("x", xs)}, attrs);
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    ExpectClose(RunOnXnnpack(*g, {input}), input, std::string(OpName(kind)));
  }
}

TEST(XnnpackOps, DepthToSpaceDCR) {
  const Shape xs{2, 3, 5, 12};
  GraphBuilder b;
  TensorId y = b.Op1(OpKind::kDepthToSpace, "d2s", {b.Input("x", xs)},
                     Attrs({{"block_size", std::int64_t{2}}, {"layout", std::string("NHWC")}}));
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  Floats input = Random(reference::Product(xs), 1400);
  ExpectClose(RunOnXnnpack(*g, {input}), reference::DepthToSpace(input, xs, 2), "depth_to_space");
}

// --- what xnnpack refuses, and why ---------------------------------------------------------

// The reason xnnpack gives for the last node of the graph `build` makes.
std::string WhyNot(const std::function<TensorId(GraphBuilder&)>& build, Precision precision = Precision::kFp32) {
  GraphBuilder b;
  TensorId y = build(b);
  auto g = b.Finish({y});
  if (!g.ok()) return "graph failed: " + g.status().message();
  auto backend = MakeBackend(1, precision);
  if (!backend) return "no backend";
  const auto last = static_cast<NodeId>(g->num_nodes() - 1);
  Support support = backend->Supports(*g, last);
  if (support.ok()) return "supported";
  auto prepared = backend->Prepare(*g, last);
  EXPECT_FALSE(prepared.ok());
  EXPECT_EQ(prepared.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(prepared.status().message(), support.why());
  return support.why();
}

// A 3x3 conv from 3 to 4 channels; `extra` may ask for "weights_input" or an "activation".
TensorId Conv3x3(GraphBuilder& b, Shape xs, const std::string& layout, const std::string& filter_layout, Attributes extra = {}) {
  TensorId x = b.Input("x", xs);
  const Shape ws{4, 3, 3, 3};  // OIHW and OHWI alike
  TensorId w = extra.Has("weights_input") ? b.Input("w", ws) : b.Constant("w", ws, Random(108, 1));
  Attributes a = Attrs({{"filter_layout", filter_layout}, {"layout", layout}, {"padding", std::string("same")}});
  if (extra.Has("activation")) a.Set("activation", extra.GetString("activation", ""));
  return b.Op1(OpKind::kConv2D, "conv", {x, w}, a);
}

TEST(XnnpackSupport, SaysNoWithTheReason) {
  EXPECT_EQ(WhyNot([](GraphBuilder& b) { return Conv3x3(b, {1, 3, 8, 8}, "NCHW", "OIHW"); }),
            "layout NCHW: xnnpack runs NHWC graphs");
  EXPECT_EQ(WhyNot([](GraphBuilder& b) { return Conv3x3(b, {1, 8, 8, 3}, "NHWC", "OIHW"); }),
            "conv2d filter_layout OIHW: xnnpack needs OHWI");
  EXPECT_EQ(WhyNot([](GraphBuilder& b) { return Conv3x3(b, {1, 8, 8, 3}, "NHWC", "OHWI", Attrs({{"weights_input", 1.0}})); }),
            "conv2d with non-constant weights");
  EXPECT_EQ(WhyNot([](GraphBuilder& b) { return Conv3x3(b, {1, 8, 8, 3}, "NHWC", "OHWI", Attrs({{"activation", std::string("tanh")}})); }),
            "fused activation tanh not implemented");
  EXPECT_EQ(WhyNot([](GraphBuilder& b) { return Conv3x3(b, {1, 8, 8, 3}, "NHWC", "OHWI"); }), "supported");
  EXPECT_EQ(WhyNot([](GraphBuilder& b) { return Conv3x3(b, {1, 8, 8, 3}, "NHWC", "OHWI"); }, Precision::kInt8), "supported");
  // At int8 an fp32 node is one the executor kept at fp32: it runs as such.
  EXPECT_EQ(WhyNot([](GraphBuilder& b) { return b.Op1(OpKind::kRelu, "relu", {b.Input("x", {1, 4})}); }, Precision::kInt8),
            "supported");
  EXPECT_EQ(WhyNot([](GraphBuilder& b) { return b.Op1(OpKind::kRelu, "relu", {b.Input("x", {1, 4}, DataType::kInt8)}); }),
            "an int8 node runs at --precision int8 only");
  // An int8 activation without per-tensor parameters (the executor's lowering gives them).
  EXPECT_EQ(WhyNot([](GraphBuilder& b) { return b.Op1(OpKind::kRelu, "relu", {b.Input("x", {1, 4}, DataType::kInt8)}); }, Precision::kInt8),
            "input 'x' is not quantized per tensor");
  EXPECT_EQ(WhyNot([](GraphBuilder& b) { return b.Op1(OpKind::kTanh, "tanh", {b.Input("x", {1, 4})}); }),
            "tanh not implemented in the xnnpack backend");
  // What Debian's XNNPACK has no operator for says so, not "not implemented".
  EXPECT_EQ(WhyNot([](GraphBuilder& b) { return b.Op1(OpKind::kMatMul, "matmul", {b.Input("a", {4, 6, 8}), b.Input("b", {4, 8, 6})}); }),
            "matmul is unsupported on xnnpack, because this XNNPACK (git 2022-02-16) has no batch matrix multiply (no "
            "xnn_create_batch_matrix_multiply_nc_f32); only a product by constant weights runs, as fully_connected");
  EXPECT_EQ(WhyNot([](GraphBuilder& b) { return b.Op1(OpKind::kGelu, "gelu", {b.Input("x", {1, 4})}); }),
            "gelu is unsupported on xnnpack, because this XNNPACK has no GELU operator");
  EXPECT_EQ(WhyNot([](GraphBuilder& b) {
              return b.Op1(OpKind::kSoftmax, "softmax", {b.Input("x", {3, 4})}, Attrs({{"axis", std::int64_t{0}}}));
            }),
            "softmax over axis 0: xnnpack normalizes the last axis only");
  EXPECT_EQ(WhyNot([](GraphBuilder& b) {
              return b.Op1(OpKind::kAvgPool2D, "pool", {b.Input("x", {1, 7, 7, 2})},
                           Attrs({{"kernel", Ints{3, 3}}, {"padding", std::string("same")}, {"count_include_pad", std::int64_t{1}}}));
            }),
            "avg_pool2d with count_include_pad=1 and padding: xnnpack excludes padding");
  EXPECT_EQ(WhyNot([](GraphBuilder& b) {
              return b.Op1(OpKind::kResize, "resize", {b.Input("x", {1, 4, 4, 2})},
                           Attrs({{"mode", std::string("nearest")}, {"sizes", Ints{6, 6}}}));
            }),
            "nearest resize 1x4x4x2 → 1x6x6x2: xnnpack composes whole upscaling factors only");
  EXPECT_EQ(WhyNot([](GraphBuilder& b) {  // ONNX's default rounding reads input round(o / 4), not floor
              return b.Op1(OpKind::kResize, "resize", {b.Input("x", {1, 4, 4, 2})},
                           Attrs({{"mode", std::string("nearest")}, {"sizes", Ints{16, 16}}}));
            }),
            "nearest resize by 4x4 with asymmetric / round_prefer_floor rounding does not read input floor(out / factor): "
            "not composable from copies");
  EXPECT_EQ(WhyNot([](GraphBuilder& b) {
              return b.Op1(OpKind::kTranspose, "t", {b.Input("x", {2, 3, 4})}, Attrs({{"perm", Ints{1, 0, 2}}}));
            }),
            "transpose 2x3x4 with this perm: xnnpack (2022) has no transpose; only a swap of two blocks of axes runs (as a "
            "channel shuffle)");
  EXPECT_EQ(WhyNot([](GraphBuilder& b) {
              return b.Op1(OpKind::kDepthToSpace, "d2s", {b.Input("x", {1, 4, 4, 8})},
                           Attrs({{"block_size", std::int64_t{2}}, {"mode", std::string("CRD")}}));
            }),
            "depth_to_space mode CRD: xnnpack has DCR only");
  EXPECT_EQ(WhyNot([](GraphBuilder& b) {
              return b.Op1(OpKind::kPad, "pad", {b.Input("x", {1, 4})},
                           Attrs({{"pads", Ints{0, 1, 0, 1}}, {"mode", std::string("reflect")}}));
            }),
            "pad mode 'reflect' not implemented (constant only)");
}

TEST(XnnpackSupport, PrepareOfAnUnsupportedNodeIsUnsupported) {
  GraphBuilder b;
  TensorId y = b.Op1(OpKind::kTanh, "tanh", {b.Input("x", {1, 4})});
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok());
  auto backend = MakeBackend();
  ASSERT_NE(backend, nullptr);
  auto prepared = backend->Prepare(*g, 0);
  ASSERT_FALSE(prepared.ok());
  EXPECT_EQ(prepared.status().code(), StatusCode::kUnsupported);
  EXPECT_FALSE(backend->Supports(*g, 7).ok());  // no such node: a no, not a crash
  EXPECT_EQ(backend->Prepare(*g, 7).status().code(), StatusCode::kUnsupported);
}

// --- threads, registry ----------------------------------------------------------------------

TEST(XnnpackBackend, OneAndTwoThreadsGiveTheSameResult) {
  GraphBuilder b;
  TensorId x = b.Input("x", {2, 33, 35, 16});
  TensorId c = b.Op1(OpKind::kConv2D, "conv", {x, b.Constant("w", {32, 3, 3, 16}, Random(32 * 9 * 16, 1500)), b.Constant("b", {32}, Random(32, 1501))},
                     Attrs({{"filter_layout", std::string("OHWI")}, {"padding", std::string("same")}, {"activation", std::string("relu")}}));
  TensorId d = b.Op1(OpKind::kDepthwiseConv2D, "dw", {c, b.Constant("dw_w", {1, 3, 3, 32}, Random(9 * 32, 1502))},
                     Attrs({{"filter_layout", std::string("1HWO")}, {"strides", Ints{2, 2}}, {"padding", std::string("same")}}));
  TensorId y = b.Op1(OpKind::kMean, "mean", {d}, Attrs({{"axes", Ints{1, 2}}}));
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  Floats input = Random(2 * 33 * 35 * 16, 1503);
  Floats one = RunOnXnnpack(*g, {input}, 1), two = RunOnXnnpack(*g, {input}, 2);
  ASSERT_EQ(one.size(), 64u);
  EXPECT_EQ(one, two);
}

TEST(XnnpackBackend, RegistersAndNamesItsVersion) {
  BackendRegistry registry;
  RegisterXnnpackBackend(registry);
  EXPECT_EQ(registry.Names(), std::vector<std::string>{"xnnpack"});
  RunOptions options;
  options.num_threads = 2;
  auto backend = registry.Create("xnnpack", options);
  ASSERT_TRUE(backend.ok()) << backend.status().message();
  EXPECT_EQ((*backend)->Name(), "xnnpack");
  const std::string version = (*backend)->Version();
  EXPECT_EQ(version.rfind("XNNPACK ", 0), 0u) << version;
  EXPECT_NE(version.find("(pthreadpool, 2 threads)"), std::string::npos) << version;
  auto single = registry.Create("xnnpack", {});
  ASSERT_TRUE(single.ok());
  EXPECT_NE((*single)->Version().find("(pthreadpool, 1 thread)"), std::string::npos);
}

}  // namespace
}  // namespace latte

namespace latte {
namespace {

// What Debian's XNNPACK has no operator for is refused with that reason, before any other check.
TEST(XnnpackSupport, OpsTheLibraryLacksSaySo) {
  EXPECT_EQ(WhyNot([](GraphBuilder& b) { return b.Op1(OpKind::kEqual, "eq", {b.Input("a", {1, 4}), b.Input("b", {1, 4})}); }),
            "equal is unsupported on xnnpack, because this XNNPACK has no comparison, logical or select operators (bool tensors)");
  EXPECT_EQ(WhyNot([](GraphBuilder& b) {
              return b.Op1(OpKind::kWhere, "where",
                           {b.Input("c", {1, 4}, DataType::kBool), b.Input("x", {1, 4}), b.Input("y", {1, 4})});
            }),
            "where is unsupported on xnnpack, because this XNNPACK has no comparison, logical or select operators (bool tensors)");
  EXPECT_EQ(WhyNot([](GraphBuilder& b) { return b.Op1(OpKind::kLayerNorm, "ln", {b.Input("x", {2, 8})}); }),
            "layer_norm is unsupported on xnnpack, because this XNNPACK has no layer normalization operator");
  EXPECT_EQ(WhyNot([](GraphBuilder& b) { return b.Op1(OpKind::kArgMax, "argmax", {b.Input("x", {2, 8})}); }),
            "argmax is unsupported on xnnpack, because this XNNPACK has no argmax/argmin along an axis (only argmax "
            "pooling of 2-D windows)");
  EXPECT_EQ(WhyNot([](GraphBuilder& b) {
              return b.Op1(OpKind::kGather, "gather", {b.Constant("table", {10, 4}), b.Input("ids", {3}, DataType::kInt64)});
            }),
            "gather is unsupported on xnnpack, because this XNNPACK has no gather operator");
}

}  // namespace
}  // namespace latte
