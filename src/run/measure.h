#pragma once
// The measurement protocol of DESIGN.md: warm up (≥ warmup_runs and ≥ min_warmup_secs), then
// time until ≥ num_runs and ≥ min_secs; summarize robustly; re-measure when the run was noisy.

#include <functional>
#include <vector>

#include "core/stats.h"
#include "core/status.h"

namespace latte {

struct MeasureOptions {
  int warmup_runs = 1;
  double min_warmup_secs = 0.05;
  int num_runs = 50;
  double min_secs = 1.0;
  double max_secs = 150.0;  // a hard stop for very slow runs: fewer samples, said in the result
  int max_remeasures = 2;   // extra attempts when the noise verdict says noisy
  Status Validate() const;
};

struct Measurement {
  double first_us = 0;            // the very first call (cold caches, lazy init)
  int warmup_count = 0;
  double warmup_avg_us = 0;
  std::vector<double> samples_us;  // the kept attempt's timed runs
  Stats stats;                     // of samples_us
  NoiseReport noise;               // of the kept attempt
  int attempts = 1;                // 1 + re-measurements
  bool hit_time_limit = false;     // stopped by max_secs before num_runs
};

/// Calls `run` under the protocol. The first failing call's Status is returned.
Expected<Measurement> Measure(const std::function<Status()>& run, const MeasureOptions& options);

}  // namespace latte
