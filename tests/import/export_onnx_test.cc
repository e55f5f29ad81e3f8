// ONNX export: Latte graph → ONNX bytes → Latte's own ONNX importer gives the same graph
// inputs and outputs (names, shapes). Numerics are checked through ORT in tests/run/ort_*.

#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <span>
#include <string>

#include "import/export/onnx_export.h"
#include "import/import.h"
#include "ir/graph_builder.h"
#include "test_paths.h"

namespace latte {
namespace {

ImportOptions OptionsFor(const std::string& file) {
  ImportOptions options;
  if (file.ends_with(".onnx"))
    options.input_shapes["x"] = file.find("_cls_") != std::string::npos ? Shape{1, 3, 48, 192} : Shape{1, 3, 96, 96};
  return options;
}

Expected<Graph> Reimport(const std::string& bytes) {
  std::span<const std::uint8_t> view(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  return ImportModelBytes(view, ModelFormat::kOnnx);
}

class ExportRealModel : public ::testing::TestWithParam<const char*> {};

TEST_P(ExportRealModel, ReimportGivesTheSameInputsAndOutputs) {
  const std::string file = GetParam();
  LATTE_REQUIRE_MODEL(file);
  auto graph = ImportModel(latte::testing::ModelPath(file), OptionsFor(file));
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  std::map<std::string, NodeId> owners;
  auto bytes = ExportOnnx(*graph, &owners);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  auto again = Reimport(*bytes);
  ASSERT_TRUE(again.ok()) << again.status().message();
  ASSERT_EQ(again->inputs.size(), graph->inputs.size());
  ASSERT_EQ(again->outputs.size(), graph->outputs.size());
  for (size_t i = 0; i < graph->inputs.size(); ++i) {
    EXPECT_EQ(again->tensor(again->inputs[i]).name, graph->tensor(graph->inputs[i]).name);
    EXPECT_EQ(again->tensor(again->inputs[i]).shape, graph->tensor(graph->inputs[i]).shape);
  }
  for (size_t i = 0; i < graph->outputs.size(); ++i) {
    EXPECT_EQ(again->tensor(again->outputs[i]).name, graph->tensor(graph->outputs[i]).name);
    EXPECT_EQ(again->tensor(again->outputs[i]).shape, graph->tensor(graph->outputs[i]).shape)
        << "output " << graph->tensor(graph->outputs[i]).name;
  }
  // Every Latte node left ONNX nodes behind, all owned by it.
  std::set<NodeId> owned;
  for (const auto& [name, id] : owners) owned.insert(id);
  EXPECT_EQ(owned.size(), graph->num_nodes());
  // The compute ops survive the trip (NHWC ones come back NCHW, between transposes).
  auto count = [](const Graph& g, OpKind kind) {
    int n = 0;
    for (const Node& node : g.nodes()) n += node.kind == kind;
    return n;
  };
  for (OpKind kind : {OpKind::kConv2D, OpKind::kDepthwiseConv2D, OpKind::kTransposeConv2D})
    EXPECT_EQ(count(*again, kind), count(*graph, kind)) << OpName(kind);
}

INSTANTIATE_TEST_SUITE_P(SixModels, ExportRealModel, ::testing::ValuesIn(latte::testing::kRealModels),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

TEST(ExportOnnx, NhwcConvBecomesTransposeConvTransposeWithOihwWeightsAndSeparateActivation) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 5, 5, 2});
  std::vector<float> w(3 * 3 * 3 * 2);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i);
  TensorId wt = b.Constant("w", {3, 3, 3, 2}, w);  // OHWI
  Attributes a;
  a.Set("layout", std::string("NHWC"));
  a.Set("filter_layout", std::string("OHWI"));
  a.Set("padding", std::string("same"));
  a.Set("strides", std::vector<std::int64_t>{1, 1});
  a.Set("activation", std::string("relu6"));
  TensorId y = b.Op1(OpKind::kConv2D, "conv", {x, wt}, a);
  auto graph = b.Finish({y});
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  auto bytes = ExportOnnx(*graph);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(*bytes));
  std::vector<std::string> ops;
  for (const auto& node : model.graph().node()) ops.push_back(node.op_type());
  EXPECT_EQ(ops, (std::vector<std::string>{"Transpose", "Conv", "Clip", "Transpose"}));
  EXPECT_EQ(model.opset_import(0).version(), kOnnxExportOpset);
  // The weights went OHWI [3,3,3,2] → OIHW [3,2,3,3]: element (o=0, i=1, h=0, w=2) was at
  // OHWI index ((0*3 + 0)*3 + 2)*2 + 1 = 5.
  const onnx::TensorProto* weights = nullptr;
  for (const auto& init : model.graph().initializer())
    if (init.dims_size() == 4) weights = &init;
  ASSERT_NE(weights, nullptr);
  EXPECT_EQ(std::vector<std::int64_t>(weights->dims().begin(), weights->dims().end()), (std::vector<std::int64_t>{3, 2, 3, 3}));
  const auto* data = reinterpret_cast<const float*>(weights->raw_data().data());
  EXPECT_EQ(data[((0 * 2 + 1) * 3 + 0) * 3 + 2], 5.0f);
  EXPECT_EQ(OnnxNodeOwner(model.graph().node(1).name()), 0);
  EXPECT_EQ(OnnxNodeOwner(model.graph().node(2).name()), 0);
  // The Transposes around the conv are layout changes; the conv and its clamp are not.
  std::vector<bool> layout;
  for (const auto& node : model.graph().node()) layout.push_back(IsOnnxLayoutTranspose(node.name()));
  EXPECT_EQ(layout, (std::vector<bool>{true, false, false, true}));
}

