#include "db/lab_queue.h"

#include <algorithm>
#include <chrono>
#include <ctime>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "db/server_url.h"
#include "db/sql_connection.h"

namespace latte {
namespace {

using sql::Statement;

// The server's clock as seconds since the epoch: every time of the queue is read from it, so
// workers on other machines, whose clocks may be off, agree on when a lease runs out.
constexpr const char* kNow = "extract(epoch FROM clock_timestamp())::double precision";

// The states of a job, and what a status makes of them at time `now` (an SQL expression).
std::string Counting(const std::string& now) {
  const std::string expired = fmt::format("(j.state = 'claimed' AND j.lease_until < {})", now);
  return fmt::format(
      "count(*) FILTER (WHERE j.state = 'done'), "
      "count(*) FILTER (WHERE j.state = 'claimed' AND j.lease_until >= {0}), "
      "count(*) FILTER (WHERE j.state = 'failed' OR ({1} AND j.attempt >= {2})), "
      "count(*) FILTER (WHERE j.state = 'queued' OR ({1} AND j.attempt < {2})), "
      "coalesce(sum(j.size) FILTER (WHERE j.state = 'done'), 0)::bigint, coalesce(sum(j.measured), 0)::bigint, "
      "coalesce(sum(j.unsupported), 0)::bigint, "
      "coalesce(max(j.finished_at) FILTER (WHERE j.state = 'done') - min(j.claimed_at) FILTER (WHERE j.state = 'done'), 0)",
      now, expired, kLabMaxAttempts);
}

// Reads Counting()'s eight columns from `first` on.
void ReadCounts(const Statement& select, int first, LabCounts& counts) {
  counts.done = select.Int(first);
  counts.claimed = select.Int(first + 1);
  counts.failed = select.Int(first + 2);
  counts.left = select.Int(first + 3);
  counts.kernels_done = select.Int(first + 4);
  counts.measured = select.Int(first + 5);
  counts.unsupported = select.Int(first + 6);
  counts.busy_secs = select.Real(first + 7);
  counts.jobs = counts.done + counts.claimed + counts.failed + counts.left;
}

// A list of ids as a PostgreSQL array's text, "{1,2}".
std::string IdArray(const std::vector<std::int64_t>& ids) {
  std::string text = "{";
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) text += ',';
    text += std::to_string(ids[i]);
  }
  return text + "}";
}

std::string NowUtc() {
  const std::time_t seconds = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

}  // namespace

Status LabQueue::CheckServer(const std::string& db) {
  if (IsServerUrl(db)) return Status::Ok();
  return InvalidInput(fmt::format(
      "{}: latte lab needs a PostgreSQL store (--db postgresql://...), because workers on many machines claim "
      "jobs with row locks (FOR UPDATE SKIP LOCKED) under leases timed by one clock, the server's, which a "
      "SQLite file has not",
      MaskPassword(db)));
}

Expected<LabQueue> LabQueue::Of(Store& store) {
  LATTE_RETURN_IF_ERROR(CheckServer(store.path()));
  return LabQueue(store);
}

