#include "profile/campaign.h"

#include <gtest/gtest.h>

#include <sstream>

#include "../run/toy_backends.h"
#include "core/progress.h"
#include "run/xnnpack/xnnpack_backend.h"
#include "profile/space.h"

namespace latte {
namespace {

// Records what a campaign reports, and can fail on the n-th measurement.
class Recorder : public MeasurementListener {
 public:
  Status OnStart(const CampaignStart& s) override {
    start = s;
    return Status::Ok();
  }
  Status OnMeasured(const Kernel& kernel, const Measurement& m) override {
    if (fail_at > 0 && measured.size() + 1 == fail_at) return IoError("store.db: disk full");
    measured.push_back(kernel.Key());
    EXPECT_GT(m.stats.n, 0u);
    return Status::Ok();
  }
  Status OnUnsupported(const Kernel& kernel, std::string_view why) override {
    unsupported.push_back({kernel.Key(), std::string(why)});
    return Status::Ok();
  }
  Status OnReference(const Kernel&, const Measurement&) override {
    ++references;
    return Status::Ok();
  }
  Status OnFinish(const CampaignSummary& s) override {
    finished = true;
    summary = s;
    return Status::Ok();
  }
  CampaignStart start;
  std::vector<std::string> measured;
  std::vector<std::pair<std::string, std::string>> unsupported;
  int references = 0;
  bool finished = false;
  std::size_t fail_at = 0;
  CampaignSummary summary;
};

class CampaignTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RegisterToyBackends(registry_, false);
    Kernel relu;
    relu.op = OpKind::kRelu;
    auto grid = GridKernels(relu, "default");
    ASSERT_TRUE(grid.ok());
    kernels_.assign(grid->begin(), grid->begin() + 4);
    Kernel sigmoid = kernels_[0];
    sigmoid.op = OpKind::kSigmoid;
    kernels_.push_back(sigmoid);  // the relu-only backend cannot run it
    options_.backend = "relu-only";
    options_.measure.num_runs = 3;
    options_.measure.min_secs = 0;
    options_.measure.min_warmup_secs = 0;
    options_.measure.warmup_runs = 1;
    options_.reference_every = 0;
  }
  BackendRegistry registry_;
  std::vector<Kernel> kernels_;
  CampaignOptions options_;
};

TEST_F(CampaignTest, MeasuresRunnableKernelsAndRecordsTheRestWithWhy) {
  Recorder recorder;
  auto summary = RunCampaign(kernels_, {}, options_, registry_, {&recorder});
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->planned, 5u);
  EXPECT_EQ(summary->measured, 4u);
  EXPECT_EQ(summary->unsupported, 1u);
  EXPECT_EQ(summary->remaining, 0u);
  EXPECT_TRUE(summary->complete());
  ASSERT_EQ(recorder.measured.size(), 4u);
  EXPECT_EQ(recorder.measured[0], kernels_[0].Key());
  ASSERT_EQ(recorder.unsupported.size(), 1u);
  EXPECT_EQ(recorder.unsupported[0].first, kernels_[4].Key());
  EXPECT_NE(recorder.unsupported[0].second.find("sigmoid is not relu"), std::string::npos) << recorder.unsupported[0].second;
  EXPECT_TRUE(recorder.finished);
  EXPECT_EQ(recorder.start.backend_version, "1.0 threads=1");
}

TEST_F(CampaignTest, SkipsKernelsAlreadyDone) {
  Recorder recorder;
  std::set<std::string> done = {kernels_[1].Key(), kernels_[4].Key()};
  auto summary = RunCampaign(kernels_, done, options_, registry_, {&recorder});
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->already_done, 2u);
  EXPECT_EQ(summary->measured, 3u);
  EXPECT_EQ(summary->unsupported, 0u);  // recorded before: never retried
  EXPECT_EQ(recorder.start.already_done, 2u);
  EXPECT_EQ(recorder.measured, (std::vector<std::string>{kernels_[0].Key(), kernels_[2].Key(), kernels_[3].Key()}));
}

