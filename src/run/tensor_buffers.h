#pragma once
// Host memory for the tensors of a graph while it runs.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"

namespace latte {

/// Activations get their own 64-byte-aligned buffers with 64 spare bytes at the end (XNNPACK's
/// kernels may read up to 16 bytes past a tensor); constants point at the graph's data, read-only.
class TensorBuffers {
 public:
  /// Allocates every non-constant tensor used by a node or listed as a graph input/output.
  /// Fails naming a tensor whose shape is unknown or too large (> `max_bytes` in all).
  static Expected<TensorBuffers> Allocate(const Graph& graph, std::size_t max_bytes = std::size_t{16} << 30);

  /// Writable data of an activation; nullptr for a constant or a tensor with no buffer.
  std::uint8_t* mutable_data(TensorId id);
  /// Data of any tensor (an activation's buffer or a constant's data); nullptr if none.
  const std::uint8_t* data(TensorId id) const;
  std::size_t bytes(TensorId id) const;
  template <typename T>
  T* mutable_as(TensorId id) { return reinterpret_cast<T*>(mutable_data(id)); }
  template <typename T>
  const T* as(TensorId id) const { return reinterpret_cast<const T*>(data(id)); }
  /// Bytes of all activation buffers.
  std::size_t total_activation_bytes() const { return total_; }

 private:
  struct FreeAligned {
    void operator()(std::uint8_t* p) const;
  };
  struct Slot {
    std::unique_ptr<std::uint8_t, FreeAligned> owned;
    const std::uint8_t* constant = nullptr;
    std::size_t bytes = 0;
  };
  std::vector<Slot> slots_;
  std::size_t total_ = 0;
};

}  // namespace latte
