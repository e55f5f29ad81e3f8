// An int8 pack holds kernels of both precisions: its int8 kernels are fitted and looked up apart
// from the fp32 kernels of the same kind ("conv2d|int8" beside "conv2d").
#include <gtest/gtest.h>

#include "predict/fit.h"
#include "predict/pack.h"
#include "profile/space.h"

namespace latte {
namespace {

TEST(ModelKind, AnInt8KernelsKindSaysInt8AndReadsBack) {
  Kernel conv = ConvKernel(OpKind::kConv2D, 14, 14, 16, 32, 3, 1);
  EXPECT_EQ(ModelKind(conv), "conv2d");
  conv.dtype = DataType::kInt8;
  conv.fused = {OpKind::kRelu6};
  EXPECT_EQ(ModelKind(conv), "conv2d+relu6|int8");
  auto back = ParseModelKind("conv2d+relu6|int8");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->op, OpKind::kConv2D);
  EXPECT_EQ(back->fused, std::vector<OpKind>{OpKind::kRelu6});
  EXPECT_EQ(back->dtype, DataType::kInt8);
  EXPECT_EQ(ParseModelKind("conv2d")->dtype, DataType::kFloat32);
  EXPECT_FALSE(ParseModelKind("conv2d|int4").ok());
  // A bf16 pack's kernels likewise.
  Kernel bf16 = ConvKernel(OpKind::kConv2D, 14, 14, 16, 32, 3, 1);
  bf16.dtype = DataType::kBFloat16;
  EXPECT_EQ(ModelKind(bf16), "conv2d|bf16");
  EXPECT_EQ(ParseModelKind("conv2d|bf16")->dtype, DataType::kBFloat16);
  // Other dtypes share their kind's models, as before.
  Kernel reshape = NhwcKernel(OpKind::kReshape, 4, 4, 8);
  reshape.dtype = DataType::kInt64;
  EXPECT_EQ(ModelKind(reshape), "reshape");
}

TEST(ModelKind, APackFitsInt8AndFp32KernelsOfAKindApartAndPredictsEachFromItsOwn) {
  std::vector<TrainingSample> samples;
  for (std::int64_t c : {8, 16, 32, 64})
    for (std::int64_t h : {7, 14, 28}) {
      Kernel k = ConvKernel(OpKind::kConv2D, h, h, c, c, 3, 1);
      const double fp32_ms = 1e-6 * static_cast<double>(c * c * h * h);
      samples.push_back({k, 1, fp32_ms, 0});
      k.dtype = DataType::kInt8;
      samples.push_back({k, 1, fp32_ms / 4, 0});  // int8: four times as fast
    }
  PackInfo info;
  info.backend = "xnnpack";
  info.precision = "int8";
  FitOptions options;
  options.folds = 3;
  options.predictor.gbdt.trees = 20;
  options.predictor.forest.trees = 10;
  auto fit = FitPack(samples, info, options);
  ASSERT_TRUE(fit.ok()) << fit.status().message();
  ASSERT_EQ(fit->pack.kinds.size(), 2u);
  EXPECT_EQ(fit->pack.kinds.count("conv2d"), 1u);
  EXPECT_EQ(fit->pack.kinds.count("conv2d|int8"), 1u);
  EXPECT_EQ(fit->pack.kinds.at("conv2d|int8").samples, 12u);
  // Table hits, each from its own kind.
  Kernel k = ConvKernel(OpKind::kConv2D, 14, 14, 16, 16, 3, 1);
  EXPECT_DOUBLE_EQ(fit->pack.Predict(k)->ms, 1e-6 * 16 * 16 * 14 * 14);
  k.dtype = DataType::kInt8;
  EXPECT_DOUBLE_EQ(fit->pack.Predict(k)->ms, 1e-6 * 16 * 16 * 14 * 14 / 4);
  // The pack reads back with its int8 kind.
  auto loaded = Pack::FromJson(fit->pack.ToJson());
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_DOUBLE_EQ(loaded->Predict(k)->ms, 1e-6 * 16 * 16 * 14 * 14 / 4);
  // Off the table, the int8 kind's fitted models answer in the int8 range (well under fp32's).
  Kernel between = ConvKernel(OpKind::kConv2D, 20, 20, 24, 24, 3, 1);
  between.dtype = DataType::kInt8;
  auto predicted = loaded->Predict(between);
  ASSERT_TRUE(predicted.ok()) << predicted.status().message();
  EXPECT_NE(predicted->source, PredictionSource::kTableHit);
  EXPECT_LT(predicted->ms, 0.6 * 1e-6 * 24 * 24 * 20 * 20);
}

}  // namespace
}  // namespace latte
