#include "ir/arena_plan.h"

#include <gtest/gtest.h>

namespace latte {
namespace {

TEST(ArenaPlan, SlotsAreAlignedWithSpareBytes) {
  EXPECT_EQ(ArenaSlotBytes(0), 64u);
  EXPECT_EQ(ArenaSlotBytes(100), 192u);  // 100 + 64 spare, rounded up to 64
  EXPECT_EQ(ArenaSlotBytes(128), 192u);
}

TEST(ArenaPlan, BuffersShareMemoryOnlyWhenTheirLifetimesDoNotOverlap) {
  const std::size_t small = ArenaSlotBytes(100), big = ArenaSlotBytes(1000);
  // A chain a → b → c: c takes a's memory.
  const ArenaLayout chain = PlaceInArena({{100, 0, 1}, {100, 1, 2}, {100, 2, 3}});
  EXPECT_EQ(chain.offset, (std::vector<std::size_t>{0, small, 0}));
  EXPECT_EQ(chain.arena_bytes, 2 * small);
  // With a big buffer alive at c and after: placed first, at 0; a and b, before it in time, share
  // its memory; c, alive with it and with b, goes after it.
  const ArenaLayout with_big = PlaceInArena({{100, 0, 1}, {100, 1, 2}, {100, 2, 3}, {1000, 3, 4}});
  EXPECT_EQ(with_big.offset, (std::vector<std::size_t>{0, small, big, 0}));
  EXPECT_EQ(with_big.arena_bytes, big + small);
}

TEST(ArenaPlan, NothingToPlace) {
  const ArenaLayout layout = PlaceInArena({});
  EXPECT_TRUE(layout.offset.empty());
  EXPECT_EQ(layout.arena_bytes, 0u);
}

}  // namespace
}  // namespace latte
