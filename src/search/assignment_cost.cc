#include "search/assignment_cost.h"

#include "run/executor.h"
#include "run/graph_prep.h"
#include "run/int8_plan.h"
#include "run/tensor_buffers.h"

namespace latte {

Status CheckSearchBackends(const std::vector<SearchBackend>& backends) {
  if (backends.empty()) return InvalidInput("no backends to search over");
  std::size_t bf16 = 0;
  for (std::size_t b = 0; b < backends.size(); ++b) {
    const SearchBackend& backend = backends[b];
    for (std::size_t a = 0; a < b; ++a)
      if (backends[a].Label() == backend.Label()) return InvalidInput("backend " + backend.Label() + " is listed twice");
    if (backend.pack == nullptr) return InvalidInput("backend " + backend.Label() + " has no pack");
    if (backend.pack->info.backend != backend.name)
      return InvalidInput("the pack given for " + backend.Label() + " is a pack for " + backend.pack->info.backend +
                          " (give --packs in the order of --backends)");
    if (backend.pack->info.precision != PrecisionName(backend.precision))
      return InvalidInput("the pack given for " + backend.Label() + " is a " + backend.pack->info.precision + " pack");
    bf16 += backend.precision == Precision::kBf16 ? 1 : 0;
  }
  if (bf16 != 0 && bf16 != backends.size())
    return Unsupported("bf16 packs cannot be mixed with fp32 or int8 ones: a bf16 run is bf16 throughout "
                       "(give only bf16 packs, or none)");
  return Status::Ok();
}

Expected<CostModel> CostModel::Create(const Graph& graph, std::vector<SearchBackend> backends, NodeMemory memory) {
  LATTE_RETURN_IF_ERROR(CheckSearchBackends(backends));
  if (memory.per_node.size() != graph.num_nodes() || memory.backends.size() != backends.size())
    return InvalidInput("the node memory does not match the graph and its backends");
  CostModel model;
  for (std::size_t b = 0; b < backends.size(); ++b) {
    const SearchBackend& backend = backends[b];
    if (memory.backends[b].Label() != backend.Label())
      return InvalidInput("the node memory lists its backends in another order");
    model.any_int8_ = model.any_int8_ || backend.precision == Precision::kInt8;
    auto rules = FusionRules::FromKinds(backend.pack->info.fusion_rules);
    if (!rules.ok()) return rules.status().WithContext("the " + backend.Label() + " pack's fusion rules");
    model.rules_.push_back(std::move(rules).value());
    for (const std::string& name : backend.pack->NhwcBackendNames()) model.nhwc_.insert(name);
  }
  model.bf16_ = backends[0].precision == Precision::kBf16;  // then every choice is (CheckSearchBackends)
  for (std::size_t i = 0; i < graph.num_nodes(); ++i) {
    const NodeOnBackend& on_fallback = memory.per_node[i][0];
    if (!on_fallback.supported)
      return Unsupported(DescribeNode(graph, static_cast<NodeId>(i)) + ": the fallback backend " + backends[0].Label() +
                         " (the first listed) cannot run it: " + on_fallback.why);
  }
  model.graph_ = &graph;
  model.backends_ = std::move(backends);
  model.memory_ = std::move(memory);
  // Which nodes no backend's pack predicts even when that backend runs everything.
  model.always_out_.assign(graph.num_nodes(), true);
  for (std::size_t b = 0; b < model.backends_.size(); ++b) {
    std::vector<NodeId> out;
    LATTE_RETURN_IF_ERROR(model.EvaluateWith(std::vector<int>(graph.num_nodes(), static_cast<int>(b)), &out));
    std::vector<bool> here(graph.num_nodes(), false);
    for (NodeId n : out) here[static_cast<std::size_t>(n)] = true;
    for (std::size_t i = 0; i < graph.num_nodes(); ++i) model.always_out_[i] = model.always_out_[i] && here[i];
  }
  model.never_predicted_.clear();
  return model;
}

Expected<Prediction> CostModel::PredictOn(std::size_t backend, const Kernel& kernel) const {
  const std::string key = backends_[backend].Label() + "|" + kernel.Key();
  auto it = predictions_.find(key);
  if (it == predictions_.end()) it = predictions_.emplace(key, backends_[backend].pack->Predict(kernel)).first;
  return it->second;
}

Expected<AssignmentCost> CostModel::Evaluate(const std::vector<int>& choice) const {
  return EvaluateWith(choice, nullptr);
}

Expected<AssignmentCost> CostModel::EvaluateWith(const std::vector<int>& choice, std::vector<NodeId>* probe) const {
  const Graph& graph = *graph_;
  if (choice.size() != graph.num_nodes())
    return InvalidInput("an assignment of " + std::to_string(choice.size()) + " nodes for a graph of " +
                        std::to_string(graph.num_nodes()));
  AssignmentCost cost;
  std::vector<int> where(choice);
  std::vector<std::string> wanted(graph.num_nodes());
  double prepared_bytes = 0;
  std::vector<bool> backend_used(backends_.size(), false);
  for (std::size_t i = 0; i < where.size(); ++i) {
    if (where[i] < 0 || static_cast<std::size_t>(where[i]) >= backends_.size())
      return InvalidInput("backend index " + std::to_string(where[i]) + " out of range");
    if (!memory_.per_node[i][static_cast<std::size_t>(where[i])].supported) {
      where[i] = 0;
      ++cost.fallbacks;
    }
    wanted[i] = backends_[static_cast<std::size_t>(where[i])].name;
    prepared_bytes += static_cast<double>(memory_.per_node[i][static_cast<std::size_t>(where[i])].prepared_bytes);
    backend_used[static_cast<std::size_t>(where[i])] = true;
  }
  for (std::size_t b = 0; b < backends_.size(); ++b)
    if (backend_used[b] && b < memory_.backend_bytes.size()) prepared_bytes += static_cast<double>(memory_.backend_bytes[b]);
  cost.prepared_kb = prepared_bytes / 1024.0;

  // The layout step depends only on which nodes run NHWC: done once per such pattern.
  std::vector<bool> nhwc(graph.num_nodes());
  for (std::size_t i = 0; i < nhwc.size(); ++i) nhwc[i] = nhwc_.count(wanted[i]) != 0;
  auto laid_out = laid_out_.find(nhwc);
  if (laid_out == laid_out_.end()) {
    LATTE_ASSIGN_OR_RETURN(Graph converted, LayOutForBackends(graph, wanted, nhwc_));
    laid_out = laid_out_.emplace(nhwc, std::move(converted)).first;
  }
  const GraphPlan plan = PlanFor(laid_out->second, where, wanted, cost);
  LATTE_ASSIGN_OR_RETURN(ArenaPlan arena, TensorBuffers::Plan(plan.graph));
  cost.activations_kb = static_cast<double>(arena.arena_bytes) / 1024.0;
  // The choice (index) of each planned node; an inserted conversion runs where the executor puts it.
  std::vector<std::size_t> backend_of(plan.graph.num_nodes(), 0);
  for (NodeId k = 0; k < static_cast<NodeId>(plan.graph.num_nodes()); ++k) {
    const auto& from = plan.sources[static_cast<std::size_t>(k)];
    backend_of[static_cast<std::size_t>(k)] =
        !from.empty() ? static_cast<std::size_t>(where[static_cast<std::size_t>(from[0])])
                      : InsertedChoice(plan, wanted, k, !plan.fp32_why.empty() && plan.fp32_why[static_cast<std::size_t>(k)].empty());
  }
  // Fused only within one backend, by that backend's rules.
  LATTE_ASSIGN_OR_RETURN(KernelGrouping grouping,
                         GroupIntoKernels(plan.graph, [&](const std::vector<NodeId>& chain, const std::string& kind) {
                           const std::size_t b = backend_of[static_cast<std::size_t>(chain[0])];
                           for (NodeId n : chain)
                             if (backend_of[static_cast<std::size_t>(n)] != b) return false;
                           return rules_[b].Allows(kind);
                         }));
  auto describe = [&](NodeId k) {
    const auto& from = plan.sources[static_cast<std::size_t>(k)];
    return from.empty() ? "inserted '" + plan.graph.node(k).name + "' (" + NodeOpName(plan.graph.node(k)) + ")"
                        : DescribeNode(graph, from[0]);
  };
  // A kernel left out is fine only when its nodes are left out of every assignment alike.
  auto left_out = [&](const std::vector<NodeId>& nodes, const std::string& what, const std::string& why) {
    bool alike = true;
    for (NodeId k : nodes)
      for (NodeId src : plan.sources[static_cast<std::size_t>(k)]) {
        if (probe != nullptr) probe->push_back(src);
        alike = alike && !always_out_.empty() && always_out_[static_cast<std::size_t>(src)];
      }
    if (probe != nullptr) return;
    if (alike) never_predicted_.emplace(what, why);
    else cost.unpredicted.push_back(what + ": " + why);
  };
  for (const UncoveredNode& node : grouping.uncovered) {
    if (plan.sources[static_cast<std::size_t>(node.node)].empty()) {  // an inserted conversion
      cost.unpredicted.push_back(describe(node.node) + ": " + node.why);
      continue;
    }
    left_out({node.node}, describe(node.node), node.why);
  }
  for (const KernelGroup& group : grouping.kernels) {
    const NodeId main = group.nodes.front();
    const std::size_t b = backend_of[static_cast<std::size_t>(main)];
    Expected<Prediction> predicted = PredictOn(b, group.kernel);
    if (!predicted.ok()) {
      if (plan.sources[static_cast<std::size_t>(main)].empty())
        cost.unpredicted.push_back(describe(main) + " on " + backends_[b].Label() + ": " + predicted.status().message());
      else
        left_out(group.nodes, describe(main), "on " + backends_[b].Label() + ": " + predicted.status().message());
      continue;
    }
    cost.time_ms += predicted->ms;
    ++cost.kernels;
    if (plan.sources[static_cast<std::size_t>(main)].empty()) {
      cost.conversion_ms += predicted->ms;
      ++cost.conversions;
    }
  }
  return cost;
}

GraphPlan CostModel::PlanFor(const Graph& laid_out, const std::vector<int>& where, const std::vector<std::string>& wanted,
                             AssignmentCost& cost) const {
  GraphPlan plan = FuseForBackends(laid_out, wanted);
  if (bf16_) LowerPlanToBf16(plan);
  if (!any_int8_) return plan;
  // Int8 where the choice is int8 and its backend runs the node int8 (in the model all at int8).
  std::vector<bool> user_fp32(where.size(), true);
  bool any = false;
  for (std::size_t i = 0; i < where.size(); ++i) {
    const auto b = static_cast<std::size_t>(where[i]);
    if (backends_[b].precision != Precision::kInt8 || !memory_.per_node[i][b].int8) continue;
    user_fp32[i] = false;
    any = true;
  }
  if (!any) return plan;
  Int8Choice choice = Int8Choice::Eligible(plan.graph);
  KeepUserNodesFp32(plan, user_fp32, choice);
  for (std::size_t k = 0; k < plan.graph.num_nodes(); ++k)
    if (choice.int8[k]) cost.int8_nodes += plan.sources[k].size();
  // The scales do not matter to a kernel's time: one for every activation, as prediction lowers.
  Int8Plan lowered = LowerPlanToInt8(plan, choice.int8, ActivationRanges{});
  for (NodeId k : lowered.from)
    lowered.plan.fp32_why.push_back(k < 0 ? std::string() : choice.kept_why[static_cast<std::size_t>(k)]);
  return std::move(lowered.plan);
}

std::size_t CostModel::InsertedChoice(const GraphPlan& plan, const std::vector<std::string>& wanted, NodeId k,
                                      bool int8) const {
  const Precision precision = bf16_ ? Precision::kBf16 : int8 ? Precision::kInt8 : Precision::kFp32;
  const std::vector<std::string> names = InsertedNodeBackends(plan.graph, plan.sources, wanted, k, backends_[0].name);
  for (const std::string& name : names)
    for (std::size_t b = 0; b < backends_.size(); ++b)
      if (backends_[b].name == name && backends_[b].precision == precision) return b;
  // No choice of that backend at that precision: its other pack (which may not predict it).
  for (std::size_t b = 0; b < backends_.size(); ++b)
    if (backends_[b].name == names[0]) return b;
  return 0;
}

}  // namespace latte
