// The TFLite importer on hand-built files: how each op and its options map to Latte nodes,
// constant folding of fp16 / int8 / sparse weights (with dense results worked out by hand),
// external buffers, shape signatures and quantization.

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "import/import.h"
#include "import/tflite/tflite_importer.h"
#include "ir/half.h"
#include "tflite_test_builder.h"

namespace latte {
namespace {

using namespace testing::tfl;  // NOLINT: the builder's constants read better unqualified
using Ints = std::vector<std::int64_t>;

Graph Import(const ModelSpec& m) {
  auto graph = ImportTflite(m.Build());
  EXPECT_TRUE(graph.ok()) << graph.status().message();
  return graph.ok() ? std::move(graph).value() : Graph();
}

// Imports through ImportModelBytes (validation and shape inference).
Graph ImportChecked(const ModelSpec& m) {
  auto graph = ImportModelBytes(m.Build(), ModelFormat::kTflite);
  EXPECT_TRUE(graph.ok()) << graph.status().message();
  return graph.ok() ? std::move(graph).value() : Graph();
}

std::vector<float> Floats(const Tensor& t) {
  EXPECT_TRUE(t.is_constant());
  EXPECT_EQ(t.dtype, DataType::kFloat32);
  std::vector<float> out(t.is_constant() ? t.data->size() / 4 : 0);
  if (!out.empty()) std::memcpy(out.data(), t.data->data(), out.size() * 4);
  return out;
}

// x [1,8,8,3] → op → y; returns the model with the op added.
ModelSpec OneOp(std::int32_t builtin, std::vector<std::int32_t> out_shape, std::uint8_t options_type,
                TableSpec options) {
  ModelSpec m;
  const auto x = m.Activation({1, 8, 8, 3}, "x");
  const auto y = m.Activation(std::move(out_shape), "y");
  OpSpec& op = m.Op(builtin, {x}, {y});
  op.options_type = options_type;
  op.options = std::move(options);
  m.inputs = {x};
  m.outputs = {y};
  return m;
}

TEST(TfliteOpsTest, Conv2DWithOptions) {
  ModelSpec m;
  const auto x = m.Activation({1, 9, 9, 3}, "x");
  const auto w = m.FloatConstant({4, 3, 3, 3}, "w", std::vector<float>(108, 0.25f));
  const auto y = m.Activation({1, 2, 4, 4}, "y");  // (9 - 5) / 3 + 1, (9 - 3) / 2 + 1
  // padding VALID, stride_w 2, stride_h 3, RELU6, dilation_w 1, dilation_h 2; no bias.
  m.Op(kConv, {x, w, -1}, {y}).options_type = 1;
  m.ops.back().options.I8(0, 1).I32(1, 2).I32(2, 3).I8(3, 3).I32(4, 1).I32(5, 2);
  m.inputs = {x};
  m.outputs = {y};
  Graph g = ImportChecked(m);
  ASSERT_EQ(g.num_nodes(), 1u);
  const Node& n = g.node(0);
  EXPECT_EQ(n.kind, OpKind::kConv2D);
  EXPECT_EQ(n.source_op, "CONV_2D");
  EXPECT_EQ(n.name, "y");
  EXPECT_EQ(n.inputs.size(), 2u);  // the absent bias is dropped
  EXPECT_EQ(n.attrs.GetString("padding", ""), "valid");
  EXPECT_EQ(n.attrs.GetInts("strides"), (Ints{3, 2}));
  EXPECT_EQ(n.attrs.GetInts("dilations"), (Ints{2, 1}));
  EXPECT_EQ(n.attrs.GetString("activation", ""), "relu6");
  EXPECT_EQ(n.attrs.GetString("filter_layout", ""), "OHWI");
  EXPECT_FALSE(n.attrs.Has("groups"));
  EXPECT_EQ(g.tensor(n.outputs[0]).shape, (Shape{1, 2, 4, 4}));
}

TEST(TfliteOpsTest, GroupedConv2D) {
  ModelSpec m;
  const auto x = m.Activation({1, 4, 4, 8}, "x");
  const auto w = m.FloatConstant({6, 1, 1, 4}, "w", std::vector<float>(24, 1.0f));
  const auto y = m.Activation({1, 4, 4, 6}, "y");
  m.Op(kConv, {x, w}, {y}).options_type = 1;
  m.ops.back().options.I32(1, 1).I32(2, 1);
  m.inputs = {x};
  m.outputs = {y};
  Graph g = ImportChecked(m);
  EXPECT_EQ(g.node(0).attrs.GetInt("groups", 1), 2);
}

TEST(TfliteOpsTest, DepthwiseConvWithMultiplier) {
  ModelSpec m;
  const auto x = m.Activation({1, 8, 8, 3}, "x");
  const auto w = m.FloatConstant({1, 3, 3, 6}, "w", std::vector<float>(54, 1.0f));
  const auto b = m.FloatConstant({6}, "b", std::vector<float>(6, 0.0f));
  const auto y = m.Activation({1, 4, 4, 6}, "y");
  m.Op(kDepthwise, {x, w, b}, {y}).options_type = 2;
  m.ops.back().options.I8(0, 0).I32(1, 2).I32(2, 2).I32(3, 2).I8(4, 1);
  m.inputs = {x};
  m.outputs = {y};
  Graph g = ImportChecked(m);
  const Node& n = g.node(0);
  EXPECT_EQ(n.kind, OpKind::kDepthwiseConv2D);
  EXPECT_EQ(n.attrs.GetString("filter_layout", ""), "1HWO");
  EXPECT_EQ(n.attrs.GetInt("groups", 0), 3);
  EXPECT_EQ(n.attrs.GetInt("depth_multiplier", 0), 2);
  EXPECT_EQ(n.attrs.GetString("activation", ""), "relu");
  EXPECT_EQ(n.attrs.GetString("padding", ""), "same");
  EXPECT_EQ(n.inputs.size(), 3u);
}

// TRANSPOSE_CONV's inputs [output_shape, weights, input, bias] become [x, w, b].
TEST(TfliteOpsTest, TransposeConvIsNormalized) {
  ModelSpec m;
  const auto shape = m.IntConstant({4}, "output_shape", {1, 16, 16, 5});
  const auto w = m.FloatConstant({5, 3, 3, 4}, "w", std::vector<float>(180, 1.0f));
  const auto x = m.Activation({1, 8, 8, 4}, "x");
  const auto b = m.FloatConstant({5}, "b", std::vector<float>(5, 0.0f));
  const auto y = m.Activation({1, 16, 16, 5}, "y");
  m.Op(kTransposeConv, {shape, w, x, b}, {y}).options_type = 49;
  m.ops.back().options.I8(0, 0).I32(1, 2).I32(2, 2).I8(3, 1);
  m.inputs = {x};
  m.outputs = {y};
  Graph g = ImportChecked(m);
  ASSERT_EQ(g.num_nodes(), 1u);
  const Node& n = g.node(0);
  EXPECT_EQ(n.kind, OpKind::kTransposeConv2D);
  ASSERT_EQ(n.inputs.size(), 3u);
  EXPECT_EQ(g.tensor(n.inputs[0]).name, "x");
  EXPECT_EQ(g.tensor(n.inputs[1]).name, "w");
  EXPECT_EQ(g.tensor(n.inputs[2]).name, "b");
  EXPECT_EQ(n.attrs.GetInts("output_shape"), (Ints{1, 16, 16, 5}));
  EXPECT_EQ(n.attrs.GetInts("strides"), (Ints{2, 2}));
  EXPECT_EQ(n.attrs.GetString("padding", ""), "same");
  EXPECT_EQ(n.attrs.GetString("activation", ""), "relu");
  EXPECT_EQ(n.attrs.GetString("filter_layout", ""), "OHWI");
  // The output_shape constant is an attribute now, not a tensor of the graph.
  for (const Tensor& t : g.tensors()) EXPECT_NE(t.name, "output_shape");
}

TEST(TfliteOpsTest, CustomTransposedConvWithBias) {
  ModelSpec m;
  const auto x = m.Activation({1, 4, 6, 2}, "x");
  const auto w = m.FloatConstant({3, 2, 2, 2}, "w", std::vector<float>(24, 1.0f));
  const auto b = m.FloatConstant({3}, "b", {1, 2, 3});
  const auto y = m.Activation({1, 8, 6, 3}, "y");
  OpSpec& op = m.Op(kCustom, {x, w, b}, {y});
  op.custom = "Convolution2DTransposeBias";
  op.custom_options = {1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0};  // SAME, stride_w 1, stride_h 2
  m.inputs = {x};
  m.outputs = {y};
  Graph g = ImportChecked(m);
  const Node& n = g.node(0);
  EXPECT_EQ(n.kind, OpKind::kTransposeConv2D);
  EXPECT_EQ(n.source_op, "Convolution2DTransposeBias");
  EXPECT_EQ(n.attrs.GetInts("strides"), (Ints{2, 1}));
  EXPECT_EQ(n.attrs.GetString("padding", ""), "same");
  EXPECT_EQ(g.tensor(n.outputs[0]).shape, (Shape{1, 8, 6, 3}));
}

TEST(TfliteOpsTest, PoolsAndFullyConnected) {
  Graph g =
      ImportChecked(OneOp(kMaxPool, {1, 4, 4, 3}, 5, TableSpec().I8(0, 1).I32(1, 2).I32(2, 2).I32(3, 2).I32(4, 2)));
  EXPECT_EQ(g.node(0).kind, OpKind::kMaxPool2D);
  EXPECT_EQ(g.node(0).attrs.GetInts("kernel"), (Ints{2, 2}));
  EXPECT_EQ(g.node(0).attrs.GetInts("strides"), (Ints{2, 2}));
  EXPECT_EQ(g.node(0).attrs.GetString("padding", ""), "valid");
  g = ImportChecked(
      OneOp(kAvgPool, {1, 8, 8, 3}, 5, TableSpec().I8(0, 0).I32(1, 1).I32(2, 1).I32(3, 3).I32(4, 3).I8(5, 1)));
  EXPECT_EQ(g.node(0).kind, OpKind::kAvgPool2D);
  EXPECT_EQ(g.node(0).attrs.GetString("activation", ""), "relu");

  ModelSpec m;
  const auto x = m.Activation({2, 3, 5}, "x");
  const auto w = m.FloatConstant({4, 5}, "w", std::vector<float>(20, 1.0f));
  const auto b = m.FloatConstant({4}, "b", std::vector<float>(4, 0.0f));
  const auto y = m.Activation({2, 3, 4}, "y");
  m.Op(kFullyConnected, {x, w, b}, {y}).options_type = 8;
  m.ops.back().options.I8(0, 3).U8(2, 1);
  m.inputs = {x};
  m.outputs = {y};
  g = ImportChecked(m);
  const Node& fc = g.node(0);
  EXPECT_EQ(fc.kind, OpKind::kFullyConnected);
  EXPECT_EQ(fc.attrs.GetString("weights_layout", ""), "OI");
  EXPECT_EQ(fc.attrs.GetInt("keep_num_dims", 0), 1);
  EXPECT_EQ(fc.attrs.GetString("activation", ""), "relu6");
  EXPECT_EQ(g.tensor(fc.outputs[0]).shape, (Shape{2, 3, 4}));
}

TEST(TfliteOpsTest, BinaryAndUnaryOps) {
  struct Case {
    std::int32_t builtin;
    std::uint8_t options_type;
    OpKind kind;
  };
  for (const Case& c : {Case{kAdd, 11, OpKind::kAdd}, Case{kMul, 21, OpKind::kMul}, Case{kSub, 28, OpKind::kSub}}) {
    ModelSpec m;
    const auto a = m.Activation({1, 4}, "a");
    const auto b = m.Activation({4}, "b");
    const auto y = m.Activation({1, 4}, "y");
    m.Op(c.builtin, {a, b}, {y}).options_type = c.options_type;
    m.ops.back().options.I8(0, 2);
    m.inputs = {a, b};
    m.outputs = {y};
    Graph g = ImportChecked(m);
    EXPECT_EQ(g.node(0).kind, c.kind);
    EXPECT_EQ(g.node(0).attrs.GetString("activation", ""), "relu_n1_to_1");
  }
  for (auto [builtin, kind] : {std::pair{kRelu, OpKind::kRelu}, std::pair{kRelu6, OpKind::kRelu6},
                               std::pair{kLogistic, OpKind::kSigmoid}, std::pair{kHardSwish, OpKind::kHardSwish},
                               std::pair{kRound, OpKind::kRound}, std::pair{kSquare, OpKind::kSquare}}) {
    Graph g = ImportChecked(OneOp(builtin, {1, 8, 8, 3}, 0, {}));
    EXPECT_EQ(g.node(0).kind, kind);
    EXPECT_FALSE(g.node(0).attrs.Has("activation"));
  }
  Graph g = ImportChecked(OneOp(kLeakyRelu, {1, 8, 8, 3}, 75, TableSpec().F32(0, 0.125f)));
  EXPECT_EQ(g.node(0).kind, OpKind::kLeakyRelu);
  EXPECT_DOUBLE_EQ(g.node(0).attrs.GetFloat("alpha", 0), 0.125);
  g = ImportChecked(OneOp(kSoftmax, {1, 8, 8, 3}, 9, TableSpec().F32(0, 2.0f)));
  EXPECT_EQ(g.node(0).kind, OpKind::kSoftmax);
  EXPECT_DOUBLE_EQ(g.node(0).attrs.GetFloat("beta", 0), 2.0);
  EXPECT_EQ(g.node(0).attrs.GetInt("axis", 0), -1);
}

TEST(TfliteOpsTest, ConcatAndDepthToSpace) {
  ModelSpec m;
  const auto a = m.Activation({1, 4, 4, 2}, "a");
  const auto b = m.Activation({1, 4, 4, 6}, "b");
  const auto c = m.Activation({1, 4, 4, 8}, "c");
  const auto d = m.Activation({1, 8, 8, 2}, "d");
  m.Op(kConcat, {a, b}, {c}).options_type = 10;
  m.ops.back().options.I32(0, -1).I8(1, 1);
  m.Op(kDepthToSpace, {c}, {d}).options_type = 94;
  m.ops.back().options.I32(0, 2);
  m.inputs = {a, b};
  m.outputs = {d};
  Graph g = ImportChecked(m);
  EXPECT_EQ(g.node(0).kind, OpKind::kConcat);
  EXPECT_EQ(g.node(0).attrs.GetInt("axis", 0), -1);
  EXPECT_EQ(g.node(0).attrs.GetString("activation", ""), "relu");
  EXPECT_EQ(g.node(1).kind, OpKind::kDepthToSpace);
  EXPECT_EQ(g.node(1).attrs.GetInt("block_size", 0), 2);
  EXPECT_EQ(g.node(1).attrs.GetString("mode", ""), "DCR");
}

TEST(TfliteOpsTest, ReshapeFromInputOrOptions) {
  // Shape from a constant input.
  ModelSpec m;
  const auto x = m.Activation({1, 2, 3, 4}, "x");
  const auto s = m.IntConstant({2}, "shape", {1, -1});
  const auto y = m.Activation({1, 24}, "y");
  m.Op(kReshape, {x, s}, {y});
  m.inputs = {x};
  m.outputs = {y};
  Graph g = ImportChecked(m);
  EXPECT_EQ(g.node(0).kind, OpKind::kReshape);
  EXPECT_EQ(g.node(0).attrs.GetInts("shape"), (Ints{1, -1}));
  EXPECT_EQ(g.node(0).inputs.size(), 1u);
  // Shape from the options when there is no shape input.
  m.ops[0].inputs = {x};
  m.ops[0].options_type = 17;
  m.ops[0].options.I32s(0, {2, 12});
  m.tensors[static_cast<std::size_t>(y)].shape = {2, 12};
  g = ImportChecked(m);
  EXPECT_EQ(g.node(0).attrs.GetInts("shape"), (Ints{2, 12}));
  // Neither: computed at run time, so opaque with the file's shapes.
  ModelSpec d;
  const auto dx = d.Activation({1, 2, 3, 4}, "x");
  const auto ds = d.Activation({2}, "dyn_shape", kInt32);
  const auto dy = d.Activation({1, 24}, "y");
  d.Op(kReshape, {dx, ds}, {dy});
  d.inputs = {dx, ds};
  d.outputs = {dy};
  g = Import(d);
  EXPECT_EQ(g.node(0).kind, OpKind::kOpaque);
  EXPECT_EQ(g.node(0).unsupported_reason, "RESHAPE with a shape computed at run time is not supported by Latte");
  EXPECT_EQ(g.node(0).inputs.size(), 2u);
}

TEST(TfliteOpsTest, PadGivesOnnxOrder) {
  ModelSpec m;
  const auto x = m.Activation({1, 8, 8, 3}, "x");
  const auto p = m.IntConstant({4, 2}, "paddings", {0, 0, 1, 2, 3, 4, 0, 5});
  const auto y = m.Activation({1, 11, 15, 8}, "y");
  m.Op(kPad, {x, p}, {y});
  m.inputs = {x};
  m.outputs = {y};
  Graph g = ImportChecked(m);
  EXPECT_EQ(g.node(0).kind, OpKind::kPad);
  EXPECT_EQ(g.node(0).attrs.GetInts("pads"), (Ints{0, 1, 3, 0, 0, 2, 4, 5}));
  EXPECT_EQ(g.node(0).attrs.GetString("mode", ""), "constant");
  EXPECT_EQ(g.node(0).inputs.size(), 1u);
}

// Comparisons, logic, SELECT_V2 and ARG_MAX as a TF-exported mask or decoder writes them; GELU
// with its approximation.
TEST(TfliteOpsTest, ComparisonsLogicSelectArgMaxAndGelu) {
  constexpr std::int8_t kBool = 6;
  constexpr std::int32_t kArgMax = 56, kLess = 58, kGreater = 61, kGreaterEqual = 62, kLessEqual = 63,
                         kSelect = 64, kEqual = 71, kNotEqual = 72, kArgMin = 79, kLogicalOr = 84,
                         kLogicalAnd = 86, kLogicalNot = 87, kSelectV2 = 123, kGelu = 150;
  ModelSpec m;
  const auto x = m.Activation({1, 4, 6}, "x");
  const auto t = m.FloatConstant({6}, "t", {0, 1, 2, 3, 4, 5});
  std::vector<std::int32_t> masks;
  const std::pair<std::int32_t, OpKind> comparisons[] = {{kLess, OpKind::kLess},       {kGreater, OpKind::kGreater},
                                                         {kGreaterEqual, OpKind::kGreaterEqual},
                                                         {kLessEqual, OpKind::kLessEqual}, {kEqual, OpKind::kEqual},
                                                         {kNotEqual, OpKind::kNotEqual}};
  for (const auto& [code, kind] : comparisons) {
    masks.push_back(m.Activation({1, 4, 6}, std::string("m").append(std::to_string(code)), kBool));
    m.Op(code, {x, t}, {masks.back()});
  }
  const auto both = m.Activation({1, 4, 6}, "both", kBool);
  m.Op(kLogicalAnd, {masks[0], masks[1]}, {both});
  const auto either = m.Activation({1, 4, 6}, "either", kBool);
  m.Op(kLogicalOr, {both, masks[2]}, {either});
  const auto neither = m.Activation({1, 4, 6}, "neither", kBool);
  m.Op(kLogicalNot, {either}, {neither});
  const auto fill = m.FloatConstant({}, "fill", {-1e4f});
  const auto masked = m.Activation({1, 4, 6}, "masked");
  m.Op(kSelectV2, {neither, x, fill}, {masked});
  const auto same = m.Activation({1, 4, 6}, "same");
  m.Op(kSelect, {masks[3], x, masked}, {same});
  const auto axis = m.IntConstant({1}, "axis", {2});
  const auto best = m.Activation({1, 4}, "best", kInt64);
  m.Op(kArgMax, {same, axis}, {best});
  const auto worst = m.Activation({1, 4}, "worst", kInt32);
  m.Op(kArgMin, {same, axis}, {worst});
  const auto g1 = m.Activation({1, 4, 6}, "g1");
  OpSpec& gelu = m.Op(kGelu, {x}, {g1});
  gelu.options_type = 116;
  gelu.options.U8(0, 1);
  const auto g2 = m.Activation({1, 4, 6}, "g2");
  m.Op(kGelu, {x}, {g2});
  m.inputs = {x};
  m.outputs = {best, worst, g1, g2, masks[4], masks[5]};
  Graph g = ImportChecked(m);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(g.node(static_cast<NodeId>(i)).kind, comparisons[i].second) << i;
    EXPECT_EQ(g.tensor(g.node(static_cast<NodeId>(i)).outputs[0]).dtype, DataType::kBool);
  }
  EXPECT_EQ(g.node(6).kind, OpKind::kLogicalAnd);
  EXPECT_EQ(g.node(7).kind, OpKind::kLogicalOr);
  EXPECT_EQ(g.node(8).kind, OpKind::kLogicalNot);
  EXPECT_EQ(g.node(9).kind, OpKind::kWhere);
  EXPECT_EQ(g.node(9).inputs.size(), 3u);
  EXPECT_EQ(g.tensor(g.node(9).outputs[0]).dtype, DataType::kFloat32);
  EXPECT_EQ(g.node(10).kind, OpKind::kWhere) << "SELECT of same-shape inputs";
  EXPECT_EQ(g.node(11).kind, OpKind::kArgMax);
  EXPECT_EQ(g.node(11).attrs.GetInt("axis", -1), 2);
  EXPECT_EQ(g.node(11).attrs.GetInt("keepdims", 1), 0);
  EXPECT_EQ(g.tensor(g.node(11).outputs[0]).shape, (Ints{1, 4}));
  EXPECT_EQ(g.tensor(g.node(11).outputs[0]).dtype, DataType::kInt64);
  EXPECT_EQ(g.node(12).kind, OpKind::kArgMin);
  EXPECT_EQ(g.tensor(g.node(12).outputs[0]).dtype, DataType::kInt32) << "the file's index type";
  EXPECT_EQ(g.node(13).attrs.GetString("approximate", ""), "tanh");
  EXPECT_EQ(g.node(14).attrs.GetString("approximate", ""), "none");
}

// TF1's SELECT picks whole rows by a rank-1 condition: not a where, so it stays opaque, saying so.
TEST(TfliteOpsTest, SelectOfRowsStaysOpaque) {
  ModelSpec m;
  const auto c = m.Activation({4}, "c", 6);
  const auto x = m.Activation({4, 3}, "x");
  const auto y = m.Activation({4, 3}, "y");
  const auto z = m.Activation({4, 3}, "z");
  m.Op(64, {c, x, y}, {z});
  m.inputs = {c, x, y};
  m.outputs = {z};
  Graph g = Import(m);
  ASSERT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(g.node(0).kind, OpKind::kOpaque);
  EXPECT_NE(g.node(0).unsupported_reason.find("row selection"), std::string::npos) << g.node(0).unsupported_reason;
}

TEST(TfliteOpsTest, ReductionsAndResize) {
  ModelSpec m;
  const auto x = m.Activation({1, 8, 8, 3}, "x");
  const auto axes = m.IntConstant({2}, "axes", {1, 2});
  const auto y = m.Activation({1, 3}, "y");
  m.Op(kMean, {x, axes}, {y}).options_type = 27;
  m.ops.back().options.U8(0, 0);
  const auto z = m.Activation({1, 1, 1, 3}, "z");
  m.Op(kSum, {x, axes}, {z}).options_type = 27;
  m.ops.back().options.U8(0, 1);
  const auto size = m.IntConstant({2}, "size", {16, 12});
  const auto r = m.Activation({1, 16, 12, 3}, "r");
  m.Op(kResizeBilinear, {x, size}, {r}).options_type = 15;
  m.ops.back().options.U8(2, 1);
  m.inputs = {x};
  m.outputs = {y, z, r};
  Graph g = ImportChecked(m);
  EXPECT_EQ(g.node(0).kind, OpKind::kMean);
  EXPECT_EQ(g.node(0).attrs.GetInts("axes"), (Ints{1, 2}));
  EXPECT_EQ(g.node(0).attrs.GetInt("keepdims", 1), 0);
  EXPECT_EQ(g.node(1).kind, OpKind::kReduceSum);
  EXPECT_EQ(g.node(1).attrs.GetInt("keepdims", 0), 1);
  EXPECT_EQ(g.node(2).kind, OpKind::kResize);
  EXPECT_EQ(g.node(2).attrs.GetInts("sizes"), (Ints{16, 12}));
  EXPECT_EQ(g.node(2).attrs.GetString("mode", ""), "bilinear");
  EXPECT_EQ(g.node(2).attrs.GetString("coordinate_transformation", ""), "align_corners");
}

TEST(TfliteOpsTest, TransposeSqueezeSplit) {
  ModelSpec m;
  const auto x = m.Activation({1, 8, 6, 1}, "x");
  const auto perm = m.IntConstant({4}, "perm", {0, 3, 1, 2});
  const auto t = m.Activation({1, 1, 8, 6}, "t");
  m.Op(kTranspose, {x, perm}, {t});
  const auto s = m.Activation({8, 6}, "s");
  m.Op(kSqueeze, {t}, {s}).options_type = 30;
  m.ops.back().options.I32s(0, {0, 1});
  const auto axis = m.IntConstant({}, "axis", {0});
  const auto a = m.Activation({4, 6}, "a");
  const auto b = m.Activation({4, 6}, "b");
  m.Op(kSplit, {axis, s}, {a, b}).options_type = 35;
  m.ops.back().options.I32(0, 2);
  m.inputs = {x};
  m.outputs = {a, b};
  Graph g = ImportChecked(m);
  EXPECT_EQ(g.node(0).attrs.GetInts("perm"), (Ints{0, 3, 1, 2}));
  EXPECT_EQ(g.node(1).attrs.GetInts("axes"), (Ints{0, 1}));
  EXPECT_EQ(g.node(2).kind, OpKind::kSplit);
  EXPECT_EQ(g.node(2).attrs.GetInt("axis", -1), 0);
  EXPECT_EQ(g.node(2).inputs.size(), 1u);
  EXPECT_EQ(g.node(2).outputs.size(), 2u);
}

TEST(TfliteOpsTest, StridedSliceOnlyWhenItIsASlice) {
  auto model = [](std::int32_t shrink_mask) {
    ModelSpec m;
    const auto x = m.Activation({1, 8, 8, 3}, "x");
    const auto begin = m.IntConstant({4}, "begin", {0, 1, 0, 0});
    const auto end = m.IntConstant({4}, "end", {1, 7, 8, 3});
    const auto strides = m.IntConstant({4}, "strides", {1, 2, -1, 1});
    const auto y = m.Activation({1, 3, 8, 3}, "y");
    m.Op(kStridedSlice, {x, begin, end, strides}, {y}).options_type = 32;
    m.ops.back().options.I32(0, 0b0100).I32(1, 0b0100).I32(4, shrink_mask);
    m.inputs = {x};
    m.outputs = {y};
    return m;
  };
  Graph g = ImportChecked(model(0));
  const Node& n = g.node(0);
  EXPECT_EQ(n.kind, OpKind::kSlice);
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  EXPECT_EQ(n.attrs.GetInts("starts"), (Ints{0, 1, kMax, 0}));  // masked dim 2, negative step: from the end
  EXPECT_EQ(n.attrs.GetInts("ends"), (Ints{1, 7, kMin, 3}));
  EXPECT_EQ(n.attrs.GetInts("steps"), (Ints{1, 2, -1, 1}));
  EXPECT_EQ(n.attrs.GetInts("axes"), (Ints{0, 1, 2, 3}));
  g = Import(model(1));
  EXPECT_EQ(g.node(0).kind, OpKind::kOpaque);
  EXPECT_NE(g.node(0).unsupported_reason.find("shrink-axis"), std::string::npos);
}

TEST(TfliteOpsTest, UnknownOpsAreOpaqueWithTheirShapes) {
  ModelSpec m;
  const auto a = m.Activation({1, 4}, "a");
  const auto b = m.Activation({1, 4}, "b");
  const auto less = m.Activation({1, 4}, "less", 6);
  m.Op(95, {a, b}, {less});  // FLOOR_MOD, with the (odd) output type the file says
  const auto hlo = m.Activation({1, 4}, "hlo");
  m.Op(kStablehloAdd, {a, b}, {hlo});
  const auto custom = m.Activation({2, 7}, "custom");
  m.Op(kCustom, {a}, {custom}).custom = "MaxPoolingWithArgmax2D";
  const auto after = m.Activation({2, 7}, "after");
  m.Op(kRelu, {custom}, {after});
  m.inputs = {a, b};
  m.outputs = {less, hlo, after};
  Graph g = ImportChecked(m);
  ASSERT_EQ(g.num_nodes(), 4u);
  EXPECT_EQ(g.node(0).kind, OpKind::kOpaque);
  EXPECT_EQ(g.node(0).source_op, "FLOOR_MOD");
  EXPECT_EQ(g.node(0).unsupported_reason, "TFLite builtin op 'FLOOR_MOD' (code 95) is not supported by Latte");
  EXPECT_EQ(g.node(0).inputs.size(), 2u);
  EXPECT_EQ(g.tensor(g.node(0).outputs[0]).dtype, DataType::kBool);
  EXPECT_EQ(g.node(1).source_op, "BUILTIN_163");
  EXPECT_EQ(g.node(2).source_op, "MaxPoolingWithArgmax2D");
  EXPECT_EQ(g.node(2).unsupported_reason, "custom op 'MaxPoolingWithArgmax2D' is not supported by Latte");
  // The opaque node keeps the file's output shape, and what follows it is inferred from it.
  EXPECT_EQ(g.tensor(g.node(2).outputs[0]).shape, (Shape{2, 7}));
  EXPECT_EQ(g.tensor(g.node(3).outputs[0]).shape, (Shape{2, 7}));
}

// fp16 weights behind DEQUANTIZE become float32 constants read by the conv directly.
TEST(TfliteOpsTest, Fp16WeightsAreFolded) {
  ModelSpec m;
  const auto x = m.Activation({1, 4, 4, 2}, "x");
  const std::vector<float> values = {0.5f, -1.25f, 3.0f, 65504.0f, -0.0f, 1e-4f};
  std::vector<std::uint16_t> halves;
  for (float v : values) halves.push_back(FloatToHalf(v));
  const auto w16 = m.Constant({3, 1, 1, 2}, "w_fp16", kFloat16, Bytes(halves));
  const auto w = m.Activation({3, 1, 1, 2}, "w_dequantized");
  const auto y = m.Activation({1, 4, 4, 3}, "y");
  m.Op(kDequantize, {w16}, {w});
  m.Op(kConv, {x, w}, {y}).options_type = 1;
  m.ops.back().options.I32(1, 1).I32(2, 1);
  m.inputs = {x};
  m.outputs = {y};
  Graph g = ImportChecked(m);
  ASSERT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(g.node(0).kind, OpKind::kConv2D);
  const Tensor& weights = g.tensor(g.node(0).inputs[1]);
  EXPECT_EQ(weights.name, "w_dequantized");
  EXPECT_EQ(weights.shape, (Shape{3, 1, 1, 2}));
  std::vector<float> expected;
  for (std::uint16_t h : halves) expected.push_back(HalfToFloat(h));
  EXPECT_EQ(Floats(weights), expected);
  for (const Tensor& t : g.tensors()) EXPECT_NE(t.name, "w_fp16");  // the fp16 source is gone
}

TEST(TfliteOpsTest, Int8PerChannelWeightsAreFolded) {
  ModelSpec m;
  const auto q = m.Constant({2, 3}, "w_int8", kInt8, {1, 2, 3, 0xff, 0xfe, 0x80});
  m.tensors[static_cast<std::size_t>(q)].scale = {0.5f, 2.0f};
  m.tensors[static_cast<std::size_t>(q)].zero_point = {1, 0};
  m.tensors[static_cast<std::size_t>(q)].quantized_dimension = 0;
  const auto w = m.Activation({2, 3}, "w");
  const auto x = m.Activation({1, 3}, "x");
  const auto y = m.Activation({1, 2}, "y");
  m.Op(kDequantize, {q}, {w});
  m.Op(kFullyConnected, {x, w}, {y});
  m.inputs = {x};
  m.outputs = {y};
  Graph g = ImportChecked(m);
  ASSERT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(Floats(g.tensor(g.node(0).inputs[1])), (std::vector<float>{0.0f, 0.5f, 1.0f, -2.0f, -4.0f, -256.0f}));
  EXPECT_TRUE(g.tensor(g.node(0).inputs[1]).quant.empty());
}

TEST(TfliteOpsTest, DequantizeOfAnActivationStays) {
  ModelSpec m;
  const auto x = m.Activation({1, 4}, "x", kInt8);
  m.tensors[static_cast<std::size_t>(x)].scale = {0.25f};
  m.tensors[static_cast<std::size_t>(x)].zero_point = {-3};
  const auto y = m.Activation({1, 4}, "y");
  m.Op(kDequantize, {x}, {y});
  m.inputs = {x};
  m.outputs = {y};
  Graph g = ImportChecked(m);
  ASSERT_EQ(g.num_nodes(), 1u);
  EXPECT_EQ(g.node(0).kind, OpKind::kDequantize);
  const Tensor& in = g.tensor(g.node(0).inputs[0]);
  EXPECT_EQ(in.dtype, DataType::kInt8);
  EXPECT_EQ(in.quant.scale, (std::vector<float>{0.25f}));
  EXPECT_EQ(in.quant.zero_point, (std::vector<std::int64_t>{-3}));
}

// The dense 4x4 matrix of the sparse tests.
const std::vector<float> kDense = {1, 0, 2, 0,  //
                                   0, 0, 0, 0,  //
                                   0, 3, 0, 4,  //
                                   5, 0, 0, 0};

// A sparse constant read by FULLY_CONNECTED directly; returns its dense data.
std::vector<float> DensifyThroughFc(const SparsitySpec& sparsity, const std::vector<float>& values) {
  ModelSpec m;
  const auto x = m.Activation({1, 4}, "x");
  const auto w = m.FloatConstant({4, 4}, "w", values);
  m.tensors[static_cast<std::size_t>(w)].sparsity = sparsity;
  const auto y = m.Activation({1, 4}, "y");
  m.Op(kFullyConnected, {x, w}, {y});
  m.inputs = {x};
  m.outputs = {y};
  Graph g = ImportChecked(m);
  if (g.num_nodes() != 1) return {};
  return Floats(g.tensor(g.node(0).inputs[1]));
}

TEST(TfliteOpsTest, DensifyCsrRowMajorWithEachIndexType) {
  using D = SparsitySpec::Dim;
  for (std::uint8_t type : {1, 2, 3}) {  // int32, uint16, uint8 index vectors
    SparsitySpec s{{0, 1}, {}, {D{0, 4, type, {}, {}}, D{1, 0, type, {0, 2, 2, 4, 5}, {0, 2, 1, 3, 0}}}};
    EXPECT_EQ(DensifyThroughFc(s, {1, 2, 3, 4, 5}), kDense) << int{type};
  }
}

TEST(TfliteOpsTest, DensifyColumnMajorTraversal) {
  using D = SparsitySpec::Dim;
  // Columns outer (dense), rows inner (CSR): column 0 holds rows 0 and 3, and so on.
  SparsitySpec s{{1, 0}, {}, {D{0, 4, 3, {}, {}}, D{1, 0, 3, {0, 2, 3, 4, 5}, {0, 3, 2, 0, 2}}}};
  EXPECT_EQ(DensifyThroughFc(s, {1, 5, 3, 2, 4}), kDense);
}

TEST(TfliteOpsTest, DensifyBothLevelsSparse) {
  using D = SparsitySpec::Dim;
  // Rows 0, 2, 3 present (row 1 empty), then their columns.
  SparsitySpec s{{0, 1}, {}, {D{1, 0, 2, {0, 3}, {0, 2, 3}}, D{1, 0, 2, {0, 2, 4, 5}, {0, 2, 1, 3, 0}}}};
  EXPECT_EQ(DensifyThroughFc(s, {1, 2, 3, 4, 5}), kDense);
}

TEST(TfliteOpsTest, DensifyBlockSparse) {
  using D = SparsitySpec::Dim;
  // 2x2 blocks: block rows dense, block columns CSR (block (0,0) and block (1,1) present),
  // each block dense row-major.
  SparsitySpec s{{0, 1, 2, 3},
                 {0, 1},
                 {D{0, 2, 3, {}, {}}, D{1, 0, 3, {0, 1, 2}, {0, 1}}, D{0, 2, 3, {}, {}}, D{0, 2, 3, {}, {}}}};
  EXPECT_EQ(DensifyThroughFc(s, {1, 2, 3, 4, 0, 0, 5, 6}), (std::vector<float>{1, 2, 0, 0,  //
                                                                               3, 4, 0, 0,  //
                                                                               0, 0, 0, 0,  //
                                                                               0, 0, 5, 6}));
  // Block dims traversed column-first inside each block.
  SparsitySpec t{{0, 1, 3, 2},
                 {0, 1},
                 {D{0, 2, 3, {}, {}}, D{1, 0, 3, {0, 1, 2}, {0, 1}}, D{0, 2, 3, {}, {}}, D{0, 2, 3, {}, {}}}};
  EXPECT_EQ(DensifyThroughFc(t, {1, 3, 2, 4, 0, 5, 0, 6}), (std::vector<float>{1, 2, 0, 0,  //
                                                                               3, 4, 0, 0,  //
                                                                               0, 0, 0, 0,  //
                                                                               0, 0, 5, 6}));
}

// Sparse fp16 → DENSIFY → DEQUANTIZE → CONV_2D (the sparse MediaPipe layout) folds to one conv
// with dense float32 weights, whatever order the file lists the operators in.
TEST(TfliteOpsTest, SparseFp16ChainIsFolded) {
  using D = SparsitySpec::Dim;
  for (bool reversed : {false, true}) {
    ModelSpec m;
    const auto x = m.Activation({1, 2, 2, 4}, "x");
    std::vector<std::uint16_t> halves;
    for (float v : {1.0f, 2.0f, 3.0f, 4.0f, 5.0f}) halves.push_back(FloatToHalf(v));
    const auto sparse = m.Constant({4, 1, 1, 4}, "w_sparse", kFloat16, Bytes(halves));
    m.tensors[static_cast<std::size_t>(sparse)].sparsity = SparsitySpec{
        {0, 1, 2, 3},
        {},
        {D{0, 4, 3, {}, {}}, D{0, 1, 3, {}, {}}, D{0, 1, 3, {}, {}}, D{1, 0, 3, {0, 2, 2, 4, 5}, {0, 2, 1, 3, 0}}}};
    const auto dense16 = m.Activation({4, 1, 1, 4}, "w_dense16", kFloat16);
    const auto w = m.Activation({4, 1, 1, 4}, "w");
    const auto y = m.Activation({1, 2, 2, 4}, "y");
    m.Op(kDensify, {sparse}, {dense16});
    m.Op(kDequantize, {dense16}, {w});
    m.Op(kConv, {x, w}, {y}).options_type = 1;
    m.ops.back().options.I32(1, 1).I32(2, 1);
    if (reversed) std::swap(m.ops[0], m.ops[1]);
    m.inputs = {x};
    m.outputs = {y};
    Graph g = ImportChecked(m);
    ASSERT_EQ(g.num_nodes(), 1u);
    EXPECT_EQ(g.node(0).kind, OpKind::kConv2D);
    EXPECT_EQ(Floats(g.tensor(g.node(0).inputs[1])), kDense);
    EXPECT_EQ(g.num_tensors(), 3u);  // x, w, y: the sparse and fp16 tensors are gone
  }
}

TEST(TfliteOpsTest, ExternalBuffers) {
  // Weights stored after the flatbuffer, found by offset and size from the file start.
  auto build = [](std::uint64_t offset) {
    ModelSpec m;
    const auto x = m.Activation({1, 3}, "x");
    m.buffers.push_back(BufferSpec{{}, offset, 12});
    const auto c = m.Activation({3}, "c");
    m.tensors[static_cast<std::size_t>(c)].buffer = 1;
    const auto y = m.Activation({1, 3}, "y");
    m.Op(kAdd, {x, c}, {y});
    m.inputs = {x};
    m.outputs = {y};
    return m.Build();
  };
  const std::size_t size = build(1000).size();  // the offset's value does not change the size
  const std::size_t offset = (size + 15) / 16 * 16;
  std::vector<std::uint8_t> bytes = build(offset);
  ASSERT_EQ(bytes.size(), size);
  bytes.resize(offset);
  const std::vector<std::uint8_t> data = Bytes(std::vector<float>{1.5f, -2.0f, 8.0f});
  bytes.insert(bytes.end(), data.begin(), data.end());
  auto graph = ImportModelBytes(bytes, ModelFormat::kTflite);
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  EXPECT_EQ(Floats(graph->tensor(graph->node(0).inputs[1])), (std::vector<float>{1.5f, -2.0f, 8.0f}));
  // One byte short: the data no longer fits in the file.
  bytes.pop_back();
  auto cut = ImportTflite(bytes);
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.status().message().find("lies outside the"), std::string::npos) << cut.status().message();
}

