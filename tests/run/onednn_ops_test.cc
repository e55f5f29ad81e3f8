// The oneDNN backend against the naive references (tests/run/reference_ops.h): one-node graphs
// per supported op, the precise "no" answers, thread-count independence, the registry entry and
// a real model end to end beside xnnpack.

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <iostream>
#include <random>
#include <regex>

#include "import/import.h"
#include "ir/graph_builder.h"
#include "ir/op_params.h"
#include "run/executor.h"
#include "run/onednn/onednn_backend.h"
#include "run/backend_test_util.h"
#include "run/reference_ops.h"
#include "run/tensor_buffers.h"
#include "run/xnnpack/xnnpack_backend.h"
#include "test_paths.h"

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
  auto backend = OnednnBackend::Create(options);
  EXPECT_TRUE(backend.ok()) << backend.status().message();
  return backend.ok() ? std::move(*backend) : nullptr;
}

Floats RunOnOnednn(const Graph& graph, const std::vector<Floats>& inputs, int threads = 1) {
  auto backend = MakeBackend(threads);
  return backend ? ::latte::testing::RunOnBackend(*backend, graph, inputs) : Floats{};
}

// --- conv2d / depthwise_conv2d ----------------------------------------------------------------

struct ConvCase {
  Shape x;
  std::int64_t out_c, kernel, stride;
  std::string padding;
  std::int64_t groups = 1, dilation = 1;
  std::string activation = "none";
  bool bias = true;
};

TEST(OnednnOps, Conv2DMatchesReference) {
  const ConvCase cases[] = {
      {{1, 7, 9, 3}, 5, 3, 1, "same"},
      {{1, 7, 9, 3}, 5, 3, 2, "same", 1, 1, "relu6"},
      {{2, 8, 11, 4}, 6, 3, 2, "valid", 2, 1, "relu", false},
      {{1, 9, 9, 8}, 8, 1, 1, "valid", 1, 1, "relu_n1_to_1"},
      {{1, 13, 10, 6}, 9, 5, 2, "same", 3},
      {{1, 12, 12, 3}, 4, 3, 1, "same", 1, 2},
      {{1, 9, 9, 8}, 7, 1, 2, "valid"},
      {{1, 6, 6, 4}, 4, 3, 1, "same", 4},
      {{1, 8, 7, 5}, 6, 3, 1, "same", 1, 1, "tanh"},
  };
  std::uint32_t seed = 1;
  for (const ConvCase& c : cases) {
    GraphBuilder b;
    TensorId x = b.Input("x", c.x);
    const std::int64_t in_c = c.x[3];
    Floats w = Random(c.out_c * c.kernel * c.kernel * (in_c / c.groups), seed++);
    Floats bias = c.bias ? Random(c.out_c, seed++) : Floats{};
    std::vector<TensorId> inputs{x, b.Constant("w", {c.out_c, c.kernel, c.kernel, in_c / c.groups}, w)};
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
    ConvParams plain = *p;
    plain.activation = "none";
    Floats want = reference::Conv2D(input, w, bias, c.activation == "tanh" ? plain : *p, false);
    if (c.activation == "tanh")
      for (float& v : want) v = std::tanh(v);
    ExpectClose(RunOnOnednn(*g, {input}), want,
                ShapeToString(c.x) + " →" + std::to_string(c.out_c) + " k" + std::to_string(c.kernel) + " s" +
                    std::to_string(c.stride) + " " + c.padding + " g" + std::to_string(c.groups) + " " + c.activation);
  }
}

TEST(OnednnOps, DepthwiseConv2DMatchesReference) {
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
      {{1, 11, 11, 4}, 1, 3, 1, "same", "none", 2},
      {{1, 16, 16, 24}, 1, 5, 2, "same", "relu"},
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
                              {"dilations", Ints{c.dilation, c.dilation}}, {"padding", c.padding}, {"groups", c.x[3]},
                              {"depth_multiplier", c.multiplier}, {"activation", c.activation}}));
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    auto p = GetConvParams(*g, g->node(0));
    ASSERT_TRUE(p.ok()) << p.status().message();
    Floats input = Random(reference::Product(c.x), seed++);
    ExpectClose(RunOnOnednn(*g, {input}), reference::Conv2D(input, w, bias, *p, true),
                ShapeToString(c.x) + " m" + std::to_string(c.multiplier) + " s" + std::to_string(c.stride));
  }
}

TEST(OnednnOps, TransposeConv2DMatchesReference) {
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
      {{1, 5, 5, 2}, 3, 3, 2, "same", {1, 10, 10, 3}},
      {{1, 4, 5, 3}, 2, 3, 2, "explicit", {}},
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
    ExpectClose(RunOnOnednn(*g, {input}), reference::TransposeConv2D(input, w, bias, *p),
                ShapeToString(c.x) + " k" + std::to_string(c.kernel) + " " + c.padding + " → " + ShapeToString(g->tensor(y).shape));
  }
}

// --- fully_connected ----------------------------------------------------------------------

TEST(OnednnOps, FullyConnectedOIAndIO) {
  for (bool io : {false, true})
    for (bool bias_present : {true, false}) {
      GraphBuilder b;
      const Shape xs = io ? Shape{2, 3, 11} : Shape{5, 11};
      TensorId x = b.Input("x", xs);
      Floats w = Random(11 * 7, 300), bias = bias_present ? Random(7, 301) : Floats{};
      std::vector<TensorId> inputs{x, b.Constant("w", io ? Shape{11, 7} : Shape{7, 11}, w)};
      if (bias_present) inputs.push_back(b.Constant("b", {7}, bias));
      TensorId y = b.Op1(OpKind::kFullyConnected, "fc", inputs,
                         Attrs({{"weights_layout", std::string(io ? "IO" : "OI")}, {"activation", std::string("relu")}}));
      auto g = b.Finish({y});
      ASSERT_TRUE(g.ok()) << g.status().message();
      Floats input = Random(reference::Product(xs), 302);
      Floats want = reference::FullyConnected(input, w, bias, reference::Product(xs) / 11, 11, 7, io);
      reference::Activate(want, "relu");
      ExpectClose(RunOnOnednn(*g, {input}), want, std::string(io ? "IO" : "OI") + (bias_present ? " bias" : ""));
    }
}

