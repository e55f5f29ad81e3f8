#include "profile/lab.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <ostream>
#include <thread>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "db/campaign_key.h"
#include "db/server_url.h"
#include "profile/profile.h"
#include "profile/store_writer.h"
#include "run/backend_registry.h"

namespace latte {

Expected<LabSubmitReport> SubmitLab(const LabSubmitOptions& options) {
  LATTE_RETURN_IF_ERROR(LabQueue::CheckServer(options.db));
  if (options.device_class.empty()) return InvalidInput("--device-class: a class of devices is required");
  if (options.sampler.strategy == "adaptive") {
    return InvalidInput("--strategy adaptive picks kernels from one device's measurements: submit another strategy");
  }
  if (options.job_size == 0) return InvalidInput("--job-size: a job holds at least one kernel");
  LATTE_RETURN_IF_ERROR(options.campaign.measure.Validate());
  LATTE_ASSIGN_OR_RETURN(Sample sample, SampleKernels(options.sampler));  // before the store is touched
  LATTE_ASSIGN_OR_RETURN(Store store, Store::Open(options.db));
  LATTE_ASSIGN_OR_RETURN(LabQueue queue, LabQueue::Of(store));
  const CampaignKey key = CampaignKeyOf(options.campaign, kLabCampaign, options.sampler.ToJson().dump());
  LabSubmission submission;
  submission.device_class = options.device_class;
  submission.backend = key.backend;
  submission.threads = static_cast<int>(key.threads);
  submission.precision = key.precision;
  submission.settings = key.settings;
  submission.space = key.space;
  // Each kernel in one job only: two jobs never store the same (campaign, kernel), so completions
  // of one device's jobs never wait on each other's rows.
  std::set<std::string> seen;
  std::erase_if(sample.kernels, [&](const Kernel& kernel) { return !seen.insert(kernel.Key()).second; });
  std::vector<std::vector<Kernel>> jobs;
  for (std::size_t i = 0; i < sample.kernels.size(); i += options.job_size) {
    const auto end = sample.kernels.begin() + static_cast<std::ptrdiff_t>(std::min(sample.kernels.size(), i + options.job_size));
    jobs.emplace_back(sample.kernels.begin() + static_cast<std::ptrdiff_t>(i), end);
  }
  LabSubmitReport report;
  report.notes = sample.notes;
  LATTE_ASSIGN_OR_RETURN(report.result, queue.Submit(submission, jobs, options.campaign.reference));
  return report;
}

DeviceInfo LabDeviceInfo(const DeviceFingerprint& fingerprint, const std::string& name) {
  DeviceInfo device = DeviceInfoFrom(fingerprint);
  if (name.empty()) return device;
  nlohmann::json json = nlohmann::json::parse(device.fingerprint_json, nullptr, false);
  if (!json.is_object()) json = nlohmann::json::object();
  json["name"] = name;
  json["hardware_key"] = device.key;
  return {name, name + ": " + device.description, json.dump()};
}

namespace {

double Seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string WorkerName() {
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  return fmt::format("{}:{}", host[0] != '\0' ? host : "host", ::getpid());
}

// Sleeps `secs` in short steps, returning early when `stop` is raised.
void SleepUnlessStopped(double secs, const std::atomic<bool>* stop) {
  const double until = Seconds() + secs;
  while (Seconds() < until && (stop == nullptr || !stop->load())) {
    std::this_thread::sleep_for(std::chrono::milliseconds(std::clamp(static_cast<int>((until - Seconds()) * 1000), 1, 50)));
  }
}

// A claimed job's campaign listener: keeps what it measures for the completion, and renews the
// lease as kernels are measured (a worker measuring is alive; one stuck in a kernel is not).
class LabJobListener : public MeasurementListener {
 public:
  LabJobListener(LabQueue& queue, const LabClaim& claim, double lease_secs, LabJobResults& results,
                 std::function<Expected<std::int64_t>(const CampaignStart&)> backend_id)
      : queue_(queue), claim_(claim), lease_secs_(lease_secs), results_(results), backend_id_(std::move(backend_id)) {
    last_renewal_ = Seconds();
  }
  bool lost() const { return lost_; }
  bool store_failed() const { return store_failed_; }