TEST(TfliteOpsTest, ShapeSignatureAndQuantization) {
  ModelSpec m;
  const auto x = m.Activation({1, 16, 16, 3}, "x");
  m.tensors[static_cast<std::size_t>(x)].shape_signature = std::vector<std::int32_t>{-1, 16, -1, 3};
  const auto y = m.Activation({1, 16, 16, 3}, "y", kUInt8);
  m.tensors[static_cast<std::size_t>(y)].scale = {0.5f, 0.25f, 1.0f};
  m.tensors[static_cast<std::size_t>(y)].zero_point = {128, 127, 126};
  m.tensors[static_cast<std::size_t>(y)].quantized_dimension = 3;
  m.Op(kRelu, {x}, {y});
  m.inputs = {x};
  m.outputs = {y};
  Graph g = Import(m);
  EXPECT_EQ(g.tensor(g.inputs[0]).shape, (Shape{kUnknownDim, 16, kUnknownDim, 3}));
  const Tensor& out = g.tensor(g.outputs[0]);
  EXPECT_EQ(out.dtype, DataType::kUInt8);
  EXPECT_EQ(out.quant.scale, (std::vector<float>{0.5f, 0.25f, 1.0f}));
  EXPECT_EQ(out.quant.zero_point, (std::vector<std::int64_t>{128, 127, 126}));
  EXPECT_EQ(out.quant.axis, 3);
  // ImportModel sets the unknown batch to 1 but cannot guess the width.
  auto imported = ImportModelBytes(m.Build(), ModelFormat::kTflite);
  ASSERT_FALSE(imported.ok());
  EXPECT_NE(imported.status().message().find("unknown dims"), std::string::npos) << imported.status().message();
  ImportOptions options;
  options.input_shapes["x"] = {2, 16, 8, 3};
  imported = ImportModelBytes(m.Build(), ModelFormat::kTflite, options);
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  EXPECT_EQ(imported->tensor(imported->outputs[0]).shape, (Shape{2, 16, 8, 3}));
}

