#include "profile/graph_context.h"

#include <memory>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../cli/run_latte.h"
#include "ir/cache_reuse.h"
#include "profile/space.h"
#include "run/onednn/onednn_backend.h"
#include "run/ort/ort_backend.h"
#include "run/xnnpack/xnnpack_backend.h"

namespace latte {
namespace {

// Short runs: these tests check what is stored, not how well it is timed.
CampaignOptions QuickCampaign() {
  CampaignOptions campaign;
  campaign.measure.warmup_runs = 1;
  campaign.measure.min_warmup_secs = 0;
  campaign.measure.num_runs = 3;
  campaign.measure.min_secs = 0;
  return campaign;
}

TEST(RandomNetwork, IsDeterministicJoinsAndVariesAcrossDraws) {
  SplitMix64 a(7), b(7);
  for (int i = 0; i < 3; ++i) {
    const auto first = RandomNetwork(a);
    const auto second = RandomNetwork(b);
    ASSERT_EQ(first.size(), second.size());
    for (std::size_t k = 0; k < first.size(); ++k) EXPECT_EQ(first[k].kernel, second[k].kernel);
  }
  SplitMix64 rng(0);
  std::set<std::int64_t> inputs;
  bool add = false, clamped_add = false, resize = false, stride2 = false, five = false, lateral = false;
  for (int i = 0; i < 30; ++i) {
    const auto network = RandomNetwork(rng);
    auto graph = JoinKernels(network);
    ASSERT_TRUE(graph.ok()) << "network " << i << ": " << graph.status().message();
    inputs.insert(network.front().kernel.Param("ih"));
    for (const JoinedKernel& k : network) {
      const bool residual = k.kernel.op == OpKind::kAdd && k.from.size() == 2 && k.from[1] >= 0;
      add |= residual && k.kernel.fused.empty();
      clamped_add |= residual && k.kernel.fused == std::vector<OpKind>{OpKind::kRelu6};
      resize |= k.kernel.op == OpKind::kResize;
      stride2 |= k.kernel.op == OpKind::kDepthwiseConv2D && k.kernel.Param("sh") == 2;
      five |= k.kernel.op == OpKind::kDepthwiseConv2D && k.kernel.Param("kh") == 5;
      // A decoder's add of a 1×1 conv reading an encoder layer several layers back, at its size.
      if (k.kernel.op == OpKind::kAdd && k.from.size() == 2 && k.from[1] >= 0) {
        const JoinedKernel& side = network[static_cast<std::size_t>(k.from[1])];
        // (JoinKernels above checked that the shapes meet.)
        lateral |= side.kernel.op == OpKind::kConv2D && side.from.size() == 1 && side.from[0] >= 0 && side.from[0] < k.from[1] - 3;
      }
    }
  }
  EXPECT_GE(inputs.size(), 5u);
  EXPECT_TRUE(add && clamped_add && resize && stride2 && five && lateral);
}

TEST(RandomHardSwishNetwork, IsDeterministicJoinsAndHasBothHardSwishesAndSqueezeExcite) {
  SplitMix64 a(7), b(7);
  for (int i = 0; i < 3; ++i) {
    const auto first = RandomHardSwishNetwork(a);
    const auto second = RandomHardSwishNetwork(b);
    ASSERT_EQ(first.size(), second.size());
    for (std::size_t k = 0; k < first.size(); ++k) EXPECT_EQ(first[k].kernel, second[k].kernel);
  }
  SplitMix64 rng(0);
  int one_op = 0, decomposed = 0, excite = 0, affine = 0, residual = 0, resize = 0;
  for (int i = 0; i < 30; ++i) {
    const auto network = RandomHardSwishNetwork(rng);
    auto graph = JoinKernels(network);
    ASSERT_TRUE(graph.ok()) << "network " << i << ": " << graph.status().message();
    bool has_one_op = false, has_decomposed = false;
    for (const JoinedKernel& k : network) {
      has_one_op |= k.kernel.op == OpKind::kHardSwish;
      // relu6(x + 3) then x · that: the add+relu6 of a scalar read by the multiply after it.
      has_decomposed |= k.kernel.op == OpKind::kAdd && k.kernel.fused == std::vector<OpKind>{OpKind::kRelu6} &&
                        k.kernel.Param("b1") == 1;
      // The channel weights multiply the map: a [1,h,w,c] by [1,1,1,c] product fed by a hard sigmoid.
      if (k.kernel.op == OpKind::kMul && k.kernel.Param("b1") == 1 && k.kernel.Param("a1") > 1 && k.from[1] >= 0 &&
          network[static_cast<std::size_t>(k.from[1])].kernel.op == OpKind::kHardSigmoid)
        ++excite;
      affine += k.kernel.op == OpKind::kMul && k.kernel.Param("a3") == 1 && k.from[0] < 0;
      residual += k.kernel.op == OpKind::kAdd && k.from.size() == 2 && k.from[0] >= 0 && k.from[1] >= 0;
      resize += k.kernel.op == OpKind::kResize;
    }
    EXPECT_FALSE(has_one_op && has_decomposed) << "network " << i << ": one hard-swish a network";
    one_op += has_one_op;
    decomposed += has_decomposed;
  }
  EXPECT_GT(one_op, 5);
  EXPECT_GT(decomposed, 5);
  EXPECT_EQ(one_op + decomposed, 30);
  EXPECT_GT(excite, 10);
  EXPECT_GT(affine, 10);
  EXPECT_GT(residual, 10);
  EXPECT_GT(resize, 5);
}

TEST(GraphContext, MeasuresEachLayerInTheGraphAndAlone) {
  BackendRegistry registry;
  RegisterXnnpackBackend(registry);
  // conv → depthwise → conv + residual add of the first conv's output (fused by the default rules).
  const Kernel conv = ConvKernel(OpKind::kConv2D, 16, 16, 8, 8, 3, 1);
  auto graph = JoinKernels({{conv, {-1}},
                            {ConvKernel(OpKind::kDepthwiseConv2D, 16, 16, 8, 8, 3, 1), {0}},
                            {ConvKernel(OpKind::kConv2D, 16, 16, 8, 8, 1, 1), {1}},
                            {BinaryKernel(OpKind::kAdd, 16, 16, 8), {2, 0}}});
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  auto layers = MeasureGraphLayers(*graph, "block", FusionRules::Default(), QuickCampaign(), QuickCampaign().measure, registry);
  ASSERT_TRUE(layers.ok()) << layers.status().message();
  ASSERT_EQ(layers->size(), 3u);
  EXPECT_EQ((*layers)[0].kernel, conv);
  EXPECT_EQ((*layers)[1].kernel.op, OpKind::kDepthwiseConv2D);
  EXPECT_EQ((*layers)[2].kernel.Kind(), "conv2d+add");
  for (std::size_t i = 0; i < 3; ++i) {
    const GraphLayerRecord& layer = (*layers)[i];
    EXPECT_EQ(layer.graph, "block");
    EXPECT_EQ(layer.layer, static_cast<int>(i));
    EXPECT_GT(layer.in_graph_us, 0);
    EXPECT_GT(layer.alone_us, 0);
    EXPECT_EQ(layer.traffic.output_bytes, 16 * 16 * 8 * 4);
    EXPECT_GT(layer.traffic.weight_bytes, 0);
  }
  // The fused add reads the depthwise's output through the 1×1 conv and the first conv's output.
  const auto& inputs = (*layers)[2].traffic.inputs;
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_EQ(inputs[0].first, 1);
  EXPECT_EQ(inputs[1].first, 0);
}

// At int8 the network's layers are the kernels its int8 form is made of (as prediction lowers
// it): the input quantized, the convolutions int8 (their outputs a byte an element), the output
// dequantized; each timed in the int8 run and alone at int8.
TEST(GraphContext, MeasuresAnInt8NetworkAsTheKernelsOfItsInt8Form) {
  BackendRegistry registry;
  RegisterXnnpackBackend(registry);
  auto graph = JoinKernels({{ConvKernel(OpKind::kConv2D, 16, 16, 8, 8, 3, 1), {-1}},
                            {ConvKernel(OpKind::kDepthwiseConv2D, 16, 16, 8, 8, 3, 1), {0}},
                            {ConvKernel(OpKind::kConv2D, 16, 16, 8, 8, 1, 1), {1}}});
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  CampaignOptions campaign = QuickCampaign();
  campaign.run.precision = Precision::kInt8;
  auto layers = MeasureGraphLayers(*graph, "int8 block", FusionRules::Default(), campaign, campaign.measure, registry);
  ASSERT_TRUE(layers.ok()) << layers.status().message();
  std::vector<std::string> kinds;
  for (const GraphLayerRecord& layer : *layers) {
    kinds.push_back(layer.kernel.op == OpKind::kQuantize || layer.kernel.op == OpKind::kDequantize
                        ? layer.kernel.Kind()
                        : layer.kernel.Kind() + (layer.kernel.dtype == DataType::kInt8 ? "|int8" : "|fp32"));
    EXPECT_GT(layer.in_graph_us, 0) << layer.kernel.Key();
    EXPECT_GT(layer.alone_us, 0) << layer.kernel.Key();
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"quantize", "conv2d|int8", "depthwise_conv2d|int8", "conv2d|int8", "dequantize"}));
  ASSERT_EQ(layers->size(), 5u);
  EXPECT_EQ((*layers)[1].traffic.output_bytes, 16 * 16 * 8);  // int8 activations: one byte each
}

