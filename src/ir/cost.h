#pragma once
// Cost of a node: arithmetic (MACs, FLOPs) and data (parameters, bytes read and written).

#include <cstdint>
#include <string>

#include "core/status.h"
#include "ir/graph.h"

namespace latte {

struct NodeCost {
  std::int64_t macs = 0;           // multiply-accumulates (conv, fc, matmul)
  std::int64_t flops = 0;          // floating-point operations (2 per MAC plus the rest)
  std::int64_t params = 0;         // elements of constant inputs (weights, bias)
  std::int64_t weight_bytes = 0;   // bytes of constant inputs
  std::int64_t input_bytes = 0;    // bytes of activation inputs read
  std::int64_t output_bytes = 0;   // bytes of outputs written
  NodeCost& operator+=(const NodeCost& other);
};

/// Cost of one node. Fails (kUnsupported) for opaque nodes and nodes with unknown shapes,
/// saying why: a cost is never silently zero.
Expected<NodeCost> ComputeNodeCost(const Graph& graph, NodeId id);

}  // namespace latte
