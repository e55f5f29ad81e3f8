// The real PaddleOCR models: each imports through ImportOnnx and latte::ImportModel with no
// opaque node, and what comes out is checked against counts worked out here, independently,
// from the file's ModelProto (op types, constants, which BatchNormalizations can fold).
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "test_paths.h"
#include "core/file.h"
#include "import/import.h"
#include "import/onnx/onnx_importer.h"

namespace latte {
namespace {

using Ints = std::vector<std::int64_t>;

// The file as ONNX sees it, with the few relations the expectations need.
struct ProtoFacts {
  onnx::ModelProto model;
  std::map<std::string, const onnx::TensorProto*> constants;  // initializers and Constant values
  std::map<std::string, int> producer;                        // value → node index
  std::map<std::string, std::vector<std::pair<int, int>>> uses;  // value → (node, input position)
  std::set<std::string> graph_outputs;

  const onnx::NodeProto& node(int i) const { return model.graph().node(i); }
  int num_nodes() const { return model.graph().node_size(); }
  bool IsConstant(const std::string& name) const { return constants.count(name) != 0; }
  std::int64_t Elements(const std::string& name) const {
    std::int64_t n = 1;
    for (auto d : constants.at(name)->dims()) n *= d;
    return n;
  }
  Ints Dims(const std::string& name) const {
    const auto& dims = constants.at(name)->dims();
    return Ints(dims.begin(), dims.end());
  }
  std::int64_t IntAttr(int i, const std::string& name, std::int64_t fallback) const {
    for (const auto& a : node(i).attribute())
      if (a.name() == name) return a.i();
    return fallback;
  }
  Ints IntsAttr(int i, const std::string& name) const {
    for (const auto& a : node(i).attribute())
      if (a.name() == name) return Ints(a.ints().begin(), a.ints().end());
    return {};
  }
};

ProtoFacts LoadFacts(const std::vector<std::uint8_t>& bytes) {
  ProtoFacts f;
  EXPECT_TRUE(f.model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())));
  const auto& g = f.model.graph();
  for (const auto& t : g.initializer()) f.constants[t.name()] = &t;
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    if (n.op_type() == "Constant")
      for (const auto& a : n.attribute())
        if (a.name() == "value") f.constants[n.output(0)] = &a.t();
    for (const auto& o : n.output()) f.producer[o] = i;
    for (int p = 0; p < n.input_size(); ++p) f.uses[n.input(p)].push_back({i, p});
  }
  for (const auto& o : g.output()) f.graph_outputs.insert(o.name());
  return f;
}

// Nodes that only compute a Reshape's target shape (Shape → Cast/Slice/Concat/...): the
// importer folds them into constants.
std::set<int> ShapeOnlyNodes(const ProtoFacts& f) {
  static const std::set<std::string> kShapeOps = {"Shape", "Cast", "Slice", "Concat", "Gather", "Unsqueeze", "Squeeze"};
  std::set<int> shape_only;
  for (int i = 0; i < f.num_nodes(); ++i)
    if (kShapeOps.count(f.node(i).op_type())) shape_only.insert(i);
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = shape_only.begin(); it != shape_only.end();) {
      const auto& n = f.node(*it);
      bool ok = !f.graph_outputs.count(n.output(0));
      auto uses = f.uses.find(n.output(0));
      if (uses != f.uses.end())
        for (auto [user, pos] : uses->second)
          ok = ok && (shape_only.count(user) || (f.node(user).op_type() == "Reshape" && pos == 1));
      if (n.op_type() != "Shape")
        for (const auto& in : n.input())
          ok = ok && (f.IsConstant(in) || (f.producer.count(in) && shape_only.count(f.producer.at(in))));
      if (ok) {
        ++it;
      } else {
        it = shape_only.erase(it);
        changed = true;
      }
    }
  }
  return shape_only;
}

