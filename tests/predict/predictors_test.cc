#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <random>

#include "ir/kernel_graph.h"
#include "predict/features.h"
#include "predict/pack.h"
#include "predict/predictors.h"

namespace latte {
namespace {

Kernel Conv(std::int64_t ic, std::int64_t ih, std::int64_t oc = 16, std::int64_t k = 3, std::int64_t stride = 1) {
  Kernel kernel;
  kernel.op = OpKind::kConv2D;
  kernel.params = {{"n", 1},  {"ih", ih},     {"iw", ih},     {"ic", ic}, {"oc", oc}, {"kh", k},
                   {"kw", k}, {"sh", stride}, {"sw", stride}, {"g", 1},   {"dh", 1},  {"dw", 1}};
  return kernel;
}

TrainingSample Sample(const Kernel& kernel, double ms, double spread = 0) { return {kernel, 1, ms, spread}; }

TEST(FeaturesTest, ConvCostFromParams) {
  KernelCost cost = ComputeKernelCost(Conv(8, 10, 4, 3, 1));  // no padding: 8x8 output
  EXPECT_EQ(cost.oh, 8);
  EXPECT_EQ(cost.ow, 8);
  EXPECT_EQ(cost.macs, 8 * 8 * 4 * 3 * 3 * 8);
  EXPECT_EQ(cost.out_bytes, 8 * 8 * 4 * 4);
  EXPECT_EQ(cost.weight_bytes, 3 * 3 * 8 * 4 * 4);
  EXPECT_EQ(cost.in_bytes, 10 * 10 * 8 * 4);
  Kernel depthwise = Conv(8, 10, 8);
  depthwise.op = OpKind::kDepthwiseConv2D;
  depthwise.params["g"] = 8;
  EXPECT_EQ(ComputeKernelCost(depthwise).macs, 8 * 8 * 8 * 3 * 3);
}

Kernel Binary(OpKind op, std::array<std::int64_t, 4> a, std::array<std::int64_t, 4> b) {
  Kernel kernel;
  kernel.op = op;
  for (int i = 0; i < 4; ++i) {
    kernel.params[fmt::format("a{}", i)] = a[i];
    kernel.params[fmt::format("b{}", i)] = b[i];
  }
  return kernel;
}

// A broadcast's inner loops: one per stretch of the innermost dims where both operands agree or
// one of them stays put.
TEST(FeaturesTest, RunsOfABroadcastingElementwiseOp) {
  EXPECT_EQ(ComputeKernelCost(Binary(OpKind::kMul, {1, 1, 1, 16}, {1, 20, 30, 16})).runs, 20 * 30);
  EXPECT_EQ(ComputeKernelCost(Binary(OpKind::kMul, {1, 20, 30, 16}, {1, 1, 1, 16})).runs, 20 * 30);
  // A pixel's one value over its 16 channels: one stretch a pixel.
  EXPECT_EQ(ComputeKernelCost(Binary(OpKind::kMul, {1, 20, 30, 1}, {1, 20, 30, 16})).runs, 20 * 30);
  // NCHW, a channel's scale over its 20×30 plane: one stretch a channel, either side.
  EXPECT_EQ(ComputeKernelCost(Binary(OpKind::kMul, {1, 16, 20, 30}, {1, 16, 1, 1})).runs, 16);
  EXPECT_EQ(ComputeKernelCost(Binary(OpKind::kMul, {1, 16, 1, 1}, {1, 16, 20, 30})).runs, 16);
  // The constant operand stops where it varies again: [1,1,20,1] against [1,16,20,30] walks
  // 30-wide rows, 16·20 of them.
  EXPECT_EQ(ComputeKernelCost(Binary(OpKind::kAdd, {1, 1, 20, 1}, {1, 16, 20, 30})).runs, 16 * 20);
  EXPECT_EQ(ComputeKernelCost(Binary(OpKind::kAdd, {1, 1, 30, 16}, {1, 20, 30, 16})).runs, 20);
  EXPECT_EQ(ComputeKernelCost(Binary(OpKind::kAdd, {1, 20, 30, 16}, {1, 20, 30, 16})).runs, 1);  // equal shapes
  EXPECT_EQ(ComputeKernelCost(Binary(OpKind::kAdd, {1, 1, 1, 1}, {1, 20, 30, 16})).runs, 1);     // a scalar
  EXPECT_EQ(ComputeKernelCost(Conv(8, 10)).runs, 1);
}

TEST(FeaturesTest, SchemaOrderAndMissingParamsReadZero) {
  Kernel a = Conv(8, 10), b = Conv(8, 10);
  b.params["bias"] = 1;
  FeatureSchema schema = FeatureSchema::FromKernels({&a, &b});
  ASSERT_EQ(schema.param_names.front(), "bias");
  std::vector<float> features;
  ComputeFeatures(schema, a, 2, features);
  ASSERT_EQ(features.size(), schema.Size());
  EXPECT_EQ(features[0], 0.0f);  // a has no bias
  std::vector<std::string> names = schema.Names();
  std::size_t threads = std::find(names.begin(), names.end(), "threads") - names.begin();
  EXPECT_EQ(features[threads], 2.0f);
}

// The channels a kernel's SIMD loops run over, and the idle share of their last vector.
TEST(FeaturesTest, LaneTailsOfTheVectorizedChannels) {
  EXPECT_EQ(LaneTail(48, 16), 0);
  EXPECT_EQ(LaneTail(48, 32), 0.25);  // 48 of 64 lanes busy in the second vector
  EXPECT_EQ(LaneTail(45, 16), 3.0 / 48);
  EXPECT_EQ(LaneTail(1, 4), 0.75);
  EXPECT_EQ(LaneTail(0, 16), 0);
  EXPECT_EQ(VectorChannels(Conv(8, 10, 48)), 48);
  Kernel grouped = Conv(64, 10, 64);
  grouped.params["g"] = 4;
  EXPECT_EQ(VectorChannels(grouped), 16);  // per group
  Kernel depthwise = Conv(96, 10, 96);
  depthwise.op = OpKind::kDepthwiseConv2D;
  depthwise.params["g"] = 96;
  EXPECT_EQ(VectorChannels(depthwise), 96);
  Kernel fc;
  fc.op = OpKind::kFullyConnected;
  fc.params = {{"m", 1}, {"k", 256}, {"n", 1001}};
  EXPECT_EQ(VectorChannels(fc), 1001);
  Kernel add;
  add.op = OpKind::kAdd;
  add.params = {{"a0", 1}, {"a1", 7}, {"a2", 7}, {"a3", 1}, {"b0", 1}, {"b1", 7}, {"b2", 7}, {"b3", 40}};
  EXPECT_EQ(VectorChannels(add), 40);  // broadcast: the wider operand
  Kernel relu;
  relu.op = OpKind::kRelu;
  relu.params = {{"n", 1}, {"h", 7}, {"w", 7}, {"c", 24}};
  EXPECT_EQ(VectorChannels(relu), 24);

  // Version 2 appends the four tails to version 1's derived features.
  FeatureSchema v1{{"oc"}, 1}, v2{{"oc"}, 2};
  ASSERT_EQ(DerivedFeatureNames(1).size() + 4, DerivedFeatureNames(2).size());
  EXPECT_EQ(v2.Names().back(), "lane_tail_32");
  std::vector<float> f1, f2;
  ComputeFeatures(v1, Conv(8, 10, 45), 1, f1);
  ComputeFeatures(v2, Conv(8, 10, 45), 1, f2);
  ASSERT_EQ(f1.size(), v1.Size());
  ASSERT_EQ(f2.size(), f1.size() + 4);
  EXPECT_TRUE(std::equal(f1.begin(), f1.end(), f2.begin()));
  EXPECT_FLOAT_EQ(f2[f1.size()], 3.0f / 48);      // 4 lanes: 45 of 48
  EXPECT_FLOAT_EQ(f2[f1.size() + 3], 19.0f / 64);  // 32 lanes: 45 of 64
}

TEST(FeaturesTest, TransformerKernelsAsMatrixProducts) {
  Kernel scores;  // ViT-tiny's attention scores: 3 heads of [197, 64] × [64, 197]
  scores.op = OpKind::kMatMul;
  scores.params = {{"b", 3}, {"m", 197}, {"k", 64}, {"n", 197}};
  GemmShape g = GemmShapeOf(scores);
  EXPECT_EQ(g.batches, 3);
  EXPECT_EQ(g.m, 197);
  EXPECT_EQ(g.k, 64);
  EXPECT_EQ(g.n, 197);
  EXPECT_EQ(g.unit_bytes, (197.0 * 64 + 64 * 197 + 197 * 197) * 4);
  EXPECT_EQ(ComputeKernelCost(scores).macs, 3.0 * 197 * 64 * 197);
  Kernel softmax;
  softmax.op = OpKind::kSoftmax;
  softmax.params = {{"n", 1}, {"h", 3}, {"w", 197}, {"c", 197}};
  g = GemmShapeOf(softmax);
  EXPECT_EQ(g.m, 3 * 197);
  EXPECT_EQ(g.k, 197);  // each row reduces over its own length
  EXPECT_EQ(g.unit_bytes, 2 * 197 * 4);
  Kernel gelu = softmax;
  gelu.op = OpKind::kGelu;
  gelu.params = {{"n", 1}, {"h", 1}, {"w", 197}, {"c", 768}};
  g = GemmShapeOf(gelu);
  EXPECT_EQ(g.m, 197);
  EXPECT_EQ(g.k, 1);
  EXPECT_EQ(g.n, 768);
  Kernel pad;
  pad.op = OpKind::kPad;
  pad.params = {{"n", 1}, {"h", 7}, {"w", 7}, {"c", 8}};
  EXPECT_EQ(GemmShapeOf(pad).m, 0);  // not a row-wise kernel

  // Version 3 appends six to version 2: rows, reduction, the 16-float tails of m, k, n, the unit.
  FeatureSchema v2{{"b", "k", "m", "n"}, 2}, v3{{"b", "k", "m", "n"}, 3};
  ASSERT_EQ(DerivedFeatureNames(2).size() + 6, DerivedFeatureNames(3).size());
  EXPECT_EQ(v3.Names().back(), "log_unit_bytes");
  std::vector<float> f2, f3;
  ComputeFeatures(v2, scores, 1, f2);
  ComputeFeatures(v3, scores, 1, f3);
  ASSERT_EQ(f3.size(), v3.Size());
  ASSERT_EQ(f3.size(), f2.size() + 6);
  EXPECT_TRUE(std::equal(f2.begin(), f2.end(), f3.begin()));
  const std::size_t at = f2.size();
  EXPECT_FLOAT_EQ(f3[at], static_cast<float>(LogScale(3 * 197)));
  EXPECT_FLOAT_EQ(f3[at + 1], static_cast<float>(LogScale(64)));
  EXPECT_FLOAT_EQ(f3[at + 2], 11.0f / 208);  // m = 197 of 208
  EXPECT_FLOAT_EQ(f3[at + 3], 0.0f);         // k = 64: whole vectors
  EXPECT_FLOAT_EQ(f3[at + 4], 11.0f / 208);
  // A sequence of 192 tokens fills its vectors: alignment, not only work, tells it from 197.
  Kernel aligned = scores;
  aligned.params["m"] = aligned.params["n"] = 192;
  std::vector<float> fa;
  ComputeFeatures(v3, aligned, 1, fa);
  EXPECT_FLOAT_EQ(fa[at + 2], 0.0f);
  EXPECT_FLOAT_EQ(fa[at + 4], 0.0f);
}

TEST(TablePredictorTest, HitReturnsStoredValueAndMissIsNotFound) {
  TablePredictor table;
  std::vector<TrainingSample> samples = {Sample(Conv(8, 16), 0.5, 0.01), Sample(Conv(16, 16), 0.9, 0.02),
                                         Sample(Conv(16, 16), 1.1, 0.03), Sample(Conv(16, 16), 1.0, 0.04)};
  ASSERT_TRUE(table.Fit(samples).ok());
  Expected<Prediction> hit = table.Predict(Conv(8, 16), 1);
  ASSERT_TRUE(hit.ok());
  EXPECT_EQ(hit->ms, 0.5);
  EXPECT_EQ(hit->spread_ms, 0.01);
  EXPECT_EQ(hit->source, PredictionSource::kTableHit);
  Expected<Prediction> median = table.Predict(Conv(16, 16), 1);
  ASSERT_TRUE(median.ok());
  EXPECT_EQ(median->ms, 1.0);  // the median of three measurements
  Expected<Prediction> miss = table.Predict(Conv(32, 16), 1);
  ASSERT_FALSE(miss.ok());
  EXPECT_EQ(miss.status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(table.Predict(Conv(8, 16), 2).ok());  // another thread count is another entry
}

// A grid over (ic, ih) with an arbitrary (not power-law) latency at each point.
std::vector<TrainingSample> Grid(bool skip_one = false) {
  std::vector<TrainingSample> samples;
  for (std::int64_t ic : {8, 16, 36, 64})
    for (std::int64_t ih : {8, 16, 32}) {
      if (skip_one && ic == 16 && ih == 16) continue;
      double ms = 0.1 + 0.001 * double(ic * ih) + 0.05 * std::sin(double(ic + ih));
      samples.push_back(Sample(Conv(ic, ih), ms));
    }
  return samples;
}

TEST(InterpPredictorTest, ExactOnGridPoints) {
  InterpPredictor interp;
  std::vector<TrainingSample> grid = Grid();
  ASSERT_TRUE(interp.Fit(grid).ok());
  for (const TrainingSample& s : grid) {
    Expected<Prediction> p = interp.Predict(s.kernel, 1);
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_NEAR(p->ms, s.p50_ms, 1e-12 * s.p50_ms) << s.kernel.Key();
    EXPECT_FALSE(p->outside_training_range);
    EXPECT_EQ(p->source, PredictionSource::kInterpolation);
  }
}

TEST(InterpPredictorTest, LinearInLogSpaceOfLatencyPerWorkBetweenGridPoints) {
  InterpPredictor interp;
  std::vector<TrainingSample> grid = Grid();
  ASSERT_TRUE(interp.Fit(grid).ok());
  // What is interpolated: log(latency / WorkScaleMs), the kernel's efficiency.
  auto eff = [&](std::int64_t ic, std::int64_t ih) {
    for (const TrainingSample& s : grid)
      if (s.kernel.Param("ic") == ic && s.kernel.Param("ih") == ih) return std::log(s.p50_ms / WorkScaleMs(s.kernel));
    return std::nan("");
  };
  // 24 is the midpoint of 16 and 36 in log space: the mean of the two neighbours' efficiencies.
  Expected<Prediction> p = interp.Predict(Conv(24, 8), 1);
  ASSERT_TRUE(p.ok());
  EXPECT_NEAR(p->ms, std::exp(0.5 * eff(16, 8) + 0.5 * eff(36, 8)) * WorkScaleMs(Conv(24, 8)), 1e-12);
  // Bilinear in (log ic, log ih): ic 24 (t = 1/2), ih 16 on the grid, then both between.
  Expected<Prediction> q = interp.Predict(Conv(24, 16), 1);
  ASSERT_TRUE(q.ok());
  EXPECT_NEAR(q->ms, std::exp(0.5 * eff(16, 16) + 0.5 * eff(36, 16)) * WorkScaleMs(Conv(24, 16)), 1e-12);
  double t_ih = (std::log(11.0) - std::log(8.0)) / (std::log(16.0) - std::log(8.0));
  double lo = 0.5 * eff(16, 8) + 0.5 * eff(36, 8);
  double hi = 0.5 * eff(16, 16) + 0.5 * eff(36, 16);
  Expected<Prediction> r = interp.Predict(Conv(24, 11), 1);
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->ms, std::exp((1 - t_ih) * lo + t_ih * hi) * WorkScaleMs(Conv(24, 11)), 1e-12);
}

TEST(InterpPredictorTest, MissingPointEstimatedAlongAnAxisAndOutsideFlaggedAndScaledByWork) {
  // Efficiency a power law, so linear in log-log space: an estimate along either axis is exact.
  auto ms = [](std::int64_t ic, std::int64_t ih, const Kernel& k) { return WorkScaleMs(k) * 1e-3 * double(ic) * double(ih * ih); };
  std::vector<TrainingSample> samples;
  for (std::int64_t ic : {8, 16, 32})
    for (std::int64_t ih : {8, 16, 32})
      if (!(ic == 16 && ih == 16)) samples.push_back(Sample(Conv(ic, ih), ms(ic, ih, Conv(ic, ih))));
  InterpPredictor interp;
  ASSERT_TRUE(interp.Fit(samples).ok());
  Expected<Prediction> p = interp.Predict(Conv(16, 16), 1);
  ASSERT_TRUE(p.ok());
  EXPECT_NEAR(p->ms, ms(16, 16, Conv(16, 16)), 1e-9);
  EXPECT_FALSE(p->outside_training_range);
  // Outside: ic clamped to 32, that neighbour's efficiency times this kernel's own work (twice
  // the input channels: about twice the latency, not the neighbour's latency copied).
  Expected<Prediction> outside = interp.Predict(Conv(64, 8), 1);
  ASSERT_TRUE(outside.ok());
  EXPECT_TRUE(outside->outside_training_range);
  EXPECT_NEAR(outside->ms, ms(32, 8, Conv(64, 8)), 1e-9);
  EXPECT_GT(outside->ms, 1.5 * ms(32, 8, Conv(32, 8)));
  EXPECT_TRUE(interp.Predict(Conv(16, 16, 32), 1)->outside_training_range);  // oc never varied
}

TEST(InterpPredictorTest, PacksOfTheLatencyTargetStillReadAndInterpolateLatency) {
  InterpPredictor interp;
  std::vector<TrainingSample> grid = Grid();
  ASSERT_TRUE(interp.Fit(grid).ok());
  nlohmann::json old = interp.ToJson();
  EXPECT_EQ(old["target"], "log_ms_per_work");
  old.erase("target");  // as packs were written before the target was recorded
  old.erase("kind");
  InterpPredictor loaded;
  ASSERT_TRUE(loaded.FromJson(old).ok());
  for (const TrainingSample& s : grid) EXPECT_NEAR(loaded.Predict(s.kernel, 1)->ms, s.p50_ms, 1e-12 * s.p50_ms);
  double a = 0, b = 0;
  for (const TrainingSample& s : grid) {
    if (s.kernel.Param("ih") != 8) continue;
    if (s.kernel.Param("ic") == 16) a = s.p50_ms;
    if (s.kernel.Param("ic") == 36) b = s.p50_ms;
  }
  EXPECT_NEAR(loaded.Predict(Conv(24, 8), 1)->ms, std::sqrt(a * b), 1e-12);
  nlohmann::json unknown = interp.ToJson();
  unknown["target"] = "ms";
  EXPECT_FALSE(InterpPredictor().FromJson(unknown).ok());
  nlohmann::json bad_kind = interp.ToJson();
  bad_kind["kind"] = "conv7d";
  EXPECT_FALSE(InterpPredictor().FromJson(bad_kind).ok());
}

TEST(InterpPredictorTest, JsonRoundTripKeepsPredictions) {
  InterpPredictor interp;
  ASSERT_TRUE(interp.Fit(Grid(true)).ok());
  InterpPredictor loaded;
  ASSERT_TRUE(loaded.FromJson(nlohmann::json::parse(interp.ToJson().dump())).ok());
  EXPECT_EQ(loaded.ToJson().dump(), interp.ToJson().dump());
  for (std::int64_t ic : {8, 12, 16, 50})
    for (std::int64_t ih : {8, 16, 20, 40}) EXPECT_EQ(loaded.Predict(Conv(ic, ih), 1)->ms, interp.Predict(Conv(ic, ih), 1)->ms);
  nlohmann::json broken = interp.ToJson();
  broken["points"][0][0] = 1000;
  EXPECT_FALSE(InterpPredictor().FromJson(broken).ok());
}

// Random convolutions whose latency is exactly proportional to their MACs.
std::vector<TrainingSample> MacsProportional(std::size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  auto pick = [&](std::vector<std::int64_t> values) { return values[rng() % values.size()]; };
  std::vector<TrainingSample> samples;
  for (std::size_t i = 0; i < count; ++i) {
    Kernel k = Conv(pick({8, 16, 24, 32, 48, 64, 96, 128}), pick({7, 14, 28, 56, 112}), pick({8, 16, 32, 64, 128, 256}),
                    pick({1, 3, 5}), pick({1, 2}));
    samples.push_back(Sample(k, 1e-6 * ComputeKernelCost(k).macs));
  }
  return samples;
}

// Boosted trees of `rounds` rounds fitted on `samples` (a failed fit fails the test).
TreePredictor FittedGbdt(int rounds, const std::vector<TrainingSample>& samples) {
  PredictorOptions options;
  options.gbdt.trees = rounds;
  TreePredictor gbdt(TreePredictor::Mode::kBoosted, options);
  const Status fitted = gbdt.Fit(samples);
  EXPECT_TRUE(fitted.ok()) << fitted.message();
  return gbdt;
}

double Rmspe(const KernelPredictor& predictor, const std::vector<TrainingSample>& test) {
  std::vector<double> predicted, measured;
  for (const TrainingSample& s : test) {
    predicted.push_back(predictor.Predict(s.kernel, s.threads)->ms);
    measured.push_back(s.p50_ms);
  }
  return ComputeAccuracy(predicted, measured).rmspe_pct;
}

TEST(TreePredictorTest, BoostedTreesFitLatencyProportionalToMacs) {
  TreePredictor gbdt = FittedGbdt(300, MacsProportional(3000, 1));
  std::vector<TrainingSample> test = MacsProportional(300, 2);
  EXPECT_LT(Rmspe(gbdt, test), 3.0);
  EXPECT_EQ(gbdt.Predict(test[0].kernel, 1)->source, PredictionSource::kTrees);
  // The in-process tree walk gives XGBoost's own predictions.
  Expected<std::vector<float>> reference = gbdt.PredictWithXgboost(test);
  ASSERT_TRUE(reference.ok()) << reference.status().message();
  // The in-process tree walk gives XGBoost's own predictions (of latency per work).
  for (std::size_t i = 0; i < test.size(); ++i)
    EXPECT_NEAR(std::log(gbdt.Predict(test[i].kernel, 1)->ms / WorkScaleMs(test[i].kernel)), (*reference)[i], 1e-4);
}

TEST(TreePredictorTest, BeyondTheTrainingRangeLatencyFollowsTheWork) {
  // Trained on inputs up to 56x56; asked about 224x224 (16 times the MACs of 56x56): trees hold
  // the efficiency they learned, so the latency grows with the work instead of staying flat.
  std::vector<TrainingSample> samples = MacsProportional(3000, 1);
  std::erase_if(samples, [](const TrainingSample& s) { return s.kernel.Param("ih") > 56; });
  TreePredictor gbdt = FittedGbdt(300, samples);
  for (std::int64_t ic : {16, 64}) {
    const Kernel big = Conv(ic, 224, 64, 3, 1);
    const double want = 1e-6 * ComputeKernelCost(big).macs;
    EXPECT_NEAR(gbdt.Predict(big, 1)->ms, want, 0.25 * want) << big.Key();
  }
}

// XNNPACK, oneDNN and ONNX Runtime's NCHWc convs compute output channels 16 at a time with
// AVX-512: a conv to 8 channels does the work of one to 16.
TEST(FeaturesTest, WorkCountsWholeTilesOfOutputChannels) {
  EXPECT_EQ(ChannelTileFactor(Conv(32, 28, 8), 16), 2.0);
  EXPECT_EQ(ChannelTileFactor(Conv(32, 28, 24), 16), 32.0 / 24);
  EXPECT_EQ(ChannelTileFactor(Conv(32, 28, 48), 16), 1.0);
  EXPECT_EQ(ChannelTileFactor(Conv(32, 28, 8), 1), 1.0);  // a backend that declares no tile
  Kernel grouped = Conv(64, 28, 32);
  grouped.params["g"] = 4;  // 8 outputs a group, each group its own tile
  EXPECT_EQ(ChannelTileFactor(grouped, 16), 2.0);
  Kernel depthwise = Conv(8, 128, 8);
  depthwise.op = OpKind::kDepthwiseConv2D;
  depthwise.params["g"] = 8;
  EXPECT_EQ(ChannelTileFactor(depthwise, 16), 2.0);
  Kernel fc;
  fc.op = OpKind::kFullyConnected;
  fc.params = {{"m", 1}, {"k", 256}, {"n", 1001}};
  EXPECT_EQ(ChannelTileFactor(fc, 16), 1008.0 / 1001);
  Kernel relu;  // an elementwise op walks its tensor flat: no tile
  relu.op = OpKind::kRelu;
  relu.params = {{"n", 1}, {"h", 7}, {"w", 7}, {"c", 8}};
  EXPECT_EQ(ChannelTileFactor(relu, 16), 1.0);

  // A compute-bound conv to 8 channels weighs what the same conv to 16 does.
  EXPECT_NEAR(WorkScaleMs(Conv(64, 56, 8), 16), WorkScaleMs(Conv(64, 56, 16), 16), 1e-12);
  EXPECT_LT(WorkScaleMs(Conv(64, 56, 8)), 0.6 * WorkScaleMs(Conv(64, 56, 16)));
  EXPECT_EQ(WorkScaleMs(ComputeKernelCost(Conv(64, 56, 8)), 2.0), WorkScaleMs(Conv(64, 56, 8), 16));
}

// Trained on convs whose time is their work in whole tiles of 16 channels, where every output
// count is a multiple of 16, trees fitted in tiles predict a conv to 8 channels at the time of one
// to 16; fitted as is, at half of it.
TEST(TreePredictorTest, FittedInChannelTilesANarrowConvCostsAWholeTile) {
  std::mt19937 rng(3);
  auto pick = [&](std::vector<std::int64_t> values) { return values[rng() % values.size()]; };
  std::vector<TrainingSample> samples;
  for (int i = 0; i < 1500; ++i) {
    const Kernel k = Conv(pick({16, 32, 64, 96}), pick({14, 28, 56, 112}), pick({16, 32, 48, 64, 128}), pick({1, 3}));
    samples.push_back(Sample(k, 1e-6 * ComputeKernelCost(k).macs));
  }
  PredictorOptions options;
  options.gbdt.trees = 200;
  options.channel_tile = 16;
  TreePredictor tiled(TreePredictor::Mode::kBoosted, options);
  ASSERT_TRUE(tiled.Fit(samples).ok());
  TreePredictor plain = FittedGbdt(200, samples);
  const Kernel narrow = Conv(64, 56, 8), wide = Conv(64, 56, 16);
  const double want = 1e-6 * ComputeKernelCost(wide).macs;
  EXPECT_NEAR(tiled.Predict(narrow, 1)->ms, want, 0.1 * want);
  EXPECT_NEAR(plain.Predict(narrow, 1)->ms, want / 2, 0.1 * want / 2);

  // The pack keeps the tile its trees were fitted in; one beyond 1..64 is refused by name.
  nlohmann::json json = tiled.ToJson();
  EXPECT_EQ(json["channel_tile"], 16);
  TreePredictor loaded(TreePredictor::Mode::kBoosted, {});
  ASSERT_TRUE(loaded.FromJson(json).ok());
  EXPECT_EQ(loaded.Predict(narrow, 1)->ms, tiled.Predict(narrow, 1)->ms);
  json.erase("channel_tile");  // a pack written before tiles: counted as is
  ASSERT_TRUE(loaded.FromJson(json).ok());
  EXPECT_NEAR(loaded.Predict(narrow, 1)->ms, tiled.Predict(narrow, 1)->ms / 2, 0.2 * want);
  for (int bad : {0, 65}) {
    json["channel_tile"] = bad;
    Status refused = TreePredictor(TreePredictor::Mode::kBoosted, {}).FromJson(json);
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.message().find("channel_tile"), std::string::npos) << refused.message();
  }
}

// An elementwise kernel's schema holds its channels and its broadcast, not its map's rows and
// columns: calibration's maps are square, so a tree that may split on a width ties it to the map's
// size and reads PP-OCR's 3×96 map as a 96×96 one. Here an add costs twice as much per element
// once its tensors outgrow 28×28×32 (a cache's edge); fitted on square maps of 32 channels, the
// trees price a 3×96 map (9,216 elements, a third of 28×28) at the cache's rate.
TEST(TreePredictorTest, AnElementwiseKernelIsPricedByItsElementsNotItsMapsWidth) {
  auto add = [](std::int64_t h, std::int64_t w, std::int64_t c) {
    return Binary(OpKind::kAdd, {1, h, w, c}, {1, h, w, c});
  };
  auto ms = [](const Kernel& k) {
    const double elements = static_cast<double>(k.Param("a1") * k.Param("a2") * k.Param("a3"));
    return 1e-6 * elements * (elements > 28 * 28 * 32 ? 2.0 : 1.0);
  };
  const Kernel a = add(14, 14, 32), relu = [] {
    Kernel k;
    k.op = OpKind::kRelu;
    k.params = {{"n", 1}, {"h", 14}, {"w", 14}, {"c", 32}};
    return k;
  }();
  const std::vector<std::string> names = FeatureSchema::FromKernels({&a, &relu}).param_names;
  for (const char* map : {"a1", "a2", "b1", "b2", "h", "w"})
    EXPECT_EQ(std::count(names.begin(), names.end(), map), 0) << map;
  for (const char* kept : {"a0", "a3", "b3", "c", "n"}) EXPECT_EQ(std::count(names.begin(), names.end(), kept), 1) << kept;
  const Kernel conv = Conv(8, 10);  // beside a conv, the map stays: its rows and columns shape its tiles
  const std::vector<std::string> mixed = FeatureSchema::FromKernels({&a, &conv}).param_names;
  EXPECT_EQ(std::count(mixed.begin(), mixed.end(), "a1"), 1);

  std::vector<TrainingSample> samples;
  for (int repeat = 0; repeat < 20; ++repeat)
    for (std::int64_t side : {7, 14, 28, 56, 112}) {
      const Kernel k = add(side, side, 32);
      samples.push_back(Sample(k, ms(k)));
    }
  TreePredictor gbdt = FittedGbdt(100, samples);
  for (const Kernel& k : {add(3, 96, 32), add(96, 3, 32), add(64, 64, 32)})
    EXPECT_NEAR(gbdt.Predict(k, 1)->ms, ms(k), 0.1 * ms(k)) << k.Key();
}

// Interpolation and the roofline count work in the same tiles, and keep theirs through JSON.
TEST(InterpPredictorTest, AndRooflineCountWorkInTheirChannelTiles) {
  PredictorOptions options;
  options.channel_tile = 16;
  options.peak_gflops = 100;
  options.bandwidth_gbs = 1e9;  // compute bound everywhere
  std::vector<TrainingSample> samples;
  for (std::int64_t oc : {16, 32, 64})
    for (std::int64_t ih : {14, 28, 56}) {
      const Kernel k = Conv(32, ih, oc);
      samples.push_back(Sample(k, 1e-6 * ComputeKernelCost(k).macs));
    }
  const Kernel narrow = Conv(32, 28, 8);
  const double want = 1e-6 * ComputeKernelCost(Conv(32, 28, 16)).macs;
  for (const char* name : {"interp", "roofline"}) {
    Expected<std::unique_ptr<KernelPredictor>> p = MakePredictor(name, options);
    ASSERT_TRUE(p.ok());
    ASSERT_TRUE((*p)->Fit(samples).ok()) << name;
    EXPECT_NEAR((*p)->Predict(narrow, 1)->ms, want, 0.1 * want) << name;
    Expected<std::unique_ptr<KernelPredictor>> loaded = MakePredictor(name, {});
    ASSERT_TRUE(loaded.ok());
    ASSERT_TRUE((*loaded)->FromJson((*p)->ToJson()).ok()) << name;
    EXPECT_NEAR((*loaded)->Predict(narrow, 1)->ms, (*p)->Predict(narrow, 1)->ms, 1e-9) << name;
  }
}

TEST(TreePredictorTest, PacksOfTheLatencyTargetStillRead) {
  TreePredictor gbdt = FittedGbdt(50, MacsProportional(500, 1));
  nlohmann::json old = gbdt.ToJson();
  EXPECT_EQ(old["target"], "log_ms_per_work");
  old.erase("target");  // read as log(ms): the same trees now predict latency itself
  TreePredictor loaded(TreePredictor::Mode::kBoosted, {});
  ASSERT_TRUE(loaded.FromJson(old).ok());
  const Kernel k = Conv(32, 28, 64);
  EXPECT_NEAR(loaded.Predict(k, 1)->ms * WorkScaleMs(k), gbdt.Predict(k, 1)->ms, 1e-9 * gbdt.Predict(k, 1)->ms);
  old["target"] = "seconds";
  EXPECT_FALSE(TreePredictor(TreePredictor::Mode::kBoosted, {}).FromJson(old).ok());
}

// An ensemble computes the feature version it says (one written before it said: version 1),
// never this latte's newest: one split on feature 13 of a schema with one parameter is the
// first lane tail in version 2 and beyond the features of version 1.
TEST(TreePredictorTest, AnEnsembleComputesTheFeatureVersionItWasFittedWith) {
  nlohmann::json json = {{"params", {"oc"}},
                         {"feature_version", 2},
                         {"relative_spread", 0},
                         {"base_score", 0},
                         {"target", "log_ms"},
                         {"trees", {{{"left", {1, -1, -1}}, {"right", {2, -1, -1}}, {"feature", {13, 0, 0}},
                                     {"value", {0.01, 0.0, 1.0}}}}}};
  TreePredictor v2(TreePredictor::Mode::kBoosted, {});
  ASSERT_TRUE(v2.FromJson(json).ok());
  EXPECT_NEAR(v2.Predict(Conv(8, 10, 48), 1)->ms, 1.0, 1e-6);        // 48 = 12 vectors of 4: no tail
  EXPECT_NEAR(v2.Predict(Conv(8, 10, 45), 1)->ms, std::exp(1.0), 1e-5);
  EXPECT_EQ(v2.ToJson()["feature_version"], 2);
  json.erase("feature_version");
  Status v1 = TreePredictor(TreePredictor::Mode::kBoosted, {}).FromJson(json);
  EXPECT_FALSE(v1.ok());
  json["feature_version"] = kFeatureVersion + 1;
  Status newer = TreePredictor(TreePredictor::Mode::kBoosted, {}).FromJson(json);
  ASSERT_FALSE(newer.ok());
  EXPECT_NE(newer.message().find("feature_version"), std::string::npos) << newer.message();
}

TEST(TreePredictorTest, ForestFitsAndReportsSpreadAcrossTrees) {
  PredictorOptions options;
  options.forest.trees = 50;
  TreePredictor forest(TreePredictor::Mode::kForest, options);
  ASSERT_TRUE(forest.Fit(MacsProportional(3000, 1)).ok());
  EXPECT_EQ(forest.num_trees(), 50u);
  std::vector<TrainingSample> test = MacsProportional(300, 2);
  EXPECT_LT(Rmspe(forest, test), 8.0);
  // Trees agree exactly where a leaf holds one training configuration; elsewhere they differ a little.
  std::size_t spread = 0;
  for (const TrainingSample& s : test) {
    Expected<Prediction> p = forest.Predict(s.kernel, 1);
    EXPECT_EQ(p->source, PredictionSource::kForest);
    EXPECT_GE(p->spread_ms, 0);
    EXPECT_LT(p->spread_ms, 0.5 * p->ms);
    spread += p->spread_ms > 0;
  }
  EXPECT_GT(spread, 0u);
  Expected<std::vector<float>> reference = forest.PredictWithXgboost(test);
  ASSERT_TRUE(reference.ok());
  for (std::size_t i = 0; i < test.size(); ++i)
    EXPECT_NEAR(std::log(forest.Predict(test[i].kernel, 1)->ms / WorkScaleMs(test[i].kernel)), (*reference)[i], 1e-4);
}

TEST(TreePredictorTest, JsonRoundTripAndDamagedModel) {
  TreePredictor gbdt = FittedGbdt(20, MacsProportional(200, 3));
  TreePredictor loaded(TreePredictor::Mode::kBoosted, {});
  ASSERT_TRUE(loaded.FromJson(nlohmann::json::parse(gbdt.ToJson().dump())).ok());
  EXPECT_EQ(loaded.ToJson().dump(), gbdt.ToJson().dump());
  for (const TrainingSample& s : MacsProportional(50, 4)) EXPECT_EQ(loaded.Predict(s.kernel, 1)->ms, gbdt.Predict(s.kernel, 1)->ms);
  nlohmann::json damaged = gbdt.ToJson();
  damaged["trees"][0]["left"][0] = 0;  // a node that is its own child: a walk would never end
  Status status = loaded.FromJson(damaged);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("gbdt"), std::string::npos) << status.message();
  damaged = gbdt.ToJson();
  damaged["trees"][1]["value"].erase(0);
  EXPECT_FALSE(loaded.FromJson(damaged).ok());
  // A child shared by both branches (a DAG): walkable, but nested sharing in a hostile file would
  // make the tree exponentially large when laid out for the walk. Refused.
  damaged = gbdt.ToJson();
  ASSERT_GE(damaged["trees"][0]["left"][0].get<int>(), 0);  // the first tree's root is a split
  damaged["trees"][0]["right"][0] = damaged["trees"][0]["left"][0];
  status = loaded.FromJson(damaged);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("two parents"), std::string::npos) << status.message();
  damaged = gbdt.ToJson();
  damaged["trees"] = nlohmann::json::array();
  EXPECT_FALSE(loaded.FromJson(damaged).ok());
  // A loaded predictor has no XGBoost model to compare with: it says so.
  ASSERT_TRUE(loaded.FromJson(gbdt.ToJson()).ok());
  EXPECT_FALSE(loaded.PredictWithXgboost(MacsProportional(5, 4)).ok());
}

