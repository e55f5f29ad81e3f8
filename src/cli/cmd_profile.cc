// `latte profile`: measure sampled kernels on a backend into the store (a resumable campaign),
// or with --detect-fusion, find which op chains the backend runs fused.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <iostream>

#include "cli/builtin_backends.h"
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
    std::string backend = "xnnpack", precision = "fp32", kernels, strategy = "grid", grid = "default", budget, db,
                fusion_out, format = "text";
    std::vector<std::string> models;
    ModelInputFlags inputs;
    int num_threads = 1;
    MeasureOptions measure = KernelMeasureOptions();
    std::size_t max_kernels = 0, batch = 16;
    std::uint64_t seed = 0;
    bool no_neighbours = false, detect_fusion = false;
    double alpha = 0.5;
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand("profile", "Measure sampled kernels on a backend into the store (resumable)");
  cmd->add_option("--backend", flags->backend, "Backend that runs the kernels")->capture_default_str();
  cmd->add_option("--format", flags->format, "The summary (or the fusion verdicts) as text or JSON")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  cmd->add_option("--num-threads,--num_threads", flags->num_threads, "Threads")->capture_default_str()->check(IntegerIn(1, kMaxThreads));
  cmd->add_option("--precision", flags->precision, "Precision")
      ->check(PrecisionIn({Precision::kFp32, Precision::kInt8}, "profile"))
      ->capture_default_str();
  cmd->add_option("--kernels", flags->kernels,
                  "Kernel kinds, comma-separated: op names or aliases (conv, dwconv2d, fc, ...), fused as conv2d+relu");
  cmd->add_option("--strategy", flags->strategy, "How to sample kernels")
      ->check(CLI::IsMember({"grid", "random", "from-models", "architectures", "transformers", "adaptive"}))
      ->capture_default_str();
  cmd->add_option("--grid", flags->grid, "Grid for --strategy grid (conv2d's default is tflite)")
      ->check(CLI::IsMember({"default", "tflite", "tensorrt"}))
      ->capture_default_str();
  cmd->add_option("--models", flags->models, "Model files for --strategy from-models");
  AddModelInputFlags(*cmd, flags->inputs, "; for --models");
  cmd->add_flag("--no-neighbours", flags->no_neighbours, "from-models: only the models' own kernels");
  cmd->add_option("--budget", flags->budget,
                  "Stop cleanly after this long: 30s, 10m, 2h, or a bare number of seconds (default: no limit)");
  cmd->add_option("--max-kernels", flags->max_kernels, "At most this many kernels (random: how many to draw)")
      ->check(IntegerIn(1, kMaxRandomKernels));  // the random sampler's limit, for every strategy
  cmd->add_option("--seed", flags->seed, "Seed of the random draws and of the measuring order")->capture_default_str();
  AddStoreFlag(*cmd, flags->db, "Store (created when new)");
  AddProtocolFlags(*cmd, flags->measure, " per kernel");
  cmd->add_option("--batch", flags->batch, "Measurements per store transaction")->capture_default_str()->check(CLI::Range(1, 100000));
  cmd->add_flag("--detect-fusion", flags->detect_fusion,
                "Measure op chains alone and together and decide which ones the backend fuses");
  cmd->add_option("--alpha", flags->alpha, "--detect-fusion: fused when T(a)+T(b)-T(ab) > alpha*min(T(a),T(b))")
      ->capture_default_str();
  cmd->add_option("--fusion-out", flags->fusion_out, "--detect-fusion: also write the rules and evidence as JSON to FILE");
  OnRun(cmd, result, [flags, cmd]() -> Status {
    CampaignOptions campaign;
    campaign.backend = flags->backend;
    campaign.run.num_threads = flags->num_threads;
    // int8: the backend runs each (fp32-described) kernel quantized; kinds it has no int8 kernel
    // for are recorded as unsupported with its reason.
    LATTE_ASSIGN_OR_RETURN(campaign.run.precision, ParsePrecision(flags->precision));
    campaign.measure = flags->measure;
    if (Status s = campaign.measure.Validate(); !s.ok()) {
      return s;
    }
    // Before measuring.
    LATTE_RETURN_IF_ERROR(CheckOutputFile(flags->fusion_out));
    if (cmd->count("--budget") > 0) {  // given empty is an error, not "no limit"
      auto budget = ParseDuration(flags->budget);
      if (!budget.ok()) {
        return budget.status().WithContext("--budget");
      }
      campaign.budget_secs = *budget;
    }
    BackendRegistry registry;
    RegisterBuiltinBackends(registry);
    if (registry.Find(flags->backend) == nullptr) {
      return registry.Create(flags->backend, campaign.run).status();
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
    options.sampler.strategy = flags->strategy;
    options.sampler.grid = flags->grid;
    options.sampler.models = flags->models;
    options.sampler.neighbours = !flags->no_neighbours;
    // The models' kernels as the backend runs them (NHWC, activations folded), as predict asks.
    if (flags->strategy == "from-models" || flags->strategy == "transformers") {
      options.sampler.layout_backend = flags->backend;
      options.sampler.layout_backend_takes_nhwc = registry.Find(flags->backend)->takes_nhwc;  // known: checked above
    }
    options.sampler.seed = flags->seed;
    options.sampler.max_kernels = flags->max_kernels;
    auto shapes = ParseInputShapes(flags->inputs.shapes);
    if (!shapes.ok()) {
      return shapes.status();
    }
    options.sampler.input_shapes = *shapes;
    LATTE_ASSIGN_OR_RETURN(options.sampler.input_values, ParseInputValues(flags->inputs.values));
    if (!flags->kernels.empty()) {
      auto kinds = ParseKindList(flags->kernels);
      if (!kinds.ok()) {
        return kinds.status().WithContext("--kernels");
      }
      for (const Kernel& kind : *kinds) options.sampler.kinds.push_back(kind.Kind());
    } else if (flags->strategy != "from-models" && flags->strategy != "architectures" && flags->strategy != "transformers") {
      return InvalidInput("--kernels is required for --strategy " + flags->strategy);
    }
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