Expected<LabSubmitResult> LabQueue::Submit(const LabSubmission& submission,
                                           const std::vector<std::vector<Kernel>>& jobs, const Kernel& reference) {
  sql::Connection& db = *store_->db_;
  LabSubmitResult result;
  result.submission = submission;
  LATTE_RETURN_IF_ERROR(store_->Transaction([&]() -> Status {
    std::int64_t kernels = 0;
    for (const auto& job : jobs) kernels += static_cast<std::int64_t>(job.size());
    Statement insert(db);
    LATTE_RETURN_IF_ERROR(insert.Prepare(
        "INSERT INTO lab_submissions(device_class, backend, threads, precision, settings, space, created, jobs, "
        "kernels) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT DO NOTHING RETURNING id"));
    insert.Bind(1, submission.device_class);
    insert.Bind(2, submission.backend);
    insert.Bind(3, submission.threads);
    insert.Bind(4, submission.precision);
    insert.Bind(5, submission.settings);
    insert.Bind(6, submission.space);
    insert.Bind(7, NowUtc());
    insert.Bind(8, static_cast<std::int64_t>(jobs.size()));
    insert.Bind(9, kernels);
    LATTE_ASSIGN_OR_RETURN(result.created, insert.Step());
    std::int64_t id = 0;
    if (result.created) {
      id = insert.Int(0);
    } else {
      Statement select(db);
      LATTE_RETURN_IF_ERROR(select.Prepare(
          "SELECT id FROM lab_submissions WHERE device_class = ?1 AND backend = ?2 AND threads = ?3 AND "
          "precision = ?4 AND settings = ?5 AND space = ?6"));
      select.Bind(1, submission.device_class);
      select.Bind(2, submission.backend);
      select.Bind(3, submission.threads);
      select.Bind(4, submission.precision);
      select.Bind(5, submission.settings);
      select.Bind(6, submission.space);
      LATTE_ASSIGN_OR_RETURN(bool found, select.Step());
      if (!found) return Internal(store_->path() + ": lab submission row vanished");
      id = select.Int(0);
    }
    if (result.created) {
      // Every kernel a worker may store is a row before any worker runs: completions then only
      // read kernel rows, and never wait on each other for one.
      LATTE_RETURN_IF_ERROR(store_->UpsertKernel(reference).status());
      Statement job_insert(db);
      LATTE_RETURN_IF_ERROR(job_insert.Prepare(
          "INSERT INTO lab_jobs(submission_id, seq, kernels, size, state) VALUES(?1, ?2, ?3, ?4, 'queued')"));
      for (std::size_t i = 0; i < jobs.size(); ++i) {
        nlohmann::json keys = nlohmann::json::array();
        for (const Kernel& kernel : jobs[i]) {
          LATTE_RETURN_IF_ERROR(store_->UpsertKernel(kernel).status());
          keys.push_back(kernel.Key());
        }
        job_insert.Reset();
        job_insert.Bind(1, id);
        job_insert.Bind(2, i);
        job_insert.Bind(3, keys.dump());
        job_insert.Bind(4, jobs[i].size());
        LATTE_RETURN_IF_ERROR(job_insert.Run());
      }
    } else {
      Statement requeue(db);
      LATTE_RETURN_IF_ERROR(requeue.Prepare(
          "UPDATE lab_jobs SET state = 'queued', attempt = 0, error = NULL, lease_until = NULL, worker = NULL "
          "WHERE submission_id = ?1 AND (state = 'failed' OR (state = 'claimed' AND attempt >= ?2 AND lease_until < " +
          std::string(kNow) + "))"));
      requeue.Bind(1, id);
      requeue.Bind(2, kLabMaxAttempts);
      LATTE_RETURN_IF_ERROR(requeue.Run());
      result.requeued = requeue.Changes();
    }
    LATTE_ASSIGN_OR_RETURN(result.submission, FindSubmission(id));
    return Status::Ok();
  }));
  return result;
}

Expected<LabSubmission> LabQueue::FindSubmission(std::int64_t id) {
  Statement select(*store_->db_);
  LATTE_RETURN_IF_ERROR(select.Prepare(
      "SELECT id, device_class, backend, threads, precision, settings, space, created, jobs, kernels "
      "FROM lab_submissions WHERE id = ?1"));
  select.Bind(1, id);
  LATTE_ASSIGN_OR_RETURN(bool found, select.Step());
  if (!found) return NotFound(fmt::format("{}: no lab submission {}", store_->path(), id));
  return LabSubmission{select.Int(0),  select.Text(1), select.Text(2), static_cast<int>(select.Int(3)),
                       select.Text(4), select.Text(5), select.Text(6), select.Text(7),
                       select.Int(8),  select.Int(9)};
}