// BatchNormalization → the Conv it folds into: constant weights and parameters, and the
// conv's output read by the BN alone.
std::map<int, int> FoldableBatchNorms(const ProtoFacts& f) {
  std::map<int, int> folds;
  for (int i = 0; i < f.num_nodes(); ++i) {
    const auto& bn = f.node(i);
    if (bn.op_type() != "BatchNormalization") continue;
    auto p = f.producer.find(bn.input(0));
    if (p == f.producer.end()) continue;
    const auto& conv = f.node(p->second);
    if (conv.op_type() != "Conv" && conv.op_type() != "ConvTranspose") continue;
    if (f.uses.at(bn.input(0)).size() != 1 || f.graph_outputs.count(bn.input(0))) continue;
    bool constant = f.IsConstant(conv.input(1)) && (conv.input_size() < 3 || f.IsConstant(conv.input(2)));
    for (int k = 1; k < 5; ++k) constant = constant && f.IsConstant(bn.input(k));
    if (constant) folds[i] = p->second;
  }
  return folds;
}

bool IsDepthwise(const ProtoFacts& f, int i) {
  const std::int64_t group = f.IntAttr(i, "group", 1);
  const Ints w = f.Dims(f.node(i).input(1));
  return group > 1 && w.size() == 4 && w[1] == 1 && w[0] % group == 0;
}

// Inputs the importer turns into attributes (not parameters).
bool AttributeInput(const std::string& op, int pos) {
  if (pos == 0) return false;
  return op == "Reshape" || op == "Resize" || op == "Clip" || op == "Slice" || op == "Squeeze" ||
         op == "Unsqueeze" || op == "Split" || op == "Pad" || op == "ReduceMean" || op == "Upsample";
}

struct Expectation {
  std::map<std::string, int> kinds;  // Latte op name → count
  std::int64_t params = 0;           // elements of distinct constants the nodes read
  int folded_batch_norms = 0;
};

Expectation Expect(const ProtoFacts& f) {
  static const std::map<std::string, std::string> kKind = {
      {"Add", "add"}, {"Sub", "sub"}, {"Mul", "mul"}, {"Div", "div"}, {"Pow", "pow"}, {"Clip", "clip"},
      {"Relu", "relu"}, {"Sigmoid", "sigmoid"}, {"HardSigmoid", "hard_sigmoid"}, {"Sqrt", "sqrt"},
      {"GlobalAveragePool", "global_avg_pool"}, {"MaxPool", "max_pool2d"}, {"AveragePool", "avg_pool2d"},
      {"Reshape", "reshape"}, {"Softmax", "softmax"}, {"Resize", "resize"}, {"ReduceMean", "mean"},
      {"Squeeze", "squeeze"}, {"Transpose", "transpose"}, {"Slice", "slice"}, {"Concat", "concat"},
      {"Cast", "cast"}, {"BatchNormalization", "batch_norm"}, {"ConvTranspose", "transpose_conv2d"}};
  Expectation e;
  const std::set<int> shape_only = ShapeOnlyNodes(f);
  const std::map<int, int> folds = FoldableBatchNorms(f);
  std::set<int> folded_convs;
  for (auto [bn, conv] : folds) folded_convs.insert(conv);
  e.folded_batch_norms = static_cast<int>(folds.size());
  std::set<std::string> read;
  for (int i = 0; i < f.num_nodes(); ++i) {
    const auto& n = f.node(i);
    if (n.op_type() == "Constant" || shape_only.count(i) || folds.count(i)) continue;
    std::string kind;
    if (n.op_type() == "Conv") kind = IsDepthwise(f, i) ? "depthwise_conv2d" : "conv2d";
    else if (n.op_type() == "MatMul") kind = f.IsConstant(n.input(1)) && f.Dims(n.input(1)).size() == 2 ? "fully_connected" : "matmul";
    else if (kKind.count(n.op_type())) kind = kKind.at(n.op_type());
    else ADD_FAILURE() << "the test does not know op type " << n.op_type();
    ++e.kinds[kind];
    for (int p = 0; p < n.input_size(); ++p) {
      const std::string& in = n.input(p);
      if (in.empty() || !f.IsConstant(in) || AttributeInput(n.op_type(), p)) continue;
      if (folded_convs.count(i) && p >= 1) continue;  // replaced by the folded weights and bias
      read.insert(in);
    }
    if (folded_convs.count(i)) {  // new weights (same size) and a bias per output channel
      const Ints w = f.Dims(n.input(1));
      const std::int64_t channels = n.op_type() == "Conv" ? w[0] : w[1] * f.IntAttr(i, "group", 1);
      e.params += f.Elements(n.input(1)) + channels;
    }
  }
  for (const auto& name : read) e.params += f.Elements(name);
  return e;
}

