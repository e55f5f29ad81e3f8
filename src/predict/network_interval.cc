#include "predict/network_interval.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/stats.h"
#include "predict/pack.h"
#include "predict/predictor.h"

namespace latte {

std::pair<double, double> NetworkInterval::Around(double total_ms, double table_share) const {
  const double w = std::clamp(table_share, 0.0, 1.0);
  const double lo = w * measured_lo + (1 - w) * predicted_lo;
  const double hi = w * measured_hi + (1 - w) * predicted_hi;
  // predicted / measured ∈ [lo, hi] for 90% of networks ⇔ measured ∈ [total / hi, total / lo].
  return {total_ms / hi, total_ms / lo};
}

nlohmann::json NetworkInterval::ToJson() const {
  return {{"networks", networks},
          {"skipped", skipped},
          {"predicted", {{"lo", predicted_lo}, {"hi", predicted_hi}}},
          {"measured", {{"lo", measured_lo}, {"hi", measured_hi}}}};
}

Expected<NetworkInterval> NetworkInterval::FromJson(const nlohmann::json& json) {
  if (!json.is_object()) return InvalidInput("interval: not an object");
  NetworkInterval interval;
  auto count = [&](const char* field, std::size_t& into) -> Status {
    Expected<std::size_t> value = JsonCount(json, field);
    if (!value.ok()) return value.status().WithContext("interval");
    into = *value;
    return Status::Ok();
  };
  LATTE_RETURN_IF_ERROR(count("networks", interval.networks));
  LATTE_RETURN_IF_ERROR(count("skipped", interval.skipped));
  auto ratios = [&](const char* field, double& lo, double& hi) -> Status {
    const std::string where = std::string("interval: ") + field;
    if (!json.contains(field) || !json[field].is_object()) return InvalidInput(where + ": missing object");
    Expected<double> l = JsonNonNegative(json[field], "lo");
    Expected<double> h = JsonNonNegative(json[field], "hi");
    if (!l.ok()) return l.status().WithContext(where);
    if (!h.ok()) return h.status().WithContext(where);
    // A ratio of predicted to measured beyond 100× either way is no prediction: a damaged pack.
    if (!(*l >= 0.01 && *l <= *h && *h <= 100))
      return InvalidInput(fmt::format("{}: lo {} and hi {} must satisfy 0.01 ≤ lo ≤ hi ≤ 100", where, *l, *h));
    lo = *l;
    hi = *h;
    return Status::Ok();
  };
  LATTE_RETURN_IF_ERROR(ratios("predicted", interval.predicted_lo, interval.predicted_hi));
  LATTE_RETURN_IF_ERROR(ratios("measured", interval.measured_lo, interval.measured_hi));
  return interval;
}

std::optional<std::vector<double>> PredictLayersAloneMs(const Pack& pack, const MeasuredNetwork& network) {
  std::vector<double> alone;
  alone.reserve(network.kernels.size());
  for (const Kernel& kernel : network.kernels) {
    Expected<Prediction> p = pack.Predict(kernel);
    if (!p.ok()) return std::nullopt;
    alone.push_back(p->ms);
  }
  return alone;
}

double NetworkTotalMs(const MeasuredNetwork& network, const std::vector<double>& alone_ms, const ContextModel* context) {
  double sum = 0;
  for (double ms : alone_ms) sum += ms;
  if (context != nullptr) {
    for (double extra : context->ExtraMs(network.traffic, alone_ms, network.Ops())) sum += extra;
  }
  return sum;
}

Expected<NetworkInterval> CalibrateNetworkInterval(const Pack& pack, const ContextModel* context,
                                                   const std::vector<MeasuredNetwork>& networks) {
  NetworkInterval interval;
  std::vector<double> predicted_ratio, measured_ratio;
  for (const MeasuredNetwork& network : networks) {
    double measured = 0;
    for (double ms : network.in_graph_ms) measured += ms;
    const std::optional<std::vector<double>> predicted_alone = measured > 0 ? PredictLayersAloneMs(pack, network) : std::nullopt;
    if (!predicted_alone) {
      ++interval.skipped;
      continue;
    }
    predicted_ratio.push_back(NetworkTotalMs(network, *predicted_alone, context) / measured);
    measured_ratio.push_back(NetworkTotalMs(network, network.alone_ms, context) / measured);
  }
  interval.networks = predicted_ratio.size();
  if (interval.networks < kMinIntervalNetworks) {
    return InvalidInput(fmt::format("{} networks measured in context the pack can predict ({} cannot be); the interval "
                                    "needs {} to be calibrated",
                                    interval.networks, interval.skipped, kMinIntervalNetworks));
  }
  std::sort(predicted_ratio.begin(), predicted_ratio.end());
  std::sort(measured_ratio.begin(), measured_ratio.end());
  interval.predicted_lo = Percentile(predicted_ratio, kIntervalLowQuantile);
  interval.predicted_hi = Percentile(predicted_ratio, kIntervalHighQuantile);
  interval.measured_lo = Percentile(measured_ratio, kIntervalLowQuantile);
  interval.measured_hi = Percentile(measured_ratio, kIntervalHighQuantile);
  if (!(interval.predicted_lo >= 0.01 && interval.predicted_hi <= 100 && interval.measured_lo >= 0.01 &&
        interval.measured_hi <= 100)) {
    return InvalidInput(fmt::format("networks predicted at {:.3g}–{:.3g}× their measured time: beyond 100× either "
                                    "way, the measurements or the pack are wrong",
                                    interval.predicted_lo, interval.predicted_hi));
  }
  return interval;
}

}  // namespace latte
