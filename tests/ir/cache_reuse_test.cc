#include "ir/cache_reuse.h"

#include <gtest/gtest.h>

#include "ir/graph_builder.h"

namespace latte {
namespace {

// Worked by hand (cache 500 bytes): layer 0 (weights 100, a 10-byte graph input, 10-byte output)
// is small enough to stay cached alone, but layer 1's 1000-byte weights come in between two
// inferences, so inside the graph all 120 bytes it touches are missed. Layer 1 alone misses 52%
// of its weights (1020 bytes touched each run) and its 10-byte input and output; in the graph
// 63% of its weights (layer 0's 120 bytes came in too), its output, but not its input, which
// layer 0 has just written: 630 + 10 − (520 + 10 + 10) = 100.
std::vector<LayerTraffic> TwoLayers() {
  LayerTraffic first{100, 10, {{-1, 10}}};
  LayerTraffic second{1000, 10, {{0, 10}}};
  return {first, second};
}

TEST(CacheReuse, ExtraMissesMatchTheHandWorkedExample) {
  const std::vector<double> extra = ExtraMissBytes(TwoLayers(), 500);
  ASSERT_EQ(extra.size(), 2u);
  EXPECT_DOUBLE_EQ(extra[0], 120);
  EXPECT_DOUBLE_EQ(extra[1], 100);
}

TEST(CacheReuse, NothingExtraWhenTheWholeGraphFits) {
  for (double e : ExtraMissBytes(TwoLayers(), 1 << 20)) EXPECT_DOUBLE_EQ(e, 0);
}

TEST(CacheReuse, NothingExtraWhenNothingFitsEvenAlone) {
  for (double e : ExtraMissBytes(TwoLayers(), 1)) EXPECT_NEAR(e, 0, 1e-9);
}

TEST(CacheReuse, EmptyGraphHasNoLayers) { EXPECT_TRUE(ExtraMissBytes({}, 100).empty()); }

// Ten layers in a chain, each reading the one before and writing 64 KiB, on a 512 KiB cache. Each
// tensor in its own memory, the graph's eleven (704 KiB) do not fit: a layer's output buffer was
// last written an inference ago and is gone, though alone (128 KiB touched) it stays; the first
// layer's input, written before the run, is gone too. In the executor's arena the graph input
// keeps its slot and the outputs take turns in two beside it, 192 KiB in all: always found.
std::vector<LayerTraffic> Chain() {
  constexpr std::int64_t kTensor = 64 << 10;
  std::vector<LayerTraffic> chain;
  for (int i = 0; i < 10; ++i) chain.push_back({0, kTensor, {{i - 1, kTensor}}});
  return chain;
}

TEST(CacheReuse, TheArenaKeepsAChainInACacheItsOwnBuffersOverflow) {
  const std::vector<double> own = ExtraMissBytes(Chain(), 512 << 10, TensorMemory::kOwnBuffers);
  const std::vector<double> arena = ExtraMissBytes(Chain(), 512 << 10, TensorMemory::kArena);
  ASSERT_EQ(own.size(), 10u);
  ASSERT_EQ(arena.size(), 10u);
  EXPECT_DOUBLE_EQ(own[0], 2 * (64 << 10));  // its input and its output
  for (std::size_t i = 1; i < own.size(); ++i) EXPECT_DOUBLE_EQ(own[i], 64 << 10) << "layer " << i;
  for (std::size_t i = 0; i < arena.size(); ++i) EXPECT_DOUBLE_EQ(arena[i], 0) << "layer " << i;
  // A 160 KiB cache holds a layer alone (128 KiB) but not the arena's three slots: the graph
  // input, last read an inference ago, is gone, and so is the slot the second layer writes, last
  // written by the tenth (all but the 4 KiB blocks it shares with its neighbours); the others
  // write the slot the layer before read, still there.
  const std::vector<double> small = ExtraMissBytes(Chain(), 160 << 10, TensorMemory::kArena);
  EXPECT_DOUBLE_EQ(small[0], 64 << 10);
  EXPECT_GT(small[1], 0.9 * (64 << 10));
  EXPECT_LE(small[1], 64 << 10);
  for (std::size_t i = 2; i < small.size(); ++i) EXPECT_DOUBLE_EQ(small[i], 0) << "layer " << i;
}

TEST(CacheReuse, TheArenaAgreesWithOwnBuffersWhenEverythingFitsOrNothingDoes) {
  for (double e : ExtraMissBytes(TwoLayers(), 1 << 20, TensorMemory::kArena)) EXPECT_DOUBLE_EQ(e, 0);
  for (double e : ExtraMissBytes(Chain(), 4 << 10, TensorMemory::kArena)) EXPECT_NEAR(e, 0, 1e-6);
  EXPECT_TRUE(ExtraMissBytes({}, 100, TensorMemory::kArena).empty());
}

TEST(CacheReuse, TrafficOfAGraphSplitsWeightsInputsAndOutputs) {
  // conv (weights 4·3·3·2 + 4 floats) then add of the conv's output and the graph input.
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 8, 8, 4});
  TensorId w = b.Constant("w", {4, 3, 3, 4});
  TensorId bias = b.Constant("b", {4});
  Attributes a;
  a.Set("filter_layout", "OHWI");
  a.Set("padding", "same");
  TensorId y = b.Op1(OpKind::kConv2D, "conv", {x, w, bias}, a);
  TensorId z = b.Op1(OpKind::kAdd, "add", {y, x});
  auto g = b.Finish({z});
  ASSERT_TRUE(g.ok()) << g.status().message();
  const std::int64_t map = 8 * 8 * 4 * 4;
  const auto traffic = LayerTrafficOf(*g, {{0}, {1}});
  ASSERT_EQ(traffic.size(), 2u);
  EXPECT_EQ(traffic[0], (LayerTraffic{(4 * 3 * 3 * 4 + 4) * 4, map, {{-1, map}}}));
  EXPECT_EQ(traffic[1], (LayerTraffic{0, map, {{0, map}, {-1, map}}}));
  // One layer of both nodes: the conv's output stays inside it.
  const auto fused = LayerTrafficOf(*g, {{0, 1}});
  ASSERT_EQ(fused.size(), 1u);
  EXPECT_EQ(fused[0].inputs, (std::vector<std::pair<int, std::int64_t>>{{-1, map}, {-1, map}}));
}

