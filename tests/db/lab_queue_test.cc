// The lab's job queue against a throwaway PostgreSQL server: leases run out and jobs move on, a
// completion after a takeover is refused and stores nothing, a job whose workers keep dying is
// failed, the status counts are exact, many workers at once complete every job exactly once, and a
// SQLite file is refused in one line.
#include "db/lab_queue.h"

#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "../cli/run_latte.h"
#include "db/campaign_key.h"
#include "postgres_server.h"

namespace latte {
namespace {

using latte::testing::PostgresServer;
using latte::testing::SharedPostgresServer;
using latte::testing::TempDir;

Kernel Relu(std::int64_t c) {
  Kernel kernel;
  kernel.op = OpKind::kRelu;
  kernel.params = {{"n", 1}, {"h", 8}, {"w", 8}, {"c", c}};
  return kernel;
}

// `count` kernels in jobs of `size`.
std::vector<std::vector<Kernel>> Jobs(int count, int size) {
  std::vector<std::vector<Kernel>> jobs;
  for (int i = 0; i < count; ++i) {
    if (i % size == 0) jobs.emplace_back();
    jobs.back().push_back(Relu(i + 1));
  }
  return jobs;
}

LabSubmission Submission(const std::string& device_class = "epyc") {
  LabSubmission s;
  s.device_class = device_class;
  s.backend = "xnnpack";
  s.threads = 1;
  s.precision = "fp32";
  s.settings = MeasureSettings(1, 3, 0);
  s.space = R"({"strategy":"test"})";
  return s;
}

void Sleep(double secs) { std::this_thread::sleep_for(std::chrono::duration<double>(secs)); }

class LabQueueTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!SharedPostgresServer().running()) GTEST_SKIP() << SharedPostgresServer().why_not();
    url_ = SharedPostgresServer().CreateDatabase();
    ASSERT_FALSE(url_.empty());
    auto store = Store::Open(url_);
    ASSERT_TRUE(store.ok()) << store.status().message();
    store_.emplace(std::move(store).value());
    auto queue = LabQueue::Of(*store_);
    ASSERT_TRUE(queue.ok()) << queue.status().message();
    queue_.emplace(std::move(queue).value());
  }
  std::int64_t Device(const std::string& key) {
    auto id = store_->UpsertDevice({key, key, "{}"});
    EXPECT_TRUE(id.ok());
    return id.ok() ? *id : 0;
  }
  // The device's campaign of a submission, as a worker makes it.
  std::int64_t Campaign(const LabSubmission& s, const std::string& device) {
    auto info = store_->FindOrCreateCampaign(
        {std::string(kLabCampaign), s.backend, s.threads, s.precision, LabCampaignSettings(s.settings, device, s.device_class), s.space});
    EXPECT_TRUE(info.ok()) << info.status().message();
    return info.ok() ? info->id : 0;
  }
  // What a worker would write for `claim`: one measurement per kernel.
  LabJobResults Results(const LabClaim& claim, std::int64_t device, std::int64_t campaign) {
    LabJobResults results;
    results.device_id = device;
    auto backend = store_->UpsertBackend({"xnnpack", "test", 1, "fp32"});
    EXPECT_TRUE(backend.ok());
    results.backend_id = *backend;
    results.campaign_id = campaign;
    for (const Kernel& kernel : claim.kernels) {
      MeasurementRecord record;
      record.kernel = kernel;
      record.stats.n = 3;
      record.stats.p50 = 10;
      record.campaign = campaign;
      results.measurements.push_back(record);
    }
    return results;
  }
  std::string Count(const std::string& sql) { return PostgresServer::Query(url_, sql); }

  std::string url_;
  std::optional<Store> store_;
  std::optional<LabQueue> queue_;
};

