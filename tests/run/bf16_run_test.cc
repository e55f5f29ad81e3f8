// --precision bf16: the executor's lowering (bfloat16 between nodes, float32 at the graph's edges),
// oneDNN's bf16 conv and fully-connected against references computed here on bf16-rounded
// inputs, the refusals that say why, and the output drift the benchmark reports against fp32.
// The oneDNN runs skip, saying so, on a CPU without AVX-512 BF16.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "ir/graph_builder.h"
#include "ir/op_params.h"
#include "run/backend_test_util.h"
#include "run/benchmark.h"
#include "run/executor.h"
#include "run/graph_prep.h"
#include "run/onednn/onednn_backend.h"
#include "run/output_drift.h"
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
// `rounded_twice`: the result went through bfloat16 once more before the last step (a transposed
// conv's bare result, then its bias added), which may move it by 2^-8 of `magnitude` more.
void ExpectBf16Close(const Floats& got, const Floats& want, const Floats& magnitude, std::int64_t terms,
                     const std::string& what, bool rounded_twice = false) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    const double sum_error = static_cast<double>(terms) * std::ldexp(1.0, -24) * magnitude[i];
    const double tolerance = std::ldexp(1.0, -8) * (std::abs(want[i]) + sum_error + (rounded_twice ? magnitude[i] : 0.0)) +
                             (rounded_twice ? 2 : 1) * sum_error;
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

TEST(OutputDrift, KnownDifferencesAndCosines) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 4});
  TensorId y = b.Op1(OpKind::kRelu, "relu", {x});
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok());
  auto reference = TensorBuffers::Allocate(*g), run = TensorBuffers::Allocate(*g);
  ASSERT_TRUE(reference.ok() && run.ok());
  const float a[4] = {1, 2, 3, 4}, same[4] = {1, 2, 3, 4}, off[4] = {1, 2, 3.5f, 4}, opposite[4] = {-1, -2, -3, -4};
  auto compare = [&](const float* want, const float* got) {
    std::memcpy(reference->mutable_data(y), want, sizeof a);
    std::memcpy(run->mutable_data(y), got, sizeof a);
    auto drift = CompareOutputs(*g, *reference, *run, "fp32");
    EXPECT_TRUE(drift.ok()) << drift.status().message();
    return drift.ok() ? *drift : RunDrift{};
  };
  RunDrift d = compare(a, same);
  ASSERT_EQ(d.outputs.size(), 1u);
  EXPECT_EQ(d.max_abs_diff, 0.0);
  EXPECT_DOUBLE_EQ(d.cosine, 1.0);
  // Equal outputs are exactly 1, whatever rounding the dot product and norms would give.
  const float uneven[4] = {0.1f, 0.7f, 1.3f, 2.9f};
  EXPECT_EQ(compare(uneven, uneven).cosine, 1.0);
  d = compare(a, off);
  EXPECT_DOUBLE_EQ(d.max_abs_diff, 0.5);
  // (1 + 4 + 10.5 + 16) / (√30 · √33.25)
  EXPECT_NEAR(d.cosine, 31.5 / (std::sqrt(30.0) * std::sqrt(33.25)), 1e-12);
  d = compare(a, opposite);
  EXPECT_DOUBLE_EQ(d.max_abs_diff, 8.0);
  EXPECT_NEAR(d.cosine, -1.0, 1e-12);
  const float nan = std::nanf(""), with_nan[4] = {1, 2, nan, 4};
  d = compare(a, with_nan);  // the NaN is counted, not folded into the figures
  EXPECT_EQ(d.nonfinite_mismatches, 1);
  EXPECT_EQ(d.max_abs_diff, 0.0);
  // JSON round trip.
  RunDrift back = RunDriftFromJson(RunDriftToJson(d));
  EXPECT_TRUE(back.measured);
  EXPECT_EQ(back.nonfinite_mismatches, 1);
  ASSERT_EQ(back.outputs.size(), 1u);
  EXPECT_EQ(back.outputs[0].name, d.outputs[0].name);
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