std::map<std::string, int> KindCounts(const Graph& g) {
  std::map<std::string, int> counts;
  for (const Node& n : g.nodes()) ++counts[std::string(OpName(n.kind))];
  return counts;
}

std::int64_t Params(const Graph& g) {
  std::set<TensorId> constants;
  for (const Node& n : g.nodes())
    for (TensorId t : n.inputs)
      if (t != kNoTensor && g.tensor(t).is_constant()) constants.insert(t);
  std::int64_t total = 0;
  for (TensorId t : constants) total += g.tensor(t).num_elements().value_or(0);
  return total;
}

// Checks shared by every real model.
void CheckGraph(const Graph& g, const ProtoFacts& f, const Expectation& e, const Ints& input_shape, const Ints& output_shape) {
  EXPECT_EQ(g.source_format, "onnx");
  std::map<std::string, int> kinds = KindCounts(g);
  EXPECT_EQ(kinds.count("opaque"), 0u);
  for (const Node& n : g.nodes())
    EXPECT_NE(n.kind, OpKind::kOpaque) << n.name << ": " << n.unsupported_reason;
  EXPECT_EQ(kinds, e.kinds);
  EXPECT_EQ(Params(g), e.params);

  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.tensor(g.inputs[0]).name, f.model.graph().input(0).name());
  EXPECT_EQ(g.tensor(g.inputs[0]).shape, input_shape);
  ASSERT_EQ(g.outputs.size(), static_cast<size_t>(f.model.graph().output_size()));
  EXPECT_EQ(g.tensor(g.outputs[0]).name, f.model.graph().output(0).name());
  EXPECT_EQ(g.tensor(g.outputs[0]).shape, output_shape);
  EXPECT_TRUE(g.tensor(g.outputs[0]).shape_known);

  // The first conv of the file keeps its weights' shape, strides and name.
  int first_conv = -1;
  for (int i = 0; i < f.num_nodes() && first_conv < 0; ++i)
    if (f.node(i).op_type() == "Conv") first_conv = i;
  ASSERT_GE(first_conv, 0);
  const Node* conv = nullptr;
  for (const Node& n : g.nodes())
    if (n.name == f.node(first_conv).name()) conv = &n;
  ASSERT_NE(conv, nullptr);
  EXPECT_EQ(g.tensor(conv->inputs[1]).shape, f.Dims(f.node(first_conv).input(1)));
  EXPECT_EQ(conv->attrs.GetInts("strides"), f.IntsAttr(first_conv, "strides"));
  EXPECT_EQ(g.tensor(conv->inputs[0]).name, f.node(first_conv).input(0));

  // No batch_norm is left straight after a conv it could have folded into.
  for (const Node& n : g.nodes()) {
    if (n.kind != OpKind::kBatchNorm) continue;
    NodeId p = g.Producer(n.inputs[0]);
    if (p < 0) continue;
    const OpKind k = g.node(p).kind;
    const bool conv_before = k == OpKind::kConv2D || k == OpKind::kDepthwiseConv2D || k == OpKind::kTransposeConv2D;
    EXPECT_FALSE(conv_before && g.Consumers(n.inputs[0]).size() == 1) << n.name << " should have been folded";
  }
}

