#include "profile/fusion.h"

#include <gtest/gtest.h>

#include "ir/kernel_graph.h"

namespace latte {
namespace {

TEST(Fusion, DecisionFollowsTheRule) {
  FusionEvidence e;
  e.parts_us = {100, 20};
  e.together_us = 105;  // saves 15 > 0.5 × 20
  DecideFusion(e, 0.5);
  EXPECT_DOUBLE_EQ(e.saving_us, 15);
  EXPECT_DOUBLE_EQ(e.alpha, 0.5);
  EXPECT_TRUE(e.fused);
  EXPECT_EQ(e.verdict, "fused");
  e.together_us = 112;  // saves 8 < 10
  DecideFusion(e, 0.5);
  EXPECT_FALSE(e.fused);
}

TEST(Fusion, NoiseRaisesAlpha) {
  FusionEvidence e;
  e.parts_us = {100, 20};
  e.together_us = 105;
  e.noise_us = 9;  // 2 × 9 / 20 = 0.9 > 0.5: a 15 us saving is within the noise
  DecideFusion(e, 0.5);
  EXPECT_DOUBLE_EQ(e.alpha, 0.9);
  EXPECT_FALSE(e.fused);
  EXPECT_EQ(e.verdict, "separate");
  e.noise_us = 12;  // noise above the cheapest op: nothing can be told
  DecideFusion(e, 0.5);
  EXPECT_FALSE(e.fused);
  EXPECT_EQ(e.verdict, "inconclusive: noise");
}

TEST(Fusion, SavingMoreThanTheFollowersCostIsDriftNotFusion) {
  FusionEvidence e;
  e.parts_us = {100, 20};
  e.together_us = 50;  // saves 70: the relu costs 20, so the conv's own time moved
  DecideFusion(e, 0.5);
  EXPECT_FALSE(e.fused);
  EXPECT_EQ(e.verdict, "inconclusive: drift");
}

TEST(Fusion, ChainGraphHasSeparateNodesWhoseKernelsArePartsOfTheChain) {
  auto shapes = FusionShapes("conv+add+relu");
  ASSERT_TRUE(shapes.ok()) << shapes.status().message();
  ASSERT_EQ(shapes->size(), 3u);
  const Kernel& chain = shapes->front();
  EXPECT_EQ(chain.Kind(), "conv2d+add+relu");
  auto graph = BuildChainGraph(chain);
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  ASSERT_EQ(graph->num_nodes(), 3u);
  EXPECT_EQ(graph->node(1).kind, OpKind::kAdd);
  EXPECT_EQ(graph->node(2).kind, OpKind::kRelu);
  EXPECT_EQ(graph->outputs.size(), 1u);
  auto main = KernelOfNodes(*graph, {0});
  ASSERT_TRUE(main.ok()) << main.status().message();
  Kernel expected = chain;
  expected.fused.clear();
  EXPECT_EQ(*main, expected);
  // The whole chain read back is the chain kernel.
  auto whole = KernelOfNodes(*graph, {0, 1, 2});
  ASSERT_TRUE(whole.ok()) << whole.status().message();
  EXPECT_EQ(*whole, chain);
}

TEST(Fusion, EveryDefaultChainHasShapesThatBuild) {
  for (const std::string& kind : DefaultFusionChains()) {
    auto shapes = FusionShapes(kind);
    ASSERT_TRUE(shapes.ok()) << kind << ": " << shapes.status().message();
    for (const Kernel& k : *shapes) EXPECT_TRUE(BuildChainGraph(k).ok()) << k.Key();
  }
  EXPECT_FALSE(FusionShapes("conv2d").ok());  // one op: nothing to fuse
}

TEST(Fusion, JsonListsRulesAndEvidence) {
  FusionReport report;
  report.backend = "xnnpack";
  FusionDecision d;
  d.kind = "conv2d+relu";
  d.fused = true;
  d.shapes_fused = d.shapes_measured = 1;
  FusionEvidence e;
  e.chain = (*FusionShapes("conv2d+relu"))[0];
  e.parts_us = {10, 2};
  e.together_us = 10;
  DecideFusion(e, 0.5);
  d.evidence.push_back(e);
  report.decisions.push_back(d);
  report.rules = {"conv2d+relu"};
  const nlohmann::json json = FusionReportJson(report);
  EXPECT_EQ(json["rules"], nlohmann::json::array({"conv2d+relu"}));
  EXPECT_EQ(json["chains"][0]["shapes"][0]["saving_us"], 2.0);
  EXPECT_NE(FusionReportText(report).find("rules: conv2d+relu"), std::string::npos);
  // The rules are what FusionRules reads.
  EXPECT_TRUE(FusionRules::FromJson(json["rules"]).ok());
}

}  // namespace
}  // namespace latte
