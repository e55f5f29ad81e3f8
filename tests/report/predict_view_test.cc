// A whole model predicted from a pack: kernels from the fusion rules, the sum, the coverage, and
// the three report formats.
#include "predict/model_prediction.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ir/graph_builder.h"
#include "report/predict_view.h"
#include "test_graphs.h"

namespace latte {
namespace {

Graph TestGraph() { return testing::ConvReluAddSigmoidFoo(); }

// A pack whose table holds conv2d+relu at 0.5 ms and add at 0.125 ms (and nothing for sigmoid).
Pack TablePack(const Graph& graph) {
  Pack pack;
  pack.info.backend = "xnnpack";
  pack.info.threads = 1;
  pack.info.fusion_rules = {"conv2d+relu"};
  pack.info.device = {{"key", "test-cpu"}, {"description", "Test CPU"}};
  auto grouping = GroupIntoKernels(graph, *FusionRules::FromKinds(pack.info.fusion_rules));
  EXPECT_TRUE(grouping.ok());
  for (const KernelGroup& group : grouping->kernels) {
    double ms = group.kernel.op == OpKind::kConv2D ? 0.5 : group.kernel.op == OpKind::kAdd ? 0.125 : 0;
    if (ms == 0) continue;
    KindModel& model = pack.kinds[group.kernel.Kind()];
    model.kind = group.kernel.Kind();
    model.samples = 1;
    model.ranges.Extend(group.kernel, 1);
    model.table = std::move(MakePredictor("table", {})).value();
    TrainingSample sample{group.kernel, 1, ms, ms / 10};
    EXPECT_TRUE(model.table->Fit({&sample, 1}).ok());
  }
  return pack;
}

TEST(ModelPredictionTest, SumsTableHitsAndListsWhatItCannotPredict) {
  Graph graph = TestGraph();
  Pack pack = TablePack(graph);
  auto predicted = PredictModel(graph, pack);
  ASSERT_TRUE(predicted.ok()) << predicted.status().message();
  ASSERT_EQ(predicted->layers.size(), 2u);
  EXPECT_EQ(predicted->layers[0].kernel.Kind(), "conv2d+relu");
  EXPECT_EQ(predicted->layers[0].nodes.size(), 2u);  // conv and its relu: one kernel
  EXPECT_EQ(predicted->layers[0].prediction.source, PredictionSource::kTableHit);
  EXPECT_DOUBLE_EQ(predicted->layers[0].prediction.ms, 0.5);
  EXPECT_EQ(predicted->layers[1].kernel.Kind(), "add");
  EXPECT_DOUBLE_EQ(predicted->total_ms, 0.625);
  // The kernels' spreads (a tenth of each: 0.05 + 0.0125) are the only uncertainty this pack knows.
  EXPECT_DOUBLE_EQ(predicted->uncertainty.kernels_sd_ms, 0.0625);
  EXPECT_EQ(predicted->uncertainty.context_sd_ms, 0);
  EXPECT_EQ(predicted->uncertainty.machine_sd_ms, 0);
  EXPECT_DOUBLE_EQ(predicted->interval_lo_ms, 0.625 - 1.645 * 0.0625);
  EXPECT_DOUBLE_EQ(predicted->interval_hi_ms, 0.625 + 1.645 * 0.0625);
  EXPECT_EQ(predicted->covered_nodes, 3u);
  EXPECT_EQ(predicted->total_nodes, 5u);
  ASSERT_EQ(predicted->uncovered.size(), 2u);
  // sigmoid: the pack has no model for it; Foo: Latte does not know the op.
  std::string whys = predicted->uncovered[0].op + ": " + predicted->uncovered[0].why + " | " +
                     predicted->uncovered[1].op + ": " + predicted->uncovered[1].why;
  EXPECT_NE(whys.find("sigmoid: "), std::string::npos) << whys;
  EXPECT_NE(whys.find("Foo: "), std::string::npos) << whys;
  EXPECT_NE(whys.find("custom op 'Foo'"), std::string::npos) << whys;
  EXPECT_EQ(predicted->ms_by_source.at("table"), 0.625);
}

// A pack calibrated on networks (predicted / measured 0.91–1.09 from its predictors, 0.95–1.05
// from measured layers) puts the measured time between total / hi and total / lo, mixed by the
// share of table hits: here all of it, then none.
TEST(ModelPredictionTest, ACalibratedIntervalComesFromTheNetworksRatiosMixedByTableShare) {
  Graph graph = TestGraph();
  Pack pack = TablePack(graph);
  pack.interval = NetworkInterval{40, 0, 0.91, 1.09, 0.95, 1.05};
  auto predicted = PredictModel(graph, pack);
  ASSERT_TRUE(predicted.ok()) << predicted.status().message();
  EXPECT_DOUBLE_EQ(predicted->total_ms, 0.625);
  EXPECT_DOUBLE_EQ(predicted->interval_lo_ms, 0.625 / 1.05);
  EXPECT_DOUBLE_EQ(predicted->interval_hi_ms, 0.625 / 0.95);
  EXPECT_EQ(predicted->uncertainty.calibrated_networks, 40u);
  const std::string text = PredictView(graph, *predicted, pack, "test.tflite", "").Text();
  EXPECT_NE(text.find("bounds 90% of 40 random networks"), std::string::npos) << text;
  EXPECT_NE(text.find("not in the interval, uncertainty, one standard deviation each"), std::string::npos) << text;
  // A quarter of the time from fitted predictors: the ratios a quarter of the way to theirs.
  const auto [lo, hi] = pack.interval->Around(0.625, 0.75);
  EXPECT_DOUBLE_EQ(lo, 0.625 / (0.75 * 1.05 + 0.25 * 1.09));
  EXPECT_DOUBLE_EQ(hi, 0.625 / (0.75 * 0.95 + 0.25 * 0.91));
}

TEST(ModelPredictionTest, ViewsCarryTotalsLayersAndCoverage) {
  Graph graph = TestGraph();
  Pack pack = TablePack(graph);
  auto predicted = PredictModel(graph, pack);
  ASSERT_TRUE(predicted.ok());
  PredictView view(graph, *predicted, pack, "test.tflite", "");

  nlohmann::json json = view.Json();
  EXPECT_DOUBLE_EQ(json["total_ms"].get<double>(), 0.625);
  EXPECT_EQ(json["interval_ms"].size(), 2u);
  ASSERT_EQ(json["layers"].size(), 2u);
  EXPECT_EQ(json["layers"][0]["nodes"], nlohmann::json::array({"conv", "relu"}));
  EXPECT_EQ(json["layers"][0]["kernel"], "conv2d+relu");
  EXPECT_EQ(json["layers"][0]["source"], "table");
  EXPECT_EQ(json["coverage"]["covered_nodes"], 3);
  ASSERT_EQ(json["coverage"]["uncovered"].size(), 2u);
  EXPECT_EQ(json["coverage"]["uncovered"][1]["node"], "foo");

  std::string text = view.Text();
  EXPECT_NE(text.find("total: 0.625 ms (90% interval 0.522 – 0.728 ms) over 2 kernels"), std::string::npos) << text;
  EXPECT_NE(text.find("uncertainty, one standard deviation each: kernels ±0.062 ms, in-graph context none (no model), "
                      "this machine's drift unknown"),
            std::string::npos)
      << text;
  EXPECT_DOUBLE_EQ(json["interval_level"].get<double>(), 0.9);
  EXPECT_FALSE(json["uncertainty"]["machine_known"].get<bool>());
  EXPECT_NE(text.find("coverage: 3 of 5 nodes predicted; 2 node(s) NOT predicted and NOT in the total"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("3x3 s1 4→8 @8x8"), std::string::npos) << text;

  std::string csv = view.Csv();
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "name,kernel_size,filter_size,input_channel,input_h,input_w,stride,estimated latency,"
            "kernel,geometry,spread_ms,source,outside_training_range,nodes,context_ms");
  EXPECT_NE(csv.find("\nconv,3,8,4,8,8,1,0.500000,conv2d+relu,"), std::string::npos) << csv;
  EXPECT_NE(csv.find("\nfoo,,,,,,,,Foo,,,not predicted: custom op 'Foo',,1,\n"), std::string::npos) << csv;
  EXPECT_NE(text.find("in graph: the pack has no context model"), std::string::npos) << text;
  EXPECT_TRUE(json["context"].is_null());
}

// A context model of 10% of the time alone and nothing per byte, its held-out error on networks 4%.
ContextModel TenPercentContext() {
  ContextModel context;
  context.share = 0.1;
  context.l2_bytes = 1 << 20;
  context.l3_bytes = 16 << 20;
  context.graphs = 12;
  context.cv_alone_rmspe_pct = 9;
  context.cv_rmspe_pct = 4;
  return context;
}

// Every predicted layer costs 10% more in the graph, uncovered ones still nothing.
TEST(ModelPredictionTest, AContextModelAddsEachLayersInGraphCostAndSaysSo) {
  Graph graph = TestGraph();
  Pack pack = TablePack(graph);
  pack.context = TenPercentContext();
  auto predicted = PredictModel(graph, pack);
  ASSERT_TRUE(predicted.ok()) << predicted.status().message();
  ASSERT_EQ(predicted->layers.size(), 2u);
  EXPECT_DOUBLE_EQ(predicted->layers[0].prediction.ms, 0.5);  // the kernel alone is unchanged
  EXPECT_DOUBLE_EQ(predicted->layers[0].context_ms, 0.05);
  EXPECT_DOUBLE_EQ(predicted->layers[0].ms(), 0.55);
  EXPECT_DOUBLE_EQ(predicted->layers[1].context_ms, 0.0125);
  EXPECT_DOUBLE_EQ(predicted->context_ms, 0.0625);
  EXPECT_DOUBLE_EQ(predicted->total_ms, 0.6875);
  EXPECT_TRUE(predicted->context_applied);
  EXPECT_DOUBLE_EQ(predicted->ms_by_source.at("in-graph context"), 0.0625);

  PredictView view(graph, *predicted, pack, "test.tflite", "");
  const std::string text = view.Text();
  EXPECT_NE(text.find("of which in graph"), std::string::npos) << text;
  EXPECT_NE(text.find("in graph: +0.062 ms beyond the kernels alone (10.0% of the time alone"), std::string::npos) << text;
  EXPECT_NE(text.find("fitted on 12 random CNN networks, held-out error 9.0% → 4.0%"), std::string::npos) << text;
  const nlohmann::json json = view.Json();
  EXPECT_DOUBLE_EQ(json["layers"][0]["predicted_ms"].get<double>(), 0.55);
  EXPECT_DOUBLE_EQ(json["layers"][0]["kernel_ms"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(json["layers"][0]["context_ms"].get<double>(), 0.05);
  EXPECT_DOUBLE_EQ(json["context_ms"].get<double>(), 0.0625);
  EXPECT_DOUBLE_EQ(json["context"]["share"].get<double>(), 0.1);
  EXPECT_NE(view.Csv().find("\nconv,3,8,4,8,8,1,0.550000,conv2d+relu,"), std::string::npos) << view.Csv();
}

// A model with attention (a matmul of two activations) takes the context and interval the pack
// fitted on transformer encoders; a model without takes the CNN networks' even when the pack has both.
TEST(ModelPredictionTest, AModelWithAttentionTakesTheTransformerEncodersContext) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 8, 8});
  TensorId y = b.Input("y", {1, 8, 8});
  TensorId scores = b.Op1(OpKind::kMatMul, "scores", {x, y});
  auto attention = b.Finish({scores});
  ASSERT_TRUE(attention.ok()) << attention.status().message();
  Pack pack = TablePack(*attention);  // no conv or add: the matmul takes 0.5 ms as a conv would
  {
    auto grouping = GroupIntoKernels(*attention, FusionRules::Default());
    ASSERT_TRUE(grouping.ok());
    const Kernel& matmul = grouping->kernels.front().kernel;
    KindModel& model = pack.kinds[matmul.Kind()];
    model.kind = matmul.Kind();
    model.samples = 1;
    model.ranges.Extend(matmul, 1);
    model.table = std::move(MakePredictor("table", {})).value();
    TrainingSample sample{matmul, 1, 0.5, 0.05};
    ASSERT_TRUE(model.table->Fit({&sample, 1}).ok());
  }
  pack.context = TenPercentContext();
  ContextModel encoders = TenPercentContext();
  encoders.share = 0.02;
  encoders.graphs = 7;
  pack.transformer_context = encoders;
  pack.interval = NetworkInterval{40, 0, 0.8, 1.2, 0.8, 1.2};
  pack.transformer_interval = NetworkInterval{30, 0, 0.95, 1.05, 0.95, 1.05};
  auto predicted = PredictModel(*attention, pack);
  ASSERT_TRUE(predicted.ok()) << predicted.status().message();
  EXPECT_TRUE(predicted->attention);
  EXPECT_DOUBLE_EQ(predicted->context_ms, 0.01);  // 2% of 0.5 ms
  EXPECT_EQ(predicted->context_family, "transformer encoders");
  EXPECT_EQ(predicted->uncertainty.calibrated_networks, 30u);
  EXPECT_NEAR(predicted->interval_lo_ms, 0.51 / 1.05, 1e-12);
  PredictView view(*attention, *predicted, pack, "attention.onnx", "");
  EXPECT_NE(view.Text().find("fitted on 7 transformer encoders"), std::string::npos) << view.Text();
  EXPECT_EQ(view.Json()["context_fitted_on"], "transformer encoders");