// An int8 graph (as the executor lowers one for --precision int8) exports in QDQ form: a quantize
// at the float input; the NHWC conv's layout Transposes on the quantized values, outside the
// DequantizeLinear → Conv → Clip → QuantizeLinear group; the conv's weights int8 per output
// channel and its bias int32 at the input's scale times each channel's, both behind a
// DequantizeLinear; activations uint8 with the zero point moved by 128; a pad of the quantized
// values with the zero point; a dequantize back to the float output.
TEST(ExportOnnx, Int8GraphIsQdqWithQuantizedWeightsAndUint8Activations) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 4, 4, 2});
  const std::vector<float> w = {0.5f, -1.0f, 0.25f, 0.125f,   // channel 0: max |w| 1
                                2.0f, 1.0f, -0.5f, 0.0f,      // channel 1: max |w| 2
                                0.0f, 0.0f, 0.0f, 0.0f};      // channel 2: all zero
  TensorId wt = b.Constant("w", {3, 1, 2, 2}, w);  // OHWI
  TensorId bias = b.Constant("b", {3}, std::vector<float>{0.1f, -0.2f, 0.3f});
  Attributes a;
  a.Set("layout", std::string("NHWC"));
  a.Set("filter_layout", std::string("OHWI"));
  a.Set("padding", std::string("valid"));
  a.Set("activation", std::string("relu6"));
  TensorId xq = b.Op1(OpKind::kQuantize, "quantize", {x});
  TensorId c = b.Op1(OpKind::kConv2D, "conv", {xq, wt, bias}, a);
  Attributes pad;
  pad.Set("pads", std::vector<std::int64_t>{0, 0, 0, 1, 0, 0, 0, 0});
  TensorId p = b.Op1(OpKind::kPad, "pad", {c}, pad);
  TensorId y = b.Op1(OpKind::kDequantize, "dequantize", {p});
  auto graph = b.Finish({y});
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  Graph g = *graph;
  auto quantize = [&](TensorId t, float scale, std::int64_t zero) {
    Tensor& tensor = g.mutable_tensor(t);
    tensor.dtype = DataType::kInt8;
    tensor.quant.scale = {scale};
    tensor.quant.zero_point = {zero};
  };
  quantize(xq, 0.02f, -3);
  quantize(c, 6.0f / 255, -128);
  quantize(p, 6.0f / 255, -128);
  auto bytes = ExportOnnx(g);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(*bytes));
  std::vector<std::string> ops;
  for (const auto& node : model.graph().node()) ops.push_back(node.op_type());
  EXPECT_EQ(ops, (std::vector<std::string>{"QuantizeLinear", "DequantizeLinear", "DequantizeLinear", "Transpose",
                                           "DequantizeLinear", "Conv", "Clip", "QuantizeLinear", "Transpose", "Pad",
                                           "DequantizeLinear"}));
  std::map<std::string, const onnx::TensorProto*> init;
  for (const auto& t : model.graph().initializer()) init[t.name()] = &t;
  auto scalar_zero = [&](const std::string& name) -> int {
    const onnx::TensorProto* t = init.at(name);
    EXPECT_EQ(t->dims_size(), 0) << name;
    EXPECT_EQ(t->data_type(), onnx::TensorProto_DataType_UINT8) << name;
    return static_cast<std::uint8_t>(t->raw_data().at(0));
  };
  const auto& nodes = model.graph().node();
  EXPECT_EQ(scalar_zero(nodes[0].input(2)), 125);  // the input's -3, as uint8
  EXPECT_EQ(scalar_zero(nodes[7].input(2)), 0);    // the conv's -128
  // The weights: int8 in OIHW ([3, 2, 1, 2] from OHWI [3, 1, 2, 2]), per channel (axis 0) at max |w| / 127; the all-zero channel at 1.
  const onnx::NodeProto& wdq = nodes[1];
  ASSERT_EQ(nodes[5].input(1), wdq.output(0));
  const onnx::TensorProto* wq = init.at(wdq.input(0));
  EXPECT_EQ(wq->data_type(), onnx::TensorProto_DataType_INT8);
  EXPECT_EQ(std::vector<std::int64_t>(wq->dims().begin(), wq->dims().end()), (std::vector<std::int64_t>{3, 2, 1, 2}));
  const auto* q = reinterpret_cast<const std::int8_t*>(wq->raw_data().data());
  EXPECT_EQ(std::vector<int>(q, q + 8), (std::vector<int>{64, 32, -127, 16, 127, -32, 64, 0}));
  const auto* scales = reinterpret_cast<const float*>(init.at(wdq.input(1))->raw_data().data());
  EXPECT_FLOAT_EQ(scales[0], 1.0f / 127);
  EXPECT_FLOAT_EQ(scales[1], 2.0f / 127);
  EXPECT_FLOAT_EQ(scales[2], 1.0f);
  ASSERT_EQ(wdq.attribute_size(), 1);
  EXPECT_EQ(wdq.attribute(0).name(), "axis");
  EXPECT_EQ(wdq.attribute(0).i(), 0);
  // The bias: int32 at 0.02 × each channel's weight scale.
  const onnx::NodeProto& bdq = nodes[2];
  ASSERT_EQ(nodes[5].input(2), bdq.output(0));
  const onnx::TensorProto* bq = init.at(bdq.input(0));
  EXPECT_EQ(bq->data_type(), onnx::TensorProto_DataType_INT32);
  const auto* bv = reinterpret_cast<const std::int32_t*>(bq->raw_data().data());
  EXPECT_EQ(bv[0], static_cast<std::int32_t>(std::nearbyint(0.1 / (0.02 / 127))));
  EXPECT_EQ(bv[1], static_cast<std::int32_t>(std::nearbyint(-0.2 / (0.02 * 2 / 127))));
  EXPECT_EQ(bv[2], static_cast<std::int32_t>(std::nearbyint(0.3 / 0.02)));
  // The layout Transposes are on the quantized values: the first reads the quantize's output.
  EXPECT_EQ(nodes[3].input(0), nodes[0].output(0));
  EXPECT_EQ(nodes[4].input(0), nodes[3].output(0));
  EXPECT_EQ(nodes[8].input(0), nodes[7].output(0));
  // The pad pads the quantized values with the zero point.
  ASSERT_EQ(nodes[9].input_size(), 3);
  EXPECT_EQ(nodes[9].input(0), nodes[8].output(0));
  EXPECT_EQ(scalar_zero(nodes[9].input(2)), 0);
  // Every node belongs to the Latte node it was made for.
  for (int i = 1; i <= 8; ++i) EXPECT_EQ(OnnxNodeOwner(nodes[i].name()), 1) << nodes[i].op_type();
}

