#include "run/executor.h"

#include <chrono>
#include <cstring>
#include <random>

namespace latte {

std::string Placement::BackendFor(const Graph& graph, NodeId node) const {
  if (auto it = by_node.find(node); it != by_node.end()) return it->second;
  if (auto it = by_op_kind.find(graph.node(node).kind); it != by_op_kind.end()) return it->second;
  return default_backend;
}

Expected<std::unique_ptr<Executor>> Executor::Create(const Graph& graph, const Placement& placement,
                                                     const BackendRegistry& registry, const RunOptions& options) {
  LATTE_ASSIGN_OR_RETURN(TensorBuffers buffers, TensorBuffers::Allocate(graph));
  std::unique_ptr<Executor> executor(new Executor(graph, std::move(buffers)));
  auto backend = [&](const std::string& name) -> Expected<Backend*> {
    auto it = executor->backends_.find(name);
    if (it != executor->backends_.end()) return it->second.get();
    LATTE_ASSIGN_OR_RETURN(std::unique_ptr<Backend> created, registry.Create(name, options));
    Backend* raw = created.get();
    executor->backends_[name] = std::move(created);
    return raw;
  };
  for (NodeId id = 0; id < static_cast<NodeId>(graph.num_nodes()); ++id) {
    NodeAssignment assignment;
    assignment.backend = placement.BackendFor(graph, id);
    LATTE_ASSIGN_OR_RETURN(Backend * chosen, backend(assignment.backend));
    Support support = chosen->Supports(graph, id);
    if (!support.ok()) {
      if (placement.fallback.empty() || placement.fallback == assignment.backend)
        return Unsupported(DescribeNode(graph, id) + ": " + assignment.backend + " cannot run it: " + support.why());
      LATTE_ASSIGN_OR_RETURN(Backend * fallback, backend(placement.fallback));
      Support second = fallback->Supports(graph, id);
      if (!second.ok())
        return Unsupported(DescribeNode(graph, id) + ": neither " + assignment.backend + " (" + support.why() + ") nor " +
                           placement.fallback + " (" + second.why() + ") can run it");
      assignment.fell_back = true;
      assignment.why = support.why();
      assignment.backend = placement.fallback;
      chosen = fallback;
    }
    auto prepared = chosen->Prepare(graph, id);
    if (!prepared.ok()) return prepared.status().WithContext(DescribeNode(graph, id) + " on " + assignment.backend);
    executor->prepared_.push_back(std::move(prepared).value());
    executor->assignments_.push_back(std::move(assignment));
  }
  return executor;
}

Status Executor::Run() {
  for (size_t i = 0; i < prepared_.size(); ++i) {
    Status s = prepared_[i]->Run(buffers_);
    if (!s.ok()) return s.WithContext(DescribeNode(graph_, static_cast<NodeId>(i)) + " on " + assignments_[i].backend);
  }
  return Status::Ok();
}

Status Executor::RunProfiled(std::vector<double>& node_us) {
  node_us.resize(prepared_.size(), 0.0);
  for (size_t i = 0; i < prepared_.size(); ++i) {
    const auto start = std::chrono::steady_clock::now();
    Status s = prepared_[i]->Run(buffers_);
    node_us[i] += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    if (!s.ok()) return s.WithContext(DescribeNode(graph_, static_cast<NodeId>(i)) + " on " + assignments_[i].backend);
  }
  return Status::Ok();
}

std::vector<std::string> Executor::BackendVersions() const {
  std::vector<std::string> out;
  for (const auto& [name, backend] : backends_) out.push_back(name + " " + backend->Version());
  return out;
}

void FillRandomInputs(const Graph& graph, TensorBuffers& buffers, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (TensorId id : graph.inputs) {
    std::uint8_t* data = buffers.mutable_data(id);
    if (data == nullptr) continue;
    if (graph.tensor(id).dtype != DataType::kFloat32) {
      std::memset(data, 0, buffers.bytes(id));
      continue;
    }
    auto* values = reinterpret_cast<float*>(data);
    for (size_t i = 0; i < buffers.bytes(id) / sizeof(float); ++i) values[i] = uniform(rng);
  }
}

}  // namespace latte
