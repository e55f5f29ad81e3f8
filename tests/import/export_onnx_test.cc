// ONNX export: Latte graph → ONNX bytes → Latte's own ONNX importer gives the same graph
// inputs and outputs (names, shapes). Numerics are checked through ORT in tests/run/ort_*.

#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <cctype>
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
