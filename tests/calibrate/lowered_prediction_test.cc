// An fp32 model predicted as it would run quantized (a pack of precision int8): lowered as the
// executor lowers it at --precision int8 (its backend saying which nodes run int8), without running
// it; the quantize and dequantize where int8 meets fp32 are layers of their own; a kind the backend
// keeps fp32 is predicted from the pack's fp32 entries, its row saying why. And one predicted as it
// would run in bfloat16 (a pack of precision bf16): lowered as the executor lowers it at
// --precision bf16 (bfloat16 between nodes, casts at the float32 input and output), each layer
// looked up among the pack's bf16 kernels, the casts layers of their own; validate measures it at
// bf16, node for node as predicted.
#include <gtest/gtest.h>

#include <map>

#include "calibrate/validation.h"
#include "ir/graph_builder.h"
#include "predict/model_prediction.h"
#include "run/executor.h"
#include "run/onednn/onednn_backend.h"
#include "run/xnnpack/xnnpack_backend.h"
#include "test_graphs.h"

namespace latte {
namespace {

using ::latte::testing::NhwcSameConvAttrs;

// A pack of `backend` (one that takes NHWC) at `precision` on the test CPU, with no kinds yet.
Pack EmptyPack(const std::string& backend, const std::string& precision) {
  Pack pack;
  pack.info.backend = backend;
  pack.info.backend_takes_nhwc = true;
  pack.info.threads = 1;
  pack.info.precision = precision;
  pack.info.device = {{"key", "test-cpu"}, {"description", "Test CPU"}};
  return pack;
}

// A validation's protocol cut short: a test checks what ran, not how fast.
BenchOptions ShortBench() {
  BenchOptions options;
  options.measure.warmup_runs = 1;
  options.measure.num_runs = 3;
  options.measure.min_secs = 0;
  options.measure.min_warmup_secs = 0;
  options.measure.max_remeasures = 0;
  return options;
}

// x (1x8x8x4, NHWC) → conv 3x3 4→8 → `after`.
Graph ConvThen(OpKind after, const std::string& name) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 8, 8, 4});
  std::vector<float> weights(8 * 3 * 3 * 4);
  for (std::size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<float>(i % 7) / 7.0f - 0.4f;
  TensorId w = b.Constant("w", {8, 3, 3, 4}, weights);
  TensorId c = b.Op1(OpKind::kConv2D, "conv", {x, w}, NhwcSameConvAttrs());
  TensorId y = b.Op1(after, name, {c});
  auto graph = b.Finish({y});
  EXPECT_TRUE(graph.ok()) << graph.status().message();
  return std::move(graph).value();
}

// XNNPACK runs the conv in int8 and has no int8 hard_swish, which stays fp32.
Graph ConvHardSwish() { return ConvThen(OpKind::kHardSwish, "hswish"); }

BackendRegistry Xnnpack() {
  BackendRegistry registry;
  RegisterXnnpackBackend(registry);
  return registry;
}

// Known times by (op, dtype): every kernel of the lowered graphs gets one, and an fp32 conv2d
// and sigmoid (which the models never run) one too, so that taking it for the int8 or bf16 kernel
// would show.
double KnownMs(const Kernel& k) {
  static const std::map<std::pair<OpKind, DataType>, double> ms = {
      {{OpKind::kQuantize, DataType::kFloat32}, 0.01},   {{OpKind::kConv2D, DataType::kInt8}, 0.25},
      {{OpKind::kDequantize, DataType::kInt8}, 0.02},    {{OpKind::kHardSwish, DataType::kFloat32}, 0.0625},
      {{OpKind::kConv2D, DataType::kFloat32}, 1.0},      {{OpKind::kSigmoid, DataType::kFloat32}, 1.0},
      {{OpKind::kCast, DataType::kFloat32}, 0.01},       {{OpKind::kConv2D, DataType::kBFloat16}, 0.25},
      {{OpKind::kSigmoid, DataType::kBFloat16}, 0.0625}, {{OpKind::kCast, DataType::kBFloat16}, 0.02}};
  auto it = ms.find({k.op, k.dtype});
  return it == ms.end() ? 0 : it->second;
}