Expected<std::optional<LabClaim>> LabQueue::Claim(const std::string& worker, std::int64_t device_id,
                                                  const std::string& device_class, double lease_secs,
                                                  const std::vector<std::int64_t>& skip) {
  sql::Connection& db = *store_->db_;
  std::optional<LabClaim> claim;
  std::string kernels;
  // One statement, so one short transaction: the first open job nobody holds, locked (skipping
  // the ones other workers are claiming or completing this instant) and claimed.
  Statement update(db);
  LATTE_RETURN_IF_ERROR(update.Prepare(fmt::format(
      "WITH now AS (SELECT {0} AS t), "
      "job AS (SELECT j.id FROM lab_jobs j WHERE j.state IN ('queued', 'claimed') "
      "  AND (j.state = 'queued' OR (j.lease_until < (SELECT t FROM now) AND j.attempt < {1})) "
      "  AND (?4 = '' OR j.submission_id IN (SELECT s.id FROM lab_submissions s WHERE s.device_class = ?4)) "
      "  AND NOT (j.submission_id = ANY(CAST(?5 AS BIGINT[]))) "
      "  ORDER BY j.id LIMIT 1 FOR UPDATE SKIP LOCKED) "
      "UPDATE lab_jobs j SET state = 'claimed', attempt = j.attempt + 1, worker = ?1, device_id = ?2, "
      "  claimed_at = (SELECT t FROM now), lease_until = (SELECT t FROM now) + ?3, error = NULL "
      "FROM job WHERE j.id = job.id RETURNING j.id, j.attempt, j.submission_id, j.kernels",
      kNow, kLabMaxAttempts)));
  update.Bind(1, worker);
  update.Bind(2, device_id);
  update.Bind(3, lease_secs);
  update.Bind(4, device_class);
  update.Bind(5, IdArray(skip));
  LATTE_ASSIGN_OR_RETURN(bool row, update.Step());
  if (!row) return claim;
  claim.emplace();
  claim->job = update.Int(0);
  claim->attempt = update.Int(1);
  claim->submission = update.Int(2);
  kernels = update.Text(3);
  const nlohmann::json keys = nlohmann::json::parse(kernels, nullptr, false);
  if (!keys.is_array()) return InvalidInput(fmt::format("{}: lab job {}: its kernels are not a JSON array", store_->path(), claim->job));
  for (const nlohmann::json& key : keys) {
    Expected<Kernel> kernel = key.is_string() ? ParseKernelKey(key.get<std::string>())
                                              : Expected<Kernel>(InvalidInput("a kernel key is not a string"));
    if (!kernel.ok()) {
      Status why = kernel.status().WithContext(fmt::format("{}: lab job {}", store_->path(), claim->job));
      LATTE_RETURN_IF_ERROR(Fail(*claim, why.message()));
      return why;
    }
    claim->kernels.push_back(std::move(kernel).value());
  }
  return claim;
}

Expected<bool> LabQueue::Renew(const LabClaim& claim, double lease_secs) {
  Statement update(*store_->db_);
  LATTE_RETURN_IF_ERROR(update.Prepare(fmt::format(
      "UPDATE lab_jobs SET lease_until = {} + ?3 WHERE id = ?1 AND attempt = ?2 AND state = 'claimed'", kNow)));
  update.Bind(1, claim.job);
  update.Bind(2, claim.attempt);
  update.Bind(3, lease_secs);
  LATTE_RETURN_IF_ERROR(update.Run());
  return update.Changes() == 1;
}

