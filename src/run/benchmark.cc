#include "run/benchmark.h"

#include <chrono>

namespace latte {

Expected<BenchResult> BenchmarkGraph(const Graph& graph, const BenchOptions& options, const BackendRegistry& registry) {
  BenchResult result;
  result.device = ReadDeviceFingerprint();
  const auto start = std::chrono::steady_clock::now();
  LATTE_ASSIGN_OR_RETURN(std::unique_ptr<Executor> executor,
                         Executor::Create(graph, options.placement, registry, options.run));
  FillRandomInputs(graph, executor->buffers());
  result.init_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  result.assignments = executor->assignments();
  result.entries = executor->entries();
  result.backend_versions = executor->BackendVersions();

  MeasureOptions measure = options.measure;
  measure.threads = options.run.num_threads;
  LATTE_ASSIGN_OR_RETURN(result.latency, Measure([&] { return executor->Run(); }, measure));
  if (options.op_profiling) {
    std::vector<double> totals;
    double layout = 0;
    for (int i = 0; i < options.measure.num_runs; ++i) LATTE_RETURN_IF_ERROR(executor->RunProfiled(totals, &layout));
    result.node_avg_us = totals;
    double scale = 1.0 / options.measure.num_runs;
    if (executor->RunsWholeGraph()) {
      double sum = 0;
      for (double v : totals) sum += v;
      if (sum > 0) scale = result.latency.stats.p50 / sum;
    }
    for (double& v : result.node_avg_us) v *= scale;
    result.layout_avg_us = layout * scale;
  }
  result.peak_rss_kb = PeakRssKb();
  return result;
}

}  // namespace latte
