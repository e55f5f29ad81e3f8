#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <filesystem>
#include <fstream>
#include <random>

#include "predict/features.h"
#include "predict/fit.h"
#include "predict/pack.h"
#include "profile/space.h"

namespace latte {
namespace {

Kernel Conv(std::int64_t ic, std::int64_t ih, std::int64_t oc) {
  Kernel kernel;
  kernel.op = OpKind::kConv2D;
  kernel.fused = {OpKind::kRelu};
  kernel.params = {{"n", 1}, {"ih", ih}, {"iw", ih}, {"ic", ic}, {"oc", oc}, {"kh", 3},
                   {"kw", 3}, {"sh", 1}, {"sw", 1}, {"g", 1}, {"dh", 1}, {"dw", 1}};
  return kernel;
}

Kernel Add(std::int64_t c, std::int64_t h) {
  Kernel kernel;
  kernel.op = OpKind::kAdd;
  kernel.params = {{"a0", 1}, {"a1", h}, {"a2", h}, {"a3", c}, {"b0", 1}, {"b1", h}, {"b2", h}, {"b3", c}};
  return kernel;
}

std::vector<TrainingSample> Samples() {
  std::vector<TrainingSample> samples;
  for (std::int64_t ic : {8, 16, 32, 64})
    for (std::int64_t ih : {7, 14, 28, 56})
      for (std::int64_t oc : {16, 32, 64}) {
        Kernel k = Conv(ic, ih, oc);
        samples.push_back({k, 1, 0.005 + 2e-6 * ComputeKernelCost(k).macs / 1000, 0.001});
      }
  for (std::int64_t c : {8, 16, 32, 64})
    for (std::int64_t h : {7, 14, 28, 56}) samples.push_back({Add(c, h), 1, 0.001 + 1e-7 * double(c * h * h), 0});
  return samples;
}

PackInfo Info() {
  PackInfo info;
  info.device = {{"cpu_model", "Test CPU"}, {"logical_cores", 2}};
  info.backend = "xnnpack";
  info.backend_version = "0.0~git1";
  info.threads = 1;
  info.fusion_rules = {"conv2d+relu"};
  info.command = "latte fit --db test.db --backend xnnpack -o pack.json";
  info.created = "2026-01-01T00:00:00Z";
  info.latte_version = "0.1.0";
  return info;
}

FitOptions SmallFit() {
  FitOptions options;
  options.folds = 3;
  options.predictor.gbdt.trees = 50;
  options.predictor.forest.trees = 20;
  return options;
}

// The registry is the one place a predictor type is named: each row makes a predictor of its own
// name, its source prints as that name, and fitting takes the fitted rows only.
TEST(PredictorRegistry, EveryRowMakesItsOwnTypeAndFittingTakesTheFittedOnes) {
  std::vector<std::string> fitted;
  for (const PredictorType& type : PredictorTypes()) {
    Expected<std::unique_ptr<KernelPredictor>> made = MakePredictor(type.name, PredictorOptions{});
    ASSERT_TRUE(made.ok()) << type.name;
    EXPECT_EQ((*made)->Name(), type.name);
    EXPECT_EQ(PredictionSourceName(type.source), type.name);
    EXPECT_EQ(FindPredictorType(type.name), &type);
    EXPECT_EQ(IsTreePredictor(type.name), type.tree_model);
    if (type.fitted) fitted.emplace_back(type.name);
  }
  EXPECT_EQ(fitted, FittedPredictorNames());
  EXPECT_EQ(fitted, (std::vector<std::string>{"interp", "gbdt", "forest", "traffic", "roofline"}));
  EXPECT_TRUE(IsTreePredictor("gbdt"));
  EXPECT_FALSE(IsTreePredictor("interp"));
  EXPECT_EQ(FindPredictorType("lstm"), nullptr);
  Expected<std::unique_ptr<KernelPredictor>> unknown = MakePredictor("lstm", PredictorOptions{});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(), "unknown predictor 'lstm' (known: table, interp, gbdt, forest, traffic, roofline)");
  FitOptions options = SmallFit();
  options.predictors = {"gbdt", "table"};  // the table is looked up, never fitted
  Expected<FitResult> fit = FitPack(Samples(), Info(), options);
  ASSERT_FALSE(fit.ok());
  EXPECT_EQ(fit.status().message(), "unknown predictor 'table' (fitted predictors: interp, gbdt, forest, traffic, roofline)");
}

TEST(FitPackTest, ReportsEveryPredictorPerKindAndSelectsTheBest) {
  FitOptions options = SmallFit();
  options.predictor.peak_gflops = 1000;  // and memory never the bound: latency is affine in MACs
  options.predictor.bandwidth_gbs = 1e12;
  Expected<FitResult> fit = FitPack(Samples(), Info(), options);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  ASSERT_EQ(fit->report.size(), 3u);  // add, conv2d+relu, and plain conv2d fitted on conv2d+relu's samples
  EXPECT_EQ(fit->report[1].kind, "conv2d");
  EXPECT_EQ(fit->report[1].borrowed, 48u);
  const KindFitReport& conv = fit->report[2];
  EXPECT_EQ(conv.kind, "conv2d+relu");
  EXPECT_EQ(conv.samples, 48u);
  ASSERT_EQ(conv.scores.size(), 5u);
  double best = 1e300;
  for (const PredictorScore& s : conv.scores) {
    EXPECT_EQ(s.cv.n + s.failed, 48u) << s.name;
    EXPECT_GE(s.cv.within10_pct, s.cv.within5_pct);
    if (s.failed == 0) best = std::min(best, s.cv.rmspe_pct);
  }
  const KindModel& model = fit->pack.kinds.at("conv2d+relu");
  EXPECT_EQ(model.order.front(), conv.selected);
  EXPECT_EQ(model.cv.at(conv.selected).rmspe_pct, best);
  // Latency is affine in MACs here, which the roofline model captures exactly: it is selected.
  EXPECT_LT(model.cv.at("roofline").rmspe_pct, 1e-6);
  EXPECT_EQ(conv.selected, "roofline");
}

TEST(FitPackTest, OneKernelInARegimeOfItsOwnDoesNotMakeTheRooflineBest) {
  // Per element, small channel counts cost more (1 + 100/c: a slow broadcast path): neighbours
  // learn that, the roofline (work only) cannot. One kernel, c = 1, runs 100× cheaper per element
  // than the rule says (a scalar path): a predictor that learns from neighbours misses it by ~30×.
  std::vector<TrainingSample> samples;
  auto norm = [](std::int64_t h, std::int64_t c) {
    Kernel k;
    k.op = OpKind::kBatchNorm;
    k.params = {{"n", 1}, {"h", h}, {"w", h}, {"c", c}};
    return k;
  };
  for (std::int64_t c : {8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256})
    for (std::int64_t h : {8, 12, 16, 24, 32, 48})
      samples.push_back({norm(h, c), 1, 2e-4 + 4e-8 * double(h * h * c) * (1 + 100.0 / double(c)), 0});
  samples.push_back({norm(48, 1), 1, 2e-4 + 4e-8 * 48 * 48, 0});
  FitOptions options = SmallFit();
  options.predictors = {"gbdt", "roofline"};
  Expected<FitResult> fit = FitPack(samples, Info(), options);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  const KindFitReport& report = fit->report.at(0);
  ASSERT_EQ(report.scores.size(), 2u);
  const PredictorScore& trees = report.scores[0];
  const PredictorScore& roofline = report.scores[1];
  EXPECT_EQ(trees.cv.n, samples.size());
  // Uncapped, the one miss makes the trees look worse than the roofline ...
  EXPECT_GT(trees.cv.rmspe_pct, roofline.cv.rmspe_pct);
  // ... which is right for far fewer kernels.
  EXPECT_GT(trees.cv.within10_pct, roofline.cv.within10_pct + 30);
  EXPECT_EQ(report.selected, "gbdt");
}

TEST(FitPackTest, KeepsNothingAfterTheFirstTreeModelInTheOrder) {
  // Trees answer every kernel: a predictor ranked after one is never reached, so it is not kept.
  FitOptions options = SmallFit();
  options.predictors = {"gbdt", "forest", "roofline"};
  Expected<FitResult> fit = FitPack(Samples(), Info(), options);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  for (const auto& [kind, model] : fit->pack.kinds) {
    ASSERT_FALSE(model.order.empty()) << kind;
    std::size_t trees = 0;
    for (const std::string& name : model.order) trees += name == "gbdt" || name == "forest";
    EXPECT_LE(trees, 1u) << kind;
    if (trees == 1) {
      EXPECT_TRUE(model.order.back() == "gbdt" || model.order.back() == "forest") << kind;
    }
    EXPECT_EQ(model.fitted.size(), model.order.size()) << kind;
  }
  for (const KindFitReport& report : fit->report) {
    if (report.samples >= options.min_samples_for_cv) {
      EXPECT_EQ(report.scores.size(), 3u) << report.kind;
    }
  }
}

TEST(FitPackTest, AStreamingKindKeepsAPredictorThatExtrapolatesAfterItsTree) {
  // An add whose time per element steps with its channel count: trees and interpolation learn the
  // step, the traffic model (linear in bytes) does not and ranks after the tree, yet is kept, for
  // the sizes interpolation declines. A conv keeps nothing after its tree.
  std::vector<TrainingSample> samples;
  for (const TrainingSample& s : Samples())
    if (s.kernel.op == OpKind::kConv2D) samples.push_back(s);
  for (std::int64_t c : {8, 16, 32, 64})
    for (std::int64_t h : {7, 14, 28, 56})
      samples.push_back({Add(c, h), 1, 1e-7 * static_cast<double>(c * h * h) * (c >= 32 ? 4 : 1), 0});
  FitOptions options = SmallFit();
  options.predictors = {"gbdt", "traffic"};
  Expected<FitResult> fit = FitPack(samples, Info(), options);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  const KindModel& add = fit->pack.kinds.at("add");
  EXPECT_EQ(add.order, (std::vector<std::string>{"gbdt", "traffic"}));
  EXPECT_EQ(add.fitted.size(), 2u);
  const KindModel& conv = fit->pack.kinds.at("conv2d+relu");
  ASSERT_FALSE(conv.order.empty());
  if (conv.order.front() == "gbdt") {
    EXPECT_EQ(conv.order, (std::vector<std::string>{"gbdt"}));
  }
  EXPECT_EQ(conv.fitted.size(), conv.order.size());
}

// A kind the sampler drew rarely is fitted on the kinds that differ from it only in the clamps
// that end them: conv2d measured at 7x7 only, conv2d+relu6 at 7..56, both at the same cost (a
// per-size efficiency a few points of one size cannot tell).
TEST(FitPackTest, AKindDrawnRarelyIsFittedOnItsClampSiblings) {
  auto ms = [](const Kernel& k) {
    return 0.005 + 2e-9 * ComputeKernelCost(k).macs * (1 + 2.0 / static_cast<double>(k.Param("ih")));
  };
  std::vector<TrainingSample> samples;
  for (std::int64_t ic : {8, 16, 32, 64})
    for (std::int64_t ih : {7, 14, 28, 56})
      for (std::int64_t oc : {16, 32, 64}) {
        Kernel k = Conv(ic, ih, oc);
        k.fused = {OpKind::kRelu6};
        samples.push_back({k, 1, ms(k), 0});
        if (ih == 7) {
          k.fused = {};
          samples.push_back({k, 1, ms(k), 0});
        }
      }
  FitOptions options = SmallFit();
  Expected<FitResult> fit = FitPack(samples, Info(), options);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  const KindFitReport& plain = fit->report[0];
  ASSERT_EQ(plain.kind, "conv2d");
  EXPECT_EQ(plain.samples, 48u);   // its 12 and the 36 of conv2d+relu6 at other sizes
  EXPECT_EQ(plain.borrowed, 36u);
  EXPECT_EQ(fit->report[1].borrowed, 0u);  // conv2d+relu6 measured every kernel conv2d did
  Kernel big = Conv(32, 56, 32);
  big.fused = {};
  Expected<Prediction> p = fit->pack.Predict(big, 1);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_NE(p->source, PredictionSource::kTableHit);  // a sibling's measurement is no table hit
  EXPECT_NEAR(p->ms, ms(big), 0.05 * ms(big));
  EXPECT_FALSE(p->outside_training_range);

  options.pool_clamp_siblings = false;
  fit = FitPack(samples, Info(), options);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  EXPECT_EQ(fit->report[0].samples, 12u);
  EXPECT_EQ(fit->report[0].borrowed, 0u);
  EXPECT_TRUE(fit->pack.Predict(big, 1)->outside_training_range);
}

TEST(FitPackTest, AClampFreeKindNeverDrawnIsFittedOnItsClampedFormsAlone) {
  auto ms = [](const Kernel& k) { return 0.004 + 3e-9 * ComputeKernelCost(k).macs; };
  std::vector<TrainingSample> samples;
  for (std::int64_t ic : {8, 16, 32, 64})
    for (std::int64_t ih : {7, 14, 28})
      for (std::int64_t oc : {16, 32}) {
        Kernel k = Conv(ic, ih, oc);
        k.fused = {OpKind::kRelu};
        samples.push_back({k, 1, ms(k), 0});
      }
  FitOptions options = SmallFit();
  Expected<FitResult> fit = FitPack(samples, Info(), options);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  ASSERT_EQ(fit->report.size(), 2u);
  EXPECT_EQ(fit->report[0].kind, "conv2d");
  EXPECT_EQ(fit->report[0].samples, 24u);
  EXPECT_EQ(fit->report[0].borrowed, 24u);
  EXPECT_EQ(fit->pack.kinds.at("conv2d").samples, 0u);  // none of its own
  Kernel plain = Conv(32, 14, 32);
  plain.fused = {};
  Expected<Prediction> p = fit->pack.Predict(plain, 1);
  ASSERT_TRUE(p.ok()) << p.status().message();
  EXPECT_NE(p->source, PredictionSource::kTableHit);
  EXPECT_NEAR(p->ms, ms(plain), 0.15 * ms(plain));

  options.pool_clamp_siblings = false;
  fit = FitPack(samples, Info(), options);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  EXPECT_EQ(fit->pack.kinds.count("conv2d"), 0u);
  EXPECT_FALSE(fit->pack.Predict(plain, 1).ok());

  // A backend that clamps a conv apart (a pass of its own) pools nothing for conv2d.
  options.pool_clamp_siblings = true;
  options.clamps_run_apart = {OpKind::kConv2D};
  fit = FitPack(samples, Info(), options);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  EXPECT_EQ(fit->pack.kinds.count("conv2d"), 0u);
  options.clamps_run_apart = {OpKind::kAdd};  // another op's clamps: conv2d still pooled
  fit = FitPack(samples, Info(), options);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  EXPECT_EQ(fit->pack.kinds.count("conv2d"), 1u);
}

TEST(FitPackTest, RejectsBadOptionsAndEmptyInput) {
  FitOptions options = SmallFit();
  options.predictors = {"svm"};
  Expected<FitResult> bad = FitPack(Samples(), Info(), options);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("svm"), std::string::npos);
  EXPECT_FALSE(FitPack({}, Info(), SmallFit()).ok());
  options = SmallFit();
  options.folds = 1;
  EXPECT_FALSE(FitPack(Samples(), Info(), options).ok());
}

