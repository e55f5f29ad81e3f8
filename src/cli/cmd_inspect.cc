// `latte inspect MODEL`: the graph as Latte reads it, one row per node.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "report/inspect_view.h"

namespace latte::cli {

void AddInspectCommand(CLI::App& app, Status& result) {
  struct Flags {
    std::string model;
    std::string format = "text";
    std::vector<std::string> input_shapes;
  };
  auto flags = std::make_shared<Flags>();
  CLI::App* cmd = app.add_subcommand("inspect", "Print each node of a model: op, shapes, geometry, MACs, params, bytes");
  cmd->add_option("model", flags->model, "Model file (.tflite or .onnx)")->required();
  cmd->add_option("--format", flags->format, "Output format")->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--input-shape", flags->input_shapes, "Input shape NAME=1x3x224x224 (repeatable)");
  OnRun(cmd, result, [flags]() -> Status {
    Graph graph;
    LATTE_RETURN_IF_ERROR(ImportForCommand(flags->model, flags->input_shapes, graph));
    InspectView view(graph, flags->model);
    if (flags->format == "json") std::cout << DumpJson(view.Json()) << "\n";
    else std::cout << view.Text();
    return Status::Ok();
  });
}

}  // namespace latte::cli
