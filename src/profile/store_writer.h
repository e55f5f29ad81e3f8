#pragma once
// The campaign listener that keeps results: measurements go to the store in batches (one
// transaction each), unsupported kernels and reference readings at once. Kept apart from
// campaign.h so that no file needs both the store and the backend registry.

#include <cstdint>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/progress.h"
#include "db/store.h"
#include "profile/campaign.h"

namespace latte {

struct StoreWriterOptions {
  std::size_t batch_size = 16;  // a transaction per this many measurements...
  double max_delay_secs = 2;    // ...or per this many seconds, whichever first: a kill -9 loses at most that
  SecondsClock clock = SteadySeconds;
};

class StoreWriter : public MeasurementListener {
 public:
  /// Writes into `campaign_id` of `store`, measured on `device`.
  StoreWriter(Store& store, std::int64_t campaign_id, DeviceInfo device, StoreWriterOptions options = {});
  Status OnStart(const CampaignStart& start) override;
  Status OnMeasured(const Kernel& kernel, const Measurement& measurement) override;
  Status OnUnsupported(const Kernel& kernel, std::string_view why) override;
  Status OnReference(const Kernel& kernel, const Measurement& measurement) override;
  /// Flushes and sets the campaign's counters and status ("done" or "stopped").
  Status OnFinish(const CampaignSummary& summary) override;
  /// Writes pending measurements in one transaction.
  Status Flush();
  std::size_t stored() const { return stored_; }

 private:
  Store& store_;
  std::int64_t campaign_id_;
  DeviceInfo device_;
  StoreWriterOptions options_;
  std::int64_t device_id_ = 0;
  std::int64_t backend_id_ = 0;
  std::vector<MeasurementRecord> pending_;
  double last_flush_ = 0;
  std::size_t stored_ = 0;
  std::size_t done_before_ = 0;
  std::size_t done_now_ = 0;
};

/// BackendInfo of a campaign's backend as the store records it.
BackendInfo StoreBackendInfo(const CampaignStart& start);

}  // namespace latte
