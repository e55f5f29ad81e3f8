#include "ir/graph.h"

#include <queue>

namespace latte {

TensorId Graph::AddTensor(Tensor tensor) {
  tensors_.push_back(std::move(tensor));
  return static_cast<TensorId>(tensors_.size() - 1);
}

NodeId Graph::AddNode(Node node) {
  nodes_.push_back(std::move(node));
  return static_cast<NodeId>(nodes_.size() - 1);
}

std::string NodeOpName(const Node& node) {
  return node.kind == OpKind::kOpaque ? node.source_op : std::string(OpName(node.kind));
}

std::string DescribeNode(const Graph& graph, NodeId id) {
  const Node& n = graph.node(id);
  return "node " + std::to_string(id) + " '" + n.name + "' (" + NodeOpName(n) + ")";
}

namespace {

// producer[t] = node writing tensor t, -1 if none. Fails when a tensor has two producers.
Status Producers(const Graph& g, std::vector<NodeId>& producer) {
  producer.assign(g.num_tensors(), -1);
  for (size_t n = 0; n < g.num_nodes(); ++n) {
    for (TensorId t : g.node(static_cast<NodeId>(n)).outputs) {
      if (t < 0 || static_cast<size_t>(t) >= g.num_tensors())
        return InvalidInput(DescribeNode(g, static_cast<NodeId>(n)) + ": output tensor index " + std::to_string(t) +
                            " out of range (graph has " + std::to_string(g.num_tensors()) + " tensors)");
      if (producer[t] != -1)
        return InvalidInput("tensor " + std::to_string(t) + " '" + g.tensor(t).name + "' is written by both " +
                            DescribeNode(g, producer[t]) + " and " + DescribeNode(g, static_cast<NodeId>(n)));
      producer[t] = static_cast<NodeId>(n);
    }
  }
  return Status::Ok();
}

}  // namespace

Status Graph::Validate() const {
  for (TensorId t : inputs)
    if (t < 0 || static_cast<size_t>(t) >= tensors_.size())
      return InvalidInput("graph input tensor index " + std::to_string(t) + " out of range");
  for (TensorId t : outputs)
    if (t < 0 || static_cast<size_t>(t) >= tensors_.size())
      return InvalidInput("graph output tensor index " + std::to_string(t) + " out of range");
  std::vector<NodeId> producer;
  LATTE_RETURN_IF_ERROR(Producers(*this, producer));
  for (TensorId t : inputs)
    if (producer[t] >= 0)
      return InvalidInput("graph input '" + tensors_[t].name + "' is also written by " + DescribeNode(*this, producer[t]));
  for (size_t t = 0; t < tensors_.size(); ++t) {
    const Tensor& tensor = tensors_[t];
    if (!tensor.is_constant()) continue;
    if (producer[t] >= 0)
      return InvalidInput("constant tensor " + std::to_string(t) + " '" + tensor.name + "' is also written by " +
                          DescribeNode(*this, producer[t]));
    auto bytes = tensor.num_bytes();
    if (bytes && DataTypeSize(tensor.dtype) != 0 && static_cast<std::uint64_t>(*bytes) != tensor.data->size())
      return InvalidInput("constant tensor " + std::to_string(t) + " '" + tensor.name + "' has " +
                          std::to_string(tensor.data->size()) + " bytes of data, but its shape " +
                          ShapeToString(tensor.shape) + " of " + std::string(DataTypeName(tensor.dtype)) + " needs " +
                          std::to_string(*bytes));
  }
  return TopologicalOrder().status();
}

// Kahn's algorithm with the smallest ready node first, so a valid file order is kept.
Expected<std::vector<NodeId>> Graph::TopologicalOrder() const {
  const Graph& g = *this;
  std::vector<NodeId> producer;
  LATTE_RETURN_IF_ERROR(Producers(g, producer));
  const size_t n = g.num_nodes();
  std::vector<int> pending(n, 0);
  std::vector<std::vector<NodeId>> users(n);
  for (size_t i = 0; i < n; ++i) {
    for (TensorId t : g.node(static_cast<NodeId>(i)).inputs) {
      if (t == kNoTensor) continue;
      if (t < 0 || static_cast<size_t>(t) >= g.num_tensors())
        return InvalidInput(DescribeNode(g, static_cast<NodeId>(i)) + ": input tensor index " + std::to_string(t) +
                            " out of range (graph has " + std::to_string(g.num_tensors()) + " tensors)");
      NodeId p = producer[t];
      if (p >= 0) {
        ++pending[i];
        users[p].push_back(static_cast<NodeId>(i));
      }
    }
  }
  std::priority_queue<NodeId, std::vector<NodeId>, std::greater<>> ready;
  for (size_t i = 0; i < n; ++i)
    if (pending[i] == 0) ready.push(static_cast<NodeId>(i));
  std::vector<NodeId> order;
  while (!ready.empty()) {
    NodeId id = ready.top();
    ready.pop();
    order.push_back(id);
    for (NodeId u : users[id])
      if (--pending[u] == 0) ready.push(u);
  }
  if (order.size() != n) {
    for (size_t i = 0; i < n; ++i)
      if (pending[i] > 0)
        return InvalidInput("graph has a cycle through " + DescribeNode(g, static_cast<NodeId>(i)));
  }
  return order;
}

Status Graph::SortTopologically() {
  LATTE_ASSIGN_OR_RETURN(const std::vector<NodeId> order, TopologicalOrder());
  std::vector<Node> sorted;
  sorted.reserve(nodes_.size());
  for (NodeId id : order) sorted.push_back(std::move(nodes_[id]));
  nodes_ = std::move(sorted);
  return Status::Ok();
}

NodeId Graph::Producer(TensorId id) const {
  for (size_t n = 0; n < nodes_.size(); ++n)
    for (TensorId t : nodes_[n].outputs)
      if (t == id) return static_cast<NodeId>(n);
  return -1;
}

std::vector<NodeId> Graph::Consumers(TensorId id) const {
  std::vector<NodeId> out;
  for (size_t n = 0; n < nodes_.size(); ++n)
    for (TensorId t : nodes_[n].inputs)
      if (t == id) {
        out.push_back(static_cast<NodeId>(n));
        break;
      }
  return out;
}

void Graph::RemoveUnused() {
  // Keep nodes that (transitively) feed an output; walk backwards from the outputs.
  std::vector<NodeId> producer(tensors_.size(), -1);
  for (size_t n = 0; n < nodes_.size(); ++n)
    for (TensorId t : nodes_[n].outputs)
      if (t >= 0 && static_cast<size_t>(t) < tensors_.size()) producer[t] = static_cast<NodeId>(n);
  std::vector<bool> keep_node(nodes_.size(), false), keep_tensor(tensors_.size(), false);
  std::vector<TensorId> stack(outputs.begin(), outputs.end());
  for (TensorId t : inputs) keep_tensor[t] = true;
  while (!stack.empty()) {
    TensorId t = stack.back();
    stack.pop_back();
    if (t < 0 || keep_tensor[t]) continue;
    keep_tensor[t] = true;
    NodeId p = producer[t];
    if (p < 0 || keep_node[p]) continue;
    keep_node[p] = true;
    for (TensorId o : nodes_[p].outputs) keep_tensor[o] = true;
    for (TensorId i : nodes_[p].inputs) stack.push_back(i);
  }
  std::vector<TensorId> remap(tensors_.size(), kNoTensor);
  std::vector<Tensor> tensors;
  for (size_t t = 0; t < tensors_.size(); ++t)
    if (keep_tensor[t]) {
      remap[t] = static_cast<TensorId>(tensors.size());
      tensors.push_back(std::move(tensors_[t]));
    }
  std::vector<Node> nodes;
  for (size_t n = 0; n < nodes_.size(); ++n) {
    if (!keep_node[n]) continue;
    Node node = std::move(nodes_[n]);
    for (TensorId& t : node.inputs)
      if (t != kNoTensor) t = remap[t];
    for (TensorId& t : node.outputs) t = remap[t];
    nodes.push_back(std::move(node));
  }
  for (TensorId& t : inputs) t = remap[t];
  for (TensorId& t : outputs) t = remap[t];
  tensors_ = std::move(tensors);
  nodes_ = std::move(nodes);
}

}  // namespace latte
