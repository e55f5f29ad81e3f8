// The bench view at --precision int8: which nodes ran int8, the conversions inserted, and each node
// kept at fp32 named with the backend's reason, in text and JSON.
#include "report/bench_view.h"

#include <gtest/gtest.h>

#include "ir/graph_builder.h"

namespace latte {
namespace {

TEST(BenchViewTest, Int8NamesEveryNodeKeptAtFp32WithWhy) {
  GraphBuilder gb;
  TensorId x = gb.Input("x", {1, 4, 4, 3});
  Attributes conv;
  conv.Set("filter_layout", std::string("OHWI"));
  conv.Set("padding", std::string("valid"));
  TensorId c = gb.Op1(OpKind::kConv2D, "conv", {x, gb.Constant("w", {8, 1, 1, 3}, std::vector<float>(24, 0.1f))}, conv);
  TensorId y = gb.Op1(OpKind::kSoftmax, "sm", {c});
  auto graph = gb.Finish({y});
  ASSERT_TRUE(graph.ok()) << graph.status().message();

  BenchResult result;
  result.assignments.resize(2);
  result.assignments[0].backend = result.assignments[1].backend = "xnnpack";
  result.assignments[0].precision = Precision::kInt8;
  result.assignments[1].precision = Precision::kFp32;
  result.assignments[1].precision_why = "xnnpack has no int8 softmax (qu8 only)";
  auto entry = [](std::string op, std::vector<NodeId> sources, Precision precision) {
    ProfileEntry e;
    e.op = e.name = std::move(op);
    e.inserted = sources.empty();
    e.sources = std::move(sources);
    e.backend = "xnnpack";
    e.precision = precision;
    return e;
  };
  result.entries = {entry("quantize", {}, Precision::kInt8), entry("conv2d", {0}, Precision::kInt8),
                    entry("dequantize", {}, Precision::kInt8), entry("softmax", {1}, Precision::kFp32)};
  result.drift.measured = true;
  result.drift.reference = "fp32";
  result.drift.max_abs_diff = 0.01;
  result.drift.cosine = 0.999;
  BenchOptions options;
  options.run.precision = Precision::kInt8;
  BenchView view(*graph, result, options, "m.tflite", 100);

  const std::string text = view.Text();
  EXPECT_NE(text.find("Precision: int8 for 1 of 2 nodes (conv2d 1), fp32 for 1; 1 quantize and 1 dequantize node(s) "
                      "inserted where they meet."),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Kept at fp32:\n  node 1 'sm' (softmax): xnnpack has no int8 softmax (qu8 only)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("Output drift vs fp32 (same backend, same inputs): max |diff| 0.010000, cosine 0.999000"), std::string::npos)
      << text;

  const nlohmann::json j = view.Json();
  EXPECT_EQ(j["int8"]["int8_nodes"], 1);
  EXPECT_EQ(j["int8"]["fp32_nodes"], 1);
  EXPECT_EQ(j["int8"]["node_precisions"], nlohmann::json({"int8", "fp32"}));
  ASSERT_EQ(j["int8"]["kept_fp32"].size(), 1u);
  EXPECT_EQ(j["int8"]["kept_fp32"][0]["node"], 1);
  EXPECT_EQ(j["int8"]["kept_fp32"][0]["op"], "softmax");
  EXPECT_EQ(j["int8"]["kept_fp32"][0]["why"], "xnnpack has no int8 softmax (qu8 only)");
  EXPECT_EQ(j["drift"]["cosine"], 0.999);

  options.run.precision = Precision::kFp32;  // other precisions: no int8 section
  BenchView fp32(*graph, result, options, "m.tflite", 100);
  EXPECT_EQ(fp32.Text().find("Kept at fp32"), std::string::npos);
  EXPECT_FALSE(fp32.Json().contains("int8"));
}

}  // namespace
}  // namespace latte
