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