TEST_F(LabQueueTest, SubmittingTwiceFindsTheSameJobs) {
  auto first = queue_->Submit(Submission(), Jobs(10, 4), Relu(99));
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_TRUE(first->created);
  EXPECT_EQ(first->submission.jobs, 3);
  EXPECT_EQ(first->submission.kernels, 10);
  auto again = queue_->Submit(Submission(), Jobs(10, 4), Relu(99));
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->submission.id, first->submission.id);
  EXPECT_EQ(again->requeued, 0);
  EXPECT_EQ(Count("SELECT count(*) FROM lab_jobs"), "3\n");
  EXPECT_EQ(Count("SELECT count(*) FROM kernels"), "11\n");  // the reference too
  auto other_class = queue_->Submit(Submission("pixel"), Jobs(2, 4), Relu(99));
  ASSERT_TRUE(other_class.ok());
  EXPECT_TRUE(other_class->created);
  EXPECT_NE(other_class->submission.id, first->submission.id);
}

TEST_F(LabQueueTest, ALeaseRunsOutAndTheJobMovesOnAndTheLateCompletionIsRefused) {
  auto submitted = queue_->Submit(Submission(), Jobs(4, 2), Relu(99));
  ASSERT_TRUE(submitted.ok()) << submitted.status().message();
  const std::int64_t a = Device("dev-a"), b = Device("dev-b");
  const std::int64_t campaign_a = Campaign(submitted->submission, "dev-a"),
                     campaign_b = Campaign(submitted->submission, "dev-b");

  auto slow = queue_->Claim("a:1", a, "", 0.5);
  ASSERT_TRUE(slow.ok() && slow->has_value()) << slow.status().message();
  auto other = queue_->Claim("b:1", b, "", 30);
  ASSERT_TRUE(other.ok() && other->has_value());
  EXPECT_NE((*other)->job, (*slow)->job);  // a held job is not handed out again
  EXPECT_EQ((*slow)->kernels.size(), 2u);
  auto nothing = queue_->Claim("b:1", b, "", 30);
  ASSERT_TRUE(nothing.ok());
  EXPECT_FALSE(nothing->has_value());
  auto outstanding = queue_->Outstanding("");
  ASSERT_TRUE(outstanding.ok());
  EXPECT_EQ(outstanding->claimed, 2);
  EXPECT_EQ(outstanding->claimable, 0);
  EXPECT_GT(outstanding->next_expiry_secs, 0);
  EXPECT_LE(outstanding->next_expiry_secs, 0.5);

  Sleep(0.7);  // a's lease runs out by the server's clock
  auto taken = queue_->Claim("b:1", b, "", 30);
  ASSERT_TRUE(taken.ok() && taken->has_value());
  EXPECT_EQ((*taken)->job, (*slow)->job);
  EXPECT_EQ((*taken)->attempt, 2);

  auto renewed = queue_->Renew(**slow, 30);
  ASSERT_TRUE(renewed.ok());
  EXPECT_FALSE(*renewed);  // a learns it lost the job
  auto late = queue_->Complete(**slow, Results(**slow, a, campaign_a));
  ASSERT_TRUE(late.ok()) << late.status().message();
  EXPECT_FALSE(*late);
  EXPECT_EQ(Count("SELECT count(*) FROM measurements"), "0\n");  // nothing of a's stored

  auto done = queue_->Complete(**taken, Results(**taken, b, campaign_b));
  ASSERT_TRUE(done.ok() && *done) << done.status().message();
  auto twice = queue_->Complete(**taken, Results(**taken, b, campaign_b));
  ASSERT_TRUE(twice.ok());
  EXPECT_FALSE(*twice);  // a retried completion stores nothing more
  EXPECT_EQ(Count("SELECT count(*) FROM measurements"), "2\n");
  EXPECT_EQ(Count("SELECT d.key FROM measurements m JOIN devices d ON d.id = m.device_id GROUP BY d.key"), "dev-b\n");
  EXPECT_EQ(Count("SELECT done FROM campaigns WHERE id = " + std::to_string(campaign_b)), "2\n");
}

