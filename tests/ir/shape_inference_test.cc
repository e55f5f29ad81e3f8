#include "ir/shape_inference.h"

#include <gtest/gtest.h>

#include "ir/graph_builder.h"
#include "ir/op_params.h"

namespace latte {
namespace {

using Ints = std::vector<std::int64_t>;

Attributes Attrs(std::initializer_list<std::pair<const char*, AttrValue>> list) {
  Attributes a;
  for (const auto& [k, v] : list) a.Set(k, v);
  return a;
}

// Builds input → op → output and returns the inferred output shape (or the error).
Expected<Shape> OneOp(OpKind kind, Shape in, Attributes attrs, std::vector<std::pair<Shape, bool>> extra = {}) {
  GraphBuilder b;
  std::vector<TensorId> inputs = {b.Input("x", std::move(in))};
  int i = 0;
  for (auto& [shape, constant] : extra) {
    std::string name = "in" + std::to_string(++i);
    inputs.push_back(constant ? b.Constant(name, shape) : b.Input(name, shape));
  }
  TensorId y = b.Op1(kind, "op", inputs, std::move(attrs));
  auto g = b.Finish({y});
  if (!g.ok()) return g.status();
  return g->tensor(y).shape;
}

TEST(ConvOutputSize, PaddingModes) {
  std::int64_t b = 0, e = 0;
  EXPECT_EQ(*ConvOutputSize(128, 3, 2, 1, "same", b, e), 64);
  EXPECT_EQ(b, 0);  // total padding 1: TF SAME puts it at the end
  EXPECT_EQ(e, 1);
  EXPECT_EQ(*ConvOutputSize(128, 3, 2, 1, "same_lower", b, e), 64);
  EXPECT_EQ(b, 1);
  EXPECT_EQ(*ConvOutputSize(7, 3, 1, 2, "valid", b, e), 3);  // dilated kernel spans 5
  b = 1, e = 1;
  EXPECT_EQ(*ConvOutputSize(5, 2, 2, 1, "explicit", b, e), 3);
  b = 0, e = 0;
  EXPECT_EQ(*ConvOutputSize(5, 2, 2, 1, "explicit", b, e, /*ceil_mode=*/true), 3);
  EXPECT_EQ(*ConvOutputSize(5, 2, 2, 1, "explicit", b, e, false), 2);
  EXPECT_FALSE(ConvOutputSize(2, 5, 1, 1, "valid", b, e).ok());
  EXPECT_FALSE(ConvOutputSize(8, 3, 1, 1, "sideways", b, e).ok());
}

TEST(ShapeInference, Conv2DNhwcSameStride2) {
  auto s = OneOp(OpKind::kConv2D, {1, 128, 128, 3},
                 Attrs({{"layout", "NHWC"}, {"filter_layout", "OHWI"}, {"strides", Ints{2, 2}}, {"padding", "same"}}),
                 {{{24, 5, 5, 3}, true}, {{24}, true}});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(*s, (Shape{1, 64, 64, 24}));
}

TEST(ShapeInference, GroupedDilatedConvNchwExplicitPads) {
  auto s = OneOp(OpKind::kConv2D, {2, 8, 20, 30},
                 Attrs({{"layout", "NCHW"}, {"filter_layout", "OIHW"}, {"groups", std::int64_t{2}},
                        {"dilations", Ints{2, 1}}, {"padding", "explicit"}, {"pads", Ints{1, 0, 1, 2}}}),
                 {{{16, 4, 3, 3}, true}});
  ASSERT_TRUE(s.ok()) << s.status().message();
  // H: 20 + 2 - 5 + 1 = 18; W: 30 + 2 - 3 + 1 = 30.
  EXPECT_EQ(*s, (Shape{2, 16, 18, 30}));
  auto bad = OneOp(OpKind::kConv2D, {1, 8, 20, 30},
                   Attrs({{"layout", "NCHW"}, {"filter_layout", "OIHW"}, {"groups", std::int64_t{3}}}),
                   {{{16, 4, 3, 3}, true}});
  EXPECT_FALSE(bad.ok());
}

TEST(ShapeInference, DepthwiseBothLayouts) {
  auto tfl = OneOp(OpKind::kDepthwiseConv2D, {1, 32, 32, 16},
                   Attrs({{"filter_layout", "1HWO"}, {"padding", "valid"}}), {{{1, 3, 3, 32}, true}});
  ASSERT_TRUE(tfl.ok()) << tfl.status().message();
  EXPECT_EQ(*tfl, (Shape{1, 30, 30, 32}));
  auto onnx = OneOp(OpKind::kDepthwiseConv2D, {1, 16, 32, 32},
                    Attrs({{"layout", "NCHW"}, {"filter_layout", "OIHW"}, {"padding", "same"}, {"strides", Ints{2, 2}}}),
                    {{{16, 1, 3, 3}, true}});
  ASSERT_TRUE(onnx.ok()) << onnx.status().message();
  EXPECT_EQ(*onnx, (Shape{1, 16, 16, 16}));
}

TEST(ShapeInference, TransposeConv) {
  auto tfl = OneOp(OpKind::kTransposeConv2D, {1, 16, 16, 8},
                   Attrs({{"filter_layout", "OHWI"}, {"strides", Ints{2, 2}}, {"padding", "same"}}),
                   {{{4, 2, 2, 8}, true}});
  ASSERT_TRUE(tfl.ok()) << tfl.status().message();
  EXPECT_EQ(*tfl, (Shape{1, 32, 32, 4}));
  auto onnx = OneOp(OpKind::kTransposeConv2D, {1, 8, 5, 5},
                    Attrs({{"layout", "NCHW"}, {"filter_layout", "IOHW"}, {"strides", Ints{3, 2}},
                           {"padding", "explicit"}, {"pads", Ints{1, 2, 1, 2}}, {"output_padding", Ints{1, 1}}}),
                    {{{8, 2, 3, 3}, true}});
  ASSERT_TRUE(onnx.ok()) << onnx.status().message();
  // ONNX: (in-1)*s + k + output_padding - pads: H = 12 + 3 + 1 - 2 = 14, W = 8 + 3 + 1 - 4 = 8.
  EXPECT_EQ(*onnx, (Shape{1, 2, 14, 8}));
}

TEST(ShapeInference, FullyConnectedAndMatMul) {
  EXPECT_EQ(*OneOp(OpKind::kFullyConnected, {1, 1, 1, 1152}, Attrs({}), {{{10, 1152}, true}}), (Shape{1, 10}));
  EXPECT_EQ(*OneOp(OpKind::kFullyConnected, {1, 4, 6}, Attrs({{"keep_num_dims", std::int64_t{1}}}), {{{3, 6}, true}}),
            (Shape{1, 4, 3}));
  EXPECT_EQ(*OneOp(OpKind::kFullyConnected, {2, 5, 6}, Attrs({{"weights_layout", "IO"}}), {{{6, 7}, true}}),
            (Shape{2, 5, 7}));
  EXPECT_FALSE(OneOp(OpKind::kFullyConnected, {1, 7}, Attrs({}), {{{3, 6}, true}}).ok());
  EXPECT_EQ(*OneOp(OpKind::kMatMul, {3, 1, 4, 5}, Attrs({}), {{{2, 5, 6}, false}}), (Shape{3, 2, 4, 6}));
  EXPECT_EQ(*OneOp(OpKind::kMatMul, {5}, Attrs({}), {{{5, 6}, false}}), (Shape{6}));
  EXPECT_EQ(*OneOp(OpKind::kMatMul, {4, 5}, Attrs({{"transpose_b", std::int64_t{1}}}), {{{6, 5}, false}}), (Shape{4, 6}));
  EXPECT_FALSE(OneOp(OpKind::kMatMul, {4, 5}, Attrs({}), {{{6, 5}, false}}).ok());
}

TEST(ShapeInference, Pools) {
  EXPECT_EQ(*OneOp(OpKind::kMaxPool2D, {1, 64, 64, 8}, Attrs({{"kernel", Ints{2, 2}}, {"strides", Ints{2, 2}}})),
            (Shape{1, 32, 32, 8}));
  EXPECT_EQ(*OneOp(OpKind::kAvgPool2D, {1, 3, 5, 5},
                   Attrs({{"layout", "NCHW"}, {"kernel", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"ceil_mode", std::int64_t{1}}})),
            (Shape{1, 3, 3, 3}));
  EXPECT_EQ(*OneOp(OpKind::kGlobalAvgPool, {1, 40, 7, 9}, Attrs({{"layout", "NCHW"}})), (Shape{1, 40, 1, 1}));
  EXPECT_FALSE(OneOp(OpKind::kMaxPool2D, {1, 8, 8, 2}, Attrs({})).ok());  // no kernel
  EXPECT_FALSE(OneOp(OpKind::kMaxPool2D, {1, 8, 8, 2}, Attrs({{"kernel", Ints{2, 2}}, {"strides", Ints{0, 1}}})).ok());
}

TEST(ShapeInference, ElementwiseBroadcasting) {
  EXPECT_EQ(*OneOp(OpKind::kAdd, {1, 16, 16, 8}, Attrs({}), {{{8}, true}}), (Shape{1, 16, 16, 8}));
  EXPECT_EQ(*OneOp(OpKind::kMul, {1, 8, 1, 1}, Attrs({}), {{{1, 8, 4, 4}, false}}), (Shape{1, 8, 4, 4}));
  EXPECT_FALSE(OneOp(OpKind::kSub, {2, 3}, Attrs({}), {{{4, 3}, false}}).ok());
  EXPECT_EQ(*OneOp(OpKind::kHardSwish, {1, 2, 3}, Attrs({})), (Shape{1, 2, 3}));
  EXPECT_EQ(*OneOp(OpKind::kPRelu, {1, 4, 4, 8}, Attrs({}), {{{1, 1, 8}, true}}), (Shape{1, 4, 4, 8}));
}

TEST(ShapeInference, Reductions) {
  EXPECT_EQ(*OneOp(OpKind::kMean, {1, 7, 7, 32}, Attrs({{"axes", Ints{1, 2}}, {"keepdims", std::int64_t{0}}})),
            (Shape{1, 32}));
  EXPECT_EQ(*OneOp(OpKind::kReduceMax, {1, 7, 7, 32}, Attrs({{"axes", Ints{-1}}})), (Shape{1, 7, 7, 1}));
  EXPECT_EQ(*OneOp(OpKind::kReduceSum, {2, 3}, Attrs({{"keepdims", std::int64_t{0}}})), (Shape{}));
  EXPECT_FALSE(OneOp(OpKind::kMean, {2, 3}, Attrs({{"axes", Ints{2}}})).ok());
  EXPECT_EQ(*OneOp(OpKind::kSoftmax, {2, 3}, Attrs({})), (Shape{2, 3}));
}

TEST(ShapeInference, ReshapeFamily) {
  EXPECT_EQ(*OneOp(OpKind::kReshape, {1, 4, 4, 8}, Attrs({{"shape", Ints{1, -1}}})), (Shape{1, 128}));
  EXPECT_EQ(*OneOp(OpKind::kReshape, {2, 3, 4}, Attrs({{"shape", Ints{0, -1}}, {"copy_zero", std::int64_t{1}}})),
            (Shape{2, 12}));
  EXPECT_FALSE(OneOp(OpKind::kReshape, {2, 3, 4}, Attrs({{"shape", Ints{5, -1}}})).ok());
  EXPECT_FALSE(OneOp(OpKind::kReshape, {2, 3, 4}, Attrs({{"shape", Ints{-1, -1}}})).ok());
  EXPECT_FALSE(OneOp(OpKind::kReshape, {2, 3, 4}, Attrs({{"shape", Ints{7}}})).ok());
  EXPECT_EQ(OneOp(OpKind::kReshape, {2, 3}, Attrs({}), {{{2}, false}}).status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(*OneOp(OpKind::kFlatten, {2, 3, 4, 5}, Attrs({{"axis", std::int64_t{2}}})), (Shape{6, 20}));
  EXPECT_EQ(*OneOp(OpKind::kFlatten, {2, 3}, Attrs({{"axis", std::int64_t{0}}})), (Shape{1, 6}));
  EXPECT_EQ(*OneOp(OpKind::kSqueeze, {1, 3, 1, 5}, Attrs({})), (Shape{3, 5}));
  EXPECT_EQ(*OneOp(OpKind::kSqueeze, {1, 3, 1, 5}, Attrs({{"axes", Ints{-2}}})), (Shape{1, 3, 5}));
  EXPECT_FALSE(OneOp(OpKind::kSqueeze, {1, 3}, Attrs({{"axes", Ints{1}}})).ok());
  EXPECT_EQ(*OneOp(OpKind::kUnsqueeze, {3, 4}, Attrs({{"axes", Ints{0, 3}}})), (Shape{1, 3, 4, 1}));
  EXPECT_EQ(*OneOp(OpKind::kTranspose, {1, 2, 3, 4}, Attrs({{"perm", Ints{0, 3, 1, 2}}})), (Shape{1, 4, 2, 3}));
  EXPECT_EQ(*OneOp(OpKind::kTranspose, {2, 3, 4}, Attrs({})), (Shape{4, 3, 2}));
  EXPECT_FALSE(OneOp(OpKind::kTranspose, {2, 3}, Attrs({{"perm", Ints{0, 0}}})).ok());
}

TEST(ShapeInference, ConcatSplitSlicePadGather) {
  EXPECT_EQ(*OneOp(OpKind::kConcat, {1, 8, 8, 3}, Attrs({{"axis", std::int64_t{-1}}}), {{{1, 8, 8, 5}, false}}),
            (Shape{1, 8, 8, 8}));
  EXPECT_FALSE(OneOp(OpKind::kConcat, {1, 8, 8, 3}, Attrs({{"axis", std::int64_t{3}}}), {{{1, 4, 8, 5}, false}}).ok());

  GraphBuilder b;
  TensorId x = b.Input("x", {2, 10});
  Attributes split;
  split.Set("axis", std::int64_t{1});
  split.Set("sizes", Ints{3, 7});
  auto parts = b.Op(OpKind::kSplit, "split", {x}, split, 2);
  Attributes equal;
  equal.Set("axis", std::int64_t{1});
  auto thirds = b.Op(OpKind::kSplit, "thirds", {x}, equal, 3);
  auto g = b.Finish({parts[0], parts[1], thirds[0], thirds[2]});
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->tensor(parts[0]).shape, (Shape{2, 3}));
  EXPECT_EQ(g->tensor(parts[1]).shape, (Shape{2, 7}));
  EXPECT_EQ(g->tensor(thirds[0]).shape, (Shape{2, 4}));  // ONNX: ceil(10/3) = 4, 4, then 2
  EXPECT_EQ(g->tensor(thirds[2]).shape, (Shape{2, 2}));

  EXPECT_EQ(*OneOp(OpKind::kSlice, {10, 20}, Attrs({{"starts", Ints{1, -5}}, {"ends", Ints{1000, -1}}})),
            (Shape{9, 4}));
  EXPECT_EQ(*OneOp(OpKind::kSlice, {10}, Attrs({{"starts", Ints{-1}}, {"ends", Ints{-1000}}, {"steps", Ints{-2}}})),
            (Shape{5}));
  EXPECT_EQ(*OneOp(OpKind::kSlice, {4, 6}, Attrs({{"starts", Ints{1}}, {"ends", Ints{5}}, {"axes", Ints{1}}, {"steps", Ints{3}}})),
            (Shape{4, 2}));
  EXPECT_FALSE(OneOp(OpKind::kSlice, {4}, Attrs({{"starts", Ints{0}}, {"ends", Ints{2}}, {"steps", Ints{0}}})).ok());
  EXPECT_EQ(*OneOp(OpKind::kPad, {1, 5, 5, 3}, Attrs({{"pads", Ints{0, 1, 2, 0, 0, 1, 2, 0}}})), (Shape{1, 7, 9, 3}));
  EXPECT_FALSE(OneOp(OpKind::kPad, {1, 5}, Attrs({{"pads", Ints{0, 1}}})).ok());
  EXPECT_EQ(*OneOp(OpKind::kGather, {5, 6, 7}, Attrs({{"axis", std::int64_t{1}}}), {{{2, 3}, false}}),
            (Shape{5, 2, 3, 7}));
}

TEST(ShapeInference, ResizeAndDepthToSpace) {
  EXPECT_EQ(*OneOp(OpKind::kResize, {1, 16, 16, 8}, Attrs({{"sizes", Ints{32, 48}}})), (Shape{1, 32, 48, 8}));
  EXPECT_EQ(*OneOp(OpKind::kResize, {1, 8, 16, 16}, Attrs({{"layout", "NCHW"}, {"scales", std::vector<double>{2.0, 2.0}}})),
            (Shape{1, 8, 32, 32}));
  EXPECT_EQ(*OneOp(OpKind::kResize, {1, 8, 16, 16}, Attrs({{"layout", "NCHW"}, {"scales", std::vector<double>{1, 1, 0.5, 0.5}}})),
            (Shape{1, 8, 8, 8}));
  EXPECT_FALSE(OneOp(OpKind::kResize, {1, 8, 16, 16}, Attrs({})).ok());
  EXPECT_EQ(*OneOp(OpKind::kDepthToSpace, {1, 4, 4, 16}, Attrs({{"block_size", std::int64_t{2}}})), (Shape{1, 8, 8, 4}));
  EXPECT_EQ(*OneOp(OpKind::kSpaceToDepth, {1, 3, 8, 8}, Attrs({{"layout", "NCHW"}, {"block_size", std::int64_t{4}}})),
            (Shape{1, 48, 2, 2}));
  EXPECT_FALSE(OneOp(OpKind::kDepthToSpace, {1, 4, 4, 6}, Attrs({{"block_size", std::int64_t{2}}})).ok());
}

TEST(ShapeInference, DeclaredShapeThatContradictsIsAnError) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 8});
  TensorId y = b.Op1(OpKind::kRelu, "relu", {x});
  b.graph().mutable_tensor(y).shape = {1, 9};
  b.graph().mutable_tensor(y).shape_known = true;
  auto g = b.Finish({y});
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("declared 1x9"), std::string::npos) << g.status().message();
}