void AddTableEntry(Pack& pack, const Kernel& kernel, double ms) {
  KindModel& model = pack.kinds[ModelKind(kernel)];
  model.kind = ModelKind(kernel);
  model.samples = 1;
  model.ranges.Extend(kernel, 1);
  model.table = std::move(MakePredictor("table", {})).value();
  TrainingSample sample{kernel, 1, ms, ms / 10};
  ASSERT_TRUE(model.table->Fit({&sample, 1}).ok());
}

// An int8 xnnpack pack whose tables hold every kernel of `plan` (lowered) at KnownMs, plus the
// fp32 form of its int8 convs.
Pack Int8TablePack(const GraphPlan& lowered) {
  Pack pack = EmptyPack("xnnpack", "int8");
  auto grouping = GroupIntoKernels(lowered.graph, *FusionRules::FromKinds({}));
  EXPECT_TRUE(grouping.ok());
  for (const KernelGroup& group : grouping->kernels) {
    AddTableEntry(pack, group.kernel, KnownMs(group.kernel));
    if (group.kernel.dtype == DataType::kInt8 && group.kernel.op == OpKind::kConv2D) {
      Kernel fp32 = group.kernel;
      fp32.dtype = DataType::kFloat32;
      AddTableEntry(pack, fp32, KnownMs(fp32));
    }
  }
  return pack;
}

// The pack's lowering without its tables: what Int8TablePack is made from.
GraphPlan Lowered(const Graph& graph, const BackendRegistry& registry) {
  auto plan = PlanGraphForPrediction(graph, EmptyPack("xnnpack", "int8"), &registry);
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  return std::move(plan).value();
}

// ConvHardSwish predicted with Int8TablePack, its layers named by the user's nodes.
ModelPrediction PredictedConvHardSwish() {
  const Graph graph = ConvHardSwish();
  const BackendRegistry registry = Xnnpack();
  const GraphPlan plan = Lowered(graph, registry);
  auto predicted = PredictModel(plan.graph, Int8TablePack(plan));
  EXPECT_TRUE(predicted.ok()) << predicted.status().message();
  if (!predicted.ok()) return {};
  NameUserNodes(plan, graph, *predicted);
  return std::move(predicted).value();
}

TEST(Int8Prediction, TheTotalIsTheKnownSumWithTheConversions) {
  const ModelPrediction predicted = PredictedConvHardSwish();
  // quantize x → conv (int8) → dequantize → hard_swish (fp32), in the order they run.
  ASSERT_EQ(predicted.layers.size(), 4u);
  EXPECT_EQ(ModelKind(predicted.layers[0].kernel), "quantize");
  EXPECT_EQ(ModelKind(predicted.layers[1].kernel), "conv2d|int8");
  EXPECT_EQ(ModelKind(predicted.layers[2].kernel), "dequantize|int8");
  EXPECT_EQ(ModelKind(predicted.layers[3].kernel), "hard_swish");
  EXPECT_DOUBLE_EQ(predicted.total_ms, 0.01 + 0.25 + 0.02 + 0.0625);  // not the fp32 conv's 1.0
  EXPECT_TRUE(predicted.uncovered.empty());
  EXPECT_EQ(predicted.covered_nodes, 2u);  // the user's conv and hard_swish
  EXPECT_EQ(predicted.layers[1].names, (std::vector<std::string>{"conv"}));
  EXPECT_EQ(predicted.layers[0].names, (std::vector<std::string>{"x/quantize"}));
}

TEST(Int8Prediction, AKindTheBackendKeepsFp32SaysSoAndWhy) {
  const ModelPrediction predicted = PredictedConvHardSwish();
  for (std::size_t i = 0; i < 3; ++i) EXPECT_TRUE(predicted.layers[i].int8) << i;  // conversions included
  const LayerPrediction& kept = predicted.layers[3];
  EXPECT_FALSE(kept.int8);
  EXPECT_EQ(kept.kernel.dtype, DataType::kFloat32);
  EXPECT_NE(kept.fp32_why.find("xnnpack has no int8 hard_swish"), std::string::npos) << kept.fp32_why;
}