GraphContextOptions SmallCampaign(const std::string& db) {
  GraphContextOptions options;
  options.campaign = QuickCampaign();
  options.graph_measure = QuickCampaign().measure;
  const FusionRules rules = FusionRules::Default();
  options.fusion_rules.assign(rules.kinds().begin(), rules.kinds().end());
  options.graphs = 2;
  options.seed = 23;  // two networks on 64×64 inputs: quick to run
  options.db = db;
  return options;
}

TEST(GraphContext, CampaignStoresEveryLayerAndResumes) {
  testing::TempDir dir;
  const std::string db = (dir.path() / "g.db").string();
  BackendRegistry registry;
  RegisterXnnpackBackend(registry);
  {
    SplitMix64 rng(23);
    for (int i = 0; i < 2; ++i) ASSERT_EQ(RandomNetwork(rng).front().kernel.Param("ih"), 64) << "pick another seed";
  }
  std::ostringstream log;
  auto first = RunGraphContext(SmallCampaign(db), registry, log);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(first->measured, 2u);
  EXPECT_EQ(first->done_before, 0u);
  EXPECT_TRUE(first->skipped.empty());
  EXPECT_NE(log.str().find("graph context: random-net 1"), std::string::npos) << log.str();
  auto store = Store::Open(db);
  ASSERT_TRUE(store.ok());
  auto rows = store->QueryGraphLayers();
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), first->layers_stored);
  EXPECT_GT(first->layers_stored, 20u);
  // The drift reference before each network and after the last, kept with the campaign.
  EXPECT_EQ(first->references, 3u);
  EXPECT_EQ(store->ListReferences(first->campaign_id)->size(), 3u);
  for (const StoredGraphLayer& row : *rows) {
    EXPECT_EQ(row.campaign, first->campaign_id);
    EXPECT_EQ(row.backend.name, "xnnpack");
  }
  auto again = RunGraphContext(SmallCampaign(db), registry, log);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->campaign_id, first->campaign_id);
  EXPECT_EQ(again->done_before, 2u);
  EXPECT_EQ(again->measured, 0u);
  EXPECT_EQ(again->references, 0u);  // nothing measured: nothing to correct
  EXPECT_EQ(store->QueryGraphLayers()->size(), rows->size());
}

