#pragma once
// Ops that exporters write out as chains of elementwise nodes, recognised as the one op they
// compute: PyTorch's LayerNorm at opset ≤ 16 (ReduceMean → Sub → Pow 2, or Mul by itself →
// ReduceMean → Add eps → Sqrt → Div, then Mul scale and Add bias when affine) as one layer_norm, and GELU as one gelu
// (exact: Div √2 or Mul 1/√2 → Erf → Add 1 → Mul x → Mul 0.5, the halving before or after;
// tanh: x³ by Pow 3 or two Muls → Mul 0.044715 → Add x → Mul √(2/π) → Tanh → Add 1 → Mul x and
// 0.5). Only exact chains merge: every constant must be the formula's (within float32 rounding),
// every inner tensor read only inside the chain and not a graph output. ONNX Runtime's optimizer
// and oneDNN run these as one kernel; the executor and prediction do it through the plan
// (run/graph_prep), so the per-node profile still names each of the user's nodes.

#include <functional>
#include <vector>

#include "ir/graph.h"

namespace latte {

/// Whether `graph` has a node a decomposed chain starts at (a mean, an erf, a tanh). Without one,
/// FuseDecomposedOps returns the graph unchanged, and a caller may skip it.
bool MayHaveDecomposedOps(const Graph& graph);

/// Returns `graph` with each decomposed layer norm and GELU merged into one layer_norm or gelu
/// node (attributes "axis" and "epsilon", inputs [x, scale?, bias?]; "approximate" "none" |
/// "tanh"). Tensor ids are unchanged. `sources`, when given, gets for each node of the result the
/// ids of the nodes of `graph` it stands for (the chain's nodes for a merge). `allow`, when given,
/// must say yes to the chain (its nodes in `graph`, first the one the merged node replaces).
Graph FuseDecomposedOps(const Graph& graph, std::vector<std::vector<NodeId>>* sources = nullptr,
                        const std::function<bool(const std::vector<NodeId>& chain)>& allow = {});

}  // namespace latte