TEST(ShapeInference, OpaqueNodesKeepFileShapesAndDownstreamWaits) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 8});
  TensorId known = b.Op1(OpKind::kOpaque, "custom_known", {x});
  TensorId unknown = b.Op1(OpKind::kOpaque, "custom_unknown", {x});
  b.graph().mutable_node(0).source_op = "MyCustomOp";
  b.graph().mutable_tensor(known).shape = {1, 3};
  b.graph().mutable_tensor(known).shape_known = true;
  TensorId after_known = b.Op1(OpKind::kRelu, "relu1", {known});
  TensorId after_unknown = b.Op1(OpKind::kRelu, "relu2", {unknown});
  auto g = b.Finish({after_known, after_unknown});
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->tensor(after_known).shape, (Shape{1, 3}));
  EXPECT_FALSE(g->tensor(after_unknown).shape_known);
  auto opaque = InferNodeShapes(*g, 0);
  ASSERT_FALSE(opaque.ok());
  EXPECT_EQ(opaque.status().code(), StatusCode::kUnsupported);
}

TEST(ShapeInference, HostileSizesAreRejected) {
  EXPECT_FALSE(OneOp(OpKind::kResize, {1, 16, 16, 8}, Attrs({{"scales", std::vector<double>{1e9, 1e9}}})).ok());
  EXPECT_FALSE(OneOp(OpKind::kPad, {1, 5}, Attrs({{"pads", Ints{0, 1ll << 50, 0, 0}}})).ok());
  EXPECT_FALSE(OneOp(OpKind::kReshape, {2, 3}, Attrs({{"shape", Ints{1ll << 62, 0}}})).ok());
  EXPECT_FALSE(OneOp(OpKind::kUnsqueeze, {2}, Attrs({{"axes", Ints(100, 0)}})).ok());
}

}  // namespace
}  // namespace latte