// One network of the hard-swish family.
GraphContextOptions OneHardSwishNetwork(const std::string& db) {
  GraphContextOptions options = SmallCampaign(db);
  options.family = NetworkFamily::kHardSwishSe;
  options.graphs = 1;
  return options;
}

// The campaign of `options` opened, its budget spent before the first network: nothing measured
// but the options' min_graphs.
Expected<GraphContextResult> OpenCampaignOnly(GraphContextOptions options, const BackendRegistry& registry, std::ostream& log) {
  auto now = std::make_shared<double>(0);
  options.campaign.clock = [now] { return *now += 10; };
  options.campaign.budget_secs = 5;
  return RunGraphContext(options, registry, log);
}

TEST(GraphContext, TheHardSwishFamilyIsACampaignOfItsOwn) {
  testing::TempDir dir;
  const std::string db = (dir.path() / "g.db").string();
  BackendRegistry registry;
  RegisterXnnpackBackend(registry);
  GraphContextOptions options = OneHardSwishNetwork(db);
  std::ostringstream log;
  auto hard_swish = RunGraphContext(options, registry, log);
  ASSERT_TRUE(hard_swish.ok()) << hard_swish.status().message();
  EXPECT_EQ(hard_swish->measured, 1u);
  EXPECT_TRUE(hard_swish->skipped.empty());
  // The other family, same seed and count: another campaign, its networks not yet measured.
  options.family = NetworkFamily::kInvertedResidual;
  auto inverted = OpenCampaignOnly(options, registry, log);
  ASSERT_TRUE(inverted.ok()) << inverted.status().message();
  EXPECT_NE(inverted->campaign_id, hard_swish->campaign_id);
  EXPECT_EQ(inverted->done_before, 0u);
  auto store = Store::Open(db);
  ASSERT_TRUE(store.ok());
  auto campaigns = store->ListCampaigns();
  ASSERT_TRUE(campaigns.ok());
  std::set<std::string> families;
  for (const CampaignInfo& campaign : *campaigns) families.insert(nlohmann::json::parse(campaign.space)["graphs"]);
  EXPECT_EQ(families, (std::set<std::string>{"random-network", "random-network-hswish-se"}));
  auto rows = store->QueryGraphLayers();
  ASSERT_TRUE(rows.ok());
  EXPECT_EQ(rows->size(), hard_swish->layers_stored);
  EXPECT_GT(hard_swish->layers_stored, 10u);
}

