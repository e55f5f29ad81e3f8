// The objectives of an assignment on a tiny graph with table packs whose answers are known:
// kernels predicted by their backend's pack, fusion only within one backend, fallbacks,
// assignments that cannot be compared, nodes no pack predicts, memory = weights + activations.
#include "search/assignment_cost.h"

#include <gtest/gtest.h>

#include "ir/graph_builder.h"
#include "run/graph_prep.h"
#include "search/pareto.h"
#include "test_graphs.h"

namespace latte {
namespace {

Graph TestGraph() { return testing::ConvReluAddSigmoidFoo(); }

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
  for (auto& [kind, list] : samples) {
    KindModel& model = pack.kinds[kind];
    model.kind = kind;
    model.samples = list.size();
    for (const TrainingSample& s : list) model.ranges.Extend(s.kernel, 1);
    model.table = std::move(MakePredictor("table", {})).value();
    EXPECT_TRUE(model.table->Fit(list).ok());
  }
  return pack;
}

// conv keeps 1000 bytes on xnnpack, 3000 on onednn; onednn cannot run the add. Using xnnpack
// costs 512 bytes once, onednn 2048.
NodeMemory TestMemory() {
  NodeMemory memory;
  memory.backends = {"xnnpack", "onednn"};
  memory.per_node.assign(5, {NodeOnBackend{true, "", 0}, NodeOnBackend{true, "", 0}});
  memory.per_node[0][0].prepared_bytes = 1000;
  memory.per_node[0][1].prepared_bytes = 3000;
  memory.per_node[2][1] = NodeOnBackend{false, "no add here", 0};
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
  memory.per_node[1][0] = NodeOnBackend{false, "no relu today", 0};
  auto no_fallback = CostModel::Create(graph_, {{"xnnpack", &xnn_}, {"onednn", &dnn_}}, memory);
  ASSERT_FALSE(no_fallback.ok());
  EXPECT_NE(no_fallback.status().message().find("fallback backend xnnpack"), std::string::npos);
  EXPECT_NE(no_fallback.status().message().find("no relu today"), std::string::npos);

  auto model = Model();
  ASSERT_TRUE(model.ok());
  EXPECT_FALSE(model->Evaluate({0, 0, 0}).ok());
  EXPECT_FALSE(model->Evaluate({0, 0, 0, 0, 2}).ok());
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
