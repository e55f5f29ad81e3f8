// `latte calibrate [--backend B] [--num-threads T] --budget 10m -o PACK.json`: profile this
// machine within a budget (fusion rules, the models' kernels, random kernels, adaptive rounds)
// and fit a pack, in one command.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <iostream>
#include <optional>

#include <fmt/format.h>

#include "cli/builtin_backends.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "core/progress.h"
#include "db/server_url.h"
#include "db/store.h"
#include "calibrate/calibrate.h"
#include "predict/pack.h"
#include "report/calibrate_view.h"

namespace latte::cli {
void AddCalibrateCommand(CLI::App& app, Status& result) {
  struct Flags {
    std::string backend = "xnnpack", budget = "10m", db, output, from, format = "text", precision = "fp32";
    std::vector<std::string> models;
    ModelInputFlags inputs;
    int num_threads = 1;
    std::uint64_t seed = 0;
    bool no_fusion = false;
    FitOptions fit;
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand("calibrate", "Profile this machine within a budget and fit a predictor pack (one command)");
  cmd->add_option("--backend", flags->backend, "Backend to calibrate")->capture_default_str();
  cmd->add_option("--num-threads,--num_threads", flags->num_threads, "Threads")->capture_default_str()->check(IntegerIn(1, kMaxThreads));
  cmd->add_option("--precision", flags->precision,
                  "fp32; int8: the kernels of a model quantized post-training (bench --precision int8), for an int8 "
                  "pack; bf16: the kernels of a model run in bfloat16 (bench --precision bf16), for a bf16 pack")
      ->check(PrecisionIn({Precision::kFp32, Precision::kInt8, Precision::kBf16}, "calibrate"))
      ->capture_default_str();
  cmd->add_option("--budget", flags->budget, "Time for the whole calibration: 90s, 10m, 1h (at least 30s)")
      ->capture_default_str();
  cmd->add_option("-o,--output", flags->output, "Pack file to write")->required();
  cmd->add_option("--models", flags->models, "Models whose kernels (and neighbours) are profiled first");
  AddModelInputFlags(*cmd, flags->inputs, "; for --models");
  AddStoreFlag(*cmd, flags->db, "Store the measurements go to");
  cmd->add_option("--seed", flags->seed, "Seed of the random draws")->capture_default_str();
  cmd->add_flag("--no-detect-fusion", flags->no_fusion, "Use the default fusion rules instead of measuring them");
  cmd->add_option("--from", flags->from,
                  "Start from this pack (same backend and threads): its fusion rules, and its kernels adapted to "
                  "this machine join the fit where none was measured here");
  cmd->add_option("--folds", flags->fit.folds, "Cross-validation folds of the fit")->check(CLI::Range(2, 100));
  cmd->add_option("--format", flags->format, "What it prints: text, or one JSON document at the end")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  OnRun(cmd, result, [flags]() -> Status {
    CalibrateOptions options;
    options.backend = flags->backend;
    options.num_threads = flags->num_threads;
    LATTE_ASSIGN_OR_RETURN(options.precision, ParsePrecision(flags->precision));
    auto budget = ParseDuration(flags->budget);
    if (!budget.ok()) {
      return budget.status().WithContext("--budget");
    }
    options.budget_secs = *budget;
    options.db = flags->db.empty() ? DefaultStorePath() : flags->db;
    options.models = flags->models;
    auto shapes = ParseInputShapes(flags->inputs.shapes);
    if (!shapes.ok()) {
      return shapes.status();
    }
    options.input_shapes = *shapes;
    LATTE_ASSIGN_OR_RETURN(options.input_values, ParseInputValues(flags->inputs.values));
    options.seed = flags->seed;
    options.detect_fusion = !flags->no_fusion;
    options.fit = flags->fit;
    options.tty = IsTerminal(STDERR_FILENO);
    options.command = "latte calibrate --backend " + flags->backend + " --num-threads " +
                      std::to_string(flags->num_threads) + " --budget " + flags->budget + " --seed " +
                      std::to_string(flags->seed) + (flags->no_fusion ? " --no-detect-fusion" : "") +
                      (options.precision == Precision::kFp32 ? "" : " --precision " + flags->precision);
    for (const std::string& model : flags->models) options.command += " --models " + model;
    for (const std::string& shape : flags->inputs.shapes) options.command += " --input-shape " + shape;
    for (const std::string& value : flags->inputs.values) options.command += " --input-value " + value;
    if (!flags->from.empty()) options.command += " --from " + flags->from;
    options.from_path = flags->from;  // the pack itself is read after the cheaper checks
    options.stop = StopFlagRaisedBySignals();

    BackendRegistry registry;
    RegisterBuiltinBackends(registry);
    // Everything that can be wrong with the inputs fails now, not after minutes of measuring:
    // the options, the pack's path, the models, the store.
    if (Status s = CheckCalibrateOptions(options, registry); !s.ok()) {
      return s;
    }
    LATTE_RETURN_IF_ERROR(CheckOutputFile(flags->output, /*required=*/true));
    std::optional<Pack> from;
    if (!flags->from.empty()) {
      auto loaded = Pack::Load(flags->from);  // errors name the file
      if (!loaded.ok()) {
        return loaded.status();
      }
      from = std::move(*loaded);
      options.from = &*from;
      if (Status s = CheckCalibrateOptions(options, registry); !s.ok()) {
        return s;
      }
    }
    if (!flags->models.empty()) {
      std::vector<Graph> graphs;
      LATTE_RETURN_IF_ERROR(ImportModelsForCommand(flags->models, flags->inputs, graphs));
    }
    if (auto store = Store::Open(options.db); !store.ok()) {
      return store.status();
    }
    auto result = RunCalibrate(options, registry, std::cerr);
    if (!result.ok()) {
      return result.status();
    }
    const bool json = flags->format == "json";
    if (!json) std::cout << CalibrateResultText(*result, options.fit.folds);
    if (result->interrupted) {
      if (json) std::cout << CalibrateResultJson(*result, MaskPassword(options.db), "").dump(2) << "\n";
      else
        std::cout << "interrupted: measurements so far are in " << MaskPassword(options.db)
                  << "; run the same command again to continue (no pack written)\n";
      return Interrupted("");  // what it measured is said above
    }
    if (Status saved = result->fit.fit.pack.Save(flags->output); !saved.ok()) {
      return saved;
    }
    if (json) std::cout << CalibrateResultJson(*result, MaskPassword(options.db), flags->output).dump(2) << "\n";
    else
      std::cout << "wrote " << flags->output << " (" << result->fit.fit.pack.kinds.size() << " kernel kinds, "
                << result->fit.measurements << " measurements of this machine in " << MaskPassword(options.db) << ")\n";
    return Status::Ok();
  });
}

}  // namespace latte::cli
