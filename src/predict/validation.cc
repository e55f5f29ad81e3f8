#include "predict/validation.h"

namespace latte {

Expected<ModelValidation> ValidateModel(const Graph& graph, const std::string& model, const Pack& pack,
                                        BenchOptions options, const BackendRegistry& registry) {
  ModelValidation result;
  result.model = model;
  LATTE_ASSIGN_OR_RETURN(result.plan, PlanGraphForPrediction(graph, pack));
  LATTE_ASSIGN_OR_RETURN(result.prediction, PredictModel(result.plan.graph, pack));

  options.placement = Placement{};
  options.placement.default_backend = pack.info.backend;
  options.op_profiling = true;
  LATTE_ASSIGN_OR_RETURN(result.bench, BenchmarkGraph(graph, options, registry));

  result.predicted_ms = result.prediction.total_ms;
  result.measured_ms = result.bench.latency.stats.p50 / 1000.0;
  result.error_pct = 100.0 * (result.predicted_ms - result.measured_ms) / result.measured_ms;

  // The executor runs the same plan (PlanGraphForBackends), so entry k is node k of the plan.
  const std::vector<double>& entry_us = result.bench.node_avg_us;
  if (entry_us.size() != result.plan.graph.num_nodes()) {
    return Status(StatusCode::kInternal, "the executor ran " + std::to_string(entry_us.size()) +
                                             " nodes but the prediction planned " +
                                             std::to_string(result.plan.graph.num_nodes()));
  }
  for (std::size_t i = 0; i < result.prediction.layers.size(); ++i) {
    const LayerPrediction& layer = result.prediction.layers[i];
    LayerComparison comparison{i, layer.prediction.ms, 0};
    for (NodeId id : layer.nodes) comparison.measured_ms += entry_us[static_cast<size_t>(id)] / 1000.0;
    result.layers.push_back(comparison);
  }
  for (const UncoveredLayer& uncovered : result.prediction.uncovered)
    for (NodeId id : uncovered.nodes) result.uncovered_measured_ms += entry_us[static_cast<size_t>(id)] / 1000.0;
  return result;
}

}  // namespace latte
