#include "cli/cli_common.h"

#include <csignal>
#include <cstdio>

#include "import/import.h"

namespace latte::cli {
namespace {

std::atomic<bool> g_stop_requested{false};

// The first Ctrl-C asks the command to stop at its next safe point (after the current kernel,
// keeping every measurement); a second one, for when that point is far (a long kernel, a fit),
// ends the process at once as the signal would have (committed measurements stay committed).
extern "C" void RequestStop(int sig) {
  if (g_stop_requested.exchange(true)) {
    std::signal(sig, SIG_DFL);
    std::raise(sig);
  }
}

}  // namespace

const std::atomic<bool>* StopFlagRaisedBySignals() {
  g_stop_requested.store(false);
  std::signal(SIGINT, RequestStop);
  std::signal(SIGTERM, RequestStop);
  return &g_stop_requested;
}


int ReportError(const std::string& subject, const Status& status) {
  std::string message = status.message();
  for (char& c : message)  // one line, always
    if (c == '\n' || c == '\r') c = ' ';
  if (subject.empty()) std::fprintf(stderr, "error: %s\n", message.c_str());
  else std::fprintf(stderr, "error: %s: %s\n", subject.c_str(), message.c_str());
  return status.code() == StatusCode::kInternal ? kExitInternal : kExitBadInput;
}

Expected<std::map<std::string, Shape>> ParseInputShapes(const std::vector<std::string>& values) {
  std::map<std::string, Shape> shapes;
  for (const std::string& value : values) {
    size_t eq = value.rfind('=');
    if (eq == std::string::npos || eq == 0)
      return InvalidInput("--input-shape '" + value + "': expected NAME=SHAPE, like x=1x3x224x224");
    auto shape = ParseShape(value.substr(eq + 1));
    if (!shape.ok()) return shape.status().WithContext("--input-shape '" + value + "'");
    shapes[value.substr(0, eq)] = *shape;
  }
  return shapes;
}

int ImportForCommand(const std::string& model, const std::vector<std::string>& input_shapes, Graph& graph) {
  auto shapes = ParseInputShapes(input_shapes);
  if (!shapes.ok()) return ReportError("", shapes.status());
  ImportOptions options;
  options.input_shapes = *shapes;
  auto imported = ImportModel(model, options);
  if (!imported.ok()) return ReportError(model, imported.status());
  graph = std::move(imported).value();
  return kExitOk;
}

}  // namespace latte::cli
