#pragma once
// Robust statistics of repeated timings (the measurement protocol of DESIGN.md): percentiles,
// mean and spread, and a noise verdict from the spread of batch medians.

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace latte {

/// Summary of a set of samples (any unit; Latte uses microseconds).
struct Stats {
  std::size_t n = 0;
  double p0 = 0, p10 = 0, p50 = 0, p90 = 0, p99 = 0, p100 = 0;
  double mean = 0, std = 0;
};

/// Percentile by linear interpolation between closest ranks (q in [0, 1]); `sorted` ascending.
double Percentile(std::span<const double> sorted, double q);

/// The median of `values` (the mean of the middle two for an even count); 0 when empty.
double Median(std::vector<double> values);

/// Stats of `samples` (copied and sorted). Empty input gives n = 0 and zeros.
Stats Summarize(std::span<const double> samples);

/// How many standard deviations wide the 10th–90th percentile band of a normal spread is
/// (twice its 90th percentile, 1.2816): a p10–p90 range divided by it estimates one.
inline constexpr double kP10ToP90Sds = 2.563;

/// A robust relative standard deviation of positive readings: ln(p90 / p10) / kP10ToP90Sds, what
/// a log-normal spread with that 10th–90th percentile band has (one spike does not move it).
/// 0 for fewer than 5 readings or any reading ≤ 0 (too few to say).
double RobustRelativeSd(std::span<const double> samples);

/// How steady a run was: samples are cut into `batches` consecutive batches; the coefficient
/// of variation of the batch medians says whether the machine drifted during the run, and
/// spikes are samples above `spike_factor` × the overall median.
struct NoiseReport {
  double batch_median_cv = 0;  // std / mean of the batch medians
  std::size_t spikes = 0;
  bool noisy = false;          // batch_median_cv > max_cv, or spikes above 5% of samples
  std::string Describe() const;
};
NoiseReport AssessNoise(std::span<const double> samples, std::size_t batches = 5, double max_cv = 0.05,
                        double spike_factor = 1.5);

}  // namespace latte
