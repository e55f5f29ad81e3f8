#pragma once
// Shape inference: computes every node's output shapes from the graph inputs, following
// the op conventions of op_kinds.def.

#include "core/status.h"
#include "ir/graph.h"

namespace latte {

/// Walks the nodes in order (the graph must be sorted) and sets the shape and dtype of each
/// output of every known op. When an output already had a fully known shape from the file
/// and the inferred one differs, fails naming the node: a file that contradicts itself is
/// bad input. Opaque nodes keep the shapes the file declared.
Status InferShapes(Graph& graph);

/// The shape numpy's broadcasting gives two shapes (ONNX's multidirectional broadcasting), or
/// kInvalidInput when a pair of dims is neither equal nor 1.
Expected<Shape> BroadcastShapes(const Shape& a, const Shape& b);

/// Shape of one node's outputs given its inputs' shapes (no graph mutation).
Expected<std::vector<Shape>> InferNodeShapes(const Graph& graph, NodeId id);

}  // namespace latte