  Status OnStart(const CampaignStart& start) override {
    Expected<std::int64_t> id = backend_id_(start);
    if (!id.ok()) return StoreFailed(id.status());
    results_.backend_id = *id;
    return Status::Ok();
  }
  Status OnMeasured(const Kernel& kernel, const Measurement& measurement) override {
    MeasurementRecord record;
    record.kernel = kernel;
    record.stats = measurement.stats;
    record.campaign = results_.campaign_id;
    results_.measurements.push_back(std::move(record));
    return Renew();
  }
  Status OnUnsupported(const Kernel& kernel, std::string_view why) override {
    results_.unsupported.emplace_back(kernel, std::string(why));
    return Renew();
  }
  Status OnReference(const Kernel& kernel, const Measurement& measurement) override {
    results_.references.push_back({results_.campaign_id, "", measurement.stats.p50, kernel.Key()});
    return Renew();
  }

 private:
  Status StoreFailed(Status status) {
    store_failed_ = true;
    return status;
  }
  // At most four renewals a lease: each is a round trip to the server.
  Status Renew() {
    if (Seconds() - last_renewal_ < lease_secs_ / 4) return Status::Ok();
    Expected<bool> renewed = queue_.Renew(claim_, lease_secs_);
    if (!renewed.ok()) return StoreFailed(renewed.status());
    last_renewal_ = Seconds();
    if (!*renewed) {
      lost_ = true;
      return Interrupted("the job's lease was taken over");
    }
    return Status::Ok();
  }

