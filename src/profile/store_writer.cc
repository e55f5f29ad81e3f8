#include "profile/store_writer.h"

namespace latte {

BackendInfo StoreBackendInfo(const CampaignStart& start) {
  BackendInfo info;
  info.name = start.backend;
  info.version = start.backend_version;
  info.threads = start.run.num_threads;
  info.precision = std::string(PrecisionName(start.run.precision));
  return info;
}

StoreWriter::StoreWriter(Store& store, std::int64_t campaign_id, DeviceInfo device, StoreWriterOptions options)
    : store_(store), campaign_id_(campaign_id), device_(std::move(device)), options_(std::move(options)) {
  last_flush_ = options_.clock();
}

Status StoreWriter::OnStart(const CampaignStart& start) {
  LATTE_ASSIGN_OR_RETURN(device_id_, store_.UpsertDevice(device_));
  LATTE_ASSIGN_OR_RETURN(backend_id_, store_.UpsertBackend(StoreBackendInfo(start)));
  done_before_ = start.already_done;
  return store_.UpdateCampaign(campaign_id_, static_cast<std::int64_t>(done_before_), "running");
}

Status StoreWriter::OnMeasured(const Kernel& kernel, const Measurement& measurement) {
  MeasurementRecord record;
  record.kernel = kernel;
  record.stats = measurement.stats;
  record.campaign = campaign_id_;
  pending_.push_back(std::move(record));
  ++done_now_;
  if (pending_.size() >= options_.batch_size || options_.clock() - last_flush_ >= options_.max_delay_secs) return Flush();
  return Status::Ok();
}

Status StoreWriter::OnUnsupported(const Kernel& kernel, std::string_view why) {
  ++done_now_;
  return store_.RecordUnsupported(device_id_, backend_id_, kernel, why, campaign_id_);
}

Status StoreWriter::OnReference(const Kernel& kernel, const Measurement& measurement) {
  ReferenceMeasurement reference;
  reference.campaign = campaign_id_;
  reference.p50_us = measurement.stats.p50;
  reference.kernel_key = kernel.Key();
  return store_.RecordReference(reference);
}

Status StoreWriter::Flush() {
  last_flush_ = options_.clock();
  if (pending_.empty()) return Status::Ok();
  // Rows and the campaign's counter in one transaction: a kill -9 leaves both or neither.
  std::size_t inserted = 0;
  LATTE_RETURN_IF_ERROR(store_.Transaction([&]() -> Status {
    LATTE_ASSIGN_OR_RETURN(inserted, store_.InsertMeasurements(device_id_, backend_id_, pending_));
    return store_.UpdateCampaign(campaign_id_, static_cast<std::int64_t>(done_before_ + done_now_), "running");
  }));
  stored_ += inserted;
  pending_.clear();
  return Status::Ok();
}

Status StoreWriter::OnFinish(const CampaignSummary& summary) {
  LATTE_RETURN_IF_ERROR(Flush());
  return store_.UpdateCampaign(campaign_id_, static_cast<std::int64_t>(done_before_ + done_now_),
                               summary.complete() ? "done" : "stopped");
}

}  // namespace latte
