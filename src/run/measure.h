#pragma once
// The measurement protocol of DESIGN.md: warm up (≥ warmup_runs and ≥ min_warmup_secs), then
// time until ≥ num_runs and ≥ min_secs; summarize robustly; re-measure when the run was noisy
// or the rest of the host took cores the run needed (see host_load.h).

#include <functional>
#include <vector>

#include "core/stats.h"
#include "core/status.h"
#include "run/host_load.h"

namespace latte {

struct MeasureOptions {
  int warmup_runs = 1;
  double min_warmup_secs = 0.05;
  int num_runs = 50;
  double min_secs = 1.0;
  double max_secs = 150.0;  // a hard stop for very slow runs: fewer samples, said in the result
  int max_remeasures = 2;   // extra attempts when the noise verdict says noisy, or the host was busy
  int threads = 1;          // threads the measured work runs on (how many cores it needs)
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
  HostLoad host;                   // what other processes used while the kept attempt ran
  bool contended = false;          // ... more than the cores the run left free (see Contended)
  bool hit_time_limit = false;     // stopped by max_secs before num_runs
};

/// Calls `run` under the protocol. The first failing call's Status is returned.
Expected<Measurement> Measure(const std::function<Status()>& run, const MeasureOptions& options);

}  // namespace latte