// An int8 campaign of hard-swish networks: XNNPACK keeps hard-swish fp32 in an int8 model, so
// the stored layers mix int8 kernels, fp32 ones and the conversions between them, under the int8
// configuration and in a campaign of their own.
TEST(GraphContext, AnInt8CampaignStoresInt8AndFp32LayersUnderTheInt8Configuration) {
  testing::TempDir dir;
  const std::string db = (dir.path() / "g.db").string();
  BackendRegistry registry;
  RegisterXnnpackBackend(registry);
  GraphContextOptions options = OneHardSwishNetwork(db);
  options.campaign.run.precision = Precision::kInt8;
  std::ostringstream log;
  auto measured = RunGraphContext(options, registry, log);
  ASSERT_TRUE(measured.ok()) << measured.status().message();
  ASSERT_EQ(measured->measured, 1u) << (measured->skipped.empty() ? "" : measured->skipped[0]);
  auto store = Store::Open(db);
  ASSERT_TRUE(store.ok());
  auto rows = store->QueryGraphLayers();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), measured->layers_stored);
  std::size_t int8 = 0, fp32 = 0, conversions = 0;
  for (const StoredGraphLayer& row : *rows) {
    EXPECT_EQ(row.backend.precision, "int8");
    const OpKind op = row.record.kernel.op;
    if (op == OpKind::kQuantize || op == OpKind::kDequantize) ++conversions;
    else if (row.record.kernel.dtype == DataType::kInt8) ++int8;
    else ++fp32;
  }
  EXPECT_GT(int8, 5u);
  EXPECT_GT(fp32, 0u);  // the hard-swishes
  EXPECT_GT(conversions, 1u);
  // The fp32 campaign of the same networks is another campaign.
  options.campaign.run.precision = Precision::kFp32;
  auto at_fp32 = OpenCampaignOnly(options, registry, log);
  ASSERT_TRUE(at_fp32.ok()) << at_fp32.status().message();
  EXPECT_NE(at_fp32->campaign_id, measured->campaign_id);
  EXPECT_EQ(at_fp32->done_before, 0u);
}

