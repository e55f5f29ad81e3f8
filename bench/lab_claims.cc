// The lab's database side under many workers: N threads, each with its own connection (as N
// machines would have), claim and complete empty jobs (no kernels: what is left is the queue's
// own cost: a claim with FOR UPDATE SKIP LOCKED under a lease, and a completion's transaction)
// until none is left. Prints jobs per second; asserts nothing.
//
// Usage: lab_claims URL [WORKERS=50] [JOBS=20000]   (URL: an empty PostgreSQL database)
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "db/campaign_key.h"
#include "db/lab_queue.h"
#include "db/store.h"

using namespace latte;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: lab_claims URL [WORKERS=50] [JOBS=20000]\n");
    return 2;
  }
  const std::string url = argv[1];
  const int workers = argc > 2 ? std::atoi(argv[2]) : 50;
  const int job_count = argc > 3 ? std::atoi(argv[3]) : 20000;
  auto store = Store::Open(url);
  if (!store.ok()) {
    std::fprintf(stderr, "error: %s\n", store.status().message().c_str());
    return 2;
  }
  auto queue = LabQueue::Of(*store);
  if (!queue.ok()) {
    std::fprintf(stderr, "error: %s\n", queue.status().message().c_str());
    return 2;
  }
  LabSubmission submission;
  submission.device_class = "bench";
  submission.backend = "none";
  submission.settings = MeasureSettings(0, 1, 0);
  submission.space = "{\"empty_jobs\":" + std::to_string(job_count) + "}";
  const auto submit_start = std::chrono::steady_clock::now();
  Kernel reference;  // stored once with the submission, as a real campaign's drift reference is
  reference.op = OpKind::kRelu;
  reference.params = {{"n", 1}, {"h", 1}, {"w", 1}, {"c", 1}};
  auto submitted =
      queue->Submit(submission, std::vector<std::vector<Kernel>>(static_cast<std::size_t>(job_count)), reference);
  if (!submitted.ok()) {
    std::fprintf(stderr, "error: %s\n", submitted.status().message().c_str());
    return 2;
  }
  const double submit_secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - submit_start).count();

  std::atomic<long> completed{0}, refused{0}, claims{0};
  std::mutex mutex;
  std::string error;
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      auto fail = [&](const std::string& why) {
        std::lock_guard lock(mutex);
        if (error.empty()) error = why;
      };
      auto mine = Store::Open(url);
      if (!mine.ok()) {
        ++ready;
        return fail(mine.status().message());
      }
      auto q = LabQueue::Of(*mine);
      const std::string name = "sim-" + std::to_string(w);
      auto device = mine->UpsertDevice({name, name, "{}"});
      ++ready;
      if (!q.ok() || !device.ok()) return fail("setup failed");
      while (!go.load()) std::this_thread::yield();
      LabJobResults results;  // empty: nothing measured
      results.device_id = *device;
      while (true) {
        auto claim = q->Claim(name, *device, "bench", 60);
        if (!claim.ok()) return fail(claim.status().message());
        if (!claim->has_value()) return;
        ++claims;
        auto done = q->Complete(**claim, results);
        if (!done.ok()) return fail(done.status().message());
        ++(*done ? completed : refused);
      }
    });
  }
  while (ready.load() < workers) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const auto start = std::chrono::steady_clock::now();
  go = true;
  for (std::thread& t : threads) t.join();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!error.empty()) {
    std::fprintf(stderr, "error: %s\n", error.c_str());
    return 1;
  }
  std::printf("submitted %d empty jobs in %.2f s\n", job_count, submit_secs);
  std::printf("%d workers: %ld jobs claimed and completed (%ld refused) in %.2f s = %.0f jobs/s\n", workers,
              completed.load(), refused.load(), secs, static_cast<double>(completed.load()) / secs);
  return completed.load() == job_count ? 0 : 1;
}
