// At --precision int8 a campaign measures what an int8 model is made of (LoweredKernels): each
// sampled kernel's int8 form and the conversions at its edges, or the kernel at fp32 where XNNPACK
// keeps its kind fp32; each part once, in its key's dtype. At --precision bf16 likewise what a bf16
// model is made of: each sampled kernel's bf16 form and the casts from and to float32 at its edges,
// from one bf16 run of the kernel on oneDNN.
#include <gtest/gtest.h>

#include <algorithm>

#include "ir/kernel_params.h"
#include "profile/campaign.h"
#include "profile/space.h"
#include "run/onednn/onednn_backend.h"
#include "run/xnnpack/xnnpack_backend.h"

namespace latte {
namespace {

// `kernel`'s parts on `backend` (LoweredKernels, into `parts`) and one MeasureLoweredKernels of
// them all: every part in its order, each with a time.
void ExpectEveryPartTimedInOneRun(const Kernel& kernel, const std::string& backend, const BackendRegistry& registry,
                                  const RunOptions& run, const MeasureOptions& measure, std::vector<Kernel>& parts) {
  auto lowered = LoweredKernels(kernel, backend, registry, run);
  ASSERT_TRUE(lowered.ok()) << lowered.status().message();
  parts = *lowered;
  auto measured = MeasureLoweredKernels(kernel, [](const Kernel&) { return true; }, backend, registry, run, measure);
  ASSERT_TRUE(measured.ok()) << measured.status().message();
  ASSERT_EQ(measured->size(), parts.size());
  for (std::size_t i = 0; i < parts.size(); ++i) {
    EXPECT_EQ((*measured)[i].kernel.Key(), parts[i].Key());
    ASSERT_TRUE((*measured)[i].measurement.ok()) << parts[i].Key() << ": " << (*measured)[i].measurement.status().message();
    EXPECT_GT((*measured)[i].measurement->stats.p50, 0) << parts[i].Key();
  }
}

class Int8CampaignTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterXnnpackBackend(registry_);
    run_.precision = Precision::kInt8;
    measure_.num_runs = 3;
    measure_.min_secs = 0;
    measure_.min_warmup_secs = 0;
    measure_.warmup_runs = 1;
    measure_.max_remeasures = 0;
  }
  BackendRegistry registry_;
  RunOptions run_;
  MeasureOptions measure_;
};

TEST_F(Int8CampaignTest, AConvIsItsInt8FormBetweenAQuantizeAndADequantize) {
  const Kernel conv = ConvKernel(OpKind::kConv2D, 8, 8, 4, 8, 3, 1);
  auto parts = LoweredKernels(conv, "xnnpack", registry_, run_);
  ASSERT_TRUE(parts.ok()) << parts.status().message();
  ASSERT_EQ(parts->size(), 3u);
  EXPECT_EQ((*parts)[0].Key(), "quantize|c=4,h=8,n=1,w=8|float32");
  Kernel int8 = conv;
  int8.dtype = DataType::kInt8;
  EXPECT_EQ((*parts)[1].Key(), int8.Key());
  EXPECT_EQ((*parts)[2].Key(), "dequantize|c=8,h=8,n=1,w=8|int8");
  // An int8 kernel or a conversion is itself.
  auto same = LoweredKernels((*parts)[1], "xnnpack", registry_, run_);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(*same, std::vector<Kernel>{(*parts)[1]});
}

TEST_F(Int8CampaignTest, AKindXnnpackKeepsFp32IsItself) {
  const Kernel hswish = NhwcKernel(OpKind::kHardSwish, 8, 8, 16);
  auto parts = LoweredKernels(hswish, "xnnpack", registry_, run_);
  ASSERT_TRUE(parts.ok()) << parts.status().message();
  EXPECT_EQ(*parts, std::vector<Kernel>{hswish});
}