// A kind with too few samples is fitted without cross-validation, and its scores say so.
TEST(FitPackTest, AKindTooSmallToCrossValidateSaysWhy) {
  std::vector<TrainingSample> samples = Samples();
  std::vector<TrainingSample> few(samples.begin(), samples.begin() + 9);  // conv2d+relu only
  Expected<FitResult> fit = FitPack(few, Info(), SmallFit());
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  ASSERT_EQ(fit->report.size(), 2u);  // conv2d+relu, and plain conv2d on its samples
  for (const KindFitReport& report : fit->report) {
    for (const PredictorScore& score : report.scores) {
      EXPECT_EQ(score.cv.n, 0u) << score.name;
      const std::string expected = score.name == "interp" || score.name == "roofline"
                                       ? "not cross-validated: 9 samples (cross-validation needs 10)"
                                       : "too few samples (9) to fit";
      EXPECT_EQ(score.why, expected) << report.kind << " " << score.name;
    }
  }
}

// A first Ctrl-C during a long fit: it stops before its next predictor and says so.
TEST(FitPackTest, StopsWhenTheStopFlagIsRaised) {
  FitOptions options = SmallFit();
  std::atomic<bool> stop = false;
  options.stop = &stop;
  Expected<FitResult> fitted = FitPack(Samples(), Info(), options);
  ASSERT_TRUE(fitted.ok());
  EXPECT_FALSE(fitted->interrupted);
  EXPECT_FALSE(fitted->pack.kinds.empty());
  stop = true;
  Expected<FitResult> stopped = FitPack(Samples(), Info(), options);
  ASSERT_TRUE(stopped.ok());
  EXPECT_TRUE(stopped->interrupted);
  EXPECT_TRUE(stopped->pack.kinds.empty());
}

