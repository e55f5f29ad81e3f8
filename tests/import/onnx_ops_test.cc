// The ONNX importer on small models built here with libonnx's protobuf types: op mapping per
// op_kinds.def, constants, folding (shape arithmetic, BatchNormalization into conv).
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "import/onnx_test_builder.h"
#include "ir/tensor.h"

namespace latte {
namespace {

using namespace ::latte::testing;  // NOLINT: the builder's vocabulary

std::vector<float> Floats(const Tensor& t) {
  auto v = ConstantFloats(t);
  EXPECT_TRUE(v.ok()) << v.status().message();
  return v.ok() ? *v : std::vector<float>{};
}

std::vector<float> RandomValues(size_t n, std::mt19937& rng, float lo = -1, float hi = 1) {
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// --- reference kernels for the folding checks (NCHW) ---------------------------------------

// Conv, weights OIHW, `groups`, square stride, pads [top, left, bottom, right].
std::vector<float> RefConv(const std::vector<float>& x, Ints xs, const std::vector<float>& w, Ints ws,
                           const std::vector<float>& b, std::int64_t groups, std::int64_t stride, Ints pads, Ints& ys) {
  const std::int64_t n = xs[0], c = xs[1], h = xs[2], wd = xs[3], oc = ws[0], icg = ws[1], kh = ws[2], kw = ws[3];
  const std::int64_t oh = (h + pads[0] + pads[2] - kh) / stride + 1, ow = (wd + pads[1] + pads[3] - kw) / stride + 1;
  ys = {n, oc, oh, ow};
  std::vector<float> y(static_cast<size_t>(n * oc * oh * ow));
  const std::int64_t ocg = oc / groups;
  for (std::int64_t in = 0; in < n; ++in)
    for (std::int64_t o = 0; o < oc; ++o)
      for (std::int64_t i = 0; i < oh; ++i)
        for (std::int64_t j = 0; j < ow; ++j) {
          float sum = b.empty() ? 0.0f : b[static_cast<size_t>(o)];
          const std::int64_t g = o / ocg;
          for (std::int64_t ic = 0; ic < icg; ++ic)
            for (std::int64_t p = 0; p < kh; ++p)
              for (std::int64_t q = 0; q < kw; ++q) {
                const std::int64_t ih = i * stride - pads[0] + p, iw = j * stride - pads[1] + q;
                if (ih < 0 || ih >= h || iw < 0 || iw >= wd) continue;
                sum += x[static_cast<size_t>(((in * c + g * icg + ic) * h + ih) * wd + iw)] *
                       w[static_cast<size_t>(((o * icg + ic) * kh + p) * kw + q)];
              }
          y[static_cast<size_t>(((in * oc + o) * oh + i) * ow + j)] = sum;
        }
  return y;
}

// Transposed conv, weights IOHW (O per group), no padding.
std::vector<float> RefConvTranspose(const std::vector<float>& x, Ints xs, const std::vector<float>& w, Ints ws,
                                    const std::vector<float>& b, std::int64_t groups, std::int64_t stride, Ints& ys) {
  const std::int64_t n = xs[0], c = xs[1], h = xs[2], wd = xs[3], ocg = ws[1], kh = ws[2], kw = ws[3];
  const std::int64_t oc = ocg * groups, icg = c / groups;
  const std::int64_t oh = (h - 1) * stride + kh, ow = (wd - 1) * stride + kw;
  ys = {n, oc, oh, ow};
  std::vector<float> y(static_cast<size_t>(n * oc * oh * ow), 0.0f);
  for (std::int64_t in = 0; in < n; ++in)
    for (std::int64_t o = 0; o < oc; ++o)
      for (std::int64_t i = 0; i < oh * ow; ++i) y[static_cast<size_t>((in * oc + o) * oh * ow + i)] = b.empty() ? 0 : b[static_cast<size_t>(o)];
  for (std::int64_t in = 0; in < n; ++in)
    for (std::int64_t ic = 0; ic < c; ++ic)
      for (std::int64_t i = 0; i < h; ++i)
        for (std::int64_t j = 0; j < wd; ++j)
          for (std::int64_t o = 0; o < ocg; ++o)
            for (std::int64_t p = 0; p < kh; ++p)
              for (std::int64_t q = 0; q < kw; ++q) {
                const std::int64_t out_c = (ic / icg) * ocg + o;
                y[static_cast<size_t>(((in * oc + out_c) * oh + i * stride + p) * ow + j * stride + q)] +=
                    x[static_cast<size_t>(((in * c + ic) * h + i) * wd + j)] * w[static_cast<size_t>(((ic * ocg + o) * kh + p) * kw + q)];
              }
  return y;
}

std::vector<float> RefBatchNorm(std::vector<float> y, Ints ys, const std::vector<float>& scale, const std::vector<float>& bias,
                                const std::vector<float>& mean, const std::vector<float>& var, float eps) {
  const std::int64_t per = ys[2] * ys[3];
  for (size_t i = 0; i < y.size(); ++i) {
    const auto c = static_cast<size_t>((static_cast<std::int64_t>(i) / per) % ys[1]);
    y[i] = (y[i] - mean[c]) / std::sqrt(var[c] + eps) * scale[c] + bias[c];
  }
  return y;
}

float MaxAbsDiff(const std::vector<float>& a, const std::vector<float>& b) {
  EXPECT_EQ(a.size(), b.size());
  float m = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

// A Conv (or ConvTranspose) followed by BatchNormalization, with random constants.
struct ConvBnCase {
  bool transpose = false;
  bool conv_bias = true;
  std::int64_t groups = 1;
  Ints x_shape{1, 2, 5, 5};
  Ints w_shape{3, 2, 3, 3};
  std::int64_t stride = 1;
  Ints pads{1, 1, 1, 1};
};

struct ConvBnModel {
  ModelBuilder builder;
  std::vector<float> w, b, scale, shift, mean, var;
  float eps = 1e-3f;
};

ConvBnModel MakeConvBn(const ConvBnCase& c, std::uint32_t seed) {
  std::mt19937 rng(seed);
  ConvBnModel m;
  const std::int64_t channels = c.transpose ? c.w_shape[1] * c.groups : c.w_shape[0];
  m.w = RandomValues(static_cast<size_t>(c.w_shape[0] * c.w_shape[1] * c.w_shape[2] * c.w_shape[3]), rng);
  if (c.conv_bias) m.b = RandomValues(static_cast<size_t>(channels), rng);
  m.scale = RandomValues(static_cast<size_t>(channels), rng, 0.5f, 2.0f);
  m.shift = RandomValues(static_cast<size_t>(channels), rng);
  m.mean = RandomValues(static_cast<size_t>(channels), rng);
  m.var = RandomValues(static_cast<size_t>(channels), rng, 0.1f, 3.0f);
  ModelBuilder& b = m.builder;
  b.Input("x", c.x_shape);
  b.Floats("W", c.w_shape, m.w);
  std::vector<std::string> conv_in{"x", "W"};
  if (c.conv_bias) {
    b.Floats("B", {channels}, m.b);
    conv_in.push_back("B");
  }
  b.Floats("bn_scale", {channels}, m.scale);
  b.Floats("bn_bias", {channels}, m.shift);
  b.Floats("bn_mean", {channels}, m.mean);
  b.Floats("bn_var", {channels}, m.var);
  auto& conv = b.Node(c.transpose ? "ConvTranspose" : "Conv", conv_in, {"y"}, "conv");
  SetInts(conv, "strides", {c.stride, c.stride});
  if (!c.transpose) SetInts(conv, "pads", c.pads);
  SetInt(conv, "group", c.groups);
  auto& bn = b.Node("BatchNormalization", {"y", "bn_scale", "bn_bias", "bn_mean", "bn_var"}, {"z"}, "bn");
  SetFloat(bn, "epsilon", m.eps);
  b.Output("z");
  return m;
}

// Imports the model, checks the BN is gone, and compares conv-with-folded-weights against
// conv then BN computed by hand from the file's parameters.
void CheckFolded(const ConvBnCase& c, std::uint32_t seed) {
  ConvBnModel m = MakeConvBn(c, seed);
  auto g = ImportFull(m.builder);
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ(g->num_nodes(), 1u) << "the BatchNormalization should be folded";
  const Node& conv = g->nodes()[0];
  EXPECT_EQ(conv.name, "conv");
  ASSERT_EQ(conv.inputs.size(), 3u) << "folding gives the conv a bias";
  EXPECT_EQ(g->tensor(conv.outputs[0]).name, "z");
  EXPECT_EQ(g->tensor(conv.inputs[1]).dtype, DataType::kFloat32);
  EXPECT_EQ(g->tensor(conv.inputs[1]).shape, c.w_shape);
  const std::vector<float> w2 = Floats(g->tensor(conv.inputs[1])), b2 = Floats(g->tensor(conv.inputs[2]));

  std::mt19937 rng(seed + 1);
  const std::vector<float> x = RandomValues(static_cast<size_t>(c.x_shape[0] * c.x_shape[1] * c.x_shape[2] * c.x_shape[3]), rng);
  Ints ys, ys2;
  std::vector<float> reference, folded;
  if (c.transpose) {
    reference = RefConvTranspose(x, c.x_shape, m.w, c.w_shape, m.b, c.groups, c.stride, ys);
    folded = RefConvTranspose(x, c.x_shape, w2, c.w_shape, b2, c.groups, c.stride, ys2);
  } else {
    reference = RefConv(x, c.x_shape, m.w, c.w_shape, m.b, c.groups, c.stride, c.pads, ys);
    folded = RefConv(x, c.x_shape, w2, c.w_shape, b2, c.groups, c.stride, c.pads, ys2);
  }
  reference = RefBatchNorm(reference, ys, m.scale, m.shift, m.mean, m.var, m.eps);
  EXPECT_EQ(g->tensor(conv.outputs[0]).shape, ys) << "Latte's inferred output shape";
  EXPECT_LT(MaxAbsDiff(reference, folded), 1e-4f);
}

TEST(OnnxBatchNormFolding, ConvWithBiasMatchesConvThenBatchNorm) { CheckFolded({}, 1); }

TEST(OnnxBatchNormFolding, ConvWithoutBiasGetsOne) {
  ConvBnCase c;
  c.conv_bias = false;
  c.stride = 2;
  CheckFolded(c, 2);
}

TEST(OnnxBatchNormFolding, DepthwiseConv) {
  ConvBnCase c;
  c.groups = 2;
  c.w_shape = {4, 1, 3, 3};  // multiplier 2
  CheckFolded(c, 3);
}

TEST(OnnxBatchNormFolding, GroupedConvTranspose) {
  ConvBnCase c;
  c.transpose = true;
  c.groups = 2;
  c.x_shape = {1, 4, 3, 3};
  c.w_shape = {4, 3, 2, 2};  // [C_in, C_out / groups, kh, kw]: 6 output channels
  c.stride = 2;
  CheckFolded(c, 4);
}

TEST(OnnxBatchNormFolding, KeptWhenTheConvOutputHasAnotherUser) {
  ConvBnModel m = MakeConvBn({}, 5);
  m.builder.Node("Relu", {"y"}, {"r"});
  m.builder.Output("r");
  auto g = ImportFull(m.builder);
  ASSERT_TRUE(g.ok()) << g.status().message();
  const Node* bn = FindNode(*g, "bn");
  ASSERT_NE(bn, nullptr);
  EXPECT_EQ(bn->kind, OpKind::kBatchNorm);
  EXPECT_EQ(bn->attrs.GetString("layout", ""), "NCHW");
  EXPECT_FLOAT_EQ(static_cast<float>(bn->attrs.GetFloat("epsilon", 0)), 1e-3f);
}

TEST(OnnxBatchNormFolding, KeptWhenParametersAreNotConstant) {
  ConvBnModel m = MakeConvBn({}, 6);
  auto& g = m.builder.graph();
  // Make the mean a graph input instead of an initializer.
  for (int i = 0; i < g.initializer_size(); ++i)
    if (g.initializer(i).name() == "bn_mean") g.mutable_initializer()->DeleteSubrange(i, 1);
  m.builder.Input("bn_mean", {3});
  auto graph = ImportOnnx(m.builder.Bytes(), {});
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  EXPECT_EQ(graph->num_nodes(), 2u);
  ASSERT_NE(FindNode(*graph, "bn"), nullptr);
}

// --- op mapping ----------------------------------------------------------------------------

TEST(OnnxOps, ConvAttributesFollowTheContract) {
  ModelBuilder b;
  b.Input("x", {-1, 3, 32, 32});
  b.Floats("w", {8, 3, 3, 3}, std::vector<float>(8 * 3 * 9, 0.5f));
  auto& n = b.Node("Conv", {"x", "w"}, {"y"}, "c1");
  SetInts(n, "strides", {2, 2});
  SetInts(n, "pads", {1, 0, 1, 2});
  SetInts(n, "kernel_shape", {3, 3});
  b.Output("y");
  auto g = ImportFull(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ(g->num_nodes(), 1u);
  const Node& c = g->nodes()[0];
  EXPECT_EQ(c.kind, OpKind::kConv2D);
  EXPECT_EQ(c.source_op, "Conv");
  EXPECT_EQ(c.attrs.GetString("layout", ""), "NCHW");
  EXPECT_EQ(c.attrs.GetString("filter_layout", ""), "OIHW");
  EXPECT_EQ(c.attrs.GetString("padding", ""), "explicit");
  EXPECT_EQ(c.attrs.GetInts("pads"), (Ints{1, 0, 1, 2}));
  EXPECT_EQ(c.attrs.GetInts("strides"), (Ints{2, 2}));
  EXPECT_EQ(c.attrs.GetInt("groups", 0), 1);
  EXPECT_EQ(c.inputs.size(), 2u);
  EXPECT_EQ(g->tensor(g->inputs[0]).shape, (Ints{1, 3, 32, 32})) << "unknown batch becomes 1";
  EXPECT_EQ(g->tensor(c.outputs[0]).shape, (Ints{1, 8, 16, 16}));  // (32 + 0 + 2 - 3) / 2 + 1
}

TEST(OnnxOps, DepthwiseAndGroupedConv) {
  ModelBuilder b;
  b.Input("x", {1, 4, 8, 8});
  b.Floats("dw", {8, 1, 3, 3}, std::vector<float>(72, 1.0f));
  b.Floats("gw", {8, 2, 1, 1}, std::vector<float>(16, 1.0f));
  auto& dw = b.Node("Conv", {"x", "dw"}, {"y"}, "dw");
  SetInt(dw, "group", 4);
  SetString(dw, "auto_pad", "SAME_UPPER");
  auto& gc = b.Node("Conv", {"y", "gw"}, {"z"}, "grouped");
  SetInt(gc, "group", 4);
  b.Output("z");
  auto g = ImportFull(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  const Node* d = FindNode(*g, "dw");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->kind, OpKind::kDepthwiseConv2D);
  EXPECT_EQ(d->attrs.GetInt("depth_multiplier", 0), 2);
  EXPECT_EQ(d->attrs.GetInt("groups", 0), 4);
  EXPECT_EQ(d->attrs.GetString("padding", ""), "same");
  const Node* c = FindNode(*g, "grouped");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->kind, OpKind::kConv2D);
  EXPECT_EQ(c->attrs.GetInt("groups", 0), 4);
  EXPECT_EQ(g->tensor(g->outputs[0]).shape, (Ints{1, 8, 8, 8}));
}

TEST(OnnxOps, GemmWithConstantWeightsIsFullyConnected) {
  ModelBuilder b;
  b.Input("x", {2, 4});
  b.Floats("w", {3, 4}, std::vector<float>(12, 0.1f));
  b.Floats("c", {3}, {1, 2, 3});
  auto& n = b.Node("Gemm", {"x", "w", "c"}, {"y"}, "fc");
  SetInt(n, "transB", 1);
  SetFloat(n, "alpha", 2.0f);
  b.Output("y");
  auto g = ImportFull(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ(g->num_nodes(), 1u);
  const Node& fc = g->nodes()[0];
  EXPECT_EQ(fc.kind, OpKind::kFullyConnected);
  EXPECT_EQ(fc.attrs.GetString("weights_layout", ""), "OI");
  EXPECT_DOUBLE_EQ(fc.attrs.GetFloat("alpha", 1), 2.0);
  ASSERT_EQ(fc.inputs.size(), 3u);
  EXPECT_EQ(g->tensor(fc.inputs[2]).name, "c");
  EXPECT_EQ(g->tensor(g->outputs[0]).shape, (Ints{2, 3}));
}

TEST(OnnxOps, GemmOfTwoActivationsIsMatMulPlusAdd) {
  ModelBuilder b;
  b.Input("a", {4, 2});
  b.Input("b", {4, 3});
  b.Input("c", {1, 3});
  auto& n = b.Node("Gemm", {"a", "b", "c"}, {"y"}, "gemm");
  SetInt(n, "transA", 1);
  b.Output("y");
  auto g = ImportFull(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ(g->num_nodes(), 2u);
  EXPECT_EQ(g->nodes()[0].kind, OpKind::kMatMul);
  EXPECT_EQ(g->nodes()[0].attrs.GetInt("transpose_a", 0), 1);
  EXPECT_EQ(g->nodes()[1].kind, OpKind::kAdd);
  EXPECT_EQ(g->nodes()[1].source_op, "Gemm");
  EXPECT_EQ(g->tensor(g->outputs[0]).shape, (Ints{2, 3}));
}

TEST(OnnxOps, MatMulByConstantMatrixIsFullyConnectedIO) {
  ModelBuilder b;
  b.Input("x", {1, 5, 8});
  b.Floats("w", {8, 2}, std::vector<float>(16, 1.0f));
  b.Input("y", {8, 2});
  b.Node("MatMul", {"x", "w"}, {"fc"}, "fc");
  b.Node("MatMul", {"x", "y"}, {"mm"}, "mm");
  b.Output("fc");
  b.Output("mm");
  auto g = ImportFull(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(FindNode(*g, "fc")->kind, OpKind::kFullyConnected);
  EXPECT_EQ(FindNode(*g, "fc")->attrs.GetString("weights_layout", ""), "IO");
  EXPECT_EQ(FindNode(*g, "mm")->kind, OpKind::kMatMul);
  EXPECT_EQ(g->tensor(g->outputs[0]).shape, (Ints{1, 5, 2}));
}

TEST(OnnxOps, ClipBoundsFromAttributesOrConstantInputs) {
  ModelBuilder old_style(6);
  old_style.Input("x", {1, 4});
  auto& c6 = old_style.Node("Clip", {"x"}, {"y"}, "clip");
  SetFloat(c6, "min", 0.0f);
  SetFloat(c6, "max", 6.0f);
  old_style.Output("y");
  auto g = Import(old_style);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->nodes()[0].kind, OpKind::kClip);
  EXPECT_DOUBLE_EQ(g->nodes()[0].attrs.GetFloat("min", -1), 0.0);
  EXPECT_DOUBLE_EQ(g->nodes()[0].attrs.GetFloat("max", -1), 6.0);

  ModelBuilder new_style(13);
  new_style.Input("x", {1, 4});
  new_style.Floats("hi", {}, {6.0f});
  new_style.Node("Clip", {"x", "", "hi"}, {"y"}, "clip");
  new_style.Output("y");
  g = Import(new_style);
  ASSERT_TRUE(g.ok()) << g.status().message();
  const Node& clip = g->nodes()[0];
  EXPECT_EQ(clip.kind, OpKind::kClip);
  EXPECT_FALSE(clip.attrs.Has("min")) << "absent bound = unbounded";
  EXPECT_DOUBLE_EQ(clip.attrs.GetFloat("max", -1), 6.0);
  EXPECT_EQ(clip.inputs.size(), 1u) << "bounds become attributes";

  ModelBuilder dynamic(13);
  dynamic.Input("x", {1, 4});
  dynamic.Input("lo", {});
  dynamic.Node("Clip", {"x", "lo"}, {"y"}, "clip");
  dynamic.Output("y");
  g = Import(dynamic);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->nodes()[0].kind, OpKind::kOpaque);
  EXPECT_EQ(g->nodes()[0].unsupported_reason, "Clip with non-constant 'min'");
}

TEST(OnnxOps, UnknownOpsStayOpaqueWithTheirShapes) {
  ModelBuilder b;
  b.model().add_opset_import()->set_domain("com.example");
  b.model().mutable_opset_import(1)->set_version(1);
  b.Input("x", {1, 3, 4, 4});
  b.Node("LRN", {"x"}, {"y"}, "lrn").add_attribute()->set_name("size");
  b.graph().mutable_node(0)->mutable_attribute(0)->set_type(onnx::AttributeProto::INT);
  b.graph().mutable_node(0)->mutable_attribute(0)->set_i(3);
  auto& custom = b.Node("Mystery", {"y"}, {"z"});
  custom.set_domain("com.example");
  b.Output("z");
  auto g = ImportFull(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ(g->num_nodes(), 2u);
  const Node& lrn = g->nodes()[0];
  EXPECT_EQ(lrn.kind, OpKind::kOpaque);
  EXPECT_EQ(lrn.source_op, "LRN");
  EXPECT_EQ(lrn.unsupported_reason, "ONNX op 'LRN' is not supported by Latte");
  EXPECT_EQ(g->tensor(lrn.outputs[0]).shape, (Ints{1, 3, 4, 4})) << "ONNX's inference gives the shape";
  const Node& mystery = g->nodes()[1];
  EXPECT_EQ(mystery.source_op, "com.example.Mystery");
  EXPECT_EQ(mystery.name, "z") << "unnamed node takes its first output's name";
  EXPECT_NE(mystery.unsupported_reason.find("domain 'com.example'"), std::string::npos);
}

TEST(OnnxOps, SliceNeedsConstantBounds) {
  ModelBuilder b;
  b.Input("x", {4, 10});
  b.Input("starts", {1}, onnx::TensorProto::INT64);
  b.Int64s("ends", {1}, {8});
  b.Int64s("axes", {1}, {1});
  b.Int64s("s0", {1}, {2});
  b.Node("Slice", {"x", "starts", "ends", "axes"}, {"y"}, "dynamic");
  b.Node("Slice", {"x", "s0", "ends", "axes"}, {"z"}, "static");
  b.Output("y");
  b.Output("z");
  auto g = Import(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  const Node* d = FindNode(*g, "dynamic");
  EXPECT_EQ(d->kind, OpKind::kOpaque);
  EXPECT_EQ(d->unsupported_reason, "Slice with non-constant 'starts'");
  const Node* s = FindNode(*g, "static");
  EXPECT_EQ(s->kind, OpKind::kSlice);
  EXPECT_EQ(s->attrs.GetInts("starts"), (Ints{2}));
  EXPECT_EQ(s->attrs.GetInts("ends"), (Ints{8}));
  EXPECT_EQ(s->attrs.GetInts("axes"), (Ints{1}));
  EXPECT_EQ(s->inputs.size(), 1u);
}

TEST(OnnxOps, ResizeWithConstantScales) {
  ModelBuilder b(11);
  b.Input("x", {1, 3, 8, 8});
  b.Floats("roi", {0}, {});
  b.Floats("scales", {4}, {1, 1, 2, 2});
  auto& n = b.Node("Resize", {"x", "roi", "scales"}, {"y"}, "up");
  SetString(n, "mode", "linear");
  SetString(n, "coordinate_transformation_mode", "align_corners");
  b.Output("y");
  auto g = ImportFull(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  const Node& r = g->nodes()[0];
  EXPECT_EQ(r.kind, OpKind::kResize);
  EXPECT_EQ(r.attrs.GetString("mode", ""), "bilinear");
  EXPECT_EQ(r.attrs.GetString("coordinate_transformation", ""), "align_corners");
  EXPECT_EQ(r.attrs.GetFloats("scales"), (std::vector<double>{2, 2}));
  EXPECT_EQ(r.inputs.size(), 1u);
  EXPECT_EQ(g->tensor(g->outputs[0]).shape, (Ints{1, 3, 16, 16}));
}

TEST(OnnxOps, ReductionsSoftmaxAndShapesFollowTheOpset) {
  ModelBuilder b(11);
  b.Input("x", {2, 3, 4});
  auto& r = b.Node("ReduceMean", {"x"}, {"m"}, "mean");
  SetInts(r, "axes", {-1});
  SetInt(r, "keepdims", 0);
  b.Node("Softmax", {"m"}, {"s"}, "softmax");
  auto& sq = b.Node("Unsqueeze", {"s"}, {"u"}, "unsqueeze");
  SetInts(sq, "axes", {0});
  b.Output("u");
  auto g = ImportFull(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(FindNode(*g, "mean")->kind, OpKind::kMean);
  EXPECT_EQ(FindNode(*g, "mean")->attrs.GetInts("axes"), (Ints{-1}));
  EXPECT_EQ(FindNode(*g, "mean")->attrs.GetInt("keepdims", 1), 0);
  EXPECT_EQ(FindNode(*g, "softmax")->attrs.GetInt("axis", 0), 1) << "opset < 13 default";
  EXPECT_EQ(FindNode(*g, "unsqueeze")->attrs.GetInts("axes"), (Ints{0}));
  EXPECT_EQ(g->tensor(g->outputs[0]).shape, (Ints{1, 2, 3}));
}

TEST(OnnxOps, ShapeArithmeticBeforeReshapeIsFolded) {
  // Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])): the usual flatten of an exporter.
  ModelBuilder b(13);
  b.Input("x", {-1, 4, 3, 2});
  b.Int64s("zero", {}, {0});
  b.Int64s("axes0", {1}, {0});
  b.Int64s("minus_one", {1}, {-1});
  b.Node("Shape", {"x"}, {"shape"});
  auto& gather = b.Node("Gather", {"shape", "zero"}, {"batch"});
  SetInt(gather, "axis", 0);
  b.Node("Unsqueeze", {"batch", "axes0"}, {"batch1"});
  auto& concat = b.Node("Concat", {"batch1", "minus_one"}, {"target"});
  SetInt(concat, "axis", 0);
  b.Node("Reshape", {"x", "target"}, {"y"}, "flatten");
  b.Output("y");
  for (int batch : {1, 5}) {
    ImportOptions options;
    if (batch != 1) options.input_shapes["x"] = {batch, 4, 3, 2};
    auto g = ImportFull(b, options);
    ASSERT_TRUE(g.ok()) << g.status().message();
    ASSERT_EQ(g->num_nodes(), 1u);
    const Node& r = g->nodes()[0];
    EXPECT_EQ(r.kind, OpKind::kReshape);
    EXPECT_EQ(r.attrs.GetInts("shape"), (Ints{batch, -1}));
    EXPECT_EQ(r.attrs.GetInt("copy_zero", 0), 1);
    EXPECT_EQ(g->tensor(g->outputs[0]).shape, (Ints{batch, 24}));
  }
}

TEST(OnnxOps, ConstantsInEveryEncoding) {
  ModelBuilder b(13);
  b.Input("x", {2, 3});
  // float_data, int32_data (float16 bits), double_data; an initializer also listed as input.
  auto& f = *b.graph().add_initializer();
  f.set_name("f");
  f.add_dims(3);
  f.set_data_type(onnx::TensorProto::FLOAT);
  for (float v : {1.5f, -2.0f, 3.25f}) f.add_float_data(v);
  auto& h = *b.graph().add_initializer();
  h.set_name("h");
  h.add_dims(3);
  h.set_data_type(onnx::TensorProto::FLOAT16);
  for (int v : {0x3C00, 0xC000, 0x3800}) h.add_int32_data(v);  // 1, -2, 0.5
  auto& d = *b.graph().add_initializer();
  d.set_name("d");
  d.add_dims(3);
  d.set_data_type(onnx::TensorProto::DOUBLE);
  for (double v : {0.25, 0.5, 0.75}) d.add_double_data(v);
  ModelBuilder::SetType(b.graph().add_input(), "d", {3}, onnx::TensorProto::DOUBLE);
  auto& c = b.Node("Constant", {}, {"k"});
  SetFloat(c, "value_float", 4.0f);
  b.Node("Add", {"x", "f"}, {"a"}, "add_f");
  b.Node("Mul", {"a", "k"}, {"m"}, "mul_k");
  auto& cast = b.Node("Cast", {"h"}, {"hf"}, "cast_h");
  SetInt(cast, "to", onnx::TensorProto::FLOAT);
  b.Node("Add", {"m", "hf"}, {"y"}, "add_h");
  auto& cast_d = b.Node("Cast", {"d"}, {"df"}, "cast_d");
  SetInt(cast_d, "to", onnx::TensorProto::FLOAT);
  b.Node("Add", {"y", "df"}, {"z"}, "add_d");
  b.Output("z");
  auto g = ImportFull(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ(g->inputs.size(), 1u) << "an initializer listed as input is a constant";
  auto tensor = [&](const std::string& name) -> const Tensor& {
    for (const Tensor& t : g->tensors())
      if (t.name == name) return t;
    ADD_FAILURE() << "no tensor " << name;
    return g->tensors()[0];
  };
  EXPECT_EQ(Floats(tensor("f")), (std::vector<float>{1.5f, -2.0f, 3.25f}));
  EXPECT_EQ(tensor("h").dtype, DataType::kFloat16);
  EXPECT_EQ(Floats(tensor("h")), (std::vector<float>{1.0f, -2.0f, 0.5f}));
  // d's Cast folds at import: its float32 copy holds the double_data decoded.
  EXPECT_EQ(FindNode(*g, "cast_d"), nullptr);
  EXPECT_EQ(tensor("df").dtype, DataType::kFloat32);
  EXPECT_EQ(Floats(tensor("df")), (std::vector<float>{0.25f, 0.5f, 0.75f}));
  EXPECT_EQ(Floats(tensor("k")), (std::vector<float>{4.0f}));
  EXPECT_TRUE(tensor("k").shape.empty());
  EXPECT_EQ(FindNode(*g, "cast_h")->attrs.GetString("to", ""), "float32");
  EXPECT_EQ(g->tensor(FindNode(*g, "cast_h")->outputs[0]).dtype, DataType::kFloat32);
  EXPECT_EQ(g->source_format, "onnx");
}

TEST(OnnxOps, DataMovementAndActivations) {
  ModelBuilder b(13);
  b.Input("x", {1, 8, 4, 4});
  b.Int64s("split", {2}, {2, 6});
  b.Int64s("pads", {8}, {0, 0, 1, 1, 0, 0, 1, 1});
  b.Int64s("shape", {3}, {1, 8, 16});
  auto& split = b.Node("Split", {"x", "split"}, {"s0", "s1"}, "split");
  SetInt(split, "axis", 1);
  auto& d2s = b.Node("DepthToSpace", {"s0"}, {"d"}, "d2s");
  SetInt(d2s, "blocksize", 1);
  b.Node("Pad", {"s1", "pads"}, {"p"}, "pad");
  auto& lrelu = b.Node("LeakyRelu", {"p"}, {"l"}, "lrelu");
  SetFloat(lrelu, "alpha", 0.1f);
  auto& hs = b.Node("HardSigmoid", {"l"}, {"hsig"}, "hsig");
  SetFloat(hs, "alpha", 0.25f);
  b.Node("Reshape", {"x", "shape"}, {"r"}, "reshape");
  auto& tr = b.Node("Transpose", {"r"}, {"t"}, "transpose");
  SetInts(tr, "perm", {0, 2, 1});
  auto& fl = b.Node("Flatten", {"t"}, {"f"}, "flatten");
  SetInt(fl, "axis", 2);
  b.Node("Dropout", {"f"}, {"drop"}, "dropout");
  b.Output("d");
  b.Output("hsig");
  b.Output("drop");
  auto g = ImportFull(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  const Node* s = FindNode(*g, "split");
  EXPECT_EQ(s->kind, OpKind::kSplit);
  EXPECT_EQ(s->outputs.size(), 2u);
  EXPECT_EQ(s->attrs.GetInts("sizes"), (Ints{2, 6}));
  EXPECT_EQ(FindNode(*g, "d2s")->attrs.GetString("mode", ""), "DCR");
  EXPECT_EQ(FindNode(*g, "pad")->attrs.GetString("mode", ""), "constant");
  EXPECT_EQ(FindNode(*g, "pad")->attrs.GetInts("pads"), (Ints{0, 0, 1, 1, 0, 0, 1, 1}));
  EXPECT_NEAR(FindNode(*g, "lrelu")->attrs.GetFloat("alpha", 0), 0.1, 1e-7);
  EXPECT_DOUBLE_EQ(FindNode(*g, "hsig")->attrs.GetFloat("beta", 0), 0.5);
  EXPECT_EQ(FindNode(*g, "dropout")->kind, OpKind::kIdentity);
  EXPECT_EQ(g->tensor(g->outputs[1]).shape, (Ints{1, 6, 6, 6}));
  EXPECT_EQ(g->tensor(g->outputs[2]).shape, (Ints{16, 8}));
  for (const Node& n : g->nodes()) EXPECT_NE(n.kind, OpKind::kOpaque) << n.name;
}

TEST(OnnxOps, SubgraphOpsAreOpaqueAndDependOnWhatTheBodyReads) {
  ModelBuilder b(13);
  b.Input("cond", {}, onnx::TensorProto::BOOL);
  b.Input("x", {2});
  b.Node("Relu", {"x"}, {"rx"}, "relu");
  auto& branch = b.Node("If", {"cond"}, {"y"}, "if");
  for (const char* which : {"then_branch", "else_branch"})
    AddBody(branch, which, "Identity", "rx", std::string(which) + "_out", {2});  // rx: read from the enclosing graph
  b.Output("y");
  auto g = ImportFull(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  const Node* n = FindNode(*g, "if");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->kind, OpKind::kOpaque);
  EXPECT_EQ(n->unsupported_reason,
            "If not inlined: its condition 'cond' is not a constant at import (it depends on input 'cond'); give its "
            "value with --input-value cond=VALUE");
  ASSERT_EQ(n->inputs.size(), 2u);
  EXPECT_EQ(g->tensor(n->inputs[1]).name, "rx");
}

TEST(OnnxOps, QuantizeDequantizeCarryTheirParameters) {
  ModelBuilder b(13);
  b.Input("x", {1, 4});
  b.Floats("scale", {}, {0.5f});
  auto& zp = *b.graph().add_initializer();
  zp.set_name("zp");
  zp.set_data_type(onnx::TensorProto::INT8);
  zp.add_int32_data(-3);
  b.Node("QuantizeLinear", {"x", "scale", "zp"}, {"q"}, "quant");
  b.Node("DequantizeLinear", {"q", "scale", "zp"}, {"y"}, "dequant");
  b.Output("y");
  auto g = ImportFull(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  const Node* q = FindNode(*g, "quant");
  ASSERT_EQ(q->kind, OpKind::kQuantize);
  const Tensor& qt = g->tensor(q->outputs[0]);
  EXPECT_EQ(qt.dtype, DataType::kInt8);
  EXPECT_EQ(qt.quant.scale, (std::vector<float>{0.5f}));
  EXPECT_EQ(qt.quant.zero_point, (Ints{-3}));
  const Node* d = FindNode(*g, "dequant");
  EXPECT_EQ(d->kind, OpKind::kDequantize);
  EXPECT_EQ(d->inputs.size(), 1u);
  EXPECT_EQ(g->tensor(d->outputs[0]).dtype, DataType::kFloat32);
}

}  // namespace
}  // namespace latte

namespace latte {
namespace {

using namespace ::latte::testing;  // NOLINT: the builder's vocabulary

// The ops transformer and detector exports carry, mapped per op_kinds.def with their outputs'
// dtypes; what cannot be mapped exactly stays opaque saying why.
TEST(OnnxOps, ComparisonsLogicWhereArgMaxLayerNormAndGelu) {
  ModelBuilder b(20);
  b.Input("x", {2, 3, 8});
  b.Input("mask", {2, 1, 8}, onnx::TensorProto::BOOL);
  b.Floats("zero", {}, {0.0f});
  b.Floats("scale", {8}, std::vector<float>(8, 1.0f));
  b.Node("Greater", {"x", "zero"}, {"positive"}, "greater");
  b.Node("And", {"positive", "mask"}, {"both"}, "and");
  b.Node("Not", {"both"}, {"neither"}, "not");
  b.Node("Where", {"neither", "x", "zero"}, {"masked"}, "where");
  auto& ln = b.Node("LayerNormalization", {"masked", "scale"}, {"normed"}, "ln");
  SetInt(ln, "axis", -1);
  SetFloat(ln, "epsilon", 1e-6f);
  SetString(b.Node("Gelu", {"normed"}, {"act"}, "gelu"), "approximate", "tanh");
  auto& am = b.Node("ArgMax", {"act"}, {"best"}, "argmax");
  SetInt(am, "axis", 2);
  SetInt(am, "keepdims", 0);
  b.Output("best");
  auto g = ImportFull(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  const std::pair<const char*, OpKind> kinds[] = {{"greater", OpKind::kGreater}, {"and", OpKind::kLogicalAnd},
                                                  {"not", OpKind::kLogicalNot},  {"where", OpKind::kWhere},
                                                  {"ln", OpKind::kLayerNorm},     {"gelu", OpKind::kGelu},
                                                  {"argmax", OpKind::kArgMax}};
  for (const auto& [name, kind] : kinds) {
    const Node* n = FindNode(*g, name);
    ASSERT_NE(n, nullptr) << name;
    EXPECT_EQ(n->kind, kind) << name;
  }
  auto dtype = [&](const char* name) { return g->tensor(FindNode(*g, name)->outputs[0]).dtype; };
  EXPECT_EQ(dtype("greater"), DataType::kBool);
  EXPECT_EQ(dtype("not"), DataType::kBool);
  EXPECT_EQ(dtype("where"), DataType::kFloat32);
  EXPECT_EQ(dtype("argmax"), DataType::kInt64);
  EXPECT_EQ(g->tensor(FindNode(*g, "where")->outputs[0]).shape, (Ints{2, 3, 8}));
  const Node* layer_norm = FindNode(*g, "ln");
  EXPECT_EQ(layer_norm->inputs.size(), 2u) << "no bias";
  EXPECT_NEAR(layer_norm->attrs.GetFloat("epsilon", 0), 1e-6, 1e-12);
  EXPECT_EQ(FindNode(*g, "gelu")->attrs.GetString("approximate", ""), "tanh");
  EXPECT_EQ(g->tensor(g->outputs[0]).shape, (Ints{2, 3}));
}

TEST(OnnxOps, WhatDoesNotMapExactlyStaysOpaqueSayingWhy) {
  ModelBuilder b(18);
  b.Input("x", {2, 8});
  b.Input("axes", {1}, onnx::TensorProto::INT64);
  b.Floats("scale", {8}, std::vector<float>(8, 1.0f));
  SetInt(b.Node("LayerNormalization", {"x", "scale"}, {"ln"}, "ln"), "stash_type", 10);  // float16 statistics
  b.Node("ReduceMean", {"ln", "axes"}, {"y"}, "mean");
  b.Output("y");
  auto g = Import(b);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(FindNode(*g, "ln")->kind, OpKind::kOpaque);
  EXPECT_EQ(FindNode(*g, "ln")->unsupported_reason, "LayerNormalization with stash_type 10");
  EXPECT_EQ(FindNode(*g, "mean")->kind, OpKind::kOpaque);
  EXPECT_EQ(FindNode(*g, "mean")->unsupported_reason, "ReduceMean with non-constant 'axes'");

  ModelBuilder bad(20);
  bad.Input("x", {2, 8});
  SetString(bad.Node("Gelu", {"x"}, {"y"}, "gelu"), "approximate", "sigmoid");
  bad.Output("y");
  auto refused = Import(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("gelu approximate 'sigmoid' (none or tanh)"), std::string::npos) << refused.status().message();
}

}  // namespace
}  // namespace latte
