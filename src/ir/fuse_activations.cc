#include "ir/fuse_activations.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "ir/node_rewrite.h"

namespace latte {
namespace {

constexpr OpKind kTakesActivation[] = {OpKind::kConv2D, OpKind::kDepthwiseConv2D, OpKind::kTransposeConv2D,
                                       OpKind::kFullyConnected, OpKind::kAdd};
constexpr OpKind kFoldedActivations[] = {OpKind::kRelu, OpKind::kRelu6, OpKind::kReluN1To1};

bool TakesActivation(OpKind kind) {
  return std::find(std::begin(kTakesActivation), std::end(kTakesActivation), kind) != std::end(kTakesActivation);
}

// The "activation" attribute value `node` amounts to, or "" when it is not a foldable clamp.
std::string ActivationName(const Node& node) {
  if (node.inputs.size() != 1 || node.outputs.size() != 1) return "";
  switch (node.kind) {
    case OpKind::kRelu: return "relu";
    case OpKind::kRelu6: return "relu6";
    case OpKind::kReluN1To1: return "relu_n1_to_1";
    case OpKind::kClip: {
      constexpr double kInf = std::numeric_limits<double>::infinity();
      const double lo = node.attrs.GetFloat("min", -kInf), hi = node.attrs.GetFloat("max", kInf);
      if (lo == 0.0 && hi == kInf) return "relu";
      if (lo == 0.0 && hi == 6.0) return "relu6";
      if (lo == -1.0 && hi == 1.0) return "relu_n1_to_1";
      return "";
    }
    default:
      return "";
  }
}

}  // namespace

Graph FuseActivations(const Graph& graph, std::vector<std::vector<NodeId>>* sources,
                      const std::function<bool(const Node& producer, const Node& activation)>& allow) {
  const auto n = static_cast<NodeId>(graph.num_nodes());
  NodeRewrite rewrite(graph);
  for (NodeId i = 0; i < n; ++i) {
    const Node& act = rewrite.nodes[static_cast<size_t>(i)];
    const std::string name = ActivationName(act);
    if (name.empty()) continue;
    const TensorId t = act.inputs[0];
    const NodeId p = graph.Producer(t);
    if (p < 0 || rewrite.removed[static_cast<size_t>(p)]) continue;
    Node& producer = rewrite.nodes[static_cast<size_t>(p)];
    if (!TakesActivation(producer.kind) || producer.outputs.size() != 1 || producer.outputs[0] != t) continue;
    if (producer.attrs.GetString("activation", "none") != "none") continue;
    if (graph.Consumers(t).size() != 1) continue;
    if (std::find(graph.outputs.begin(), graph.outputs.end(), t) != graph.outputs.end()) continue;
    if (allow && !allow(producer, act)) continue;
    producer.outputs[0] = act.outputs[0];
    producer.attrs.Set("activation", name);
    rewrite.Merge(p, i);
  }
  return rewrite.Finish(graph, sources);
}

bool IsFoldedActivation(OpKind kind) {
  return std::find(std::begin(kFoldedActivations), std::end(kFoldedActivations), kind) != std::end(kFoldedActivations);
}

std::vector<std::string> FoldedActivationKinds() {
  std::vector<std::string> kinds;
  for (OpKind producer : kTakesActivation)
    for (OpKind activation : kFoldedActivations) kinds.push_back(std::string(OpName(producer)) + "+" + std::string(OpName(activation)));
  return kinds;
}

}  // namespace latte