// A model's real scales can keep an add fp32 (XNNPACK's scale ratio limits): an add's parts are
// its int8 form with the conversions, and the add itself at fp32 last.
TEST_F(Int8CampaignTest, AnAddIsItsInt8FormAndItselfAtFp32) {
  const Kernel add = BinaryKernel(OpKind::kAdd, 8, 8, 16);
  auto parts = LoweredKernels(add, "xnnpack", registry_, run_);
  ASSERT_TRUE(parts.ok()) << parts.status().message();
  std::vector<std::string> keys;
  for (const Kernel& part : *parts) keys.push_back(part.Key());
  Kernel int8 = add;
  int8.dtype = DataType::kInt8;
  ASSERT_GE(parts->size(), 3u);
  EXPECT_NE(std::find(keys.begin(), keys.end(), int8.Key()), keys.end());
  EXPECT_EQ(keys.back(), add.Key());
  EXPECT_EQ(std::count(keys.begin(), keys.end(), add.Key()), 1);
}

TEST_F(Int8CampaignTest, EachPartIsMeasuredInItsKeysDtype) {
  const Kernel conv = ConvKernel(OpKind::kConv2D, 8, 8, 4, 8, 3, 1);
  auto parts = LoweredKernels(conv, "xnnpack", registry_, run_);
  ASSERT_TRUE(parts.ok()) << parts.status().message();
  for (const Kernel& part : *parts) {
    auto m = MeasureKernel(part, "xnnpack", registry_, run_, measure_);
    ASSERT_TRUE(m.ok()) << part.Key() << ": " << m.status().message();
    EXPECT_GT(m->stats.p50, 0) << part.Key();
  }
  // Not buildable alone: a conversion is measured at int8 only.
  RunOptions fp32;
  auto alone = MeasureKernel((*parts)[0], "xnnpack", registry_, fp32, measure_);
  ASSERT_FALSE(alone.ok());
  EXPECT_NE(alone.status().message().find("measured at --precision int8 only"), std::string::npos) << alone.status().message();
}

