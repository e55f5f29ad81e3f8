#include "core/stats.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace latte {

double Percentile(std::span<const double> sorted, double q) {
  if (sorted.empty()) return 0;
  q = std::clamp(q, 0.0, 1.0);
  const double rank = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = rank - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return Percentile(values, 0.5);
}

Stats Summarize(std::span<const double> samples) {
  Stats s;
  s.n = samples.size();
  if (samples.empty()) return s;
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());
  s.p0 = sorted.front();
  s.p10 = Percentile(sorted, 0.10);
  s.p50 = Percentile(sorted, 0.50);
  s.p90 = Percentile(sorted, 0.90);
  s.p99 = Percentile(sorted, 0.99);
  s.p100 = sorted.back();
  double sum = 0;
  for (double v : sorted) sum += v;
  s.mean = sum / static_cast<double>(s.n);
  double sq = 0;
  for (double v : sorted) sq += (v - s.mean) * (v - s.mean);
  s.std = s.n > 1 ? std::sqrt(sq / static_cast<double>(s.n - 1)) : 0.0;  // sample standard deviation
  return s;
}

double RobustRelativeSd(std::span<const double> samples) {
  if (samples.size() < 5) return 0;
  if (std::any_of(samples.begin(), samples.end(), [](double v) { return !(v > 0); })) return 0;
  const Stats s = Summarize(samples);
  return std::log(s.p90 / s.p10) / kP10ToP90Sds;
}

NoiseReport AssessNoise(std::span<const double> samples, std::size_t batches, double max_cv, double spike_factor) {
  NoiseReport r;
  if (samples.empty()) return r;
  batches = std::clamp<std::size_t>(batches, 1, samples.size());
  std::vector<double> medians;
  for (std::size_t b = 0; b < batches; ++b) {
    const std::size_t begin = b * samples.size() / batches, end = (b + 1) * samples.size() / batches;
    std::vector<double> batch(samples.begin() + static_cast<std::ptrdiff_t>(begin),
                              samples.begin() + static_cast<std::ptrdiff_t>(end));
    std::sort(batch.begin(), batch.end());
    medians.push_back(Percentile(batch, 0.5));
  }
  Stats m = Summarize(medians);
  r.batch_median_cv = m.mean > 0 ? m.std / m.mean : 0.0;
  const double median = Summarize(samples).p50;
  for (double v : samples)
    if (v > spike_factor * median) ++r.spikes;
  r.noisy = r.batch_median_cv > max_cv || static_cast<double>(r.spikes) > 0.05 * static_cast<double>(samples.size());
  return r;
}

std::string NoiseReport::Describe() const {
  char buffer[128];
  std::snprintf(buffer, sizeof(buffer), "batch-median CV %.1f%%, %zu spike(s)%s", 100.0 * batch_median_cv, spikes,
                noisy ? ", noisy" : "");
  return buffer;
}

}  // namespace latte
