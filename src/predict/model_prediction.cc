#include "predict/model_prediction.h"

#include <algorithm>
#include <cmath>
#include <tuple>

#include <fmt/format.h>

#include "ir/cache_reuse.h"
#include "ir/nchwc_layout.h"
#include "run/executor.h"

namespace latte {

Expected<GraphPlan> PlanGraphForPrediction(const Graph& graph, const Pack& pack, const BackendRegistry* registry) {
  // Other precisions (fp32; fp16 of an imported table) predict the plan as it is, with no backend;
  // bf16 as every backend lowers it (bfloat16 between nodes, casts at the float32 edges).
  if (pack.info.precision != PrecisionName(Precision::kInt8)) {
    LATTE_ASSIGN_OR_RETURN(GraphPlan plan, PlanGraphForBackends(graph, std::vector<std::string>(graph.num_nodes(), pack.info.backend),
                                                                pack.NhwcBackendNames()));
    if (pack.info.precision == PrecisionName(Precision::kBf16)) LowerPlanToBf16(plan);
    return plan;
  }
  if (registry == nullptr || registry->Find(pack.info.backend) == nullptr)
    return Unsupported("a pack of precision int8 predicts a model as its backend (" + pack.info.backend +
                       ") lowers it to int8, and that backend is not available here");
  RunOptions options;
  options.num_threads = pack.info.threads;
  options.precision = Precision::kInt8;
  return PlanGraphOnBackend(graph, pack.info.backend, *registry, options);
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
  return fmt::format("this machine ({}) is not the pack's ({}): the figures are the pack's machine's; for this "
                     "machine's, `latte adapt --pack PACK --budget 60s -o mine.json` (a minute) or `latte calibrate` "
                     "(10 minutes)",
                     here.Describe(), pack_name);
}

void NameUserNodes(const GraphPlan& plan, const Graph& user, ModelPrediction& prediction) {
  // The user's nodes a list of planned nodes runs, by name; an inserted node by its own.
  auto name = [&](const std::vector<NodeId>& nodes, std::vector<std::string>& names, std::size_t& count) {
    names.clear();
    for (NodeId id : nodes) {
      const std::vector<NodeId>& sources = plan.sources.at(static_cast<std::size_t>(id));
      if (sources.empty()) names.push_back(plan.graph.node(id).name);
      for (NodeId source : sources) names.push_back(user.node(source).name);
      count += sources.size();
    }
  };
  prediction.covered_nodes = prediction.uncovered_nodes = 0;
  for (LayerPrediction& layer : prediction.layers) {
    name(layer.nodes, layer.names, prediction.covered_nodes);
    if (plan.fp32_why.empty()) continue;
    // A kernel's nodes run at one precision: the main node's.
    layer.fp32_why = plan.fp32_why.at(static_cast<std::size_t>(layer.nodes.front()));
    layer.int8 = layer.fp32_why.empty();
  }
  for (UncoveredLayer& layer : prediction.uncovered) name(layer.nodes, layer.names, prediction.uncovered_nodes);
  prediction.total_nodes = user.num_nodes();
}

double PredictionUncertainty::sd_ms() const {
  return std::sqrt(kernels_sd_ms * kernels_sd_ms + context_sd_ms * context_sd_ms + machine_sd_ms * machine_sd_ms);
}

Expected<ModelPrediction> PredictModel(const Graph& graph, const Pack& pack) {
  LATTE_ASSIGN_OR_RETURN(FusionRules rules, FusionRules::FromKinds(pack.info.fusion_rules));
  LATTE_ASSIGN_OR_RETURN(KernelGrouping grouping, GroupIntoKernels(graph, rules));

  ModelPrediction result;
  result.total_nodes = graph.num_nodes();
  double spread_sum = 0;
  // Every unit the executor runs (a kernel, or an uncovered node) and its layer in the result.
  struct Unit {
    std::vector<NodeId> nodes;
    int layer = -1;
  };
  std::vector<Unit> units;  // only needed for the context: not collected without one (a hot path)
  // A model with attention (a matmul of two activations) takes the context and interval fitted on
  // transformer encoders, when the pack has them; every other model the CNN networks'.
  result.attention = std::any_of(graph.nodes().begin(), graph.nodes().end(),
                                 [](const Node& node) { return node.kind == OpKind::kMatMul; });
  const bool encoder_fit = result.attention && pack.transformer_context.has_value();
  const ContextModel* context_model = encoder_fit ? &*pack.transformer_context : pack.context ? &*pack.context : nullptr;
  const NetworkInterval* calibrated = encoder_fit ? (pack.transformer_interval ? &*pack.transformer_interval : nullptr)
                                      : pack.interval                          ? &*pack.interval
                                                                               : nullptr;
  result.context_family = encoder_fit ? "transformer encoders" : "random CNN networks";
  const bool context = context_model != nullptr;
  for (KernelGroup& group : grouping.kernels) {
    Expected<Prediction> predicted = pack.Predict(group.kernel);
    if (!predicted.ok()) {
      if (context) units.push_back({group.nodes, -1});
      result.uncovered.push_back({group.nodes, {}, NodeOpName(graph.node(group.nodes.front())), predicted.status().message()});
      result.uncovered_nodes += group.nodes.size();
      continue;
    }
    result.covered_nodes += group.nodes.size();
    result.total_ms += predicted->ms;
    spread_sum += predicted->spread_ms;
    if (predicted->outside_training_range) ++result.outside_range;
    result.ms_by_source[std::string(PredictionSourceName(predicted->source))] += predicted->ms;
    if (context) units.push_back({group.nodes, static_cast<int>(result.layers.size())});
    result.layers.push_back({std::move(group.nodes), {}, std::move(group.kernel), *predicted});
  }
  for (UncoveredNode& node : grouping.uncovered) {
    if (context) units.push_back({{node.node}, -1});
    result.uncovered.push_back({{node.node}, {}, std::move(node.op), std::move(node.why)});
    ++result.uncovered_nodes;
  }
  if (context) {
    // The executor runs the nodes in order: a unit runs when its last node does.
    std::sort(units.begin(), units.end(), [](const Unit& a, const Unit& b) { return a.nodes.back() < b.nodes.back(); });
    std::vector<std::vector<NodeId>> nodes;
    std::vector<double> alone_ms;
    std::vector<OpKind> ops;
    for (const Unit& unit : units) {
      nodes.push_back(unit.nodes);
      const bool predicted = unit.layer >= 0;
      alone_ms.push_back(predicted ? result.layers[static_cast<std::size_t>(unit.layer)].prediction.ms : 0.0);
      ops.push_back(predicted ? result.layers[static_cast<std::size_t>(unit.layer)].kernel.op : OpKind::kOpaque);
    }
    std::vector<LayerTraffic> traffic = LayerTrafficOf(graph, nodes);
    if (context_model->layout_block > 0) {
      // ONNX Runtime's reorders between the plain and the blocked layout, where this graph has them.
      LATTE_ASSIGN_OR_RETURN(const NchwcPlan plan, PlanNchwc(graph, context_model->layout_block));
      SetLayoutBytes(NchwcReorders(graph, plan, nodes), traffic);
    }
    const std::vector<double> extra = context_model->ExtraMs(traffic, alone_ms, ops);
    for (std::size_t i = 0; i < units.size(); ++i) {
      if (units[i].layer < 0) continue;  // not predicted: neither is its context
      result.layers[static_cast<std::size_t>(units[i].layer)].context_ms = extra[i];
      result.context_ms += extra[i];
    }
    result.total_ms += result.context_ms;
    result.ms_by_source["in-graph context"] = result.context_ms;
    result.context_applied = true;
    result.context = context_model;
  }
  PredictionUncertainty& u = result.uncertainty;
  u.kernels_sd_ms = spread_sum;
  if (context) u.context_sd_ms = context_model->cv_rmspe_pct / 100 * result.total_ms;
  u.machine_sd_ms = pack.info.reference_spread * result.total_ms;
  if (calibrated != nullptr && result.total_ms > 0) {
    // Calibrated on networks the pack never saw, mixed by how much of the time is table hits.
    const double kernels_ms = result.total_ms - result.context_ms;
    auto table = result.ms_by_source.find(std::string(PredictionSourceName(PredictionSource::kTableHit)));
    const double table_share = table != result.ms_by_source.end() && kernels_ms > 0 ? table->second / kernels_ms : 0;
    std::tie(result.interval_lo_ms, result.interval_hi_ms) = calibrated->Around(result.total_ms, table_share);
    u.calibrated_networks = calibrated->networks;
  } else {
    result.interval_lo_ms = std::max(0.0, result.total_ms - kIntervalZ * u.sd_ms());
    result.interval_hi_ms = result.total_ms + kIntervalZ * u.sd_ms();
  }
  return result;
}

}  // namespace latte