void CheckRealModel(const std::string& file, const Ints& input_shape, const Ints& output_shape, int min_folded) {
  auto bytes = ReadFileBytes(testing::ModelPath(file));
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  const ProtoFacts facts = LoadFacts(*bytes);
  const Expectation expected = Expect(facts);
  EXPECT_GE(expected.folded_batch_norms, min_folded);
  ImportOptions options;
  options.input_shapes[facts.model.graph().input(0).name()] = input_shape;

  {
    SCOPED_TRACE("ImportOnnx");
    auto g = ImportOnnx(*bytes, options);
    ASSERT_TRUE(g.ok()) << g.status().message();
    CheckGraph(*g, facts, expected, input_shape, output_shape);
  }
  {
    SCOPED_TRACE("ImportModel");
    auto g = ImportModel(testing::ModelPath(file), options);
    ASSERT_TRUE(g.ok()) << g.status().message();
    CheckGraph(*g, facts, expected, input_shape, output_shape);
    for (const Tensor& t : g->tensors()) EXPECT_TRUE(t.fully_known()) << t.name << " " << ShapeToString(t.shape, t.shape_known);
  }
}

TEST(OnnxRealModels, PpOcrMobileClassifier) {
  LATTE_REQUIRE_MODEL("ch_ppocr_mobile_v2.0_cls_infer.onnx");
  CheckRealModel("ch_ppocr_mobile_v2.0_cls_infer.onnx", {1, 3, 48, 192}, {1, 2}, 35);
}

TEST(OnnxRealModels, PpOcrV4Detector) {
  LATTE_REQUIRE_MODEL("ch_PP-OCRv4_det_infer.onnx");
  CheckRealModel("ch_PP-OCRv4_det_infer.onnx", {1, 3, 640, 640}, {1, 1, 640, 640}, 2);
}

TEST(OnnxRealModels, PpOcrV4Recognizer) {
  if (!testing::HaveModel("ch_PP-OCRv4_rec_infer.onnx")) GTEST_SKIP() << "optional model not fetched";
  CheckRealModel("ch_PP-OCRv4_rec_infer.onnx", {1, 3, 48, 320}, {1, 40, 6625}, 6);
}

TEST(OnnxRealModels, DetectorInputIsDynamic) {
  LATTE_REQUIRE_MODEL("ch_PP-OCRv4_det_infer.onnx");
  const std::string path = testing::ModelPath("ch_PP-OCRv4_det_infer.onnx");
  auto bytes = ReadFileBytes(path);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  // The file says [?, 3, ?, ?]: the batch becomes 1, height and width stay unknown.
  auto g = ImportOnnx(*bytes, {});
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->tensor(g->inputs[0]).shape, (Ints{1, 3, kUnknownDim, kUnknownDim}));
  auto full = ImportModel(path);
  ASSERT_FALSE(full.ok());
  EXPECT_NE(full.status().message().find("--input-shape x="), std::string::npos) << full.status().message();
  // Another size gives other shapes, inferred anew.
  ImportOptions options;
  options.input_shapes["x"] = {2, 3, 320, 480};
  full = ImportModel(path, options);
  ASSERT_TRUE(full.ok()) << full.status().message();
  EXPECT_EQ(full->tensor(full->outputs[0]).shape, (Ints{2, 1, 320, 480}));
}

TEST(OnnxRealModels, ClassifierWithoutInputShapeKeepsBatchOne) {
  LATTE_REQUIRE_MODEL("ch_ppocr_mobile_v2.0_cls_infer.onnx");
  auto bytes = ReadFileBytes(testing::ModelPath("ch_ppocr_mobile_v2.0_cls_infer.onnx"));
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  auto g = ImportOnnx(*bytes, {});
  ASSERT_TRUE(g.ok()) << g.status().message();
  // Even with unknown H and W the flatten before the classifier folds: its target only
  // needs the batch.
  for (const Node& n : g->nodes()) {
    EXPECT_NE(n.kind, OpKind::kOpaque) << n.name << ": " << n.unsupported_reason;
    if (n.kind == OpKind::kReshape) {
      EXPECT_EQ(n.attrs.GetInts("shape"), (Ints{1, 200}));
    }
  }
}

}  // namespace
}  // namespace latte
