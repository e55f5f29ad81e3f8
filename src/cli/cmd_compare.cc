// `latte compare MODEL...`: one table over models × backends × threads × precisions (p50,
// throughput, model size, peak memory, energy), each configuration in its own child process; with
// --db, the run recorded in a store.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "cli/builtin_backends.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/run_record.h"
#include "import/import.h"
#include "report/compare_view.h"
#include "report/inspect_view.h"

namespace latte::cli {

void AddCompareCommand(CLI::App& app, Status& result) {
  struct Flags {
    std::vector<std::string> models, backends = {"xnnpack", "onednn", "ort"}, precisions = {"fp32"};
    ModelInputFlags inputs;
    std::vector<std::string> calibration_data;
    std::vector<int> threads = {1};
    std::string format = "text", output;
    MeasureOptions measure;
    RunRecordFlags record;
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand(
      "compare", "Compare backends on models: p50 latency, throughput, size, peak memory, energy (one table)");
  cmd->add_option("models", flags->models, "Model files (.tflite or .onnx)")->required();
  cmd->add_option("--backends", flags->backends, "Backends, comma-separated")->delimiter(',')->capture_default_str();
  cmd->add_option("--num-threads,--num_threads", flags->threads, "Thread counts, comma-separated (e.g. 1,2)")
      ->delimiter(',')
      ->check(IntegerIn(1, kMaxThreads))
      ->capture_default_str();
  cmd->add_option("--precision", flags->precisions, "Precisions, comma-separated")
      ->delimiter(',')
      ->check(PrecisionIn({Precision::kFp32, Precision::kBf16, Precision::kInt8}, "compare"))
      ->capture_default_str();
  cmd->add_option("--format", flags->format, "Output format (html: a page, with -o)")
      ->check(CLI::IsMember({"text", "json", "csv", "html"}))
      ->capture_default_str();
  AddReportOutputFlag(*cmd, flags->output);
  AddProtocolFlags(*cmd, flags->measure, " of each configuration");
  AddModelInputFlags(*cmd, flags->inputs, "; applies to the models with an input NAME");
  AddCalibrationDataFlag(*cmd, flags->calibration_data);
  AddRunRecordFlags(*cmd, flags->record, "the run (each configuration's p50, throughput, memory and drift)");
  OnRun(cmd, result, [flags]() -> Status {
    // A configuration listed twice would be measured twice and shown twice.
    auto twice = [](const auto& values) -> std::string {
      for (std::size_t i = 0; i < values.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
          if (values[i] == values[j]) return fmt::format("{}", values[i]);
      return "";
    };
    for (const auto& [flag, repeated] : {std::pair<const char*, std::string>{"MODEL", twice(flags->models)},
                                         {"--backends", twice(flags->backends)},
                                         {"--num-threads", twice(flags->threads)},
                                         {"--precision", twice(flags->precisions)}}) {
      if (!repeated.empty()) {
        return InvalidInput(fmt::format("{}: {} is given twice", flag, repeated));
      }
    }
    LATTE_RETURN_IF_ERROR(CheckReportOutput(flags->format, flags->output));
    LATTE_RETURN_IF_ERROR(CheckRunStore(flags->record));
    BackendRegistry registry;
    RegisterBuiltinBackends(registry);
    CompareOptions options;
    for (const std::string& name : flags->backends) {
      if (Status s = CheckBackendName(registry, "--backends", name); !s.ok()) {
        return s;
      }
      options.backends.push_back(name);
    }
    options.threads = flags->threads;
    for (const std::string& p : flags->precisions) {
      LATTE_ASSIGN_OR_RETURN(Precision precision, ParsePrecision(p));
      options.precisions.push_back(precision);
    }
    options.measure = flags->measure;
    if (Status s = options.measure.Validate(); !s.ok()) {
      return s;
    }
    std::string precisions;
    for (const std::string& p : flags->precisions) precisions += (precisions.empty() ? "" : ",") + p;
    const bool int8 = std::find(options.precisions.begin(), options.precisions.end(), Precision::kInt8) != options.precisions.end();
    LATTE_ASSIGN_OR_RETURN(options.calibration, ReadCalibrationData(flags->calibration_data, int8, precisions));
    auto parsed = ParseModelInputs(flags->inputs);
    if (!parsed.ok()) {
      return parsed.status();
    }
    // One list of shapes serves models whose inputs are named differently; a name no model has
    // is a typo.
    ImportOptions import_options = *parsed;
    import_options.skip_unknown_input_names = true;
    std::vector<CompareModel> models;
    std::set<std::string> inputs;
    for (const std::string& path : flags->models) {
      auto graph = ImportModel(path, import_options);  // a bad file stops here, before any run
      if (!graph.ok()) {
        return graph.status().WithContext(path);
      }
      for (TensorId id : graph->inputs) inputs.insert(graph->tensor(id).name);
      std::error_code ec;
      const auto bytes = std::filesystem::file_size(path, ec);
      models.push_back({path, ec ? 0 : static_cast<long long>(bytes),
                        [path, import_options] { return ImportModel(path, import_options); }});
    }
    if (Status named = CheckInputShapesNamed(import_options.input_shapes, inputs); !named.ok()) {
      return named;
    }
    if (options.calibration)
      for (const auto& [name, array] : options.calibration->arrays)
        if (!inputs.count(name)) return InvalidInput("--calibration-data names input '" + name + "', which no model has");
    auto result = CompareModels(models, options, registry);
    if (!result.ok()) {
      return result.status();
    }
    CompareView view(*result);
    // The report first: a store that fails now (a lost connection) loses no figure a user waited for.
    LATTE_RETURN_IF_ERROR(EmitReport(flags->output, flags->format == "json"  ? DumpJson(view.Json()) + "\n"
                                                    : flags->format == "csv"  ? view.Csv()
                                                    : flags->format == "html" ? view.Html()
                                                                              : view.Text()));
    if (flags->record.db.empty()) return Status::Ok();
    RunInfo run;
    run.command = "compare";
    run.arguments = "latte compare";
    for (const std::string& model : flags->models) run.arguments += " " + model;
    auto list = [](const auto& values) {
      std::string text;
      for (const auto& value : values) text += fmt::format("{}{}", text.empty() ? "" : ",", value);
      return text;
    };
    for (const std::string& flag : flags->calibration_data) run.arguments += " --calibration-data " + flag;
    run.arguments += " --backends " + list(flags->backends) + " --num-threads " + list(flags->threads) +
                     " --precision " + list(flags->precisions) + ProtocolArguments(flags->measure);
    return RecordRunIn(flags->record, result->device, run, {}, view.Records());
  });
}

}  // namespace latte::cli
