#include "ir/arena_plan.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace latte {

ArenaLayout PlaceInArena(const std::vector<ArenaBuffer>& buffers) {
  ArenaLayout layout;
  layout.offset.assign(buffers.size(), 0);
  std::vector<std::size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (buffers[a].bytes != buffers[b].bytes) return buffers[a].bytes > buffers[b].bytes;
    if (buffers[a].first != buffers[b].first) return buffers[a].first < buffers[b].first;
    return a < b;
  });
  std::vector<std::size_t> placed;
  std::vector<std::pair<std::size_t, std::size_t>> taken;  // [offset, offset + slot) of live ones
  for (std::size_t t : order) {
    const ArenaBuffer& buffer = buffers[t];
    taken.clear();
    for (std::size_t p : placed)
      if (buffers[p].first <= buffer.last && buffer.first <= buffers[p].last)
        taken.emplace_back(layout.offset[p], layout.offset[p] + ArenaSlotBytes(buffers[p].bytes));
    std::sort(taken.begin(), taken.end());
    const std::size_t slot = ArenaSlotBytes(buffer.bytes);
    std::size_t at = 0;
    for (const auto& [lo, hi] : taken) {
      if (lo >= at + slot) break;  // fits in the gap before this one
      at = std::max(at, hi);
    }
    layout.offset[t] = at;
    layout.arena_bytes = std::max(layout.arena_bytes, at + slot);
    placed.push_back(t);
  }
  return layout;
}

}  // namespace latte