// --- pools ----------------------------------------------------------------------------------

TEST(OnednnOps, MaxAndAvgPoolMatchReference) {
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
  };
  std::uint32_t seed = 400;
  for (const Case& c : cases)
    for (const char* act : {"none", "relu"}) {
      GraphBuilder b;
      TensorId x = b.Input("x", c.x);
      TensorId y = b.Op1(c.kind, "pool", {x},
                         Attrs({{"kernel", Ints{c.kernel, c.kernel}}, {"strides", Ints{c.stride, c.stride}}, {"padding", c.padding},
                                {"activation", std::string(act)}}));
      auto g = b.Finish({y});
      ASSERT_TRUE(g.ok()) << g.status().message();
      auto p = GetPoolParams(*g, g->node(0));
      ASSERT_TRUE(p.ok()) << p.status().message();
      Floats input = Random(reference::Product(c.x), seed++);
      Floats want = reference::Pool2D(input, *p, c.kind == OpKind::kMaxPool2D);
      reference::Activate(want, act);
      ExpectClose(RunOnOnednn(*g, {input}), want, std::string(OpName(c.kind)) + " " + ShapeToString(c.x) + " " + c.padding + " " + act);
    }
}

TEST(OnednnOps, GlobalPools) {
  const Shape xs{2, 5, 7, 3};
  Floats input = Random(reference::Product(xs), 450);
  for (OpKind kind : {OpKind::kGlobalMaxPool, OpKind::kGlobalAvgPool}) {
    GraphBuilder b;
    TensorId y = b.Op1(kind, "gp", {b.Input("x", xs)});
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    Floats want = kind == OpKind::kGlobalAvgPool ? reference::MeanMiddle(input, 2, 35, 3) : Floats{};
    if (kind == OpKind::kGlobalMaxPool) {
      auto p = GetPoolParams(*g, g->node(0));
      ASSERT_TRUE(p.ok()) << p.status().message();
      want = reference::Pool2D(input, *p, true);
    }
    ExpectClose(RunOnOnednn(*g, {input}), want, std::string(OpName(kind)));
  }
}

TEST(OnednnOps, MeanOverAxes) {
  const Shape xs{2, 5, 7, 3};
  Floats input = Random(reference::Product(xs), 500);
  for (std::int64_t keep : {0, 1}) {
    GraphBuilder b;
    TensorId y = b.Op1(OpKind::kMean, "mean", {b.Input("x", xs)}, Attrs({{"axes", Ints{1, -2}}, {"keepdims", keep}}));
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    ExpectClose(RunOnOnednn(*g, {input}), reference::MeanMiddle(input, 2, 35, 3), "mean keepdims " + std::to_string(keep));
  }
  {
    GraphBuilder b;
    TensorId y = b.Op1(OpKind::kMean, "mean", {b.Input("x", xs)}, Attrs({{"axes", Ints{3}}, {"keepdims", std::int64_t{1}}}));
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    ExpectClose(RunOnOnednn(*g, {input}), reference::MeanMiddle(input, 70, 3, 1), "mean over channels");
  }
  {
    GraphBuilder b;
    TensorId y = b.Op1(OpKind::kMean, "mean", {b.Input("x", xs)}, Attrs({{"keepdims", std::int64_t{1}}}));
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    ExpectClose(RunOnOnednn(*g, {input}), reference::MeanMiddle(input, 1, 210, 1), "mean over all axes");
  }
}

// --- elementwise ---------------------------------------------------------------------------

TEST(OnednnOps, BinaryOpsBroadcast) {
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
  };
  const std::pair<Shape, Shape> shapes[] = {
      {{1, 5, 7, 3}, {1, 5, 7, 3}}, {{1, 5, 7, 3}, {3}}, {{2, 5, 7, 3}, {1, 5, 1, 3}}, {{4, 9}, {1}}, {{4, 9}, {}},
  };
  std::uint32_t seed = 600;
  for (const Kind& k : kinds)
    for (const auto& [as, bs] : shapes)
      for (bool constant_b : {false, true}) {
        GraphBuilder b;
        TensorId a = b.Input("a", as);
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
        ExpectClose(RunOnOnednn(*g, inputs), want,
                    std::string(OpName(k.kind)) + " " + ShapeToString(as) + " " + ShapeToString(bs) + (constant_b ? " const" : ""));
      }
}

// The first input broadcast: commutative ops swap their inputs (sub: tests/run/onednn_gather_slice_test.cc; div says no).
TEST(OnednnOps, BroadcastFirstInputOfCommutativeOps) {
  const Shape as{1, 1, 1, 3}, bs{2, 5, 7, 3};
  for (OpKind kind : {OpKind::kAdd, OpKind::kMul}) {
    GraphBuilder b;
    TensorId y = b.Op1(kind, "op", {b.Input("a", as), b.Input("b", bs)});
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    Floats av = Random(3, 650), bv = Random(reference::Product(bs), 651);
    auto f = [kind](float x, float z) { return kind == OpKind::kAdd ? x + z : x * z; };
    ExpectClose(RunOnOnednn(*g, {av, bv}), reference::Binary(av, as, bv, bs, bs, f), std::string(OpName(kind)));
  }
}

