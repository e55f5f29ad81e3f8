#pragma once
// Host memory for the tensors of a graph while it runs.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"

namespace latte {

/// Where the activations of a graph live in one arena: two tensors share memory only when their
/// lifetimes do not overlap. A lifetime runs from the node that writes the tensor to the last
/// node that reads it, in the graph's node order (the order the executor runs); graph inputs
/// and outputs live for the whole run, so inputs filled once serve every run and outputs stay
/// readable after it. Placement is ir/arena_plan's greedy by size (largest first, lowest offset that fits).
struct ArenaPlan {
  static constexpr std::size_t kNone = ~std::size_t{0};
  std::vector<std::size_t> offset;  // per tensor id: byte offset in the arena, kNone if no buffer
  std::size_t arena_bytes = 0;      // the arena's size: the activations alive at once, padded
  std::size_t tensor_bytes = 0;     // sum of every activation's own size (what no sharing costs)
};

enum class BufferSharing {
  kByLifetime,  // the arena plan above: the memory of activations alive at once
  kNone,        // every activation its own memory (to read any intermediate tensor after a run)
};

/// Activations live in one 64-byte-aligned arena, each with 64 spare bytes at its end (XNNPACK's
/// kernels may read up to 16 bytes past a tensor); constants point at the graph's data, read-only.
class TensorBuffers {
 public:
  /// Plans the activations (every non-constant tensor used by a node or listed as a graph input
  /// or output) and allocates the arena, zeroed. Fails naming a tensor whose shape is unknown,
  /// or when the arena would exceed `max_bytes`.
  static Expected<TensorBuffers> Allocate(const Graph& graph, std::size_t max_bytes = std::size_t{16} << 30,
                                          BufferSharing sharing = BufferSharing::kByLifetime);
  /// The arena plan Allocate uses, without allocating; fails as Allocate does on unknown shapes.
  static Expected<ArenaPlan> Plan(const Graph& graph, BufferSharing sharing = BufferSharing::kByLifetime);

  /// Writable data of an activation; nullptr for a constant or a tensor with no buffer.
  std::uint8_t* mutable_data(TensorId id);
  /// Data of any tensor (an activation's buffer or a constant's data); nullptr if none.
  const std::uint8_t* data(TensorId id) const;
  std::size_t bytes(TensorId id) const;
  template <typename T>
  T* mutable_as(TensorId id) { return reinterpret_cast<T*>(mutable_data(id)); }
  template <typename T>
  const T* as(TensorId id) const { return reinterpret_cast<const T*>(data(id)); }
  /// Sum of every activation's own size (as if none shared memory).
  std::size_t total_activation_bytes() const { return plan_.tensor_bytes; }
  /// Bytes of the arena all activations live in.
  std::size_t arena_bytes() const { return plan_.arena_bytes; }

 private:
  struct FreeAligned {
    void operator()(std::uint8_t* p) const;
  };
  struct Slot {
    std::uint8_t* activation = nullptr;  // in the arena
    const std::uint8_t* constant = nullptr;
    std::size_t bytes = 0;
  };
  std::unique_ptr<std::uint8_t, FreeAligned> arena_;
  std::vector<Slot> slots_;
  ArenaPlan plan_;
};

}  // namespace latte