TEST_F(LabQueueTest, AJobWhoseWorkersKeepDyingFailsAndASubmitQueuesItAgain) {
  auto submitted = queue_->Submit(Submission(), Jobs(1, 1), Relu(99));
  ASSERT_TRUE(submitted.ok());
  const std::int64_t a = Device("dev-a");
  for (int attempt = 1; attempt <= kLabMaxAttempts; ++attempt) {
    auto claim = queue_->Claim("a:" + std::to_string(attempt), a, "", 0.2);
    ASSERT_TRUE(claim.ok() && claim->has_value()) << attempt;
    EXPECT_EQ((*claim)->attempt, attempt);
    Sleep(0.3);  // the worker died: no renewal, no completion
  }
  auto none = queue_->Claim("a:9", a, "", 0.2);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  auto outstanding = queue_->Outstanding("");
  ASSERT_TRUE(outstanding.ok());
  EXPECT_EQ(outstanding->claimed + outstanding->claimable, 0);  // a worker stops, it does not wait
  auto status = queue_->ReadStatus();
  ASSERT_TRUE(status.ok()) << status.status().message();
  ASSERT_EQ(status->submissions.size(), 1u);
  EXPECT_EQ(status->submissions[0].counts.failed, 1);
  EXPECT_EQ(status->submissions[0].counts.left, 0);

  auto again = queue_->Submit(Submission(), Jobs(1, 1), Relu(99));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->requeued, 1);
  auto claim = queue_->Claim("a:10", a, "", 5);
  ASSERT_TRUE(claim.ok() && claim->has_value());
  EXPECT_EQ((*claim)->attempt, 1);
}

TEST_F(LabQueueTest, AWorkerSkipsTheCampaignsItCannotMeasureAndGivesTheJobBack) {
  auto first = queue_->Submit(Submission(), Jobs(2, 1), Relu(99));
  auto second = queue_->Submit(Submission("pixel"), Jobs(1, 1), Relu(99));
  ASSERT_TRUE(first.ok() && second.ok());
  const std::int64_t a = Device("dev-a");
  auto claim = queue_->Claim("a:1", a, "", 30);
  ASSERT_TRUE(claim.ok() && claim->has_value());
  EXPECT_EQ((*claim)->submission, first->submission.id);
  ASSERT_TRUE(queue_->Release(**claim).ok());  // its backend is not here
  const std::vector<std::int64_t> skip = {first->submission.id};
  auto other = queue_->Claim("a:1", a, "", 30, skip);
  ASSERT_TRUE(other.ok() && other->has_value());
  EXPECT_EQ((*other)->submission, second->submission.id);
  LabJobResults nothing;
  nothing.device_id = a;
  auto completed = queue_->Complete(**other, nothing);
  ASSERT_TRUE(completed.ok() && *completed) << completed.status().message();
  auto outstanding = queue_->Outstanding("", skip);
  ASSERT_TRUE(outstanding.ok());
  EXPECT_EQ(outstanding->claimable + outstanding->claimed, 0);  // this worker is done
  auto everyone = queue_->Outstanding("");
  ASSERT_TRUE(everyone.ok());
  EXPECT_EQ(everyone->claimable, 2);  // the released job is queued again, its attempt given back
  auto again = queue_->Claim("b:1", Device("dev-b"), "", 30);
  ASSERT_TRUE(again.ok() && again->has_value());
  EXPECT_EQ((*again)->job, (*claim)->job);
  EXPECT_EQ((*again)->attempt, 1);
}

