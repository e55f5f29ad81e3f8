#pragma once
// Folding a clamp-like activation into the op before it: what TFLite files already carry as a
// fused activation, and what XNNPACK and oneDNN apply for free at the end of a conv or an add.

#include <functional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace latte {

/// Returns `graph` with each relu, relu6, relu_n1_to_1 and clip with bounds (0, ∞), (0, 6) or
/// (-1, 1) folded into the "activation" attribute of the conv2d, depthwise_conv2d,
/// transpose_conv2d, fully_connected or add that produces its input, when that op has no
/// activation yet and its output has this one consumer and is not a graph output. Tensor ids
/// are unchanged: the producer writes the activation's output (its old output stays, unused).
/// `sources`, when given, gets for each node of the result the ids of the nodes of `graph`
/// it stands for (a conv with a folded relu: {conv, relu}). `allow`, when given, must also say
/// yes to each pair (the executor folds only nodes placed on the same backend).
Graph FuseActivations(const Graph& graph, std::vector<std::vector<NodeId>>* sources = nullptr,
                      const std::function<bool(const Node& producer, const Node& activation)>& allow = {});

/// The kernel kinds folding creates: each op that takes a folded activation with each activation
/// it takes ("conv2d+relu", "conv2d+relu6", ..., "add+relu_n1_to_1"). The executor folds them for
/// every backend, so they are one kernel by construction (XNNPACK clamps the output, oneDNN applies
/// a post-op), whatever timing would say.
std::vector<std::string> FoldedActivationKinds();

/// The clamps folding folds into the op before them: relu, relu6, relu_n1_to_1.
bool IsFoldedActivation(OpKind kind);

}  // namespace latte
