#include "core/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace latte {
namespace {

TEST(Stats, PercentilesInterpolateBetweenRanks) {
  std::vector<double> sorted = {1, 2, 3, 4, 5};
  EXPECT_DOUBLE_EQ(Percentile(sorted, 0.0), 1);
  EXPECT_DOUBLE_EQ(Percentile(sorted, 0.5), 3);
  EXPECT_DOUBLE_EQ(Percentile(sorted, 1.0), 5);
  EXPECT_DOUBLE_EQ(Percentile(sorted, 0.1), 1.4);
  EXPECT_DOUBLE_EQ(Percentile(std::vector<double>{7}, 0.9), 7);
  EXPECT_DOUBLE_EQ(Percentile(std::vector<double>{}, 0.5), 0);
}

TEST(Stats, SummaryOfKnownSamples) {
  std::vector<double> samples = {5, 1, 4, 2, 3, 6, 8, 7, 10, 9};  // unsorted on purpose
  Stats s = Summarize(samples);
  EXPECT_EQ(s.n, 10u);
  EXPECT_DOUBLE_EQ(s.p0, 1);
  EXPECT_DOUBLE_EQ(s.p100, 10);
  EXPECT_DOUBLE_EQ(s.p50, 5.5);
  EXPECT_DOUBLE_EQ(s.p10, 1.9);
  EXPECT_DOUBLE_EQ(s.p90, 9.1);
  EXPECT_DOUBLE_EQ(s.mean, 5.5);
  EXPECT_NEAR(s.std, 3.0276503540974917, 1e-12);  // sample std of 1..10
  EXPECT_EQ(Summarize(std::vector<double>{}).n, 0u);
}

TEST(Stats, RobustRelativeSdReadsTheP10ToP90Band) {
  std::vector<double> readings;
  for (int i = 0; i <= 10; ++i) readings.push_back(90 + 2 * i);  // 90, 92, ..., 110: p10 92, p90 108
  EXPECT_NEAR(RobustRelativeSd(readings), std::log(108.0 / 92.0) / 2.563, 1e-12);
  readings.back() = 1000;  // one spike does not move it
  EXPECT_NEAR(RobustRelativeSd(readings), std::log(108.0 / 92.0) / 2.563, 1e-12);
  EXPECT_DOUBLE_EQ(RobustRelativeSd(std::vector<double>{7, 7, 7, 7, 7}), 0);
  EXPECT_DOUBLE_EQ(RobustRelativeSd(std::vector<double>{1, 2, 3, 4}), 0);     // too few to say
  EXPECT_DOUBLE_EQ(RobustRelativeSd(std::vector<double>{0, 2, 3, 4, 5}), 0);  // not all positive
}

TEST(Stats, NoiseFromDriftAndSpikes) {
  std::vector<double> steady(100, 10.0);
  NoiseReport quiet = AssessNoise(steady);
  EXPECT_FALSE(quiet.noisy);
  EXPECT_DOUBLE_EQ(quiet.batch_median_cv, 0.0);

  std::vector<double> drift;  // the machine slows down by 30% halfway through
  for (int i = 0; i < 100; ++i) drift.push_back(i < 50 ? 10.0 : 13.0);
  NoiseReport drifting = AssessNoise(drift);
  EXPECT_TRUE(drifting.noisy);
  EXPECT_GT(drifting.batch_median_cv, 0.05);

  std::vector<double> spiky(100, 10.0);
  for (int i = 0; i < 10; ++i) spiky[i * 10] = 40.0;  // 10% of samples are spikes
  NoiseReport spikes = AssessNoise(spiky);
  EXPECT_EQ(spikes.spikes, 10u);
  EXPECT_TRUE(spikes.noisy);
  EXPECT_NE(spikes.Describe().find("10 spike(s), noisy"), std::string::npos);
}

}  // namespace
}  // namespace latte