// The prediction's lowering is the executor's: the same nodes, each at the same precision.
TEST(Int8Prediction, LowersAsTheExecutorDoesWithoutRunningTheModel) {
  const Graph graph = ConvHardSwish();
  const BackendRegistry registry = Xnnpack();
  const GraphPlan plan = Lowered(graph, registry);
  RunOptions run;
  run.precision = Precision::kInt8;
  Placement placement;
  placement.default_backend = "xnnpack";
  auto executor = Executor::Create(graph, placement, registry, run);
  ASSERT_TRUE(executor.ok()) << executor.status().message();
  const std::vector<ProfileEntry>& entries = (*executor)->entries();
  ASSERT_EQ(entries.size(), plan.graph.num_nodes());
  for (std::size_t k = 0; k < entries.size(); ++k) {
    EXPECT_EQ(entries[k].op, NodeOpName(plan.graph.node(static_cast<NodeId>(k)))) << k;
    EXPECT_EQ(entries[k].precision == Precision::kInt8, plan.fp32_why[k].empty()) << k << " " << entries[k].op;
  }
}

TEST(Int8Prediction, AnInt8PackNeedsItsBackendToLowerTheModel) {
  const Graph graph = ConvHardSwish();
  Pack pack;
  pack.info.backend = "xnnpack";
  pack.info.precision = "int8";
  auto refused = PlanGraphForPrediction(graph, pack);  // no registry: it cannot say what runs int8
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(refused.status().message().find("a pack of precision int8"), std::string::npos) << refused.status().message();
  // An fp32 pack plans as before, with no precision per node.
  pack.info.precision = "fp32";
  auto fp32 = PlanGraphForPrediction(graph, pack);
  ASSERT_TRUE(fp32.ok()) << fp32.status().message();
  EXPECT_TRUE(fp32->fp32_why.empty());
  EXPECT_EQ(fp32->graph.num_nodes(), 2u);
}

TEST(Int8Prediction, ValidateMeasuresTheModelAtInt8) {
  const Graph graph = ConvHardSwish();
  const BackendRegistry registry = Xnnpack();
  const Pack pack = Int8TablePack(Lowered(graph, registry));
  auto validated = ValidateModel(graph, "m", pack, ShortBench(), registry);
  ASSERT_TRUE(validated.ok()) << validated.status().message();
  EXPECT_EQ(validated->bench.entries.size(), 4u);  // quantize, conv, dequantize, hard_swish
  EXPECT_EQ(validated->bench.entries[1].precision, Precision::kInt8);
  EXPECT_EQ(validated->bench.entries[3].precision, Precision::kFp32);
  EXPECT_DOUBLE_EQ(validated->predicted_ms, 0.01 + 0.25 + 0.02 + 0.0625);
  EXPECT_EQ(validated->layers.size(), 4u);
}

// x → conv → sigmoid, which oneDNN runs all in bf16.
Graph ConvSigmoid() { return ConvThen(OpKind::kSigmoid, "sigmoid"); }

Pack Bf16Pack() { return EmptyPack("onednn", "bf16"); }

// A bf16 pack whose tables hold every kernel of the lowered graph at KnownMs, and their fp32 forms.
Pack Bf16TablePack(const GraphPlan& lowered) {
  Pack pack = Bf16Pack();
  auto grouping = GroupIntoKernels(lowered.graph, *FusionRules::FromKinds({}));
  EXPECT_TRUE(grouping.ok());
  for (const KernelGroup& group : grouping->kernels) {
    AddTableEntry(pack, group.kernel, KnownMs(group.kernel));
    if (group.kernel.dtype == DataType::kBFloat16 && group.kernel.op != OpKind::kCast) {
      Kernel fp32 = group.kernel;
      fp32.dtype = DataType::kFloat32;
      AddTableEntry(pack, fp32, KnownMs(fp32));
    }
  }
  return pack;
}

