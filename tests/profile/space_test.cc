#include "profile/space.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "ir/fusion_rules.h"
#include "ir/graph_builder.h"
#include "ir/kernel_graph.h"
#include "ir/kernel_params.h"
#include "import/import.h"
#include "profile/campaign.h"
#include "profile/profile.h"
#include "run/onednn/onednn_backend.h"
#include "run/xnnpack/xnnpack_backend.h"
#include "run/graph_prep.h"
#include "test_paths.h"

namespace latte {
namespace {

Kernel Kind(const std::string& text) {
  auto kind = ParseKindAlias(text);
  EXPECT_TRUE(kind.ok()) << kind.status().message();
  return kind.ok() ? *kind : Kernel{};
}

std::size_t GridSize(const std::string& kind, const std::string& grid) {
  auto kernels = GridKernels(Kind(kind), grid);
  EXPECT_TRUE(kernels.ok()) << kernels.status().message();
  if (!kernels.ok()) return 0;
  std::set<std::string> keys;
  for (const Kernel& k : *kernels) keys.insert(k.Key());
  EXPECT_EQ(keys.size(), kernels->size()) << kind << " grid " << grid << " has duplicates";
  return kernels->size();
}

TEST(KindAliases, ShortNamesAndOpNamesGiveTheSameKind) {
  EXPECT_EQ(Kind("dwconv2d").Kind(), "depthwise_conv2d");
  EXPECT_EQ(Kind("depthwise_conv2d").Kind(), "depthwise_conv2d");
  EXPECT_EQ(Kind("conv").Kind(), "conv2d");
  EXPECT_EQ(Kind("fc+relu").Kind(), "fully_connected+relu");
  EXPECT_EQ(Kind("conv+add+relu6").Kind(), "conv2d+add+relu6");
  EXPECT_EQ(Kind("hswish").Kind(), "hard_swish");
}

TEST(KindAliases, ListKeepsOrderAndDropsDuplicates) {
  auto kinds = ParseKindList("conv2d, dwconv,conv,relu");
  ASSERT_TRUE(kinds.ok()) << kinds.status().message();
  ASSERT_EQ(kinds->size(), 3u);
  EXPECT_EQ((*kinds)[0].Kind(), "conv2d");
  EXPECT_EQ((*kinds)[1].Kind(), "depthwise_conv2d");
  EXPECT_EQ((*kinds)[2].Kind(), "relu");
}

TEST(KindAliases, UnknownPartIsNamed) {
  auto kind = ParseKindAlias("conv2d+frobnicate");
  ASSERT_FALSE(kind.ok());
  EXPECT_EQ(kind.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(kind.status().message().find("'frobnicate'"), std::string::npos) << kind.status().message();
  EXPECT_FALSE(ParseKindList("conv2d,,relu").ok());
  EXPECT_FALSE(ParseKindAlias("opaque").ok());
}

TEST(Grids, SizesAreWhatTheGridsImply) {
  EXPECT_EQ(GridSize("conv2d", "tflite"), 4u * 5 * 4 * 3 * 3);      // 720
  EXPECT_EQ(GridSize("conv2d", "default"), 720u);                   // conv2d's default is the estimator's
  EXPECT_EQ(GridSize("conv2d+relu", "tflite"), 720u);
  EXPECT_EQ(GridSize("conv2d", "tensorrt"), 4u * 2 * 8 * 5 * 5);    // 1600
  EXPECT_EQ(GridSize("dwconv2d", "tensorrt"), 4u * 2 * 8 * 5);      // 320
  EXPECT_EQ(GridSize("dwconv2d", "default"), 3u * 6 * 5 * 2);       // 180
  EXPECT_EQ(GridSize("dwconv2d", "tflite"), 180u);                  // no tflite dwconv grid: default
  EXPECT_EQ(GridSize("tconv", "default"), 3u * 3 * 3 * 3);
  EXPECT_EQ(GridSize("fc", "default"), 36u);
  EXPECT_EQ(GridSize("matmul", "default"), 27u);
  EXPECT_EQ(GridSize("maxpool", "default"), 100u);
  EXPECT_EQ(GridSize("avgpool", "default"), 100u);
  EXPECT_EQ(GridSize("relu", "default"), 30u);
  EXPECT_EQ(GridSize("gap", "default"), 30u);
  EXPECT_EQ(GridSize("add", "default"), 30u);
  EXPECT_EQ(GridSize("concat", "default"), 64u);
  EXPECT_EQ(GridSize("resize", "default"), 32u);
  EXPECT_EQ(GridSize("pad", "default"), 30u);
}

TEST(Grids, TfliteGridFirstKernelAndSamePadding) {
  auto kernels = GridKernels(Kind("conv2d"), "tflite");
  ASSERT_TRUE(kernels.ok());
  const Kernel& first = kernels->front();  // kernel 1, filters 16, H 8, Cin 16, stride 1
  EXPECT_EQ(first.Key(),
            "conv2d|bias=1,dh=1,dw=1,g=1,ic=16,ih=8,iw=8,kh=1,kw=1,n=1,oc=16,pb=0,pl=0,pr=0,pt=0,sh=1,sw=1|float32");
  // SAME padding, TF's split (extra at the end): k5 s2 on 8 → out 4, total pad 3.
  EXPECT_EQ(SamePads(8, 5, 2), (std::pair<std::int64_t, std::int64_t>{1, 2}));
  EXPECT_EQ(SamePads(8, 2, 1), (std::pair<std::int64_t, std::int64_t>{0, 1}));
  EXPECT_EQ(SamePads(7, 3, 3), (std::pair<std::int64_t, std::int64_t>{1, 1}));
}

TEST(Grids, TensorrtSizesAreLogSpacedAndCinFollowsTheRatio) {
  auto kernels = GridKernels(Kind("conv2d"), "tensorrt");
  ASSERT_TRUE(kernels.ok());
  std::set<std::int64_t> sizes;
  std::set<std::pair<std::int64_t, std::int64_t>> cin_cout;
  for (const Kernel& k : *kernels) {
    sizes.insert(k.Param("ih"));
    cin_cout.insert({k.Param("ic"), k.Param("oc")});
  }
  EXPECT_EQ(sizes, (std::set<std::int64_t>{7, 12, 20, 33, 55, 92, 153, 256}));
  EXPECT_TRUE(cin_cout.count({64, 16}));   // ratio 4
  EXPECT_TRUE(cin_cout.count({4, 16}));    // ratio 0.25
  EXPECT_TRUE(cin_cout.count({128, 256})); // ratio 0.5
  EXPECT_EQ(cin_cout.size(), 25u);
}

// Every built-in grid kernel must be a kernel the graph builder accepts: a grid of kernels
// that cannot be built would be recorded as unsupported instead of measured.
TEST(Grids, EveryDefaultGridKernelBuildsAGraph) {
  for (const char* kind : {"conv2d", "dwconv2d", "tconv", "fc", "matmul", "maxpool", "avgpool", "gap", "relu",
                           "relu6", "sigmoid", "hswish", "add", "mul", "concat", "resize", "pad", "softmax", "mean",
                           "transpose", "reshape", "conv2d+add+relu", "dwconv+relu6"}) {
    auto kernels = GridKernels(Kind(kind), "default");
    ASSERT_TRUE(kernels.ok()) << kind << ": " << kernels.status().message();
    // The corners and the middle of the grid (building all 720 convs' weights is slow).
    for (std::size_t i : {std::size_t{0}, kernels->size() / 2, kernels->size() - 1}) {
      auto graph = BuildKernelGraph((*kernels)[i]);
      EXPECT_TRUE(graph.ok()) << (*kernels)[i].Key() << ": " << graph.status().message();
    }
  }
}

// The kinds transformers and post-processing add: each grid's and each random draw's kernels build
// (logic kinds as bool kernels), layer norms drawn as encoders run them.
TEST(Grids, ComparisonLogicWhereArgMaxLayerNormGeluAndGatherKernelsBuild) {
  for (const char* kind : {"equal", "not_equal", "less", "greater_equal", "logical_and", "logical_or", "logical_not",
                           "where", "argmax", "argmin", "layer_norm", "gelu", "gather"}) {
    const Kernel k = Kind(kind);
    EXPECT_EQ(k.dtype, IsLogic(k.op) ? DataType::kBool : DataType::kFloat32) << kind;
    auto grid = GridKernels(k, "default");
    ASSERT_TRUE(grid.ok()) << kind << ": " << grid.status().message();
    auto random = RandomKernels(k, 6, 3);
    ASSERT_TRUE(random.ok()) << kind << ": " << random.status().message();
    EXPECT_EQ(random->size(), 6u) << kind;
    std::vector<Kernel> some = {grid->front(), (*grid)[grid->size() / 2], grid->back()};
    some.insert(some.end(), random->begin(), random->end());
    for (const Kernel& kernel : some) {
      auto graph = BuildKernelGraph(kernel);
      EXPECT_TRUE(graph.ok()) << kernel.Key() << ": " << graph.status().message();
      if (kernel.op == OpKind::kLayerNorm) {
        EXPECT_EQ(kernel.Param("h"), 1) << kernel.Key();
        EXPECT_GE(kernel.Param("w"), 16) << kernel.Key();
        EXPECT_LE(kernel.Param("w"), 1024) << kernel.Key();
        EXPECT_GE(kernel.Param("c"), 64) << kernel.Key();
      }
    }
  }
}

TEST(Grids, KindWithoutGridIsUnsupported) {
  auto kernels = GridKernels(Kind("split"), "default");
  ASSERT_FALSE(kernels.ok());
  EXPECT_EQ(kernels.status().code(), StatusCode::kUnsupported);
  EXPECT_FALSE(GridKernels(Kind("relu"), "mobile").ok());
}

TEST(Random, SameSeedSameKernelsOtherSeedOthers) {
  auto a = RandomKernels(Kind("conv2d"), 40, 7);
  auto b = RandomKernels(Kind("conv2d"), 40, 7);
  auto c = RandomKernels(Kind("conv2d"), 40, 8);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  ASSERT_EQ(a->size(), 40u);
  EXPECT_EQ(*a, *b);
  EXPECT_NE(*a, *c);
  std::set<std::string> keys;
  for (const Kernel& k : *a) {
    keys.insert(k.Key());
    EXPECT_GE(k.Param("ih"), 1);
    EXPECT_LE(k.Param("ih"), 448);
    EXPECT_LE(k.Param("oc"), 512);
    EXPECT_TRUE(BuildKernelGraph(k).ok()) << k.Key();
  }
  EXPECT_EQ(keys.size(), 40u);  // distinct
}

TEST(Random, DrawsWideAndTallMapsAndOneWayStrides) {
  // Half the conv and pool draws are square, some of them larger than 224×224 (up to 448×448, as
  // the first layers of a detector at 640×640 run); the others wide or tall (short side down to
  // 1), and some of the non-square convs stride in one direction only. All of them build.
  for (const char* kind : {"conv2d", "depthwise_conv2d", "max_pool2d"}) {
    auto kernels = RandomKernels(Kind(kind), 200, 3);
    ASSERT_TRUE(kernels.ok()) << kind;
    int square = 0, large = 0, wide = 0, tall = 0, flat = 0, one_way = 0;
    for (const Kernel& k : *kernels) {
      const std::int64_t h = k.Param("ih"), w = k.Param("iw");
      square += h == w;
      large += h == w && h > 224;
      EXPECT_LE(std::max(h, w), 448) << k.Key();
      wide += h < w;
      tall += h > w;
      flat += std::min(h, w) <= 3;
      one_way += k.Param("sh") != k.Param("sw");
      EXPECT_TRUE(BuildKernelGraph(k).ok()) << k.Key();
    }
    EXPECT_GT(square, 60) << kind;
    EXPECT_GT(large, 3) << kind;
    EXPECT_GT(wide, 25) << kind;
    EXPECT_GT(tall, 25) << kind;
    EXPECT_GT(flat, 10) << kind;
    if (std::string(kind) != "max_pool2d") EXPECT_GT(one_way, 10) << kind;
    else EXPECT_EQ(one_way, 0);
  }
}

TEST(Random, BinaryDrawsBroadcastScalarsAndChannelVectorsOnEitherSide) {
  // Either side of a subtraction; a commutative op's broadcast operand is keyed second, as a
  // model's is (CanonicalOperandOrder).
  for (const char* kind : {"mul", "add", "sub"}) {
    auto kernels = RandomKernels(Kind(kind), 300, 5);
    ASSERT_TRUE(kernels.ok()) << kind;
    int equal = 0, scalar = 0, channels = 0, first = 0, second = 0;
    for (const Kernel& k : *kernels) {
      const bool a_small = k.Param("a1") == 1 && k.Param("a2") == 1 && k.Param("b1") > 1;
      const bool b_small = k.Param("b1") == 1 && k.Param("b2") == 1 && k.Param("a1") > 1;
      const std::string small = a_small ? "a" : b_small ? "b" : "";
      equal += small.empty() && k.Param("a1") == k.Param("b1") && k.Param("a3") == k.Param("b3");
      scalar += !small.empty() && k.Param(small + "3") == 1;
      channels += !small.empty() && k.Param(small + "3") > 1;
      first += a_small;
      second += b_small;
      EXPECT_TRUE(BuildKernelGraph(k).ok()) << k.Key();
    }
    EXPECT_GT(equal, 60) << kind;
    EXPECT_GT(scalar, 60) << kind;
    EXPECT_GT(channels, 60) << kind;
    if (std::string(kind) == "sub") {
      EXPECT_GT(first, 60) << kind;
      EXPECT_GT(second, 60) << kind;
    } else {
      EXPECT_EQ(first, 0) << kind;
      EXPECT_GT(second, 120) << kind;
    }
  }
}

TEST(Random, HalfTheChannelCountsOfKindsArchitecturesMissAreWholeVectors) {
  // A multiple of 8 by chance is 1 draw in 8; half the draws are made one, the rest any count.
  for (const char* kind : {"batch_norm", "sigmoid", "mul", "pad", "resize"}) {
    auto kernels = RandomKernels(Kind(kind), 400, 2);
    ASSERT_TRUE(kernels.ok()) << kind;
    int whole = 0;
    for (const Kernel& k : *kernels) {
      const std::int64_t c = k.params.count("c") ? k.Param("c") : k.Param("a3");
      ASSERT_GE(c, 8) << k.Key();
      whole += c % 8 == 0;
    }
    EXPECT_GT(whole, 200) << kind;  // 400 / 2 + 400 / 16 expected
    EXPECT_LT(whole, 300) << kind;
  }
}

TEST(Random, LogUniformFavoursNoSizeRange) {
  // Log-uniform over [4, 224]: about as many draws below 30 (ln 30/4 ≈ 2.0) as above (ln 224/30 ≈ 2.0).
  auto kernels = RandomKernels(Kind("relu"), 400, 1);
  ASSERT_TRUE(kernels.ok());
  int small = 0;
  for (const Kernel& k : *kernels) small += k.Param("h") < 30 ? 1 : 0;
  EXPECT_GT(small, 120);
  EXPECT_LT(small, 280);
}

// A random campaign its budget stops early has measured every kind: each kind's kernels are spread
// evenly over the campaign (a plain shuffle left some kind out of a 2% prefix now and then), and
// any prefix holds each kind about in proportion to its share (a binary kind three times another's).
TEST(Sampler, EveryKindIsInAnyPrefixInProportionToItsShare) {
  SamplerConfig config;
  config.strategy = "random";
  config.kinds = {"conv2d", "depthwise_conv2d", "add", "mul", "relu", "slice", "concat", "pad",
                  "resize", "max_pool2d", "sigmoid", "transpose", "reshape", "softmax", "mean"};
  config.max_kernels = 3000;
  for (unsigned seed : {1u, 71u, 1234u}) {
    config.seed = seed;
    auto sample = SampleKernels(config);
    ASSERT_TRUE(sample.ok()) << sample.status().message();
    std::map<std::string, int> total;
    for (const Kernel& k : sample->kernels) ++total[k.Kind()];
    ASSERT_EQ(total.size(), config.kinds.size());
    for (std::size_t prefix : {3 * config.kinds.size(), std::size_t{203}, std::size_t{1000}}) {
      std::map<std::string, int> seen;
      for (std::size_t i = 0; i < prefix; ++i) ++seen[sample->kernels[i].Kind()];
      for (const auto& [kind, n] : total) {
        const double expected = static_cast<double>(n) * static_cast<double>(prefix) / static_cast<double>(sample->kernels.size());
        EXPECT_GE(seen[kind], 1) << kind << " missing from the first " << prefix << " (seed " << seed << ")";
        EXPECT_NEAR(seen[kind], expected, 1.0 + 1e-9) << kind << ", first " << prefix << " (seed " << seed << ")";
      }
    }
  }
}

TEST(Sampler, GridIsShuffledDeterministicallyAndTruncated) {
  SamplerConfig config;
  config.kinds = {"conv2d", "relu"};
  config.seed = 3;
  auto a = SampleKernels(config);
  auto b = SampleKernels(config);
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(a->kernels.size(), 750u);
  EXPECT_EQ(a->kernels, b->kernels);
  config.seed = 4;
  auto c = SampleKernels(config);
  ASSERT_TRUE(c.ok());
  EXPECT_NE(a->kernels, c->kernels);
  // Same set in another order.
  std::set<std::string> ka, kc;
  for (const Kernel& k : a->kernels) ka.insert(k.Key());
  for (const Kernel& k : c->kernels) kc.insert(k.Key());
  EXPECT_EQ(ka, kc);
  // A cut (budget, --max-kernels) still holds both kinds.
  config.max_kernels = 100;
  auto cut = SampleKernels(config);
  ASSERT_TRUE(cut.ok());
  ASSERT_EQ(cut->kernels.size(), 100u);
  std::map<std::string, int> per_kind;
  for (const Kernel& k : cut->kernels) ++per_kind[k.Kind()];
  EXPECT_GT(per_kind["relu"], 0);
  EXPECT_GT(per_kind["conv2d"], 50);
}

TEST(Sampler, RandomSplitsTheCountAcrossKinds) {
  SamplerConfig config;
  config.strategy = "random";
  config.kinds = {"conv2d", "fc", "add"};
  config.max_kernels = 10;
  auto sample = SampleKernels(config);
  ASSERT_TRUE(sample.ok()) << sample.status().message();
  std::map<std::string, int> per_kind;
  for (const Kernel& k : sample->kernels) ++per_kind[k.Kind()];
  // add counts three times (equal shapes, a scalar, a channel vector): 10 · 3/5 = 6.
  EXPECT_EQ(per_kind["conv2d"], 2);
  EXPECT_EQ(per_kind["fully_connected"], 2);
  EXPECT_EQ(per_kind["add"], 6);
  EXPECT_EQ(RandomShares({Kind("relu"), Kind("mul")}, 9),
            (std::vector<std::size_t>{3, 6}));
  EXPECT_EQ(RandomShares({Kind("relu"), Kind("conv2d")}, 3),
            (std::vector<std::size_t>{2, 1}));  // the remainder to the first
  config.max_kernels = 0;
  EXPECT_FALSE(SampleKernels(config).ok());
}

TEST(Sampler, BadConfigsFail) {
  SamplerConfig config;
  EXPECT_FALSE(SampleKernels(config).ok());  // no kinds
  config.kinds = {"relu"};
  config.strategy = "adaptive";
  auto adaptive = SampleKernels(config);
  ASSERT_FALSE(adaptive.ok());
  EXPECT_NE(adaptive.status().message().find("AdaptiveSample"), std::string::npos);
  config.strategy = "from-models";
  EXPECT_FALSE(SampleKernels(config).ok());  // no models
  config.models = {"/nonexistent/model.tflite"};
  auto missing = SampleKernels(config);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/model.tflite"), std::string::npos);
}

TEST(Neighbours, ConvMovesChannelsAndSizeWithSamePadsRecomputed) {
  const Kernel conv = ConvKernel(OpKind::kConv2D, 28, 28, 32, 64, 3, 2);
  std::vector<Kernel> n = NeighbourKernels(conv);
  ASSERT_EQ(n.size(), 6u);
  std::set<std::string> moved;
  for (const Kernel& k : n) {
    if (k.Param("ic") != 32) moved.insert("ic" + std::to_string(k.Param("ic")));
    if (k.Param("oc") != 64) moved.insert("oc" + std::to_string(k.Param("oc")));
    if (k.Param("ih") != 28) {
      moved.insert(std::string("h").append(std::to_string(k.Param("ih"))));
      auto [pt, pb] = SamePads(k.Param("ih"), 3, 2);
      EXPECT_EQ(k.Param("pt"), pt);
      EXPECT_EQ(k.Param("pb"), pb);
    }
    EXPECT_TRUE(BuildKernelGraph(k).ok()) << k.Key();
  }
  EXPECT_EQ(moved, (std::set<std::string>{"ic24", "ic40", "oc56", "oc72", "h25", "h31"}));
}

TEST(Neighbours, DepthwiseChannelsMoveTogetherAndTinySizesStayPositive) {
  const Kernel dw = ConvKernel(OpKind::kDepthwiseConv2D, 2, 2, 8, 8, 3, 1);
  for (const Kernel& k : NeighbourKernels(dw)) {
    EXPECT_EQ(k.Param("ic"), k.Param("g"));
    EXPECT_EQ(k.Param("ic"), k.Param("oc"));
    EXPECT_GT(k.Param("ic"), 0);
    EXPECT_GT(k.Param("ih"), 0);
  }
  // 8 - 8 = 0 channels is left out; 16 channels and sizes 1 and 3 remain.
  EXPECT_EQ(NeighbourKernels(dw).size(), 3u);
}

TEST(FromModels, EveryKernelOfTheModelPlusNeighbours) {
  LATTE_REQUIRE_MODEL("face_detection_short_range.tflite");
  SamplerConfig config;
  config.strategy = "from-models";
  config.models = {testing::ModelPath("face_detection_short_range.tflite")};
  config.neighbours = false;
  auto own = SampleKernels(config);
  ASSERT_TRUE(own.ok()) << own.status().message();
  EXPECT_GT(own->kernels.size(), 10u);
  config.kinds = {"conv2d"};
  auto convs = SampleKernels(config);
  ASSERT_TRUE(convs.ok());
  EXPECT_GT(convs->kernels.size(), 0u);
  for (const Kernel& k : convs->kernels) EXPECT_EQ(k.op, OpKind::kConv2D) << k.Key();
  config.neighbours = true;
  auto with = SampleKernels(config);
  ASSERT_TRUE(with.ok());
  EXPECT_GT(with->kernels.size(), convs->kernels.size());
  // The model's own kernels come first, in the same order.
  for (std::size_t i = 0; i < convs->kernels.size(); ++i) EXPECT_EQ(with->kernels[i], convs->kernels[i]);
}

TEST(FromModels, LaidOutForABackendTheKernelsAreThoseItRuns) {
  // An NCHW ONNX model runs NHWC on xnnpack: the kernels sampled for it must be the planned
  // graph's, grouped by the given rules, or a pack fitted on them would miss what predict asks.
  LATTE_REQUIRE_MODEL("ch_ppocr_mobile_v2.0_cls_infer.onnx");
  const std::string path = testing::ModelPath("ch_ppocr_mobile_v2.0_cls_infer.onnx");
  SamplerConfig config;
  config.strategy = "from-models";
  config.models = {path};
  config.input_shapes = {{"x", Shape{1, 3, 48, 192}}};
  config.neighbours = false;
  config.layout_backend = "xnnpack";
  config.layout_backend_takes_nhwc = true;
  config.fusion_rules = std::vector<std::string>{"conv2d+relu"};
  auto sample = SampleKernels(config);
  ASSERT_TRUE(sample.ok()) << sample.status().message();

  ImportOptions import_options;
  import_options.input_shapes = config.input_shapes;
  auto graph = ImportModel(path, import_options);
  ASSERT_TRUE(graph.ok());
  auto plan = PlanGraphForBackends(*graph, std::vector<std::string>(graph->num_nodes(), "xnnpack"), {"xnnpack"});
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  auto rules = FusionRules::FromKinds({"conv2d+relu"});
  ASSERT_TRUE(rules.ok());
  auto grouping = GroupIntoKernels(plan->graph, *rules);
  ASSERT_TRUE(grouping.ok());
  std::set<std::string> expected, got;
  for (const KernelGroup& group : grouping->kernels) expected.insert(group.kernel.Key());
  for (const Kernel& k : sample->kernels) got.insert(k.Key());
  EXPECT_EQ(got, expected);
  // Part of the campaign's identity: a profile laid out otherwise is another campaign.
  EXPECT_EQ(config.ToJson().value("layout_backend", ""), "xnnpack");
  // The seed is not: the models' kernels do not depend on it (a random sample's do).
  const nlohmann::json before = config.ToJson();
  config.seed = 7;
  EXPECT_EQ(config.ToJson(), before);
  EXPECT_FALSE(before.contains("seed"));
  SamplerConfig random = config;
  random.strategy = "random";
  EXPECT_EQ(random.ToJson().value("seed", 0), 7);

  // As imported (NCHW, default rules) the kernels differ: the layout matters.
  config.layout_backend.clear();
  config.fusion_rules.reset();
  auto raw = SampleKernels(config);
  ASSERT_TRUE(raw.ok());
  std::set<std::string> raw_keys;
  for (const Kernel& k : raw->kernels) raw_keys.insert(k.Key());
  EXPECT_NE(raw_keys, expected);
}

// face_detection_full_range's 1×1 convs of 12 channels into 48 feed a residual add whose other
// operand comes from a pad: ORT's NCHWc pass leaves the add apart, so a profile for ORT measures
// the conv alone and the add with its relu, where the default rules fuse all three (ORT's rules:
// the residual kinds hold where its pass fuses them).
TEST(FromModels, ForAnNchwcBackendAResidualAddTheLayoutPassLeavesApartIsAKernelOfItsOwn) {
  LATTE_REQUIRE_MODEL("face_detection_full_range.tflite");
  SamplerConfig config;
  config.strategy = "from-models";
  config.models = {testing::ModelPath("face_detection_full_range.tflite")};
  config.neighbours = false;
  config.layout_backend = "ort";
  config.layout_backend_takes_nhwc = false;
  auto keys = [&](const std::optional<std::vector<std::string>>& rules) {
    config.fusion_rules = rules;
    auto sample = SampleKernels(config);
    EXPECT_TRUE(sample.ok()) << sample.status().message();
    std::set<std::string> out;
    if (sample.ok())
      for (const Kernel& k : sample->kernels) out.insert(k.Key());
    return out;
  };
  const std::string conv = "|bias=1,dh=1,dw=1,g=1,ic=12,ih=48,iw=48,kh=1,kw=1,n=1,oc=48,pb=0,pl=0,pr=0,pt=0,sh=1,sw=1|float32";
  const std::string add_relu = "add+relu|a0=1,a1=48,a2=48,a3=48,b0=1,b1=48,b2=48,b3=48|float32";
  const std::set<std::string> plain = keys(std::nullopt);
  EXPECT_TRUE(plain.count("conv2d+add+relu" + conv)) << "the default rules fuse the add and its relu into the conv";
  const std::set<std::string> nchwc = keys(std::vector<std::string>{"conv2d+relu", "add+relu", "conv2d+add@nchwc16", "conv2d+add+relu@nchwc16"});
  EXPECT_FALSE(nchwc.count("conv2d+add+relu" + conv));
  EXPECT_TRUE(nchwc.count("conv2d" + conv));
  EXPECT_TRUE(nchwc.count(add_relu));
  // Residual adds the pass does fuse stay fused.
  EXPECT_TRUE(std::any_of(nchwc.begin(), nchwc.end(), [](const std::string& k) { return k.rfind("conv2d+add+relu|", 0) == 0; }));
}

TEST(FromModels, OneListOfInputShapesServesSeveralModels) {
  // `--input-shape x=...` with an ONNX model that needs it and a TFLite model without an 'x':
  // each model takes the names it has; a name no model has is still an error.
  LATTE_REQUIRE_MODEL("ch_ppocr_mobile_v2.0_cls_infer.onnx");
  LATTE_REQUIRE_MODEL("face_detection_short_range.tflite");
  SamplerConfig config;
  config.strategy = "from-models";
  config.models = {testing::ModelPath("face_detection_short_range.tflite"),
                   testing::ModelPath("ch_ppocr_mobile_v2.0_cls_infer.onnx")};
  config.input_shapes = {{"x", Shape{1, 3, 48, 192}}};
  config.neighbours = false;
  auto sample = SampleKernels(config);
  ASSERT_TRUE(sample.ok()) << sample.status().message();
  EXPECT_GT(sample->kernels.size(), 20u);

  config.input_shapes["nope"] = Shape{1, 2};
  auto bad = SampleKernels(config);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--input-shape names 'nope', but no model"), std::string::npos)
      << bad.status().message();
}

// A standalone batch_norm (after a concat, an add or a pool: nothing to fold it into) is a kind
// of its own: drawn at random, built as one node with its four per-channel constants, measured on
// both CPU backends.
TEST(Sampler, BatchNormIsDrawnBuiltAndMeasured) {
  Kernel kind;
  kind.op = OpKind::kBatchNorm;
  auto kernels = RandomKernels(kind, 3, 11);
  ASSERT_TRUE(kernels.ok()) << kernels.status().message();
  ASSERT_EQ(kernels->size(), 3u);
  BackendRegistry registry;
  RegisterXnnpackBackend(registry);
  RegisterOnednnBackend(registry);
  MeasureOptions quick;
  quick.warmup_runs = 1;
  quick.min_warmup_secs = 0;
  quick.num_runs = 2;
  quick.min_secs = 0;
  for (const Kernel& k : *kernels) {
    EXPECT_EQ(k.Kind(), "batch_norm");
    for (const char* name : {"n", "h", "w", "c"}) EXPECT_GT(k.Param(name), 0) << k.Key();
    auto graph = BuildKernelGraph(k);
    ASSERT_TRUE(graph.ok()) << graph.status().message();
    EXPECT_EQ(graph->node(0).inputs.size(), 5u);
    for (const char* backend : {"xnnpack", "onednn"}) {
      auto m = MeasureKernel(k, backend, registry, RunOptions{}, quick);
      ASSERT_TRUE(m.ok()) << backend << " " << k.Key() << ": " << m.status().message();
      EXPECT_GT(m->stats.p50, 0) << backend;
    }
  }
}

}  // namespace
}  // namespace latte

namespace latte {
namespace {

TEST(SampleKernels, AnInputShapeNoModelHasIsATypo) {
  // Two models, one shape list: a name one of them has is fine; a name neither has is an error.
  LATTE_REQUIRE_MODEL("ch_ppocr_mobile_v2.0_cls_infer.onnx");
  LATTE_REQUIRE_MODEL("face_detection_short_range.tflite");
  SamplerConfig config;
  config.strategy = "from-models";
  config.models = {testing::ModelPath("ch_ppocr_mobile_v2.0_cls_infer.onnx"),
                   testing::ModelPath("face_detection_short_range.tflite")};
  config.neighbours = false;
  config.input_shapes = {{"x", Shape{1, 3, 48, 192}}};
  auto fine = SampleKernels(config);
  ASSERT_TRUE(fine.ok()) << fine.status().message();
  config.input_shapes["inptu"] = Shape{1, 3, 48, 192};
  auto typo = SampleKernels(config);
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.status().message(), "--input-shape names 'inptu', but no model has an input of that name");
}

// --- transformer encoders ------------------------------------------------------------------

TEST(Transformers, EncoderShapesStayInTheirRangesWithTheirRelations) {
  SplitMix64 rng(5);
  int multiple_of_64 = 0, with_class_token = 0;
  std::set<std::int64_t> heads_seen;
  const int draws = 2000;
  for (int i = 0; i < draws; ++i) {
    const EncoderShape s = DrawEncoderShape(rng);
    ASSERT_GE(s.seq, 16);
    ASSERT_LE(s.seq, 1024);
    ASSERT_GE(s.hidden, 64);
    ASSERT_LE(s.hidden, 1024);
    ASSERT_EQ(s.hidden % 32, 0) << s.hidden;
    ASSERT_GE(s.heads, 1);
    ASSERT_LE(s.heads, 16);
    ASSERT_EQ(s.head_dim() * s.heads, s.hidden) << s.hidden << " / " << s.heads;
    ASSERT_GE(s.head_dim(), 16);
    ASSERT_EQ(s.mlp(), 4 * s.hidden);
    multiple_of_64 += s.hidden % 64 == 0;
    with_class_token += s.seq % 16 == 1;
    heads_seen.insert(s.heads);
  }
  EXPECT_GT(multiple_of_64, draws * 3 / 4);  // three in four drawn so, and half of the others land on one
  EXPECT_GT(with_class_token, draws / 5);
  EXPECT_GE(heads_seen.size(), 8u);
}

TEST(Transformers, ADrawnShapeIsAOneLayerEncoderModelOfIt) {
  SplitMix64 rng(1);
  const encoders::EncoderConfig vit = EncoderModelOf({197, 192, 3}, rng);  // ViT-tiny's layer at 224×224
  EXPECT_EQ(vit.name, "vit");
  EXPECT_EQ(vit.layers, 1);
  EXPECT_EQ(vit.hidden, 192);
  EXPECT_EQ(vit.heads, 3);
  EXPECT_EQ(vit.image / vit.patch, 14);  // 14² patches and the class token: 197
  EXPECT_EQ(vit.image % vit.patch, 0);
  const encoders::EncoderConfig bert = EncoderModelOf({128, 256, 4}, rng);
  EXPECT_EQ(bert.name, "bert");
  EXPECT_EQ(bert.sequence, 128);
  EXPECT_EQ(bert.vocab, 16384);  // 4M values of 256
  EXPECT_EQ(EncoderModelOf({100, 1024, 16}, rng).vocab, 4096);
  EXPECT_EQ(EncoderModelOf({100, 64, 4}, rng).vocab, 30522);  // BERT's at most
}

template <class P>
std::string KeyOf(OpKind op, const P& params) {
  Kernel k;
  k.op = op;
  WriteParams(params, k);
  return k.Key();
}

// The kernels an imported encoder is grouped into: a BERT layer of 128 tokens, 256 wide, 4 heads,
// as prediction groups it (default rules, no layout change).
TEST(Transformers, AnEncoderModelsKernelsAreItsLayersKernels) {
  encoders::EncoderConfig c;
  c.name = "bert";
  c.layers = 1, c.hidden = 256, c.heads = 4, c.sequence = 128, c.vocab = 1000, c.opset = 13;
  const std::string bytes = encoders::ModelBytes(c);
  auto graph = ImportModelBytes({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()}, ModelFormat::kOnnx, {});
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  auto grouping = GroupIntoKernels(*graph, FusionRules::Default());
  ASSERT_TRUE(grouping.ok()) << grouping.status().message();
  std::multiset<std::string> keys;
  for (const KernelGroup& g : grouping->kernels) keys.insert(g.kernel.Key());
  // Attention's scores and context, four heads of [128, 64]; softmax over [4, 128, 128].
  EXPECT_EQ(keys.count(KeyOf(OpKind::kMatMul, MatMulKernelParams{4, 128, 64, 128})), 1u);
  EXPECT_EQ(keys.count(KeyOf(OpKind::kMatMul, MatMulKernelParams{4, 128, 128, 64})), 1u);
  EXPECT_EQ(keys.count(KeyOf(OpKind::kSoftmax, NhwcParams{1, 4, 128, 128})), 1u);
  // Q, K, V and the output projection; the MLP up and down.
  EXPECT_EQ(keys.count(KeyOf(OpKind::kFullyConnected, FullyConnectedKernelParams{128, 256, 256, 0})), 4u);
  EXPECT_EQ(keys.count(KeyOf(OpKind::kFullyConnected, FullyConnectedKernelParams{128, 256, 1024, 0})), 1u);
  EXPECT_EQ(keys.count(KeyOf(OpKind::kFullyConnected, FullyConnectedKernelParams{128, 1024, 256, 0})), 1u);
  // The embeddings' norm and the layer's two, each over 128 rows of 256, found in the decomposed
  // form at plan time only: as imported (no layout backend) they are still their elementwise chain.
  std::set<std::string> kinds;
  for (const KernelGroup& g : grouping->kernels) kinds.insert(g.kernel.Kind());
  for (const char* kind : {"add", "transpose", "reshape", "gather", "matmul", "softmax", "fully_connected"})
    EXPECT_TRUE(kinds.count(kind)) << kind;
}

TEST(Transformers, TheStrategyDrawsDistinctKernelsOfTheKindsAskedFor) {
  SamplerConfig config;
  config.strategy = "transformers";
  config.kinds = {"matmul", "softmax"};
  config.seed = 3;
  config.max_kernels = 45;  // one layer's three a model: 15 models
  auto sample = SampleKernels(config);
  ASSERT_TRUE(sample.ok()) << sample.status().message();
  ASSERT_EQ(sample->kernels.size(), 45u);
  std::set<std::string> keys;
  std::set<std::int64_t> lengths;
  for (const Kernel& k : sample->kernels) {
    ASSERT_TRUE(k.op == OpKind::kMatMul || k.op == OpKind::kSoftmax) << k.Key();
    keys.insert(k.Key());
    // Every one builds and is what it says (the graph's kernel read back is itself).
    ASSERT_TRUE(BuildKernelGraph(k).ok()) << k.Key();
    if (k.op == OpKind::kSoftmax) {
      const NhwcParams p = ReadParams<NhwcParams>(k);
      EXPECT_EQ(p.w, p.c) << k.Key();  // [heads, seq, seq]
      lengths.insert(p.c);
    } else {
      const MatMulKernelParams p = ReadParams<MatMulKernelParams>(k);
      EXPECT_TRUE(p.m == p.n || p.m == p.k) << k.Key();  // scores: seq × seq; context: over seq
      EXPECT_LE(p.b, 16) << k.Key();
    }
  }
  EXPECT_EQ(keys.size(), sample->kernels.size());
  EXPECT_GT(lengths.size(), 10u);
  EXPECT_GE(*lengths.begin(), 16);
  EXPECT_LE(*lengths.rbegin(), 1025);
  // Deterministic under its seed, another with another seed.
  auto again = SampleKernels(config);
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->kernels.size(), sample->kernels.size());
  for (std::size_t i = 0; i < sample->kernels.size(); ++i) ASSERT_EQ(again->kernels[i].Key(), sample->kernels[i].Key());
  config.seed = 4;
  auto other = SampleKernels(config);
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->kernels.front().Key(), sample->kernels.front().Key());
  config.max_kernels = 0;
  EXPECT_FALSE(SampleKernels(config).ok());
}

}  // namespace
}  // namespace latte