// The int8 form and its conversions come from one run, each its share of it: every part as
// LoweredKernels gives it, in its order, each with a time; a part not wanted is not measured.
TEST_F(Int8CampaignTest, OneRunMeasuresTheInt8FormAndItsConversions) {
  const Kernel conv = ConvKernel(OpKind::kConv2D, 8, 8, 4, 8, 3, 1);
  std::vector<Kernel> parts;
  ExpectEveryPartTimedInOneRun(conv, "xnnpack", registry_, run_, measure_, parts);
  ASSERT_FALSE(HasFatalFailure());
  const std::string int8_key = parts.at(1).Key();
  auto conversions = MeasureLoweredKernels(conv, [&](const Kernel& k) { return k.Key() != int8_key; }, "xnnpack",
                                             registry_, run_, measure_);
  ASSERT_TRUE(conversions.ok()) << conversions.status().message();
  ASSERT_EQ(conversions->size(), 2u);
  EXPECT_EQ((*conversions)[0].kernel.op, OpKind::kQuantize);
  EXPECT_EQ((*conversions)[1].kernel.op, OpKind::kDequantize);
  // A kind XNNPACK keeps fp32 is measured alone, at fp32; an add also gives its fp32 self, last.
  const Kernel hswish = NhwcKernel(OpKind::kHardSwish, 8, 8, 16);
  auto kept = MeasureLoweredKernels(hswish, [](const Kernel&) { return true; }, "xnnpack", registry_, run_, measure_);
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  ASSERT_EQ(kept->size(), 1u);
  EXPECT_EQ((*kept)[0].kernel.Key(), hswish.Key());
  EXPECT_TRUE((*kept)[0].measurement.ok());
  const Kernel add = BinaryKernel(OpKind::kAdd, 8, 8, 16);
  auto add_parts = MeasureLoweredKernels(add, [](const Kernel&) { return true; }, "xnnpack", registry_, run_, measure_);
  ASSERT_TRUE(add_parts.ok()) << add_parts.status().message();
  ASSERT_GE(add_parts->size(), 3u);
  EXPECT_EQ(add_parts->back().kernel.Key(), add.Key());
  for (const MeasuredPart& part : *add_parts) EXPECT_TRUE(part.measurement.ok()) << part.kernel.Key();
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

TEST_F(Int8CampaignTest, ACampaignMeasuresEachPartOnceAndSkipsWhatIsDone) {
  // Two convs of one input shape share their quantize; the hard_swish stays fp32.
  const std::vector<Kernel> kernels = {ConvKernel(OpKind::kConv2D, 8, 8, 4, 8, 3, 1),
                                       ConvKernel(OpKind::kConv2D, 8, 8, 4, 8, 1, 1), NhwcKernel(OpKind::kHardSwish, 8, 8, 16)};
  CampaignOptions options;
  options.run = run_;
  options.measure = measure_;
  options.reference_every = 0;
  Keys keys;
  const std::set<std::string> done = {"dequantize|c=8,h=8,n=1,w=8|int8"};  // an earlier run's
  auto summary = RunCampaign(kernels, done, options, registry_, {&keys});
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_TRUE(keys.unsupported.empty()) << keys.unsupported.front();
  Kernel conv3 = kernels[0], conv1 = kernels[1];
  conv3.dtype = conv1.dtype = DataType::kInt8;
  EXPECT_EQ(keys.measured, (std::vector<std::string>{"quantize|c=4,h=8,n=1,w=8|float32", conv3.Key(), conv1.Key(),
                                                     kernels[2].Key()}));
  EXPECT_EQ(summary->measured, 4u);
}

TEST_F(Int8CampaignTest, ABackendWithoutInt8FailsTheCampaignOnce) {
  BackendRegistry registry;
  RegisterXnnpackBackend(registry);
  CampaignOptions options;
  options.run.precision = Precision::kBf16;  // XNNPACK has no bf16 operators
  options.reference_every = 0;
  Keys keys;
  auto summary = RunCampaign({NhwcKernel(OpKind::kRelu, 4, 4, 8)}, {}, options, registry, {&keys});
  ASSERT_FALSE(summary.ok());
  EXPECT_NE(summary.status().message().find("bf16 unsupported on xnnpack"), std::string::npos) << summary.status().message();
}

// A random network in context is measured layer by layer alone, its input's quantize too, in the
// int8 run of a carrier of its shape (a relu, or a max pool where a backend has no int8 clamp):
// both conversions come out on both backends.
TEST_F(Int8CampaignTest, EachConversionIsMeasuredAloneOnXnnpackAndOnednn) {
  BackendRegistry registry;
  RegisterXnnpackBackend(registry);
  RegisterOnednnBackend(registry);
  for (const char* backend : {"xnnpack", "onednn"}) {
    for (const char* key : {"quantize|c=16,h=12,n=1,w=12|float32", "dequantize|c=16,h=12,n=1,w=12|int8"}) {
      auto kernel = ParseKernelKey(key);
      ASSERT_TRUE(kernel.ok()) << kernel.status().message();
      auto m = MeasureKernel(*kernel, backend, registry, run_, measure_);
      ASSERT_TRUE(m.ok()) << backend << ", " << key << ": " << m.status().message();
      EXPECT_GT(m->stats.p50, 0) << backend << ", " << key;
    }
  }
}

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
  std::vector<Kernel> parts;
  ExpectEveryPartTimedInOneRun(conv, "onednn", registry_, run_, measure_, parts);
  ASSERT_FALSE(HasFatalFailure());
  for (const Kernel& part : parts) {
    auto alone = MeasureKernel(part, "onednn", registry_, run_, measure_);
    ASSERT_TRUE(alone.ok()) << part.Key() << ": " << alone.status().message();
    EXPECT_GT(alone->stats.p50, 0) << part.Key();
  }
}

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
