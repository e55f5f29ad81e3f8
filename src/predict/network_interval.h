#pragma once
// The interval around a model's predicted total, calibrated on whole networks the pack never saw.
// Summing each kernel's spread treats every error as the same bias and gives intervals of ±30%
// and more; guessing independence would be too narrow. Instead, calibration's random networks
// (profile/graph_context: run whole, each layer's kernel alone right after; those kernels are not
// among the pack's measurements) are predicted by the finished pack exactly as a user's model is,
// and the spread of predicted / measured over them is the interval: the 5% and 95% quantiles
// bound 90% of networks. A model whose kernels the pack measured exactly (table hits) is held to
// the same networks predicted from their measured layer times instead, and a model with some of
// each to the mix by time.

#include <cstddef>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "predict/context_model.h"

namespace latte {

class Pack;

struct NetworkInterval {
  std::size_t networks = 0;  // networks calibrated on
  std::size_t skipped = 0;   // networks with a layer the pack has no prediction for (not used)
  /// 5% and 95% quantiles of predicted / measured total over the networks, the layers predicted
  /// by the pack's predictors (a model it never saw).
  double predicted_lo = 1, predicted_hi = 1;
  /// The same with each layer's measured time alone (a model whose every kernel is a table hit).
  double measured_lo = 1, measured_hi = 1;

  /// The interval around `total_ms`, of which `table_share` (0–1) of the kernels' time came from
  /// exact measurements: [total / hi, total / lo] with lo and hi mixed by that share.
  std::pair<double, double> Around(double total_ms, double table_share) const;

  nlohmann::json ToJson() const;
  /// Fails naming the field that is missing or impossible (ratios finite, > 0, lo ≤ hi).
  static Expected<NetworkInterval> FromJson(const nlohmann::json& json);
  bool operator==(const NetworkInterval& other) const = default;
};

/// The quantiles bounding kIntervalLevel of the networks (5% and 95%).
inline constexpr double kIntervalLowQuantile = 0.05, kIntervalHighQuantile = 0.95;
/// With fewer networks the 5% and 95% quantiles are little more than the extremes: no calibration.
inline constexpr std::size_t kMinIntervalNetworks = 20;

/// Each layer of `network` predicted alone by `pack`; nullopt when the pack cannot predict one.
std::optional<std::vector<double>> PredictLayersAloneMs(const Pack& pack, const MeasuredNetwork& network);
/// The network's total as PredictModel makes it from its layers' times alone (`alone_ms`, one per
/// layer): their sum plus `context`'s extra on each (none when null).
double NetworkTotalMs(const MeasuredNetwork& network, const std::vector<double>& alone_ms, const ContextModel* context);

/// Predicts each network with `pack`'s kernels plus `context` (the pack's context model for the
/// networks' family, or none) and calibrates the interval on predicted / measured.
/// kInvalidInput, saying why, with fewer than kMinIntervalNetworks networks the pack can predict.
Expected<NetworkInterval> CalibrateNetworkInterval(const Pack& pack, const ContextModel* context,
                                                   const std::vector<MeasuredNetwork>& networks);

}  // namespace latte