TEST(RandomEncoderNetwork, IsDeterministicTwoLayersAndWithinItsSize) {
  SplitMix64 a(4), b(4);
  for (int i = 0; i < 3; ++i) {
    auto first = RandomEncoderNetwork(a);
    auto second = RandomEncoderNetwork(b);
    ASSERT_TRUE(first.ok()) << first.status().message();
    ASSERT_TRUE(second.ok()) << second.status().message();
    EXPECT_EQ(first->num_nodes(), second->num_nodes());
    // Two layers: two softmaxes over the attention scores, each layer's 6 dense products
    // (4 projections, 2 in the MLP) and 2 batched matmuls of activations.
    int softmaxes = 0, products = 0;
    for (NodeId n = 0; n < static_cast<NodeId>(first->num_nodes()); ++n) {
      softmaxes += first->node(n).kind == OpKind::kSoftmax;
      products += first->node(n).kind == OpKind::kMatMul || first->node(n).kind == OpKind::kFullyConnected;
    }
    EXPECT_EQ(softmaxes, 2) << i;
    EXPECT_GE(products, 16) << i;  // and the head's (a classifier or BERT's pooler)
  }
}

// The third family: encoder models on a backend that runs attention, a campaign of its own whose
// layers include the encoders' matmuls, softmaxes and layer norms, each measured alone too.
TEST(GraphContext, MeasuresTransformerEncodersOnOnnxRuntime) {
  testing::TempDir dir;
  const std::string db = (dir.path() / "g.db").string();
  BackendRegistry registry;
  RegisterOrtBackend(registry);
  GraphContextOptions options = SmallCampaign(db);
  options.campaign.backend = "ort";
  options.campaign.reference_every = 0;
  options.family = NetworkFamily::kEncoder;
  options.seed = 25;  // small encoders (SmallCampaign's seed draws its MobileNets)
  // Three networks, every one measured: on a busy host a tiny kernel's time alone (the pooler's
  // one-row gather) falls within the noise of ORT's fixed run cost and comes to 0, which the layer
  // keeps; it once skipped its network, and on CI all three.
  options.graphs = 3;
  std::ostringstream log;
  auto encoders = RunGraphContext(options, registry, log);
  ASSERT_TRUE(encoders.ok()) << encoders.status().message();
  ASSERT_EQ(encoders->measured, 3u) << (encoders->skipped.empty() ? log.str() : encoders->skipped.front());
  auto store = Store::Open(db);
  ASSERT_TRUE(store.ok());
  auto campaigns = store->ListCampaigns();
  ASSERT_TRUE(campaigns.ok());
  ASSERT_EQ(campaigns->size(), 1u);
  EXPECT_EQ(nlohmann::json::parse(campaigns->front().space)["graphs"], "random-encoder");
  auto rows = store->QueryGraphLayers();
  ASSERT_TRUE(rows.ok());
  std::set<std::string> kinds;
  for (const StoredGraphLayer& row : *rows) {
    kinds.insert(row.record.kernel.Kind());
    EXPECT_GE(row.record.alone_us, 0) << row.record.kernel.Key();
    EXPECT_GE(row.record.in_graph_us, 0) << row.record.kernel.Key();
  }
  EXPECT_TRUE(kinds.count("matmul")) << ::testing::PrintToString(kinds);
  EXPECT_TRUE(kinds.count("softmax")) << ::testing::PrintToString(kinds);
  EXPECT_TRUE(kinds.count("layer_norm")) << ::testing::PrintToString(kinds);
}

// The first seed whose first encoder network is a small BERT (quick to run on any backend).
std::uint64_t SeedOfASmallBert() {
  for (std::uint64_t seed = 0; seed < 1000; ++seed) {
    SplitMix64 rng(seed);
    const DrawnEncoderNetwork drawn = DrawEncoderNetwork(rng);
    if (drawn.HasAttentionMask() && drawn.model.sequence <= 128 && drawn.model.hidden <= 128) return seed;
  }
  ADD_FAILURE() << "no BERT of at most 128 tokens and 128 features among the first 1000 draws";
  return 0;
}

int CastNodes(const Graph& graph) {
  int casts = 0;
  for (NodeId n = 0; n < static_cast<NodeId>(graph.num_nodes()); ++n) casts += graph.node(n).kind == OpKind::kCast;
  return casts;
}