TEST(TreePredictorTest, TreesOfEveryLeafSignWalkToTheirLeavesAndTooWideTreesAreRefused) {
  TreePredictor gbdt = FittedGbdt(20, MacsProportional(200, 3));
  // One tree with a leaf at depth 1 and two at depth 2: the walk takes two steps, so it passes
  // the shallow leaf once more and must stay on it, whatever the sign of its value.
  nlohmann::json json = gbdt.ToJson();
  const int feature = json["trees"][0]["feature"][0].get<int>();
  json["trees"] = nlohmann::json::array();
  json["trees"].push_back({{"left", {1, -1, 3, -1, -1}}, {"right", {2, -1, 4, -1, -1}},
                           {"feature", {feature, 0, feature, 0, 0}},
                           {"value", {1e30, -0.5, 1e30, 0.0, 0.25}}});
  json["base_score"] = 0.0;
  json["target"] = "log_ms";
  const Kernel kernel = MacsProportional(1, 9)[0].kernel;
  TreePredictor tree(TreePredictor::Mode::kBoosted, {});
  auto predicted_log = [&](const nlohmann::json& j) {
    EXPECT_TRUE(tree.FromJson(j).ok());
    return std::log(tree.Predict(kernel, 1)->ms);
  };
  for (double leaf : {-0.5, 0.0, 2.0}) {  // root: x < 1e30 → the shallow leaf
    json["trees"][0]["value"][1] = leaf;
    EXPECT_NEAR(predicted_log(json), leaf, 1e-6);
  }
  json["trees"][0]["value"][0] = -1e30;  // root → node 2; x < 1e30 → node 3
  EXPECT_NEAR(predicted_log(json), 0.0, 1e-6);
  json["trees"][0]["value"][2] = -1e30;  // node 2 → node 4
  EXPECT_NEAR(predicted_log(json), 0.25, 1e-6);

  // A complete tree of 17 levels: a split's left child lies up to 65,535 nodes after it, beyond
  // what the walk's 16-bit steps reach. Refused with a reason rather than walked wrong.
  constexpr int kSplits = (1 << 16) - 1, kNodes = (1 << 17) - 1;
  std::vector<int> left(kNodes, -1), right(kNodes, -1), features(kNodes, 0);
  std::vector<double> values(kNodes, 0.5);
  for (int i = 0; i < kSplits; ++i) left[i] = 2 * i + 1, right[i] = 2 * i + 2, features[i] = feature;
  json["trees"][0] = {{"left", left}, {"right", right}, {"feature", features}, {"value", values}};
  Status status = tree.FromJson(json);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("too wide"), std::string::npos) << status.message();
}

