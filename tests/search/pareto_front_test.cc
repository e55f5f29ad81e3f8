#include "search/pareto_front.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

namespace latte {
namespace {

TEST(ParetoFront, KeepsExactlyTheNonDominatedPoints) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> value(1, 30);  // small range: ties happen
  for (int round = 0; round < 50; ++round) {
    std::vector<Solution> points;
    for (std::uint64_t id = 0; id < 40; ++id) points.push_back({id, double(value(rng)), double(value(rng))});
    std::vector<Solution> front = ParetoFront(points);
    // Reference: O(n^2), and of equal points the lowest id.
    std::set<std::uint64_t> expected;
    for (const Solution& p : points) {
      bool keep = true;
      for (const Solution& q : points) {
        if (Dominates(q, p) || (q.time_ms == p.time_ms && q.memory_kb == p.memory_kb && q.id < p.id)) keep = false;
      }
      if (keep) expected.insert(p.id);
    }
    std::set<std::uint64_t> got;
    for (const Solution& s : front) got.insert(s.id);
    EXPECT_EQ(got, expected) << "round " << round;
    for (std::size_t i = 1; i < front.size(); ++i) {
      EXPECT_LT(front[i - 1].time_ms, front[i].time_ms);
      EXPECT_GT(front[i - 1].memory_kb, front[i].memory_kb);
    }
    for (const Solution& a : front)
      for (const Solution& b : front) EXPECT_FALSE(Dominates(a, b));
  }
}

// With drift a third objective, a slower point with more memory stays when it drifts less.
TEST(ParetoFront, KeepsExactlyTheNonDominatedPointsInThreeObjectives) {
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> value(1, 12);
  for (int round = 0; round < 50; ++round) {
    std::vector<Solution> points;
    for (std::uint64_t id = 0; id < 60; ++id) points.push_back({id, double(value(rng)), double(value(rng)), double(value(rng))});
    std::set<std::uint64_t> expected;
    for (const Solution& p : points) {
      bool keep = true;
      for (const Solution& q : points)
        if (Dominates(q, p) || (q.time_ms == p.time_ms && q.memory_kb == p.memory_kb && q.drift == p.drift && q.id < p.id))
          keep = false;
      if (keep) expected.insert(p.id);
    }
    std::set<std::uint64_t> got;
    for (const Solution& s : ParetoFront(points)) got.insert(s.id);
    EXPECT_EQ(got, expected) << "round " << round;
  }
  const std::vector<Solution> three = {{0, 1, 1, 5}, {1, 2, 2, 0}, {2, 2, 2, 1}};
  const std::vector<Solution> front = ParetoFront(three);
  ASSERT_EQ(front.size(), 2u);
  EXPECT_EQ(front[0].id, 0u);
  EXPECT_EQ(front[1].id, 1u);
  EXPECT_TRUE(Dominates({0, 1, 1, 0}, {1, 1, 1, 0.5}));
  EXPECT_FALSE(Dominates({0, 1, 1, 1}, {1, 2, 2, 0.5}));
}

TEST(ParetoFront, DominanceIsStrictInOneObjective) {
  EXPECT_TRUE(Dominates({0, 1, 2}, {1, 1, 3}));
  EXPECT_TRUE(Dominates({0, 1, 2}, {1, 2, 2}));
  EXPECT_FALSE(Dominates({0, 1, 2}, {1, 1, 2}));
  EXPECT_FALSE(Dominates({0, 1, 3}, {1, 2, 2}));
}

TEST(Hypervolume2D, KnownAreas) {
  // One point: the rectangle to the reference.
  std::vector<Solution> one = {{0, 1, 1}};
  EXPECT_DOUBLE_EQ(Hypervolume2D(one, 3, 4), 2.0 * 3.0);
  // A staircase (1,3), (2,2), (3,1) with reference (4,4): 3*1 + 2*1 + 1*1... by strips:
  // (4-1)*(4-3) + (4-2)*(3-2) + (4-3)*(2-1) = 3 + 2 + 1 = 6.
  std::vector<Solution> stairs = {{0, 3, 1}, {1, 1, 3}, {2, 2, 2}};
  EXPECT_DOUBLE_EQ(Hypervolume2D(stairs, 4, 4), 6.0);
  // A dominated point and one beyond the reference change nothing.
  stairs.push_back({3, 3, 3});
  stairs.push_back({4, 5, 0.5});
  EXPECT_DOUBLE_EQ(Hypervolume2D(stairs, 4, 4), 6.0);
  EXPECT_DOUBLE_EQ(Hypervolume2D({}, 4, 4), 0.0);
}

}  // namespace
}  // namespace latte
