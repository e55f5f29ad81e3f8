#include "profile/adaptive.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace latte {
namespace {

Kernel Relu(std::int64_t h, std::int64_t c) {
  Kernel k;
  k.op = OpKind::kRelu;
  k.params = {{"n", 1}, {"h", h}, {"w", h}, {"c", c}};
  return k;
}

// Latency proportional to elements: a smooth function the neighbours fit well.
std::vector<MeasuredPoint> SmoothPoints() {
  std::vector<MeasuredPoint> points;
  for (std::int64_t h : {8, 16, 32, 64})
    for (std::int64_t c : {16, 32, 64}) points.push_back({Relu(h, c), 0.01 * static_cast<double>(h * h * c)});
  return points;
}

TEST(Adaptive, OutlierHasTheLargestLeaveOneOutError) {
  std::vector<MeasuredPoint> points = SmoothPoints();
  points[5].p50_us *= 10;  // (16, 64): the fit cannot explain it
  const std::vector<double> errors = LeaveOneOutErrors(points);
  ASSERT_EQ(errors.size(), points.size());
  const auto worst = std::max_element(errors.begin(), errors.end()) - errors.begin();
  EXPECT_EQ(worst, 5);
  EXPECT_GT(errors[5], std::log(5.0));
}

TEST(Adaptive, ExactOnDuplicatesOfAConstant) {
  std::vector<MeasuredPoint> points;
  for (std::int64_t c : {16, 24, 32, 40}) points.push_back({Relu(8, c), 7.0});
  for (double e : LeaveOneOutErrors(points)) EXPECT_NEAR(e, 0, 1e-12);
}

TEST(Adaptive, CandidatesStartAroundTheWorstPointAndSkipExcluded) {
  std::vector<MeasuredPoint> points = SmoothPoints();
  points[5].p50_us *= 10;
  const std::vector<double> errors = LeaveOneOutErrors(points);
  std::set<std::string> exclude;
  for (const MeasuredPoint& p : points) exclude.insert(p.kernel.Key());
  const std::vector<Kernel> around = NeighbourKernels(points[5].kernel);
  exclude.insert(around[0].Key());  // already measured elsewhere
  const std::vector<Kernel> picked = AdaptiveCandidates(points, errors, exclude, 3);
  ASSERT_EQ(picked.size(), 3u);
  for (std::size_t i = 0; i < picked.size(); ++i) {
    EXPECT_EQ(picked[i], around[i + 1]) << picked[i].Key();
    EXPECT_FALSE(exclude.count(picked[i].Key()));
  }
  // Deterministic.
  EXPECT_EQ(AdaptiveCandidates(points, errors, exclude, 3), picked);
  // Asking for more than the first ring holds reaches the second ring, without duplicates.
  const std::vector<Kernel> many = AdaptiveCandidates(points, errors, exclude, 200);
  std::set<std::string> keys;
  for (const Kernel& k : many) EXPECT_TRUE(keys.insert(k.Key()).second);
  EXPECT_GT(many.size(), 24u);
}

}  // namespace
}  // namespace latte
