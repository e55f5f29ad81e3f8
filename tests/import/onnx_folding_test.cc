// Import-time folding on small graphs built here, each rule against answers worked out by hand
// from the ONNX operator spec: shape subgraphs and the integer arithmetic on them, filled and
// repeated constants, Resize sizes and scales computed from shapes, If on a constant
// condition, and --input-value.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "import/onnx_test_builder.h"
#include "ir/tensor.h"

namespace latte {
namespace {

using namespace ::latte::testing;  // NOLINT: the builder's vocabulary

const Tensor* FindTensor(const Graph& g, const std::string& name) {
  for (const Tensor& t : g.tensors())
    if (t.name == name) return &t;
  return nullptr;
}

// The folded value of `name` as int64s (any integer or bool type), or a failure naming why not.
::testing::AssertionResult FoldedTo(const Graph& g, const std::string& name, const Ints& want, const Ints& shape) {
  const Tensor* t = FindTensor(g, name);
  if (!t) return ::testing::AssertionFailure() << "no tensor '" << name << "'";
  if (!t->is_constant()) {
    std::string why;
    for (const Node& n : g.nodes())
      for (TensorId o : n.outputs)
        if (g.tensor(o).name == name) why = n.unsupported_reason;
    return ::testing::AssertionFailure() << "'" << name << "' is not folded: " << why;
  }
  Ints got;
  const auto& bytes = *t->data;
  const size_t size = DataTypeSize(t->dtype);
  for (size_t i = 0; i + size <= bytes.size(); i += size) {
    std::int64_t v = 0;
    if (t->dtype == DataType::kInt64) std::memcpy(&v, bytes.data() + i, 8);
    else if (t->dtype == DataType::kInt32) { std::int32_t x; std::memcpy(&x, bytes.data() + i, 4); v = x; }
    else if (t->dtype == DataType::kBool || t->dtype == DataType::kUInt8) v = bytes[i];
    else return ::testing::AssertionFailure() << "'" << name << "' has type " << DataTypeName(t->dtype);
    got.push_back(v);
  }
  if (got != want || t->shape != shape)
    return ::testing::AssertionFailure() << "'" << name << "' is " << ::testing::PrintToString(got) << " of shape "
                                         << ShapeToString(t->shape);
  return ::testing::AssertionSuccess();
}

std::vector<float> FloatsOf(const Graph& g, const std::string& name) {
  const Tensor* t = FindTensor(g, name);
  if (!t || !t->is_constant()) return {};
  auto v = ConstantFloats(*t);
  return v.ok() ? *v : std::vector<float>{};
}

// --- shape subgraphs into Resize ---------------------------------------------------------

// Resize(X, sizes) with sizes = Concat(Shape(X)[0:2], Shape(Y)[2:4]): ONNX Runtime resizes to
// exactly the sizes given, so X 1x3x10x20 and Y 1x8x25x40 give 1x3x25x40.
TEST(OnnxFolding, ShapeSliceConcatGivesResizeItsSizes) {
  ModelBuilder b(13);
  b.Input("x", {1, 3, 10, 20});
  b.Input("y", {1, 8, 25, 40});
  b.Int64s("zero", {1}, {0});
  b.Int64s("two", {1}, {2});
  b.Int64s("four", {1}, {4});
  b.Node("Shape", {"x"}, {"x_shape"});
  b.Node("Shape", {"y"}, {"y_shape"});
  b.Node("Slice", {"x_shape", "zero", "two"}, {"nc"});
  b.Node("Slice", {"y_shape", "two", "four"}, {"hw"});
  auto& concat = b.Node("Concat", {"nc", "hw"}, {"sizes"});
  SetInt(concat, "axis", 0);
  auto& resize = b.Node("Resize", {"x", "", "", "sizes"}, {"out"}, "resize");
  SetString(resize, "mode", "nearest");
  b.Output("out");
  auto g = ImportFull(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ(g->num_nodes(), 1u) << "the shape subgraph is folded away";
  const Node& r = g->nodes()[0];
  EXPECT_EQ(r.kind, OpKind::kResize);
  EXPECT_EQ(r.attrs.GetInts("sizes"), (Ints{25, 40}));
  EXPECT_EQ(g->tensor(g->outputs[0]).shape, (Ints{1, 3, 25, 40}));
}

// As tf2onnx writes an upsampling: Shape(X)[2:4] → Cast(float) → Mul(scale) → Cast(int64) →
// Concat([1, 3], ·) → Resize sizes, after --input-shape. X 1x3x12x16 × (2.5, 1.5): 30x24.
TEST(OnnxFolding, CastMulCastOfShapesAfterInputShape) {
  ModelBuilder b(13);
  b.Input("x", {-1, 3, -1, -1});
  b.Int64s("two", {1}, {2});
  b.Int64s("four", {1}, {4});
  b.Int64s("nc", {2}, {1, 3});
  b.Floats("factor", {2}, {2.5f, 1.5f});
  b.Node("Shape", {"x"}, {"x_shape"});
  b.Node("Slice", {"x_shape", "two", "four"}, {"hw"});
  auto& to_float = b.Node("Cast", {"hw"}, {"hw_f"});
  SetInt(to_float, "to", onnx::TensorProto::FLOAT);
  b.Node("Mul", {"hw_f", "factor"}, {"scaled"});
  auto& to_int = b.Node("Cast", {"scaled"}, {"new_hw"});
  SetInt(to_int, "to", onnx::TensorProto::INT64);
  auto& concat = b.Node("Concat", {"nc", "new_hw"}, {"sizes"});
  SetInt(concat, "axis", 0);
  auto& resize = b.Node("Resize", {"x", "", "", "sizes"}, {"out"}, "resize");
  SetString(resize, "mode", "linear");
  b.Output("out");
  ImportOptions options;
  options.input_shapes["x"] = {1, 3, 12, 16};
  auto g = ImportFull(b, options);
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ(g->num_nodes(), 1u);
  EXPECT_EQ(g->nodes()[0].attrs.GetInts("sizes"), (Ints{30, 24}));
  EXPECT_EQ(g->tensor(g->outputs[0]).shape, (Ints{1, 3, 30, 24}));
}

// Resize by scales computed from two shapes: Concat([1, 1], Cast(Shape(Y)[2:4]) / Cast(Shape(X)[2:4])).
// X 1x3x10x20, Y 1x3x25x40: scales (1, 1, 2.5, 2); the output is floor(dim × scale) = 25x40.
TEST(OnnxFolding, DivOfShapesGivesResizeItsScales) {
  ModelBuilder b(13);
  b.Input("x", {1, 3, 10, 20});
  b.Input("y", {1, 3, 25, 40});
  b.Int64s("two", {1}, {2});
  b.Int64s("four", {1}, {4});
  b.Floats("ones", {2}, {1.0f, 1.0f});
  for (const char* v : {"x", "y"}) {
    const std::string s(v);
    b.Node("Shape", {s}, {s + "_shape"});
    b.Node("Slice", {s + "_shape", "two", "four"}, {s + "_hw"});
    auto& cast = b.Node("Cast", {s + "_hw"}, {s + "_hw_f"});
    SetInt(cast, "to", onnx::TensorProto::FLOAT);
  }
  b.Node("Div", {"y_hw_f", "x_hw_f"}, {"hw_scales"});
  auto& concat = b.Node("Concat", {"ones", "hw_scales"}, {"scales"});
  SetInt(concat, "axis", 0);
  b.Node("Resize", {"x", "", "scales"}, {"out"}, "resize");
  b.Output("out");
  auto g = ImportFull(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ(g->num_nodes(), 1u);
  EXPECT_EQ(g->nodes()[0].attrs.GetFloats("scales"), (std::vector<double>{2.5, 2.0}));
  EXPECT_EQ(g->tensor(g->outputs[0]).shape, (Ints{1, 3, 25, 40}));
}

// --- arithmetic, comparisons and logic on small constants --------------------------------

// One node `op` on initializers a and b (int64), imported; its output is "out".
Expected<Graph> Binary(const std::string& op, const Ints& a, const Ints& a_dims, const Ints& b, const Ints& b_dims,
                       std::int64_t fmod = -1) {
  ModelBuilder m(13);
  m.Int64s("a", a_dims, a);
  m.Int64s("b", b_dims, b);
  auto& n = m.Node(op, {"a", "b"}, {"out"}, "node");
  if (fmod >= 0) SetInt(n, "fmod", fmod);
  m.Output("out");
  return Import(m);
}

TEST(OnnxFolding, IntegerArithmeticAsOnnxDefinesIt) {
  struct Case {
    const char* op;
    Ints a, b, want;
    std::int64_t fmod = -1;
  };
  const Case cases[] = {
      {"Add", {7, -7, 3}, {2, 2, -5}, {9, -5, -2}},
      {"Sub", {7, -7, 3}, {2, 2, -5}, {5, -9, 8}},
      {"Mul", {7, -7, 3}, {2, 2, -5}, {14, -14, -15}},
      {"Div", {7, -7, 7, -7}, {2, 2, -2, -2}, {3, -3, -3, 3}},          // toward zero
      {"Mod", {7, -7, 7, -7}, {3, 3, -3, -3}, {1, 2, -2, -1}},          // sign of the divisor
      {"Mod", {7, -7, 7, -7}, {3, 3, -3, -3}, {1, -1, 1, -1}, 1},       // fmod: of the dividend
      {"Max", {1, 5, -3}, {4, 4, 4}, {4, 5, 4}},
      {"Min", {1, 5, -3}, {4, 4, 4}, {1, 4, -3}},
  };
  for (const Case& c : cases) {
    const Ints dims = {static_cast<std::int64_t>(c.a.size())};
    auto g = Binary(c.op, c.a, dims, c.b, dims, c.fmod);
    ASSERT_TRUE(g.ok()) << c.op << ": " << g.status().message();
    EXPECT_TRUE(FoldedTo(*g, "out", c.want, dims)) << c.op;
    EXPECT_EQ(g->num_nodes(), 0u) << c.op;
  }
}

TEST(OnnxFolding, BroadcastingFollowsNumpy) {
  // [2, 1] + [3] → [2, 3]
  auto g = Binary("Add", {10, 20}, {2, 1}, {1, 2, 3}, {3});
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_TRUE(FoldedTo(*g, "out", {11, 12, 13, 21, 22, 23}, {2, 3}));
  // A scalar against a vector.
  auto s = Binary("Mul", {3}, {}, {1, 2, 3}, {3});
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(FoldedTo(*s, "out", {3, 6, 9}, {3}));
}

TEST(OnnxFolding, WhatCannotBeComputedExactlyStaysANode) {
  auto by_zero = Binary("Div", {1}, {1}, {0}, {1});
  ASSERT_TRUE(by_zero.ok());
  EXPECT_FALSE(FindTensor(*by_zero, "out")->is_constant());
  ASSERT_EQ(by_zero->num_nodes(), 1u);
  EXPECT_EQ(by_zero->nodes()[0].kind, OpKind::kDiv);
  auto overflow = Binary("Mul", {std::int64_t{1} << 62}, {1}, {4}, {1});
  ASSERT_TRUE(overflow.ok());
  EXPECT_FALSE(FindTensor(*overflow, "out")->is_constant());
}

TEST(OnnxFolding, ComparisonsLogicAndWhere) {
  ModelBuilder b(13);
  b.Int64s("a", {3}, {1, 2, 3});
  b.Int64s("b", {3}, {1, 5, 0});
  b.Int64s("two", {}, {2});
  b.Int64s("big", {3}, {10, 20, 30});
  b.Int64s("minus", {}, {-1});
  b.Node("Equal", {"a", "b"}, {"eq"});
  b.Node("Less", {"a", "two"}, {"lt"});
  b.Node("Greater", {"a", "two"}, {"gt"});
  b.Node("LessOrEqual", {"a", "two"}, {"le"});
  b.Node("GreaterOrEqual", {"a", "b"}, {"ge"});
  b.Node("Not", {"eq"}, {"ne"});
  b.Node("And", {"ne", "gt"}, {"and"});
  b.Node("Or", {"eq", "gt"}, {"or"});
  b.Node("Xor", {"eq", "lt"}, {"xor"});
  b.Node("Where", {"lt", "big", "minus"}, {"where"});
  b.Node("Neg", {"a"}, {"neg"});
  b.Node("Abs", {"neg"}, {"abs"});
  for (const char* out : {"eq", "lt", "gt", "le", "ge", "ne", "and", "or", "xor", "where", "neg", "abs"}) b.Output(out);
  auto g = Import(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->num_nodes(), 0u);
  EXPECT_TRUE(FoldedTo(*g, "eq", {1, 0, 0}, {3}));
  EXPECT_TRUE(FoldedTo(*g, "lt", {1, 0, 0}, {3}));
  EXPECT_TRUE(FoldedTo(*g, "gt", {0, 0, 1}, {3}));
  EXPECT_TRUE(FoldedTo(*g, "le", {1, 1, 0}, {3}));
  EXPECT_TRUE(FoldedTo(*g, "ge", {1, 0, 1}, {3}));
  EXPECT_TRUE(FoldedTo(*g, "ne", {0, 1, 1}, {3}));
  EXPECT_TRUE(FoldedTo(*g, "and", {0, 0, 1}, {3}));
  EXPECT_TRUE(FoldedTo(*g, "or", {1, 0, 1}, {3}));
  EXPECT_TRUE(FoldedTo(*g, "xor", {0, 0, 0}, {3}));
  EXPECT_TRUE(FoldedTo(*g, "where", {10, -1, -1}, {3}));
  EXPECT_TRUE(FoldedTo(*g, "neg", {-1, -2, -3}, {3}));
  EXPECT_TRUE(FoldedTo(*g, "abs", {1, 2, 3}, {3}));
  EXPECT_EQ(FindTensor(*g, "eq")->dtype, DataType::kBool);
}

TEST(OnnxFolding, CastTruncatesTowardZeroAndFloatsRoundLikeFloat32) {
  ModelBuilder b(13);
  b.Floats("f", {4}, {2.7f, -2.7f, 0.5f, -0.0f});
  b.Floats("third", {1}, {1.0f / 3.0f});
  b.Floats("three", {1}, {3.0f});
  auto& to_int = b.Node("Cast", {"f"}, {"i"});
  SetInt(to_int, "to", onnx::TensorProto::INT32);
  auto& to_bool = b.Node("Cast", {"f"}, {"flag"});
  SetInt(to_bool, "to", onnx::TensorProto::BOOL);
  b.Node("Mul", {"third", "three"}, {"one"});
  b.Node("Floor", {"f"}, {"floor"});
  b.Node("Ceil", {"f"}, {"ceil"});
  b.Node("Round", {"f"}, {"round"});
  for (const char* out : {"i", "flag", "one", "floor", "ceil", "round"}) b.Output(out);
  auto g = Import(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_TRUE(FoldedTo(*g, "i", {2, -2, 0, 0}, {4}));
  EXPECT_EQ(FindTensor(*g, "i")->dtype, DataType::kInt32);
  EXPECT_TRUE(FoldedTo(*g, "flag", {1, 1, 1, 0}, {4}));
  EXPECT_EQ(FloatsOf(*g, "one"), (std::vector<float>{(1.0f / 3.0f) * 3.0f}));
  EXPECT_EQ(FloatsOf(*g, "floor"), (std::vector<float>{2, -3, 0, -0.0f}));
  EXPECT_EQ(FloatsOf(*g, "ceil"), (std::vector<float>{3, -2, 1, -0.0f}));
  EXPECT_EQ(FloatsOf(*g, "round"), (std::vector<float>{3, -3, 0, -0.0f})) << "0.5 rounds to even";
}

TEST(OnnxFolding, GatherAndConcatOfMatrices) {
  ModelBuilder b(13);
  b.Int64s("m", {2, 3}, {1, 2, 3, 4, 5, 6});
  b.Int64s("cols", {2}, {2, -3});
  b.Int64s("row", {}, {1});
  auto& g1 = b.Node("Gather", {"m", "cols"}, {"picked"});
  SetInt(g1, "axis", 1);
  b.Node("Gather", {"m", "row"}, {"second_row"});
  auto& c = b.Node("Concat", {"m", "picked"}, {"joined"});
  SetInt(c, "axis", -1);
  for (const char* out : {"picked", "second_row", "joined"}) b.Output(out);
  auto g = Import(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_TRUE(FoldedTo(*g, "picked", {3, 1, 6, 4}, {2, 2}));
  EXPECT_TRUE(FoldedTo(*g, "second_row", {4, 5, 6}, {3}));
  EXPECT_TRUE(FoldedTo(*g, "joined", {1, 2, 3, 3, 1, 4, 5, 6, 6, 4}, {2, 5}));
}

// --- filled and repeated constants -------------------------------------------------------

// tf2onnx's pads: Concat(ConstantOfShape([4]) of int64 0, [0, 0, 1, 1]) → Pad's pads.
TEST(OnnxFolding, ConstantOfShapeBuildsPads) {
  ModelBuilder b(13);
  b.Input("x", {1, 3, 10, 20});
  b.Int64s("four", {1}, {4});
  b.Int64s("ends", {4}, {0, 0, 1, 1});
  auto& fill = b.Node("ConstantOfShape", {"four"}, {"zeros"});
  auto* value = fill.add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->add_int64_data(0);
  auto& concat = b.Node("Concat", {"zeros", "ends"}, {"pads"});
  SetInt(concat, "axis", 0);
  b.Node("Pad", {"x", "pads"}, {"y"}, "pad");
  b.Output("y");
  auto g = ImportFull(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ(g->num_nodes(), 1u);
  EXPECT_EQ(g->nodes()[0].kind, OpKind::kPad);
  EXPECT_EQ(g->nodes()[0].attrs.GetInts("pads"), (Ints{0, 0, 0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(g->tensor(g->outputs[0]).shape, (Ints{1, 3, 11, 21}));
}

TEST(OnnxFolding, ConstantOfShapeDefaultsToFloatZeroAndCapsItsSize) {
  ModelBuilder b(13);
  b.Input("x", {2, 3});
  b.Int64s("big", {2}, {4096, 2048});  // 8M elements: more than the cap
  b.Node("Shape", {"x"}, {"x_shape"});
  b.Node("ConstantOfShape", {"x_shape"}, {"zeros"}, "small");
  b.Node("ConstantOfShape", {"big"}, {"huge"}, "huge");
  b.Node("Add", {"x", "zeros"}, {"y"}, "add");
  b.Output("y");
  b.Output("huge");
  auto g = ImportFull(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(FloatsOf(*g, "zeros"), std::vector<float>(6, 0.0f));
  EXPECT_EQ(FindTensor(*g, "zeros")->shape, (Ints{2, 3}));
  const Node* huge = FindNode(*g, "huge");
  ASSERT_NE(huge, nullptr);
  EXPECT_EQ(huge->kind, OpKind::kOpaque);
  EXPECT_NE(huge->unsupported_reason.find("more than the 4194304 elements"), std::string::npos) << huge->unsupported_reason;
  EXPECT_EQ(g->tensor(huge->outputs[0]).shape, (Ints{4096, 2048})) << "its shape is still known";
}

TEST(OnnxFolding, RangeExpandAndTile) {
  ModelBuilder b(13);
  b.Int64s("zero", {}, {0});
  b.Int64s("ten", {}, {10});
  b.Int64s("three", {}, {3});
  b.Int64s("minus_three", {}, {-3});
  b.Floats("f0", {}, {0.0f});
  b.Floats("f1", {}, {1.0f});
  b.Floats("quarter", {}, {0.25f});
  b.Int64s("col", {2, 1}, {1, 2});
  b.Int64s("to", {2}, {2, 3});
  b.Int64s("m", {2, 2}, {1, 2, 3, 4});
  b.Int64s("reps", {2}, {1, 2});
  b.Node("Range", {"zero", "ten", "three"}, {"up"});
  b.Node("Range", {"ten", "zero", "minus_three"}, {"down"});
  b.Node("Range", {"f0", "f1", "quarter"}, {"quarters"});
  b.Node("Expand", {"col", "to"}, {"expanded"});
  b.Node("Tile", {"m", "reps"}, {"tiled"});
  for (const char* out : {"up", "down", "quarters", "expanded", "tiled"}) b.Output(out);
  auto g = Import(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_TRUE(FoldedTo(*g, "up", {0, 3, 6, 9}, {4}));
  EXPECT_TRUE(FoldedTo(*g, "down", {10, 7, 4, 1}, {4}));
  EXPECT_EQ(FloatsOf(*g, "quarters"), (std::vector<float>{0.0f, 0.25f, 0.5f, 0.75f}));
  EXPECT_TRUE(FoldedTo(*g, "expanded", {1, 1, 1, 2, 2, 2}, {2, 3}));
  EXPECT_TRUE(FoldedTo(*g, "tiled", {1, 2, 1, 2, 3, 4, 3, 4}, {2, 4}));
}

TEST(OnnxFolding, WhatStaysDynamicSaysWhichInput) {
  ModelBuilder b(13);
  b.Input("dims", {2}, onnx::TensorProto::INT64);
  b.Node("ConstantOfShape", {"dims"}, {"zeros"}, "fill");
  b.Output("zeros");
  auto g = Import(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  const Node* fill = FindNode(*g, "fill");
  ASSERT_NE(fill, nullptr);
  EXPECT_EQ(fill->kind, OpKind::kOpaque);
  EXPECT_EQ(fill->unsupported_reason, "ConstantOfShape not folded: input 'dims' is not a constant at import");
}

// --- If ----------------------------------------------------------------------------------

// If(Equal(sr, 16000)) { Relu(x) + k, k a branch initializer } else { Sigmoid(x) }, and
// a second output that passes an outer value through.
ModelBuilder IfModel() {
  ModelBuilder b(13);
  b.Input("sr", {}, onnx::TensorProto::INT64);
  b.Input("x", {1, 4});
  b.Int64s("rate", {}, {16000});
  b.Node("Equal", {"sr", "rate"}, {"is_16k"});
  b.Node("Relu", {"x"}, {"rx"}, "relu_outer");
  auto& branch = b.Node("If", {"is_16k"}, {"y", "z"}, "if");
  onnx::GraphProto& then = AddBody(branch, "then_branch", "Relu", "x", "t", {1, 4});  // t: no outer name
  then.mutable_node(0)->set_name("relu");
  auto* k = then.add_initializer();
  k->set_name("k");
  k->set_data_type(onnx::TensorProto::FLOAT);
  k->add_float_data(1.0f);
  auto* add = then.add_node();
  add->set_op_type("Add");
  add->set_name("add");
  add->add_input("t");
  add->add_input("k");
  add->add_output("then_out");
  then.mutable_output(0)->set_name("then_out");
  onnx::GraphProto& otherwise = AddBody(branch, "else_branch", "Sigmoid", "x", "else_out", {1, 4});
  otherwise.mutable_node(0)->set_name("sigmoid");
  for (onnx::GraphProto* body : {&then, &otherwise})
    ModelBuilder::SetType(body->add_output(), "rx", {1, 4}, onnx::TensorProto::FLOAT);  // an outer value
  b.Node("Mul", {"y", "z"}, {"out"}, "mul");
  b.Output("out");
  return b;
}

TEST(OnnxFolding, IfOnAGivenInputIsInlined) {
  const ModelBuilder b = IfModel();
  for (const char* rate : {"16000", "8000"}) {
    ImportOptions options;
    options.input_values["sr"] = {rate};
    auto g = ImportFull(b, options);
    ASSERT_TRUE(g.ok()) << g.status().message();
    for (const Node& n : g->nodes()) EXPECT_NE(n.kind, OpKind::kOpaque) << n.name << ": " << n.unsupported_reason;
    ASSERT_EQ(g->inputs.size(), 1u) << "sr is a constant now";
    EXPECT_EQ(g->tensor(g->inputs[0]).name, "x");
    const bool then = std::string(rate) == "16000";
    if (then) {
      const Node* relu = FindNode(*g, "if/then_branch/relu");
      const Node* add = FindNode(*g, "if/then_branch/add");
      ASSERT_NE(relu, nullptr);
      ASSERT_NE(add, nullptr);
      EXPECT_EQ(relu->kind, OpKind::kRelu);
      EXPECT_EQ(g->tensor(add->outputs[0]).name, "y") << "the branch writes the If's output";
      EXPECT_EQ(g->tensor(add->inputs[1]).name, "if/then_branch/k");
      EXPECT_EQ(FindNode(*g, "if/else_branch/sigmoid"), nullptr);
    } else {
      ASSERT_NE(FindNode(*g, "if/else_branch/sigmoid"), nullptr);
      EXPECT_EQ(FindNode(*g, "if/then_branch/relu"), nullptr);
    }
    // z is the outer rx passed through.
    const Node* mul = FindNode(*g, "mul");
    ASSERT_NE(mul, nullptr);
    EXPECT_EQ(g->tensor(g->outputs[0]).shape, (Ints{1, 4}));
  }
}

TEST(OnnxFolding, IfOnAConstantConditionIsInlined) {
  ModelBuilder b = IfModel();
  // sr an initializer: the condition folds without any flag.
  b.graph().mutable_input()->erase(b.graph().mutable_input()->begin());
  b.Int64s("sr", {}, {16000});
  auto g = ImportFull(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_NE(FindNode(*g, "if/then_branch/relu"), nullptr);
  for (const Node& n : g->nodes()) EXPECT_NE(n.kind, OpKind::kOpaque) << n.name;
}

TEST(OnnxFolding, IfOnARunTimeConditionSaysWhichInputToGive) {
  auto g = ImportFull(IfModel());
  ASSERT_TRUE(g.ok()) << g.status().message();
  const Node* n = FindNode(*g, "if");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->kind, OpKind::kOpaque);
  EXPECT_EQ(n->unsupported_reason,
            "If not inlined: its condition 'is_16k' is not a constant at import (it depends on input 'sr'); "
            "give its value with --input-value sr=VALUE");
}

// --- --input-value -----------------------------------------------------------------------

TEST(OnnxFolding, InputValueRefusesWhatDoesNotFit) {
  const ModelBuilder b = IfModel();
  struct Case {
    std::string name;
    std::vector<std::string> values;
    std::string message;
  };
  const Case cases[] = {
      {"rate", {"1"}, "--input-value names 'rate', but the model's inputs are: sr, x"},
      {"sr", {"16k"}, "--input-value sr: '16k' is not an int64"},
      {"sr", {"1", "2"}, "--input-value sr: 2 values given, but input 'sr' of shape scalar holds 1"},
      {"sr", {"99999999999999999999"}, "--input-value sr: '99999999999999999999' is not an int64"},
      {"x", {"1", "2", "3", "nan"}, "--input-value x: 'nan' is not a finite float32"},
  };
  for (const Case& c : cases) {
    ImportOptions options;
    options.input_values[c.name] = c.values;
    auto g = ImportFull(b, options);
    ASSERT_FALSE(g.ok()) << c.name;
    EXPECT_EQ(g.status().code(), StatusCode::kInvalidInput);
    EXPECT_EQ(g.status().message(), c.message);
  }
}

TEST(OnnxFolding, InputValueOfAnInt32VectorAfterItsShape) {
  ModelBuilder b(13);
  b.Input("x", {1, 3, 8, 8});
  b.Input("size", {-1}, onnx::TensorProto::INT32);
  auto& cast = b.Node("Cast", {"size"}, {"size64"});
  SetInt(cast, "to", onnx::TensorProto::INT64);
  b.Node("Resize", {"x", "", "", "size64"}, {"y"}, "resize");
  b.Output("y");
  ImportOptions options;
  options.input_shapes["size"] = {4};
  options.input_values["size"] = {"1", "3", "16", "24"};
  auto g = ImportFull(b, options);
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ(g->num_nodes(), 1u);
  EXPECT_EQ(g->tensor(g->outputs[0]).shape, (Ints{1, 3, 16, 24}));
  options.input_values["size"] = {"1", "3", "16", "3000000000"};
  auto too_big = ImportFull(b, options);
  ASSERT_FALSE(too_big.ok());
  EXPECT_EQ(too_big.status().message(), "--input-value size: '3000000000' is not an int32");
}

}  // namespace
}  // namespace latte
