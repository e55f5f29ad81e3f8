#pragma once
// Work handed out by the database: a lab campaign submitted for a class of devices is cut into jobs
// (batches of kernels) that workers on many machines claim, measure and complete. A claim takes one
// job with SELECT ... FOR UPDATE SKIP LOCKED (workers never wait on each other's jobs) under a lease
// that the server's clock times, never a worker's: a worker that dies or hangs stops renewing it, and
// once it runs out the job goes to the next worker that asks. A completion writes the job's
// measurements and marks it done in one transaction, and only while the claim is still the job's
// latest: a worker whose job was taken over is refused, so no job is measured twice into a campaign.
//
// Needs a PostgreSQL store: a SQLite file has neither row locks nor one clock for many machines.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "db/store.h"
#include "ir/kernel.h"

namespace latte {

/// A job whose lease ran out this many times (its workers died or hung on it each time) is failed
/// instead of handed out again: a kernel that kills its worker must not kill the whole lab.
inline constexpr int kLabMaxAttempts = 3;

/// What a lab campaign measures, as submitted: a class of devices and a campaign's configuration.
/// (device_class, backend, threads, precision, settings, space) identify it: submitting it again
/// finds it (and queues its failed jobs again) instead of adding jobs.
struct LabSubmission {
  std::int64_t id = 0;
  std::string device_class;
  std::string backend;
  int threads = 1;
  std::string precision = "fp32";
  std::string settings;  // MeasureSettings(...) JSON
  std::string space;     // the sampler's config space, JSON
  std::string created;   // ISO 8601 UTC
  std::int64_t jobs = 0;
  std::int64_t kernels = 0;
};

struct LabSubmitResult {
  LabSubmission submission;
  bool created = false;        // false: submitted before (found again)
  std::int64_t requeued = 0;   // failed jobs queued again by this submit
};

/// A job a worker holds. `attempt` tells this claim from every other claim of the job.
struct LabClaim {
  std::int64_t job = 0;
  std::int64_t attempt = 0;
  std::int64_t submission = 0;
  std::vector<Kernel> kernels;
};

/// What a worker measured for a claimed job, written with its completion.
struct LabJobResults {
  std::int64_t device_id = 0;
  std::int64_t backend_id = 0;
  std::int64_t campaign_id = 0;  // the device's campaign of the submission
  std::vector<MeasurementRecord> measurements;
  std::vector<std::pair<Kernel, std::string>> unsupported;  // kernel, why
  std::vector<ReferenceMeasurement> references;
};

/// Jobs not finished, for a worker that found nothing to claim: wait, or stop.
struct LabOutstanding {
  std::int64_t claimed = 0;           // held under a live lease by some worker
  std::int64_t claimable = 0;         // queued, or whose lease ran out
  double next_expiry_secs = 0;        // until the first live lease runs out (server's clock)
};

/// Counts of a submission's jobs, or of one device's share of them.
struct LabCounts {
  std::int64_t jobs = 0, done = 0, claimed = 0, failed = 0, left = 0;
  std::int64_t kernels_done = 0, measured = 0, unsupported = 0;
  double busy_secs = 0;   // from the first claim to the last completion of its done jobs
  double rate() const { return busy_secs > 0 ? static_cast<double>(kernels_done) / busy_secs : 0; }
};

struct LabDeviceStatus {
  std::string device;  // DeviceInfo::key
  std::int64_t submission = 0;
  LabCounts counts;    // left: not counted per device (see the submission's)
};

struct LabSubmissionStatus {
  LabSubmission submission;
  LabCounts counts;
  std::vector<std::string> errors;  // the failed jobs' reasons, distinct, at most a few
};

struct LabStatus {
  std::string server_time;  // ISO 8601 UTC, the server's clock
  std::vector<LabSubmissionStatus> submissions;
  std::vector<LabDeviceStatus> devices;
};

/// The lab's jobs in a store on a server.
class LabQueue {
 public:
  /// The queue of `store`; "STORE: latte lab needs a PostgreSQL store, because ..." for a file.
  static Expected<LabQueue> Of(Store& store);
  /// The same refusal for a --db value, before a file is opened (or created).
  static Status CheckServer(const std::string& db);

  /// Submits `submission` (id, created, jobs and kernels are filled in) with `jobs`, each a batch of
  /// kernels, in one transaction; the kernels (and the drift `reference`) are stored as kernels
  /// then. Submitting the same again changes nothing but queueing its failed jobs again.
  Expected<LabSubmitResult> Submit(const LabSubmission& submission, const std::vector<std::vector<Kernel>>& jobs,
                                   const Kernel& reference);
  /// The submission with this id.
  Expected<LabSubmission> FindSubmission(std::int64_t id);

  /// Claims the first job (of `device_class`'s submissions; any class when empty; none of the
  /// submissions in `skip`) that is queued or whose lease ran out, for `lease_secs` of the server's
  /// clock; nullopt when none is claimable now.
  Expected<std::optional<LabClaim>> Claim(const std::string& worker, std::int64_t device_id,
                                          const std::string& device_class, double lease_secs,
                                          const std::vector<std::int64_t>& skip = {});
  /// Extends the lease to `lease_secs` from now; false when the job is no longer this claim's (it
  /// was taken over: stop measuring it).
  Expected<bool> Renew(const LabClaim& claim, double lease_secs);
  /// Writes `results` and marks the job done, in one transaction; false (nothing written) when the
  /// job is no longer this claim's.
  Expected<bool> Complete(const LabClaim& claim, const LabJobResults& results);
  /// Marks the job failed with `why` (when it is still this claim's).
  Status Fail(const LabClaim& claim, const std::string& why);
  /// Gives the job back at once (a worker asked to stop), when it is still this claim's.
  Status Release(const LabClaim& claim);
  /// Jobs of `device_class` (any when empty; none of `skip`'s submissions) not yet done or failed.
  Expected<LabOutstanding> Outstanding(const std::string& device_class, const std::vector<std::int64_t>& skip = {});

  /// Every submission's counts and every device's share.
  Expected<LabStatus> ReadStatus();

 private:
  explicit LabQueue(Store& store) : store_(&store) {}
  Status ReadStatusInSnapshot(LabStatus& status);
  Store* store_;
};

}  // namespace latte