TEST_F(CampaignTest, StopsWhenTheBudgetIsSpent) {
  double now = 0;
  options_.clock = [&now] { return now += 1; };  // every look at the clock: one second later
  options_.budget_secs = 3;
  Recorder recorder;
  auto summary = RunCampaign(kernels_, {}, options_, registry_, {&recorder});
  ASSERT_TRUE(summary.ok());
  // Start at 1; before kernel 1: 2 (1 s spent), kernel 2: 3 (2 s), kernel 3: 4 (3 s: spent).
  EXPECT_EQ(summary->measured, 2u);
  EXPECT_TRUE(summary->budget_spent);
  EXPECT_EQ(summary->remaining, 3u);
  EXPECT_FALSE(summary->complete());
  EXPECT_TRUE(recorder.finished);  // listeners still hear the end (the store writer flushes there)
}

TEST_F(CampaignTest, StopFlagEndsBeforeTheNextKernel) {
  std::atomic<bool> stop{true};
  options_.stop = &stop;
  Recorder recorder;
  auto summary = RunCampaign(kernels_, {}, options_, registry_, {&recorder});
  ASSERT_TRUE(summary.ok());
  EXPECT_TRUE(summary->interrupted);
  EXPECT_EQ(summary->measured, 0u);
  EXPECT_EQ(summary->remaining, 5u);
}

TEST_F(CampaignTest, FailingListenerStopsTheCampaignWithItsError) {
  Recorder recorder;
  recorder.fail_at = 2;
  auto summary = RunCampaign(kernels_, {}, options_, registry_, {&recorder});
  ASSERT_FALSE(summary.ok());
  EXPECT_EQ(summary.status().code(), StatusCode::kIoError);
  EXPECT_EQ(recorder.measured.size(), 1u);
}

TEST_F(CampaignTest, ReferenceKernelTheBackendCannotRunIsSaidNotHidden) {
  options_.reference_every = 2;
  Recorder recorder;
  auto summary = RunCampaign(kernels_, {}, options_, registry_, {&recorder});
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->references, 0u);
  EXPECT_EQ(recorder.references, 0);
  EXPECT_NE(summary->reference_error.find("conv2d"), std::string::npos) << summary->reference_error;
}

TEST_F(CampaignTest, UnknownBackendAndBadOptionsFail) {
  options_.backend = "nope";
  EXPECT_FALSE(RunCampaign(kernels_, {}, options_, registry_, {}).ok());
  options_.backend = "relu-only";
  options_.measure.num_runs = 0;
  EXPECT_FALSE(RunCampaign(kernels_, {}, options_, registry_, {}).ok());
}

TEST(WithoutRunCosts, TakesTheRunCostOffEveryTimeThenTheLayoutShare) {
  Measurement m;
  m.samples_us = {10, 12, 14, 1};
  m.first_us = 30;
  m.warmup_avg_us = 12;
  m.stats = Summarize(m.samples_us);
  const Measurement got = WithoutRunCosts(m, 2, 0.25);
  EXPECT_EQ(got.samples_us, (std::vector<double>{6, 7.5, 9, 0}));  // (t - 2) * 0.75, never below 0
  EXPECT_DOUBLE_EQ(got.first_us, 21);
  EXPECT_DOUBLE_EQ(got.warmup_avg_us, 7.5);
  EXPECT_DOUBLE_EQ(got.stats.p50, Summarize(got.samples_us).p50);
  EXPECT_EQ(got.stats.n, 4u);
}

// Blocks of (one-node, two-node) medians: each block's 2·one − two, the median of those, so one
// block a busy host slowed under the one-node chain (the third) does not set the cost.
TEST(RunCostFromBlocks, IsTheMedianBlocksEstimateNeverBelowZero) {
  EXPECT_DOUBLE_EQ(RunCostFromBlocks({{10, 15}, {11, 16}, {30, 15}}), 6);  // estimates 5, 6, 45
  EXPECT_DOUBLE_EQ(RunCostFromBlocks({{10, 15}, {4, 15}, {5, 15}}), 0);    // 5, 0 (not −7), 0 (not −5)
  EXPECT_DOUBLE_EQ(RunCostFromBlocks({{10, 12}, {10, 16}}), 6);            // 8 and 4: their mean
  EXPECT_DOUBLE_EQ(RunCostFromBlocks({}), 0);
}

TEST_F(CampaignTest, ABackendOfSingleNodesHasNoRunCostToTakeOff) {
  Expected<double> cost = WholeGraphRunCostUs("relu-only", registry_, RunOptions{});
  ASSERT_TRUE(cost.ok()) << cost.status().message();
  EXPECT_EQ(*cost, 0.0);
}

