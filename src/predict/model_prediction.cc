#include "predict/model_prediction.h"

#include <algorithm>

#include <fmt/format.h>


namespace latte {

Expected<GraphPlan> PlanGraphForPrediction(const Graph& graph, const Pack& pack) {
  return PlanGraphForBackends(graph, std::vector<std::string>(graph.num_nodes(), pack.info.backend));
}

std::string CompareMachine(const Pack& pack, const DeviceFingerprint& here) {
  const nlohmann::json& device = pack.info.device;
  std::string pack_key = device.is_object() ? device.value("key", "") : "";
  std::string pack_name = device.is_object() ? device.value("description", pack_key) : "";
  if (pack_key.empty()) return "the pack does not say which machine it was fitted on";
  if (pack_key == here.Key()) {
    if (pack.info.threads > here.logical_cores && here.logical_cores > 0) {
      return fmt::format("the pack is for {} threads but this machine has {} cores", pack.info.threads,
                         here.logical_cores);
    }
    return "";
  }
  return fmt::format("this machine ({}) is not the pack's ({}): the figures are the pack's machine's", here.Describe(),
                     pack_name);
}

Expected<ModelPrediction> PredictModel(const Graph& graph, const Pack& pack) {
  LATTE_ASSIGN_OR_RETURN(FusionRules rules, FusionRules::FromKinds(pack.info.fusion_rules));
  LATTE_ASSIGN_OR_RETURN(KernelGrouping grouping, GroupIntoKernels(graph, rules));

  ModelPrediction result;
  result.total_nodes = graph.num_nodes();
  double spread_sum = 0;
  for (KernelGroup& group : grouping.kernels) {
    Expected<Prediction> predicted = pack.Predict(group.kernel);
    if (!predicted.ok()) {
      result.uncovered.push_back({group.nodes, NodeOpName(graph.node(group.nodes.front())), predicted.status().message()});
      continue;
    }
    result.covered_nodes += group.nodes.size();
    result.total_ms += predicted->ms;
    spread_sum += predicted->spread_ms;
    if (predicted->outside_training_range) ++result.outside_range;
    result.ms_by_source[std::string(PredictionSourceName(predicted->source))] += predicted->ms;
    result.layers.push_back({std::move(group.nodes), std::move(group.kernel), *predicted});
  }
  for (UncoveredNode& node : grouping.uncovered) {
    result.uncovered.push_back({{node.node}, std::move(node.op), std::move(node.why)});
  }
  result.interval_lo_ms = std::max(0.0, result.total_ms - spread_sum);
  result.interval_hi_ms = result.total_ms + spread_sum;
  return result;
}

}  // namespace latte
