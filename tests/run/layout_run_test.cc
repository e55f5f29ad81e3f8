// ConvertToNhwc end to end: an NCHW (ONNX-style) graph converted to NHWC runs on XNNPACK and
// computes what the NCHW graph means.

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <iostream>
#include <random>
#include <string>

#include "import/import.h"
#include "ir/graph_builder.h"
#include "ir/layout.h"
#include "run/tensor_buffers.h"
#include "run/xnnpack/xnnpack_backend.h"
#include "test_paths.h"

namespace latte {
namespace {

using Ints = std::vector<std::int64_t>;

// XNNPACK runs only the transposes that swap two blocks of axes; the test does any other by hand
// (rank 4, float).
void TransposeByHand(const Graph& g, const Node& node, TensorBuffers& buffers) {
  const Shape& s = g.tensor(node.inputs[0]).shape;
  const Ints perm = *node.attrs.GetInts("perm");
  const float* in = buffers.as<float>(node.inputs[0]);
  float* out = buffers.mutable_as<float>(node.outputs[0]);
  const Ints strides = {s[1] * s[2] * s[3], s[2] * s[3], s[3], 1};
  Shape os(4);
  for (size_t k = 0; k < 4; ++k) os[k] = s[static_cast<size_t>(perm[k])];
  size_t o = 0;
  for (std::int64_t a = 0; a < os[0]; ++a)
    for (std::int64_t b = 0; b < os[1]; ++b)
      for (std::int64_t c = 0; c < os[2]; ++c)
        for (std::int64_t d = 0; d < os[3]; ++d) {
          const Ints idx = {a, b, c, d};
          std::int64_t src = 0;
          for (size_t k = 0; k < 4; ++k) src += idx[k] * strides[static_cast<size_t>(perm[k])];
          out[o++] = in[src];
        }
}

struct RunResult {
  int nodes = 0;
  int supported = 0;
  std::string refused;  // one line per node xnnpack refuses, with its reason
};

// Runs `g` node by node on one set of buffers: transposes by hand, everything else on
// XNNPACK when it supports the node (when `run` is false, only asks Supports). Fails on a
// supported node that does not prepare or run, or that writes a non-finite value.
RunResult RunNodes(const Graph& g, TensorBuffers* buffers, bool run) {
  RunResult r;
  RunOptions options;
  options.num_threads = 1;
  auto backend = XnnpackBackend::Create(options);
  if (!backend.ok()) {
    ADD_FAILURE() << backend.status().message();
    return r;
  }
  for (NodeId n = 0; n < static_cast<NodeId>(g.num_nodes()); ++n) {
    const Node& node = g.node(n);
    ++r.nodes;
    Support support = (*backend)->Supports(g, n);
    if (support.ok()) {
      ++r.supported;
    } else {
      r.refused += "\n  " + DescribeNode(g, n) + ": " + support.why();
    }
    if (!run) continue;
    if (node.kind == OpKind::kTranspose && !support.ok()) {
      TransposeByHand(g, node, *buffers);
      continue;
    }
    if (!support.ok()) continue;
    auto prepared = (*backend)->Prepare(g, n);
    if (!prepared.ok()) {
      ADD_FAILURE() << DescribeNode(g, n) << ": " << prepared.status().message();
      continue;
    }
    Status status = (*prepared)->Run(*buffers);
    if (!status.ok()) {
      ADD_FAILURE() << DescribeNode(g, n) << ": " << status.message();
      continue;
    }
    for (TensorId out : node.outputs) {
      const float* data = buffers->as<float>(out);
      for (size_t i = 0; i < buffers->bytes(out) / sizeof(float); ++i)
        if (!std::isfinite(data[i])) {
          ADD_FAILURE() << DescribeNode(g, n) << " output element " << i << " is " << data[i];
          break;
        }
    }
  }
  return r;
}

TEST(LayoutRun, ConvertedNchwConvMatchesReference) {
  const std::int64_t n = 1, ci = 3, h = 7, w = 9, co = 5, kh = 3, kw = 2;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  auto random = [&](std::int64_t count) {
    std::vector<float> v(static_cast<size_t>(count));
    for (float& f : v) f = dist(rng);
    return v;
  };
  const std::vector<float> wv = random(co * ci * kh * kw), bv = random(co), pc = random(co), xv = random(n * ci * h * w);
  GraphBuilder b;
  TensorId x = b.Input("x", {n, ci, h, w});
  Attributes a;
  a.Set("layout", "NCHW");
  a.Set("filter_layout", "OIHW");
  a.Set("padding", "explicit");
  a.Set("pads", Ints{1, 0, 1, 1});  // top, left, bottom, right
  a.Set("strides", Ints{1, 2});
  TensorId y = b.Op1(OpKind::kConv2D, "conv", {x, b.Constant("w", {co, ci, kh, kw}, wv), b.Constant("b", {co}, bv)}, a);
  y = b.Op1(OpKind::kRelu, "relu", {y});
  y = b.Op1(OpKind::kAdd, "add", {y, b.Constant("pc", {co, 1, 1}, pc)});  // per-channel, ONNX style
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  const Shape out_shape = g->tensor(g->outputs[0]).shape;
  ASSERT_EQ(out_shape, (Shape{n, co, h, 5}));

  // Reference: the NCHW conv as ONNX defines it, computed directly.
  std::vector<float> ref(static_cast<size_t>(n * co * h * 5));
  for (std::int64_t o = 0; o < co; ++o)
    for (std::int64_t oy = 0; oy < h; ++oy)
      for (std::int64_t ox = 0; ox < 5; ++ox) {
        double acc = bv[static_cast<size_t>(o)];
        for (std::int64_t i = 0; i < ci; ++i)
          for (std::int64_t ky = 0; ky < kh; ++ky)
            for (std::int64_t kx = 0; kx < kw; ++kx) {
              const std::int64_t iy = oy - 1 + ky, ix = ox * 2 + kx;
              if (iy < 0 || iy >= h || ix < 0 || ix >= w) continue;
              acc += xv[static_cast<size_t>((i * h + iy) * w + ix)] * wv[static_cast<size_t>(((o * ci + i) * kh + ky) * kw + kx)];
            }
        ref[static_cast<size_t>((o * h + oy) * 5 + ox)] = static_cast<float>(std::max(acc, 0.0) + pc[static_cast<size_t>(o)]);
      }

  auto c = ConvertToNhwc(*g);
  ASSERT_TRUE(c.ok()) << c.status().message();
  auto buffers = TensorBuffers::Allocate(*c);
  ASSERT_TRUE(buffers.ok()) << buffers.status().message();
  std::memcpy(buffers->mutable_data(c->inputs[0]), xv.data(), xv.size() * sizeof(float));
  RunResult r = RunNodes(*c, &*buffers, true);
  // Everything runs on XNNPACK, the two boundary transposes (NCHW ↔ NHWC) as channel shuffles.
  EXPECT_EQ(r.supported, r.nodes) << r.refused;
  ASSERT_EQ(c->tensor(c->outputs[0]).shape, out_shape);
  const float* got = buffers->as<float>(c->outputs[0]);
  for (size_t i = 0; i < ref.size(); ++i) ASSERT_NEAR(got[i], ref[i], 1e-4) << "element " << i;
}

Expected<Graph> ImportConverted(const std::string& file, Shape shape, int* original_nodes) {
  ImportOptions options;
  options.input_shapes["x"] = std::move(shape);
  auto g = ImportModel(latte::testing::ModelPath(file), options);
  if (!g.ok()) return g.status();
  *original_nodes = static_cast<int>(g->num_nodes());
  return ConvertToNhwc(*g);
}

TEST(LayoutRun, ClsModelConvertsAndSupportedNodesRun) {
  const char* file = "ch_ppocr_mobile_v2.0_cls_infer.onnx";
  LATTE_REQUIRE_MODEL(file);
  int original = 0;
  auto g = ImportConverted(file, {1, 3, 48, 192}, &original);
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto buffers = TensorBuffers::Allocate(*g);
  ASSERT_TRUE(buffers.ok()) << buffers.status().message();
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  float* x = buffers->mutable_as<float>(g->inputs[0]);
  for (size_t i = 0; i < buffers->bytes(g->inputs[0]) / sizeof(float); ++i) x[i] = dist(rng);
  RunResult r = RunNodes(*g, &*buffers, true);
  std::cout << file << ": " << original << " nodes imported, " << r.nodes << " after ConvertToNhwc, " << r.supported
            << " supported by xnnpack; refused:" << r.refused << "\n";
  EXPECT_GT(r.supported, r.nodes / 2);
}

TEST(LayoutRun, DetModelConverts) {
  const char* file = "ch_PP-OCRv4_det_infer.onnx";
  LATTE_REQUIRE_MODEL(file);
  int original = 0;
  auto g = ImportConverted(file, {1, 3, 640, 640}, &original);
  ASSERT_TRUE(g.ok()) << g.status().message();
  RunResult r = RunNodes(*g, nullptr, false);
  std::cout << file << ": " << original << " nodes imported, " << r.nodes << " after ConvertToNhwc, " << r.supported
            << " supported by xnnpack; refused:" << r.refused << "\n";
  EXPECT_GT(r.supported, r.nodes / 2);
}

}  // namespace
}  // namespace latte
