// Ops the kernel libraries have no single operator for, composed in each backend (nearest resize,
// transpose, hard_sigmoid, batch_norm), against naive references on both backends.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "ir/graph_builder.h"
#include "run/backend_test_util.h"
#include "run/onednn/onednn_backend.h"
#include "run/xnnpack/xnnpack_backend.h"

namespace latte {
namespace {

using reference::Floats;
using ::latte::testing::Attrs;
using ::latte::testing::ExpectClose;
using ::latte::testing::Random;
using Ints = std::vector<std::int64_t>;

std::unique_ptr<Backend> Make(const std::string& name) {
  BackendRegistry registry;
  RegisterXnnpackBackend(registry);
  RegisterOnednnBackend(registry);
  auto backend = registry.Create(name, RunOptions{});
  EXPECT_TRUE(backend.ok()) << backend.status().message();
  return backend.ok() ? std::move(*backend) : nullptr;
}

class ComposedOps : public ::testing::TestWithParam<const char*> {
 protected:
  Floats Run(const Graph& g, const std::vector<Floats>& inputs) {
    auto backend = Make(GetParam());
    return backend ? ::latte::testing::RunOnBackend(*backend, g, inputs) : Floats{};
  }
  std::string WhyNot(const Graph& g) {
    auto backend = Make(GetParam());
    Support s = backend->Supports(g, static_cast<NodeId>(g.num_nodes() - 1));
    return s.ok() ? "supported" : s.why();
  }
};

// NHWC nearest upscaling by whole factors: output (y, x) reads input (y / fh, x / fw).
Floats NearestReference(const Floats& x, const Shape& s, std::int64_t fh, std::int64_t fw) {
  const std::int64_t n = s[0], h = s[1], w = s[2], c = s[3];
  Floats y(static_cast<size_t>(n * h * fh * w * fw * c));
  size_t o = 0;
  for (std::int64_t b = 0; b < n; ++b)
    for (std::int64_t oy = 0; oy < h * fh; ++oy)
      for (std::int64_t ox = 0; ox < w * fw; ++ox)
        for (std::int64_t k = 0; k < c; ++k) y[o++] = x[static_cast<size_t>(((b * h + oy / fh) * w + ox / fw) * c + k)];
  return y;
}

TEST_P(ComposedOps, NearestResizeByWholeFactors) {
  struct Case {
    Shape x;
    std::int64_t fh, fw;
    std::string coords, rounding;
  };
  const Case cases[] = {
      {{1, 5, 4, 3}, 4, 4, "asymmetric", "floor"},  // PaddleOCR detection's upsampling
      {{2, 3, 2, 5}, 8, 2, "asymmetric", "floor"},
      {{1, 4, 3, 2}, 2, 2, "asymmetric", "round_prefer_floor"},
      {{1, 3, 4, 2}, 3, 3, "half_pixel", "round_prefer_floor"},
      {{1, 3, 4, 2}, 1, 3, "asymmetric", "floor"},
      {{1, 3, 4, 2}, 2, 1, "asymmetric", "floor"},
      {{1, 3, 4, 2}, 1, 1, "asymmetric", "floor"},
  };
  for (const Case& c : cases) {
    GraphBuilder b;
    TensorId x = b.Input("x", c.x);
    TensorId y = b.Op1(OpKind::kResize, "resize", {x},
                       Attrs({{"mode", std::string("nearest")}, {"sizes", Ints{c.x[1] * c.fh, c.x[2] * c.fw}},
                              {"coordinate_transformation", c.coords}, {"nearest_mode", c.rounding}}));
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    const Floats in = Random(*g->tensor(x).num_elements(), 3);
    const std::string what = std::string(GetParam()) + " " + ShapeToString(c.x) + " ×" + std::to_string(c.fh) + "x" +
                             std::to_string(c.fw) + " " + c.coords + "/" + c.rounding;
    ExpectClose(Run(*g, {in}), NearestReference(in, c.x, c.fh, c.fw), what);
  }
}

TEST_P(ComposedOps, NearestResizeRefusesWhatItWouldGetWrong) {
  GraphBuilder b;
  TensorId y = b.Op1(OpKind::kResize, "resize", {b.Input("x", {1, 4, 4, 2})},
                     Attrs({{"mode", std::string("nearest")}, {"sizes", Ints{8, 8}},
                            {"coordinate_transformation", std::string("half_pixel")}, {"nearest_mode", std::string("ceil")}}));
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok());
  EXPECT_NE(WhyNot(*g).find("half_pixel / ceil rounding does not read input floor(out / factor)"), std::string::npos)
      << WhyNot(*g);
}

// Row-major transpose of `x` (shape `s`) by `perm`.
Floats TransposeReference(const Floats& x, const Shape& s, const Ints& perm) {
  const size_t r = s.size();
  std::vector<std::int64_t> stride(r, 1), os(r);
  for (size_t k = r; k-- > 1;) stride[k - 1] = stride[k] * s[k];
  for (size_t k = 0; k < r; ++k) os[k] = s[static_cast<size_t>(perm[k])];
  Floats y(x.size());
  std::vector<std::int64_t> idx(r, 0);
  for (size_t o = 0; o < y.size(); ++o) {
    std::int64_t src = 0;
    for (size_t k = 0; k < r; ++k) src += idx[k] * stride[static_cast<size_t>(perm[k])];
    y[o] = x[static_cast<size_t>(src)];
    for (size_t k = r; k-- > 0;) {
      if (++idx[k] < os[k]) break;
      idx[k] = 0;
    }
  }
  return y;
}

TEST_P(ComposedOps, TransposeEveryPermutationOfRank4) {
  const Shape s{2, 3, 4, 5};
  Ints perm{0, 1, 2, 3};
  int supported = 0;
  do {
    GraphBuilder b;
    TensorId x = b.Input("x", s);
    TensorId y = b.Op1(OpKind::kTranspose, "t", {x}, Attrs({{"perm", perm}}));
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    std::string what = std::string(GetParam()) + " perm";
    for (auto p : perm) what.append(" ").append(std::to_string(p));
    const std::string why = WhyNot(*g);
    if (why != "supported") {
      // Only xnnpack may refuse, and only permutations that are not one swap of two blocks.
      EXPECT_EQ(std::string(GetParam()), "xnnpack") << what << ": " << why;
      EXPECT_NE(why.find("only a swap of two blocks of axes"), std::string::npos) << what << ": " << why;
      continue;
    }
    ++supported;
    const Floats in = Random(120, 5);
    ExpectClose(Run(*g, {in}), TransposeReference(in, s, perm), what);
  } while (std::next_permutation(perm.begin(), perm.end()));
  // onednn: all 24. xnnpack: the 7 that are one swap of two blocks behind leading axes — the
  // identity, 3 rotations of all axes, 3 swaps behind axis 0 (NCHW ↔ NHWC among them).
  EXPECT_EQ(supported, std::string(GetParam()) == "onednn" ? 24 : 7);
}

TEST_P(ComposedOps, TransposeDropsUnitAxes) {
  // [1, C, 1, W] → [1, W, 1, C]: with the 1s dropped, a 2-D transpose.
  const Shape s{1, 6, 1, 7};
  const Ints perm{0, 3, 2, 1};
  GraphBuilder b;
  TensorId y = b.Op1(OpKind::kTranspose, "t", {b.Input("x", s)}, Attrs({{"perm", perm}}));
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok());
  const Floats in = Random(42, 8);
  ExpectClose(Run(*g, {in}), TransposeReference(in, s, perm), GetParam());
}

