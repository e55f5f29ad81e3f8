#include "report/lab_view.h"

#include <fmt/format.h>

#include "report/text_table.h"

namespace latte {
namespace {

std::string Configuration(const LabSubmission& s) {
  return fmt::format("{}, {} thread{}, {}", s.backend, s.threads, s.threads == 1 ? "" : "s", s.precision);
}

nlohmann::json CountsJson(const LabCounts& c, bool with_left) {
  nlohmann::json json = {{"jobs", c.jobs},         {"done", c.done},
                         {"claimed", c.claimed},   {"failed", c.failed},
                         {"kernels_done", c.kernels_done}, {"measured", c.measured},
                         {"unsupported", c.unsupported},   {"busy_secs", c.busy_secs},
                         {"kernels_per_sec", c.rate()}};
  if (with_left) json["left"] = c.left;
  return json;
}

std::string Rate(const LabCounts& c) { return c.busy_secs > 0 ? fmt::format("{:.2f}", c.rate()) : "-"; }

}  // namespace

std::string LabSubmitText(const LabSubmitReport& report, const std::string& db) {
  const LabSubmission& s = report.result.submission;
  std::string text;
  for (const std::string& note : report.notes) text += "sample: " + note + "\n";
  if (report.result.created) {
    text += fmt::format("lab campaign {} for device class '{}' ({}): {} kernels in {} jobs, queued in {}\n", s.id,
                        s.device_class, Configuration(s), s.kernels, s.jobs, db);
  } else {
    text += fmt::format("lab campaign {} for device class '{}' ({}) was submitted before ({} kernels in {} jobs); "
                        "queued its {} failed jobs again in {}\n",
                        s.id, s.device_class, Configuration(s), s.kernels, s.jobs, report.result.requeued, db);
  }
  return text;
}

nlohmann::json LabSubmitJson(const LabSubmitReport& report, const std::string& db) {
  const LabSubmission& s = report.result.submission;
  return {{"db", db},
          {"campaign", s.id},
          {"created", report.result.created},
          {"requeued", report.result.requeued},
          {"device_class", s.device_class},
          {"backend", s.backend},
          {"threads", s.threads},
          {"precision", s.precision},
          {"settings", nlohmann::json::parse(s.settings, nullptr, false)},
          {"space", nlohmann::json::parse(s.space, nullptr, false)},
          {"jobs", s.jobs},
          {"kernels", s.kernels},
          {"notes", report.notes}};
}

std::string LabWorkText(const LabWorkResult& r, const std::string& db) {
  std::string text = fmt::format(
      "worker {} as device {}: {} jobs done ({} kernels measured, {} unsupported), {} lost to other workers, {} "
      "failed, in {:.1f} s, into {}\n",
      r.worker, r.device, r.jobs, r.measured, r.unsupported, r.lost, r.failed, r.secs, db);
  if (r.skipped > 0) text += fmt::format("left {} campaigns to other workers: this machine cannot measure them\n", r.skipped);
  if (r.interrupted) text += "stopped on request (a job it held went back to the queue)\n";
  return text;
}

nlohmann::json LabWorkJson(const LabWorkResult& r, const std::string& db) {
  return {{"db", db},           {"worker", r.worker},   {"device", r.device}, {"jobs", r.jobs},
          {"measured", r.measured}, {"unsupported", r.unsupported}, {"lost", r.lost}, {"failed", r.failed},
          {"skipped_campaigns", r.skipped}, {"secs", r.secs},     {"interrupted", r.interrupted}};
}

std::string LabStatusText(const LabStatus& status, const std::string& db) {
  std::string text = fmt::format("lab in {} at {} (server time)\n", db, status.server_time);
  if (status.submissions.empty()) return text + "no lab campaigns submitted\n";
  TextTable campaigns{{"campaign"}, {"class"}, {"configuration"}, {"kernels", TextTable::kRight},
                      {"jobs", TextTable::kRight}, {"done", TextTable::kRight}, {"claimed", TextTable::kRight},
                      {"failed", TextTable::kRight}, {"left", TextTable::kRight}, {"kernels/s", TextTable::kRight}};
  for (const LabSubmissionStatus& s : status.submissions) {
    const LabCounts& c = s.counts;
    campaigns.AddRow({std::to_string(s.submission.id), s.submission.device_class, Configuration(s.submission),
                      std::to_string(s.submission.kernels), std::to_string(c.jobs), std::to_string(c.done),
                      std::to_string(c.claimed), std::to_string(c.failed), std::to_string(c.left), Rate(c)});
  }
  text += campaigns.Render();
  for (const LabSubmissionStatus& s : status.submissions)
    for (const std::string& error : s.errors) text += fmt::format("campaign {}: failed: {}\n", s.submission.id, error);
  if (!status.devices.empty()) {
    TextTable devices{{"device"}, {"campaign", TextTable::kRight}, {"done", TextTable::kRight},
                      {"claimed", TextTable::kRight}, {"failed", TextTable::kRight}, {"measured", TextTable::kRight},
                      {"unsupported", TextTable::kRight}, {"kernels/s", TextTable::kRight}};
    for (const LabDeviceStatus& d : status.devices) {
      const LabCounts& c = d.counts;
      devices.AddRow({d.device, std::to_string(d.submission), std::to_string(c.done), std::to_string(c.claimed),
                      std::to_string(c.failed), std::to_string(c.measured), std::to_string(c.unsupported), Rate(c)});
    }
    text += "\n";
    text += devices.Render();
  }
  return text;
}

nlohmann::json LabStatusJson(const LabStatus& status, const std::string& db) {
  nlohmann::json campaigns = nlohmann::json::array(), devices = nlohmann::json::array();
  for (const LabSubmissionStatus& s : status.submissions) {
    nlohmann::json c = CountsJson(s.counts, true);
    c["campaign"] = s.submission.id;
    c["device_class"] = s.submission.device_class;
    c["backend"] = s.submission.backend;
    c["threads"] = s.submission.threads;
    c["precision"] = s.submission.precision;
    c["kernels"] = s.submission.kernels;
    c["created"] = s.submission.created;
    c["errors"] = s.errors;
    campaigns.push_back(std::move(c));
  }
  for (const LabDeviceStatus& d : status.devices) {
    nlohmann::json c = CountsJson(d.counts, false);
    c["device"] = d.device;
    c["campaign"] = d.submission;
    devices.push_back(std::move(c));
  }
  return {{"db", db}, {"server_time", status.server_time}, {"campaigns", campaigns}, {"devices", devices}};
}

}  // namespace latte
