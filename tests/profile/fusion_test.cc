#include "profile/fusion.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>

#include "ir/kernel_graph.h"
#include "profile/space.h"
#include "run/backend_registry.h"

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

// KernelParts (ir/kernel) derives each part's params from the fused kernel's alone; they must be
// exactly the kernels of the chain's nodes run separately, which are what a pack measured.
TEST(Fusion, KernelPartsAreTheKernelsOfTheChainsNodes) {
  std::vector<Kernel> chains;
  for (const std::string& kind : DefaultFusionChains()) {
    auto shapes = FusionShapes(kind);
    ASSERT_TRUE(shapes.ok()) << kind;
    chains.insert(chains.end(), shapes->begin(), shapes->end());
  }
  for (const char* kind : {"conv2d+relu6", "dwconv+add+relu6", "max_pool2d+relu", "avg_pool2d+add", "mul+relu6",
                           "resize+relu", "concat+relu", "pad+relu", "sigmoid+mul", "global_avg_pool+relu"}) {
    auto shapes = FusionShapes(kind);
    ASSERT_TRUE(shapes.ok()) << kind << ": " << shapes.status().message();
    chains.insert(chains.end(), shapes->begin(), shapes->end());
  }
  // Strided, padded, non-square: the output size is computed, not copied.
  Kernel strided = ConvKernel(OpKind::kConv2D, 17, 30, 8, 24, 5, 2);
  strided.params["dh"] = 2;
  strided.fused = {OpKind::kAdd, OpKind::kRelu6};
  chains.push_back(strided);
  for (const Kernel& chain : chains) {
    auto graph = BuildChainGraph(chain);
    ASSERT_TRUE(graph.ok()) << chain.Key() << ": " << graph.status().message();
    auto parts = KernelParts(chain);
    ASSERT_TRUE(parts.ok()) << chain.Key() << ": " << parts.status().message();
    ASSERT_EQ(parts->size(), graph->num_nodes()) << chain.Key();
    for (std::size_t i = 0; i < parts->size(); ++i) {
      auto alone = KernelOfNodes(*graph, {static_cast<NodeId>(i)});
      ASSERT_TRUE(alone.ok()) << chain.Key() << " node " << i << ": " << alone.status().message();
      EXPECT_EQ((*parts)[i].Key(), alone->Key()) << chain.Key() << " part " << i;
    }
  }
}

// A backend that runs nothing but declares conv2d+relu fused by construction.
class DeclaringBackend : public Backend {
 public:
  std::string_view Name() const override { return "declaring"; }
  std::string Version() const override { return "1"; }
  Support Supports(const Graph&, NodeId) const override { return Support::No("runs nothing"); }
  Expected<std::unique_ptr<PreparedNode>> Prepare(const Graph&, NodeId) override { return Unsupported("runs nothing"); }
  std::vector<std::string> FusedByConstruction() const override { return {"conv2d+relu"}; }
};

TEST(Fusion, WhatTheBackendDeclaresIsFusedWithoutTiming) {
  BackendRegistry registry;
  ASSERT_TRUE(registry
                  .Register({"declaring", "", [](const RunOptions&) -> Expected<std::unique_ptr<Backend>> {
                               return std::unique_ptr<Backend>(new DeclaringBackend);
                             }})
                  .ok());
  FusionOptions options;
  options.campaign.backend = "declaring";
  options.chains = {"conv2d+relu", "conv2d+add"};
  std::ostringstream log;
  auto report = DetectFusion(options, registry, log);
  ASSERT_TRUE(report.ok()) << report.status().message();
  ASSERT_EQ(report->decisions.size(), 2u);
  EXPECT_TRUE(report->decisions[0].declared);
  EXPECT_TRUE(report->decisions[0].fused);
  EXPECT_TRUE(report->decisions[0].evidence.empty());  // nothing timed
  EXPECT_FALSE(report->decisions[1].declared);
  EXPECT_FALSE(report->decisions[1].fused);  // timing was tried, and the backend could not run it
  ASSERT_FALSE(report->decisions[1].evidence.empty());
  EXPECT_NE(report->decisions[1].evidence[0].why_not_measured.find("runs nothing"), std::string::npos);
  EXPECT_EQ(report->rules, std::vector<std::string>{"conv2d+relu"});
}

TEST(Fusion, TheDefaultBackendDeclarationIsWhatTheExecutorFolds) {
  const std::vector<std::string> kinds = FoldedActivationKinds();
  EXPECT_EQ(kinds.size(), 15u);
  for (const char* kind : {"conv2d+relu6", "depthwise_conv2d+relu", "fully_connected+relu6", "add+relu", "transpose_conv2d+relu_n1_to_1"})
    EXPECT_NE(std::find(kinds.begin(), kinds.end(), kind), kinds.end()) << kind;
  for (const std::string& kind : kinds) EXPECT_TRUE(FusionRules::FromKinds({kind}).ok()) << kind;
}

}  // namespace
}  // namespace latte