// Times made by the traffic model itself, from maps of 4 to 64 (L2-sized) and two large ones
// beyond 4 MiB: the fit recovers every cost and the cache size, and a map 8× larger than any
// sample is predicted exactly (a nearest-sample method would answer with the largest sample).
TEST(TrafficPredictorTest, RecoversItsCostsAndScalesBeyondTheSamples) {
  const double fixed = 0.002, per_byte = 2e-8, per_run = 5e-6, per_far_byte = 3e-8, cache = 4.0 * 1024 * 1024;
  auto truth = [&](const Kernel& k) {
    const KernelCost c = ComputeKernelCost(k);
    return fixed + per_byte * c.Bytes() + per_run * (c.runs - 1) + per_far_byte * std::max(0.0, c.Bytes() - cache);
  };
  std::vector<TrainingSample> samples;
  for (std::int64_t hw : {4, 8, 16, 24, 32, 48, 64, 200, 256}) {
    for (std::int64_t c : {8, 16, 40}) {
      for (const Kernel& k : {Binary(OpKind::kMul, {1, hw, hw, c}, {1, hw, hw, c}), Binary(OpKind::kMul, {1, 1, 1, c}, {1, hw, hw, c}),
                              Binary(OpKind::kMul, {1, hw, hw, c}, {1, 1, 1, 1})})
        samples.push_back(Sample(k, truth(k)));
    }
  }
  TrafficPredictor traffic;
  ASSERT_TRUE(traffic.Fit(samples).ok());
  const nlohmann::json json = traffic.ToJson();
  EXPECT_NEAR(json["fixed_ms"].get<double>(), fixed, 1e-9);
  EXPECT_NEAR(json["per_byte_ms"].get<double>() / per_byte, 1, 1e-6);
  EXPECT_NEAR(json["per_run_ms"].get<double>() / per_run, 1, 1e-6);
  EXPECT_NEAR(json["per_far_byte_ms"].get<double>() / per_far_byte, 1, 1e-6);
  EXPECT_EQ(json["cache_bytes"].get<double>(), cache);
  const Kernel big = Binary(OpKind::kMul, {1, 1, 1, 16}, {1, 640, 640, 16});
  Expected<Prediction> p = traffic.Predict(big, 1);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_NEAR(p->ms / truth(big), 1, 1e-6);
  EXPECT_EQ(p->source, PredictionSource::kTraffic);
  EXPECT_TRUE(p->outside_training_range);
  EXPECT_FALSE(traffic.Predict(samples.front().kernel, 1)->outside_training_range);

  // Read back, it predicts the same.
  TrafficPredictor read;
  ASSERT_TRUE(read.FromJson(json).ok());
  EXPECT_EQ(read.Predict(big, 1)->ms, p->ms);
  nlohmann::json negative = json;
  negative["per_run_ms"] = -1;
  EXPECT_EQ(read.FromJson(negative).message(), "traffic: field 'per_run_ms' is negative");
}

