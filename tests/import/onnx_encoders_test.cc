// The transformer encoders of profile/encoder_models, as PyTorch exports them, imported whole: every
// shape computed from Shape → Gather → Unsqueeze → Concat folds, however many layers deep.
#include "profile/encoder_models.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "import/import.h"

namespace latte {
namespace {

using encoders::EncoderConfig;

Graph ImportEncoder(const EncoderConfig& config) {
  const std::string bytes = encoders::ModelBytes(config);
  auto graph = ImportModelBytes({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()}, ModelFormat::kOnnx, {});
  EXPECT_TRUE(graph.ok()) << config.name << ": " << graph.status().message();
  return graph.ok() ? std::move(graph).value() : Graph{};
}

std::map<std::string, int> KindCounts(const Graph& graph) {
  std::map<std::string, int> counts;
  for (const Node& node : graph.nodes()) ++counts[std::string(OpName(node.kind))];
  return counts;
}

EncoderConfig SmallBert(int opset) {
  EncoderConfig c;
  c.name = "bert_small";
  c.layers = 2, c.hidden = 32, c.heads = 2, c.sequence = 8, c.vocab = 100, c.opset = opset;
  return c;
}

TEST(OnnxEncoders, ABertExportedAtOpset13ImportsWithEveryShapeFolded) {
  const Graph graph = ImportEncoder(SmallBert(13));
  const std::map<std::string, int> kinds = KindCounts(graph);
  EXPECT_EQ(kinds.count("opaque"), 0u);
  EXPECT_EQ(kinds.count("concat"), 0u);  // the heads' shapes folded into their reshapes
  // Per layer: Q, K, V, output and two MLP projections by constant weights (plus the pooler's),
  // attention's scores and context as matmuls of two activations, softmax and erf once.
  EXPECT_EQ(kinds.at("fully_connected"), 2 * 6 + 1);
  EXPECT_EQ(kinds.at("matmul"), 2 * 2);
  EXPECT_EQ(kinds.at("softmax"), 2);
  EXPECT_EQ(kinds.at("erf"), 2);
  EXPECT_EQ(kinds.at("sqrt"), 1 + 2 * 2);  // the decomposed layer norms: embeddings' and two a layer
  for (const Node& node : graph.nodes())
    for (TensorId t : node.outputs) EXPECT_TRUE(graph.tensor(t).fully_known()) << node.name;
  ASSERT_EQ(graph.outputs.size(), 2u);
  EXPECT_EQ(graph.tensor(graph.outputs[0]).shape, (Shape{1, 8, 32}));
  EXPECT_EQ(graph.tensor(graph.outputs[1]).shape, (Shape{1, 32}));
}

TEST(OnnxEncoders, ABertExportedAtOpset17ImportsItsLayerNormsWhole) {
  const Graph graph = ImportEncoder(SmallBert(17));
  const std::map<std::string, int> kinds = KindCounts(graph);
  EXPECT_EQ(kinds.count("opaque"), 0u);
  EXPECT_EQ(kinds.at("layer_norm"), 1 + 2 * 2);
  EXPECT_EQ(kinds.count("sqrt"), 0u);
  EXPECT_EQ(kinds.at("erf"), 2);  // GELU stays written out below opset 20
  ASSERT_EQ(graph.outputs.size(), 2u);
  EXPECT_EQ(graph.tensor(graph.outputs[0]).shape, (Shape{1, 8, 32}));
}

// Each layer's head shapes are computed from the layer before's output, beyond where ONNX's
// inference reaches in one round: folded two rounds a layer, 48 layers would take 97 rounds, six
// times the importer's cap. Latte's own inference of what ONNX left unknown folds them in a few.
TEST(OnnxEncoders, AFortyEightLayerVitFoldsEveryLayersShapes) {
  EncoderConfig c;
  c.name = "vit_small";
  c.layers = 48, c.hidden = 16, c.heads = 2, c.image = 32, c.patch = 16, c.classes = 10, c.opset = 13;
  const Graph graph = ImportEncoder(c);
  const std::map<std::string, int> kinds = KindCounts(graph);
  EXPECT_EQ(kinds.count("opaque"), 0u);
  EXPECT_EQ(kinds.at("matmul"), 48 * 2);
  EXPECT_EQ(kinds.at("reshape"), 1 + 48 * 4);  // the patches', then Q, K, V and the context's
  for (const Node& node : graph.nodes())
    for (TensorId t : node.outputs) EXPECT_TRUE(graph.tensor(t).fully_known()) << node.name;
  ASSERT_EQ(graph.outputs.size(), 1u);
  EXPECT_EQ(graph.tensor(graph.outputs[0]).shape, (Shape{1, 10}));
}

TEST(OnnxEncoders, ThePublishedShapesAreBertMiniAndVitTinyAtBothOpsets) {
  const std::vector<EncoderConfig> shapes = encoders::PublishedShapes(100);
  ASSERT_EQ(shapes.size(), 10u);
  EXPECT_EQ(shapes[1].name, "bert_mini_seq128_opset17");
  EXPECT_EQ(shapes[1].hidden, 256);
  EXPECT_EQ(shapes[1].layers, 4);
  EXPECT_EQ(shapes[4].name, "vit_tiny_224_opset17");
  EXPECT_EQ(shapes[9].name, "vit_tiny_224_opset13");
  EXPECT_EQ(shapes[9].opset, 13);
  EXPECT_THROW(encoders::ModelBytes([] {
                 EncoderConfig bad = SmallBert(13);
                 bad.heads = 3;  // does not divide 32
                 return bad;
               }()),
               std::invalid_argument);
}

}  // namespace
}  // namespace latte
