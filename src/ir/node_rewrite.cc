#include "ir/node_rewrite.h"

namespace latte {

NodeRewrite::NodeRewrite(const Graph& graph)
    : nodes(graph.nodes().begin(), graph.nodes().end()), removed(graph.num_nodes(), false), from(graph.num_nodes()) {
  for (size_t i = 0; i < from.size(); ++i) from[i] = {static_cast<NodeId>(i)};
}

void NodeRewrite::Merge(NodeId into, NodeId gone) {
  auto& list = from[static_cast<size_t>(into)];
  list.insert(list.end(), from[static_cast<size_t>(gone)].begin(), from[static_cast<size_t>(gone)].end());
  removed[static_cast<size_t>(gone)] = true;
}

Graph NodeRewrite::Finish(const Graph& graph, std::vector<std::vector<NodeId>>* sources) {
  Graph out;
  out.name = graph.name;
  out.source_format = graph.source_format;
  out.inputs = graph.inputs;
  out.outputs = graph.outputs;
  for (const Tensor& tensor : graph.tensors()) out.AddTensor(tensor);
  if (sources != nullptr) sources->clear();
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (removed[i]) continue;
    out.AddNode(std::move(nodes[i]));
    if (sources != nullptr) sources->push_back(std::move(from[i]));
  }
  return out;
}

}  // namespace latte
