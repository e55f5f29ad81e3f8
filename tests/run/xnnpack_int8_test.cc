// XNNPACK under --precision int8: conv2d, depthwise_conv2d and fully_connected run as int8
// kernels (weights quantized from the fp32 ones, activations at a fixed scale) and agree with the
// fp32 run within the error quantization allows; everything else says no, with the reason.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ir/graph_builder.h"
#include "run/backend_test_util.h"
#include "run/xnnpack/xnnpack_backend.h"

namespace latte {
namespace {

using reference::Floats;
using ::latte::testing::Attrs;
using ::latte::testing::Random;
using Ints = std::vector<std::int64_t>;

std::unique_ptr<Backend> Make(Precision precision) {
  RunOptions options;
  options.precision = precision;
  auto backend = XnnpackBackend::Create(options);
  EXPECT_TRUE(backend.ok()) << backend.status().message();
  return backend.ok() ? std::move(*backend) : nullptr;
}

// The activation step the backend uses (kept in step with kInt8ActivationRange there).
constexpr float kActivationScale = 8.0f / 127.0f;

// int8 against fp32 on a one-node graph. Bound on the error of each output: half a step of the
// output, plus the input's half-step rounding through the weights (Σ|w| · s/2), plus the weights'
// rounding through the inputs (Σ|x| · max|w|/127/2 ≤ n·max|w|/254 for |x| ≤ 1).
void ExpectInt8CloseToFp32(const Graph& g, const Floats& x, float sum_abs_w, float max_abs_w, float fan_in, const std::string& what) {
  auto fp32 = Make(Precision::kFp32);
  auto int8 = Make(Precision::kInt8);
  ASSERT_TRUE(int8->Supports(g, 0).ok()) << what << ": " << int8->Supports(g, 0).why();
  const Floats want = ::latte::testing::RunOnBackend(*fp32, g, {x});
  const Floats got = ::latte::testing::RunOnBackend(*int8, g, {x});
  ASSERT_EQ(got.size(), want.size()) << what;
  const float bound = kActivationScale / 2 + sum_abs_w * kActivationScale / 2 + fan_in * max_abs_w / 254.0f + 1e-4f;
  float worst = 0;
  size_t at = 0;
  bool differs = false;
  for (size_t i = 0; i < got.size(); ++i) {
    const float err = std::abs(got[i] - want[i]);
    differs = differs || err > 0;
    if (err > worst) worst = err, at = i;
  }
  EXPECT_LE(worst, bound) << what << ": element " << at << " is " << got[at] << " in int8, " << want[at] << " in fp32";
  EXPECT_TRUE(differs) << what << ": int8 gave exactly the fp32 numbers; was it run in int8?";
}

float SumAbsPerOutput(const Floats& w, size_t outputs, bool output_last) {
  std::vector<float> sums(outputs, 0.0f);
  for (size_t i = 0; i < w.size(); ++i) sums[output_last ? i % outputs : i / (w.size() / outputs)] += std::abs(w[i]);
  return *std::max_element(sums.begin(), sums.end());
}

float MaxAbs(const Floats& w) {
  float m = 0;
  for (float v : w) m = std::max(m, std::abs(v));
  return m;
}

TEST(XnnpackInt8, Conv2DAgreesWithFp32) {
  const Floats w = Random(6 * 3 * 3 * 4, 1, -0.3f, 0.3f), b = Random(6, 2);
  for (const char* act : {"none", "relu6"}) {
    GraphBuilder gb;
    TensorId x = gb.Input("x", {1, 9, 7, 4});
    TensorId y = gb.Op1(OpKind::kConv2D, "conv", {x, gb.Constant("w", {6, 3, 3, 4}, w), gb.Constant("b", {6}, b)},
                        Attrs({{"filter_layout", std::string("OHWI")}, {"padding", std::string("same")},
                               {"strides", Ints{2, 1}}, {"activation", std::string(act)}}));
    auto g = gb.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    ExpectInt8CloseToFp32(*g, Random(9 * 7 * 4, 3), SumAbsPerOutput(w, 6, false), MaxAbs(w), 36, std::string("conv2d ") + act);
  }
}

TEST(XnnpackInt8, DepthwiseConv2DAgreesWithFp32) {
  const Floats w = Random(3 * 3 * 8, 4, -0.5f, 0.5f), b = Random(8, 5);
  GraphBuilder gb;
  TensorId x = gb.Input("x", {1, 6, 6, 8});
  TensorId y = gb.Op1(OpKind::kDepthwiseConv2D, "dw", {x, gb.Constant("w", {1, 3, 3, 8}, w), gb.Constant("b", {8}, b)},
                      Attrs({{"filter_layout", std::string("1HWO")}, {"padding", std::string("same")},
                             {"groups", std::int64_t{8}}, {"depth_multiplier", std::int64_t{1}}}));
  auto g = gb.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  ExpectInt8CloseToFp32(*g, Random(6 * 6 * 8, 6), SumAbsPerOutput(w, 8, true), MaxAbs(w), 9, "depthwise_conv2d");
}

TEST(XnnpackInt8, FullyConnectedAgreesWithFp32) {
  const Floats w = Random(5 * 16, 7, -0.2f, 0.2f), b = Random(5, 8);
  for (const char* layout : {"OI", "IO"}) {
    GraphBuilder gb;
    TensorId x = gb.Input("x", {3, 16});
    const Shape ws = std::string(layout) == "OI" ? Shape{5, 16} : Shape{16, 5};
    TensorId y = gb.Op1(OpKind::kFullyConnected, "fc", {x, gb.Constant("w", ws, w), gb.Constant("b", {5}, b)},
                        Attrs({{"weights_layout", std::string(layout)}}));
    auto g = gb.Finish({y});
    ASSERT_TRUE(g.ok()) << g.status().message();
    // Per-tensor weight scale: each output's Σ|w| is at most the largest column sum.
    ExpectInt8CloseToFp32(*g, Random(48, 9), 16 * MaxAbs(w), MaxAbs(w), 16, std::string("fully_connected ") + layout);
  }
}

TEST(XnnpackInt8, OtherOpsSayWhy) {
  GraphBuilder gb;
  TensorId y = gb.Op1(OpKind::kSigmoid, "s", {gb.Input("x", {2, 4})});
  auto g = gb.Finish({y});
  ASSERT_TRUE(g.ok());
  Support s = Make(Precision::kInt8)->Supports(*g, 0);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.why(), "int8 not implemented for sigmoid (conv2d, depthwise_conv2d, fully_connected only)");
}

}  // namespace
}  // namespace latte
