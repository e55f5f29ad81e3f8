#include "run/tensor_buffers.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace latte {

namespace {
constexpr std::size_t kAlignment = 64;
constexpr std::size_t kTailPadding = 64;
}  // namespace

void TensorBuffers::FreeAligned::operator()(std::uint8_t* p) const { std::free(p); }

Expected<TensorBuffers> TensorBuffers::Allocate(const Graph& graph, std::size_t max_bytes) {
  TensorBuffers buffers;
  buffers.slots_.resize(graph.num_tensors());
  std::vector<bool> used(graph.num_tensors(), false);
  for (const Node& node : graph.nodes()) {
    for (TensorId t : node.inputs)
      if (t != kNoTensor) used[t] = true;
    for (TensorId t : node.outputs) used[t] = true;
  }
  for (TensorId t : graph.inputs) used[t] = true;
  for (TensorId t : graph.outputs) used[t] = true;

  for (std::size_t id = 0; id < graph.num_tensors(); ++id) {
    if (!used[id]) continue;
    const Tensor& tensor = graph.tensor(static_cast<TensorId>(id));
    Slot& slot = buffers.slots_[id];
    if (tensor.is_constant()) {
      slot.constant = tensor.data->data();
      slot.bytes = tensor.data->size();
      continue;
    }
    auto bytes = tensor.num_bytes();
    if (!bytes) return InvalidInput("tensor '" + tensor.name + "' has unknown shape " + ShapeToString(tensor.shape, tensor.shape_known));
    const auto size = static_cast<std::size_t>(*bytes);
    if (size > max_bytes || buffers.total_ + size > max_bytes)
      return InvalidInput("activations need more than " + std::to_string(max_bytes >> 20) + " MiB (at tensor '" + tensor.name + "')");
    const std::size_t rounded = (size + kTailPadding + kAlignment - 1) / kAlignment * kAlignment;
    auto* p = static_cast<std::uint8_t*>(std::aligned_alloc(kAlignment, rounded));
    if (p == nullptr) return Internal("out of memory allocating " + std::to_string(rounded) + " bytes for '" + tensor.name + "'");
    std::memset(p, 0, rounded);
    slot.owned.reset(p);
    slot.bytes = size;
    buffers.total_ += size;
  }
  return buffers;
}

std::uint8_t* TensorBuffers::mutable_data(TensorId id) {
  if (id < 0 || static_cast<std::size_t>(id) >= slots_.size()) return nullptr;
  return slots_[id].owned.get();
}

const std::uint8_t* TensorBuffers::data(TensorId id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= slots_.size()) return nullptr;
  const Slot& slot = slots_[id];
  return slot.owned ? slot.owned.get() : slot.constant;
}

std::size_t TensorBuffers::bytes(TensorId id) const {
  if (id < 0 || static_cast<std::size_t>(id) >= slots_.size()) return 0;
  return slots_[id].bytes;
}

}  // namespace latte
