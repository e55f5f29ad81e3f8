#include "profile/store_writer.h"

#include <gtest/gtest.h>

#include "../cli/run_latte.h"
#include "profile/space.h"
#include "../test_campaigns.h"

namespace latte {
namespace {

Measurement Fake(double p50) {
  Measurement m;
  m.stats.n = 20;
  m.stats.p0 = m.stats.p10 = m.stats.p50 = m.stats.p90 = m.stats.p100 = m.stats.mean = p50;
  return m;
}

class StoreWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = Store::Open((dir_.path() / "s.db").string());
    ASSERT_TRUE(store.ok()) << store.status().message();
    store_.emplace(std::move(store).value());
    auto campaign = store_->FindOrCreateCampaign(TestCampaignKey("latte profile --test", "{}"), 3);
    ASSERT_TRUE(campaign.ok());
    campaign_ = campaign->id;
    Kernel relu;
    relu.op = OpKind::kRelu;
    kernels_ = *GridKernels(relu, "default");
    start_.backend = "toy";
    start_.backend_version = "1.0";
    start_.planned = 3;
  }
  testing::TempDir dir_;
  std::optional<Store> store_;
  std::int64_t campaign_ = 0;
  std::vector<Kernel> kernels_;
  CampaignStart start_;
};

TEST_F(StoreWriterTest, BatchesMeasurementsAndFlushesAtTheEnd) {
  double now = 0;
  StoreWriter writer(*store_, campaign_, {"dev", "a device", "{}"}, {2, 1000, [&now] { return now; }});
  ASSERT_TRUE(writer.OnStart(start_).ok());
  ASSERT_TRUE(writer.OnMeasured(kernels_[0], Fake(10)).ok());
  EXPECT_EQ(store_->QueryMeasurements()->size(), 0u);  // batch of 2 not full yet
  ASSERT_TRUE(writer.OnMeasured(kernels_[1], Fake(20)).ok());
  EXPECT_EQ(store_->QueryMeasurements()->size(), 2u);
  ASSERT_TRUE(writer.OnMeasured(kernels_[2], Fake(30)).ok());
  ASSERT_TRUE(writer.OnUnsupported(kernels_[3], "toy cannot").ok());
  CampaignSummary summary;
  summary.planned = 4;
  summary.measured = 3;
  summary.unsupported = 1;
  ASSERT_TRUE(writer.OnFinish(summary).ok());
  auto rows = store_->QueryMeasurements();
  ASSERT_TRUE(rows.ok());
  ASSERT_EQ(rows->size(), 3u);
  EXPECT_EQ((*rows)[2].kernel, kernels_[2]);
  EXPECT_DOUBLE_EQ((*rows)[2].stats.p50, 30);
  EXPECT_EQ((*rows)[0].backend.name, "toy");
  EXPECT_EQ((*rows)[0].device.key, "dev");
  EXPECT_EQ(writer.stored(), 3u);
  auto done = store_->CampaignDoneKeys(campaign_);
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->size(), 4u);
  EXPECT_TRUE(done->count(kernels_[3].Key()));
  auto campaigns = store_->ListCampaigns();
  ASSERT_TRUE(campaigns.ok());
  ASSERT_EQ(campaigns->size(), 1u);
  EXPECT_EQ((*campaigns)[0].status, "done");
  EXPECT_EQ((*campaigns)[0].done, 4);
}

TEST_F(StoreWriterTest, FlushesAfterTheDelayEvenWithAPartialBatch) {
  double now = 0;
  StoreWriter writer(*store_, campaign_, {"dev", "a device", "{}"}, {100, 2, [&now] { return now; }});
  ASSERT_TRUE(writer.OnStart(start_).ok());
  ASSERT_TRUE(writer.OnMeasured(kernels_[0], Fake(10)).ok());
  EXPECT_EQ(store_->QueryMeasurements()->size(), 0u);
  now = 2.5;
  ASSERT_TRUE(writer.OnMeasured(kernels_[1], Fake(10)).ok());
  EXPECT_EQ(store_->QueryMeasurements()->size(), 2u);
}

TEST_F(StoreWriterTest, UnfinishedCampaignIsMarkedStoppedAndReferencesAreKept) {
  StoreWriter writer(*store_, campaign_, {"dev", "a device", "{}"});
  ASSERT_TRUE(writer.OnStart(start_).ok());
  ASSERT_TRUE(writer.OnReference(ReferenceKernel(), Fake(123)).ok());
  CampaignSummary summary;
  summary.planned = 3;
  summary.remaining = 3;
  summary.budget_spent = true;
  ASSERT_TRUE(writer.OnFinish(summary).ok());
  EXPECT_EQ((*store_->ListCampaigns())[0].status, "stopped");
  auto refs = store_->ListReferences(campaign_);
  ASSERT_TRUE(refs.ok());
  ASSERT_EQ(refs->size(), 1u);
  EXPECT_DOUBLE_EQ((*refs)[0].p50_us, 123);
  EXPECT_EQ((*refs)[0].kernel_key, ReferenceKernel().Key());
}

}  // namespace
}  // namespace latte
