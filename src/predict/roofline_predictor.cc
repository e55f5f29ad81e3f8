#include <algorithm>
#include <cmath>

#include "predict/predictors.h"

namespace latte {

double RooflinePredictor::IdealMs(const Kernel& kernel) const {
  KernelCost cost = ComputeKernelCost(kernel);
  double compute_ms = peak_gflops_ > 0 ? 2 * cost.macs * ChannelTileFactor(kernel, channel_tile_) / (peak_gflops_ * 1e6) : 0;
  double memory_ms = bandwidth_gbs_ > 0 ? cost.Bytes() / (bandwidth_gbs_ * 1e6) : 0;
  return std::max(compute_ms, memory_ms);
}

Status RooflinePredictor::Fit(std::span<const TrainingSample> samples) {
  if (samples.empty()) return InvalidInput("roofline: no samples to fit");
  // Without a device figure, the best rate any sample reaches stands in for the peak.
  double best_gflops = 0, best_gbs = 0;
  for (const TrainingSample& s : samples) {
    if (!(s.p50_ms > 0)) return InvalidInput("roofline: sample " + s.kernel.Key() + " has latency <= 0");
    KernelCost cost = ComputeKernelCost(s.kernel);
    best_gflops = std::max(best_gflops, 2 * cost.macs * ChannelTileFactor(s.kernel, channel_tile_) / (s.p50_ms * 1e6));
    best_gbs = std::max(best_gbs, cost.Bytes() / (s.p50_ms * 1e6));
  }
  if (peak_gflops_ <= 0) peak_gflops_ = best_gflops;
  if (bandwidth_gbs_ <= 0) bandwidth_gbs_ = best_gbs;
  if (peak_gflops_ <= 0 && bandwidth_gbs_ <= 0)
    return Unsupported("roofline: kind " + samples.front().kernel.Kind() + " has no cost model (no MACs, no bytes)");
  // Least squares on relative error of t = overhead + a * ideal: rows (1/t, ideal/t) -> 1.
  double s11 = 0, s12 = 0, s22 = 0, b1 = 0, b2 = 0;
  std::vector<double> ratios;
  for (const TrainingSample& s : samples) {
    double x = IdealMs(s.kernel), t = s.p50_ms;
    double r1 = 1 / t, r2 = x / t;
    s11 += r1 * r1;
    s12 += r1 * r2;
    s22 += r2 * r2;
    b1 += r1;
    b2 += r2;
    if (x > 0) ratios.push_back(std::log(t / x));
  }
  double det = s11 * s22 - s12 * s12;
  double overhead = det != 0 ? (b1 * s22 - b2 * s12) / det : -1;
  double a = det != 0 ? (s11 * b2 - s12 * b1) / det : -1;
  if (overhead >= 0 && a > 0) {
    overhead_ms_ = overhead;
    efficiency_ = 1 / a;
  } else if (!ratios.empty()) {  // fall back to a pure scale: the geometric median ratio
    std::nth_element(ratios.begin(), ratios.begin() + ratios.size() / 2, ratios.end());
    overhead_ms_ = 0;
    efficiency_ = std::exp(-ratios[ratios.size() / 2]);
  } else {
    return Unsupported("roofline: no sample of kind " + samples.front().kernel.Kind() + " has a cost");
  }
  return Status::Ok();
}

Expected<Prediction> RooflinePredictor::Predict(const Kernel& kernel, int threads) const {
  double ideal = IdealMs(kernel);
  if (!(ideal > 0)) return Unsupported("roofline: no cost model for kernel " + kernel.Key());
  double ms = overhead_ms_ + ideal / efficiency_;
  return Prediction{ms, ms * relative_spread_, PredictionSource::kRoofline, false};
}

nlohmann::json RooflinePredictor::ToJson() const {
  return {{"peak_gflops", peak_gflops_}, {"bandwidth_gbs", bandwidth_gbs_}, {"overhead_ms", overhead_ms_},
          {"efficiency", efficiency_},   {"relative_spread", relative_spread_}, {"channel_tile", channel_tile_}};
}

Status RooflinePredictor::FromJson(const nlohmann::json& json) {
  for (const char* field : {"peak_gflops", "bandwidth_gbs", "overhead_ms", "efficiency", "relative_spread"}) {
    auto value = JsonNumber(json, field);
    if (!value.ok()) return value.status().WithContext("roofline");
  }
  peak_gflops_ = json["peak_gflops"].get<double>();
  bandwidth_gbs_ = json["bandwidth_gbs"].get<double>();
  overhead_ms_ = json["overhead_ms"].get<double>();
  efficiency_ = json["efficiency"].get<double>();
  relative_spread_ = json["relative_spread"].get<double>();
  Expected<int> tile = JsonChannelTile(json);
  if (!tile.ok()) return tile.status().WithContext("roofline");
  channel_tile_ = *tile;
  if (!(efficiency_ > 0) || !(peak_gflops_ > 0) || !(bandwidth_gbs_ > 0))
    return InvalidInput("roofline: efficiency, peak_gflops and bandwidth_gbs must be > 0");
  if (overhead_ms_ < 0 || relative_spread_ < 0) return InvalidInput("roofline: overhead_ms and relative_spread must be ≥ 0");
  return Status::Ok();
}

}  // namespace latte