TEST_F(LabQueueTest, StatusCountsAreExact) {
  auto epyc = queue_->Submit(Submission(), Jobs(12, 2), Relu(99));  // 6 jobs
  auto pixel = queue_->Submit(Submission("pixel"), Jobs(3, 2), Relu(99));  // 2 jobs
  ASSERT_TRUE(epyc.ok() && pixel.ok());
  const std::int64_t a = Device("dev-a"), b = Device("dev-b");
  const std::int64_t campaign_a = Campaign(epyc->submission, "dev-a"), campaign_b = Campaign(epyc->submission, "dev-b");
  // epyc: a completes 2 jobs, b completes 1 and holds 1, a fails 1, 1 stays queued.
  for (int i = 0; i < 2; ++i) {
    auto claim = queue_->Claim("a:1", a, "epyc", 30);
    ASSERT_TRUE(claim.ok() && claim->has_value());
    ASSERT_TRUE(queue_->Complete(**claim, Results(**claim, a, campaign_a)).ok());
  }
  auto b_done = queue_->Claim("b:1", b, "epyc", 30);
  ASSERT_TRUE(b_done.ok() && b_done->has_value());
  LabJobResults b_results = Results(**b_done, b, campaign_b);
  b_results.unsupported.emplace_back(b_results.measurements.back().kernel, "not here");
  b_results.measurements.pop_back();
  ASSERT_TRUE(queue_->Complete(**b_done, b_results).ok());
  auto b_held = queue_->Claim("b:1", b, "epyc", 30);
  ASSERT_TRUE(b_held.ok() && b_held->has_value());
  auto a_failed = queue_->Claim("a:1", a, "epyc", 30);
  ASSERT_TRUE(a_failed.ok() && a_failed->has_value());
  ASSERT_TRUE(queue_->Fail(**a_failed, "backend exploded").ok());
  // pixel: nobody of that class came; an epyc-only worker never takes its jobs.
  auto status = queue_->ReadStatus();
  ASSERT_TRUE(status.ok()) << status.status().message();
  ASSERT_EQ(status->submissions.size(), 2u);
  const LabCounts& e = status->submissions[0].counts;
  EXPECT_EQ(e.jobs, 6);
  EXPECT_EQ(e.done, 3);
  EXPECT_EQ(e.claimed, 1);
  EXPECT_EQ(e.failed, 1);
  EXPECT_EQ(e.left, 1);
  EXPECT_EQ(e.kernels_done, 6);
  EXPECT_EQ(e.measured, 5);
  EXPECT_EQ(e.unsupported, 1);
  EXPECT_EQ(status->submissions[0].errors, std::vector<std::string>{"backend exploded"});
  const LabCounts& p = status->submissions[1].counts;
  EXPECT_EQ(p.jobs, 2);
  EXPECT_EQ(p.left, 2);
  EXPECT_EQ(p.done + p.claimed + p.failed, 0);
  ASSERT_EQ(status->devices.size(), 2u);
  EXPECT_EQ(status->devices[0].device, "dev-a");
  EXPECT_EQ(status->devices[0].counts.done, 2);
  EXPECT_EQ(status->devices[0].counts.failed, 1);
  EXPECT_EQ(status->devices[0].counts.claimed, 0);
  EXPECT_EQ(status->devices[0].counts.measured, 4);
  EXPECT_EQ(status->devices[1].device, "dev-b");
  EXPECT_EQ(status->devices[1].counts.done, 1);
  EXPECT_EQ(status->devices[1].counts.claimed, 1);
  EXPECT_EQ(status->devices[1].counts.measured, 1);
  EXPECT_EQ(status->devices[1].counts.unsupported, 1);
  EXPECT_EQ(Count("SELECT count(*) FROM unsupported"), "1\n");
}