TEST(DrawnEncoderNetwork, ABertsMaskOfOnesFoldsItsCast) {
  SplitMix64 rng(SeedOfASmallBert());
  const DrawnEncoderNetwork drawn = DrawEncoderNetwork(rng);
  ASSERT_TRUE(drawn.HasAttentionMask());
  auto as_drawn = drawn.Import();
  auto with_ones = drawn.Import(/*mask_of_ones=*/true);
  ASSERT_TRUE(as_drawn.ok()) << as_drawn.status().message();
  ASSERT_TRUE(with_ones.ok()) << with_ones.status().message();
  EXPECT_EQ(CastNodes(*as_drawn), 1);  // the mask's int64 → float
  EXPECT_EQ(CastNodes(*with_ones), 0);
  EXPECT_EQ(as_drawn->inputs.size(), 3u);  // input_ids, attention_mask, token_type_ids
  EXPECT_EQ(with_ones->inputs.size(), 2u);
  // The same network otherwise: the attention's softmaxes and products are all there.
  EXPECT_LT(with_ones->num_nodes(), as_drawn->num_nodes());
}

// oneDNN has no 64-bit integers, so it cannot run BERT's attention mask: such a network is
// measured with the mask given as all ones, not skipped (on oneDNN that was most of the family).
TEST(GraphContext, MeasuresABertOnOnednnWithItsMaskAsAllOnes) {
  testing::TempDir dir;
  BackendRegistry registry;
  RegisterOnednnBackend(registry);
  GraphContextOptions options = SmallCampaign((dir.path() / "g.db").string());
  options.campaign.backend = "onednn";
  options.campaign.reference_every = 0;
  options.family = NetworkFamily::kEncoder;
  options.seed = SeedOfASmallBert();
  options.graphs = 1;
  std::ostringstream log;
  auto result = RunGraphContext(options, registry, log);
  ASSERT_TRUE(result.ok()) << result.status().message();
  ASSERT_EQ(result->measured, 1u) << (result->skipped.empty() ? log.str() : result->skipped.front());
  EXPECT_NE(log.str().find("random-net 0 with its attention mask as all ones"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("cast from int64"), std::string::npos) << log.str();  // why, from oneDNN
  auto store = Store::Open(options.db);
  ASSERT_TRUE(store.ok());
  auto rows = store->QueryGraphLayers();
  ASSERT_TRUE(rows.ok());
  std::set<std::string> kinds;
  for (const StoredGraphLayer& row : *rows) kinds.insert(row.record.kernel.Kind());
  EXPECT_TRUE(kinds.count("softmax")) << ::testing::PrintToString(kinds);
  EXPECT_FALSE(kinds.count("cast")) << ::testing::PrintToString(kinds);
}

TEST(GraphContext, StopsWhenTheBudgetIsSpent) {
  testing::TempDir dir;
  BackendRegistry registry;
  RegisterXnnpackBackend(registry);
  GraphContextOptions options = SmallCampaign((dir.path() / "g.db").string());
  double now = 0;
  options.campaign.clock = [&] { return now += 10; };
  options.campaign.budget_secs = 5;
  std::ostringstream log;
  auto result = RunGraphContext(options, registry, log);
  ASSERT_TRUE(result.ok()) << result.status().message();
  EXPECT_TRUE(result->budget_spent);
  EXPECT_EQ(result->measured, 0u);
}

// A budget spent before the first network still measures the fewest networks a context fit
// needs (min_graphs), then stops; networks stored by an earlier run count towards them.
TEST(GraphContext, MeasuresTheFewestNetworksAFitNeedsEvenPastTheBudget) {
  testing::TempDir dir;
  BackendRegistry registry;
  RegisterXnnpackBackend(registry);
  GraphContextOptions options = SmallCampaign((dir.path() / "g.db").string());
  options.graphs = 3;
  options.min_graphs = 1;
  std::ostringstream log;
  auto first = OpenCampaignOnly(options, registry, log);
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ(first->measured, 1u);
  EXPECT_TRUE(first->skipped.empty());
  EXPECT_TRUE(first->budget_spent);
  // Again: the network stored before is the one the fit needs, so nothing more past the budget.
  auto again = OpenCampaignOnly(options, registry, log);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->done_before, first->measured);
  EXPECT_EQ(again->measured, 0u);
  EXPECT_TRUE(again->budget_spent);
}

}  // namespace
}  // namespace latte
