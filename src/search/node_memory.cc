#include "search/node_memory.h"

#include <algorithm>
#include <memory>

#include "ir/graph_builder.h"
#include "run/executor.h"
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

// One backend's pass, in the child: {"backend": bytes, "nodes": per user node {supported, why, bytes,
// int8, fp32_why}}.
Expected<nlohmann::json> MeasureOnBackend(const Graph& graph, const BackendChoice& choice, const BackendRegistry& registry,
                                          RunOptions options) {
  const std::string& name = choice.backend;
  options.precision = choice.precision;
  LATTE_ASSIGN_OR_RETURN(GraphPlan plan, PlanGraphOnBackend(graph, name, registry, options));
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
  for (size_t i = 0; i < graph.num_nodes(); ++i)
    nodes.push_back({{"supported", true}, {"why", ""}, {"bytes", 0}, {"int8", false}, {"fp32_why", ""}});
  const auto planned = static_cast<NodeId>(plan.graph.num_nodes());
  // The user node an inserted conversion is counted with: its producer's, else its first consumer's.
  auto owner = [&](NodeId k) -> NodeId {
    for (TensorId in : plan.graph.node(k).inputs) {
      const NodeId p = in == kNoTensor ? -1 : plan.graph.Producer(in);
      if (p >= 0 && !plan.sources[static_cast<size_t>(p)].empty()) return plan.sources[static_cast<size_t>(p)][0];
    }
    for (NodeId j = k + 1; j < planned; ++j) {
      if (plan.sources[static_cast<size_t>(j)].empty()) continue;
      for (TensorId in : plan.graph.node(j).inputs)
        for (TensorId out : plan.graph.node(k).outputs)
          if (in == out) return plan.sources[static_cast<size_t>(j)][0];
    }
    return -1;
  };
  for (NodeId k = 0; k < planned; ++k) {
    const std::vector<NodeId>& from = plan.sources[static_cast<size_t>(k)];
    const NodeId user = from.empty() ? owner(k) : from[0];
    if (user < 0) continue;
    Support support = backend->Supports(plan.graph, k);
    if (!support.ok()) {
      if (from.empty()) return Unsupported("inserted '" + plan.graph.node(k).name + "' on " + choice.Label() + ": " + support.why());
      for (NodeId src : from) nodes[static_cast<size_t>(src)] = {{"supported", false}, {"why", support.why()}, {"bytes", 0},
                                                                  {"int8", false}, {"fp32_why", ""}};
      continue;
    }
    const Footprint before;
    auto prepared = backend->Prepare(plan.graph, k);
    if (!prepared.ok()) return prepared.status().WithContext(DescribeNode(graph, user) + " on " + choice.Label());
    if (Status s = (*prepared)->Run(buffers); !s.ok()) return s.WithContext(DescribeNode(graph, user) + " on " + choice.Label());
    nlohmann::json& node = nodes[static_cast<size_t>(user)];
    node["bytes"] = node["bytes"].get<std::size_t>() + Footprint().GrowthSince(before);
    if (!from.empty() && choice.precision == Precision::kInt8 && k < static_cast<NodeId>(plan.fp32_why.size())) {
      const std::string& why = plan.fp32_why[static_cast<size_t>(k)];
      for (NodeId src : from) {
        nodes[static_cast<size_t>(src)]["int8"] = why.empty();
        nodes[static_cast<size_t>(src)]["fp32_why"] = why;
      }
    }
    kept.push_back(std::move(prepared).value());
  }
  return nlohmann::json{{"backend", backend_bytes}, {"nodes", nodes}};
}

}  // namespace

std::string BackendChoice::Label() const {
  return precision == Precision::kFp32 ? backend : backend + "@" + std::string(PrecisionName(precision));
}

Expected<NodeMemory> MeasureNodeMemory(const Graph& graph, const std::vector<BackendChoice>& backends,
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
      return Unsupported("measuring what each node keeps on " + backends[b].Label() + ": " + report["error"].get<std::string>());
    memory.backend_bytes[b] = report.value("backend", std::size_t{0});
    const nlohmann::json nodes = report.value("nodes", nlohmann::json());
    if (!nodes.is_array() || nodes.size() != graph.num_nodes())
      return Internal("measuring what each node keeps on " + backends[b].Label() + ": a malformed report");
    for (size_t i = 0; i < graph.num_nodes(); ++i) {
      NodeOnBackend& out = memory.per_node[i][b];
      out.supported = nodes[i].value("supported", false);
      out.why = nodes[i].value("why", "");
      out.prepared_bytes = nodes[i].value("bytes", std::size_t{0});
      out.int8 = nodes[i].value("int8", false);
      out.fp32_why = nodes[i].value("fp32_why", "");
    }
  }
  return memory;
}

}  // namespace latte
