// `latte lab submit | work | status`: work handed out by a PostgreSQL database to the devices of a
// lab (db/lab_queue.h, profile/lab.h).
#include <CLI/CLI.hpp>

#include <iostream>

#include "cli/builtin_backends.h"
#include "cli/campaign_flags.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "db/lab_queue.h"
#include "db/server_url.h"
#include "profile/lab.h"
#include "report/lab_view.h"

namespace latte::cli {
namespace {

void AddLabStoreFlag(CLI::App& cmd, std::string& db) {
  cmd.add_option("--db", db, "The lab's PostgreSQL database: postgresql://USER@HOST/NAME (a password is never shown)")
      ->required();
}

void AddFormatFlag(CLI::App& cmd, std::string& format) {
  cmd.add_option("--format", format, "Text or JSON")->check(CLI::IsMember({"text", "json"}))->capture_default_str();
}

void AddSubmit(CLI::App& lab, Status& result) {
  struct Flags {
    CampaignFlags campaign;
    std::string db, device_class, format = "text";
    std::size_t job_size = 16;
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* cmd = lab.add_subcommand("submit", "Turn a profile campaign into jobs in the lab's database");
  AddLabStoreFlag(*cmd, flags->db);
  cmd->add_option("--device-class", flags->device_class, "The class of devices the campaign is for (a name)")
      ->required();
  AddCampaignFlags(*cmd, flags->campaign, {"grid", "random", "from-models", "architectures", "transformers"});
  cmd->add_option("--job-size", flags->job_size, "Kernels per job")->capture_default_str()->check(IntegerIn(1, 100000));
  AddFormatFlag(*cmd, flags->format);
  OnRun(cmd, result, [flags]() -> Status {
    LATTE_RETURN_IF_ERROR(LabQueue::CheckServer(flags->db));  // before any work, and no file is created
    if (flags->device_class.empty()) return InvalidInput("--device-class: a class of devices is required");
    BackendRegistry registry;
    RegisterBuiltinBackends(registry);
    LabSubmitOptions options;
    LATTE_ASSIGN_OR_RETURN(options.campaign, CampaignFromFlags(flags->campaign, registry));
    LATTE_ASSIGN_OR_RETURN(options.sampler, SamplerFromFlags(flags->campaign, registry));
    options.db = flags->db;
    options.device_class = flags->device_class;
    options.job_size = flags->job_size;
    LATTE_ASSIGN_OR_RETURN(LabSubmitReport report, SubmitLab(options));
    const std::string db = MaskPassword(flags->db);
    std::cout << (flags->format == "json" ? LabSubmitJson(report, db).dump(2) + "\n" : LabSubmitText(report, db));
    return Status::Ok();
  });
}

void AddWork(CLI::App& lab, Status& result) {
  struct Flags {
    std::string db, device_name, device_class, lease = "60s", format = "text";
    std::size_t max_jobs = 0;
    bool keep_waiting = false;
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* cmd = lab.add_subcommand("work", "Claim the lab's jobs and measure them on this machine");
  AddLabStoreFlag(*cmd, flags->db);
  cmd->add_option("--device-name", flags->device_name,
                  "The device the measurements are stored for (default: this machine's fingerprint key)");
  cmd->add_option("--device-class", flags->device_class, "Only jobs submitted for this class (default: every class)");
  cmd->add_option("--lease", flags->lease,
                  "How long a claim holds a job without news from this worker (30s, 2m; the server's clock times it)")
      ->capture_default_str();
  cmd->add_option("--max-jobs", flags->max_jobs, "Stop after this many jobs (default: when none is left)")
      ->check(IntegerIn(1, 1000000000));
  cmd->add_flag("--keep-waiting", flags->keep_waiting, "When no job is left, wait for new ones (stop with Ctrl-C)");
  AddFormatFlag(*cmd, flags->format);
  OnRun(cmd, result, [flags, cmd]() -> Status {
    LATTE_RETURN_IF_ERROR(LabQueue::CheckServer(flags->db));
    LabWorkOptions options;
    options.db = flags->db;
    if (cmd->count("--device-name") > 0 && flags->device_name.empty()) {
      return InvalidInput("--device-name: a device name must not be empty");
    }
    options.device_name = flags->device_name;
    options.device_class = flags->device_class;
    Expected<double> lease = ParseDuration(flags->lease);
    if (!lease.ok()) return lease.status().WithContext("--lease");
    if (*lease < 0.1 || *lease > 7 * 24 * 3600.0) return InvalidInput("--lease: " + flags->lease + " is not in 0.1s..7d");
    options.lease_secs = *lease;
    options.max_jobs = flags->max_jobs;
    options.keep_waiting = flags->keep_waiting;
    options.stop = StopFlagRaisedBySignals();
    BackendRegistry registry;
    RegisterBuiltinBackends(registry);
    LATTE_ASSIGN_OR_RETURN(LabWorkResult work, RunLabWorker(options, registry, std::cerr));
    const std::string db = MaskPassword(flags->db);
    std::cout << (flags->format == "json" ? LabWorkJson(work, db).dump(2) + "\n" : LabWorkText(work, db));
    return work.interrupted ? Interrupted("") : Status::Ok();
  });
}

void AddStatus(CLI::App& lab, Status& result) {
  struct Flags {
    std::string db, format = "text";
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* cmd = lab.add_subcommand("status", "What the lab's campaigns and devices have done, hold and have left");
  AddLabStoreFlag(*cmd, flags->db);
  AddFormatFlag(*cmd, flags->format);
  OnRun(cmd, result, [flags]() -> Status {
    LATTE_RETURN_IF_ERROR(LabQueue::CheckServer(flags->db));
    LATTE_ASSIGN_OR_RETURN(Store store, Store::OpenReadOnly(flags->db));
    LATTE_ASSIGN_OR_RETURN(LabQueue queue, LabQueue::Of(store));
    LATTE_ASSIGN_OR_RETURN(LabStatus status, queue.ReadStatus());
    const std::string db = MaskPassword(flags->db);
    std::cout << (flags->format == "json" ? LabStatusJson(status, db).dump(2) + "\n" : LabStatusText(status, db));
    return Status::Ok();
  });
}

}  // namespace

void AddLabCommand(CLI::App& app, Status& result) {
  CLI::App* lab = app.add_subcommand("lab", "A device lab: work handed out by a PostgreSQL database (submit, work, status)");
  lab->require_subcommand(1);
  AddSubmit(*lab, result);
  AddWork(*lab, result);
  AddStatus(*lab, result);
}

}  // namespace latte::cli
