#include "profile/profile.h"

#include <ostream>

#include <fmt/format.h>

#include "core/device.h"
#include "profile/adaptive.h"
#include "profile/store_writer.h"

namespace latte {
namespace {

// Keeps (key, why) of unsupported kernels for the summary.
class UnsupportedCollector : public MeasurementListener {
 public:
  explicit UnsupportedCollector(std::vector<std::pair<std::string, std::string>>& out) : out_(out) {}
  Status OnMeasured(const Kernel&, const Measurement&) override { return Status::Ok(); }
  Status OnUnsupported(const Kernel& kernel, std::string_view why) override {
    out_.emplace_back(kernel.Key(), std::string(why));
    return Status::Ok();
  }

 private:
  std::vector<std::pair<std::string, std::string>>& out_;
};

}  // namespace

std::string DefaultProfileDb() { return DefaultStorePath(); }

CampaignKey CampaignKeyOf(const CampaignOptions& options, std::string_view kind, std::string space) {
  const MeasureOptions& m = options.measure;
  return {std::string(kind),
          options.backend,
          options.run.num_threads,
          std::string(PrecisionName(options.run.precision)),
          MeasureSettings(m.warmup_runs, m.num_runs, m.min_secs),
          std::move(space)};
}

Expected<ProfileResult> RunProfile(const ProfileOptions& options, const BackendRegistry& registry, std::ostream& log) {
  ProfileResult result;
  const bool adaptive = options.sampler.strategy == "adaptive";
  Sample sample;
  if (!adaptive) {  // sampling errors (bad kinds, models) come before the store is touched
    LATTE_ASSIGN_OR_RETURN(sample, SampleKernels(options.sampler));
  }
  LATTE_ASSIGN_OR_RETURN(Store store, Store::Open(options.db));
  const DeviceInfo device = DeviceInfoFrom(ReadDeviceFingerprint());
  nlohmann::json space = options.sampler.ToJson();
  if (adaptive) {
    MeasurementFilter filter;
    filter.backend = options.campaign.backend;
    filter.threads = options.campaign.run.num_threads;
    filter.precision = std::string(PrecisionName(options.campaign.run.precision));
    filter.device = device.key;
    LATTE_ASSIGN_OR_RETURN(sample, AdaptiveSample(store, options.sampler, filter));
    // Each adaptive run is a round of its own: its space is the kernels it picked.
    std::vector<std::string> keys;
    for (const Kernel& k : sample.kernels) keys.push_back(k.Key());
    space["picked"] = keys;
  }
  result.notes = sample.notes;
  result.space = space.dump();
  const CampaignKey key = CampaignKeyOf(options.campaign, kProfileCampaign, result.space);
  result.command = key.CommandText();
  LATTE_ASSIGN_OR_RETURN(CampaignInfo campaign,
                         store.FindOrCreateCampaign(key, static_cast<std::int64_t>(sample.kernels.size())));
  result.campaign_id = campaign.id;
  LATTE_ASSIGN_OR_RETURN(std::set<std::string> done, store.CampaignDoneKeys(campaign.id));

  StoreWriterOptions writer_options;
  writer_options.batch_size = options.batch_size;
  writer_options.max_delay_secs = options.flush_secs;
  StoreWriter writer(store, campaign.id, device, writer_options);
  ProgressOptions progress_options;
  progress_options.label = "profile";
  progress_options.tty = options.tty;
  progress_options.every_items = options.progress_every;
  progress_options.every_secs = options.progress_secs;
  Progress progress(log, sample.kernels.size(), progress_options);
  ProgressListener progress_listener(progress);

  UnsupportedCollector collector(result.unsupported);
  LATTE_ASSIGN_OR_RETURN(result.summary, RunCampaign(sample.kernels, done, options.campaign, registry,
                                                     {&writer, &collector, &progress_listener}));
  result.stored = writer.stored();
  return result;
}

}  // namespace latte