TEST(ExportOnnx, OpWithNoOnnxFormIsUnsupportedNamingTheNode) {
  Graph graph;
  Tensor t;
  t.shape = {1, 4};
  t.shape_known = true;
  t.name = "x";
  TensorId x = graph.AddTensor(t);
  t.name = "y";
  TensorId y = graph.AddTensor(t);
  Node node;
  node.kind = OpKind::kOpaque;
  node.name = "mystery";
  node.source_op = "FancyOp";
  node.inputs = {x};
  node.outputs = {y};
  graph.AddNode(node);
  graph.inputs = {x};
  graph.outputs = {y};
  auto bytes = ExportOnnx(graph);
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(bytes.status().message().find("mystery"), std::string::npos) << bytes.status().message();
  EXPECT_NE(bytes.status().message().find("FancyOp"), std::string::npos) << bytes.status().message();
}

TEST(ExportOnnx, SignBitActivationIsUnsupported) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 4});
  TensorId z = b.Input("z", {1, 4});
  Attributes a;
  a.Set("activation", std::string("sign_bit"));
  TensorId y = b.Op1(OpKind::kAdd, "add", {x, z}, a);
  auto graph = b.Finish({y});
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  auto bytes = ExportOnnx(*graph);
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(bytes.status().message().find("sign_bit"), std::string::npos) << bytes.status().message();
}

