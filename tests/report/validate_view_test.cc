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

}  // namespace
}  // namespace latte