// A transposed conv at bf16 runs bare on oneDNN, then a binary add of its bias carrying the
// activation (oneDNN 2.6 adds a deconvolution's bias and post-ops in a slow generic loop): the
// bias and the activation are there, with and without a bias. Its output goes through bfloat16
// twice when it has a bias (the bare result, then the sum).
TEST(OnednnBf16, TransposeConvMatchesReferenceWithAndWithoutBias) {
  SKIP_WITHOUT_BF16();
  struct Case {
    Shape x;
    std::int64_t out_c, kernel, stride;
    std::string padding, activation;
    bool bias;
  };
  const Case cases[] = {
      {{1, 6, 6, 24}, 24, 2, 2, "valid", "relu", true},
      {{1, 5, 7, 16}, 8, 3, 2, "same", "none", true},
      {{1, 6, 6, 24}, 1, 2, 2, "valid", "none", false},
      {{1, 4, 4, 8}, 16, 3, 1, "valid", "relu6", false},
      {{1, 3, 3, 4}, 3, 3, 1, "valid", "relu", true},  // 5×5×3 values: rows of 3 channels, not 16
  };
  std::uint32_t seed = 31;
  for (const Case& c : cases) {
    GraphBuilder b;
    TensorId x = b.Input("x", c.x);
    const Shape w_shape{c.out_c, c.kernel, c.kernel, c.x[3]};
    Floats w = Random(reference::Product(w_shape), seed++), bias = c.bias ? Random(c.out_c, seed++) : Floats{};
    std::vector<TensorId> inputs = {x, b.Constant("w", w_shape, w)};
    if (c.bias) inputs.push_back(b.Constant("b", {c.out_c}, bias));
    TensorId y = b.Op1(OpKind::kTransposeConv2D, "tconv", inputs,
                       Attrs({{"filter_layout", std::string("OHWI")}, {"strides", Ints{c.stride, c.stride}},
                              {"padding", c.padding}, {"activation", c.activation}}));
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    auto p = GetConvParams(*g, g->node(0));
    ASSERT_TRUE(p.ok()) << p.status().message();
    const Floats input = Random(reference::Product(c.x), seed++);
    const Floats want = reference::TransposeConv2D(RoundedToBf16(input), RoundedToBf16(w), bias, *p);
    ConvParams plain = *p;
    plain.activation = "none";
    const Floats magnitude = reference::TransposeConv2D(Abs(RoundedToBf16(input)), Abs(RoundedToBf16(w)), Abs(bias), plain);
    ExpectBf16Close(RunAtBf16(*g, input), want, magnitude, c.kernel * c.kernel * c.x[3] + 1,
                    ShapeToString(c.x) + " →" + std::to_string(c.out_c) + " k" + std::to_string(c.kernel) + " " +
                        c.activation + (c.bias ? " with a bias" : ""),
                    /*rounded_twice=*/c.bias);
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

// A small conv network (the shape of a MobileNet block) for the benchmark's drift.
Graph SmallConvNet() {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 24, 24, 8});
  auto nhwc = [](Attributes a) {
    a.Set("layout", std::string("NHWC"));
    return a;
  };
  TensorId c1 = b.Op1(OpKind::kConv2D, "expand",
                      {x, b.Constant("w1", {32, 3, 3, 8}, Random(32 * 9 * 8, 21, -0.3f, 0.3f)),
                       b.Constant("b1", {32}, Random(32, 22, -0.1f, 0.1f))},
                      nhwc(Attrs({{"filter_layout", std::string("OHWI")}, {"strides", Ints{1, 1}},
                                  {"padding", std::string("same")}, {"activation", std::string("relu6")}})));
  TensorId d1 = b.Op1(OpKind::kDepthwiseConv2D, "depthwise",
                      {c1, b.Constant("w2", {1, 3, 3, 32}, Random(9 * 32, 23, -0.5f, 0.5f)),
                       b.Constant("b2", {32}, Random(32, 24, -0.1f, 0.1f))},
                      nhwc(Attrs({{"filter_layout", std::string("1HWO")}, {"strides", Ints{2, 2}},
                                  {"padding", std::string("same")}, {"groups", std::int64_t{32}},
                                  {"activation", std::string("relu6")}})));
  TensorId c2 = b.Op1(OpKind::kConv2D, "project",
                      {d1, b.Constant("w3", {16, 1, 1, 32}, Random(16 * 32, 25, -0.3f, 0.3f)),
                       b.Constant("b3", {16}, Random(16, 26, -0.1f, 0.1f))},
                      nhwc(Attrs({{"filter_layout", std::string("OHWI")}, {"strides", Ints{1, 1}},
                                  {"padding", std::string("valid")}})));
  TensorId pool = b.Op1(OpKind::kGlobalAvgPool, "pool", {c2}, nhwc({}));
  TensorId flat = b.Op1(OpKind::kReshape, "flatten", {pool, b.ConstantInts("shape", {1, 16})});
  TensorId fc = b.Op1(OpKind::kFullyConnected, "classifier",
                      {flat, b.Constant("w4", {10, 16}, Random(160, 27)), b.Constant("b4", {10}, Random(10, 28))},
                      Attrs({{"weights_layout", std::string("OI")}}));
  auto g = b.Finish({fc, c2});  // two outputs: the logits and the feature map
  EXPECT_TRUE(g.ok()) << g.status().message();
  return g.ok() ? *g : Graph{};
}

TEST(OnednnBf16, BenchmarkReportsDriftAgainstFp32) {
  SKIP_WITHOUT_BF16();
  const Graph graph = SmallConvNet();
  BackendRegistry registry = Registry();
  BenchOptions options;
  options.placement.default_backend = "onednn";
  options.measure.warmup_runs = 1;
  options.measure.num_runs = 2;
  options.measure.min_secs = 0;
  options.run.precision = Precision::kBf16;
  auto bf16 = BenchmarkGraph(graph, options, registry);
  ASSERT_TRUE(bf16.ok()) << bf16.status().message();
  ASSERT_TRUE(bf16->drift.measured) << bf16->drift.why;
  EXPECT_EQ(bf16->drift.reference, "fp32");
  ASSERT_EQ(bf16->drift.outputs.size(), 2u);
  // bf16 keeps 8 significant bits: outputs differ from fp32, but point the same way.
  EXPECT_GT(bf16->drift.max_abs_diff, 0.0);
  EXPECT_LT(bf16->drift.max_abs_diff, 0.1);
  EXPECT_GE(bf16->drift.cosine, 0.99);
  EXPECT_LE(bf16->drift.cosine, 1.0);
  EXPECT_EQ(bf16->drift.nonfinite_mismatches, 0);
  // The casts at the edges are the profile's inserted nodes, one per float32 input and output.
  std::size_t casts = 0;
  for (const ProfileEntry& e : bf16->entries) casts += e.inserted && e.op == "cast";
  EXPECT_EQ(casts, 3u);

  options.run.precision = Precision::kFp32;
  auto fp32 = BenchmarkGraph(graph, options, registry);
  ASSERT_TRUE(fp32.ok()) << fp32.status().message();
  ASSERT_TRUE(fp32->drift.measured) << fp32->drift.why;
  EXPECT_EQ(fp32->drift.max_abs_diff, 0.0);
  EXPECT_EQ(fp32->drift.cosine, 1.0);
}

}  // namespace
}  // namespace latte