// The box of per-parameter ranges misses a kernel whose every parameter was seen, never together:
// trained on tall maps (224×8) and wide ones (8×224), a 224×224 map is outside what they make
// together (its area, its work), and is flagged; a map between them is not.
TEST(TrainingRangesTest, FlagsParametersSeenApartButNeverTogether) {
  TrainingRanges ranges;
  for (auto [h, w] : {std::pair{224, 8}, std::pair{8, 224}, std::pair{16, 16}})
    ranges.Extend(ConvKernel(OpKind::kDepthwiseConv2D, h, w, 32, 32, 3, 1), 1);
  EXPECT_TRUE(ranges.Contains(ConvKernel(OpKind::kDepthwiseConv2D, 224, 8, 32, 32, 3, 1), 1));
  EXPECT_TRUE(ranges.Contains(ConvKernel(OpKind::kDepthwiseConv2D, 32, 32, 32, 32, 3, 1), 1));
  EXPECT_FALSE(ranges.Contains(ConvKernel(OpKind::kDepthwiseConv2D, 224, 224, 32, 32, 3, 1), 1));
  ASSERT_EQ(ranges.derived.count("oh*ow"), 1u);
  EXPECT_EQ(ranges.derived.at("oh*ow"), (std::pair<double, double>{16 * 16, 224 * 8}));
  // Kept in the pack, and optional there: a pack made before reads as the box alone.
  Expected<TrainingRanges> back = TrainingRanges::FromJson(nlohmann::json::parse(ranges.ToJson().dump()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->derived, ranges.derived);
  nlohmann::json older = ranges.ToJson();
  older.erase("derived");
  back = TrainingRanges::FromJson(older);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_TRUE(back->Contains(ConvKernel(OpKind::kDepthwiseConv2D, 224, 224, 32, 32, 3, 1), 1));
  nlohmann::json damaged = ranges.ToJson();
  damaged["derived"]["macs"] = {5.0, 1.0};
  EXPECT_FALSE(TrainingRanges::FromJson(damaged).ok());
}

TEST(PackTest, TableHitThenFittedModelAndUnknownKindUnsupported) {
  Expected<FitResult> fit = FitPack(Samples(), Info(), SmallFit());
  ASSERT_TRUE(fit.ok());
  const Pack& pack = fit->pack;
  std::vector<TrainingSample> samples = Samples();
  Expected<Prediction> hit = pack.Predict(samples[5].kernel);
  ASSERT_TRUE(hit.ok());
  EXPECT_EQ(hit->source, PredictionSource::kTableHit);
  EXPECT_EQ(hit->ms, samples[5].p50_ms);
  Expected<Prediction> fitted = pack.Predict(Conv(24, 20, 24));
  ASSERT_TRUE(fitted.ok());
  EXPECT_NE(fitted->source, PredictionSource::kTableHit);
  EXPECT_EQ(PredictionSourceName(fitted->source), pack.kinds.at("conv2d+relu").order.front());
  EXPECT_GT(fitted->ms, 0);
  EXPECT_FALSE(fitted->outside_training_range);
  EXPECT_TRUE(pack.Predict(Conv(24, 20, 512))->outside_training_range);

  Kernel softmax;
  softmax.op = OpKind::kSoftmax;
  softmax.params = {{"n", 1}, {"h", 1}, {"w", 1}, {"c", 10}};
  Expected<Prediction> unknown = pack.Predict(softmax);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(unknown.status().message().find("softmax"), std::string::npos) << unknown.status().message();
  Kernel plain = Conv(8, 7, 16);
  plain.fused.clear();  // conv2d without relu: fitted on conv2d+relu's samples, never a table hit
  Expected<Prediction> borrowed = pack.Predict(plain);
  ASSERT_TRUE(borrowed.ok()) << borrowed.status().message();
  EXPECT_NE(borrowed->source, PredictionSource::kTableHit);
  Kernel transposed = plain;
  transposed.op = OpKind::kTransposeConv2D;  // a kind of which nothing was measured
  EXPECT_FALSE(pack.Predict(transposed).ok());
}

// A fused kind the pack never measured is its parts' sum, said as such, with the followers' possible
// saving in its spread; a part the pack lacks leaves it unpredicted, naming the part.
TEST(PackTest, AnUnmeasuredFusedKindIsTheSumOfItsParts) {
  std::vector<TrainingSample> samples;
  for (std::int64_t ic : {8, 16, 32, 64})
    for (std::int64_t ih : {7, 14, 28, 56})
      for (std::int64_t oc : {16, 32, 64}) {
        Kernel conv = Conv(ic, ih, oc);
        conv.fused.clear();
        samples.push_back({conv, 1, 0.005 + 2e-6 * ComputeKernelCost(conv).macs / 1000, 0.001});
        Kernel relu6;
        relu6.op = OpKind::kRelu6;
        relu6.params = {{"n", 1}, {"h", ih}, {"w", ih}, {"c", oc}};
        samples.push_back({relu6, 1, 0.0005 + 1e-8 * double(ih * ih * oc), 0.0001});
      }
  samples.erase(std::unique(samples.begin(), samples.end(),
                            [](const TrainingSample& a, const TrainingSample& b) { return a.kernel == b.kernel; }),
                samples.end());
  PackInfo info = Info();
  info.fusion_rules = {};
  Expected<FitResult> fit = FitPack(samples, info, SmallFit());
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  const Pack& pack = fit->pack;
  ASSERT_EQ(pack.kinds.count("conv2d+relu6"), 0u);

  Kernel fused = Conv(16, 14, 32);  // unpadded 3x3: a 12x12x32 output
  fused.fused = {OpKind::kRelu6};
  Kernel conv = fused;
  conv.fused.clear();
  Expected<Prediction> conv_alone = pack.Predict(conv);
  ASSERT_TRUE(conv_alone.ok() && conv_alone->source == PredictionSource::kTableHit);
  Kernel relu6;
  relu6.op = OpKind::kRelu6;
  relu6.params = {{"n", 1}, {"h", 12}, {"w", 12}, {"c", 32}};
  Expected<Prediction> relu6_alone = pack.Predict(relu6);
  ASSERT_TRUE(relu6_alone.ok()) << relu6_alone.status().message();

  Expected<Prediction> sum = pack.Predict(fused);
  ASSERT_TRUE(sum.ok()) << sum.status().message();
  EXPECT_EQ(sum->source, PredictionSource::kSumOfParts);
  EXPECT_EQ(PredictionSourceName(sum->source), "sum-of-parts");
  EXPECT_DOUBLE_EQ(sum->ms, conv_alone->ms + relu6_alone->ms);
  EXPECT_DOUBLE_EQ(sum->spread_ms, conv_alone->spread_ms + relu6_alone->spread_ms + relu6_alone->ms / 2);

  Kernel with_add = fused;  // conv2d+add: the pack has no add
  with_add.fused = {OpKind::kAdd};
  Expected<Prediction> no_add = pack.Predict(with_add);
  ASSERT_FALSE(no_add.ok());
  EXPECT_EQ(no_add.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(no_add.status().message().find("nor for its part 'add'"), std::string::npos) << no_add.status().message();
}

// conv2d+add+relu samples timed as their parts' sum × `ratio`, beside many more of each part
// (conv2d alone, add+relu), whose times are smooth in their size.
std::vector<TrainingSample> FusedAndItsParts(double ratio) {
  auto conv_ms = [](const Kernel& conv) { return 0.005 + 2e-6 * ComputeKernelCost(conv).macs / 1000; };
  auto add_ms = [](std::int64_t c, std::int64_t h) { return 0.001 + 4e-7 * double(c * h * h); };
  std::vector<TrainingSample> samples;
  for (std::int64_t ic : {8, 16, 24, 32, 48, 64})
    for (std::int64_t ih : {7, 14, 28, 56})
      for (std::int64_t oc : {16, 32, 48, 64}) {
        Kernel conv = Conv(ic, ih, oc);
        conv.fused.clear();
        samples.push_back({conv, 1, conv_ms(conv), 0});
      }
  for (std::int64_t c : {8, 16, 24, 32, 48, 64, 96})
    for (std::int64_t h : {5, 7, 12, 14, 26, 28, 54, 56}) {
      Kernel add = Add(c, h);
      add.fused = {OpKind::kRelu};
      samples.push_back({add, 1, add_ms(c, h), 0});
    }
  // Twelve fused kernels: an unpadded 3×3 conv's output is 2 smaller than its input.
  for (std::int64_t ic : {16, 32, 64})
    for (std::int64_t ih : {7, 14, 28, 56}) {
      const std::int64_t oc = ic * 3 / 2;
      Kernel fused = Conv(ic, ih, oc);
      fused.fused = {OpKind::kAdd, OpKind::kRelu};
      Kernel conv = fused;
      conv.fused.clear();
      samples.push_back({fused, 1, ratio * (conv_ms(conv) + add_ms(oc, ih - 2)), 0});
    }
  return samples;
}

// A fused kind measured a dozen times, whose parts were measured by the dozen: when the parts,
// each predicted by its own kind, predict its measurements better than its own fit did held out,
// what its table does not hold is predicted as their sum (said as such); its measured kernels stay
// table hits; a pack keeps the choice. When fusing saves most of the parts' time, it keeps its fit.
TEST(PackTest, AFusedKindItsPartsPredictBetterIsPredictedByThem) {
  PackInfo info = Info();
  info.fusion_rules = {"conv2d+add+relu"};
  Expected<FitResult> fit = FitPack(FusedAndItsParts(1.0), info, SmallFit());
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  const Pack& pack = fit->pack;
  ASSERT_EQ(pack.kinds.count("conv2d+add+relu"), 1u);
  EXPECT_TRUE(pack.kinds.at("conv2d+add+relu").by_parts);
  auto report = std::find_if(fit->report.begin(), fit->report.end(),
                             [](const KindFitReport& r) { return r.kind == "conv2d+add+relu"; });
  ASSERT_NE(report, fit->report.end());
  EXPECT_EQ(report->selected, "sum-of-parts");
  ASSERT_EQ(report->scores.back().name, "sum-of-parts");
  EXPECT_EQ(report->scores.back().cv.n, 12u);
  EXPECT_NE(report->scores.back().why.find(" of 12"), std::string::npos) << report->scores.back().why;
  EXPECT_EQ(pack.kinds.at("conv2d+add+relu").cv.count("sum-of-parts"), 1u);

  // An unseen fused kernel: its conv alone plus its add+relu (the followers as the kind they make).
  Kernel fused = Conv(24, 20, 40);
  fused.fused = {OpKind::kAdd, OpKind::kRelu};
  Kernel conv = fused;
  conv.fused.clear();
  Kernel add_relu = Add(40, 18);
  add_relu.fused = {OpKind::kRelu};
  Expected<Prediction> conv_alone = pack.Predict(conv), add_relu_alone = pack.Predict(add_relu);
  ASSERT_TRUE(conv_alone.ok() && add_relu_alone.ok());
  Expected<Prediction> predicted = pack.Predict(fused);
  ASSERT_TRUE(predicted.ok()) << predicted.status().message();
  EXPECT_EQ(predicted->source, PredictionSource::kSumOfParts);
  EXPECT_DOUBLE_EQ(predicted->ms, conv_alone->ms + add_relu_alone->ms);
  // A measured one is still its measurement.
  Kernel measured = Conv(32, 28, 48);
  measured.fused = {OpKind::kAdd, OpKind::kRelu};
  Expected<Prediction> hit = pack.Predict(measured);
  ASSERT_TRUE(hit.ok());
  EXPECT_EQ(hit->source, PredictionSource::kTableHit);

  // Written and read back: the same choice, the same answer.
  nlohmann::json json = pack.ToJson();
  EXPECT_EQ(json["kinds"]["conv2d+add+relu"]["selected"], "sum-of-parts");
  EXPECT_EQ(json["kinds"]["conv2d+add+relu"]["by_parts"], true);
  EXPECT_FALSE(json["kinds"]["conv2d"].contains("by_parts"));
  Expected<Pack> read = Pack::FromJson(json);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_TRUE(read->kinds.at("conv2d+add+relu").by_parts);
  EXPECT_DOUBLE_EQ(read->Predict(fused)->ms, predicted->ms);
  // A kind that fuses nothing has no parts to be predicted by.
  json["kinds"]["conv2d"]["by_parts"] = true;
  Expected<Pack> refused = Pack::FromJson(json);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("kind conv2d: by_parts, but the kind fuses nothing"), std::string::npos)
      << refused.status().message();

  // Fusing that saves 70% of the parts' time: the parts are 3.3× off, and the kind keeps its fit.
  Expected<FitResult> saving = FitPack(FusedAndItsParts(0.3), info, SmallFit());
  ASSERT_TRUE(saving.ok());
  EXPECT_FALSE(saving->pack.kinds.at("conv2d+add+relu").by_parts);
  Expected<Prediction> own = saving->pack.Predict(fused);
  ASSERT_TRUE(own.ok());
  EXPECT_NE(own->source, PredictionSource::kSumOfParts);
}

// A pack says whether its backend takes NHWC (how models are planned for it); one written before
// packs said it is read as backends were registered then, by name.
TEST(PackTest, SaysWhetherItsBackendTakesNhwcAndOldPacksAreReadByName) {
  PackInfo info = Info();
  info.backend = "ort";
  info.backend_takes_nhwc = true;  // the pack's word wins over any name
  Expected<FitResult> fit = FitPack(Samples(), info, SmallFit());
  ASSERT_TRUE(fit.ok());
  nlohmann::json json = fit->pack.ToJson();
  EXPECT_EQ(json["backend"]["takes_nhwc"], true);
  Expected<Pack> read = Pack::FromJson(json);
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ(read->info.backend_takes_nhwc, std::optional<bool>(true));
  EXPECT_EQ(read->NhwcBackendNames(), NhwcBackends{"ort"});
  json["backend"]["takes_nhwc"] = false;
  json["backend"]["name"] = "xnnpack";
  EXPECT_EQ(Pack::FromJson(json)->NhwcBackendNames(), NhwcBackends{});
  json["backend"].erase("takes_nhwc");  // an older pack
  EXPECT_EQ(Pack::FromJson(json)->info.backend_takes_nhwc, std::nullopt);
  EXPECT_EQ(Pack::FromJson(json)->NhwcBackendNames(), NhwcBackends{"xnnpack"});
  json["backend"]["name"] = "ort";
  EXPECT_EQ(Pack::FromJson(json)->NhwcBackendNames(), NhwcBackends{});
}

TEST(PackTest, RoundTripsBitForBit) {
  PackInfo info = Info();
  info.reference_kernel = "conv2d|bias=1,ic=32|float32";
  info.reference_p50_us = 48.25;
  info.reference_readings = 7;
  info.reference_spread = 0.0345;
  info.reference_follow = 0.375;
  Expected<FitResult> fit = FitPack(Samples(), info, SmallFit());
  ASSERT_TRUE(fit.ok());
  ContextModel context;
  context.share = 0.1 / 3;
  context.l2_ms_per_mib = 0.0021;
  context.l3_ms_per_mib = 0.0093;
  context.l2_bytes = 1 << 20;
  context.l3_bytes = 24 << 20;
  context.graphs = 40;
  fit->pack.context = context;
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("latte_pack_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string first = (dir / "a.json").string(), second = (dir / "b.json").string();
  ASSERT_TRUE(fit->pack.Save(first).ok());
  Expected<Pack> loaded = Pack::Load(first);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  ASSERT_TRUE(loaded->Save(second).ok());
  auto read = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  EXPECT_EQ(read(first), read(second));
  EXPECT_EQ(loaded->info.fusion_rules, std::vector<std::string>{"conv2d+relu"});
  EXPECT_EQ(loaded->info.command, Info().command);
  EXPECT_EQ(loaded->info.reference_kernel, info.reference_kernel);
  EXPECT_EQ(loaded->info.reference_p50_us, 48.25);
  EXPECT_EQ(loaded->info.reference_readings, 7u);
  EXPECT_EQ(loaded->info.reference_spread, 0.0345);
  EXPECT_EQ(loaded->info.reference_follow, 0.375);
  ASSERT_TRUE(loaded->context.has_value());
  EXPECT_EQ(*loaded->context, context);
  std::mt19937 rng(7);
  for (int i = 0; i < 200; ++i) {
    Kernel k = i % 2 ? Conv(8 + rng() % 80, 5 + rng() % 60, 12 + rng() % 60) : Add(4 + rng() % 70, 5 + rng() % 60);
    Expected<Prediction> a = fit->pack.Predict(k), b = loaded->Predict(k);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->ms, b->ms) << k.Key();
    EXPECT_EQ(a->spread_ms, b->spread_ms);
    EXPECT_EQ(a->source, b->source);
    EXPECT_EQ(a->outside_training_range, b->outside_training_range);
  }
  std::filesystem::remove_all(dir);
}

TEST(PackTest, GzippedPackLoadsTheSameAndDamageIsAnError) {
  Expected<FitResult> fit = FitPack(Samples(), Info(), SmallFit());
  ASSERT_TRUE(fit.ok());
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("latte_pack_gz_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string plain = (dir / "p.json").string(), packed = (dir / "p.json.gz").string();
  ASSERT_TRUE(fit->pack.Save(plain).ok());
  ASSERT_TRUE(fit->pack.Save(packed).ok());
  auto read = [](const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  const std::string gz = read(packed);
  ASSERT_GE(gz.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(gz[0]), 0x1f);
  EXPECT_LT(gz.size(), read(plain).size());
  Expected<Pack> loaded = Pack::Load(packed);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->Dump(), fit->pack.Dump());
  // Truncated: one line naming the file, no crash.
  std::ofstream(packed, std::ios::binary | std::ios::trunc) << gz.substr(0, gz.size() / 2);
  Expected<Pack> truncated = Pack::Load(packed);
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.status().message().find(packed + ": truncated gzip data"), std::string::npos)
      << truncated.status().message();
  std::filesystem::remove_all(dir);
}

TEST(PackTest, LoadErrorsNameTheFileAndTheProblem) {
  Expected<Pack> missing = Pack::Load("/nonexistent/pack.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/nonexistent/pack.json"), std::string::npos);
  nlohmann::json json = FitPack(Samples(), Info(), SmallFit())->pack.ToJson();
  json["feature_version"] = kFeatureVersion + 1;
  Expected<Pack> newer = Pack::FromJson(json);
  ASSERT_FALSE(newer.ok());
  EXPECT_NE(newer.status().message().find("feature version"), std::string::npos);
  json["feature_version"] = kFeatureVersion;
  json["kinds"]["add"]["predictors"]["gbdt"]["trees"] = "not trees";
  Expected<Pack> damaged = Pack::FromJson(json);
  ASSERT_FALSE(damaged.ok());
  EXPECT_NE(damaged.status().message().find("kind add"), std::string::npos) << damaged.status().message();
  EXPECT_FALSE(Pack::FromJson(nlohmann::json::array()).ok());
  json["kinds"] = FitPack(Samples(), Info(), SmallFit())->pack.ToJson()["kinds"];
  json["reference"] = {{"kernel", "conv2d|ic=32|float32"}, {"p50_us", 48.0}, {"readings", 9}, {"spread", -0.5}};
  Expected<Pack> bad_spread = Pack::FromJson(json);
  ASSERT_FALSE(bad_spread.ok());
  EXPECT_NE(bad_spread.status().message().find("spread"), std::string::npos) << bad_spread.status().message();
  json["reference"].erase("spread");  // packs made before the spread was kept
  Expected<Pack> older = Pack::FromJson(json);
  ASSERT_TRUE(older.ok()) << older.status().message();
  EXPECT_EQ(older->info.reference_spread, 0);
  // The share of the reference's changes followed: absent in older packs (in full), and only 0–1.
  EXPECT_EQ(older->info.reference_follow, 1);
  EXPECT_FALSE(older->ToJson()["reference"].contains("follow"));  // in full: not written
  for (const nlohmann::json& follow : {nlohmann::json(1.5), nlohmann::json(-0.1), nlohmann::json("half")}) {
    json["reference"]["follow"] = follow;
    Expected<Pack> bad_follow = Pack::FromJson(json);
    ASSERT_FALSE(bad_follow.ok()) << follow;
    EXPECT_NE(bad_follow.status().message().find("follow"), std::string::npos) << bad_follow.status().message();
  }
}

