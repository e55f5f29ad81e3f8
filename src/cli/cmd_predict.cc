// `latte predict MODEL --pack PACK.json`: the model's latency per kernel and in total, with the
// coverage; or, with --kernels FILE --format tensorrt-conv, a list of kernels in the TensorRT
// library's line format, predicted.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/builtin_backends.h"
#include "cli/cli_common.h"
#include "cli/commands.h"
#include "db/tensorrt_conv.h"
#include "predict/model_prediction.h"
#include "report/inspect_view.h"
#include "report/predict_view.h"

namespace latte::cli {
namespace {

struct PredictFlags {
  std::string model;
  std::string pack;
  std::string kernels;
  std::string format = "text";
  std::string output;
  ModelInputFlags inputs;
};

// Each line of FILE with its latency replaced by the prediction. A kernel the pack cannot predict
// keeps -1 (the format's "no figure") and is named on stderr; a malformed line is an error.
Status PredictKernelLines(const PredictFlags& flags, const Pack& pack) {
  std::ifstream in(flags.kernels);
  if (!in) return Status(StatusCode::kIoError, "cannot open the kernel list").WithContext(flags.kernels);
  auto dtype = DataTypeFromPrecision(pack.info.precision);
  if (!dtype.ok()) return dtype.status().WithContext(flags.pack);
  std::string line, out;
  std::size_t line_number = 0, predicted = 0, unpredicted = 0;
  while (std::getline(in, line)) {
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto row = ParseTensorrtConvLine(line, *dtype);
    if (!row.ok()) return row.status().WithContext(flags.kernels + ":" + std::to_string(line_number));
    auto prediction = pack.Predict(row->kernel);
    double ms = -1;
    if (prediction.ok()) {
      ms = prediction->ms;
      ++predicted;
    } else {
      ++unpredicted;
      std::cerr << "note: " << flags.kernels << ":" << line_number << ": not predicted: " << prediction.status().message()
                << "\n";
    }
    auto formatted = FormatTensorrtConvLine(row->kernel, ms);
    if (!formatted.ok()) return formatted.status().WithContext(flags.kernels + ":" + std::to_string(line_number));
    out += *formatted + "\n";
  }
  std::cout << out;
  std::cerr << predicted << " kernels predicted, " << unpredicted << " not predicted (latency -1)\n";
  return Status::Ok();
}

}  // namespace

void AddPredictCommand(CLI::App& app, Status& result) {
  auto flags = std::make_shared<PredictFlags>();
  CLI::App* cmd = app.add_subcommand("predict", "Predict a model's latency per kernel and in total from a predictor pack");
  cmd->add_option("model", flags->model, "Model file (.tflite or .onnx)");
  cmd->add_option("--pack", flags->pack, "Predictor pack (JSON, from latte fit or latte calibrate)")->required();
  cmd->add_option("--kernels", flags->kernels, "Predict the kernels listed in FILE instead of a model");
  cmd->add_option("--format", flags->format, "Output format (tensorrt-conv: only with --kernels; html: a page, with -o)")
      ->check(CLI::IsMember({"text", "json", "csv", "html", "tensorrt-conv"}));
  AddReportOutputFlag(*cmd, flags->output);
  AddModelInputFlags(*cmd, flags->inputs);
  OnRun(cmd, result, [flags]() -> Status {
    if (flags->model.empty() == flags->kernels.empty()) {
      return InvalidInput("predict takes a MODEL or --kernels FILE, not both or neither");
    }
    if (!flags->kernels.empty() != (flags->format == "tensorrt-conv")) {
      return InvalidInput("--kernels FILE goes with --format tensorrt-conv (the only kernel list "
                          "format), and --format tensorrt-conv with --kernels");
    }
    // What cannot work is refused before the pack (tens of MB) is read.
    if (!flags->kernels.empty() && !flags->output.empty()) {
      return InvalidInput("-o goes with a MODEL's report; --kernels prints its lines to stdout");
    }
    LATTE_RETURN_IF_ERROR(CheckReportOutput(flags->format, flags->output));
    std::error_code ec;
    if (!flags->kernels.empty() && std::filesystem::is_directory(flags->kernels, ec)) {  // an ifstream opens one
      return InvalidInput("is a directory, not a kernel list").WithContext(flags->kernels);
    }
    auto pack = Pack::Load(flags->pack);
    if (!pack.ok()) {
      return pack.status();
    }
    if (!flags->kernels.empty()) {
      return PredictKernelLines(*flags, *pack);
    }
    Graph graph;
    LATTE_RETURN_IF_ERROR(ImportForCommand(flags->model, flags->inputs, graph));
    BackendRegistry registry;  // an int8 pack asks its backend which nodes run int8
    RegisterBuiltinBackends(registry);
    auto plan = PlanGraphForPrediction(graph, *pack, &registry);
    if (!plan.ok()) {
      return plan.status().WithContext(flags->model);
    }
    auto prediction = PredictModel(plan->graph, *pack);
    if (!prediction.ok()) {
      return prediction.status().WithContext(flags->model);
    }
    NameUserNodes(*plan, graph, *prediction);
    PredictView view(plan->graph, *prediction, *pack, flags->model, CompareMachine(*pack, ReadDeviceFingerprint()));
    if (flags->format == "json") return EmitReport(flags->output, DumpJson(view.Json()) + "\n");
    if (flags->format == "csv") return EmitReport(flags->output, view.Csv());
    if (flags->format == "html") return EmitReport(flags->output, view.Html(graph, *plan));
    return EmitReport(flags->output, view.Text());
  });
}

}  // namespace latte::cli