Expected<bool> LabQueue::Complete(const LabClaim& claim, const LabJobResults& results) {
  sql::Connection& db = *store_->db_;
  bool completed = false;
  LATTE_RETURN_IF_ERROR(store_->Transaction(
      [&]() -> Status {
        // The job's row locked first: a worker taking it over now waits for this transaction (or
        // skips the job), and a takeover that came first leaves no row to find here.
        Statement lock(db);
        LATTE_RETURN_IF_ERROR(
            lock.Prepare("SELECT id FROM lab_jobs WHERE id = ?1 AND attempt = ?2 AND state = 'claimed' FOR UPDATE"));
        lock.Bind(1, claim.job);
        lock.Bind(2, claim.attempt);
        LATTE_ASSIGN_OR_RETURN(completed, lock.Step());
        if (!completed) return Status::Ok();
        std::size_t stored = 0;
        if (!results.measurements.empty()) {
          LATTE_ASSIGN_OR_RETURN(stored,
                                 store_->InsertMeasurements(results.device_id, results.backend_id, results.measurements));
        }
        for (const auto& [kernel, why] : results.unsupported) {
          LATTE_RETURN_IF_ERROR(
              store_->RecordUnsupported(results.device_id, results.backend_id, kernel, why, results.campaign_id));
        }
        for (const ReferenceMeasurement& reference : results.references) {
          LATTE_RETURN_IF_ERROR(store_->RecordReference(reference));
        }
        const auto done = static_cast<std::int64_t>(results.measurements.size() + results.unsupported.size());
        if (done > 0) {
          Statement campaign(db);
          LATTE_RETURN_IF_ERROR(campaign.Prepare("UPDATE campaigns SET done = done + ?2 WHERE id = ?1"));
          campaign.Bind(1, results.campaign_id);
          campaign.Bind(2, done);
          LATTE_RETURN_IF_ERROR(campaign.Run());
        }
        Statement finish(db);
        LATTE_RETURN_IF_ERROR(finish.Prepare(fmt::format(
            "UPDATE lab_jobs SET state = 'done', finished_at = {}, lease_until = NULL, device_id = ?2, "
            "measured = ?3, unsupported = ?4 WHERE id = ?1",
            kNow)));
        finish.Bind(1, claim.job);
        finish.Bind(2, results.device_id);
        finish.Bind(3, stored);
        finish.Bind(4, results.unsupported.size());
        return finish.Run();
      },
      Store::TransactionLock::kRows));
  return completed;
}

Status LabQueue::Fail(const LabClaim& claim, const std::string& why) {
  Statement update(*store_->db_);
  LATTE_RETURN_IF_ERROR(update.Prepare(fmt::format(
      "UPDATE lab_jobs SET state = 'failed', error = ?3, finished_at = {}, lease_until = NULL "
      "WHERE id = ?1 AND attempt = ?2 AND state = 'claimed'",
      kNow)));
  update.Bind(1, claim.job);
  update.Bind(2, claim.attempt);
  update.Bind(3, why);
  return update.Run();
}

Status LabQueue::Release(const LabClaim& claim) {
  Statement update(*store_->db_);
  // The attempt is given back too: a worker asked to stop is no sign the job kills workers.
  LATTE_RETURN_IF_ERROR(update.Prepare(
      "UPDATE lab_jobs SET state = 'queued', attempt = attempt - 1, lease_until = NULL, worker = NULL "
      "WHERE id = ?1 AND attempt = ?2 AND state = 'claimed'"));
  update.Bind(1, claim.job);
  update.Bind(2, claim.attempt);
  return update.Run();
}

Expected<LabOutstanding> LabQueue::Outstanding(const std::string& device_class,
                                               const std::vector<std::int64_t>& skip) {
  Statement select(*store_->db_);
  LATTE_RETURN_IF_ERROR(select.Prepare(fmt::format(
      "WITH now AS (SELECT {0} AS t) SELECT "
      "count(*) FILTER (WHERE j.state = 'claimed' AND j.lease_until >= (SELECT t FROM now)), "
      "count(*) FILTER (WHERE j.state = 'queued' OR (j.lease_until < (SELECT t FROM now) AND j.attempt < {1})), "
      "coalesce(min(j.lease_until) FILTER (WHERE j.state = 'claimed' AND j.lease_until >= (SELECT t FROM now)), 0) "
      "  - (SELECT t FROM now) "
      "FROM lab_jobs j WHERE j.state IN ('queued', 'claimed') "
      "AND (?1 = '' OR j.submission_id IN (SELECT s.id FROM lab_submissions s WHERE s.device_class = ?1)) "
      "AND NOT (j.submission_id = ANY(CAST(?2 AS BIGINT[])))",
      kNow, kLabMaxAttempts)));
  select.Bind(1, device_class);
  select.Bind(2, IdArray(skip));
  LATTE_ASSIGN_OR_RETURN(bool row, select.Step());
  LabOutstanding outstanding;
  if (!row) return outstanding;
  outstanding.claimed = select.Int(0);
  outstanding.claimable = select.Int(1);
  outstanding.next_expiry_secs = outstanding.claimed > 0 ? std::max(0.0, select.Real(2)) : 0;
  return outstanding;
}