// A hostile or damaged pack is refused on loading, naming the field, in plain words; what loading
// cannot rule out (tree sums that overflow) makes a kernel unpredictable, never an infinite time.
TEST(PackTest, ImpossibleValuesAreRefusedNamingTheField) {
  // gbdt the one tree ensemble (a pack keeps only the better of gbdt and forest): the damage below
  // is done to it.
  FitOptions options = SmallFit();
  options.predictors = {"interp", "gbdt", "traffic", "roofline"};
  const nlohmann::json good = FitPack(Samples(), Info(), options)->pack.ToJson();
  ASSERT_TRUE(Pack::FromJson(good).ok());
  auto refused = [&](const std::function<void(nlohmann::json&)>& damage, const std::string& expected) {
    nlohmann::json json = good;
    damage(json);
    Expected<Pack> pack = Pack::FromJson(json);
    if (pack.ok()) return std::string("accepted");
    const std::string& message = pack.status().message();
    if (message.find("json.exception") != std::string::npos) return "library text: " + message;
    return message.find(expected) != std::string::npos ? std::string("ok") : message;
  };
  EXPECT_EQ(refused([](auto& j) { j["threads"] = -5; }, "threads: -5 is not a thread count in 0..1024"), "ok");
  EXPECT_EQ(refused([](auto& j) { j["backend"]["takes_nhwc"] = "yes"; }, "backend: takes_nhwc is not true or false"), "ok");
  EXPECT_EQ(refused([](auto& j) { j["threads"] = 0; }, ""), "accepted");  // unknown: an imported table's pack
  EXPECT_EQ(refused([](auto& j) { j["threads"] = 1e300; }, "threads: "), "ok");
  EXPECT_EQ(refused([](auto& j) { j["precision"] = "fp64"; }, "precision: unknown precision 'fp64'"), "ok");
  EXPECT_EQ(refused([](auto& j) { j["precision"] = "fp16"; }, ""), "accepted");  // a TensorRT FP16 table's pack
  EXPECT_EQ(refused([](auto& j) { j["kinds"] = nlohmann::json::array(); }, "kinds: not an object"), "ok");
  EXPECT_EQ(refused([](auto& j) { j["device"] = nullptr; }, "device: not an object"), "ok");
  EXPECT_EQ(refused([](auto& j) { j["fusion_rules"] = {"nonsense+foo"}; }, "fusion_rules: "), "ok");
  EXPECT_EQ(refused([](auto& j) { j["backend"] = "xnnpack"; }, "malformed pack: "), "ok");
  EXPECT_EQ(refused([](auto& j) { j.erase("backend"); }, "malformed pack: key 'backend' not found"), "ok");
  EXPECT_EQ(refused([](auto& j) { j["kinds"]["add"]["predictors"]["table"]["entries"][0][1] = -1e308; },
                    "table: entry 'add|"),
            "ok");
  EXPECT_EQ(refused([](auto& j) { j["kinds"]["add"]["predictors"]["gbdt"]["relative_spread"] = -5; },
                    "gbdt: field 'relative_spread' is negative"),
            "ok");
  EXPECT_EQ(refused([](auto& j) { j["kinds"]["add"]["ranges"]["params"]["a1"] = {56, 7}; }, "min > max"), "ok");
  // A float where an integer belongs, or a number beyond a float, is refused: converting it is
  // undefined behaviour (found by scripts/fuzz pack: a tree's child index of 1.67e109).
  EXPECT_EQ(refused([](auto& j) { j["kinds"]["add"]["predictors"]["gbdt"]["trees"][0]["left"][0] = 1.66667e109; },
                    "gbdt: a tree's left children must be a whole number in -1..2147483647"),
            "ok");
  EXPECT_EQ(refused([](auto& j) { j["kinds"]["add"]["predictors"]["gbdt"]["trees"][0]["value"][0] = 1e300; },
                    "gbdt: a tree's values must hold finite numbers a float can hold"),
            "ok");
  EXPECT_EQ(refused([](auto& j) { j["kinds"]["add"]["ranges"]["params"]["a1"][0] = 1e300; }, "range of 'a1' must be"),
            "ok");
  EXPECT_EQ(refused([](auto& j) { j["format_version"] = 1e300; }, "format_version must be a whole number"), "ok");
  EXPECT_EQ(refused([](auto& j) { j["feature_version"] = 2.5; }, "feature_version must be a whole number"), "ok");
  // Counts are whole numbers ≥ 0: -5 is not wrapped to 2^64 − 5, 2.5 not truncated.
  EXPECT_EQ(refused([](auto& j) { j["kinds"]["add"]["samples"] = -5; },
                    "kind add: field 'samples' is not a count (a whole number ≥ 0)"),
            "ok");
  const nlohmann::json reference = {{"kernel", "conv2d|ic=32|float32"}, {"p50_us", 48.0}, {"readings", 9}};
  EXPECT_EQ(refused([&](auto& j) { j["reference"] = reference; }, ""), "accepted");  // made before drift correction
  EXPECT_EQ(refused([&](auto& j) { (j["reference"] = reference)["readings"] = 2.5; }, "reference: field 'readings'"), "ok");
  EXPECT_EQ(refused([&](auto& j) { (j["reference"] = reference)["corrected"] = -1; }, "reference: field 'corrected'"),
            "ok");
  EXPECT_EQ(refused([&](auto& j) { (j["reference"] = reference)["corrected"] = "all"; }, "reference: field 'corrected'"),
            "ok");
  // The traffic predictor of the kind that kept it; a roofline, of a pack of rooflines alone.
  std::string traffic = "(none)";
  for (const auto& [kind, model] : good["kinds"].items())
    if (model["predictors"].contains("traffic")) traffic = kind;
  EXPECT_EQ(refused([&](auto& j) { j["kinds"][traffic]["predictors"]["traffic"]["per_byte_ms"] = -1; },
                    "traffic: field 'per_byte_ms' is negative"),
            "ok");
  EXPECT_EQ(refused([&](auto& j) { j["kinds"][traffic]["predictors"]["traffic"].erase("cache_bytes"); },
                    "traffic: missing field 'cache_bytes'"),
            "ok");

  FitOptions rooflines = SmallFit();
  rooflines.predictors = {"roofline"};
  nlohmann::json roofline = FitPack(Samples(), Info(), rooflines)->pack.ToJson();
  roofline["kinds"]["add"]["predictors"]["roofline"]["bandwidth_gbs"] = 0;
  EXPECT_EQ(Pack::FromJson(roofline).status().message(),
            "kind add: roofline: efficiency, peak_gflops and bandwidth_gbs must be > 0");

  nlohmann::json overflowing = good;
  overflowing["kinds"]["add"]["predictors"]["gbdt"]["base_score"] = 1e308;  // finite, but exp() of it is not
  overflowing["kinds"]["add"]["order"] = {"gbdt"};
  Expected<Pack> pack = Pack::FromJson(overflowing);
  ASSERT_TRUE(pack.ok()) << pack.status().message();
  Expected<Prediction> predicted = pack->Predict(Add(12, 9));  // not in the table
  ASSERT_FALSE(predicted.ok());
  EXPECT_NE(predicted.status().message().find("the pack's gbdt predictor gave inf ms"), std::string::npos)
      << predicted.status().message();
}