TEST(Bf16Prediction, TheTotalIsTheKnownSumWithTheCasts) {
  const Graph graph = ConvSigmoid();
  auto plan = PlanGraphForPrediction(graph, Bf16Pack());  // no backend needed: every backend lowers alike
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  auto predicted = PredictModel(plan->graph, Bf16TablePack(*plan));
  ASSERT_TRUE(predicted.ok()) << predicted.status().message();
  NameUserNodes(*plan, graph, *predicted);
  // cast x → conv (bf16) → sigmoid (bf16) → cast to float32, in the order they run.
  ASSERT_EQ(predicted->layers.size(), 4u);
  EXPECT_EQ(ModelKind(predicted->layers[0].kernel), "cast");
  EXPECT_EQ(ModelKind(predicted->layers[1].kernel), "conv2d|bf16");
  EXPECT_EQ(ModelKind(predicted->layers[2].kernel), "sigmoid|bf16");
  EXPECT_EQ(ModelKind(predicted->layers[3].kernel), "cast|bf16");
  EXPECT_DOUBLE_EQ(predicted->total_ms, 0.01 + 0.25 + 0.0625 + 0.02);  // not the fp32 kernels' 1.0
  EXPECT_TRUE(predicted->uncovered.empty());
  EXPECT_EQ(predicted->covered_nodes, 2u);  // the user's conv and sigmoid
  EXPECT_EQ(predicted->layers[1].names, (std::vector<std::string>{"conv"}));
}

// A scale written before the map it multiplies (PaddleOCR's `Mul(w, x)`): the kernel runs on the
// bf16 activation, so it is a bf16 mul, not an fp32 one because its float32 constant comes first.
TEST(Bf16Prediction, AMulWithItsConstantFirstIsKeyedByItsActivation) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 8, 8, 4});
  TensorId c = b.Op1(OpKind::kConv2D, "conv", {x, b.Constant("w", {8, 3, 3, 4})}, NhwcSameConvAttrs());
  TensorId y = b.Op1(OpKind::kMul, "scale", {b.Constant("s", {1}, {0.5f}), c});
  auto graph = b.Finish({y});
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  auto plan = PlanGraphForPrediction(*graph, Bf16Pack());
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  auto grouping = GroupIntoKernels(plan->graph, *FusionRules::FromKinds({}));
  ASSERT_TRUE(grouping.ok()) << grouping.status().message();
  std::vector<std::string> kinds;
  for (const KernelGroup& group : grouping->kernels) kinds.push_back(ModelKind(group.kernel));
  EXPECT_EQ(kinds, (std::vector<std::string>{"cast", "conv2d|bf16", "mul|bf16", "cast|bf16"}));
}

TEST(Bf16Prediction, ValidateMeasuresTheModelAtBf16AsPredicted) {
  if (Support bf16 = OnednnBf16Support(); !bf16.ok())
    GTEST_SKIP() << "this CPU cannot run oneDNN's bf16 primitives: " << bf16.why();
  const Graph graph = ConvSigmoid();
  BackendRegistry registry;
  RegisterOnednnBackend(registry);
  auto plan = PlanGraphForPrediction(graph, Bf16Pack(), &registry);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const Pack pack = Bf16TablePack(*plan);
  auto validated = ValidateModel(graph, "m", pack, ShortBench(), registry);
  ASSERT_TRUE(validated.ok()) << validated.status().message();
  ASSERT_EQ(validated->bench.entries.size(), 4u);  // cast, conv, sigmoid, cast
  EXPECT_TRUE(validated->bench.entries[0].inserted);
  EXPECT_EQ(validated->bench.entries[0].op, "cast");
  EXPECT_EQ(validated->bench.entries[1].op, NodeOpName(plan->graph.node(1)));
  EXPECT_TRUE(validated->bench.entries[3].inserted);
  EXPECT_DOUBLE_EQ(validated->predicted_ms, 0.01 + 0.25 + 0.0625 + 0.02);
  EXPECT_EQ(validated->layers.size(), 4u);
  for (const LayerComparison& layer : validated->layers) EXPECT_GT(layer.measured_ms, 0) << layer.layer;
}

}  // namespace
}  // namespace latte
