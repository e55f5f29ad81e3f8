// --precision bf16: the executor's lowering (bfloat16 between nodes, float32 at the graph's edges),
// oneDNN's bf16 conv and fully-connected against references computed here on bf16-rounded
// inputs, and the refusals that say why. The oneDNN runs skip, saying so, on a CPU without
// AVX-512 BF16.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "ir/graph_builder.h"
#include "ir/op_params.h"
#include "run/backend_test_util.h"
#include "run/executor.h"
#include "run/graph_prep.h"
#include "run/onednn/onednn_backend.h"
#include "run/reference_ops.h"
#include "run/xnnpack/xnnpack_backend.h"
#include "run/ort/ort_backend.h"

namespace latte {
namespace {

using reference::Floats;
using ::latte::testing::Attrs;
using ::latte::testing::Random;
using Ints = std::vector<std::int64_t>;

#define SKIP_WITHOUT_BF16()                                                              \
  do {                                                                                   \
    if (Support bf16 = OnednnBf16Support(); !bf16.ok())                                  \
      GTEST_SKIP() << "this CPU cannot run oneDNN's bf16 primitives: " << bf16.why();   \
  } while (0)

BackendRegistry Registry() {
  BackendRegistry registry;
  RegisterXnnpackBackend(registry);
  RegisterOnednnBackend(registry);
  RegisterOrtBackend(registry);
  return registry;
}

RunOptions Bf16() {
  RunOptions run;
  run.precision = Precision::kBf16;
  return run;
}

Floats RoundedToBf16(Floats v) {
  for (float& x : v) x = Bf16ToFloat(FloatToBf16(x));
  return v;
}
Floats Abs(Floats v) {
  for (float& x : v) x = std::abs(x);
  return v;
}

// Runs `graph` (one float32 input) on onednn at bf16 through the executor, as bench does.
Floats RunAtBf16(const Graph& graph, const Floats& input) {
  BackendRegistry registry = Registry();
  Placement placement;
  placement.default_backend = "onednn";
  auto executor = Executor::Create(graph, placement, registry, Bf16());
  if (!executor.ok()) {
    ADD_FAILURE() << executor.status().message();
    return {};
  }
  std::copy(input.begin(), input.end(), (*executor)->buffers().mutable_as<float>(graph.inputs[0]));
  if (Status s = (*executor)->Run(); !s.ok()) {
    ADD_FAILURE() << s.message();
    return {};
  }
  const TensorId out = graph.outputs[0];
  const float* data = (*executor)->buffers().as<float>(out);
  return Floats(data, data + (*executor)->buffers().bytes(out) / sizeof(float));
}

// Each output against the reference on bf16-rounded inputs and weights. Products of two bfloat16
// values are exact in float32 (8 + 8 significant bits), and the reference sums in double, so what
// separates the two is (1) oneDNN summing `terms` products in float32: at most terms·2^-24 of
// `magnitude`, the sum of the products' absolute values (the reference run on |x|, |w|, |bias|),
// and (2) its bfloat16 output: rounding to 8 significant bits moves a value by at most 2^-8 of it.
// Every output must also be a bfloat16 value: the result went through bf16, not float32.
void ExpectBf16Close(const Floats& got, const Floats& want, const Floats& magnitude, std::int64_t terms,
                     const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    const double sum_error = static_cast<double>(terms) * std::ldexp(1.0, -24) * magnitude[i];
    const double tolerance = std::ldexp(1.0, -8) * (std::abs(want[i]) + sum_error) + sum_error;
    ASSERT_LE(std::abs(static_cast<double>(got[i]) - want[i]), tolerance)
        << what << ": element " << i << " is " << got[i] << ", expected " << want[i];
    ASSERT_EQ(Bf16ToFloat(FloatToBf16(got[i])), got[i]) << what << ": element " << i << " is not a bfloat16 value";
  }
}

TEST(Bf16Lowering, CastsAtTheEdgesAndBfloat16Between) {
  // x → relu → r (also an output) → sigmoid → y
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 4});
  TensorId r = b.Op1(OpKind::kRelu, "relu", {x});
  TensorId y = b.Op1(OpKind::kSigmoid, "sigmoid", {r});
  auto g = b.Finish({r, y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  GraphPlan plan{*g, {{0}, {1}}};
  LowerPlanToBf16(plan);
  const Graph& lowered = plan.graph;
  ASSERT_TRUE(lowered.Validate().ok()) << lowered.Validate().message();
  // The caller's ids and types: float32 in and out.
  EXPECT_EQ(lowered.inputs, g->inputs);
  EXPECT_EQ(lowered.outputs, g->outputs);
  for (TensorId id : {x, r, y}) EXPECT_EQ(lowered.tensor(id).dtype, DataType::kFloat32) << id;
  // cast x, relu, cast r, sigmoid, cast y: each cast right after what it converts.
  ASSERT_EQ(lowered.num_nodes(), 5u);
  const OpKind kinds[] = {OpKind::kCast, OpKind::kRelu, OpKind::kCast, OpKind::kSigmoid, OpKind::kCast};
  for (NodeId k = 0; k < 5; ++k) EXPECT_EQ(lowered.node(k).kind, kinds[k]) << k;
  ASSERT_EQ(plan.sources.size(), 5u);
  EXPECT_TRUE(plan.sources[0].empty());
  EXPECT_EQ(plan.sources[1], std::vector<NodeId>{0});
  EXPECT_TRUE(plan.sources[2].empty());
  EXPECT_EQ(plan.sources[3], std::vector<NodeId>{1});
  EXPECT_TRUE(plan.sources[4].empty());
  EXPECT_EQ(lowered.node(0).inputs[0], x);
  EXPECT_EQ(lowered.node(0).attrs.GetString("to", ""), "bfloat16");
  EXPECT_EQ(lowered.node(4).attrs.GetString("to", ""), "float32");
  // Between nodes everything is bfloat16; sigmoid reads relu's bfloat16 twin, not the float32 output.
  for (NodeId k : {1, 3}) {
    EXPECT_EQ(lowered.tensor(lowered.node(k).inputs[0]).dtype, DataType::kBFloat16) << k;
    EXPECT_EQ(lowered.tensor(lowered.node(k).outputs[0]).dtype, DataType::kBFloat16) << k;
  }
  EXPECT_EQ(lowered.node(3).inputs[0], lowered.node(1).outputs[0]);
  EXPECT_EQ(lowered.node(2).outputs[0], r);
  EXPECT_EQ(lowered.node(4).outputs[0], y);
}

TEST(OnednnBf16, ConvMatchesReferenceOnRoundedInputs) {
  SKIP_WITHOUT_BF16();
  struct Case {
    Shape x;
    std::int64_t out_c, kernel, stride, groups;
    std::string activation;
    bool depthwise = false;
  };
  const Case cases[] = {
      {{1, 9, 11, 16}, 24, 3, 1, 1, "relu"},
      {{1, 12, 12, 32}, 16, 1, 2, 1, "none"},
      {{2, 7, 7, 8}, 8, 3, 1, 2, "relu6"},
      {{1, 10, 10, 24}, 24, 3, 2, 24, "none", true},
  };
  std::uint32_t seed = 11;
  for (const Case& c : cases) {
    const std::int64_t in_c = c.x[3], per_group = in_c / c.groups;
    GraphBuilder b;
    TensorId x = b.Input("x", c.x);
    const Shape w_shape = c.depthwise ? Shape{1, c.kernel, c.kernel, c.out_c} : Shape{c.out_c, c.kernel, c.kernel, per_group};
    Floats w = Random(reference::Product(w_shape), seed++), bias = Random(c.out_c, seed++);
    TensorId y = b.Op1(c.depthwise ? OpKind::kDepthwiseConv2D : OpKind::kConv2D, "conv",
                       {x, b.Constant("w", w_shape, w), b.Constant("b", {c.out_c}, bias)},
                       Attrs({{"filter_layout", std::string(c.depthwise ? "1HWO" : "OHWI")},
                              {"strides", Ints{c.stride, c.stride}}, {"padding", std::string("same")},
                              {"groups", c.groups}, {"activation", c.activation}, {"layout", std::string("NHWC")}}));
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    auto p = GetConvParams(*g, g->node(0));
    ASSERT_TRUE(p.ok()) << p.status().message();
    const Floats input = Random(reference::Product(c.x), seed++);
    // Weights and input rounded as the backend rounds them; the bias stays float32 (it does too).
    const Floats want = reference::Conv2D(RoundedToBf16(input), RoundedToBf16(w), bias, *p, c.depthwise);
    ConvParams plain = *p;
    plain.activation = "none";
    const Floats magnitude = reference::Conv2D(Abs(RoundedToBf16(input)), Abs(RoundedToBf16(w)), Abs(bias), plain, c.depthwise);
    ExpectBf16Close(RunAtBf16(*g, input), want, magnitude, c.kernel * c.kernel * per_group + 1,
                    ShapeToString(c.x) + " →" + std::to_string(c.out_c) + " k" + std::to_string(c.kernel) + " g" +
                        std::to_string(c.groups));
  }
}

TEST(OnednnBf16, FullyConnectedMatchesReferenceOnRoundedInputs) {
  SKIP_WITHOUT_BF16();
  const std::int64_t rows = 3, in = 200, out = 37;
  GraphBuilder b;
  TensorId x = b.Input("x", {rows, in});
  Floats w = Random(out * in, 5), bias = Random(out, 6);
  TensorId y = b.Op1(OpKind::kFullyConnected, "fc", {x, b.Constant("w", {out, in}, w), b.Constant("b", {out}, bias)},
                     Attrs({{"weights_layout", std::string("OI")}}));
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  const Floats input = Random(rows * in, 7);
  const Floats want = reference::FullyConnected(RoundedToBf16(input), RoundedToBf16(w), bias, rows, in, out, false);
  const Floats magnitude = reference::FullyConnected(Abs(RoundedToBf16(input)), Abs(RoundedToBf16(w)), Abs(bias), rows, in, out, false);
  ExpectBf16Close(RunAtBf16(*g, input), want, magnitude, in + 1, "fully_connected 3x200 → 37");
}

TEST(OnednnBf16, AKindWithoutABf16KernelIsRefusedSayingWhy) {
  SKIP_WITHOUT_BF16();
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 8, 8, 4});
  TensorId y = b.Op1(OpKind::kRound, "round", {x}, Attrs({{"layout", std::string("NHWC")}}));
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok());
  BackendRegistry registry = Registry();
  Placement placement;
  placement.default_backend = "onednn";
  // oneDNN 2.6's eltwise round is float32 only: at bf16 the node is refused by name, with why.
  auto executor = Executor::Create(*g, placement, registry, Bf16());
  ASSERT_FALSE(executor.ok());
  EXPECT_EQ(executor.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(executor.status().message().find("'round'"), std::string::npos) << executor.status().message();
  EXPECT_NE(executor.status().message().find("round unsupported at bf16, because oneDNN"), std::string::npos)
      << executor.status().message();
  // The same graph runs at fp32.
  EXPECT_TRUE(Executor::Create(*g, placement, registry, {}).ok());
}

TEST(Bf16, BackendsWithoutBf16SayWhy) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 8, 8, 4});
  TensorId y = b.Op1(OpKind::kRelu, "relu", {x}, Attrs({{"layout", std::string("NHWC")}}));
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok());
  BackendRegistry registry = Registry();
  for (const char* backend : {"xnnpack", "ort"}) {
    Placement placement;
    placement.default_backend = backend;
    auto executor = Executor::Create(*g, placement, registry, Bf16());
    ASSERT_FALSE(executor.ok()) << backend;
    EXPECT_EQ(executor.status().code(), StatusCode::kUnsupported) << backend;
    EXPECT_NE(executor.status().message().find("bf16 unsupported on " + std::string(backend) + ", because"),
              std::string::npos)
        << executor.status().message();
  }
}

}  // namespace
}  // namespace latte
