// The architecture prior: deterministic, every kernel buildable, and shaped like real networks
// (channels in multiples of 8, maps that halve from the input resolutions, the kinds MobileNets
// are made of).
#include "profile/architectures.h"

#include <gtest/gtest.h>

#include <algorithm>
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
  // Text strips: 32 or 48 rows, 100–320 columns.
  for (std::int64_t res : {32, 48, 96, 100, 128, 160, 192, 224, 240, 256, 260, 280, 300, 320, 384, 512, 640})
    for (std::int64_t h = res; ; h = (h + 1) / 2) {
      sides.insert(h);
      if (h == 1) break;
    }
  int convs = 0, aligned = 0, wide = 0;
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const Kernel& k = kernels[i];
    ++kinds[k.Kind()];
    ASSERT_TRUE(CheckKernelParams(k).ok()) << k.Key();
    if (k.op == OpKind::kConv2D || k.op == OpKind::kDepthwiseConv2D) {
      EXPECT_TRUE(sides.count(k.Param("ih"))) << k.Key();
      EXPECT_TRUE(sides.count(k.Param("iw"))) << k.Key();
      // Square maps, or a text strip's: never more rows than columns.
      EXPECT_LE(k.Param("ih"), k.Param("iw")) << k.Key();
      wide += k.Param("ih") < k.Param("iw");
      ++convs;
      // Channels in multiples of 8, but for the RGB input and the prediction heads' outputs.
      aligned += (k.Param("ic") % 8 == 0 || k.Param("ic") == 3) && (k.Param("oc") % 8 == 0 || k.Param("kh") == 1);
    }
    if (i % 50 == 0) {  // a sample: graphs hold weights
      EXPECT_TRUE(BuildKernelGraph(k).ok()) << k.Key();
    }
  }
  EXPECT_GT(convs, 1500);
  EXPECT_GT(wide, convs / 50) << wide << " of " << convs;  // strips: a family and a quarter of another
  EXPECT_LT(wide, convs / 4) << wide << " of " << convs;
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

// Text recognizers: short wide strips whose later strides halve the rows only, so the columns
// stay many; the classifiers' strips take MobileNet v3.
TEST(Architectures, TextRecognizersRunWideStripsHalvingTheRowsOnly) {
  int recognizers = 0, strips = 0;
  for (std::uint64_t index = 0; index < 400; ++index) {
    const Architecture a = DrawArchitecture(9, index);
    if (a.name.rfind("mobilenet_v3", 0) == 0 && a.name.find('x', a.name.find('@')) != std::string::npos) ++strips;
    if (a.name.rfind("text_recognizer", 0) != 0) continue;
    ++recognizers;
    const Kernel& stem = a.kernels.front();
    EXPECT_TRUE(stem.Param("ih") == 32 || stem.Param("ih") == 48) << a.name;
    EXPECT_GE(stem.Param("iw"), 100) << a.name;
    int rows_only = 0;
    for (std::size_t i = 0; i < a.kernels.size(); ++i) {
      const Kernel& k = a.kernels[i];
      ASSERT_TRUE(CheckKernelParams(k).ok()) << a.name << ": " << k.Key();
      if (k.op != OpKind::kDepthwiseConv2D || k.Param("sh") != 2 || k.Param("sw") != 1) continue;
      ++rows_only;
      // The next conv on the map (not a squeeze-and-excite's on 1×1) reads half the rows and every column.
      auto next = std::find_if(a.kernels.begin() + static_cast<std::ptrdiff_t>(i) + 1, a.kernels.end(),
                               [](const Kernel& n) { return n.op == OpKind::kConv2D && n.Param("iw") > 1; });
      ASSERT_NE(next, a.kernels.end()) << a.name;
      EXPECT_EQ(next->Param("ih"), (k.Param("ih") + 1) / 2) << next->Key();
      EXPECT_EQ(next->Param("iw"), k.Param("iw")) << next->Key();
    }
    EXPECT_EQ(rows_only, 4) << a.name;
    // The last map: a row or two, and a quarter of the columns or more.
    const Kernel& pool = a.kernels.back();
    ASSERT_EQ(pool.op, OpKind::kMaxPool2D) << a.name;
    EXPECT_LE(pool.Param("ih"), 2) << a.name;
    EXPECT_GE(pool.Param("iw"), stem.Param("iw") / 2) << a.name;
  }
  EXPECT_GT(recognizers, 10);  // one in thirteen draws
  EXPECT_LT(recognizers, 60);
  EXPECT_GT(strips, 5);  // a quarter of MobileNet v3's two in thirteen
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