// On an NCHW backend (ONNX Runtime) a squeeze-and-excite multiply, [1,H,W,C] by [1,1,1,C] as
// kernels are keyed, runs C stretches of H·W: times made with that count are fitted exactly, and a
// 128×128×16 map's multiply costs 16 stretches, where counted in NHWC it would cost 16,384. The
// pack says which order it counted in; a pack without the field counted NHWC.
TEST(TrafficPredictorTest, CountsABroadcastsStretchesInTheOrderTheBackendRunsTensors) {
  const double fixed = 0.002, per_byte = 2e-8, per_run = 4e-5;
  auto truth = [&](const Kernel& k) {
    const KernelCost c = ComputeKernelCost(WithNchwTensors(k));
    return fixed + per_byte * c.Bytes() + per_run * (c.runs - 1);
  };
  std::vector<TrainingSample> samples;
  for (std::int64_t hw : {4, 8, 16, 28})
    for (std::int64_t c : {16, 72, 288, 720}) {
      for (const Kernel& k : {Binary(OpKind::kMul, {1, hw, hw, c}, {1, hw, hw, c}), Binary(OpKind::kMul, {1, hw, hw, c}, {1, 1, 1, c})})
        samples.push_back(Sample(k, truth(k)));
    }
  PredictorOptions options;
  options.nchw_tensors = true;
  Expected<std::unique_ptr<KernelPredictor>> traffic = MakePredictor("traffic", options);
  ASSERT_TRUE(traffic.ok()) << traffic.status().message();
  ASSERT_TRUE((*traffic)->Fit(samples).ok());
  const nlohmann::json json = (*traffic)->ToJson();
  EXPECT_EQ(json["tensors"], "nchw");
  EXPECT_NEAR(json["per_run_ms"].get<double>() / per_run, 1, 1e-6);
  const Kernel se = Binary(OpKind::kMul, {1, 128, 128, 16}, {1, 1, 1, 16});
  ASSERT_EQ(ComputeKernelCost(WithNchwTensors(se)).runs, 16);
  Expected<Prediction> p = (*traffic)->Predict(se, 1);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_NEAR(p->ms / truth(se), 1, 1e-6);

  TrafficPredictor read;
  ASSERT_TRUE(read.FromJson(json).ok());
  EXPECT_EQ(read.Predict(se, 1)->ms, p->ms);
  nlohmann::json older = json;
  older.erase("tensors");  // a pack from before: NHWC, 16,384 stretches
  ASSERT_TRUE(read.FromJson(older).ok());
  EXPECT_NEAR(read.Predict(se, 1)->ms - p->ms, per_run * (128 * 128 - 16), 1e-9);
  older["tensors"] = "nc";
  EXPECT_EQ(read.FromJson(older).message(), "traffic: tensors is \"nc\", not \"nhwc\" or \"nchw\"");
}