Expected<LabStatus> LabQueue::ReadStatus() {
  sql::Connection& db = *store_->db_;
  LabStatus status;
  {
    Statement now(db);
    LATTE_RETURN_IF_ERROR(now.Prepare(
        "SELECT to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')"));
    LATTE_ASSIGN_OR_RETURN(bool row, now.Step());
    if (row) status.server_time = now.Text(0);
  }
  if (store_->version_ < 5) return status;  // read as it is: a store older than the lab has no jobs
  // One snapshot for every query, so their counts agree.
  LATTE_RETURN_IF_ERROR(db.Exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"));
  Status read = ReadStatusInSnapshot(status);
  Status end = db.Exec(read.ok() ? "COMMIT" : "ROLLBACK");
  LATTE_RETURN_IF_ERROR(read);
  LATTE_RETURN_IF_ERROR(end);
  return status;
}

Status LabQueue::ReadStatusInSnapshot(LabStatus& status) {
  sql::Connection& db = *store_->db_;
  const std::string now = fmt::format("(SELECT {})", kNow);
  Statement submissions(db);
  LATTE_RETURN_IF_ERROR(submissions.Prepare(fmt::format(
      "SELECT s.id, s.device_class, s.backend, s.threads, s.precision, s.settings, s.space, s.created, s.jobs, "
      "s.kernels, {} FROM lab_submissions s LEFT JOIN lab_jobs j ON j.submission_id = s.id GROUP BY s.id ORDER BY s.id",
      Counting(now))));
  LATTE_RETURN_IF_ERROR(submissions.ForEachRow([&] {
    LabSubmissionStatus& s = status.submissions.emplace_back();
    s.submission = {submissions.Int(0),  submissions.Text(1), submissions.Text(2), static_cast<int>(submissions.Int(3)),
                    submissions.Text(4), submissions.Text(5), submissions.Text(6), submissions.Text(7),
                    submissions.Int(8),  submissions.Int(9)};
    ReadCounts(submissions, 10, s.counts);
    s.counts.jobs = s.submission.jobs;
  }));
  Statement errors(db);
  LATTE_RETURN_IF_ERROR(errors.Prepare(
      "SELECT submission_id, error FROM lab_jobs WHERE state = 'failed' AND error IS NOT NULL "
      "GROUP BY submission_id, error ORDER BY submission_id, min(id)"));
  LATTE_RETURN_IF_ERROR(errors.ForEachRow([&] {
    for (LabSubmissionStatus& s : status.submissions) {
      if (s.submission.id == errors.Int(0) && s.errors.size() < 3) s.errors.push_back(errors.Text(1));
    }
  }));
  Statement devices(db);
  LATTE_RETURN_IF_ERROR(devices.Prepare(fmt::format(
      "SELECT d.key, j.submission_id, {} FROM lab_jobs j JOIN devices d ON d.id = j.device_id "
      "WHERE j.state <> 'queued' GROUP BY d.key, j.submission_id ORDER BY j.submission_id, d.key",
      Counting(now))));
  LATTE_RETURN_IF_ERROR(devices.ForEachRow([&] {
    LabDeviceStatus& d = status.devices.emplace_back();
    d.device = devices.Text(0);
    d.submission = devices.Int(1);
    ReadCounts(devices, 2, d.counts);
    d.counts.left = 0;
    d.counts.jobs = d.counts.done + d.counts.claimed + d.counts.failed;
  }));
  return Status::Ok();
}

}  // namespace latte