TEST(ExportOnnx, OneNodeModelHasTheNodesActivationsAsInputs) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 4});
  TensorId c = b.Constant("c", {1, 4}, std::vector<float>{1, 2, 3, 4});
  TensorId s = b.Op1(OpKind::kAdd, "add", {x, c});
  TensorId y = b.Op1(OpKind::kSigmoid, "sig", {s});
  auto graph = b.Finish({y});
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  auto bytes = ExportOnnxNode(*graph, 1);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(*bytes));
  ASSERT_EQ(model.graph().input_size(), 1);
  EXPECT_EQ(model.graph().node_size(), 1);
  EXPECT_EQ(model.graph().node(0).op_type(), "Sigmoid");
  EXPECT_EQ(model.graph().node(0).name(), "n1");
  EXPECT_FALSE(ExportOnnxNode(*graph, 7).ok());
}

TEST(ExportOnnx, OnnxNodeOwnerParsesOnlyExportedNames) {
  EXPECT_EQ(OnnxNodeOwner("n12"), 12);
  EXPECT_EQ(OnnxNodeOwner("n12/act3"), 12);
  EXPECT_EQ(OnnxNodeOwner("n"), -1);
  EXPECT_EQ(OnnxNodeOwner("n12x"), -1);
  EXPECT_EQ(OnnxNodeOwner("conv"), -1);
  EXPECT_EQ(OnnxNodeOwner("ReorderOutput"), -1);
}

TEST(ExportOnnx, LayoutTransposesAreTheNumberedPreAndPostParts) {
  EXPECT_TRUE(IsOnnxLayoutTranspose("n12/pre0"));
  EXPECT_TRUE(IsOnnxLayoutTranspose("n3/post11"));
  EXPECT_FALSE(IsOnnxLayoutTranspose("n12"));
  EXPECT_FALSE(IsOnnxLayoutTranspose("n12/pre"));
  EXPECT_FALSE(IsOnnxLayoutTranspose("n12/ta0"));
  EXPECT_FALSE(IsOnnxLayoutTranspose("n12/act1"));
  EXPECT_FALSE(IsOnnxLayoutTranspose("n12/prefix1"));
  EXPECT_FALSE(IsOnnxLayoutTranspose("x/pre0"));
}

}  // namespace
}  // namespace latte
