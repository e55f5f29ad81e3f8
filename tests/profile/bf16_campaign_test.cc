// At --precision bf16 a campaign measures what a bf16 model is made of (LoweredKernels): each
// sampled kernel's bf16 form and the casts from and to float32 at its edges, each part once, in
// its key's dtype, from one bf16 run of the kernel on oneDNN.
#include <gtest/gtest.h>

#include "ir/kernel_params.h"
#include "profile/campaign.h"
#include "profile/space.h"
#include "run/onednn/onednn_backend.h"

namespace latte {
namespace {

class Bf16CampaignTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (Support bf16 = OnednnBf16Support(); !bf16.ok())
      GTEST_SKIP() << "this CPU cannot run oneDNN's bf16 primitives: " << bf16.why();
    RegisterOnednnBackend(registry_);
    run_.precision = Precision::kBf16;
    measure_.num_runs = 3;
    measure_.min_secs = 0;
    measure_.min_warmup_secs = 0;
    measure_.warmup_runs = 1;
    measure_.max_remeasures = 0;
  }
  static Kernel Bf16(Kernel k) {
    k.dtype = DataType::kBFloat16;
    return k;
  }
  static std::string Cast(int h, int w, int c, DataType from, DataType to) {
    Kernel cast;
    cast.op = OpKind::kCast;
    cast.dtype = from;
    WriteParams(CastKernelParams{{1, h, w, c}, static_cast<std::int64_t>(to)}, cast);
    return cast.Key();
  }
  BackendRegistry registry_;
  RunOptions run_;
  MeasureOptions measure_;
};

TEST_F(Bf16CampaignTest, AConvIsItsBf16FormBetweenTwoCasts) {
  const Kernel conv = ConvKernel(OpKind::kConv2D, 8, 8, 4, 8, 3, 1);
  auto parts = LoweredKernels(conv, "onednn", registry_, run_);
  ASSERT_TRUE(parts.ok()) << parts.status().message();
  ASSERT_EQ(parts->size(), 3u);
  EXPECT_EQ((*parts)[0].Key(), Cast(8, 8, 4, DataType::kFloat32, DataType::kBFloat16));
  EXPECT_EQ((*parts)[1].Key(), Bf16(conv).Key());
  EXPECT_EQ((*parts)[2].Key(), Cast(8, 8, 8, DataType::kBFloat16, DataType::kFloat32));
  // A bf16 kernel or an edge cast is itself.
  for (const Kernel& part : *parts) {
    auto same = LoweredKernels(part, "onednn", registry_, run_);
    ASSERT_TRUE(same.ok()) << part.Key();
    EXPECT_EQ(*same, std::vector<Kernel>{part});
  }
}

TEST_F(Bf16CampaignTest, OneRunMeasuresEachPartAndEachPartMeasuresAlone) {
  const Kernel conv = ConvKernel(OpKind::kConv2D, 8, 8, 4, 8, 3, 1);
  auto parts = LoweredKernels(conv, "onednn", registry_, run_);
  ASSERT_TRUE(parts.ok()) << parts.status().message();
  auto measured = MeasureLoweredKernels(conv, [](const Kernel&) { return true; }, "onednn", registry_, run_, measure_);
  ASSERT_TRUE(measured.ok()) << measured.status().message();
  ASSERT_EQ(measured->size(), parts->size());
  for (std::size_t i = 0; i < parts->size(); ++i) {
    EXPECT_EQ((*measured)[i].kernel.Key(), (*parts)[i].Key());
    ASSERT_TRUE((*measured)[i].measurement.ok()) << (*parts)[i].Key() << ": " << (*measured)[i].measurement.status().message();
    EXPECT_GT((*measured)[i].measurement->stats.p50, 0) << (*parts)[i].Key();
    auto alone = MeasureKernel((*parts)[i], "onednn", registry_, run_, measure_);
    ASSERT_TRUE(alone.ok()) << (*parts)[i].Key() << ": " << alone.status().message();
    EXPECT_GT(alone->stats.p50, 0) << (*parts)[i].Key();
  }
}

// Records the keys a campaign reports.
class Keys : public MeasurementListener {
 public:
  Status OnMeasured(const Kernel& kernel, const Measurement&) override {
    measured.push_back(kernel.Key());
    return Status::Ok();
  }
  Status OnUnsupported(const Kernel& kernel, std::string_view why) override {
    unsupported.push_back(kernel.Key() + ": " + std::string(why));
    return Status::Ok();
  }
  std::vector<std::string> measured, unsupported;
};

TEST_F(Bf16CampaignTest, ACampaignMeasuresEachPartOnce) {
  // Two convs of one input and one output shape share their casts.
  const std::vector<Kernel> kernels = {ConvKernel(OpKind::kConv2D, 8, 8, 4, 8, 3, 1),
                                       ConvKernel(OpKind::kConv2D, 8, 8, 4, 8, 1, 1)};
  CampaignOptions options;
  options.backend = "onednn";
  options.run = run_;
  options.measure = measure_;
  options.reference_every = 0;
  Keys keys;
  auto summary = RunCampaign(kernels, {}, options, registry_, {&keys});
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_TRUE(keys.unsupported.empty()) << keys.unsupported.front();
  EXPECT_EQ(keys.measured, (std::vector<std::string>{Cast(8, 8, 4, DataType::kFloat32, DataType::kBFloat16),
                                                     Bf16(kernels[0]).Key(),
                                                     Cast(8, 8, 8, DataType::kBFloat16, DataType::kFloat32),
                                                     Bf16(kernels[1]).Key()}));
}

}  // namespace
}  // namespace latte
