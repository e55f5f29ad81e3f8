// `latte validate MODEL... --pack PACK.json`: each model predicted and measured for real in the
// same run; predicted vs measured per model and per kernel, ±5% / ±10% shares, RMSPE, SVG scatter.
#include <CLI/CLI.hpp>

#include "cli/builtin_backends.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "core/file.h"
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
  OnRun(cmd, result, [flags]() -> Status {
    // Before loading the pack and measuring.
    LATTE_RETURN_IF_ERROR(CheckOutputFile(flags->plot));
    LATTE_RETURN_IF_ERROR(CheckReportOutput(flags->format, flags->output));
    // Every model read before the pack (tens of MB) and before anything is measured: a bad file or
    // a typo fails at once.
    std::vector<Graph> graphs;
    LATTE_RETURN_IF_ERROR(ImportModelsForCommand(flags->models, flags->inputs, graphs));
    auto pack = Pack::Load(flags->pack);
    if (!pack.ok()) {
      return pack.status();
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
    ValidateView view(results, *pack, CompareMachine(*pack, ReadDeviceFingerprint()), drift);
    if (!flags->plot.empty()) {
      if (Status written = WriteFileAtomically(flags->plot, view.Svg()); !written.ok()) {
        return written.WithContext(flags->plot);
      }
    }
    if (flags->format == "json") return EmitReport(flags->output, DumpJson(view.Json()) + "\n");
    if (flags->format == "html") return EmitReport(flags->output, view.Html(graphs));
    return EmitReport(flags->output, view.Text(flags->layers));
  });
}

}  // namespace latte::cli
