#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/kernel_graph.h"
#include "predict/predictors.h"

namespace latte {
namespace {

// Sizes past which a kernel's bytes may come from farther away (the fit picks one): from a core's
// L2 to beyond a last-level cache.
constexpr double kCacheCandidates[] = {256.0 * 1024, 1024.0 * 1024, 4.0 * 1024 * 1024, 16.0 * 1024 * 1024,
                                       64.0 * 1024 * 1024};
constexpr int kTerms = TrafficPredictor::kTerms;
using Row = std::array<double, kTerms>;

// Least squares of rows·c ≈ 1 over the terms in `mask` (the others held at 0), columns scaled to
// 1 for conditioning. False when the system is singular.
bool SolveSubset(const std::vector<Row>& rows, unsigned mask, Row& c) {
  std::vector<int> cols;
  for (int j = 0; j < kTerms; ++j)
    if (mask & (1u << j)) cols.push_back(j);
  const std::size_t k = cols.size();
  if (rows.size() < k) return false;
  std::vector<double> scale(k, 0.0);
  for (const Row& r : rows)
    for (std::size_t a = 0; a < k; ++a) scale[a] = std::max(scale[a], std::abs(r[cols[a]]));
  for (double s : scale)
    if (!(s > 0)) return false;
  // Normal equations [A | b], k × (k + 1).
  std::vector<std::vector<double>> m(k, std::vector<double>(k + 1, 0.0));
  for (const Row& r : rows) {
    for (std::size_t a = 0; a < k; ++a) {
      const double xa = r[cols[a]] / scale[a];
      for (std::size_t b = 0; b < k; ++b) m[a][b] += xa * r[cols[b]] / scale[b];
      m[a][k] += xa;
    }
  }
  for (std::size_t p = 0; p < k; ++p) {
    std::size_t pivot = p;
    for (std::size_t i = p + 1; i < k; ++i)
      if (std::abs(m[i][p]) > std::abs(m[pivot][p])) pivot = i;
    if (!(std::abs(m[pivot][p]) > 1e-12 * static_cast<double>(rows.size()))) return false;
    std::swap(m[p], m[pivot]);
    for (std::size_t i = 0; i < k; ++i) {
      if (i == p) continue;
      const double f = m[i][p] / m[p][p];
      for (std::size_t j = p; j <= k; ++j) m[i][j] -= f * m[p][j];
    }
  }
  c.fill(0.0);
  for (std::size_t a = 0; a < k; ++a) c[cols[a]] = m[a][k] / m[a][a] / scale[a];
  return true;
}

}  // namespace

std::array<double, TrafficPredictor::kTerms> TrafficPredictor::Terms(const KernelCost& cost) const {
  const double bytes = cost.Bytes();
  return {1.0, bytes, std::max(0.0, cost.runs - 1), std::max(0.0, bytes - cache_bytes_)};
}

KernelCost TrafficPredictor::CostOf(const Kernel& kernel) const {
  return ComputeKernelCost(nchw_tensors_ ? WithNchwTensors(kernel) : kernel);
}

Status TrafficPredictor::Fit(std::span<const TrainingSample> samples) {
  if (samples.empty()) return InvalidInput("traffic: no samples to fit");
  std::vector<KernelCost> costs;
  std::vector<double> ms;
  min_bytes_ = std::numeric_limits<double>::infinity();
  max_bytes_ = 0;
  for (const TrainingSample& s : samples) {
    if (!(s.p50_ms > 0)) return InvalidInput("traffic: sample " + s.kernel.Key() + " has latency <= 0");
    costs.push_back(CostOf(s.kernel));
    ms.push_back(s.p50_ms);
    min_bytes_ = std::min(min_bytes_, costs.back().Bytes());
    max_bytes_ = std::max(max_bytes_, costs.back().Bytes());
  }
  if (!(max_bytes_ > 0))
    return Unsupported("traffic: kind " + samples.front().kernel.Kind() + " moves no bytes by its cost model");
  // Every subset of terms at every cache size; the best fit whose coefficients are all ≥ 0.
  double best = std::numeric_limits<double>::infinity(), best_cache = kCacheCandidates[0];
  for (double cache : kCacheCandidates) {
    cache_bytes_ = cache;
    std::vector<Row> rows;
    for (std::size_t i = 0; i < costs.size(); ++i) {
      Row r = Terms(costs[i]);
      for (double& x : r) x /= ms[i];  // relative error: each row scaled by its own time
      rows.push_back(r);
    }
    for (unsigned mask = 1; mask < (1u << kTerms); ++mask) {
      Row c;
      if (!SolveSubset(rows, mask, c)) continue;
      if (std::any_of(c.begin(), c.end(), [](double v) { return v < 0 || !std::isfinite(v); })) continue;
      double sse = 0;
      for (const Row& r : rows) {
        double fit = 0;
        for (int j = 0; j < kTerms; ++j) fit += r[j] * c[j];
        sse += (fit - 1) * (fit - 1);
      }
      // Ties (a far term at zero fits alike at every size) keep the first, smallest cache.
      if (sse < best * (1 - 1e-12)) {
        best = sse;
        coefficients_ = c;
        best_cache = cache;
      }
    }
  }
  cache_bytes_ = best_cache;
  if (!std::isfinite(best)) return Unsupported("traffic: no fit with non-negative costs for kind " + samples.front().kernel.Kind());
  return Status::Ok();
}

Expected<Prediction> TrafficPredictor::Predict(const Kernel& kernel, int /*threads*/) const {
  const KernelCost cost = CostOf(kernel);
  if (!(cost.Bytes() > 0)) return Unsupported("traffic: kernel " + kernel.Key() + " moves no bytes by its cost model");
  const Row terms = Terms(cost);
  double ms = 0;
  for (int j = 0; j < kTerms; ++j) ms += coefficients_[j] * terms[j];
  if (!(ms > 0)) return Unsupported("traffic: no cost fitted for kernel " + kernel.Key());
  const bool outside = cost.Bytes() < min_bytes_ || cost.Bytes() > max_bytes_;
  return Prediction{ms, ms * relative_spread_, PredictionSource::kTraffic, outside};
}

nlohmann::json TrafficPredictor::ToJson() const {
  return {{"fixed_ms", coefficients_[0]},     {"per_byte_ms", coefficients_[1]}, {"per_run_ms", coefficients_[2]},
          {"per_far_byte_ms", coefficients_[3]}, {"cache_bytes", cache_bytes_},     {"min_bytes", min_bytes_},
          {"max_bytes", max_bytes_},             {"relative_spread", relative_spread_},
          {"tensors", nchw_tensors_ ? "nchw" : "nhwc"}};
}

Status TrafficPredictor::FromJson(const nlohmann::json& json) {
  const char* fields[] = {"fixed_ms", "per_byte_ms", "per_run_ms", "per_far_byte_ms", "cache_bytes",
                          "min_bytes", "max_bytes", "relative_spread"};
  std::array<double, 8> v{};
  for (std::size_t i = 0; i < v.size(); ++i) {
    Expected<double> value = JsonNonNegative(json, fields[i]);
    if (!value.ok()) return value.status().WithContext("traffic");
    v[i] = *value;
  }
  coefficients_ = {v[0], v[1], v[2], v[3]};
  cache_bytes_ = v[4];
  min_bytes_ = v[5];
  max_bytes_ = v[6];
  relative_spread_ = v[7];
  const nlohmann::json tensors = json.value("tensors", nlohmann::json("nhwc"));  // packs before it: nhwc
  if (tensors != "nhwc" && tensors != "nchw")
    return InvalidInput("traffic: tensors is " + tensors.dump() + ", not \"nhwc\" or \"nchw\"");
  nchw_tensors_ = tensors == "nchw";
  if (std::all_of(coefficients_.begin(), coefficients_.end(), [](double c) { return c == 0; }))
    return InvalidInput("traffic: every cost is 0");
  return Status::Ok();
}

}  // namespace latte
