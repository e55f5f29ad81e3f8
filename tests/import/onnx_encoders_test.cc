// The transformer encoders of profile/encoder_models, as PyTorch exports them, imported whole: every
// shape computed from Shape → Gather → Unsqueeze → Concat folds, however many layers deep.
#include "profile/encoder_models.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

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

TEST(OnnxEncoders, ThePublishedShapesAreBertMiniVitTinyAndMobileVitAtBothOpsets) {
  const std::vector<EncoderConfig> shapes = encoders::PublishedShapes(100);
  ASSERT_EQ(shapes.size(), 14u);
  EXPECT_EQ(shapes[1].name, "bert_mini_seq128_opset17");
  EXPECT_EQ(shapes[1].hidden, 256);
  EXPECT_EQ(shapes[1].layers, 4);
  EXPECT_EQ(shapes[4].name, "vit_tiny_224_opset17");
  EXPECT_EQ(shapes[6].name, "mobilevit_xx_small_256_opset17");
  EXPECT_EQ(shapes[6].channels, (std::vector<int>{16, 16, 24, 48, 64, 80, 320}));
  EXPECT_EQ(shapes[6].block_hidden, (std::vector<int>{64, 80, 96}));
  EXPECT_EQ(shapes[6].block_layers, (std::vector<int>{2, 4, 3}));
  EXPECT_EQ(shapes[11].name, "vit_tiny_224_opset13");
  EXPECT_EQ(shapes[11].opset, 13);
  EXPECT_EQ(shapes[12].name, "mobilevit_xx_small_192_opset13");
  EXPECT_THROW(encoders::ModelBytes([] {
                 EncoderConfig bad = SmallBert(13);
                 bad.heads = 3;  // does not divide 32
                 return bad;
               }()),
               std::invalid_argument);
  EXPECT_THROW(encoders::ModelBytes([&] {
                 EncoderConfig bad = shapes[6];
                 bad.image = 160;  // the last block's 5×5 map is not a whole number of 2×2 patches
                 return bad;
               }()),
               std::invalid_argument);
}

// Every published shape, as bench/make_encoders writes it, imports with every tensor's shape known
// and no opaque node.
TEST(OnnxEncoders, EveryPublishedShapeImportsWithEveryShapeKnown) {
  for (const EncoderConfig& config : encoders::PublishedShapes(100)) {
    SCOPED_TRACE(config.name);
    const Graph graph = ImportEncoder(config);
    ASSERT_FALSE(graph.nodes().empty());
    EXPECT_EQ(KindCounts(graph).count("opaque"), 0u);
    int unknown = 0;
    for (const Node& node : graph.nodes())
      for (TensorId t : node.outputs) unknown += graph.tensor(t).fully_known() ? 0 : 1;
    EXPECT_EQ(unknown, 0);
  }
}

EncoderConfig MobileVitXxSmall(int opset) {
  for (const EncoderConfig& c : encoders::PublishedShapes(100))
    if (c.name == "mobilevit_xx_small_256_opset" + std::to_string(opset)) return c;
  ADD_FAILURE() << "no MobileViT-xx-small at opset " << opset;
  return {};
}

// What the builder writes for MobileViT-xx-small (HF's apple/mobilevit-xx-small): 35 convs (the
// stem; 3 in each of the 7 inverted residuals, 1 + 3 in stages 1 and 2 and one downsampling each
// MobileViT block; 4 more a block; the 1×1 expansion), 7 of them depthwise; 9 transformer layers
// (2 + 4 + 3) of 8 MatMuls (6 projections, 2 of two activations), one Softmax, 2 layer norms and
// 8 Adds (6 biases, 2 residuals); a layer norm after each block's layers; 3 residual adds of the
// stride-1 inverted residuals; SiLU as Sigmoid → Mul after 25 convs and in 9 MLPs; 4 Reshapes and
// 4 Transposes a layer (the heads), 3 and 2 each to unfold a block and as many to fold it back.
TEST(OnnxEncoders, MobileVitXxSmallWritesTheNodesOfItsBlocks) {
  const std::string bytes = encoders::ModelBytes(MobileVitXxSmall(17));
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(bytes));
  std::map<std::string, int> ops;
  for (const onnx::NodeProto& node : model.graph().node()) ++ops[node.op_type()];
  EXPECT_EQ(ops["Conv"], 35);
  EXPECT_EQ(ops["MatMul"], 9 * 8);
  EXPECT_EQ(ops["Softmax"], 9);
  EXPECT_EQ(ops["LayerNormalization"], 9 * 2 + 3);
  EXPECT_EQ(ops["Add"], 9 * 8 + 3);
  EXPECT_EQ(ops["Sigmoid"], 25 + 9);
  EXPECT_EQ(ops["Mul"], 25 + 9 + 3 * 5);  // and each block's sizes: batch · channels · rows twice, batch · 4
  EXPECT_EQ(ops["Reshape"], 9 * 4 + 3 * 6);
  EXPECT_EQ(ops["Transpose"], 9 * 4 + 3 * 4);
  EXPECT_EQ(ops["Concat"], 9 * 4 + 3 * 7);  // shapes, and each block's input with its features
  EXPECT_EQ(ops["ReduceMean"], 1);
  EXPECT_EQ(ops["Gemm"], 1);
  EXPECT_EQ(model.graph().initializer_size(), 219);
}

TEST(OnnxEncoders, MobileVitXxSmallImportsWithItsAttentionAndShapesKnown) {
  for (int opset : {17, 13}) {
    SCOPED_TRACE(opset);
    const Graph graph = ImportEncoder(MobileVitXxSmall(opset));
    std::map<std::string, int> kinds = KindCounts(graph);
    EXPECT_EQ(kinds.count("opaque"), 0u);
    EXPECT_EQ(kinds["conv2d"], 28);
    EXPECT_EQ(kinds["depthwise_conv2d"], 7);
    EXPECT_EQ(kinds["fully_connected"], 9 * 6 + 1);  // the projections and the classifier
    EXPECT_EQ(kinds["matmul"], 9 * 2);  // attention's scores and context, two activations each
    EXPECT_EQ(kinds["softmax"], 9);
    EXPECT_EQ(kinds["sigmoid"], 34);
    EXPECT_EQ(kinds["concat"], 3);  // the shapes' concats folded into their reshapes
    EXPECT_EQ(kinds["reshape"], 9 * 4 + 3 * 6);
    EXPECT_EQ(kinds["transpose"], 9 * 4 + 3 * 4);
    EXPECT_EQ(kinds["layer_norm"], opset >= 17 ? 21 : 0);
    EXPECT_EQ(kinds["sqrt"], opset >= 17 ? 0 : 21);
    for (const Node& node : graph.nodes())
      for (TensorId t : node.outputs) EXPECT_TRUE(graph.tensor(t).fully_known()) << node.name;
    ASSERT_EQ(graph.outputs.size(), 1u);
    EXPECT_EQ(graph.tensor(graph.outputs[0]).shape, (Shape{1, 1000}));
  }
}

}  // namespace
}  // namespace latte
