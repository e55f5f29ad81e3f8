// An fp32 model predicted as it would run in bfloat16 (a pack of precision bf16): lowered as the
// executor lowers it at --precision bf16 (bfloat16 between nodes, casts at the float32 input and
// output), each layer looked up among the pack's bf16 kernels, the casts layers of their own; and
// validate measures it at bf16, node for node as predicted.
#include <gtest/gtest.h>

#include <map>

#include "calibrate/validation.h"
#include "ir/graph_builder.h"
#include "predict/model_prediction.h"
#include "run/executor.h"
#include "run/onednn/onednn_backend.h"
#include "test_graphs.h"

namespace latte {
namespace {

using ::latte::testing::NhwcSameConvAttrs;

// x (1x8x8x4, NHWC) → conv 3x3 4→8 → sigmoid.
Graph ConvSigmoid() {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 8, 8, 4});
  std::vector<float> weights(8 * 3 * 3 * 4);
  for (std::size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<float>(i % 7) / 7.0f - 0.4f;
  TensorId w = b.Constant("w", {8, 3, 3, 4}, weights);
  TensorId c = b.Op1(OpKind::kConv2D, "conv", {x, w}, NhwcSameConvAttrs());
  TensorId s = b.Op1(OpKind::kSigmoid, "sigmoid", {c});
  auto graph = b.Finish({s});
  EXPECT_TRUE(graph.ok()) << graph.status().message();
  return std::move(graph).value();
}

// Known times by (op, dtype): every kernel of the lowered graph gets one, and the fp32 conv and
// sigmoid (which this model never runs at bf16) too, so that taking them would show.
double KnownMs(const Kernel& k) {
  static const std::map<std::pair<OpKind, DataType>, double> ms = {
      {{OpKind::kCast, DataType::kFloat32}, 0.01},     {{OpKind::kConv2D, DataType::kBFloat16}, 0.25},
      {{OpKind::kSigmoid, DataType::kBFloat16}, 0.0625}, {{OpKind::kCast, DataType::kBFloat16}, 0.02},
      {{OpKind::kConv2D, DataType::kFloat32}, 1.0},    {{OpKind::kSigmoid, DataType::kFloat32}, 1.0}};
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

Pack Bf16Pack() {
  Pack pack;
  pack.info.backend = "onednn";
  pack.info.backend_takes_nhwc = true;
  pack.info.threads = 1;
  pack.info.precision = "bf16";
  pack.info.device = {{"key", "test-cpu"}, {"description", "Test CPU"}};
  return pack;
}

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

TEST(Bf16Prediction, ValidateMeasuresTheModelAtBf16AsPredicted) {
  if (Support bf16 = OnednnBf16Support(); !bf16.ok())
    GTEST_SKIP() << "this CPU cannot run oneDNN's bf16 primitives: " << bf16.why();
  const Graph graph = ConvSigmoid();
  BackendRegistry registry;
  RegisterOnednnBackend(registry);
  auto plan = PlanGraphForPrediction(graph, Bf16Pack(), &registry);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const Pack pack = Bf16TablePack(*plan);
  BenchOptions options;
  options.measure.warmup_runs = 1;
  options.measure.num_runs = 3;
  options.measure.min_secs = 0;
  options.measure.min_warmup_secs = 0;
  options.measure.max_remeasures = 0;
  auto validated = ValidateModel(graph, "m", pack, options, registry);
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
