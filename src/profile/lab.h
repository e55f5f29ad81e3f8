#pragma once
// `latte lab submit` and `latte lab work` as library calls. Submitting samples a campaign's kernels
// as `latte profile` does and cuts them into jobs in the database (db/lab_queue.h); a worker claims
// jobs, measures each with the profile campaign's path (RunCampaign on the local backend, the same
// protocol and drift reference) and writes the job's results with its device's fingerprint in the
// transaction that completes it.

#include <atomic>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/status.h"
#include "db/lab_queue.h"
#include "db/store.h"
#include "profile/campaign.h"
#include "profile/space.h"

namespace latte {

class BackendRegistry;

struct LabSubmitOptions {
  SamplerConfig sampler;       // any strategy but adaptive (which reads one device's measurements)
  CampaignOptions campaign;    // backend, threads, precision and protocol (the budget is not used)
  std::string db;              // a PostgreSQL URL
  std::string device_class;    // which workers may take the jobs ("" never: required)
  std::size_t job_size = 16;   // kernels per job
};

struct LabSubmitReport {
  LabSubmitResult result;
  std::vector<std::string> notes;  // the sampler's
};

/// Samples the kernels and submits them as jobs. Errors name the store (its password masked).
Expected<LabSubmitReport> SubmitLab(const LabSubmitOptions& options);

/// This machine as a lab worker records it: the fingerprint, under `name` when one is given (a
/// device of a lab named by its owner, or a test pretending to be another device).
DeviceInfo LabDeviceInfo(const DeviceFingerprint& fingerprint, const std::string& name);

struct LabWorkOptions {
  std::string db;               // a PostgreSQL URL
  std::string device_name;      // "" = the fingerprint's key
  std::string device_class;     // "" = jobs of every class
  double lease_secs = 60;       // each claim's lease, renewed as kernels are measured
  std::size_t max_jobs = 0;     // 0 = until no job is left
  bool keep_waiting = false;    // wait for new submissions instead of stopping when none is left
  double poll_secs = 5;         // keep_waiting: how often to look for new work
  const std::atomic<bool>* stop = nullptr;  // raised by a signal: give the job back and stop
};

struct LabWorkResult {
  std::string device;        // the key its measurements carry
  std::string worker;        // host:pid, as the jobs record it
  std::size_t jobs = 0;      // completed
  std::size_t measured = 0, unsupported = 0;
  std::size_t lost = 0;      // jobs taken over by another worker before this one completed them
  std::size_t failed = 0;    // jobs marked failed (a kernel list that does not parse, a backend error)
  std::size_t skipped = 0;   // campaigns left to other workers: this machine cannot run their backend
  double secs = 0;
  bool interrupted = false;
};

/// Claims and measures jobs until none is left (or max_jobs, or a stop). Progress goes to `log`, a
/// line per job.
Expected<LabWorkResult> RunLabWorker(const LabWorkOptions& options, const BackendRegistry& registry, std::ostream& log);

}  // namespace latte
