// The validate view's interval verdicts: a model is inside its interval only when its prediction
// covers every node, and the intervals' median half-width is reported beside the share.
#include "report/validate_view.h"

#include <gtest/gtest.h>

namespace latte {
namespace {

ModelValidation Validated(std::string name, double predicted, double lo, double hi, double measured,
                          std::size_t uncovered_nodes) {
  ModelValidation m;
  m.model = std::move(name);
  m.predicted_ms = m.prediction.total_ms = predicted;
  m.prediction.interval_lo_ms = lo;
  m.prediction.interval_hi_ms = hi;
  m.prediction.uncovered_nodes = uncovered_nodes;
  m.prediction.covered_nodes = 10;
  m.prediction.total_nodes = 10 + uncovered_nodes;
  m.measured_ms = measured;
  m.error_pct = 100 * (predicted - measured) / measured;
  return m;
}

TEST(ValidateViewTest, AModelWithUncoveredNodesIsNeverInsideItsInterval) {
  Pack pack;
  pack.info.backend = "xnnpack";
  std::vector<ModelValidation> models = {
      Validated("complete.tflite", 2.0, 1.8, 2.2, 2.1, 0),     // inside, ±10%
      Validated("incomplete.tflite", 4.0, 3.0, 5.0, 4.2, 3),   // measured inside the numbers, nodes missing: outside
      Validated("outside.tflite", 1.0, 0.95, 1.05, 1.2, 0)};   // outside, ±5%
  ValidateView view(models, pack, "");
  EXPECT_NEAR(view.InsideIntervalPct(), 100.0 / 3, 1e-9);
  EXPECT_DOUBLE_EQ(view.MedianHalfIntervalPct(), 10.0);  // of 10, 25 and 5 (%)

  const nlohmann::json json = view.Json();
  ASSERT_EQ(json["models"].size(), 3u);
  EXPECT_TRUE(json["models"][0]["inside_interval"].get<bool>());
  EXPECT_TRUE(json["models"][0]["complete"].get<bool>());
  EXPECT_FALSE(json["models"][1]["inside_interval"].get<bool>());
  EXPECT_FALSE(json["models"][1]["complete"].get<bool>());
  EXPECT_FALSE(json["models"][2]["inside_interval"].get<bool>());
  EXPECT_DOUBLE_EQ(json["median_half_interval_pct"].get<double>(), 10.0);

  const std::string text = view.Text(false);
  EXPECT_NE(text.find("interval: 33.3% (median half-width ±10.0%; 1 with uncovered nodes counted outside)"),
            std::string::npos)
      << text;
}

// The reference ran 21% slower at validation than in the pack; the pack's measurements followed
// half of its changes (in log), so its kernels are expected 1.1× slower, not 1.21×.
TEST(ValidateViewTest, DriftIsScaledInFullAndByTheShareThePacksMeasurementsFollowed) {
  Pack pack;
  pack.info.backend = "ort";
  std::vector<ModelValidation> models = {Validated("a.tflite", 1.0, 0.9, 1.1, 1.1, 0),
                                         Validated("b.tflite", 2.0, 1.8, 2.2, 2.2, 0)};
  DriftCheck drift;
  drift.measured = true;
  drift.kernel = "conv2d|ic=32|float32";
  drift.pack_p50_us = 100;
  drift.now_p50_us = 121;
  drift.follow = 0.5;
  EXPECT_DOUBLE_EQ(drift.Ratio(), 1.21);
  EXPECT_NEAR(drift.FollowedRatio(), 1.1, 1e-12);
  ValidateView view(models, pack, "", drift);
  EXPECT_NEAR(view.DriftAdjustedMetrics(drift.Ratio()).rmspe_pct, 10.0, 1e-9);  // 1.21 / 1.1
  EXPECT_NEAR(view.DriftAdjustedMetrics(drift.FollowedRatio()).rmspe_pct, 0.0, 1e-9);
  const nlohmann::json json = view.Json()["drift"];
  EXPECT_DOUBLE_EQ(json["ratio"].get<double>(), 1.21);
  EXPECT_DOUBLE_EQ(json["follow"].get<double>(), 0.5);
  EXPECT_NEAR(json["followed_ratio"].get<double>(), 1.1, 1e-12);
  EXPECT_NEAR(json["follow_adjusted"]["rmspe_pct"].get<double>(), 0.0, 1e-9);
  EXPECT_NEAR(json["drift_adjusted"]["rmspe_pct"].get<double>(), 10.0, 1e-9);
  const std::string text = view.Text(false);
  EXPECT_NE(text.find("machine runs 21.0% slower now"), std::string::npos) << text;
  EXPECT_NE(text.find("scaled by 0.50 of it (the share of the reference's changes the pack's measurements followed, "
                      "1.100×)"),
            std::string::npos)
      << text;
  // A pack corrected in full: the one line, as before.
  drift.follow = 1;
  const std::string full = ValidateView(models, pack, "", drift).Text(false);
  EXPECT_NE(full.find("models, predictions scaled by that drift: "), std::string::npos) << full;
  EXPECT_EQ(full.find("of it (the share"), std::string::npos) << full;
}

}  // namespace
}  // namespace latte
