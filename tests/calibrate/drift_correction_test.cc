#include "calibrate/drift_correction.h"

#include <gtest/gtest.h>

#include <cmath>

namespace latte {
namespace {

TEST(ParseUtcTime, ReadsTheTimesLatteStores) {
  EXPECT_EQ(ParseUtcTime("1970-01-01T00:00:00Z"), 0.0);
  EXPECT_EQ(ParseUtcTime("1970-01-02T00:00:01Z"), 86401.0);
  EXPECT_NEAR(*ParseUtcTime("2026-11-23T10:05:58.785Z") - *ParseUtcTime("2026-11-23T10:05:00Z"), 58.785, 1e-6);
  EXPECT_EQ(*ParseUtcTime("2026-03-01T00:00:00Z") - *ParseUtcTime("2026-02-28T00:00:00Z"), 86400.0);
  EXPECT_EQ(ParseUtcTime("2026-11-23T10:05:58"), ParseUtcTime("2026-11-23T10:05:58Z"));
  for (const char* bad : {"", "yesterday", "2026-11-23", "2026-13-01T00:00:00Z", "2026-11-23T25:00:00Z",
                          "2026-11-23T10:05:58+01:00", "2026-11-23T10:05:nanZ"}) {
    EXPECT_FALSE(ParseUtcTime(bad).has_value()) << bad;
  }
}

TEST(ReferenceLevels, InterpolatesBetweenACampaignsReadingsAndHoldsTheNearestOutside) {
  ReferenceLevels levels;
  // Added out of order; campaign 2 reads a slower machine.
  EXPECT_TRUE(levels.Add(1, "2026-11-23T10:10:00Z", 80));
  EXPECT_TRUE(levels.Add(1, "2026-11-23T10:00:00Z", 70));
  EXPECT_TRUE(levels.Add(2, "2026-11-23T10:05:00Z", 100));
  EXPECT_FALSE(levels.Add(1, "not a time", 75));
  EXPECT_FALSE(levels.Add(1, "2026-11-23T10:05:00Z", 0));
  EXPECT_EQ(levels.At(1, "2026-11-23T10:00:00Z"), 70.0);
  EXPECT_EQ(levels.At(1, "2026-11-23T10:05:00Z"), 75.0);
  EXPECT_EQ(levels.At(1, "2026-11-23T10:07:30Z"), 77.5);
  EXPECT_EQ(levels.At(1, "2026-11-23T09:00:00Z"), 70.0);  // before the first reading
  EXPECT_EQ(levels.At(1, "2026-11-23T11:00:00Z"), 80.0);  // after the last
  EXPECT_EQ(levels.At(2, "2026-11-23T10:05:00Z"), 100.0);  // its own campaign's readings only
  EXPECT_FALSE(levels.At(3, "2026-11-23T10:05:00Z").has_value());
  EXPECT_FALSE(levels.At(1, "").has_value());
}

TEST(ReferenceLevels, TwoReadingsAtOneTimeAreAveraged) {
  ReferenceLevels levels;
  levels.Add(1, "2026-11-23T10:00:00Z", 60);
  levels.Add(1, "2026-11-23T10:00:00Z", 80);
  levels.Add(1, "2026-11-23T10:00:10Z", 90);
  EXPECT_EQ(levels.At(1, "2026-11-23T10:00:00Z"), 70.0);
  EXPECT_EQ(levels.At(1, "2026-11-23T10:00:05Z"), 80.0);  // halfway from their mean to the next
}

// A kernel of the random networks: one relu per channel count, so each has its own key.
StoredGraphLayer Layer(std::int64_t channels, std::int64_t campaign, int network, const std::string& time, double alone_us) {
  StoredGraphLayer layer;
  layer.campaign = campaign;
  layer.record.graph = "random-net " + std::to_string(network);
  layer.record.kernel.op = OpKind::kRelu;
  layer.record.kernel.params = {{"n", 1}, {"h", 8}, {"w", 8}, {"c", channels}};
  layer.record.alone_us = alone_us;
  layer.record.time = time;
  return layer;
}

TEST(EstimateDriftFollow, IsTheSlopeOfTheRepeatedKernelsOnTheReferencesLevel) {
  ReferenceLevels levels;
  // Four networks a minute apart; the reference reads 100, 120, 90 and 110 µs beside them.
  const std::vector<double> reference = {100, 120, 90, 110};
  std::vector<std::string> times;
  for (int i = 0; i < 4; ++i) {
    times.push_back("2026-11-23T10:0" + std::to_string(i) + ":00Z");
    levels.Add(1, times.back(), reference[i]);
  }
  // Ten kernels of 60–510 µs in each network, each moving by half the reference's change.
  std::vector<StoredGraphLayer> layers;
  for (int i = 0; i < 4; ++i) {
    for (int k = 0; k < 10; ++k) layers.push_back(Layer(8 + k, 1, i, times[i], (60 + 50 * k) * std::sqrt(reference[i] / 100)));
    layers.push_back(layers.back());  // twice in one network: one measurement alone
    // A 5 µs kernel moving every which way: below kMinFollowUs, left out.
    layers.push_back(Layer(100, 1, i, times[i], i % 2 ? 2 : 9));
  }
  std::optional<DriftFollow> follow = EstimateDriftFollow(levels, layers);
  ASSERT_TRUE(follow.has_value());
  EXPECT_NEAR(follow->slope, 0.5, 1e-9);
  EXPECT_NEAR(follow->correlation, 1.0, 1e-9);
  EXPECT_EQ(follow->measurements, 40u);
  EXPECT_EQ(follow->kernels, 10u);
  // The RMS of the level's log deviations (the same four for every kernel), and half of it alone.
  double mean = 0, squares = 0;
  for (double r : reference) mean += std::log(r) / 4;
  for (double r : reference) squares += (std::log(r) - mean) * (std::log(r) - mean);
  EXPECT_NEAR(follow->level_rms, std::sqrt(squares / 4), 1e-12);
  EXPECT_NEAR(follow->kernel_rms, std::sqrt(squares / 4) / 2, 1e-12);
  // The same kernels while the reference read 100 µs throughout: nothing to estimate from (the
  // level's deviations would be rounding), so no estimate; measured, the level did not move.
  ReferenceLevels flat;
  for (const std::string& time : times) flat.Add(1, time, 100);
  EXPECT_FALSE(EstimateDriftFollow(flat, layers).has_value());
  const DriftFollow still = MeasureDriftFollow(flat, layers);
  EXPECT_EQ(still.measurements, 40u);
  EXPECT_EQ(still.level_rms, 0);
  EXPECT_NEAR(still.kernel_rms, std::sqrt(squares / 4) / 2, 1e-12);
  EXPECT_EQ(still.slope, 1);
  EXPECT_EQ(still.correlation, 0);
  // Fewer than 30 such measurements: no estimate (measured: the eight kernels in both networks).
  layers.resize(20);
  EXPECT_FALSE(EstimateDriftFollow(levels, layers).has_value());
  EXPECT_EQ(MeasureDriftFollow(levels, layers).measurements, 16u);
  EXPECT_FALSE(EstimateDriftFollow(levels, {}).has_value());
  EXPECT_EQ(MeasureDriftFollow(levels, {}).measurements, 0u);
}

TEST(DriftCorrector, AppliesAsMuchOfTheReferencesChangeAsTheKernelsFollow) {
  ReferenceLevels levels;
  levels.Add(1, "2026-11-23T10:00:00Z", 80);
  DriftFollow half;
  half.slope = 0.5;
  half.measurements = 40;
  half.kernels = 10;
  half.correlation = 0.6;
  DriftCorrector corrector(levels, 125, true, half);
  EXPECT_DOUBLE_EQ(corrector.Factor(1, "2026-11-23T10:00:00Z"), 1.25);  // (125 / 80)^0.5
  EXPECT_EQ(corrector.Finish().Describe(),
            "drift-corrected 1 of 1 measurements to the reference's 125.00 µs (factors 1.250–1.250, median 1.250); by "
            "0.50 of the reference's changes (the slope of 40 measurements of 10 kernels measured alone in more than one "
            "network on its level, correlation 0.60)");
  // A slope past 1 corrects in full, a negative one not at all.
  DriftFollow steep = half, against = half;
  steep.slope = 1.7;
  against.slope = -0.3;
  EXPECT_DOUBLE_EQ(DriftCorrector(levels, 100, true, steep).Factor(1, "2026-11-23T10:00:00Z"), 1.25);
  EXPECT_DOUBLE_EQ(DriftCorrector(levels, 100, true, against).Factor(1, "2026-11-23T10:00:00Z"), 1.0);
}

TEST(DriftCorrector, ScalesToTheLevelAndCountsWhatItCouldNot) {
  ReferenceLevels levels;
  levels.Add(1, "2026-11-23T10:00:00Z", 80);
  levels.Add(2, "2026-11-23T12:00:00Z", 125);
  DriftCorrector corrector(levels, 100);
  EXPECT_DOUBLE_EQ(corrector.Factor(1, "2026-11-23T10:00:00Z"), 1.25);  // a faster machine: times scaled up
  EXPECT_DOUBLE_EQ(corrector.Factor(2, "2026-11-23T12:00:00Z"), 0.8);
  EXPECT_DOUBLE_EQ(corrector.Factor(2, "2026-11-23T13:00:00Z"), 0.8);
  EXPECT_EQ(corrector.Factor(std::nullopt, "2026-11-23T10:00:00Z"), 1.0);  // an imported table
  EXPECT_EQ(corrector.Factor(3, "2026-11-23T10:00:00Z"), 1.0);             // a campaign without readings
  const DriftCorrection summary = corrector.Finish();
  EXPECT_EQ(summary.corrected, 3u);
  EXPECT_EQ(summary.uncorrected, 2u);
  EXPECT_DOUBLE_EQ(summary.min_factor, 0.8);
  EXPECT_DOUBLE_EQ(summary.median_factor, 0.8);
  EXPECT_DOUBLE_EQ(summary.max_factor, 1.25);
  EXPECT_EQ(summary.Describe(),
            "drift-corrected 3 of 5 measurements to the reference's 100.00 µs (factors 0.800–1.250, median 0.800); "
            "2 left as measured (no reading of the reference taken with them)");
}

TEST(DriftCorrector, AskedNotToCorrectLeavesEveryMeasurementAsItIs) {
  ReferenceLevels levels;
  levels.Add(1, "2026-11-23T10:00:00Z", 80);
  DriftCorrector corrector(levels, 100, /*requested=*/false);
  EXPECT_EQ(corrector.Factor(1, "2026-11-23T10:00:00Z"), 1.0);
  EXPECT_EQ(corrector.Finish().corrected, 0u);
  EXPECT_EQ(corrector.Finish().Describe(), "not drift-corrected: fitted on the measurements as stored");
  const ReferenceLevels none;
  DriftCorrector without_readings(none, 0);
  without_readings.Factor(std::nullopt, "");
  EXPECT_EQ(without_readings.Finish().Describe(),
            "not drift-corrected: no reading of the drift reference was taken with these measurements");
}

}  // namespace
}  // namespace latte