  Graph cnn = TestGraph();
  Pack cnn_pack = TablePack(cnn);
  cnn_pack.context = pack.context;
  cnn_pack.transformer_context = pack.transformer_context;
  auto convs = PredictModel(cnn, cnn_pack);
  ASSERT_TRUE(convs.ok()) << convs.status().message();
  EXPECT_FALSE(convs->attention);
  EXPECT_DOUBLE_EQ(convs->context_ms, 0.0625);  // 10% of 0.625 ms
  EXPECT_EQ(convs->context_family, "random CNN networks");
}

// Three independent parts, in quadrature: the kernels' summed spreads, the context model's held-out
// error on networks and the machine's drift while the pack was measured, both × the total.
TEST(ModelPredictionTest, TheIntervalCombinesKernelsContextAndTheMachinesDrift) {
  Graph graph = TestGraph();
  Pack pack = TablePack(graph);
  pack.context = TenPercentContext();
  pack.info.reference_spread = 0.03;
  auto predicted = PredictModel(graph, pack);
  ASSERT_TRUE(predicted.ok()) << predicted.status().message();
  ASSERT_DOUBLE_EQ(predicted->total_ms, 0.6875);
  const PredictionUncertainty& u = predicted->uncertainty;
  EXPECT_DOUBLE_EQ(u.kernels_sd_ms, 0.0625);
  EXPECT_DOUBLE_EQ(u.context_sd_ms, 0.04 * 0.6875);
  EXPECT_DOUBLE_EQ(u.machine_sd_ms, 0.03 * 0.6875);
  const double sd = std::sqrt(0.0625 * 0.0625 + 0.0275 * 0.0275 + 0.020625 * 0.020625);
  EXPECT_NEAR(u.sd_ms(), sd, 1e-15);
  EXPECT_NEAR(predicted->interval_lo_ms, 0.6875 - 1.645 * sd, 1e-15);
  EXPECT_NEAR(predicted->interval_hi_ms, 0.6875 + 1.645 * sd, 1e-15);

  PredictView view(graph, *predicted, pack, "test.tflite", "");
  const std::string text = view.Text();
  EXPECT_NE(text.find("kernels ±0.062 ms, in-graph context ±0.028 ms, this machine's drift ±0.021 ms (the reference "
                      "kernel moved ±3.0% while the pack was measured)"),
            std::string::npos)
      << text;
  const nlohmann::json json = view.Json();
  EXPECT_DOUBLE_EQ(json["uncertainty"]["context_sd_ms"].get<double>(), 0.0275);
  EXPECT_DOUBLE_EQ(json["uncertainty"]["machine_sd_ms"].get<double>(), 0.020625);
  EXPECT_TRUE(json["uncertainty"]["machine_known"].get<bool>());
}

// Laid out as the executor runs it, the relu is folded into the conv: one planned node. The report
// names and counts the user's nodes, as `inspect` does: 5 nodes, the conv layer being conv and relu.
TEST(ModelPredictionTest, CountsAndNamesTheUsersNodesNotThePlannedOnes) {
  Graph graph = TestGraph();
  Pack pack = TablePack(graph);
  auto plan = PlanGraphForPrediction(graph, pack);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ(plan->graph.num_nodes(), 4u);  // conv (with its relu), add, sigmoid, foo
  auto predicted = PredictModel(plan->graph, pack);
  ASSERT_TRUE(predicted.ok()) << predicted.status().message();
  EXPECT_EQ(predicted->covered_nodes, 2u);  // in planned nodes
  NameUserNodes(*plan, graph, *predicted);
  EXPECT_EQ(predicted->total_nodes, 5u);
  EXPECT_EQ(predicted->covered_nodes, 3u);
  EXPECT_EQ(predicted->uncovered_nodes, 2u);
  ASSERT_EQ(predicted->layers.size(), 2u);
  EXPECT_EQ(predicted->layers[0].names, (std::vector<std::string>{"conv", "relu"}));

  PredictView view(plan->graph, *predicted, pack, "test.tflite", "");
  EXPECT_NE(view.Text().find("coverage: 3 of 5 nodes predicted; 2 node(s) NOT predicted"), std::string::npos)
      << view.Text();
  EXPECT_NE(view.Text().find("conv (+1)"), std::string::npos) << view.Text();
  const nlohmann::json json = view.Json();
  EXPECT_EQ(json["layers"][0]["nodes"], nlohmann::json::array({"conv", "relu"}));
  EXPECT_EQ(json["coverage"]["covered_nodes"], 3);
  EXPECT_EQ(json["coverage"]["total_nodes"], 5);
  EXPECT_NE(view.Csv().find("\nconv,3,8,4,8,8,1,0.500000,conv2d+relu,3x3 s1 4→8 @8x8,0.050000,table,0,2,"),
            std::string::npos)
      << view.Csv();
}

// An int8 pack's report: a precision column, JSON's precision per layer, and after the table one
// line per reason a kind stays fp32.
TEST(ModelPredictionTest, AnInt8PacksRowsSayEachLayersPrecisionAndWhyFp32) {
  Graph graph = TestGraph();
  Pack pack = TablePack(graph);
  pack.info.precision = "int8";
  auto predicted = PredictModel(graph, pack);
  ASSERT_TRUE(predicted.ok()) << predicted.status().message();
  ASSERT_EQ(predicted->layers.size(), 2u);
  predicted->layers[0].int8 = true;  // as NameUserNodes sets them from an int8 plan
  predicted->layers[1].fp32_why = "xnnpack has no int8 add (a test's reason)";
  PredictView view(graph, *predicted, pack, "m.tflite", "");
  const std::string text = view.Text();
  EXPECT_NE(text.find("precision"), std::string::npos) << text;
  EXPECT_NE(text.find("fp32 in the int8 model: add: xnnpack has no int8 add (a test's reason)\n"), std::string::npos) << text;
  const nlohmann::json json = view.Json();
  EXPECT_EQ(json["layers"][0]["precision"], "int8");
  EXPECT_FALSE(json["layers"][0].contains("fp32_why"));
  EXPECT_EQ(json["layers"][1]["precision"], "fp32");
  EXPECT_EQ(json["layers"][1]["fp32_why"], "xnnpack has no int8 add (a test's reason)");
  // An fp32 pack's layers say fp32, with no column or lines of their own.
  pack.info.precision = "fp32";
  PredictView fp32(graph, *predicted, pack, "m.tflite", "");
  EXPECT_EQ(fp32.Json()["layers"][1]["precision"], "fp32");
  EXPECT_EQ(fp32.Text().find("in the int8 model"), std::string::npos);
}

TEST(ModelPredictionTest, SaysWhenThisMachineIsNotThePacks) {
  Pack pack;
  pack.info.threads = 1;
  DeviceFingerprint here;
  here.cpu_model = "Other CPU";
  here.logical_cores = 2;
  EXPECT_NE(CompareMachine(pack, here).find("does not say"), std::string::npos);
  pack.info.device = {{"key", here.Key()}, {"description", "same"}};
  EXPECT_EQ(CompareMachine(pack, here), "");
  pack.info.threads = 4;
  EXPECT_NE(CompareMachine(pack, here).find("4 threads but this machine has 2 cores"), std::string::npos);
  pack.info.device = {{"key", "another"}, {"description", "Test CPU"}};
  EXPECT_NE(CompareMachine(pack, here).find("is not the pack's (Test CPU)"), std::string::npos);
  // ... and how to get this machine's figures.
  EXPECT_NE(CompareMachine(pack, here).find("latte adapt --pack PACK --budget 60s -o mine.json"), std::string::npos);
}

}  // namespace
}  // namespace latte