// Costs are never negative: times that fall with the bytes get a fit that does not.
TEST(TrafficPredictorTest, NeverFitsANegativeCost) {
  std::vector<TrainingSample> samples;
  for (std::int64_t hw : {4, 8, 16, 32, 64}) {
    const Kernel k = Binary(OpKind::kAdd, {1, hw, hw, 8}, {1, hw, hw, 8});
    samples.push_back(Sample(k, 1.0 / static_cast<double>(hw)));
  }
  TrafficPredictor traffic;
  ASSERT_TRUE(traffic.Fit(samples).ok());
  const nlohmann::json fitted = traffic.ToJson();
  for (const auto& [name, value] : fitted.items()) {
    if (!value.is_number()) continue;  // "tensors"
    EXPECT_GE(value.get<double>(), 0.0) << name;
  }
  const Kernel huge = Binary(OpKind::kAdd, {1, 1024, 1024, 8}, {1, 1024, 1024, 8});
  EXPECT_GT(traffic.Predict(huge, 1)->ms, 0.0);
  Kernel opaque;
  opaque.op = OpKind::kReshape;  // no shape params: moves nothing by the cost model
  EXPECT_EQ(traffic.Predict(opaque, 1).status().code(), StatusCode::kUnsupported);
}

TEST(RooflinePredictorTest, RecoversOverheadAndEfficiency) {
  PredictorOptions options;
  options.peak_gflops = 100;
  options.bandwidth_gbs = 1e9;  // compute bound everywhere
  std::vector<TrainingSample> samples;
  for (const TrainingSample& s : MacsProportional(100, 5)) {
    double ideal = 2 * ComputeKernelCost(s.kernel).macs / (100 * 1e6);
    samples.push_back(Sample(s.kernel, 0.02 + ideal / 0.4));
  }
  RooflinePredictor roofline(options);
  ASSERT_TRUE(roofline.Fit(samples).ok());
  EXPECT_NEAR(roofline.ToJson()["overhead_ms"].get<double>(), 0.02, 1e-9);
  EXPECT_NEAR(roofline.ToJson()["efficiency"].get<double>(), 0.4, 1e-9);
  Kernel fresh = Conv(40, 20, 24, 3, 1);
  Expected<Prediction> p = roofline.Predict(fresh, 1);
  ASSERT_TRUE(p.ok());
  EXPECT_NEAR(p->ms, 0.02 + 2 * ComputeKernelCost(fresh).macs / 1e8 / 0.4, 1e-9);
  EXPECT_EQ(p->source, PredictionSource::kRoofline);
  Kernel opaque;
  opaque.op = OpKind::kReshape;  // no n h w c: no cost model
  Expected<Prediction> none = roofline.Predict(opaque, 1);
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kUnsupported);
}

}  // namespace
}  // namespace latte

