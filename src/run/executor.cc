#include "run/executor.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>

#include "run/graph_prep.h"

namespace latte {

std::string Placement::BackendFor(const Graph& graph, NodeId node) const {
  if (auto it = by_node.find(node); it != by_node.end()) return it->second;
  if (auto it = by_op_kind.find(graph.node(node).kind); it != by_op_kind.end()) return it->second;
  return default_backend;
}

Expected<std::unique_ptr<Executor>> Executor::Create(const Graph& graph, const Placement& placement,
                                                     const BackendRegistry& registry, const RunOptions& options) {
  const auto num_user_nodes = static_cast<NodeId>(graph.num_nodes());
  std::vector<std::string> wanted(graph.num_nodes());
  for (NodeId id = 0; id < num_user_nodes; ++id) wanted[static_cast<size_t>(id)] = placement.BackendFor(graph, id);
  // The graph as it runs (NHWC where the backends need it, clamps folded): the same plan
  // prediction uses, so profile entry k is node k of the plan.
  LATTE_ASSIGN_OR_RETURN(GraphPlan plan, PlanGraphForBackends(graph, wanted, registry.NhwcBackendNames()));
  // bf16: activations bfloat16 between nodes, the caller's inputs and outputs float32 (cast nodes
  // inserted at the edges, run by the neighbouring nodes' backend); a node a backend cannot run
  // at bf16 is refused by it, saying why.
  if (options.precision == Precision::kBf16) LowerPlanToBf16(plan);
  const std::vector<std::vector<NodeId>> sources = std::move(plan.sources);

  // Buffers come after every node said yes: a node no backend runs (an opaque op, whose
  // output shape may be unknown) is reported as such, not as a buffer without a shape.
  std::unique_ptr<Executor> executor(new Executor(std::move(plan.graph), TensorBuffers{}));
  const Graph& run_graph = executor->prepared_graph_;
  auto backend = [&](const std::string& name) -> Expected<Backend*> {
    auto it = executor->backends_.find(name);
    if (it != executor->backends_.end()) return it->second.get();
    LATTE_ASSIGN_OR_RETURN(std::unique_ptr<Backend> created, registry.Create(name, options));
    Backend* raw = created.get();
    executor->backends_[name] = std::move(created);
    return raw;
  };

  // 3. A whole-model runtime (ort) placed on every node runs the graph as one model.
  Backend* whole = nullptr;
  if (!wanted.empty() && std::all_of(wanted.begin(), wanted.end(), [&](const std::string& w) { return w == wanted[0]; })) {
    LATTE_ASSIGN_OR_RETURN(Backend * b, backend(wanted[0]));
    bool all = b->RunsWholeGraphs();
    for (NodeId k = 0; all && k < static_cast<NodeId>(run_graph.num_nodes()); ++k) all = b->Supports(run_graph, k).ok();
    if (all) whole = b;
  }

  executor->assignments_.assign(graph.num_nodes(), NodeAssignment{});
  for (NodeId k = 0; k < static_cast<NodeId>(run_graph.num_nodes()); ++k) {
    const std::vector<NodeId>& from = sources[static_cast<size_t>(k)];
    const Node& node = run_graph.node(k);
    ProfileEntry entry;
    entry.sources = from;
    entry.inserted = from.empty();
    entry.name = entry.inserted ? node.name : graph.node(from[0]).name;
    for (NodeId src : from) {
      if (!entry.op.empty()) entry.op += "+";
      entry.op += NodeOpName(graph.node(src));
    }
    if (entry.inserted) entry.op = NodeOpName(node);
    const std::string what =
        entry.inserted ? "inserted node '" + node.name + "' (" + entry.op + ")" : DescribeNode(graph, from[0]);

    NodeAssignment assignment;
    Backend* chosen = nullptr;
    Support support = Support::No("no backend");
    if (entry.inserted) {
      const std::vector<std::string> candidates = InsertedNodeBackends(run_graph, sources, wanted, k, placement.default_backend);
      for (const std::string& name : candidates) {
        LATTE_ASSIGN_OR_RETURN(Backend * b, backend(name));
        support = b->Supports(run_graph, k);
        if (support.ok()) {
          assignment.backend = name, chosen = b;
          break;
        }
      }
      if (chosen == nullptr) assignment.backend = candidates[0];
    } else {
      assignment.backend = wanted[static_cast<size_t>(from[0])];
      LATTE_ASSIGN_OR_RETURN(chosen, backend(assignment.backend));
      support = chosen->Supports(run_graph, k);
    }
    if (!support.ok()) {
      if (placement.fallback.empty() || placement.fallback == assignment.backend)
        return Unsupported(what + ": " + assignment.backend + " cannot run it: " + support.why());
      LATTE_ASSIGN_OR_RETURN(Backend * fallback, backend(placement.fallback));
      Support second = fallback->Supports(run_graph, k);
      if (!second.ok())
        return Unsupported(what + ": neither " + assignment.backend + " (" + support.why() + ") nor " + placement.fallback +
                           " (" + second.why() + ") can run it");
      assignment.fell_back = true;
      assignment.why = support.why();
      assignment.backend = placement.fallback;
      chosen = fallback;
    }
    if (whole == nullptr) {
      auto ready = chosen->Prepare(run_graph, k);
      if (!ready.ok()) return ready.status().WithContext(what + " on " + assignment.backend);
      executor->prepared_.push_back(std::move(ready).value());
    }
    entry.backend = assignment.backend;
    for (NodeId src : from) executor->assignments_[static_cast<size_t>(src)] = assignment;
    executor->entries_.push_back(std::move(entry));
  }
  if (whole != nullptr) {
    auto ready = whole->PrepareGraph(run_graph);
    if (!ready.ok()) return ready.status().WithContext("the whole graph on " + wanted[0]);
    executor->whole_graph_ = std::move(ready).value();
  }
  LATTE_ASSIGN_OR_RETURN(executor->buffers_, TensorBuffers::Allocate(run_graph));
  return executor;
}

Status Executor::Run() {
  if (whole_graph_) return whole_graph_->Run(buffers_).WithContext("the whole graph on " + entries_.at(0).backend);
  for (size_t i = 0; i < prepared_.size(); ++i) {
    Status s = prepared_[i]->Run(buffers_);
    if (!s.ok()) return s.WithContext("'" + entries_[i].name + "' (" + entries_[i].op + ") on " + entries_[i].backend);
  }
  return Status::Ok();
}

Status Executor::RunProfiled(std::vector<double>& entry_us, double* layout_us) {
  if (whole_graph_) {
    entry_us.resize(entries_.size(), 0.0);  // the prepared graph's node ids are the entries' indices
    double layout = 0;
    Status s = whole_graph_->RunProfiled(buffers_, entry_us, layout);
    if (layout_us != nullptr) *layout_us += layout;
    return s.WithContext("the whole graph on " + entries_.at(0).backend);
  }
  entry_us.resize(prepared_.size(), 0.0);
  for (size_t i = 0; i < prepared_.size(); ++i) {
    const auto start = std::chrono::steady_clock::now();
    Status s = prepared_[i]->Run(buffers_);
    entry_us[i] += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    if (!s.ok()) return s.WithContext("'" + entries_[i].name + "' (" + entries_[i].op + ") on " + entries_[i].backend);
  }
  return Status::Ok();
}

std::vector<std::string> Executor::BackendVersions() const {
  std::vector<std::string> out;
  for (const auto& [name, backend] : backends_) out.push_back(name + " " + backend->Version());
  return out;
}

namespace {

// The indices an integer input may hold: [0, n) when every node reading it is a gather reading it
// as its indices (n: the smallest gathered axis); 1 (zeros only) otherwise.
std::int64_t IndexRange(const Graph& graph, TensorId id) {
  std::int64_t range = 0;
  for (NodeId c : graph.Consumers(id)) {
    const Node& node = graph.node(c);
    if (node.kind != OpKind::kGather || node.input(1) != id || node.input(0) == kNoTensor) return 1;
    const Tensor& data = graph.tensor(node.inputs[0]);
    const auto rank = static_cast<std::int64_t>(data.shape.size());
    std::int64_t axis = node.attrs.GetInt("axis", 0);
    if (axis < 0) axis += rank;
    if (!data.fully_known() || axis < 0 || axis >= rank) return 1;
    const std::int64_t n = data.shape[static_cast<size_t>(axis)];
    range = range == 0 ? n : std::min(range, n);
  }
  return std::max<std::int64_t>(range, 1);
}

}  // namespace

void FillRandomInputs(const Graph& graph, TensorBuffers& buffers, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (TensorId id : graph.inputs) {
    std::uint8_t* data = buffers.mutable_data(id);
    if (data == nullptr) continue;
    const DataType dtype = graph.tensor(id).dtype;
    if (dtype == DataType::kBool) {  // a where's condition, a logic op's operand: both values
      for (size_t i = 0; i < buffers.bytes(id); ++i) data[i] = static_cast<std::uint8_t>(rng() & 1);
      continue;
    }
    if (dtype == DataType::kInt64 || dtype == DataType::kInt32) {  // indices within what they index
      std::uniform_int_distribution<std::int64_t> index(0, IndexRange(graph, id) - 1);
      if (dtype == DataType::kInt64) {
        auto* values = reinterpret_cast<std::int64_t*>(data);
        for (size_t i = 0; i < buffers.bytes(id) / sizeof(std::int64_t); ++i) values[i] = index(rng);
      } else {
        auto* values = reinterpret_cast<std::int32_t*>(data);
        for (size_t i = 0; i < buffers.bytes(id) / sizeof(std::int32_t); ++i) values[i] = static_cast<std::int32_t>(index(rng));
      }
      continue;
    }
    if (dtype != DataType::kFloat32) {
      std::memset(data, 0, buffers.bytes(id));
      continue;
    }
    auto* values = reinterpret_cast<float*>(data);
    for (size_t i = 0; i < buffers.bytes(id) / sizeof(float); ++i) values[i] = uniform(rng);
  }
}

}  // namespace latte
