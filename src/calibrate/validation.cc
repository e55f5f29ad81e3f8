#include "calibrate/validation.h"

#include "profile/campaign.h"

namespace latte {

Expected<ModelValidation> ValidateModel(const Graph& graph, const std::string& model, const Pack& pack,
                                        BenchOptions options, const BackendRegistry& registry) {
  ModelValidation result;
  result.model = model;
  LATTE_ASSIGN_OR_RETURN(result.plan, PlanGraphForPrediction(graph, pack, &registry));
  LATTE_ASSIGN_OR_RETURN(result.prediction, PredictModel(result.plan.graph, pack));
  NameUserNodes(result.plan, graph, result.prediction);

  options.placement = Placement{};
  options.placement.default_backend = pack.info.backend;
  options.op_profiling = true;
  options.output_drift = false;  // not reported here: no second run at fp32
  const bool int8 = !result.plan.fp32_why.empty();
  if (int8) options.run.precision = Precision::kInt8;  // the model measured as the pack predicts it
  if (pack.info.precision == PrecisionName(Precision::kBf16)) options.run.precision = Precision::kBf16;
  LATTE_ASSIGN_OR_RETURN(result.bench, BenchmarkGraph(graph, options, registry));
  if (int8 && !CheckRunMatchesInt8Plan(result.plan, result.bench.entries).ok()) {
    // The run's calibrated scales kept nodes fp32 that the uncalibrated prediction lowered (or
    // the other way): the model is predicted again as it ran, and the nodes are counted.
    LATTE_ASSIGN_OR_RETURN(GraphPlan fp32, PlanGraphOnBackend(graph, pack.info.backend, registry, RunOptions{}));
    LATTE_ASSIGN_OR_RETURN(result.plan, LowerPlanToInt8AsRun(fp32, pack.info.backend, registry, options.run, result.bench.entries));
    for (const std::string& why : result.plan.fp32_why) result.kept_fp32_by_run += why == kKeptFp32ByRun;
    LATTE_ASSIGN_OR_RETURN(result.prediction, PredictModel(result.plan.graph, pack));
    NameUserNodes(result.plan, graph, result.prediction);
  }

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
    LayerComparison comparison{i, layer.ms(), 0};
    for (NodeId id : layer.nodes) comparison.measured_ms += entry_us[static_cast<size_t>(id)] / 1000.0;
    result.layers.push_back(comparison);
  }
  for (const UncoveredLayer& uncovered : result.prediction.uncovered)
    for (NodeId id : uncovered.nodes) result.uncovered_measured_ms += entry_us[static_cast<size_t>(id)] / 1000.0;
  return result;
}

DriftCheck MeasureDrift(const Pack& pack, const BackendRegistry& registry) {
  DriftCheck drift;
  drift.kernel = pack.info.reference_kernel;
  if (drift.kernel.empty() || pack.info.reference_p50_us <= 0) {
    drift.why = "the pack keeps no reading of a reference kernel (made before packs kept one)";
    return drift;
  }
  auto kernel = ParseKernelKey(drift.kernel);
  if (!kernel.ok()) {
    drift.why = "the pack's reference kernel: " + kernel.status().message();
    return drift;
  }
  RunOptions run;
  run.num_threads = pack.info.threads;
  Expected<Precision> precision = ParsePrecision(pack.info.precision);
  if (!precision.ok()) {
    drift.why = "the pack's precision: " + precision.status().message();
    return drift;
  }
  run.precision = *precision;
  auto measured = MeasureKernel(*kernel, pack.info.backend, registry, run, CampaignOptions{}.measure);
  if (!measured.ok()) {
    drift.why = "measuring the reference kernel: " + measured.status().message();
    return drift;
  }
  drift.measured = true;
  drift.pack_p50_us = pack.info.reference_p50_us;
  drift.follow = pack.info.reference_follow;
  drift.now_p50_us = measured->stats.p50;
  return drift;
}

}  // namespace latte