TEST(OnednnOps, UnaryOpsMatchReference) {
  struct Case {
    OpKind kind;
    Attributes attrs;
    std::function<float(float)> f;
  };
  const Case cases[] = {
      {OpKind::kRelu, {}, [](float v) { return std::max(v, 0.0f); }},
      {OpKind::kRelu6, {}, [](float v) { return std::min(std::max(v, 0.0f), 6.0f); }},
      {OpKind::kReluN1To1, {}, [](float v) { return std::min(std::max(v, -1.0f), 1.0f); }},
      {OpKind::kClip, Attrs({{"min", -0.5}, {"max", 2.5}}), [](float v) { return std::min(std::max(v, -0.5f), 2.5f); }},
      {OpKind::kClip, Attrs({{"min", 0.25}}), [](float v) { return std::max(v, 0.25f); }},
      {OpKind::kSigmoid, {}, [](float v) { return 1.0f / (1.0f + std::exp(-v)); }},
      {OpKind::kTanh, {}, [](float v) { return std::tanh(v); }},
      {OpKind::kLeakyRelu, Attrs({{"alpha", 0.2}}), [](float v) { return v < 0 ? 0.2f * v : v; }},
      {OpKind::kElu, Attrs({{"alpha", 1.5}}), [](float v) { return v < 0 ? 1.5f * (std::exp(v) - 1.0f) : v; }},
      {OpKind::kAbs, {}, [](float v) { return std::abs(v); }},
      {OpKind::kHardSwish, {}, [](float v) { return v * std::min(std::max(v + 3.0f, 0.0f), 6.0f) / 6.0f; }},
      {OpKind::kRound, {}, [](float v) { return std::nearbyint(v); }},  // halves to even
      {OpKind::kSquare, {}, [](float v) { return v * v; }},
      {OpKind::kSigmoid, Attrs({{"activation", std::string("relu_n1_to_1")}}), [](float v) { return 1.0f / (1.0f + std::exp(-v)); }},
      {OpKind::kAbs, Attrs({{"activation", std::string("relu6")}}), [](float v) { return std::min(std::abs(v), 6.0f); }},
  };
  const Shape xs{1, 7, 5, 6};
  std::uint32_t seed = 700;
  for (const Case& c : cases) {
    GraphBuilder b;
    TensorId y = b.Op1(c.kind, "op", {b.Input("x", xs)}, c.attrs);
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    Floats input = Random(reference::Product(xs), seed++, -8.0f, 8.0f);
    Floats want(input.size());
    for (size_t i = 0; i < input.size(); ++i) want[i] = c.f(input[i]);
    ExpectClose(RunOnOnednn(*g, {input}), want, std::string(OpName(c.kind)));
  }
}

TEST(OnednnOps, SoftmaxOverLastAxis) {
  const Shape xs{3, 2, 17};
  GraphBuilder b;
  TensorId y = b.Op1(OpKind::kSoftmax, "softmax", {b.Input("x", xs)}, Attrs({{"axis", std::int64_t{-1}}}));
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  Floats input = Random(reference::Product(xs), 900, -5.0f, 5.0f);
  ExpectClose(RunOnOnednn(*g, {input}), reference::Softmax(input, 17), "softmax");
}

// --- transformer kernels: attention's matmuls and softmax, gelu, projections over a sequence ----

TEST(OnednnOps, MatMulBatchedBroadcastAndTransposed) {
  struct Case {
    Shape a, b;  // as stored (before the transposes)
    bool ta = false, tb = false;
    std::string activation = "none";
  };
  const Case cases[] = {
      {{5, 7}, {7, 3}},
      {{4, 6, 8}, {4, 8, 5}},                     // heads as the batch
      {{2, 3, 6, 8}, {2, 3, 6, 8}, false, true},  // attention scores: q · kᵀ
      {{3, 8, 6}, {3, 8, 5}, true, false},
      {{2, 8, 6}, {2, 5, 8}, true, true},
      {{2, 1, 6, 8}, {1, 3, 8, 4}},               // batch dims broadcast both ways
      {{4, 6, 8}, {8, 5}},                        // b of lower rank: one matrix for every batch
      {{6, 8}, {3, 8, 5}},                        // a of lower rank
      {{2, 6, 8}, {2, 8, 5}, false, false, "relu"},
  };
  std::uint32_t seed = 950;
  for (const Case& c : cases) {
    GraphBuilder b;
    Attributes attrs = Attrs({{"transpose_a", std::int64_t{c.ta}}, {"transpose_b", std::int64_t{c.tb}}});
    if (c.activation != "none") attrs.Set("activation", c.activation);
    TensorId y = b.Op1(OpKind::kMatMul, "matmul", {b.Input("a", c.a), b.Input("b", c.b)}, attrs);
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    Floats a = Random(reference::Product(c.a), seed++), bv = Random(reference::Product(c.b), seed++);
    Floats want = reference::MatMul(a, c.a, c.ta, bv, c.b, c.tb);
    reference::Activate(want, c.activation);
    ASSERT_EQ(static_cast<std::int64_t>(want.size()), reference::Product(g->tensor(y).shape));
    ExpectClose(RunOnOnednn(*g, {a, bv}), want,
                ShapeToString(c.a) + (c.ta ? "ᵀ" : "") + " × " + ShapeToString(c.b) + (c.tb ? "ᵀ" : "") + " " + c.activation);
  }
}

