#include "run/tensor_buffers.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "ir/arena_plan.h"

namespace latte {

namespace {
// The tensors that get a slot: those a node reads or writes, and the graph's inputs and outputs.
std::vector<bool> UsedTensors(const Graph& graph) {
  std::vector<bool> used(graph.num_tensors(), false);
  for (const Node& node : graph.nodes()) {
    for (TensorId t : node.inputs)
      if (t != kNoTensor) used[t] = true;
    for (TensorId t : node.outputs) used[t] = true;
  }
  for (TensorId t : graph.inputs) used[t] = true;
  for (TensorId t : graph.outputs) used[t] = true;
  return used;
}

}  // namespace

void TensorBuffers::FreeAligned::operator()(std::uint8_t* p) const { std::free(p); }

Expected<ArenaPlan> TensorBuffers::Plan(const Graph& graph, BufferSharing sharing) {
  const std::vector<bool> used = UsedTensors(graph);
  const std::size_t n = graph.num_tensors();
  ArenaPlan plan;
  plan.offset.assign(n, ArenaPlan::kNone);
  // Lifetimes in node order: [first, last] inclusive; whole-run tensors span every node.
  const std::size_t end = graph.num_nodes() + 1;
  std::vector<std::size_t> first(n, end), last(n, 0), size(n, 0);
  std::vector<TensorId> activations;
  for (std::size_t id = 0; id < n; ++id) {
    const Tensor& tensor = graph.tensor(static_cast<TensorId>(id));
    if (!used[id] || tensor.is_constant()) continue;
    auto bytes = tensor.num_bytes();
    if (!bytes) return InvalidInput("tensor '" + tensor.name + "' has unknown shape " + ShapeToString(tensor.shape, tensor.shape_known));
    size[id] = static_cast<std::size_t>(*bytes);
    plan.tensor_bytes += size[id];
    activations.push_back(static_cast<TensorId>(id));
  }
  for (std::size_t k = 0; k < graph.num_nodes(); ++k) {
    const Node& node = graph.node(static_cast<NodeId>(k));
    for (TensorId t : node.inputs)
      if (t != kNoTensor) first[t] = std::min(first[t], k + 1), last[t] = std::max(last[t], k + 1);
    for (TensorId t : node.outputs) first[t] = std::min(first[t], k + 1), last[t] = std::max(last[t], k + 1);
  }
  for (TensorId t : graph.inputs) first[t] = 0, last[t] = end;
  for (TensorId t : graph.outputs) last[t] = end;
  if (sharing == BufferSharing::kNone)
    for (TensorId t : activations) first[t] = 0, last[t] = end;

  std::vector<ArenaBuffer> buffers;
  for (TensorId t : activations) buffers.push_back({size[t], first[t], last[t]});
  const ArenaLayout layout = PlaceInArena(buffers);
  for (std::size_t i = 0; i < activations.size(); ++i) plan.offset[activations[i]] = layout.offset[i];
  plan.arena_bytes = layout.arena_bytes;
  return plan;
}

Expected<TensorBuffers> TensorBuffers::Allocate(const Graph& graph, std::size_t max_bytes, BufferSharing sharing) {
  TensorBuffers buffers;
  LATTE_ASSIGN_OR_RETURN(buffers.plan_, Plan(graph, sharing));
  if (buffers.plan_.arena_bytes > max_bytes)
    return InvalidInput("activations need " + std::to_string(buffers.plan_.arena_bytes >> 20) + " MiB, more than " +
                        std::to_string(max_bytes >> 20) + " MiB");
  if (buffers.plan_.arena_bytes > 0) {
    auto* p = static_cast<std::uint8_t*>(std::aligned_alloc(kArenaAlignment, buffers.plan_.arena_bytes));
    if (p == nullptr) return Internal("out of memory allocating " + std::to_string(buffers.plan_.arena_bytes) + " bytes of activations");
    std::memset(p, 0, buffers.plan_.arena_bytes);
    buffers.arena_.reset(p);
  }
  const std::vector<bool> used = UsedTensors(graph);
  buffers.slots_.resize(graph.num_tensors());
  for (std::size_t id = 0; id < graph.num_tensors(); ++id) {
    if (!used[id]) continue;
    const Tensor& tensor = graph.tensor(static_cast<TensorId>(id));
    Slot& slot = buffers.slots_[id];
    if (tensor.is_constant()) {
      slot.constant = tensor.data->data();
      slot.bytes = tensor.data->size();
      continue;
    }
    slot.activation = buffers.arena_.get() + buffers.plan_.offset[id];
    slot.bytes = static_cast<std::size_t>(*tensor.num_bytes());
  }
  return buffers;
}

std::uint8_t* TensorBuffers::mutable_data(TensorId id) {
  if (id < 0 || static_cast<std::size_t>(id) >= slots_.size()) return nullptr;
  return slots_[id].activation;
}

const std::uint8_t* TensorBuffers::data(TensorId id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= slots_.size()) return nullptr;
  const Slot& slot = slots_[id];
  return slot.activation != nullptr ? slot.activation : slot.constant;
}

std::size_t TensorBuffers::bytes(TensorId id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= slots_.size()) return 0;
  return slots_[id].bytes;
}

}  // namespace latte
