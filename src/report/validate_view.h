#pragma once
// The `latte validate` view: predicted vs measured per model (and per kernel), the share within
// ±5% and ±10%, RMSPE; text, JSON, an SVG scatter of predicted against measured, and an HTML page.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calibrate/validation.h"
#include "db/run_history.h"

namespace latte {

class ValidateView {
 public:
  ValidateView(const std::vector<ModelValidation>& models, const Pack& pack, std::string machine_note,
               DriftCheck drift = {});
  /// `per_layer`: also one table of kernels per model.
  std::string Text(bool per_layer) const;
  nlohmann::json Json() const;
  /// Each model's figures as Json() prints them, as the store keeps a run (db/run_history.h).
  std::vector<ValidationRecord> Records() const;
  /// Models (and kernels, lighter) as points: predicted (y) against measured (x), log axes.
  std::string Svg() const;
  /// A self-contained HTML page: the models predicted against measured, and for each (picked from
  /// a list) its graph coloured by layer time and its layers predicted beside measured.
  /// `user_graphs[i]` is model i as imported.
  std::string Html(const std::vector<Graph>& user_graphs) const;

  AccuracyMetrics ModelMetrics() const;
  AccuracyMetrics LayerMetrics() const;
  /// Models with each prediction scaled by `factor`: the drift ratio (what the pack would say of
  /// the machine as fast as it is now, were every kernel to move as the reference does) or its
  /// followed share (DriftCheck::FollowedRatio).
  AccuracyMetrics DriftAdjustedMetrics(double factor) const;
  /// The share of models (%) whose measured time lies inside their predicted interval: what
  /// says whether the intervals are as wide as they claim (kIntervalLevel). A model with nodes
  /// the prediction does not cover is never inside (its total lacks them).
  double InsideIntervalPct() const;
  /// The median over models of the interval's half-width, in % of the prediction: how much the
  /// intervals say (a 100% inside share means little at ±50%).
  double MedianHalfIntervalPct() const;

 private:
  const std::vector<ModelValidation>& models_;
  const Pack& pack_;
  std::string machine_note_;
  DriftCheck drift_;
};

}  // namespace latte
