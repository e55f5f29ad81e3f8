// The TFLite importer on the real MediaPipe models: every model imports with no opaque node,
// and what the graph says (node counts per kind, inputs, outputs, parameters, activations,
// layer attributes) matches both numbers written down here and an independent walk of the
// file with a tiny unchecked reader.

#include "import/tflite/tflite_importer.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "test_paths.h"
#include "core/file.h"
#include "import/import.h"
#include "ir/half.h"
#include "tflite_test_builder.h"

namespace latte {
namespace {

using testing::tfl::RawReader;

struct ModelExpectation;
void PrintTo(const ModelExpectation& e, std::ostream* os);

// What a model file holds, counted straight from the bytes.
struct FileFacts {
  std::map<OpKind, int> kinds;             // after folding DEQUANTIZE/DENSIFY of constants
  std::map<std::string, int> activations;  // "conv2d:relu6" → count, for ops with a fused one
  int folded = 0;                          // DEQUANTIZE / DENSIFY of constants
  int operators = 0;                       // all operators in the file
  std::vector<Shape> inputs, outputs;
  std::int64_t params = 0;  // elements of constant weights read by operators
};

// The builtin ops these models use, by code, as the importer should map them.
const std::map<std::int32_t, OpKind> kKindOfCode = {
    {0, OpKind::kAdd},
    {1, OpKind::kAvgPool2D},
    {2, OpKind::kConcat},
    {3, OpKind::kConv2D},
    {4, OpKind::kDepthwiseConv2D},
    {5, OpKind::kDepthToSpace},
    {6, OpKind::kDequantize},
    {9, OpKind::kFullyConnected},
    {14, OpKind::kSigmoid},
    {17, OpKind::kMaxPool2D},
    {18, OpKind::kMul},
    {19, OpKind::kRelu},
    {22, OpKind::kReshape},
    {23, OpKind::kResize},
    {34, OpKind::kPad},
    {40, OpKind::kMean},
    {117, OpKind::kHardSwish},
};
// Inputs that are configuration, not weights: PAD paddings, RESHAPE shape, RESIZE size,
// MEAN axes (the importer turns them into attributes).
const std::set<std::int32_t> kConfigInput1 = {22, 23, 34, 40};
// Field id of fused_activation_function in the options of ops that have one.
const std::map<std::int32_t, int> kActivationField = {{0, 0}, {1, 5}, {3, 3}, {4, 4}, {9, 0}, {17, 5}, {18, 0}};
const char* const kActivationNames[] = {"none", "relu", "relu_n1_to_1", "relu6", "tanh", "sign_bit"};

FileFacts ReadFacts(const std::vector<std::uint8_t>& bytes) {
  RawReader r(bytes);
  FileFacts f;
  const std::size_t model = r.Root();
  std::vector<std::pair<std::int32_t, std::string>> codes;
  const std::size_t code_vec = r.Vector(model, 1);
  for (std::size_t i = 0; i < r.Length(code_vec); ++i) {
    const std::size_t c = r.TableAt(code_vec, i);
    std::int32_t code = std::max<std::int32_t>(r.Scalar<std::int8_t>(c, 0, 0), r.Scalar<std::int32_t>(c, 3, 0));
    codes.push_back({code, r.String(c, 1)});
  }
  const std::size_t buffers = r.Vector(model, 4);
  const std::size_t sg = r.TableAt(r.Vector(model, 2), 0);
  const std::size_t tensors = r.Vector(sg, 0);
  auto shape_of = [&](std::int32_t t) {
    auto dims = r.Values<std::int32_t>(r.TableAt(tensors, static_cast<std::size_t>(t)), 0);
    return Shape(dims.begin(), dims.end());
  };
  std::vector<bool> has_data(r.Length(tensors));
  for (std::size_t t = 0; t < has_data.size(); ++t) {
    const auto buffer = r.Scalar<std::uint32_t>(r.TableAt(tensors, t), 2, 0);
    has_data[t] = buffer != 0 && r.Length(r.Vector(r.TableAt(buffers, buffer), 0)) > 0;
  }
  std::vector<bool> constant = has_data;  // plus outputs of folded operators
  for (std::int32_t t : r.Values<std::int32_t>(sg, 1)) f.inputs.push_back(shape_of(t));
  for (std::int32_t t : r.Values<std::int32_t>(sg, 2)) f.outputs.push_back(shape_of(t));

  std::set<std::int32_t> weights;
  const std::size_t ops = r.Vector(sg, 3);
  for (std::size_t i = 0; i < r.Length(ops); ++i) {
    const std::size_t op = r.TableAt(ops, i);
    ++f.operators;
    const auto& [code, custom] = codes[r.Scalar<std::uint32_t>(op, 0, 0)];
    auto ins = r.Values<std::int32_t>(op, 1);
    auto outs = r.Values<std::int32_t>(op, 2);
    for (std::size_t k = 0; k < ins.size(); ++k)
      if (ins[k] >= 0 && has_data[static_cast<std::size_t>(ins[k])] && !(k == 1 && kConfigInput1.count(code)))
        weights.insert(ins[k]);
    if ((code == 6 || code == 124) && constant[static_cast<std::size_t>(ins[0])]) {
      constant[static_cast<std::size_t>(outs[0])] = true;  // folded: its output is a constant now
      ++f.folded;
      continue;
    }
    OpKind kind;
    if (code == 32) {
      EXPECT_EQ(custom, "Convolution2DTransposeBias");
      kind = OpKind::kTransposeConv2D;
    } else {
      auto it = kKindOfCode.find(code);
      if (it == kKindOfCode.end()) {
        ADD_FAILURE() << "op code " << code << " not expected in these models";
        continue;
      }
      kind = it->second;
    }
    ++f.kinds[kind];
    if (auto a = kActivationField.find(code); a != kActivationField.end()) {
      const std::size_t options = r.Field(op, 4);
      const std::int8_t act =
          options == 0 ? 0 : r.Scalar<std::int8_t>(options + r.Read<std::uint32_t>(options), a->second, 0);
      ++f.activations[std::string(OpName(kind)) + ":" + kActivationNames[act]];
    }
  }
  for (std::int32_t t : weights) {
    std::int64_t n = 1;
    for (auto d : shape_of(t)) n *= d;
    f.params += n;
  }
  return f;
}

std::map<OpKind, int> CountKinds(const Graph& g) {
  std::map<OpKind, int> out;
  for (const Node& n : g.nodes()) ++out[n.kind];
  return out;
}

std::int64_t CountParams(const Graph& g) {
  std::set<TensorId> seen;
  std::int64_t total = 0;
  for (const Node& n : g.nodes())
    for (TensorId t : n.inputs)
      if (t != kNoTensor && g.tensor(t).is_constant() && seen.insert(t).second) total += *g.tensor(t).num_elements();
  return total;
}

const Node* FirstOf(const Graph& g, OpKind kind) {
  for (const Node& n : g.nodes())
    if (n.kind == kind) return &n;
  return nullptr;
}

struct ModelExpectation {
  const char* file;
  std::size_t nodes;
  std::map<OpKind, int> kinds;
  Shape input;
  std::vector<Shape> outputs;
  std::int64_t params;
  Shape first_conv_weights;
  const char* first_conv_padding;
  const char* first_conv_activation;
  std::map<std::string, int> activations;  // a few written down; all are checked against the file
};

using K = OpKind;
const std::vector<ModelExpectation> kModels = {
    {"face_detection_short_range.tflite",
     90,
     {{K::kAdd, 16},
      {K::kConcat, 2},
      {K::kConv2D, 21},
      {K::kDepthwiseConv2D, 16},
      {K::kMaxPool2D, 3},
      {K::kPad, 11},
      {K::kRelu, 17},
      {K::kReshape, 4}},
     {1, 128, 128, 3},
     {{1, 896, 16}, {1, 896, 1}},
     101390,
     {24, 5, 5, 3},
     "same",
     "none",
     {{"conv2d:none", 21}}},
    {"face_detection_full_range.tflite",
     176,
     {{K::kAdd, 23},
      {K::kConv2D, 49},
      {K::kDepthwiseConv2D, 40},
      {K::kMaxPool2D, 4},
      {K::kPad, 8},
      {K::kRelu, 47},
      {K::kReshape, 2},
      {K::kResize, 3}},
     {1, 192, 192, 3},
     {{1, 2304, 16}, {1, 2304, 1}},
     514069,
     {32, 3, 3, 3},
     "same",
     "none",
     {{"add:none", 23}}},
    {"face_detection_full_range_sparse.tflite",
     160,
     {{K::kAdd, 19},
      {K::kConv2D, 49},
      {K::kDepthToSpace, 2},
      {K::kDepthwiseConv2D, 42},
      {K::kPad, 43},
      {K::kReshape, 2},
      {K::kResize, 3}},
     {1, 192, 192, 3},
     {{1, 2304, 16}, {1, 2304, 1}},
     508308,
     {32, 3, 3, 3},
     "valid",
     "relu",
     {{"conv2d:relu", 31}, {"add:relu", 16}}},
    {"selfie_segmentation.tflite",
     136,
     {{K::kAdd, 14},
      {K::kAvgPool2D, 10},
      {K::kConv2D, 43},
      {K::kDepthwiseConv2D, 11},
      {K::kHardSwish, 11},
      {K::kMul, 10},
      {K::kRelu, 22},
      {K::kResize, 3},
      {K::kSigmoid, 11},
      {K::kTransposeConv2D, 1}},
     {1, 256, 256, 3},
     {{1, 256, 256, 1}},
     106401,
     {16, 3, 3, 3},
     "same",
     "none",
     {{"avg_pool2d:none", 10}}},
    {"selfie_segmentation_landscape.tflite",
     136,
     {{K::kAdd, 14},
      {K::kConv2D, 43},
      {K::kDepthwiseConv2D, 11},
      {K::kHardSwish, 11},
      {K::kMean, 10},
      {K::kMul, 10},
      {K::kRelu, 22},
      {K::kResize, 3},
      {K::kSigmoid, 11},
      {K::kTransposeConv2D, 1}},
     {1, 144, 256, 3},
     {{1, 144, 256, 1}},
     106401,
     {16, 3, 3, 3},
     "same",
     "none",
     {{"conv2d:none", 43}}},
    {"hand_landmark_lite.tflite",
     65,
     {{K::kAdd, 10},
      {K::kConv2D, 31},
      {K::kDepthwiseConv2D, 16},
      {K::kFullyConnected, 4},
      {K::kMaxPool2D, 1},
      {K::kMean, 1},
      {K::kSigmoid, 2}},
     {1, 224, 224, 3},
     {{1, 63}, {1, 1}, {1, 1}, {1, 63}},
     1011712,
     {24, 3, 3, 3},
     "same",
     "relu6",
     {{"conv2d:relu6", 16}, {"depthwise_conv2d:relu6", 16}, {"fully_connected:none", 4}}},
    {"hand_landmark_full.tflite",
     63,
     {{K::kAdd, 9},
      {K::kConv2D, 31},
      {K::kDepthwiseConv2D, 16},
      {K::kFullyConnected, 4},
      {K::kMean, 1},
      {K::kSigmoid, 2}},
     {1, 224, 224, 3},
     {{1, 63}, {1, 1}, {1, 1}, {1, 63}},
     2715680,
     {24, 3, 3, 3},
     "same",
     "relu6",
     {{"conv2d:relu6", 16}}},
    {"pose_landmark_lite.tflite",
     129,
     {{K::kAdd, 25},
      {K::kConv2D, 54},
      {K::kDepthwiseConv2D, 34},
      {K::kMaxPool2D, 2},
      {K::kPad, 5},
      {K::kReshape, 3},
      {K::kResize, 5},
      {K::kSigmoid, 1}},
     {1, 256, 256, 3},
     {{1, 195}, {1, 1}, {1, 256, 256, 1}, {1, 64, 64, 39}, {1, 117}},
     1363089,
     {24, 3, 3, 3},
     "valid",
     "relu6",
     {{"add:relu6", 12}, {"depthwise_conv2d:relu6", 34}}},
    {"pose_landmark_full.tflite",
     140,
     {{K::kAdd, 28},
      {K::kConv2D, 58},
      {K::kDepthwiseConv2D, 38},
      {K::kMaxPool2D, 2},
      {K::kPad, 5},
      {K::kReshape, 3},
      {K::kResize, 5},
      {K::kSigmoid, 1}},
     {1, 256, 256, 3},
     {{1, 195}, {1, 1}, {1, 256, 256, 1}, {1, 64, 64, 39}, {1, 117}},
     3169489,
     {24, 3, 3, 3},
     "valid",
     "relu6",
     {{"add:relu6", 15}}},
    {"pose_landmark_heavy.tflite",
     293,
     {{K::kAdd, 73},
      {K::kConv2D, 116},
      {K::kDepthwiseConv2D, 82},
      {K::kMaxPool2D, 5},
      {K::kPad, 8},
      {K::kReshape, 3},
      {K::kResize, 5},
      {K::kSigmoid, 1}},
     {1, 256, 256, 3},
     {{1, 195}, {1, 1}, {1, 256, 256, 1}, {1, 64, 64, 39}, {1, 117}},
     13751073,
     {24, 3, 3, 3},
     "valid",
     "relu6",
     {{"add:relu6", 43}, {"conv2d:relu6", 39}}},
};

void PrintTo(const ModelExpectation& e, std::ostream* os) { *os << e.file; }

class TfliteRealModel : public ::testing::TestWithParam<ModelExpectation> {};

TEST_P(TfliteRealModel, ImportsWithTheFileStructure) {
  const ModelExpectation& e = GetParam();
  LATTE_REQUIRE_MODEL(e.file);
  auto bytes = ReadFileBytes(testing::ModelPath(e.file));
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  auto graph = ImportTflite(*bytes);
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  const Graph& g = *graph;
  const FileFacts facts = ReadFacts(*bytes);

  EXPECT_EQ(g.source_format, "tflite");
  for (const Node& n : g.nodes()) {
    EXPECT_NE(n.kind, OpKind::kOpaque) << n.source_op << ": " << n.unsupported_reason;
    EXPECT_FALSE(n.source_op.empty());
  }
  // Node counts: written down, and from the file.
  EXPECT_EQ(g.num_nodes(), e.nodes);
  EXPECT_EQ(CountKinds(g), e.kinds);
  EXPECT_EQ(CountKinds(g), facts.kinds);
  EXPECT_EQ(g.num_nodes() + static_cast<std::size_t>(facts.folded), static_cast<std::size_t>(facts.operators));
  EXPECT_EQ(CountKinds(g).count(OpKind::kDequantize), 0u);  // all DEQUANTIZEs here are of constants

  // Inputs and outputs.
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.tensor(g.inputs[0]).shape, e.input);
  EXPECT_EQ(g.tensor(g.inputs[0]).dtype, DataType::kFloat32);
  ASSERT_EQ(g.outputs.size(), e.outputs.size());
  for (std::size_t i = 0; i < e.outputs.size(); ++i) EXPECT_EQ(g.tensor(g.outputs[i]).shape, e.outputs[i]) << i;
  EXPECT_EQ(std::vector<Shape>{e.input}, facts.inputs);
  EXPECT_EQ(e.outputs, facts.outputs);

