#include "search/node_memory.h"

#include <algorithm>
#include <memory>

#include "ir/graph_builder.h"
#include "run/graph_prep.h"
#include "run/process.h"
#include "run/tensor_buffers.h"

namespace latte {
namespace {

// Growth of the resident set or of the heap in use since `before`, whichever is larger.
struct Footprint {
  long rss_kb = CurrentRssKb();
  std::size_t heap = HeapBytesInUse();
  std::size_t GrowthSince(const Footprint& before) const {
    const std::size_t rss = rss_kb > before.rss_kb ? static_cast<std::size_t>(rss_kb - before.rss_kb) * 1024 : 0;
    const std::size_t heap_growth = heap > before.heap ? heap - before.heap : 0;
    return std::max(rss, heap_growth);
  }
};

// A backend's first use costs memory no node should carry alone (a thread pool started, the
// runtime's own buffers, code paged in): a 1x1 conv + relu and an add, prepared and run once.
Status WarmUp(Backend& backend, std::vector<std::unique_ptr<PreparedNode>>& kept, std::vector<TensorBuffers>& buffers) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 8, 8, 8});
  TensorId w = b.Constant("w", {8, 1, 1, 8});
  Attributes conv;
  conv.Set("layout", std::string("NHWC"));
  conv.Set("filter_layout", std::string("OHWI"));
  conv.Set("padding", std::string("valid"));
  conv.Set("strides", std::vector<std::int64_t>{1, 1});
  conv.Set("activation", std::string("relu"));
  TensorId c = b.Op1(OpKind::kConv2D, "warm_up_conv", {x, w}, conv);
  TensorId a = b.Op1(OpKind::kAdd, "warm_up_add", {c, x});
  LATTE_ASSIGN_OR_RETURN(Graph graph, b.Finish({a}));
  LATTE_ASSIGN_OR_RETURN(TensorBuffers tensors, TensorBuffers::Allocate(graph));
  buffers.push_back(std::move(tensors));
  for (NodeId k = 0; k < static_cast<NodeId>(graph.num_nodes()); ++k) {
    if (!backend.Supports(graph, k).ok()) continue;  // a backend without them has no such costs to pay
    LATTE_ASSIGN_OR_RETURN(std::unique_ptr<PreparedNode> node, backend.Prepare(graph, k));
    LATTE_RETURN_IF_ERROR(node->Run(buffers.back()));
    kept.push_back(std::move(node));
  }
  return Status::Ok();
}

// One backend's pass, in the child: {"backend": bytes, "nodes": per user node {supported, why, bytes}}.
Expected<nlohmann::json> MeasureOnBackend(const Graph& graph, const std::string& name, const BackendRegistry& registry,
                                          const RunOptions& options) {
  LATTE_ASSIGN_OR_RETURN(GraphPlan plan,
                         PlanGraphForBackends(graph, std::vector<std::string>(graph.num_nodes(), name),
                                              registry.NhwcBackendNames()));
  ResetMemoryHighWater();  // freed memory reused would not grow the resident set
  // The activations first (predicted apart, as the arena): the nodes' runs need them.
  LATTE_ASSIGN_OR_RETURN(TensorBuffers buffers, TensorBuffers::Allocate(plan.graph));
  // Every prepared node stays alive until the pass ends, as in a run: a cache the backend fills
  // for one node and reuses for the next is counted once, with the first.
  std::vector<std::unique_ptr<PreparedNode>> kept;
  std::vector<TensorBuffers> warm_up_buffers;
  const Footprint start;
  LATTE_ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, registry.Create(name, options));
  LATTE_RETURN_IF_ERROR(WarmUp(*backend, kept, warm_up_buffers).WithContext("warming up " + name));
  const std::size_t backend_bytes = Footprint().GrowthSince(start);
  nlohmann::json nodes = nlohmann::json::array();
  for (size_t i = 0; i < graph.num_nodes(); ++i) nodes.push_back({{"supported", true}, {"why", ""}, {"bytes", 0}});
  for (NodeId k = 0; k < static_cast<NodeId>(plan.graph.num_nodes()); ++k) {
    const std::vector<NodeId>& from = plan.sources[static_cast<size_t>(k)];
    if (from.empty()) continue;  // an inserted node: none when one backend runs everything
    Support support = backend->Supports(plan.graph, k);
    if (!support.ok()) {
      for (NodeId src : from) nodes[static_cast<size_t>(src)] = {{"supported", false}, {"why", support.why()}, {"bytes", 0}};
      continue;
    }
    const Footprint before;
    auto prepared = backend->Prepare(plan.graph, k);
    if (!prepared.ok()) return prepared.status().WithContext(DescribeNode(graph, from[0]) + " on " + name);
    if (Status s = (*prepared)->Run(buffers); !s.ok()) return s.WithContext(DescribeNode(graph, from[0]) + " on " + name);
    nodes[static_cast<size_t>(from[0])]["bytes"] = Footprint().GrowthSince(before);
    kept.push_back(std::move(prepared).value());
  }
  return nlohmann::json{{"backend", backend_bytes}, {"nodes", nodes}};
}

}  // namespace

Expected<NodeMemory> MeasureNodeMemory(const Graph& graph, const std::vector<std::string>& backends,
                                       const BackendRegistry& registry, const RunOptions& options) {
  NodeMemory memory;
  memory.backends = backends;
  memory.per_node.assign(graph.num_nodes(), std::vector<NodeOnBackend>(backends.size()));
  memory.backend_bytes.assign(backends.size(), 0);
  for (size_t b = 0; b < backends.size(); ++b) {
    LATTE_ASSIGN_OR_RETURN(nlohmann::json report, RunInChild([&]() -> nlohmann::json {
                             auto measured = MeasureOnBackend(graph, backends[b], registry, options);
                             if (!measured.ok()) return {{"error", measured.status().message()}};
                             return *measured;
                           }));
    if (report.contains("error"))
      return Unsupported("measuring what each node keeps on " + backends[b] + ": " + report["error"].get<std::string>());
    memory.backend_bytes[b] = report.value("backend", std::size_t{0});
    const nlohmann::json nodes = report.value("nodes", nlohmann::json());
    if (!nodes.is_array() || nodes.size() != graph.num_nodes())
      return Internal("measuring what each node keeps on " + backends[b] + ": a malformed report");
    for (size_t i = 0; i < graph.num_nodes(); ++i) {
      NodeOnBackend& out = memory.per_node[i][b];
      out.supported = nodes[i].value("supported", false);
      out.why = nodes[i].value("why", "");
      out.prepared_bytes = nodes[i].value("bytes", std::size_t{0});
    }
  }
  return memory;
}

}  // namespace latte