TEST(OnednnOps, GeluExactAndTanh) {
  const Shape xs{3, 5, 16};
  const Floats input = Random(reference::Product(xs), 970, -4.0f, 4.0f);
  for (const char* approximate : {"", "none", "tanh"}) {
    GraphBuilder b;
    Attributes attrs;
    if (*approximate != '\0') attrs.Set("approximate", std::string(approximate));
    TensorId y = b.Op1(OpKind::kGelu, "gelu", {b.Input("x", xs)}, attrs);
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    const bool tanh = std::string(approximate) == "tanh";
    Floats want(input.size());
    for (size_t i = 0; i < input.size(); ++i) want[i] = reference::Gelu(input[i], tanh);
    Floats got = RunOnOnednn(*g, {input});
    ExpectClose(got, want, std::string("gelu approximate '") + approximate + "'");
    // The two forms differ by up to 4.7e-4 (near ±2.7), within ExpectClose's scale: each must be
    // much closer to the one asked for than that, and measurably apart from the other.
    Floats other(input.size());
    for (size_t i = 0; i < input.size(); ++i) other[i] = reference::Gelu(input[i], !tanh);
    float error = 0, apart = 0;
    for (size_t i = 0; i < got.size() && i < other.size(); ++i) {
      error = std::max(error, std::abs(got[i] - want[i]));
      apart = std::max(apart, std::abs(got[i] - other[i]));
    }
    EXPECT_LE(error, 2e-5f) << approximate;
    EXPECT_GT(apart, 1e-4f) << approximate;
  }
}

TEST(OnednnOps, SoftmaxOverTheLastAxisOfRanksTwoToFour) {
  for (const Shape& xs : {Shape{5, 33}, Shape{4, 9, 9}, Shape{2, 3, 7, 19}}) {
    GraphBuilder b;
    TensorId y = b.Op1(OpKind::kSoftmax, "softmax", {b.Input("x", xs)}, Attrs({{"axis", std::int64_t{-1}}}));
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    Floats input = Random(reference::Product(xs), 980, -6.0f, 6.0f);
    ExpectClose(RunOnOnednn(*g, {input}), reference::Softmax(input, xs.back()), "softmax " + ShapeToString(xs));
  }
}

TEST(OnednnOps, FullyConnectedOverASequence) {
  // A transformer's projection: [batch, seq, hidden] by constant [hidden, out] weights (ONNX MatMul).
  const Shape xs{2, 5, 8};
  GraphBuilder b;
  Floats w = Random(8 * 6, 990), bias = Random(6, 991), input = Random(reference::Product(xs), 992);
  TensorId y = b.Op1(OpKind::kFullyConnected, "fc", {b.Input("x", xs), b.Constant("w", {8, 6}, w), b.Constant("b", {6}, bias)},
                     Attrs({{"weights_layout", std::string("IO")}}));
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->tensor(y).shape, (Shape{2, 5, 6}));
  ExpectClose(RunOnOnednn(*g, {input}), reference::FullyConnected(input, w, bias, 10, 8, 6, true), "fc [2,5,8]");
}

// --- data movement -------------------------------------------------------------------------

TEST(OnednnOps, ConcatOnChannelsAndOnAnInnerAxis) {
  for (std::int64_t axis : {3, 1, -4}) {
    GraphBuilder b;
    std::vector<Shape> shapes{{1, 3, 4, 2}, {1, 3, 4, 5}, {1, 3, 4, 1}};
    for (auto& s : shapes) std::swap(s[static_cast<size_t>(axis < 0 ? axis + 4 : axis)], s[3]);
    std::vector<Floats> values;
    std::vector<TensorId> ids;
    for (size_t i = 0; i < shapes.size(); ++i) {
      values.push_back(Random(reference::Product(shapes[i]), 1200 + static_cast<std::uint32_t>(i)));
      std::string name = "x";
      name += std::to_string(i);
      ids.push_back(i + 1 < shapes.size() ? b.Input(name, shapes[i]) : b.Constant("c", shapes[i], values[i]));
    }
    TensorId y = b.Op1(OpKind::kConcat, "concat", ids, Attrs({{"axis", axis}}));
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    const std::int64_t a = axis < 0 ? axis + 4 : axis;
    std::int64_t outer = 1;
    for (std::int64_t d = 0; d < a; ++d) outer *= shapes[0][static_cast<size_t>(d)];
    Floats want;
    for (std::int64_t o = 0; o < outer; ++o)
      for (const Floats& v : values) {
        const auto inner = static_cast<std::int64_t>(v.size()) / outer;
        want.insert(want.end(), v.begin() + o * inner, v.begin() + (o + 1) * inner);
      }
    ExpectClose(RunOnOnednn(*g, {values[0], values[1]}), want, "concat axis " + std::to_string(axis));
  }
}

TEST(OnednnOps, ResizeBilinearHalfPixel) {
  const Shape xs{2, 5, 7, 3};
  for (const Ints& size : {Ints{10, 14}, Ints{9, 4}, Ints{5, 7}, Ints{1, 3}}) {
    GraphBuilder b;
    TensorId y = b.Op1(OpKind::kResize, "resize", {b.Input("x", xs)},
                       Attrs({{"mode", std::string("bilinear")}, {"sizes", size},
                              {"coordinate_transformation", std::string("half_pixel")}, {"layout", std::string("NHWC")}}));
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    Floats input = Random(reference::Product(xs), 1000);
    ExpectClose(RunOnOnednn(*g, {input}), reference::ResizeBilinear(input, xs, size[0], size[1], "half_pixel"),
                "half_pixel to " + std::to_string(size[0]) + "x" + std::to_string(size[1]));
  }
}

TEST(OnednnOps, PadConstant) {
  for (const Ints& pads : {Ints{0, 1, 2, 0, 0, 2, 1, 3}, Ints{0, 0, 0, 0, 0, 0, 0, 5}}) {
    const Shape xs{1, 3, 4, 2};
    GraphBuilder b;
    TensorId y = b.Op1(OpKind::kPad, "pad", {b.Input("x", xs)}, Attrs({{"pads", pads}, {"value", 0.5}}));
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    Floats input = Random(reference::Product(xs), 1100);
    ExpectClose(RunOnOnednn(*g, {input}), reference::Pad(input, xs, pads, 0.5f), "pad");
  }
}