TEST(AccuracyTest, SelectionCapsEachErrorAt100Percent) {
  std::vector<double> predicted = {1.1, 150.0, 0.5}, measured = {1.0, 1.0, 1.0};
  EXPECT_NEAR(SelectionRmspePct(predicted, measured), 100 * std::sqrt((0.01 + 1.0 + 0.25) / 3), 1e-9);
  EXPECT_EQ(SelectionRmspePct({}, {}), 0);
}

TEST(AccuracyTest, KnownValues) {
  std::vector<double> predicted = {1.0, 1.04, 1.2, 0.5}, measured = {1.0, 1.0, 1.0, 1.0};
  AccuracyMetrics m = ComputeAccuracy(predicted, measured);
  EXPECT_EQ(m.n, 4u);
  EXPECT_NEAR(m.rmspe_pct, 100 * std::sqrt((0.0016 + 0.04 + 0.25) / 4), 1e-9);
  EXPECT_EQ(m.within5_pct, 50);
  EXPECT_EQ(m.within10_pct, 50);
}

TEST(PackTest, InterpolationAnswersInsideItsGridOnlyWhenATreeModelFollows) {
  // A square grid: a non-square kernel lies outside interpolation's grid (iw always equalled ih).
  std::vector<TrainingSample> samples;
  for (const TrainingSample& s : Samples())
    if (s.kernel.op == OpKind::kConv2D) samples.push_back(s);
  Pack pack;
  KindModel model;
  model.kind = "conv2d+relu";
  auto interp = MakePredictor("interp", PredictorOptions{});
  auto gbdt = MakePredictor("gbdt", PredictorOptions{});
  ASSERT_TRUE(interp.ok() && gbdt.ok());
  ASSERT_TRUE((*interp)->Fit(samples).ok());
  ASSERT_TRUE((*gbdt)->Fit(samples).ok());
  model.fitted["interp"] = std::move(*interp);
  model.order = {"interp"};
  pack.kinds["conv2d+relu"] = std::move(model);
  Kernel wide = Conv(16, 14, 32);
  wide.params["iw"] = 56;
  Kernel inside = Conv(24, 20, 32);
  // Interpolation alone: it answers, flagged.
  Expected<Prediction> alone = pack.Predict(wide, 1);
  ASSERT_TRUE(alone.ok()) << alone.status().message();
  EXPECT_EQ(alone->source, PredictionSource::kInterpolation);
  EXPECT_TRUE(alone->outside_training_range);
  // With trees after it: inside the grid interpolation, outside it the trees.
  pack.kinds["conv2d+relu"].fitted["gbdt"] = std::move(*gbdt);
  pack.kinds["conv2d+relu"].order = {"interp", "gbdt"};
  EXPECT_EQ(pack.Predict(inside, 1)->source, PredictionSource::kInterpolation);
  Expected<Prediction> tree = pack.Predict(wide, 1);
  ASSERT_TRUE(tree.ok()) << tree.status().message();
  EXPECT_EQ(tree->source, PredictionSource::kTrees);
}