TEST_F(LabQueueTest, ManyWorkersAtOnceCompleteEveryJobExactlyOnce) {
  constexpr int kJobs = 120, kWorkers = 6;
  auto submitted = queue_->Submit(Submission(), Jobs(kJobs, 1), Relu(999));
  ASSERT_TRUE(submitted.ok());
  std::mutex mutex;
  std::multiset<std::int64_t> completed;
  std::vector<std::string> errors;
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&, w] {
      auto store = Store::Open(url_);  // one connection each, as separate machines have
      if (!store.ok()) {
        std::lock_guard lock(mutex);
        errors.push_back(store.status().message());
        return;
      }
      auto queue = LabQueue::Of(*store);
      const std::string name = "dev-" + std::to_string(w);
      auto device = store->UpsertDevice({name, name, "{}"});
      auto backend = store->UpsertBackend({"xnnpack", "test", 1, "fp32"});
      LabSubmission s = submitted->submission;
      auto campaign = store->FindOrCreateCampaign(
          {std::string(kLabCampaign), s.backend, s.threads, s.precision, LabCampaignSettings(s.settings, name, s.device_class), s.space});
      if (!queue.ok() || !device.ok() || !backend.ok() || !campaign.ok()) {
        std::lock_guard lock(mutex);
        errors.push_back("setup failed");
        return;
      }
      while (true) {
        auto claim = queue->Claim(name, *device, "", 30);
        if (!claim.ok()) {
          std::lock_guard lock(mutex);
          errors.push_back(claim.status().message());
          return;
        }
        if (!claim->has_value()) return;
        LabJobResults results;
        results.device_id = *device;
        results.backend_id = *backend;
        results.campaign_id = campaign->id;
        for (const Kernel& k : (*claim)->kernels) {
          MeasurementRecord r;
          r.kernel = k;
          r.stats.n = 1;
          r.stats.p50 = 1;
          r.campaign = campaign->id;
          results.measurements.push_back(r);
        }
        auto done = queue->Complete(**claim, results);
        std::lock_guard lock(mutex);
        if (!done.ok()) errors.push_back(done.status().message());
        else if (*done) completed.insert((*claim)->job);
      }
    });
  }
  for (std::thread& t : workers) t.join();
  EXPECT_TRUE(errors.empty()) << errors.front();
  EXPECT_EQ(completed.size(), static_cast<std::size_t>(kJobs));
  EXPECT_EQ(std::set<std::int64_t>(completed.begin(), completed.end()).size(), static_cast<std::size_t>(kJobs));
  EXPECT_EQ(Count("SELECT count(*) FROM measurements"), std::to_string(kJobs) + "\n");
  EXPECT_EQ(Count("SELECT count(DISTINCT kernel_id) FROM measurements"), std::to_string(kJobs) + "\n");
}

TEST(LabQueue, AVersionFourServerStoreGainsTheLabTablesKeepingItsRows) {
  if (!SharedPostgresServer().running()) GTEST_SKIP() << SharedPostgresServer().why_not();
  const std::string url = SharedPostgresServer().CreateDatabase();
  {
    auto old = Store::Open(url, {.schema_version = 4});
    ASSERT_TRUE(old.ok()) << old.status().message();
    ASSERT_TRUE(old->UpsertDevice({"dev-a", "dev-a", "{}"}).ok());
    auto status = LabQueue::Of(*old);
    ASSERT_TRUE(status.ok());
    auto read = status->ReadStatus();  // no lab tables yet: nothing submitted, no error
    ASSERT_TRUE(read.ok()) << read.status().message();
    EXPECT_TRUE(read->submissions.empty());
  }
  auto store = Store::Open(url);
  ASSERT_TRUE(store.ok()) << store.status().message();
  EXPECT_EQ(*store->SchemaVersion(), kStoreSchemaVersion);  // through 5 (the lab's tables) and on
  EXPECT_EQ(PostgresServer::Query(url, "SELECT key FROM devices"), "dev-a\n");
  auto queue = LabQueue::Of(*store);
  ASSERT_TRUE(queue.ok());
  auto submitted = queue->Submit(Submission(), Jobs(3, 2), Relu(99));
  ASSERT_TRUE(submitted.ok()) << submitted.status().message();
  EXPECT_EQ(submitted->submission.jobs, 2);
}

TEST(LabQueue, ASqliteFileIsRefusedInOneLine) {
  TempDir dir;
  const std::string path = (dir.path() / "lab.db").string();
  const Status refused = LabQueue::CheckServer(path);
  EXPECT_EQ(refused.code(), StatusCode::kInvalidInput);
  EXPECT_EQ(refused.message().rfind(path + ": latte lab needs a PostgreSQL store (--db postgresql://...), because ", 0), 0u)
      << refused.message();
  EXPECT_EQ(refused.message().find('\n'), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(path));
  auto store = Store::Open(path);
  ASSERT_TRUE(store.ok());
  EXPECT_FALSE(LabQueue::Of(*store).ok());
}

}  // namespace
}  // namespace latte