TEST(OnednnOps, ReshapeFamilyCopies) {
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
    ExpectClose(RunOnOnednn(*g, {input}), input, std::string(OpName(kind)));
  }
}

// --- what onednn refuses, and why -----------------------------------------------------------

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

TensorId Conv3x3(GraphBuilder& b, Shape xs, const std::string& layout, const std::string& filter_layout, Attributes extra = {}) {
  TensorId x = b.Input("x", xs);
  const Shape ws{4, 3, 3, 3};
  TensorId w = extra.Has("weights_input") ? b.Input("w", ws) : b.Constant("w", ws, Random(108, 1));
  Attributes a = Attrs({{"filter_layout", filter_layout}, {"layout", layout}, {"padding", std::string("same")}});
  if (extra.Has("activation")) a.Set("activation", extra.GetString("activation", ""));
  return b.Op1(OpKind::kConv2D, "conv", {x, w}, a);
}

TEST(OnednnSupport, SaysNoWithTheReason) {
  EXPECT_EQ(WhyNot([](GraphBuilder& b) { return Conv3x3(b, {1, 3, 8, 8}, "NCHW", "OIHW"); }),
            "layout NCHW: onednn backend runs NHWC graphs");
  EXPECT_EQ(WhyNot([](GraphBuilder& b) { return Conv3x3(b, {1, 8, 8, 3}, "NHWC", "OIHW"); }),
            "conv2d filter_layout OIHW: onednn backend needs OHWI");
  EXPECT_EQ(WhyNot([](GraphBuilder& b) { return Conv3x3(b, {1, 8, 8, 3}, "NHWC", "OHWI", Attrs({{"weights_input", 1.0}})); }),
            "conv2d with non-constant weights");
  EXPECT_EQ(WhyNot([](GraphBuilder& b) { return Conv3x3(b, {1, 8, 8, 3}, "NHWC", "OHWI", Attrs({{"activation", std::string("sign_bit")}})); }),
            "fused activation sign_bit not implemented");
  EXPECT_EQ(WhyNot([](GraphBuilder& b) { return Conv3x3(b, {1, 8, 8, 3}, "NHWC", "OHWI"); }), "supported");
  // At int8, a node the plan kept fp32 (no int8 activation) runs as at fp32; an int8 kind the
  // backend has no int8 form of says so.
  EXPECT_EQ(WhyNot([](GraphBuilder& b) { return Conv3x3(b, {1, 8, 8, 3}, "NHWC", "OHWI"); }, Precision::kInt8), "supported");
  EXPECT_EQ(WhyNot([](GraphBuilder& b) { return b.Op1(OpKind::kExp, "exp", {b.Input("x", {1, 4}, DataType::kInt8)}); },
                   Precision::kInt8),
            "int8 exp unsupported on onednn, because Latte's oneDNN backend runs int8 convolutions, fully-connected "
            "layers, adds, pooling, means, clamps, activations and data movement only");
  EXPECT_EQ(WhyNot([](GraphBuilder& b) { return b.Op1(OpKind::kRelu, "relu", {b.Input("x", {1, 4}, DataType::kInt8)}); }),
            "int8 not implemented");
  // The library's version stands as V: what is refused and why is the point.
  auto versionless = [](const std::string& why) { return std::regex_replace(why, std::regex("oneDNN [0-9][0-9.]*"), "oneDNN V"); };
  const std::string onednn = "oneDNN V";
  EXPECT_EQ(versionless(WhyNot([](GraphBuilder& b) { return b.Op1(OpKind::kErf, "erf", {b.Input("x", {1, 4})}); })),
            "erf unsupported on onednn, because " + onednn + " has no erf (its eltwise has erf only inside gelu_erf)");
  EXPECT_EQ(versionless(WhyNot([](GraphBuilder& b) { return b.Op1(OpKind::kFloor, "floor", {b.Input("x", {1, 4})}); })),
            "floor unsupported on onednn, because " + onednn + " rounds only to the nearest integer (eltwise_round)");
  EXPECT_EQ(versionless(WhyNot([](GraphBuilder& b) {
              return b.Op1(OpKind::kArgMax, "argmax", {b.Input("x", {2, 4})}, Attrs({{"axis", std::int64_t{1}}}));
            })),
            "argmax unsupported on onednn, because " + onednn +
                " has no arg-max primitive (its reduction gives the extreme value, not where it is)");
  EXPECT_EQ(versionless(WhyNot([](GraphBuilder& b) {
              return b.Op1(OpKind::kWhere, "where",
                           {b.Input("c", {4}, DataType::kBool), b.Input("x", {4}), b.Input("y", {4})});
            })),
            "where unsupported on onednn, because " + onednn +
                " has no select primitive (and x·c + y·(1−c) is NaN where the side not taken is infinite, as attention "
                "masks are)");
  EXPECT_EQ(WhyNot([](GraphBuilder& b) { return b.Op1(OpKind::kPow, "pow", {b.Input("x", {1, 4}), b.Input("e", {1})}); }),
            "pow exponent 'e' is not a constant scalar: oneDNN's pow takes the exponent as a number, not a tensor");
  EXPECT_EQ(WhyNot([](GraphBuilder& b) {
              return b.Op1(OpKind::kGelu, "gelu", {b.Input("x", {1, 4})}, Attrs({{"approximate", std::string("fast")}}));
            }),
            "gelu approximate 'fast' (none or tanh)");
  EXPECT_EQ(WhyNot([](GraphBuilder& b) {
              return b.Op1(OpKind::kResize, "resize", {b.Input("x", {1, 4, 4, 2})},
                           Attrs({{"mode", std::string("bilinear")}, {"sizes", Ints{8, 8}},
                                  {"coordinate_transformation", std::string("align_corners")}, {"layout", std::string("NHWC")}}));
            }),
            "resize coordinate_transformation 'align_corners': onednn resamples with half_pixel only");
  EXPECT_EQ(WhyNot([](GraphBuilder& b) {
              return b.Op1(OpKind::kPad, "pad", {b.Input("x", {1, 4})},
                           Attrs({{"pads", Ints{0, 1, 0, 1}}, {"mode", std::string("reflect")}}));
            }),
            "pad mode 'reflect' not implemented (constant only)");
  EXPECT_EQ(WhyNot([](GraphBuilder& b) {
              return b.Op1(OpKind::kSoftmax, "softmax", {b.Input("x", {3, 4})}, Attrs({{"axis", std::int64_t{0}}}));
            }),
            "softmax over an axis other than the last");
  EXPECT_EQ(WhyNot([](GraphBuilder& b) {
              return b.Op1(OpKind::kAvgPool2D, "pool", {b.Input("x", {1, 7, 7, 2})},
                           Attrs({{"kernel", Ints{3, 3}}, {"padding", std::string("same")}, {"count_include_pad", std::int64_t{1}}}));
            }),
            "avg_pool2d with count_include_pad=1 and padding not implemented");
  EXPECT_EQ(WhyNot([](GraphBuilder& b) { return b.Op1(OpKind::kDiv, "div", {b.Input("a", {1, 3}), b.Input("b", {4, 3})}); }),
            "div broadcasting its first input: onednn broadcasts the second only");
}