  LabQueue& queue_;
  const LabClaim& claim_;
  double lease_secs_;
  LabJobResults& results_;
  std::function<Expected<std::int64_t>(const CampaignStart&)> backend_id_;
  double last_renewal_ = 0;
  bool lost_ = false;
  bool store_failed_ = false;
};

// What a worker knows of a submission it has taken jobs of.
struct SubmissionContext {
  LabSubmission submission;
  CampaignOptions campaign;
  std::int64_t campaign_id = 0;  // this device's campaign of it
  std::string unavailable;       // why this worker cannot run its backend ("" when it can)
};

Expected<SubmissionContext> ContextOf(Store& store, LabQueue& queue, std::int64_t id, const DeviceInfo& device,
                                      const BackendRegistry& registry, const std::atomic<bool>* stop) {
  SubmissionContext context;
  LATTE_ASSIGN_OR_RETURN(context.submission, queue.FindSubmission(id));
  const LabSubmission& s = context.submission;
  CampaignOptions& campaign = context.campaign;
  campaign.backend = s.backend;
  campaign.run.num_threads = s.threads;
  campaign.stop = stop;
  Expected<Precision> precision = ParsePrecision(s.precision);
  const nlohmann::json settings = nlohmann::json::parse(s.settings, nullptr, false);
  if (!precision.ok() || !settings.is_object()) {
    context.unavailable = fmt::format("its settings cannot be read (precision '{}', settings {})", s.precision, s.settings);
    return context;
  }
  campaign.run.precision = *precision;
  MeasureOptions& measure = campaign.measure;  // the protocol's other fields as profile's
  measure.warmup_runs = settings.value("warmup_runs", measure.warmup_runs);
  measure.num_runs = settings.value("num_runs", measure.num_runs);
  measure.min_secs = settings.value("min_secs", measure.min_secs);
  if (Status valid = measure.Validate(); !valid.ok()) {
    context.unavailable = "its protocol is invalid here (" + valid.message() + ")";
    return context;
  }
  if (Expected<std::unique_ptr<Backend>> backend = registry.Create(s.backend, campaign.run); !backend.ok()) {
    context.unavailable = backend.status().message();
    return context;
  }
  const CampaignKey key{std::string(kLabCampaign), s.backend,  s.threads,
                        s.precision,                LabCampaignSettings(s.settings, device.key, s.device_class),
                        s.space};
  LATTE_ASSIGN_OR_RETURN(CampaignInfo info, store.FindOrCreateCampaign(key, s.kernels));
  context.campaign_id = info.id;
  return context;
}

}  // namespace

Expected<LabWorkResult> RunLabWorker(const LabWorkOptions& options, const BackendRegistry& registry, std::ostream& log) {
  LATTE_RETURN_IF_ERROR(LabQueue::CheckServer(options.db));
  if (!(options.lease_secs >= 0.1)) return InvalidInput("--lease: at least 0.1 s");
  const double started = Seconds();
  LATTE_ASSIGN_OR_RETURN(Store store, Store::Open(options.db));
  LATTE_ASSIGN_OR_RETURN(LabQueue queue, LabQueue::Of(store));
  const DeviceInfo device = LabDeviceInfo(ReadDeviceFingerprint(), options.device_name);
  LATTE_ASSIGN_OR_RETURN(const std::int64_t device_id, store.UpsertDevice(device));
  LabWorkResult result;
  result.device = device.key;
  result.worker = WorkerName();

  std::map<std::int64_t, SubmissionContext> contexts;
  std::vector<std::int64_t> skip;  // submissions this machine cannot measure
  std::map<std::tuple<std::string, std::string, int, std::string>, std::int64_t> backend_ids;
  auto backend_id = [&](const CampaignStart& start) -> Expected<std::int64_t> {
    const BackendInfo info = StoreBackendInfo(start);
    auto key = std::make_tuple(info.name, info.version, info.threads, info.precision);
    if (auto it = backend_ids.find(key); it != backend_ids.end()) return it->second;
    LATTE_ASSIGN_OR_RETURN(std::int64_t id, store.UpsertBackend(info));
    backend_ids.emplace(key, id);
    return id;
  };
  auto stopped = [&] { return options.stop != nullptr && options.stop->load(); };

  while (options.max_jobs == 0 || result.jobs + result.lost + result.failed < options.max_jobs) {
    if (stopped()) {
      result.interrupted = true;
      break;
    }
    LATTE_ASSIGN_OR_RETURN(std::optional<LabClaim> claim,
                           queue.Claim(result.worker, device_id, options.device_class, options.lease_secs, skip));
    if (!claim) {
      LATTE_ASSIGN_OR_RETURN(LabOutstanding outstanding, queue.Outstanding(options.device_class, skip));
      if (outstanding.claimable > 0) {  // held for an instant by another worker's claim: ask again
        SleepUnlessStopped(0.01, options.stop);
      } else if (outstanding.claimed > 0) {  // wait for them to finish, or their leases to run out
        SleepUnlessStopped(std::clamp(outstanding.next_expiry_secs + 0.05, 0.05, 1.0), options.stop);
      } else if (options.keep_waiting) {
        SleepUnlessStopped(options.poll_secs, options.stop);
      } else {
        break;
      }
      continue;
    }
    auto context_it = contexts.find(claim->submission);
    if (context_it == contexts.end()) {
      LATTE_ASSIGN_OR_RETURN(SubmissionContext context,
                             ContextOf(store, queue, claim->submission, device, registry, options.stop));
      context_it = contexts.emplace(claim->submission, std::move(context)).first;
    }
    const SubmissionContext& context = context_it->second;
    if (!context.unavailable.empty()) {
      // This machine cannot run the campaign (its backend is not here): the job goes back to the
      // queue at once for workers that can, and this one leaves the campaign alone.
      LATTE_RETURN_IF_ERROR(queue.Release(*claim));
      skip.push_back(claim->submission);
      log << fmt::format("lab: campaign {}: skipped, this machine cannot measure it: {}\n", claim->submission,
                         context.unavailable);
      ++result.skipped;
      continue;
    }
    const double job_started = Seconds();
    LabJobResults results;
    results.device_id = device_id;
    results.campaign_id = context.campaign_id;
    LabJobListener listener(queue, *claim, options.lease_secs, results, backend_id);
    Expected<CampaignSummary> summary = RunCampaign(claim->kernels, {}, context.campaign, registry, {&listener});
    if (listener.store_failed()) return summary.status();
    if (listener.lost()) {
      log << fmt::format("lab: job {} (campaign {}): lease lost to another worker; its measurements discarded\n",
                         claim->job, claim->submission);
      ++result.lost;
      continue;
    }
    if (!summary.ok()) {
      LATTE_RETURN_IF_ERROR(queue.Fail(*claim, summary.status().message()));
      log << fmt::format("lab: job {} (campaign {}): failed: {}\n", claim->job, claim->submission,
                         summary.status().message());
      ++result.failed;
      continue;
    }
    if (summary->interrupted) {
      LATTE_RETURN_IF_ERROR(queue.Release(*claim));
      result.interrupted = true;
      break;
    }
    LATTE_ASSIGN_OR_RETURN(bool completed, queue.Complete(*claim, results));
    if (!completed) {
      log << fmt::format("lab: job {} (campaign {}): lease lost to another worker; its measurements discarded\n",
                         claim->job, claim->submission);
      ++result.lost;
      continue;
    }
    ++result.jobs;
    result.measured += results.measurements.size();
    result.unsupported += results.unsupported.size();
    log << fmt::format("lab: job {} (campaign {}, {} kernels): measured {}, unsupported {} in {:.1f} s\n", claim->job,
                       claim->submission, claim->kernels.size(), results.measurements.size(),
                       results.unsupported.size(), Seconds() - job_started);
    log.flush();
  }
  result.secs = Seconds() - started;
  return result;
}

}  // namespace latte
