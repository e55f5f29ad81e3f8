// `latte validate MODEL... --pack PACK.json`: each model predicted and measured for real in the
// same run; predicted vs measured per model and per kernel, ±5% / ±10% shares, RMSPE, SVG scatter;
// with --db, the run recorded in a store (the lab's history of accuracy per device).
#include <CLI/CLI.hpp>

#include "cli/builtin_backends.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/run_record.h"
#include "core/file.h"
#include "db/table_io.h"
#include "report/inspect_view.h"
#include "report/validate_view.h"

namespace latte::cli {

void AddValidateCommand(CLI::App& app, Status& result) {
  struct Flags {
    std::vector<std::string> models;
    std::string pack, backend, format = "text", plot, output;
    int num_threads = 0;
    MeasureOptions measure = ValidationMeasureOptions();
    bool layers = false;
    ModelInputFlags inputs;
    RunRecordFlags record;
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand("validate", "Predict models with a pack and measure them for real: predicted vs measured");
  cmd->add_option("models", flags->models, "Model files (.tflite or .onnx)")->required();
  cmd->add_option("--pack", flags->pack, "Predictor pack (JSON)")->required();
  cmd->add_option("--backend", flags->backend, "Backend to measure on (default: the pack's; must match it)");
  cmd->add_option("--num-threads,--num_threads", flags->num_threads, "Threads (default: the pack's; must match it)")
      ->check(IntegerIn(1, kMaxThreads));
  AddProtocolFlags(*cmd, flags->measure, " per model");
  cmd->add_flag("--layers", flags->layers, "Text: also a table of kernels per model");
  cmd->add_option("--format", flags->format, "Output format (html: a page, with -o)")
      ->check(CLI::IsMember({"text", "json", "html"}))
      ->capture_default_str();
  AddReportOutputFlag(*cmd, flags->output);
  cmd->add_option("--plot", flags->plot, "Write an SVG scatter of predicted vs measured to FILE");
  AddModelInputFlags(*cmd, flags->inputs, "; applies to every model that has the input");
  AddRunRecordFlags(*cmd, flags->record, "the run (the pack, each model's predicted, measured, interval and error)");
  OnRun(cmd, result, [flags]() -> Status {
    // Before loading the pack and measuring.
    LATTE_RETURN_IF_ERROR(CheckOutputFile(flags->plot));
    LATTE_RETURN_IF_ERROR(CheckReportOutput(flags->format, flags->output));
    LATTE_RETURN_IF_ERROR(CheckRunStore(flags->record));
    // Every model read before the pack (tens of MB) and before anything is measured: a bad file or
    // a typo fails at once.
    std::vector<Graph> graphs;
    LATTE_RETURN_IF_ERROR(ImportModelsForCommand(flags->models, flags->inputs, graphs));
    auto pack = Pack::Load(flags->pack);
    if (!pack.ok()) {
      return pack.status();
    }
    std::string pack_hash;  // the pack's identity, of the bytes just loaded
    if (!flags->record.db.empty()) {
      LATTE_ASSIGN_OR_RETURN(pack_hash, FileDigest(flags->pack));
    }
    // A pack predicts one backend at one thread count: measuring another would compare apples to pears.
    if (!flags->backend.empty() && flags->backend != pack->info.backend) {
      return InvalidInput("--backend " + flags->backend + " does not match the pack's backend (" +
                          pack->info.backend + ")");
    }
    if (flags->num_threads != 0 && flags->num_threads != pack->info.threads) {
      return InvalidInput("--num-threads " + std::to_string(flags->num_threads) +
                          " does not match the pack's threads (" +
                          std::to_string(pack->info.threads) + ")");
    }
    BenchOptions options;
    options.run.num_threads = pack->info.threads;
    options.measure = flags->measure;
    if (Status s = options.measure.Validate(); !s.ok()) {
      return s;
    }
    BackendRegistry registry;
    RegisterBuiltinBackends(registry);
    const DriftCheck drift = MeasureDrift(*pack, registry);  // before the models, as the campaigns did
    std::vector<ModelValidation> results;
    for (std::size_t i = 0; i < graphs.size(); ++i) {
      const std::string& model = flags->models[i];
      auto validated = ValidateModel(graphs[i], model, *pack, options, registry);
      if (!validated.ok()) {
        return validated.status().WithContext(model);
      }
      results.push_back(std::move(validated).value());
    }
    const DeviceFingerprint here = ReadDeviceFingerprint();
    ValidateView view(results, *pack, CompareMachine(*pack, here), drift);
    if (!flags->plot.empty()) {
      if (Status written = WriteFileAtomically(flags->plot, view.Svg()); !written.ok()) {
        return written.WithContext(flags->plot);
      }
    }
    // The report first: a store that fails now (a lost connection) loses no figure a user waited for.
    LATTE_RETURN_IF_ERROR(EmitReport(flags->output, flags->format == "json"   ? DumpJson(view.Json()) + "\n"
                                                    : flags->format == "html" ? view.Html(graphs)
                                                                              : view.Text(flags->layers)));
    if (flags->record.db.empty()) return Status::Ok();
    RunInfo run;
    run.command = "validate";
    run.arguments = "latte validate";
    for (const std::string& model : flags->models) run.arguments += " " + model;
    run.arguments += " --pack " + flags->pack + " --num-threads " + std::to_string(pack->info.threads) +
                     ProtocolArguments(flags->measure);
    run.pack = flags->pack;
    run.pack_hash = pack_hash;
    run.pack_device = pack->info.device.is_object() ? pack->info.device.value("key", "") : "";
    run.backend = pack->info.backend;
    run.threads = pack->info.threads;
    run.precision = pack->info.precision;
    if (drift.measured) run.drift_ratio = drift.Ratio();
    return RecordRunIn(flags->record, here, run, view.Records(), {});
  });
}

}  // namespace latte::cli
