#pragma once
// Graph: tensors, nodes and the graph's inputs and outputs — what every importer builds and
// every later layer (shape inference, cost, backends, predictors) reads.

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/attributes.h"
#include "ir/op_kind.h"
#include "ir/tensor.h"

namespace latte {

using TensorId = std::int32_t;
using NodeId = std::int32_t;
/// An absent optional input.
inline constexpr TensorId kNoTensor = -1;

struct Node {
  OpKind kind = OpKind::kOpaque;
  std::string name;       // the file's name for the node (or its first output's)
  std::string source_op;  // the file's op name: "CONV_2D", "Convolution2DTransposeBias", "Conv"
  Attributes attrs;       // names per op kind: see op_kinds.def
  std::vector<TensorId> inputs;
  std::vector<TensorId> outputs;
  /// For kOpaque: why Latte does not know this op ("custom op 'Foo'", "ONNX op 'Loop'").
  std::string unsupported_reason;

  /// The i-th input, or kNoTensor when absent.
  TensorId input(size_t i) const { return i < inputs.size() ? inputs[i] : kNoTensor; }
};

class Graph {
 public:
  TensorId AddTensor(Tensor tensor);
  NodeId AddNode(Node node);

  const Tensor& tensor(TensorId id) const { return tensors_.at(static_cast<size_t>(id)); }
  Tensor& mutable_tensor(TensorId id) { return tensors_.at(static_cast<size_t>(id)); }
  const Node& node(NodeId id) const { return nodes_.at(static_cast<size_t>(id)); }
  Node& mutable_node(NodeId id) { return nodes_.at(static_cast<size_t>(id)); }
  const std::vector<Tensor>& tensors() const { return tensors_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  size_t num_tensors() const { return tensors_.size(); }
  size_t num_nodes() const { return nodes_.size(); }

  std::vector<TensorId> inputs;   // activations fed by the caller
  std::vector<TensorId> outputs;  // results
  std::string name;
  std::string source_format;  // "tflite", "onnx", or "" for graphs built in code

  /// Checks structure: ids in range, each tensor produced once and not also a constant or
  /// graph input, no cycles, constant data sized as shape × dtype. Says which node or tensor.
  Status Validate() const;
  /// Reorders nodes so each comes after the producers of its inputs (stable: keeps file
  /// order where it is already valid). Fails on a cycle, naming a node on it.
  Status SortTopologically();
  /// The node ids in an order where each comes after the producers of its inputs, the lowest
  /// ready id first (the file order wherever it is already valid), without moving the nodes.
  /// Fails on a tensor index out of range, a tensor written twice, or a cycle (naming a node on it).
  Expected<std::vector<NodeId>> TopologicalOrder() const;
  /// Node producing `id`, or -1 for constants, graph inputs and unknown tensors.
  NodeId Producer(TensorId id) const;
  /// Nodes reading `id`.
  std::vector<NodeId> Consumers(TensorId id) const;
  /// Removes nodes and tensors nothing uses (after folding); renumbers ids.
  void RemoveUnused();

 private:
  std::vector<Tensor> tensors_;
  std::vector<Node> nodes_;
};

/// The op's name for reports: Latte's kind ("conv2d"), or the file's own name for an opaque op.
std::string NodeOpName(const Node& node);
/// "node 12 'conv1' (conv2d)": how errors and reports name a node.
std::string DescribeNode(const Graph& graph, NodeId id);

}  // namespace latte
