// `latte inspect MODEL`: the graph as Latte reads it, one row per node.
#include <CLI/CLI.hpp>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "report/inspect_view.h"

namespace latte::cli {

void AddInspectCommand(CLI::App& app, Status& result) {
  struct Flags {
    std::string model;
    std::string format = "text", output;
    ModelInputFlags inputs;
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand("inspect", "Print each node of a model: op, shapes, geometry, MACs, params, bytes");
  cmd->add_option("model", flags->model, "Model file (.tflite or .onnx)")->required();
  cmd->add_option("--format", flags->format, "Output format (html: a page, with -o)")
      ->check(CLI::IsMember({"text", "json", "html"}));
  AddReportOutputFlag(*cmd, flags->output);
  AddModelInputFlags(*cmd, flags->inputs);
  OnRun(cmd, result, [flags]() -> Status {
    LATTE_RETURN_IF_ERROR(CheckReportOutput(flags->format, flags->output));
    Graph graph;
    LATTE_RETURN_IF_ERROR(ImportForCommand(flags->model, flags->inputs, graph));
    InspectView view(graph, flags->model);
    if (flags->format == "json") return EmitReport(flags->output, DumpJson(view.Json()) + "\n");
    if (flags->format == "html") return EmitReport(flags->output, view.Html());
    return EmitReport(flags->output, view.Text());
  });
}

}  // namespace latte::cli
