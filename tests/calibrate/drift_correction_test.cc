#include "calibrate/drift_correction.h"

#include <gtest/gtest.h>

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
