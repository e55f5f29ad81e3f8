// The objectives of an assignment on a tiny graph with table packs whose answers are known:
// kernels predicted by their backend's pack, fusion only within one backend, fallbacks,
// assignments that cannot be compared, nodes no pack predicts, memory = weights + activations.
#include "search/assignment_cost.h"

#include <gtest/gtest.h>

#include "ir/graph_builder.h"
#include "run/graph_prep.h"
#include "run/int8_plan.h"
#include "search/pareto.h"
#include "test_graphs.h"

namespace latte {
namespace {

Graph TestGraph() { return testing::ConvReluAddSigmoidFoo(); }

// Each kind's samples as the pack's table for that kind.
void FitTables(Pack& pack, const std::map<std::string, std::vector<TrainingSample>>& samples) {
  for (const auto& [kind, list] : samples) {
    KindModel& model = pack.kinds[kind];
    model.kind = kind;
    model.samples = list.size();
    for (const TrainingSample& s : list) model.ranges.Extend(s.kernel, 1);
    model.table = std::move(MakePredictor("table", {})).value();
    EXPECT_TRUE(model.table->Fit(list).ok());
  }
}

// A table pack for `backend` holding the given kinds at the given times: every kernel of those
// kinds the graph can be split into (fused or not) gets an entry.
Pack TablePack(const Graph& graph, const std::string& backend, const std::map<std::string, double>& ms_by_kind) {
  Pack pack;
  pack.info.backend = backend;
  pack.info.threads = 1;
  pack.info.fusion_rules = {"conv2d+relu"};
  pack.info.device = {{"key", "test-cpu"}, {"description", "Test CPU"}};
  std::map<std::string, std::vector<TrainingSample>> samples;
  std::set<std::string> seen;
  // Every split the tests use: everything on one backend (relu folded), and conv apart from relu.
  for (const auto& wanted : {std::vector<std::string>(graph.num_nodes(), "a"),
                             std::vector<std::string>{"a", "b", "b", "b", "b"}}) {
    auto plan = PlanGraphForBackends(graph, wanted, {});  // a graph built NHWC: nothing to convert
    EXPECT_TRUE(plan.ok()) << plan.status().message();
    auto grouping = GroupIntoKernels(plan->graph, FusionRules());
    EXPECT_TRUE(grouping.ok());
    for (const KernelGroup& group : grouping->kernels) {
      auto it = ms_by_kind.find(group.kernel.Kind());
      if (it == ms_by_kind.end() || !seen.insert(group.kernel.Key()).second) continue;
      samples[group.kernel.Kind()].push_back(TrainingSample{group.kernel, 1, it->second, 0});
    }
  }
  FitTables(pack, samples);
  return pack;
}

// conv keeps 1000 bytes on xnnpack, 3000 on onednn; onednn cannot run the add. Using xnnpack
// costs 512 bytes once, onednn 2048.
NodeMemory TestMemory() {
  NodeMemory memory;
  memory.backends = {{"xnnpack"}, {"onednn"}};
  memory.per_node.assign(5, {NodeOnBackend{true, "", 0, false, ""}, NodeOnBackend{true, "", 0, false, ""}});
  memory.per_node[0][0].prepared_bytes = 1000;
  memory.per_node[0][1].prepared_bytes = 3000;
  memory.per_node[2][1] = NodeOnBackend{false, "no add here", 0, false, ""};
  memory.backend_bytes = {512, 2048};
  return memory;
}

class AssignmentCostTest : public ::testing::Test {
 protected:
  Graph graph_ = TestGraph();
  Pack xnn_ = TablePack(graph_, "xnnpack", {{"conv2d+relu", 0.5}, {"conv2d", 0.45}, {"relu", 0.02}, {"add", 0.125},
                                            {"sigmoid", 0.05}});
  Pack dnn_ = TablePack(graph_, "onednn", {{"conv2d+relu", 0.3}, {"conv2d", 0.28}, {"relu", 0.03}, {"add", 0.2}});
  Expected<CostModel> Model() { return CostModel::Create(graph_, {{"xnnpack", &xnn_}, {"onednn", &dnn_}}, TestMemory()); }
};

// The executor's arena: x (1 KB + 64 spare bytes) and y (2 KB + 64) live throughout, and of the
// 2 KB intermediates at most two at once next to Foo's output: 3 × 2112 + 1088 bytes, whether
// or not the relu is folded (its own output shares the memory of ones already dead).
constexpr double kActivationsKb = (3 * 2112 + 1088) / 1024.0;

TEST_F(AssignmentCostTest, AllOnOneBackendIsThatPacksSumWithTheReluFolded) {
  auto model = Model();
  ASSERT_TRUE(model.ok()) << model.status().message();
  auto cost = model->Evaluate({0, 0, 0, 0, 0});
  ASSERT_TRUE(cost.ok()) << cost.status().message();
  EXPECT_TRUE(cost->complete());
  EXPECT_DOUBLE_EQ(cost->time_ms, 0.5 + 0.125 + 0.05);
  EXPECT_EQ(cost->kernels, 3u);
  EXPECT_EQ(cost->conversions, 0u);
  EXPECT_EQ(cost->fallbacks, 0u);
  EXPECT_DOUBLE_EQ(cost->prepared_kb, (1000 + 512) / 1024.0);
  EXPECT_DOUBLE_EQ(cost->activations_kb, kActivationsKb);
  EXPECT_DOUBLE_EQ(cost->memory_kb(), cost->prepared_kb + cost->activations_kb);
  // Foo is in no kernel: left out of every time alike, and said so.
  ASSERT_EQ(model->never_predicted().size(), 1u);
  EXPECT_NE(model->never_predicted().begin()->first.find("foo"), std::string::npos);
}

TEST_F(AssignmentCostTest, NodesOnTwoBackendsAreNotFusedAndEachPackPredictsItsOwn) {
  auto model = Model();
  ASSERT_TRUE(model.ok());
  // conv on onednn, relu on xnnpack: conv2d (onednn 0.28) and relu (xnnpack 0.02) apart.
  auto cost = model->Evaluate({1, 0, 0, 0, 0});
  ASSERT_TRUE(cost.ok()) << cost.status().message();
  EXPECT_TRUE(cost->complete());
  EXPECT_DOUBLE_EQ(cost->time_ms, 0.28 + 0.02 + 0.125 + 0.05);
  EXPECT_EQ(cost->kernels, 4u);
  EXPECT_DOUBLE_EQ(cost->prepared_kb, (3000 + 512 + 2048) / 1024.0);  // both backends in use
  EXPECT_DOUBLE_EQ(cost->activations_kb, kActivationsKb);
}

TEST_F(AssignmentCostTest, ANodeItsBackendCannotRunFallsBackToTheFirst) {
  auto model = Model();
  ASSERT_TRUE(model.ok());
  auto cost = model->Evaluate({0, 0, 1, 0, 0});  // add on onednn, which cannot run it
  ASSERT_TRUE(cost.ok());
  EXPECT_EQ(cost->fallbacks, 1u);
  EXPECT_DOUBLE_EQ(cost->time_ms, 0.5 + 0.125 + 0.05);
}

TEST_F(AssignmentCostTest, AKernelOnlyAnotherPackPredictsMakesTheAssignmentIncomparable) {
  auto model = Model();
  ASSERT_TRUE(model.ok());
  auto cost = model->Evaluate({0, 0, 0, 1, 0});  // sigmoid on onednn: its pack has no sigmoid
  ASSERT_TRUE(cost.ok());
  EXPECT_FALSE(cost->complete());
  ASSERT_EQ(cost->unpredicted.size(), 1u);
  EXPECT_NE(cost->unpredicted[0].find("sigmoid"), std::string::npos) << cost->unpredicted[0];
  EXPECT_NE(cost->unpredicted[0].find("on onednn"), std::string::npos) << cost->unpredicted[0];
}

TEST_F(AssignmentCostTest, BadSetupsAreRefusedSayingWhy) {
  auto swapped = CostModel::Create(graph_, {{"xnnpack", &dnn_}, {"onednn", &xnn_}}, TestMemory());
  ASSERT_FALSE(swapped.ok());
  EXPECT_NE(swapped.status().message().find("is a pack for onednn"), std::string::npos) << swapped.status().message();

  NodeMemory memory = TestMemory();
  memory.per_node[1][0] = NodeOnBackend{false, "no relu today", 0, false, ""};
  auto no_fallback = CostModel::Create(graph_, {{"xnnpack", &xnn_}, {"onednn", &dnn_}}, memory);
  ASSERT_FALSE(no_fallback.ok());
  EXPECT_NE(no_fallback.status().message().find("fallback backend xnnpack"), std::string::npos);
  EXPECT_NE(no_fallback.status().message().find("no relu today"), std::string::npos);

  auto model = Model();
  ASSERT_TRUE(model.ok());
  EXPECT_FALSE(model->Evaluate({0, 0, 0}).ok());
  EXPECT_FALSE(model->Evaluate({0, 0, 0, 0, 2}).ok());
}

// Per-op precision: x → conv → sigmoid on xnnpack, each op at fp32 (an fp32 pack) or int8 (an
// int8 pack), with known times by (op, dtype). A quantize and a dequantize are inserted where the
// precisions meet, as the executor's lowering inserts them, and predicted by the int8 pack.
class MixedPrecisionCostTest : public ::testing::Test {
 protected:
  static Graph ConvSigmoid() {
    GraphBuilder b;
    TensorId x = b.Input("x", {1, 8, 8, 4});
    TensorId c = b.Op1(OpKind::kConv2D, "conv", {x, b.Constant("w", {8, 3, 3, 4})}, testing::NhwcSameConvAttrs());
    TensorId y = b.Op1(OpKind::kSigmoid, "sigmoid", {c});
    auto graph = b.Finish({y});
    EXPECT_TRUE(graph.ok()) << graph.status().message();
    return std::move(graph).value();
  }
  static double KnownMs(const Kernel& k) {
    static const std::map<std::pair<OpKind, DataType>, double> ms = {
        {{OpKind::kQuantize, DataType::kFloat32}, 0.01}, {{OpKind::kConv2D, DataType::kInt8}, 0.25},
        {{OpKind::kSigmoid, DataType::kInt8}, 0.03},     {{OpKind::kDequantize, DataType::kInt8}, 0.02},
        {{OpKind::kSigmoid, DataType::kFloat32}, 0.2}};
    auto it = ms.find({k.op, k.dtype});
    return it == ms.end() ? 0 : it->second;
  }
  // A pack whose tables hold every kernel of `graphs` at `ms`.
  static Pack TableOf(const std::vector<Graph>& graphs, const std::string& precision, double (*ms)(const Kernel&)) {
    Pack pack;
    pack.info.backend = "xnnpack";
    pack.info.backend_takes_nhwc = true;
    pack.info.threads = 1;
    pack.info.precision = precision;
    pack.info.device = {{"key", "test-cpu"}, {"description", "Test CPU"}};
    std::map<std::string, std::vector<TrainingSample>> samples;
    std::set<std::string> seen;
    for (const Graph& graph : graphs) {
      auto grouping = GroupIntoKernels(graph, FusionRules());
      EXPECT_TRUE(grouping.ok());
      for (const KernelGroup& group : grouping->kernels)
        if (seen.insert(group.kernel.Key()).second)
          samples[ModelKind(group.kernel)].push_back(TrainingSample{group.kernel, 1, ms(group.kernel), 0});
    }
    FitTables(pack, samples);
    return pack;
  }
  // The plan lowered with `int8` per node: the kernels the int8 pack must know.
  Graph LoweredWith(std::vector<bool> int8) const {
    auto plan = PlanGraphForBackends(graph_, {"xnnpack", "xnnpack"}, {"xnnpack"});
    EXPECT_TRUE(plan.ok());
    return LowerPlanToInt8(*plan, int8, ActivationRanges{}).plan.graph;
  }
  NodeMemory Memory(bool sigmoid_int8) const {
    NodeMemory memory;
    memory.backends = {{"xnnpack"}, {"xnnpack", Precision::kInt8}};
    memory.per_node.assign(2, {NodeOnBackend{true, "", 0, false, ""}, NodeOnBackend{true, "", 0, false, ""}});
    memory.per_node[0][1].int8 = true;
    memory.per_node[1][1].int8 = sigmoid_int8;
    memory.backend_bytes = {0, 0};
    return memory;
  }
  Expected<CostModel> Model(bool sigmoid_int8 = true) {
    return CostModel::Create(graph_, {{"xnnpack", &fp32_}, {"xnnpack", &int8_, Precision::kInt8}}, Memory(sigmoid_int8));
  }
  Graph graph_ = ConvSigmoid();
  Pack fp32_ = TableOf({graph_}, "fp32", [](const Kernel& k) { return k.op == OpKind::kConv2D ? 0.8 : 0.1; });
  Pack int8_ = TableOf({LoweredWith({true, true}), LoweredWith({false, true}), graph_}, "int8", &KnownMs);
};

TEST_F(MixedPrecisionCostTest, EachOpIsPredictedAtItsPrecisionWithTheConversionsBetween) {
  auto model = Model();
  ASSERT_TRUE(model.ok()) << model.status().message();
  struct Case {
    std::vector<int> choice;
    double ms;
    std::size_t int8_nodes, kernels;
  };
  for (const Case& c : std::vector<Case>{
           {{0, 0}, 0.8 + 0.1, 0, 2},                   // all fp32: the fp32 pack
           {{1, 1}, 0.01 + 0.25 + 0.03 + 0.02, 2, 4},   // all int8: quantize x, conv, sigmoid, dequantize y
           {{1, 0}, 0.01 + 0.25 + 0.02 + 0.1, 1, 4},    // int8 conv, dequantized for the fp32 sigmoid
           {{0, 1}, 0.8 + 0.01 + 0.03 + 0.02, 1, 4}}) {  // fp32 conv, quantized for the int8 sigmoid
    SCOPED_TRACE(::testing::PrintToString(c.choice));
    auto cost = model->Evaluate(c.choice);
    ASSERT_TRUE(cost.ok()) << cost.status().message();
    EXPECT_TRUE(cost->complete()) << (cost->unpredicted.empty() ? "" : cost->unpredicted[0]);
    EXPECT_NEAR(cost->time_ms, c.ms, 1e-12);
    EXPECT_EQ(cost->int8_nodes, c.int8_nodes);
    EXPECT_EQ(cost->kernels, c.kernels);
  }
  // int8 activations take less memory than fp32's.
  EXPECT_LT(model->Evaluate({1, 1})->activations_kb, model->Evaluate({0, 0})->activations_kb);
}

TEST_F(MixedPrecisionCostTest, AnOpItsBackendKeepsFp32IsPredictedAtFp32ByTheInt8Pack) {
  auto model = Model(/*sigmoid_int8=*/false);
  ASSERT_TRUE(model.ok()) << model.status().message();
  auto cost = model->Evaluate({1, 1});
  ASSERT_TRUE(cost.ok()) << cost.status().message();
  EXPECT_NEAR(cost->time_ms, 0.01 + 0.25 + 0.02 + 0.2, 1e-12);  // the int8 pack's fp32 sigmoid
  EXPECT_EQ(cost->int8_nodes, 1u);
}

TEST_F(MixedPrecisionCostTest, PacksOfAnotherPrecisionOrBf16MixedInAreRefused) {
  auto wrong = CostModel::Create(graph_, {{"xnnpack", &fp32_}, {"xnnpack", &fp32_, Precision::kInt8}}, Memory(true));
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("xnnpack@int8 is a fp32 pack"), std::string::npos) << wrong.status().message();
  Pack bf16 = TableOf({graph_}, "bf16", [](const Kernel&) { return 0.1; });
  NodeMemory memory = Memory(true);
  memory.backends[1].precision = Precision::kBf16;
  auto mixed = CostModel::Create(graph_, {{"xnnpack", &fp32_}, {"xnnpack", &bf16, Precision::kBf16}}, memory);
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.status().message().find("bf16 packs cannot be mixed"), std::string::npos) << mixed.status().message();
  auto twice = CostModel::Create(graph_, {{"xnnpack", &fp32_}, {"xnnpack", &fp32_}}, Memory(true));
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("listed twice"), std::string::npos) << twice.status().message();
}

TEST(SpreadOver, TakesBothEndsAndEvenlyBetween) {
  EXPECT_EQ(SpreadOver(5, 3), (std::vector<std::size_t>{0, 2, 4}));
  EXPECT_EQ(SpreadOver(10, 4), (std::vector<std::size_t>{0, 3, 6, 9}));
  EXPECT_EQ(SpreadOver(2, 5), (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(SpreadOver(10, 1), (std::vector<std::size_t>{0}));
  EXPECT_TRUE(SpreadOver(0, 3).empty());
  EXPECT_TRUE(SpreadOver(7, 0).empty());
}

}  // namespace
}  // namespace latte
