// What a layer costs inside a graph beyond what it costs alone, and what that depends on: for
// every layer of a graph (a MODEL, or N of profile/space's RandomNetwork), its time in the graph's
// per-layer profile and alone under the campaigns' protocol (same run), with what it touches
// (ir/cache_reuse's LayerTraffic: weight and output bytes, and each input's producing layer and
// bytes). Prints one tab-separated row per layer. xnnpack, 1 thread; run it while nothing else runs.
// Usage: context_probe PACK MODEL [INPUT=SHAPE]
//        context_probe PACK --random N [SEED=0] [hswish-se]   (space's RandomHardSwishNetwork)
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "import/import.h"
#include "probe_args.h"
#include "ir/cache_reuse.h"
#include "ir/kernel_graph.h"
#include "calibrate/validation.h"
#include "profile/campaign.h"
#include "profile/space.h"
#include "run/xnnpack/xnnpack_backend.h"

using namespace latte;

namespace {

// Prints one row per layer of the validated graph.
Status PrintLayers(const std::string& name, const ModelValidation& v, const BackendRegistry& registry,
                   const RunOptions& run, std::map<std::string, double>& alone_us) {
  std::vector<std::vector<NodeId>> nodes;
  for (const LayerPrediction& p : v.prediction.layers) nodes.push_back(p.nodes);
  const std::vector<LayerTraffic> traffic = LayerTrafficOf(v.plan.graph, nodes);
  double sum_alone = 0, sum_model = 0;
  for (const LayerComparison& layer : v.layers) {
    const LayerPrediction& p = v.prediction.layers[layer.layer];
    const std::string key = p.kernel.Key();
    if (!alone_us.count(key)) {
      LATTE_ASSIGN_OR_RETURN(Measurement m, MeasureKernel(p.kernel, "xnnpack", registry, run, KernelMeasureOptions()));
      alone_us[key] = m.stats.p50;
    }
    const LayerTraffic& t = traffic[layer.layer];
    const double alone_ms = alone_us[key] / 1000;
    sum_alone += alone_ms;
    sum_model += layer.measured_ms;
    const std::string inputs = InputsToText(t);
    std::printf("%s\t%zu\t%s\t%.5f\t%.5f\t%lld\t%lld\t%s\t%s\n", name.c_str(), layer.layer, p.kernel.Kind().c_str(),
                layer.measured_ms, alone_ms, static_cast<long long>(t.weight_bytes),
                static_cast<long long>(t.output_bytes), inputs.empty() ? "-" : inputs.c_str(), key.c_str());
  }
  std::fprintf(stderr, "%s: whole %.3f ms, layers in graph %.3f ms, alone %.3f ms (alone/in graph %.3f)\n", name.c_str(),
               v.measured_ms, sum_model, sum_alone, sum_alone / sum_model);
  return Status::Ok();
}

int Fail(const Status& status) {
  std::fprintf(stderr, "error: %s\n", status.message().c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: context_probe PACK MODEL [INPUT=SHAPE] | PACK --random N [SEED] [hswish-se]\n");
    return 2;
  }
  Expected<Pack> pack = Pack::Load(argv[1]);
  if (!pack.ok()) return Fail(pack.status());
  BackendRegistry registry;
  RegisterXnnpackBackend(registry);
  const BenchOptions bench = ProbeBenchOptions();
  std::map<std::string, double> alone_us;
  std::printf("graph\tlayer\tkind\tgraph_ms\talone_ms\tweight_b\tout_b\tinputs\tkey\n");
  const std::string what = argv[2];
  if (what == "--random") {
    const int n = argc > 3 ? std::atoi(argv[3]) : 0;
    SplitMix64 rng(argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 0);
    if (n < 1) return Fail(InvalidInput("--random wants a count of graphs"));
    const bool hard_swish = argc > 5 && std::string(argv[5]) == "hswish-se";
    if (argc > 5 && !hard_swish) return Fail(InvalidInput("the family is hswish-se or left out"));
    for (int i = 0; i < n; ++i) {
      Expected<Graph> graph = JoinKernels(hard_swish ? RandomHardSwishNetwork(rng) : RandomNetwork(rng));
      if (!graph.ok()) return Fail(graph.status());
      const std::string name = "random" + std::to_string(i);
      Expected<ModelValidation> v = ValidateModel(*graph, name, *pack, bench, registry);
      if (!v.ok()) return Fail(v.status());
      if (Status s = PrintLayers(name, *v, registry, bench.run, alone_us); !s.ok()) return Fail(s);
      std::fflush(stdout);
    }
    return 0;
  }
  ImportOptions import;
  if (argc == 4)
    if (Status added = AddInputShapeArg(argv[3], import); !added.ok()) return Fail(added);
  Expected<Graph> graph = ImportModel(what, import);
  if (!graph.ok()) return Fail(graph.status());
  Expected<ModelValidation> v = ValidateModel(*graph, what, *pack, bench, registry);
  if (!v.ok()) return Fail(v.status());
  if (Status s = PrintLayers(what, *v, registry, bench.run, alone_us); !s.ok()) return Fail(s);
  return 0;
}