namespace latte {
namespace {

Kernel Of(OpKind op, std::map<std::string, std::int64_t> params, DataType dtype = DataType::kFloat32) {
  Kernel kernel;
  kernel.op = op;
  kernel.params = std::move(params);
  kernel.dtype = dtype;
  return kernel;
}

// What the kinds transformers and post-processing add read, write and compute.
TEST(FeaturesTest, CostOfComparisonsWhereGatherArgMaxAndLayerNorm) {
  // A comparison reads two float32 operands and writes one byte an element.
  KernelCost equal = ComputeKernelCost(Of(OpKind::kEqual, {{"a0", 1}, {"a1", 4}, {"a2", 4}, {"a3", 8},
                                                           {"b0", 1}, {"b1", 1}, {"b2", 1}, {"b3", 8}}));
  EXPECT_EQ(equal.out_elements, 128);
  EXPECT_EQ(equal.in_bytes, (128 + 8) * 4);
  EXPECT_EQ(equal.out_bytes, 128);
  // where: a one-byte condition row, x, and a scalar.
  KernelCost where = ComputeKernelCost(Of(OpKind::kWhere, {{"c0", 1}, {"c1", 1}, {"c2", 1}, {"c3", 8}, {"x0", 1},
                                                           {"x1", 4}, {"x2", 4}, {"x3", 8}, {"y0", 1}, {"y1", 1},
                                                           {"y2", 1}, {"y3", 1}}));
  EXPECT_EQ(where.out_elements, 128);
  EXPECT_EQ(where.in_bytes, 8 + (128 + 1) * 4);
  EXPECT_EQ(where.out_bytes, 128 * 4);
  // gather: 32 rows of 64 copied out of a 1000-row table, reading 32 int64 indices.
  KernelCost gather = ComputeKernelCost(Of(OpKind::kGather, {{"outer", 1}, {"rows", 1000}, {"inner", 64}, {"idx", 32}}));
  EXPECT_EQ(gather.out_elements, 32 * 64);
  EXPECT_EQ(gather.in_bytes, 32 * 64 * 4 + 32 * 8);
  EXPECT_EQ(gather.runs, 32);
  // argmax over the channels: one int64 per pixel.
  KernelCost argmax = ComputeKernelCost(Of(OpKind::kArgMax, {{"n", 1}, {"h", 4}, {"w", 5}, {"c", 10}, {"axes", 8}}));
  EXPECT_EQ(argmax.out_elements, 20);
  EXPECT_EQ(argmax.out_bytes, 20 * 8);
  EXPECT_EQ(argmax.macs, 200);
  // layer_norm: 128 rows of 256, with a scale and a bias of 256 each.
  KernelCost ln = ComputeKernelCost(Of(OpKind::kLayerNorm, {{"n", 1}, {"h", 1}, {"w", 128}, {"c", 256}, {"scale", 1}, {"bias", 1}}));
  EXPECT_EQ(ln.out_elements, 128 * 256);
  EXPECT_EQ(ln.in_bytes, 128 * 256 * 4);
  EXPECT_EQ(ln.weight_bytes, 2 * 256 * 4);
  EXPECT_EQ(ln.macs, 8 * 128 * 256);
  EXPECT_EQ(VectorChannels(Of(OpKind::kGather, {{"outer", 1}, {"rows", 10}, {"inner", 48}, {"idx", 2}})), 48);
}

// A layer_norm's latency interpolated between measured sequence lengths and hidden sizes, as a
// pack predicts kernels it measured around.
TEST(FeaturesTest, LayerNormIsPredictedFromItsMeasurements) {
  auto kernel = [](std::int64_t seq, std::int64_t hidden) {
    return Of(OpKind::kLayerNorm, {{"n", 1}, {"h", 1}, {"w", seq}, {"c", hidden}, {"scale", 1}, {"bias", 1}});
  };
  auto ms = [&](std::int64_t seq, std::int64_t hidden) { return WorkScaleMs(kernel(seq, hidden)) * 2.0; };
  std::vector<TrainingSample> samples;
  for (std::int64_t seq : {64, 128, 256})
    for (std::int64_t hidden : {128, 256, 512})
      if (!(seq == 128 && hidden == 256)) samples.push_back(Sample(kernel(seq, hidden), ms(seq, hidden)));
  InterpPredictor interp;
  ASSERT_TRUE(interp.Fit(samples).ok());
  Expected<Prediction> p = interp.Predict(kernel(128, 256), 1);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_NEAR(p->ms, ms(128, 256), 1e-9);
  EXPECT_FALSE(p->outside_training_range);
}

}  // namespace
}  // namespace latte
