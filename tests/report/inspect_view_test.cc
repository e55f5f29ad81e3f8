#include "report/inspect_view.h"

#include <gtest/gtest.h>

#include "ir/graph_builder.h"

namespace latte {
namespace {

using Ints = std::vector<std::int64_t>;

Graph SmallGraph() {
  GraphBuilder b;
  TensorId x = b.Input("image", {1, 8, 8, 3});
  Attributes conv;
  conv.Set("filter_layout", "OHWI");
  conv.Set("strides", Ints{2, 2});
  conv.Set("padding", "same");
  conv.Set("activation", "relu6");
  TensorId w = b.Constant("w", {4, 3, 3, 3});
  TensorId c = b.Op1(OpKind::kConv2D, "conv", {x, w, b.Constant("b", {4})}, conv);
  TensorId c2 = b.Op1(OpKind::kConv2D, "conv_shared", {c, b.Constant("w1x1", {4, 1, 1, 4})}, [] {
    Attributes a;
    a.Set("filter_layout", "OHWI");
    return a;
  }());
  TensorId o = b.Op1(OpKind::kOpaque, "mystery", {c2});
  b.graph().mutable_node(2).source_op = "MysteryOp";
  b.graph().mutable_node(2).unsupported_reason = "custom op 'MysteryOp' is not supported by Latte";
  b.graph().mutable_tensor(o).shape = {1, 4, 4, 4};
  b.graph().mutable_tensor(o).shape_known = true;
  auto g = b.Finish({o});
  EXPECT_TRUE(g.ok()) << g.status().message();
  return *g;
}

TEST(InspectView, JsonCarriesNodesTotalsAndUncovered) {
  Graph g = SmallGraph();
  nlohmann::json j = InspectView(g, "small.tflite").Json();
  ASSERT_EQ(j["nodes"].size(), 3u);
  const auto& conv = j["nodes"][0];
  EXPECT_EQ(conv["index"], 0);
  EXPECT_EQ(conv["op"], "conv2d");
  EXPECT_EQ(conv["name"], "conv");
  EXPECT_EQ(conv["inputs"][0]["shape"], nlohmann::json({1, 8, 8, 3}));
  EXPECT_EQ(conv["outputs"][0]["shape"], nlohmann::json({1, 4, 4, 4}));
  EXPECT_EQ(conv["macs"], 4 * 4 * 4 * 3 * 3 * 3);
  EXPECT_EQ(conv["params"], 4 * 27 + 4);
  EXPECT_EQ(conv["geometry"], "k3x3 s2 pad=same(0,0,1,1) relu6");
  EXPECT_EQ(conv["attributes"]["activation"], "relu6");
  EXPECT_EQ(j["nodes"][2]["op"], "MysteryOp");
  EXPECT_EQ(j["nodes"][2]["supported"], false);
  EXPECT_TRUE(j["nodes"][2]["macs"].is_null());
  EXPECT_EQ(j["totals"]["nodes"], 3);
  EXPECT_EQ(j["totals"]["macs"], 4 * 4 * 4 * 27 + 4 * 4 * 4 * 4);
  EXPECT_EQ(j["totals"]["params"], 4 * 27 + 4 + 16);
  EXPECT_EQ(j["totals"]["unsupported_nodes"], 1);
  // The bytes column summed: each node's weights, inputs and outputs (conv 448 + 768 + 256, the
  // 1x1 conv 64 + 256 + 256; the unknown op has no cost).
  std::int64_t moved = 0;
  for (const auto& node : j["nodes"])
    if (!node["macs"].is_null())
      moved += node["weight_bytes"].get<std::int64_t>() + node["input_bytes"].get<std::int64_t>() +
               node["output_bytes"].get<std::int64_t>();
  EXPECT_EQ(moved, 2048);
  EXPECT_EQ(j["totals"]["bytes_moved"], 2048);
  ASSERT_EQ(j["uncovered"].size(), 1u);
  EXPECT_EQ(j["uncovered"][0]["node"], 2);
  EXPECT_NE(j["uncovered"][0]["why"].get<std::string>().find("MysteryOp"), std::string::npos);
}

TEST(InspectView, TextHasARowPerNodeTotalsAndCoverage) {
  Graph g = SmallGraph();
  std::string text = InspectView(g, "small.tflite").Text();
  EXPECT_NE(text.find("input:  image 1x8x8x3 float32"), std::string::npos) << text;
  EXPECT_NE(text.find("conv_shared"), std::string::npos);
  EXPECT_NE(text.find("MysteryOp (unsupported)"), std::string::npos);
  EXPECT_NE(text.find("totals: 3 nodes, 1,984 MACs"), std::string::npos) << text;
  // The total row sums the MACs, params and bytes columns.
  const std::size_t row = text.find(" total ");
  ASSERT_NE(row, std::string::npos) << text;
  const std::string total = text.substr(row, text.find('\n', row) - row);
  EXPECT_EQ(total.substr(total.size() - 5), "2,048") << total;
  EXPECT_NE(total.find(" 1,984 "), std::string::npos) << total;
  EXPECT_NE(total.find(" 128 "), std::string::npos) << total;
  EXPECT_NE(text.find("coverage: 1 unsupported node(s)"), std::string::npos) << text;
}

}  // namespace
}  // namespace latte

namespace latte {
namespace {

TEST(InspectView, NamesThatAreNotUtf8DoNotAbortTheJson) {
  Graph g = SmallGraph();
  g.mutable_node(0).name = "conv\xae\x9a";
  std::string text = DumpJson(InspectView(g, "m.onnx").Json());
  EXPECT_NE(text.find("conv\xef\xbf\xbd"), std::string::npos);  // U+FFFD in UTF-8
}

}  // namespace
}  // namespace latte