namespace latte {
namespace {

// Comparisons write bool, where the dtype of its choices, argmax int64; where broadcasts three
// shapes, layer_norm checks its scale against the normalized dims.
TEST(ShapeInference, ComparisonsWhereArgMaxAndLayerNormShapesAndTypes) {
  GraphBuilder b;
  const TensorId x = b.Input("x", {2, 3, 4});
  const TensorId less = b.Op1(OpKind::kLess, "less", {x, b.Input("t", {4})});
  const TensorId mask = b.Op1(OpKind::kLogicalNot, "not", {less});
  const TensorId where = b.Op1(OpKind::kWhere, "where", {mask, x, b.Input("fill", {1, 3, 1})});
  Attributes last;
  last.Set("axis", std::int64_t{-1});
  last.Set("keepdims", std::int64_t{0});
  const TensorId best = b.Op1(OpKind::kArgMax, "argmax", {where}, last);
  Attributes ln;
  ln.Set("axis", std::int64_t{1});
  const TensorId normed = b.Op1(OpKind::kLayerNorm, "ln", {x, b.Constant("scale", {3, 4})}, ln);
  auto g = b.Finish({best, normed});
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->tensor(less).dtype, DataType::kBool);
  EXPECT_EQ(g->tensor(mask).dtype, DataType::kBool);
  EXPECT_EQ(g->tensor(where).dtype, DataType::kFloat32);
  EXPECT_EQ(g->tensor(where).shape, (Shape{2, 3, 4}));
  EXPECT_EQ(g->tensor(best).dtype, DataType::kInt64);
  EXPECT_EQ(g->tensor(best).shape, (Shape{2, 3}));
  EXPECT_EQ(g->tensor(normed).shape, (Shape{2, 3, 4}));

  GraphBuilder bad;
  const TensorId y = bad.Op1(OpKind::kLayerNorm, "ln", {bad.Input("x", {2, 3, 4}), bad.Constant("scale", {5})});
  auto refused = bad.Finish({y});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("layer_norm scale 5 does not broadcast to 2x3x4"), std::string::npos)
      << refused.status().message();
}

}  // namespace
}  // namespace latte