TEST(TfliteOpsTest, GraphMetadata) {
  ModelSpec m;
  const auto x = m.Activation({1, 4}, "x");
  const auto y = m.Activation({1, 4}, "y");
  m.Op(kRelu, {x}, {y});
  m.inputs = {x};
  m.outputs = {y};
  m.subgraph_name = "serving_default";
  Graph g = Import(m);
  EXPECT_EQ(g.source_format, "tflite");
  EXPECT_EQ(g.name, "serving_default");
  EXPECT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.outputs.size(), 1u);
}

// Names go into text and JSON reports: what is not UTF-8 (or is a control character) is
// escaped, valid UTF-8 is kept.
TEST(TfliteOpsTest, NamesAreValidUtf8) {
  ModelSpec m;
  const auto x = m.Activation({1, 4}, std::string("in\xff\xc3(\nx") + "\xc3\xa9");
  const auto y = m.Activation({1, 4}, "y\xe2\x82");
  OpSpec& op = m.Op(kCustom, {x}, {y});
  op.custom = "Op\x80";
  m.inputs = {x};
  m.outputs = {y};
  Graph g = Import(m);
  EXPECT_EQ(g.tensor(g.inputs[0]).name, "in\\xff\\xc3(\\x0ax\xc3\xa9");
  EXPECT_EQ(g.tensor(g.outputs[0]).name, "y\\xe2\\x82");
  EXPECT_EQ(g.node(0).source_op, "Op\\x80");
}

}  // namespace
}  // namespace latte