TEST(OnednnSupport, PrepareOfAnUnsupportedNodeIsUnsupported) {
  GraphBuilder b;
  TensorId y = b.Op1(OpKind::kErf, "erf", {b.Input("x", {1, 4})});
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok());
  auto backend = MakeBackend();
  ASSERT_NE(backend, nullptr);
  auto prepared = backend->Prepare(*g, 0);
  ASSERT_FALSE(prepared.ok());
  EXPECT_EQ(prepared.status().code(), StatusCode::kUnsupported);
  EXPECT_FALSE(backend->Supports(*g, 7).ok());
  EXPECT_EQ(backend->Prepare(*g, 7).status().code(), StatusCode::kUnsupported);
}

// --- threads, registry, a real model ------------------------------------------------------------

TEST(OnednnBackend, OneAndTwoThreadsAgree) {
  GraphBuilder b;
  TensorId x = b.Input("x", {2, 33, 35, 16});
  TensorId c = b.Op1(OpKind::kConv2D, "conv", {x, b.Constant("w", {32, 3, 3, 16}, Random(32 * 9 * 16, 1500)), b.Constant("b", {32}, Random(32, 1501))},
                     Attrs({{"filter_layout", std::string("OHWI")}, {"padding", std::string("same")}, {"activation", std::string("relu")}}));
  TensorId d = b.Op1(OpKind::kDepthwiseConv2D, "dw", {c, b.Constant("dw_w", {1, 3, 3, 32}, Random(9 * 32, 1502))},
                     Attrs({{"filter_layout", std::string("1HWO")}, {"strides", Ints{2, 2}}, {"padding", std::string("same")}}));
  TensorId y = b.Op1(OpKind::kGlobalAvgPool, "gap", {d});
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  Floats input = Random(2 * 33 * 35 * 16, 1503);
  Floats one = RunOnOnednn(*g, {input}, 1), two = RunOnOnednn(*g, {input}, 2);
  ASSERT_EQ(one.size(), 64u);
  ASSERT_EQ(two.size(), 64u);
  for (size_t i = 0; i < one.size(); ++i)
    EXPECT_LE(std::abs(one[i] - two[i]), 1e-5f * std::max(1.0f, std::abs(one[i]))) << "element " << i;
}

TEST(OnednnBackend, RegistersAndNamesItsVersion) {
  BackendRegistry registry;
  RegisterOnednnBackend(registry);
  EXPECT_EQ(registry.Names(), std::vector<std::string>{"onednn"});
  RunOptions options;
  options.num_threads = 2;
  auto backend = registry.Create("onednn", options);
  ASSERT_TRUE(backend.ok()) << backend.status().message();
  EXPECT_EQ((*backend)->Name(), "onednn");
  const std::string version = (*backend)->Version();
  EXPECT_EQ(version.rfind("oneDNN 2.", 0), 0u) << version;
  EXPECT_NE(version.find("(OpenMP, 2 threads)"), std::string::npos) << version;
  auto single = registry.Create("onednn", {});
  ASSERT_TRUE(single.ok());
  EXPECT_NE((*single)->Version().find("(OpenMP, 1 thread)"), std::string::npos);
}

// Runs the whole model with the executor and returns its first output.
Floats RunModel(const Graph& graph, const std::string& backend, const BackendRegistry& registry, std::string* placement) {
  Placement where;
  where.default_backend = backend;
  where.fallback = "xnnpack";
  auto executor = Executor::Create(graph, where, registry, RunOptions{});
  if (!executor.ok()) {
    ADD_FAILURE() << backend << ": " << executor.status().message();
    return {};
  }
  FillRandomInputs(graph, (*executor)->buffers(), 3);
  Status status = (*executor)->Run();
  if (!status.ok()) {
    ADD_FAILURE() << backend << ": " << status.message();
    return {};
  }
  if (placement != nullptr)
    for (size_t n = 0; n < (*executor)->assignments().size(); ++n) {
      const NodeAssignment& a = (*executor)->assignments()[n];
      if (a.fell_back) *placement += "\n  " + DescribeNode(graph, static_cast<NodeId>(n)) + " → " + a.backend + ": " + a.why;
    }
  const TensorId out = graph.outputs[0];
  const float* data = (*executor)->buffers().as<float>(out);
  return Floats(data, data + (*executor)->buffers().bytes(out) / sizeof(float));
}

