#pragma once
// Where buffers live in one arena when two may share memory only if their lifetimes do not
// overlap: the executor's plan for a graph's activations (run/tensor_buffers), and the memory
// ir/cache_reuse simulates a graph's cache traffic on.

#include <cstddef>
#include <vector>

namespace latte {

/// Buffers are 64-byte aligned with 64 spare bytes at their end (XNNPACK's kernels may read up to
/// 16 bytes past a tensor).
constexpr std::size_t kArenaAlignment = 64;
constexpr std::size_t kArenaTailPadding = 64;

/// The bytes a buffer of `bytes` takes in the arena.
constexpr std::size_t ArenaSlotBytes(std::size_t bytes) {
  return (bytes + kArenaTailPadding + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

/// A buffer to place: its size and its lifetime [first, last], inclusive, in any step numbering.
struct ArenaBuffer {
  std::size_t bytes = 0;
  std::size_t first = 0, last = 0;
};

struct ArenaLayout {
  std::vector<std::size_t> offset;  // per buffer, in the order given
  std::size_t arena_bytes = 0;      // the end of the last slot
};

/// Greedy by size: largest first (ties: earlier lifetime, then the order given, for a
/// deterministic plan), each at the lowest offset where no placed buffer alive at the same time
/// overlaps its slot.
ArenaLayout PlaceInArena(const std::vector<ArenaBuffer>& buffers);

}  // namespace latte