// Runs anything in no time and remembers the shape of the first input it was given.
class ShapeRecordingBackend : public Backend {
 public:
  explicit ShapeRecordingBackend(Shape* seen) : seen_(seen) {}
  std::string_view Name() const override { return "recording"; }
  std::string Version() const override { return "1"; }
  Support Supports(const Graph&, NodeId) const override { return Support::Yes(); }
  Expected<std::unique_ptr<PreparedNode>> Prepare(const Graph& graph, NodeId node) override {
    *seen_ = graph.tensor(graph.node(node).inputs[0]).shape;
    struct Nothing : PreparedNode {
      Status Run(TensorBuffers&) override { return Status::Ok(); }
    };
    return std::unique_ptr<PreparedNode>(new Nothing);
  }

 private:
  Shape* seen_;
};

// A squeeze-and-excite multiply (key in NHWC terms) measured on a backend that takes NHWC runs as
// its key says; on one that keeps the file's layout (ONNX Runtime, which runs a model's images
// NCHW) it runs NCHW, as in a model.
TEST(MeasureKernel, RunsImagesNchwOnABackendThatKeepsTheFilesLayout) {
  const Kernel se = BroadcastBinaryKernel(OpKind::kMul, 12, 16, 8, 'b', true);
  MeasureOptions measure;
  measure.num_runs = 1, measure.warmup_runs = 0, measure.min_secs = 0, measure.min_warmup_secs = 0;
  for (bool takes_nhwc : {true, false}) {
    Shape seen;
    BackendRegistry registry;
    ASSERT_TRUE(registry
                    .Register({"recording", "",
                               [&seen](const RunOptions&) -> Expected<std::unique_ptr<Backend>> {
                                 return std::unique_ptr<Backend>(new ShapeRecordingBackend(&seen));
                               },
                               takes_nhwc})
                    .ok());
    auto m = MeasureKernel(se, "recording", registry, RunOptions{}, measure);
    ASSERT_TRUE(m.ok()) << m.status().message();
    EXPECT_EQ(seen, takes_nhwc ? (Shape{1, 12, 16, 8}) : (Shape{1, 8, 12, 16})) << takes_nhwc;
  }
}

// At int8 a kernel is measured as its parts (the int8 kernel and the conversions at its edges):
// the listeners hear of each part, and the progress bar counts the campaign's kernels.
TEST(CampaignInt8, ProgressCountsKernelsWhileListenersHearEveryPart) {
  BackendRegistry registry;
  RegisterXnnpackBackend(registry);
  CampaignOptions options;
  options.run.precision = Precision::kInt8;
  options.measure = {.warmup_runs = 1, .min_warmup_secs = 0, .num_runs = 3, .min_secs = 0};
  options.reference_every = 0;
  const std::vector<Kernel> kernels = {ConvKernel(OpKind::kConv2D, 8, 8, 8, 8, 3, 1),
                                       ConvKernel(OpKind::kConv2D, 8, 8, 8, 16, 1, 1)};
  std::ostringstream out;
  Progress progress(out, 0, ProgressOptions{.label = "profile", .every_items = 1});
  ProgressListener bar(progress);
  Recorder recorder;
  auto summary = RunCampaign(kernels, {}, options, registry, {&bar, &recorder});
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_GT(recorder.measured.size(), kernels.size());  // quantize, conv2d int8, dequantize...
  EXPECT_EQ(progress.done(), kernels.size());
  EXPECT_NE(out.str().find("profile 2/2"), std::string::npos) << out.str();
}

TEST(CampaignDefaults, ReferenceIsTheDocumentedConv) {
  const Kernel ref = ReferenceKernel();
  EXPECT_EQ(ref.Kind(), "conv2d");
  EXPECT_EQ(ref.Param("kh"), 3);
  EXPECT_EQ(ref.Param("ic"), 32);
  EXPECT_EQ(ref.Param("oc"), 32);
  EXPECT_EQ(ref.Param("ih"), 28);
  EXPECT_EQ(ref.Param("pt"), 1);
  EXPECT_TRUE(KernelMeasureOptions().Validate().ok());
  EXPECT_EQ(KernelMeasureOptions().num_runs, 20);
}

}  // namespace
}  // namespace latte