// An embedding's gather reads the rows it gathers from its constant table, not the table: a
// BERT's 31 MB of word embeddings counted whole flushed every later layer's weights from L3.
TEST(CacheReuse, AGatherFromATableTouchesTheRowsItGathers) {
  GraphBuilder b;
  TensorId ids = b.Input("ids", {1, 6}, DataType::kInt64);
  TensorId table = b.Constant("table", {1000, 16});
  Attributes a;
  a.Set("axis", std::int64_t{0});
  TensorId rows = b.Op1(OpKind::kGather, "embed", {table, ids}, a);
  auto g = b.Finish({rows});
  ASSERT_TRUE(g.ok()) << g.status().message();
  const auto traffic = LayerTrafficOf(*g, {{0}});
  ASSERT_EQ(traffic.size(), 1u);
  EXPECT_EQ(traffic[0], (LayerTraffic{6 * 16 * 4, 6 * 16 * 4, {{-1, 6 * 8}}}));  // not 1000 · 16 · 4
}

TEST(CacheReuse, InputsTextRoundTripsAndBadTextIsNamed) {
  LayerTraffic layer{0, 0, {{3, 4096}, {-1, 1024}}};
  EXPECT_EQ(InputsToText(layer), "3:4096,-1:1024");
  auto parsed = ParseInputsText("3:4096,-1:1024");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, layer.inputs);
  EXPECT_TRUE(ParseInputsText("")->empty());
  for (const char* bad : {"3", "3:", ":5", "3:x", "-2:5", "1:-4", "3:4096,"}) {
    auto r = ParseInputsText(bad);
    EXPECT_FALSE(r.ok()) << bad;
  }
  EXPECT_NE(ParseInputsText("3:4096,zz").status().message().find("'zz'"), std::string::npos);
}

}  // namespace
}  // namespace latte
