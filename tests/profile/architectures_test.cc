// The architecture prior: deterministic, every kernel buildable, and shaped like real networks
// (channels in multiples of 8, maps that halve from the input resolutions, the kinds MobileNets
// are made of).
#include "profile/architectures.h"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "ir/fusion_rules.h"
#include "ir/kernel_graph.h"
#include "profile/space.h"

namespace latte {
namespace {

TEST(Architectures, TheSameSeedDrawsTheSameKernelsAndAnotherSeedOthers) {
  const std::vector<Kernel> a = ArchitectureKernels(7, 500), b = ArchitectureKernels(7, 500),
                            c = ArchitectureKernels(8, 500);
  ASSERT_EQ(a.size(), 500u);
  ASSERT_EQ(a, b);
  EXPECT_NE(a, c);
  std::set<std::string> keys;
  for (const Kernel& k : a) keys.insert(k.Key());
  EXPECT_EQ(keys.size(), a.size());  // distinct
  EXPECT_EQ(DrawArchitecture(3, 11).name, DrawArchitecture(3, 11).name);
}

TEST(Architectures, KernelsLookLikeRealNetworks) {
  const std::vector<Kernel> kernels = ArchitectureKernels(0, 3000);
  ASSERT_EQ(kernels.size(), 3000u);
  std::map<std::string, int> kinds;
  // Every map side a network reaches: an input resolution halved (SAME padding: rounded up).
  std::set<std::int64_t> sides;
  for (std::int64_t res : {96, 128, 160, 192, 224, 240, 256, 260, 280, 300, 320, 384, 512, 640})
    for (std::int64_t h = res; ; h = (h + 1) / 2) {
      sides.insert(h);
      if (h == 1) break;
    }
  int convs = 0, aligned = 0;
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const Kernel& k = kernels[i];
    ++kinds[k.Kind()];
    ASSERT_TRUE(CheckKernelParams(k).ok()) << k.Key();
    if (k.op == OpKind::kConv2D || k.op == OpKind::kDepthwiseConv2D) {
      EXPECT_TRUE(sides.count(k.Param("ih"))) << k.Key();
      EXPECT_EQ(k.Param("ih"), k.Param("iw")) << k.Key();
      ++convs;
      // Channels in multiples of 8, but for the RGB input and the prediction heads' outputs.
      aligned += (k.Param("ic") % 8 == 0 || k.Param("ic") == 3) && (k.Param("oc") % 8 == 0 || k.Param("kh") == 1);
    }
    if (i % 50 == 0) {  // a sample: graphs hold weights
      EXPECT_TRUE(BuildKernelGraph(k).ok()) << k.Key();
    }
  }
  EXPECT_GT(convs, 1500);
  EXPECT_GE(aligned, convs * 95 / 100) << aligned << " of " << convs;
  for (const char* kind : {"conv2d", "conv2d+relu6", "conv2d+relu", "depthwise_conv2d+relu6", "depthwise_conv2d+relu",
                           "add", "add+relu", "mul", "hard_swish", "hard_sigmoid", "global_avg_pool",
                           "fully_connected", "max_pool2d", "resize", "transpose_conv2d", "sigmoid", "add+relu6"})
    EXPECT_GT(kinds[kind], 0) << kind;
}

// Mask and heatmap decoders: what no classifier or detector has, a few channels at the input's
// full resolution and heads of 1–39 outputs there, some drawn by a transposed conv.
TEST(Architectures, DecodersBringFewChannelsAtHighResolution) {
  int decoders = 0, transposed_heads = 0;
  for (std::uint64_t index = 0; index < 300; ++index) {
    const Architecture a = DrawArchitecture(5, index);
    if (a.name.find("decoder") == std::string::npos) continue;
    ++decoders;
    const Kernel& head = a.kernels.back().op == OpKind::kSigmoid ? a.kernels[a.kernels.size() - 2] : a.kernels.back();
    const bool transposed = a.name.find("drawn by the last") != std::string::npos;
    transposed_heads += transposed;
    ASSERT_EQ(head.op, transposed ? OpKind::kTransposeConv2D : OpKind::kConv2D) << a.name;
    const std::int64_t outputs = head.Param("oc");
    EXPECT_TRUE(outputs <= 2 || (outputs >= 17 && outputs <= 39)) << a.name;
    // The decoder's channels at the output stride, or a level before it.
    EXPECT_LE(head.Param("ic"), transposed ? 64 : 32) << a.name;
    const std::int64_t out_side = transposed ? head.Param("oh") : head.Param("ih");
    const bool mask = a.name.rfind("mask", 0) == 0;
    EXPECT_EQ(a.kernels.back().op == OpKind::kSigmoid, mask) << a.name;
    if (a.name.find(" /1 ") != std::string::npos) {  // output stride 1: the head at the input's size
      const std::int64_t res = std::stoll(a.name.substr(a.name.find('@') + 1));
      EXPECT_EQ(out_side, res) << a.name;
    }
  }
  EXPECT_GT(decoders, 20);  // two in twelve draws
  EXPECT_LT(decoders, 80);
  EXPECT_GT(transposed_heads, 2);  // one in six decoders
  EXPECT_LT(transposed_heads, decoders / 3);
}

TEST(Architectures, TheSamplerTakesThemAndFiltersByKind) {
  SamplerConfig config;
  config.strategy = "architectures";
  config.max_kernels = 400;
  config.seed = 1;
  auto all = SampleKernels(config);
  ASSERT_TRUE(all.ok()) << all.status().message();
  EXPECT_EQ(all->kernels.size(), 400u);
  config.kinds = {"depthwise_conv2d"};  // a plain kind: every depthwise kernel, fused or not
  auto dw = SampleKernels(config);
  ASSERT_TRUE(dw.ok());
  ASSERT_FALSE(dw->kernels.empty());
  for (const Kernel& k : dw->kernels) EXPECT_EQ(k.op, OpKind::kDepthwiseConv2D);
  config.max_kernels = 0;
  EXPECT_FALSE(SampleKernels(config).ok());
}

// A backend that runs a residual add inside the conv before it (ONNX Runtime) gets those convs
// with the add fused too; every other draw stays what it was.
TEST(Architectures, ResidualFusionsAreDrawnOnlyWhenAsked) {
  const std::vector<Kernel> plain = ArchitectureKernels(5, 2000), fused = ArchitectureKernels(5, 2000, true);
  for (const Kernel& k : plain) EXPECT_FALSE(IsResidualFusion(k)) << k.Key();
  std::map<std::string, int> kinds;
  for (const Kernel& k : fused) {
    if (!IsResidualFusion(k)) continue;
    ++kinds[k.Kind()];
    EXPECT_TRUE(BuildKernelGraph(k).ok()) << k.Key();
  }
  EXPECT_GT(kinds["conv2d+add"], 10);       // inverted residuals: a linear projection, then the add
  EXPECT_GT(kinds["conv2d+add+relu"], 10);  // ResNet and RegNet blocks: the add's relu too

  SamplerConfig config;
  config.strategy = "architectures";
  config.max_kernels = 400;
  config.seed = 1;
  config.kinds = {"conv2d+add"};  // asking for the kind draws them
  auto sample = SampleKernels(config);
  ASSERT_TRUE(sample.ok()) << sample.status().message();
  ASSERT_FALSE(sample->kernels.empty());
  for (const Kernel& k : sample->kernels) EXPECT_EQ(k.Kind(), "conv2d+add");
}

}  // namespace
}  // namespace latte
