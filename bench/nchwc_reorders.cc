// The reorders between the plain and the blocked layout that ir/nchwc_layout expects ONNX Runtime
// to make in a model (its NCHWc pass, as the in-graph context counts them), one line each: the
// plan's node, direction, logical channels, map and bytes at whole blocks; then the total. Set it
// beside ORT's own profile (bench/nchwc_walk_check.sh) to see where the walk and ORT disagree.
// No timing.
//
// Usage: build/bench/nchwc_reorders MODEL [--input-shape NAME=SHAPE ...]
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "cli/builtin_backends.h"
#include "cli/cli_common.h"
#include "import/import.h"
#include "ir/nchwc_layout.h"
#include "run/executor.h"

namespace {

// The reorders ir/nchwc_layout expects ORT to make in a model, one
// line each (node, direction, channels, map, bytes), to set beside ORT's own profile.
int ListModelReorders(const std::string& path, const std::vector<std::string>& shapes) {
  using namespace latte;
  BackendRegistry registry;
  cli::RegisterBuiltinBackends(registry);
  ImportOptions options;
  Expected<std::map<std::string, Shape>> parsed = cli::ParseInputShapes(shapes);
  if (!parsed.ok()) {
    std::fprintf(stderr, "nchwc_reorders: %s\n", parsed.status().message().c_str());
    return 2;
  }
  options.input_shapes = std::move(*parsed);
  Expected<Graph> graph = ImportModel(path, options);
  Expected<GraphPlan> plan = graph.ok() ? PlanGraphOnBackend(*graph, "ort", registry, RunOptions{}) : Expected<GraphPlan>(graph.status());
  Expected<NchwcPlan> nchwc = plan.ok() ? PlanNchwc(plan->graph, HostNchwcBlock()) : Expected<NchwcPlan>(plan.status());
  if (!nchwc.ok()) {
    std::fprintf(stderr, "nchwc_reorders: %s\n", nchwc.status().message().c_str());
    return 2;
  }
  std::vector<std::vector<NodeId>> layers;
  for (std::size_t n = 0; n < plan->graph.num_nodes(); ++n) layers.push_back({static_cast<NodeId>(n)});
  const auto reorders = NchwcReorders(plan->graph, *nchwc, layers);
  std::int64_t total = 0;
  for (std::size_t n = 0; n < reorders.size(); ++n)
    for (const NchwcReorder& r : reorders[n]) {
      total += r.bytes;
      std::printf("%s\t%s\t%lld\t%lldx%lld\t%lld\n", plan->graph.node(static_cast<NodeId>(n)).name.c_str(),
                  r.into_blocked ? "in" : "out", static_cast<long long>(r.channels), static_cast<long long>(r.height),
                  static_cast<long long>(r.width), static_cast<long long>(r.bytes));
    }
  std::printf("total\t%.3f MiB\n", double(total) / (1 << 20));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> shapes;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (std::string(argv[i]) != "--input-shape") break;
    shapes.push_back(argv[i + 1]);
  }
  if (argc < 2 || argc % 2 != 0 || shapes.size() != static_cast<std::size_t>(argc - 2) / 2) {
    std::fprintf(stderr, "usage: %s MODEL [--input-shape NAME=SHAPE ...]\n", argv[0]);
    return 2;
  }
  return ListModelReorders(argv[1], shapes);
}
