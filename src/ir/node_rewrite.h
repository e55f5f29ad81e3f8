#pragma once
// The shared tail of graph rewrites that merge nodes into others (activations into their
// producer, pads into their conv): the same tensors, the surviving nodes in order, and for each
// the original nodes it stands for.

#include <vector>

#include "ir/graph.h"

namespace latte {

/// A rewrite in progress: a copy of `graph`'s nodes to edit, which are removed, and per node the
/// ids of the original nodes it stands for (initially itself).
struct NodeRewrite {
  explicit NodeRewrite(const Graph& graph);
  std::vector<Node> nodes;
  std::vector<bool> removed;
  std::vector<std::vector<NodeId>> from;
  /// Node `into` absorbs node `gone`: `gone` is removed and what it stood for is appended.
  void Merge(NodeId into, NodeId gone);
  /// The graph with `graph`'s tensors, inputs and outputs and the surviving nodes in order;
  /// `sources`, when given, gets `from` of each surviving node.
  Graph Finish(const Graph& graph, std::vector<std::vector<NodeId>>* sources);
};

}  // namespace latte