// Every onednn node of the model against the all-xnnpack run (nodes onednn refuses fall back).
void ExpectAgreesWithXnnpack(const char* file, bool all_on_onednn) {
  auto graph = ImportModel(latte::testing::ModelPath(file), ImportOptions{});
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  BackendRegistry registry;
  RegisterXnnpackBackend(registry);
  RegisterOnednnBackend(registry);
  std::string fell_back;
  const Floats want = RunModel(*graph, "xnnpack", registry, nullptr);
  const Floats got = RunModel(*graph, "onednn", registry, &fell_back);
  if (all_on_onednn) EXPECT_TRUE(fell_back.empty()) << file << " nodes onednn left to xnnpack:" << fell_back;
  else if (!fell_back.empty()) std::cout << file << ": nodes onednn left to xnnpack:" << fell_back << "\n";
  ASSERT_EQ(got.size(), want.size()) << file;
  ASSERT_FALSE(want.empty()) << file;
  float scale = 1.0f, worst = 0.0f;
  for (float v : want) scale = std::max(scale, std::abs(v));
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
  EXPECT_LE(worst, 1e-3f * scale) << file << ": largest difference from the all-xnnpack run";
}

TEST(OnednnModel, FaceDetectionAgreesWithXnnpack) {
  const char* file = "face_detection_short_range.tflite";
  LATTE_REQUIRE_MODEL(file);
  ExpectAgreesWithXnnpack(file, true);
}

TEST(OnednnModel, OtherTfliteModelsAgreeWithXnnpack) {
  for (const char* file : {"selfie_segmentation.tflite", "hand_landmark_lite.tflite", "pose_landmark_lite.tflite"}) {
    LATTE_REQUIRE_MODEL(file);
    ExpectAgreesWithXnnpack(file, false);
  }
}

}  // namespace
}  // namespace latte

namespace latte {
namespace {

// layer_norm on oneDNN's layer normalization, with and without scale and bias, against a
// reference computed here; a scale broadcast within the row is refused saying so.
TEST(OnednnOps, LayerNormOverTheLastDims) {
  const Shape xs{2, 5, 8};
  const Floats x = Random(80, 41, -3, 3), scale = Random(8, 42), bias = Random(8, 43);
  for (int affine = 0; affine < 3; ++affine) {  // none, scale, scale and bias
    GraphBuilder b;
    std::vector<TensorId> inputs = {b.Input("x", xs)};
    if (affine >= 1) inputs.push_back(b.Constant("scale", {8}, scale));
    if (affine == 2) inputs.push_back(b.Constant("bias", {8}, bias));
    const TensorId y = b.Op1(OpKind::kLayerNorm, "ln", inputs, Attrs({{"axis", std::int64_t{-1}}, {"epsilon", 1e-3}}));
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    Floats want(80);
    for (size_t r = 0; r < 10; ++r) {
      double mean = 0, var = 0;
      for (size_t c = 0; c < 8; ++c) mean += x[r * 8 + c];
      mean /= 8;
      for (size_t c = 0; c < 8; ++c) var += (x[r * 8 + c] - mean) * (x[r * 8 + c] - mean);
      var /= 8;
      for (size_t c = 0; c < 8; ++c) {
        double v = (x[r * 8 + c] - mean) / std::sqrt(var + 1e-3);
        if (affine >= 1) v *= scale[c];
        if (affine == 2) v += bias[c];
        want[r * 8 + c] = static_cast<float>(v);
      }
    }
    ExpectClose(RunOnOnednn(*g, {x}), want, "layer_norm affine " + std::to_string(affine));
  }
  EXPECT_EQ(WhyNot([](GraphBuilder& b) {
              return b.Op1(OpKind::kLayerNorm, "ln", {b.Input("x", {2, 8}), b.Constant("scale", {1}, {2.0f})});
            }),
            "layer_norm scale broadcast within the normalized dims (onednn takes one value per element)");
}

}  // namespace
}  // namespace latte

