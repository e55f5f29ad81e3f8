// `latte profile`: measure sampled kernels on a backend into the store (a resumable campaign),
// or with --detect-fusion, find which op chains the backend runs fused.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <iostream>

#include "cli/builtin_backends.h"
#include "cli/campaign_flags.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "core/file.h"
#include "core/progress.h"
#include "db/server_url.h"
#include "profile/fusion.h"
#include "profile/profile.h"
#include "profile/space.h"
#include "report/profile_view.h"

namespace latte::cli {
void AddProfileCommand(CLI::App& app, Status& result) {
  struct Flags {
    CampaignFlags campaign;
    std::string budget, db, fusion_out, format = "text";
    std::size_t batch = 16;
    bool detect_fusion = false;
    double alpha = 0.5;
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand("profile", "Measure sampled kernels on a backend into the store (resumable)");
  AddCampaignFlags(*cmd, flags->campaign,
                   {"grid", "random", "from-models", "architectures", "transformers", "adaptive"});
  cmd->add_option("--format", flags->format, "The summary (or the fusion verdicts) as text or JSON")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("--budget", flags->budget,
                  "Stop cleanly after this long: 30s, 10m, 2h, or a bare number of seconds (default: no limit)");
  AddStoreFlag(*cmd, flags->db, "Store (created when new)");
  cmd->add_option("--batch", flags->batch, "Measurements per store transaction")->capture_default_str()->check(CLI::Range(1, 100000));
  cmd->add_flag("--detect-fusion", flags->detect_fusion,
                "Measure op chains alone and together and decide which ones the backend fuses");
  cmd->add_option("--alpha", flags->alpha, "--detect-fusion: fused when T(a)+T(b)-T(ab) > alpha*min(T(a),T(b))")
      ->capture_default_str();
  cmd->add_option("--fusion-out", flags->fusion_out, "--detect-fusion: also write the rules and evidence as JSON to FILE");
  OnRun(cmd, result, [flags, cmd]() -> Status {
    BackendRegistry registry;
    RegisterBuiltinBackends(registry);
    LATTE_ASSIGN_OR_RETURN(CampaignOptions campaign, CampaignFromFlags(flags->campaign, registry));
    // Before measuring.
    LATTE_RETURN_IF_ERROR(CheckOutputFile(flags->fusion_out));
    if (cmd->count("--budget") > 0) {  // given empty is an error, not "no limit"
      auto budget = ParseDuration(flags->budget);
      if (!budget.ok()) {
        return budget.status().WithContext("--budget");
      }
      campaign.budget_secs = *budget;
    }
    campaign.stop = StopFlagRaisedBySignals();

    if (flags->detect_fusion) {
      FusionOptions fusion;
      fusion.campaign = campaign;
      fusion.alpha = flags->alpha;
      auto report = DetectFusion(fusion, registry, std::cerr);
      if (!report.ok()) {
        return report.status();
      }
      std::cout << (flags->format == "json" ? FusionReportJson(*report).dump(2) + "\n" : FusionReportText(*report));
      if (!flags->fusion_out.empty()) {
        if (Status written = WriteFileAtomically(flags->fusion_out, FusionReportJson(*report).dump(2) + "\n");
            !written.ok()) {
          return written.WithContext(flags->fusion_out);
        }
      }
      return Status::Ok();
    }

    ProfileOptions options;
    options.campaign = campaign;
    LATTE_ASSIGN_OR_RETURN(options.sampler, SamplerFromFlags(flags->campaign, registry));
    options.db = flags->db.empty() ? DefaultProfileDb() : flags->db;
    options.batch_size = flags->batch;
    options.tty = IsTerminal(STDERR_FILENO);
    auto result = RunProfile(options, registry, std::cerr);
    if (!result.ok()) {
      return result.status();
    }
    std::cout << (flags->format == "json" ? ProfileResultJson(*result, MaskPassword(options.db)).dump(2) + "\n"
                                          : ProfileResultText(*result, MaskPassword(options.db)));
    return result->summary.interrupted ? Interrupted("") : Status::Ok();  // what it measured is said above
  });
}

}  // namespace latte::cli