TEST_P(ComposedOps, HardSigmoidWithAndWithoutFusedActivation) {
  for (const char* act : {"none", "relu6", "relu_n1_to_1"}) {
    GraphBuilder b;
    TensorId x = b.Input("x", {2, 3, 5, 7});
    TensorId y = b.Op1(OpKind::kHardSigmoid, "hs", {x}, Attrs({{"alpha", 1.0 / 6}, {"beta", 0.5}, {"activation", std::string(act)}}));
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok());
    const Floats in = Random(210, 9, -5.0f, 5.0f);
    Floats want(in.size());
    for (size_t i = 0; i < in.size(); ++i) want[i] = std::clamp(in[i] / 6.0f + 0.5f, 0.0f, 1.0f);
    reference::Activate(want, act);
    ExpectClose(Run(*g, {in}), want, std::string(GetParam()) + " hard_sigmoid " + act);
  }
}

TEST_P(ComposedOps, BatchNormChannelsLast) {
  const std::int64_t c = 6;
  for (const Shape& s : {Shape{2, 4, 5, c}, Shape{3, c}}) {
    GraphBuilder b;
    TensorId x = b.Input("x", s);
    const Floats scale = Random(c, 1), bias = Random(c, 2), mean = Random(c, 3), var = Random(c, 4, 0.1f, 2.0f);
    TensorId y = b.Op1(OpKind::kBatchNorm, "bn",
                       {x, b.Constant("scale", {c}, scale), b.Constant("bias", {c}, bias), b.Constant("mean", {c}, mean),
                        b.Constant("var", {c}, var)},
                       Attrs({{"epsilon", 1e-3}, {"layout", std::string("NHWC")}, {"activation", std::string("relu")}}));
    auto g = b.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    const Floats in = Random(*g->tensor(x).num_elements(), 6, -3.0f, 3.0f);
    Floats want(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      const size_t k = i % static_cast<size_t>(c);
      want[i] = std::max(0.0f, (in[i] - mean[k]) / std::sqrt(var[k] + 1e-3f) * scale[k] + bias[k]);
    }
    ExpectClose(Run(*g, {in}), want, std::string(GetParam()) + " batch_norm " + ShapeToString(s));
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ComposedOps, ::testing::Values("xnnpack", "onednn"));

}  // namespace
}  // namespace latte
