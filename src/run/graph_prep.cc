#include "run/graph_prep.h"

#include "ir/fold_pads.h"
#include "ir/fuse_decomposed.h"
#include "ir/fuse_activations.h"
#include "ir/layout.h"
#include "ir/whole_window_pools.h"

namespace latte {
namespace {

// Tags each node of the working copy with its id in the user's graph while layout conversion
// reorders and adds nodes; removed before any backend sees the graph.
constexpr const char* kSourceAttr = "executor_source";

bool HasNchwNode(const Graph& graph) {
  for (const Node& node : graph.nodes())
    if (node.attrs.GetString("layout", "") == "NCHW") return true;
  return false;
}

bool HasPad(const Graph& graph) {
  for (const Node& node : graph.nodes())
    if (node.kind == OpKind::kPad) return true;
  return false;
}

// What a rewrite that changed nothing reports: each node stands for itself.
std::vector<std::vector<NodeId>> IdentitySources(const Graph& graph) {
  std::vector<std::vector<NodeId>> sources(graph.num_nodes());
  for (size_t i = 0; i < sources.size(); ++i) sources[i] = {static_cast<NodeId>(i)};
  return sources;
}

}  // namespace

namespace {
NodeId SourceOf(const Node& node) { return static_cast<NodeId>(node.attrs.GetInt(kSourceAttr, -1)); }
}  // namespace

Expected<Graph> LayOutForBackends(const Graph& graph, const std::vector<std::string>& wanted, const NhwcBackends& nhwc) {
  const auto num_user_nodes = static_cast<NodeId>(graph.num_nodes());
  if (wanted.size() != graph.num_nodes()) return Status(StatusCode::kInternal, "one backend per node expected");
  bool any_nhwc = false;
  for (const std::string& backend : wanted) any_nhwc = any_nhwc || nhwc.count(backend) != 0;
  // NCHW spatial ops become NHWC for NHWC backends; nodes placed on an NCHW backend stay NCHW,
  // with transposes inserted where the two meet.
  Graph converted = graph;
  for (NodeId id = 0; id < num_user_nodes; ++id) converted.mutable_node(id).attrs.Set(kSourceAttr, std::int64_t{id});
  if (any_nhwc && HasNchwNode(graph)) {
    LayoutOptions layout;
    layout.keep_tensor_ids = true;  // the caller's tensor ids address the buffers
    layout.keep_nchw = [&](const Node& node) {
      const NodeId src = SourceOf(node);
      return src >= 0 && nhwc.count(wanted[static_cast<size_t>(src)]) == 0;
    };
    auto nhwc = ConvertToNhwc(converted, layout);
    if (!nhwc.ok()) return nhwc.status().WithContext("converting to NHWC");
    converted = std::move(nhwc).value();
  }
  return converted;
}

GraphPlan FuseForBackends(const Graph& laid_out, const std::vector<std::string>& wanted) {
  auto same_backend = [&](const Node& a, const Node& b) {
    const NodeId x = SourceOf(a), y = SourceOf(b);
    return x >= 0 && y >= 0 && wanted[static_cast<size_t>(x)] == wanted[static_cast<size_t>(y)];
  };
  // Zero pads folded into the conv after them, decomposed layer norms and GELUs merged into one
  // node, then clamps into the op before them, each when all the nodes run on the same backend;
  // last, average pools over the whole map made the global pools they are.
  auto one_backend = [&](const Graph& g, const std::vector<NodeId>& chain) {
    for (NodeId n : chain)
      if (!same_backend(g.node(chain.front()), g.node(n))) return false;
    return true;
  };
  // A pass that has nothing to match is skipped, and its graph not copied: predicting a model
  // plans it first, and a search loop predicts thousands.
  std::vector<std::vector<NodeId>> folded_from, merged_from, fused_from;
  Graph folded_copy, merged_copy;
  const Graph* folded = &laid_out;
  if (HasPad(laid_out)) {  // FoldPadsIntoConvs folds pads only
    folded_copy = FoldPadsIntoConvs(laid_out, &folded_from, same_backend);
    folded = &folded_copy;
  } else {
    folded_from = IdentitySources(laid_out);
  }
  const Graph* merged = folded;
  if (MayHaveDecomposedOps(*folded)) {
    merged_copy = FuseDecomposedOps(*folded, &merged_from,
                                    [&](const std::vector<NodeId>& chain) { return one_backend(*folded, chain); });
    merged = &merged_copy;
  } else {
    merged_from = IdentitySources(*folded);
  }
  GraphPlan plan;
  plan.graph = FuseActivations(*merged, &fused_from, same_backend);
  WholeWindowAvgPoolsToGlobal(plan.graph);  // node for node: the sources stay
  plan.sources.resize(plan.graph.num_nodes());
  for (size_t k = 0; k < plan.graph.num_nodes(); ++k) {
    for (NodeId f : fused_from[k])
      for (NodeId d : merged_from[static_cast<size_t>(f)])
        for (NodeId j : folded_from[static_cast<size_t>(d)])
          if (const NodeId src = SourceOf(laid_out.node(j)); src >= 0) plan.sources[k].push_back(src);
    plan.graph.mutable_node(static_cast<NodeId>(k)).attrs.Erase(kSourceAttr);
  }
  return plan;
}

Expected<GraphPlan> PlanGraphForBackends(const Graph& graph, const std::vector<std::string>& wanted,
                                         const NhwcBackends& nhwc) {
  LATTE_ASSIGN_OR_RETURN(Graph laid_out, LayOutForBackends(graph, wanted, nhwc));
  return FuseForBackends(laid_out, wanted);
}

namespace {

Node CastNode(std::string name, TensorId from, TensorId to, DataType type) {
  Node cast;
  cast.kind = OpKind::kCast;
  cast.name = std::move(name);
  cast.source_op = "executor";
  cast.attrs.Set("to", std::string(DataTypeName(type)));
  cast.inputs = {from};
  cast.outputs = {to};
  return cast;
}

}  // namespace

void LowerPlanToBf16(GraphPlan& plan) {
  const Graph& before = plan.graph;
  Graph lowered;
  for (const Tensor& t : before.tensors()) lowered.AddTensor(t);
  lowered.inputs = before.inputs;
  lowered.outputs = before.outputs;
  lowered.name = before.name;
  lowered.source_format = before.source_format;
  auto is_float_activation = [&](TensorId id) {
    const Tensor& t = before.tensor(id);
    return t.dtype == DataType::kFloat32 && !t.is_constant();
  };
  // A bfloat16 twin for each float32 graph input and output that a node reads or writes.
  std::vector<TensorId> twin(before.num_tensors(), kNoTensor);
  auto make_twin = [&](TensorId id) {
    if (twin[static_cast<size_t>(id)] != kNoTensor) return;
    Tensor t = before.tensor(id);
    t.name += "/bf16";
    t.dtype = DataType::kBFloat16;
    twin[static_cast<size_t>(id)] = lowered.AddTensor(std::move(t));
  };
  for (TensorId id : before.inputs)
    if (is_float_activation(id) && !before.Consumers(id).empty()) make_twin(id);
  for (TensorId id : before.outputs)
    if (is_float_activation(id) && before.Producer(id) >= 0) make_twin(id);
  for (size_t id = 0; id < before.num_tensors(); ++id)
    if (twin[id] == kNoTensor && is_float_activation(static_cast<TensorId>(id)))
      lowered.mutable_tensor(static_cast<TensorId>(id)).dtype = DataType::kBFloat16;

  std::vector<std::vector<NodeId>> sources;
  for (TensorId id : before.inputs)
    if (const TensorId t = twin[static_cast<size_t>(id)]; t != kNoTensor && before.Producer(id) < 0) {
      lowered.AddNode(CastNode(before.tensor(id).name + "/to_bf16", id, t, DataType::kBFloat16));
      sources.emplace_back();
    }
  for (NodeId k = 0; k < static_cast<NodeId>(before.num_nodes()); ++k) {
    Node node = before.node(k);
    for (TensorId& in : node.inputs)
      if (in != kNoTensor && twin[static_cast<size_t>(in)] != kNoTensor) in = twin[static_cast<size_t>(in)];
    std::vector<TensorId> written;
    for (TensorId& out : node.outputs)
      if (twin[static_cast<size_t>(out)] != kNoTensor) written.push_back(out), out = twin[static_cast<size_t>(out)];
    lowered.AddNode(std::move(node));
    sources.push_back(plan.sources[static_cast<size_t>(k)]);
    for (TensorId out : written) {
      lowered.AddNode(CastNode(before.tensor(out).name + "/to_fp32", twin[static_cast<size_t>(out)], out, DataType::kFloat32));
      sources.emplace_back();
    }
  }
  plan.graph = std::move(lowered);
  plan.sources = std::move(sources);
}

std::vector<std::string> InsertedNodeBackends(const Graph& planned, const std::vector<std::vector<NodeId>>& sources,
                                              const std::vector<std::string>& wanted, NodeId node,
                                              const std::string& default_backend) {
  std::vector<std::string> out;
  auto backend_of = [&](NodeId k) { return wanted[static_cast<size_t>(sources[static_cast<size_t>(k)][0])]; };
  for (TensorId t : planned.node(node).inputs) {
    const NodeId p = planned.Producer(t);
    if (p >= 0 && !sources[static_cast<size_t>(p)].empty()) out.push_back(backend_of(p));
  }
  for (TensorId t : planned.node(node).outputs)
    for (NodeId c : planned.Consumers(t))
      if (!sources[static_cast<size_t>(c)].empty()) out.push_back(backend_of(c));
  out.push_back(default_backend);
  return out;
}

}  // namespace latte