TEST(PackTest, AStreamingKernelInterpolationDeclinesIsExtrapolatedInBytesNotHeldAtTheTreesEdge) {
  // Adds of 7..56 px maps cost 1 us + 0.1 ns an element. One of 112 px is beyond interpolation's
  // grid: the traffic model, after the trees, answers it (0.001 + 1e-7 * 64 * 112 * 112 ms). A
  // conv outside its grid still goes to the trees (the test above).
  std::vector<TrainingSample> adds;
  for (const TrainingSample& s : Samples())
    if (s.kernel.op == OpKind::kAdd) adds.push_back(s);
  Pack pack;
  KindModel& add = pack.kinds["add"];
  add.kind = "add";
  for (const char* name : {"interp", "gbdt", "traffic"}) {
    auto predictor = MakePredictor(name, PredictorOptions{});
    ASSERT_TRUE(predictor.ok());
    ASSERT_TRUE((*predictor)->Fit(adds).ok()) << name;
    add.fitted[name] = std::move(*predictor);
  }
  add.order = {"interp", "gbdt", "traffic"};
  Expected<Prediction> inside = pack.Predict(Add(24, 20), 1);
  ASSERT_TRUE(inside.ok()) << inside.status().message();
  EXPECT_EQ(inside->source, PredictionSource::kInterpolation);
  Expected<Prediction> beyond = pack.Predict(Add(64, 112), 1);
  ASSERT_TRUE(beyond.ok()) << beyond.status().message();
  EXPECT_EQ(beyond->source, PredictionSource::kTraffic);
  EXPECT_TRUE(beyond->outside_training_range);
  EXPECT_NEAR(beyond->ms, 0.001 + 1e-7 * 64 * 112 * 112, 1e-4);
  // Without the traffic model the trees answer.
  add.order = {"interp", "gbdt"};
  add.fitted.erase("traffic");
  Expected<Prediction> trees = pack.Predict(Add(64, 112), 1);
  ASSERT_TRUE(trees.ok()) << trees.status().message();
  EXPECT_EQ(trees->source, PredictionSource::kTrees);
}

}  // namespace
}  // namespace latte