  // Parameters: the dense float32 weights, counted both ways.
  EXPECT_EQ(CountParams(g), e.params);
  EXPECT_EQ(CountParams(g), facts.params);
  for (const Node& n : g.nodes())
    for (TensorId t : n.inputs)
      if (t != kNoTensor && g.tensor(t).is_constant()) {
        EXPECT_EQ(g.tensor(t).dtype, DataType::kFloat32) << g.tensor(t).name;
        EXPECT_EQ(g.tensor(t).data->size(), static_cast<std::size_t>(*g.tensor(t).num_bytes())) << g.tensor(t).name;
      }

  // Fused activations: every (kind, activation) pair as the file's options say.
  std::map<std::string, int> activations;
  for (const Node& n : g.nodes())
    if (n.attrs.Has("activation") && n.kind != OpKind::kConcat && n.kind != OpKind::kTransposeConv2D)
      ++activations[std::string(OpName(n.kind)) + ":" + n.attrs.GetString("activation", "")];
  EXPECT_EQ(activations, facts.activations);
  for (const auto& [key, count] : e.activations) EXPECT_EQ(activations[key], count) << key;

  // The first conv.
  const Node* conv = FirstOf(g, OpKind::kConv2D);
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(conv->source_op, "CONV_2D");
  EXPECT_EQ(g.tensor(conv->inputs[1]).shape, e.first_conv_weights);
  EXPECT_TRUE(g.tensor(conv->inputs[1]).is_constant());
  ASSERT_EQ(conv->inputs.size(), 3u);  // with bias
  EXPECT_EQ(g.tensor(conv->inputs[2]).shape, Shape{e.first_conv_weights[0]});
  EXPECT_EQ(conv->attrs.GetInts("strides"), (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(conv->attrs.GetInts("dilations"), (std::vector<std::int64_t>{1, 1}));
  EXPECT_EQ(conv->attrs.GetString("padding", ""), e.first_conv_padding);
  EXPECT_EQ(conv->attrs.GetString("activation", ""), e.first_conv_activation);
  EXPECT_EQ(conv->attrs.GetString("filter_layout", ""), "OHWI");
  EXPECT_EQ(conv->attrs.GetString("layout", ""), "NHWC");
  if (const Node* dw = FirstOf(g, OpKind::kDepthwiseConv2D)) {
    EXPECT_EQ(dw->source_op, "DEPTHWISE_CONV_2D");
    EXPECT_EQ(dw->attrs.GetString("filter_layout", ""), "1HWO");
    const Shape& x = g.tensor(dw->inputs[0]).shape;
    EXPECT_EQ(dw->attrs.GetInt("groups", 0), x[3]);
    EXPECT_EQ(dw->attrs.GetInt("depth_multiplier", 0), 1);
  }
}

TEST_P(TfliteRealModel, ImportsThroughImportModelWithShapeInference) {
  const ModelExpectation& e = GetParam();
  LATTE_REQUIRE_MODEL(e.file);
  auto graph = ImportModel(testing::ModelPath(e.file));
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  EXPECT_EQ(graph->num_nodes(), e.nodes);
  EXPECT_EQ(CountKinds(*graph), e.kinds);
  EXPECT_EQ(CountParams(*graph), e.params);
  for (const Node& n : graph->nodes())
    for (TensorId t : n.outputs) EXPECT_TRUE(graph->tensor(t).fully_known()) << n.name;
  ASSERT_EQ(graph->outputs.size(), e.outputs.size());
  for (std::size_t i = 0; i < e.outputs.size(); ++i) EXPECT_EQ(graph->tensor(graph->outputs[i]).shape, e.outputs[i]);
}

INSTANTIATE_TEST_SUITE_P(Models, TfliteRealModel, ::testing::ValuesIn(kModels),
                         [](const ::testing::TestParamInfo<ModelExpectation>& info) {
                           std::string name = info.param.file;
                           name = name.substr(0, name.find('.'));
                           for (char& c : name)
                             if (c == '-') c = '_';
                           return name;
                         });

// Convolution2DTransposeBias: custom_options are the raw TfLiteTransposeConvParams
// (SAME, stride 2x2); the node is a transposed conv to twice the input size.
TEST(TfliteRealModelTest, SelfieTransposedConv) {
  for (const char* file : {"selfie_segmentation.tflite", "selfie_segmentation_landscape.tflite"}) {
    LATTE_REQUIRE_MODEL(file);
    auto graph = ImportModel(testing::ModelPath(file));
    ASSERT_TRUE(graph.ok()) << graph.status().message();
    const Node* t = FirstOf(*graph, OpKind::kTransposeConv2D);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->source_op, "Convolution2DTransposeBias");
    EXPECT_EQ(t->attrs.GetString("padding", ""), "same");
    EXPECT_EQ(t->attrs.GetInts("strides"), (std::vector<std::int64_t>{2, 2}));
    EXPECT_EQ(t->attrs.GetString("filter_layout", ""), "OHWI");
    EXPECT_EQ(t->attrs.GetString("layout", ""), "NHWC");
    ASSERT_EQ(t->inputs.size(), 3u);
    EXPECT_EQ(graph->tensor(t->inputs[1]).shape, (Shape{1, 2, 2, 16}));
    EXPECT_EQ(graph->tensor(t->inputs[2]).shape, (Shape{1}));
    const Shape& x = graph->tensor(t->inputs[0]).shape;
    const Shape& y = graph->tensor(t->outputs[0]).shape;
    EXPECT_EQ(y, (Shape{1, x[1] * 2, x[2] * 2, 1}));
    // It feeds the final sigmoid, whose output is the graph output.
    EXPECT_EQ(graph->Consumers(t->outputs[0]).size(), 1u);
  }
}

// The sparse face detector's weights are stored CSR over the last dim (uint8 index arrays)
// as fp16, behind DENSIFY and DEQUANTIZE. Its weights differ from the dense model's (another
// training run), so check exactly against an independent expansion of the file's CSR arrays.
TEST(TfliteRealModelTest, SparseFaceDetectorDensifiesExactly) {
  const char* file = "face_detection_full_range_sparse.tflite";
  LATTE_REQUIRE_MODEL(file);
  auto bytes = ReadFileBytes(testing::ModelPath(file));
  ASSERT_TRUE(bytes.ok());
  auto graph = ImportTflite(*bytes);
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  std::map<std::string, const Tensor*> by_name;
  for (const Tensor& t : graph->tensors()) by_name[t.name] = &t;

  RawReader r(*bytes);
  const std::size_t model = r.Root();
  const std::size_t buffers = r.Vector(model, 4);
  const std::size_t sg = r.TableAt(r.Vector(model, 2), 0);
  const std::size_t tensors = r.Vector(sg, 0);
  const std::size_t ops = r.Vector(sg, 3);
  // DENSIFY output tensor → the DEQUANTIZE output that the conv reads.
  std::map<std::int32_t, std::int32_t> dequantized;
  for (std::size_t i = 0; i < r.Length(ops); ++i) {
    const std::size_t op = r.TableAt(ops, i);
    auto ins = r.Values<std::int32_t>(op, 1);
    auto outs = r.Values<std::int32_t>(op, 2);
    if (!ins.empty() && !outs.empty()) dequantized[ins[0]] = outs[0];
  }
  int sparse_tensors = 0;
  std::int64_t nonzeros = 0, dense_total = 0;
  for (std::int32_t t = 0; t < static_cast<std::int32_t>(r.Length(tensors)); ++t) {
    const std::size_t tensor = r.TableAt(tensors, static_cast<std::size_t>(t));
    const std::size_t sparsity = r.Field(tensor, 6);
    if (sparsity == 0) continue;
    ++sparse_tensors;
    const std::size_t s = sparsity + r.Read<std::uint32_t>(sparsity);
    auto shape = r.Values<std::int32_t>(tensor, 0);
    ASSERT_EQ(shape.size(), 4u);
    ASSERT_EQ(r.Values<std::int32_t>(s, 0), (std::vector<std::int32_t>{0, 1, 2, 3}));  // row-major, no blocks
    const std::size_t dims = r.Vector(s, 2);
    ASSERT_EQ(r.Length(dims), 4u);
    for (std::size_t l = 0; l < 3; ++l) ASSERT_EQ(r.Scalar<std::int8_t>(r.TableAt(dims, l), 0, 0), 0);  // DENSE
    const std::size_t last = r.TableAt(dims, 3);
    ASSERT_EQ(r.Scalar<std::int8_t>(last, 0, 0), 1);  // SPARSE_CSR
    // Index arrays: a union of int32 (1), uint16 (2) or uint8 (3) vectors.
    auto index_array = [&](int type_field, int table_field) {
      const std::size_t f = r.Field(last, table_field);
      const std::size_t table = f + r.Read<std::uint32_t>(f);
      std::vector<std::size_t> out;
      switch (r.Scalar<std::uint8_t>(last, type_field, 0)) {
        case 1:
          for (auto v : r.Values<std::int32_t>(table, 0)) out.push_back(static_cast<std::size_t>(v));
          break;
        case 2:
          for (auto v : r.Values<std::uint16_t>(table, 0)) out.push_back(v);
          break;
        case 3:
          for (auto v : r.Values<std::uint8_t>(table, 0)) out.push_back(v);
          break;
        default: ADD_FAILURE() << "bad index type";
      }
      return out;
    };
    auto segments = index_array(2, 3);
    auto indices = index_array(4, 5);
    const std::size_t buffer = r.TableAt(buffers, r.Scalar<std::uint32_t>(tensor, 2, 0));
    const std::size_t data_vec = r.Vector(buffer, 0);
    std::vector<std::uint16_t> halves(r.Length(data_vec) / 2);
    for (std::size_t i = 0; i < halves.size(); ++i) halves[i] = r.Read<std::uint16_t>(data_vec + 4 + 2 * i);

    // Independent CSR expansion: rows = product of the leading dims, columns = last dim.
    const std::size_t cols = static_cast<std::size_t>(shape[3]);
    const std::size_t rows =
        static_cast<std::size_t>(shape[0]) * static_cast<std::size_t>(shape[1]) * static_cast<std::size_t>(shape[2]);
    ASSERT_EQ(segments.size(), rows + 1);
    ASSERT_EQ(indices.size(), halves.size());
    std::vector<float> expected(rows * cols, 0.0f);
    for (std::size_t row = 0; row < rows; ++row)
      for (std::size_t k = segments[row]; k < segments[row + 1]; ++k)
        expected[row * cols + indices[k]] = HalfToFloat(halves[k]);

    const std::size_t dense_out = static_cast<std::size_t>(dequantized.at(dequantized.at(t)));
    const std::string name = r.String(r.TableAt(tensors, dense_out), 3);
    ASSERT_TRUE(by_name.count(name)) << name;
    const Tensor& got = *by_name[name];
    ASSERT_TRUE(got.is_constant());
    EXPECT_EQ(got.dtype, DataType::kFloat32);
    EXPECT_EQ(got.shape, Shape(shape.begin(), shape.end()));
    ASSERT_EQ(got.data->size(), expected.size() * 4);
    std::vector<float> actual(expected.size());
    std::memcpy(actual.data(), got.data->data(), got.data->size());
    EXPECT_EQ(actual, expected) << name;
    for (float v : actual) nonzeros += v != 0.0f;
    dense_total += static_cast<std::int64_t>(actual.size());
  }
  EXPECT_EQ(sparse_tensors, 46);         // one per DENSIFY
  EXPECT_GT(dense_total, 2 * nonzeros);  // mostly zeros: the point of the sparse model
}

// The sparse and dense full-range detectors are different networks (another architecture
// and training run), so their weights do not match layer by layer; what they share is the
// interface and the stem.
TEST(TfliteRealModelTest, SparseAndDenseFaceDetectorsShareTheInterface) {
  LATTE_REQUIRE_MODEL("face_detection_full_range.tflite");
  LATTE_REQUIRE_MODEL("face_detection_full_range_sparse.tflite");
  auto dense = ImportModel(testing::ModelPath("face_detection_full_range.tflite"));
  auto sparse = ImportModel(testing::ModelPath("face_detection_full_range_sparse.tflite"));
  ASSERT_TRUE(dense.ok() && sparse.ok());
  EXPECT_EQ(dense->tensor(dense->inputs[0]).shape, sparse->tensor(sparse->inputs[0]).shape);
  ASSERT_EQ(dense->outputs.size(), sparse->outputs.size());
  for (std::size_t i = 0; i < dense->outputs.size(); ++i)
    EXPECT_EQ(dense->tensor(dense->outputs[i]).shape, sparse->tensor(sparse->outputs[i]).shape);
  EXPECT_EQ(CountKinds(*dense)[OpKind::kConv2D], CountKinds(*sparse)[OpKind::kConv2D]);
  const Node* a = FirstOf(*dense, OpKind::kConv2D);
  const Node* b = FirstOf(*sparse, OpKind::kConv2D);
  EXPECT_EQ(dense->tensor(a->inputs[1]).shape, sparse->tensor(b->inputs[1]).shape);
}

}  // namespace
}  // namespace latte