namespace latte {
namespace {

// Runs node 0 of `graph` on oneDNN with its inputs as `fill` writes them: its one output's bool
// bytes (empty, with the failure recorded, when it cannot run).
std::vector<std::uint8_t> RunBoolNode(const Graph& graph, const std::function<void(TensorBuffers&)>& fill) {
  auto backend = MakeBackend();
  auto buffers = TensorBuffers::Allocate(graph);
  if (backend == nullptr || !buffers.ok()) {
    ADD_FAILURE() << "no oneDNN backend or buffers";
    return {};
  }
  fill(*buffers);
  if (Support s = backend->Supports(graph, 0); !s.ok()) {
    ADD_FAILURE() << s.why();
    return {};
  }
  auto prepared = backend->Prepare(graph, 0);
  if (!prepared.ok() || !(*prepared)->Run(*buffers).ok()) {
    ADD_FAILURE() << "prepare or run failed: " << prepared.status().message();
    return {};
  }
  const TensorId y = graph.node(0).outputs[0];
  const std::uint8_t* bytes = buffers->as<std::uint8_t>(y);
  return std::vector<std::uint8_t>(bytes, bytes + *graph.tensor(y).num_elements());
}

// Comparisons on oneDNN's binary_eq ... binary_ge, writing bool bytes, the first operand broadcast
// by swapping it to the second place (and an ordered comparison for its mirror); logic on bool
// bytes; the elementwise math of exports; gelu both ways.
TEST(OnednnOps, ComparisonsLogicMathAndGeluAgainstTheirDefinitions) {
  const Floats a = {-1, 0, 1, 2, 0, 0, 1, -1}, row = {0, 1, 1, -1};
  const std::pair<OpKind, std::function<bool(float, float)>> ops[] = {
      {OpKind::kEqual, [](float x, float y) { return x == y; }},     {OpKind::kNotEqual, [](float x, float y) { return x != y; }},
      {OpKind::kLess, [](float x, float y) { return x < y; }},       {OpKind::kLessEqual, [](float x, float y) { return x <= y; }},
      {OpKind::kGreater, [](float x, float y) { return x > y; }},    {OpKind::kGreaterEqual, [](float x, float y) { return x >= y; }}};
  for (const auto& [kind, fn] : ops) {
    for (bool row_first : {false, true}) {
      SCOPED_TRACE(std::string(OpName(kind)) + (row_first ? " row first" : ""));
      GraphBuilder b;
      const TensorId full = b.Input("a", {2, 4}), broadcast = b.Input("row", {4});
      const TensorId y = b.Op1(kind, "cmp", row_first ? std::vector<TensorId>{broadcast, full} : std::vector<TensorId>{full, broadcast});
      auto g = b.Finish({y});
      ASSERT_TRUE(g.ok()) << g.status().message();
      const std::vector<std::uint8_t> got = RunBoolNode(*g, [&](TensorBuffers& buffers) {
        std::copy(a.begin(), a.end(), buffers.mutable_as<float>(full));
        std::copy(row.begin(), row.end(), buffers.mutable_as<float>(broadcast));
      });
      ASSERT_EQ(got.size(), 8u);
      for (size_t i = 0; i < 8; ++i) {
        const bool want = row_first ? fn(row[i % 4], a[i]) : fn(a[i], row[i % 4]);
        EXPECT_EQ(got[i], want ? 1 : 0) << "element " << i;
      }
    }
  }
  const Floats x = Random(12, 44, -4, 4);
  // The math that real exports write out (exp, log, sqrt, neg, 1/x, 1/√x, x^e with a constant e),
  // on positive inputs where the function needs them.
  const Floats positive = Random(12, 45, 0.25f, 4);
  const std::tuple<OpKind, float (*)(float), const Floats*> math[] = {
      {OpKind::kExp, [](float v) { return std::exp(v); }, &x},
      {OpKind::kLog, [](float v) { return std::log(v); }, &positive},
      {OpKind::kSqrt, [](float v) { return std::sqrt(v); }, &positive},
      {OpKind::kNeg, [](float v) { return -v; }, &x},
      {OpKind::kReciprocal, [](float v) { return 1 / v; }, &positive},
      {OpKind::kRsqrt, [](float v) { return 1 / std::sqrt(v); }, &positive}};
  for (const auto& [kind, fn, in] : math) {
    GraphBuilder b;
    const TensorId y = b.Op1(kind, "f", {b.Input("x", {3, 4})});
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok());
    Floats want;
    for (float v : *in) want.push_back(fn(v));
    ExpectClose(RunOnOnednn(*g, {*in}), want, std::string(OpName(kind)));
  }
  for (float e : {2.0f, 3.0f, 0.5f}) {
    GraphBuilder b;
    const TensorId y = b.Op1(OpKind::kPow, "pow", {b.Input("x", {3, 4}), b.Constant("e", {}, Floats{e})});
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    Floats want;
    for (float v : positive) want.push_back(std::pow(v, e));
    ExpectClose(RunOnOnednn(*g, {positive}), want, "pow " + std::to_string(e));
  }
  // and, or (a row broadcast), not, on bool bytes: the truth tables.
  for (OpKind kind : {OpKind::kLogicalAnd, OpKind::kLogicalOr, OpKind::kLogicalNot}) {
    SCOPED_TRACE(OpName(kind));
    GraphBuilder b;
    const TensorId full = b.Input("a", {2, 4}, DataType::kBool), row = b.Input("row", {4}, DataType::kBool);
    const TensorId y = b.Op1(kind, "logic", kind == OpKind::kLogicalNot ? std::vector<TensorId>{full} : std::vector<TensorId>{full, row});
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    const std::uint8_t a[] = {0, 0, 1, 1, 0, 1, 0, 1}, r[] = {0, 1, 0, 1};
    const std::vector<std::uint8_t> got = RunBoolNode(*g, [&](TensorBuffers& buffers) {
      std::copy(std::begin(a), std::end(a), buffers.mutable_as<std::uint8_t>(full));
      if (kind != OpKind::kLogicalNot) std::copy(std::begin(r), std::end(r), buffers.mutable_as<std::uint8_t>(row));
    });
    ASSERT_EQ(got.size(), 8u);
    for (size_t i = 0; i < 8; ++i) {
      const bool p = a[i] != 0, q = r[i % 4] != 0;
      const bool want = kind == OpKind::kLogicalAnd ? (p && q) : kind == OpKind::kLogicalOr ? (p || q) : !p;
      EXPECT_EQ(got[i], want ? 1 : 0) << "element " << i;
    }
  }
  for (const char* approximate : {"none", "tanh"}) {
    GraphBuilder b;
    const TensorId y = b.Op1(OpKind::kGelu, "gelu", {b.Input("x", {3, 4})}, Attrs({{"approximate", std::string(approximate)}}));
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok());
    Floats want;
    for (float v : x)
      want.push_back(std::string(approximate) == "tanh"
                         ? 0.5f * v * (1.0f + std::tanh(0.7978845608f * (v + 0.044715f * v * v * v)))
                         : 0.5f * v * (1.0f + std::erf(v / std::sqrt(2.0f))));
    ExpectClose(RunOnOnednn(*g, {x}), want, std::string("gelu ") + approximate);
  }
}

}  // namespace
}  // namespace latte
