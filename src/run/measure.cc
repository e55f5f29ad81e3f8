#include "run/measure.h"

#include <chrono>
#include <cmath>
#include <string>

namespace latte {

namespace {
using Clock = std::chrono::steady_clock;
double Micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }
}  // namespace

Status MeasureOptions::Validate() const {
  if (warmup_runs < 0) return InvalidInput("--warmup-runs must be ≥ 0");
  if (num_runs < 1) return InvalidInput("--num-runs must be ≥ 1");
  if (min_secs < 0 || min_warmup_secs < 0) return InvalidInput("--min-secs must be ≥ 0");
  if (!(max_secs > 0) || !std::isfinite(max_secs)) return InvalidInput("the time limit must be positive and finite");
  if (!std::isfinite(min_secs) || min_secs > max_secs || !std::isfinite(min_warmup_secs))
    return InvalidInput("--min-secs must be at most the time limit of a timed pass, " + std::to_string(max_secs) + " s");
  return Status::Ok();
}

Expected<Measurement> Measure(const std::function<Status()>& run, const MeasureOptions& options) {
  LATTE_RETURN_IF_ERROR(options.Validate());
  Measurement m;
  auto timed = [&](double& us) -> Status {
    const auto start = Clock::now();
    Status s = run();
    us = Micros(Clock::now() - start);
    return s;
  };
  LATTE_RETURN_IF_ERROR(timed(m.first_us));

  const auto warm_start = Clock::now();
  double warm_total = 0;
  while (m.warmup_count < options.warmup_runs || Micros(Clock::now() - warm_start) < 1e6 * options.min_warmup_secs) {
    double us = 0;
    LATTE_RETURN_IF_ERROR(timed(us));
    warm_total += us;
    ++m.warmup_count;
    if (Micros(Clock::now() - warm_start) > 1e6 * options.max_secs) break;
  }
  m.warmup_avg_us = m.warmup_count > 0 ? warm_total / m.warmup_count : 0;

  for (int attempt = 0; attempt <= options.max_remeasures; ++attempt) {
    std::vector<double> samples;
    bool hit_limit = false;
    const CpuClock clock_before = ReadCpuClock();
    const auto start = Clock::now();
    while (static_cast<int>(samples.size()) < options.num_runs || Micros(Clock::now() - start) < 1e6 * options.min_secs) {
      double us = 0;
      LATTE_RETURN_IF_ERROR(timed(us));
      samples.push_back(us);
      if (Micros(Clock::now() - start) > 1e6 * options.max_secs) {
        hit_limit = static_cast<int>(samples.size()) < options.num_runs;
        break;
      }
    }
    const HostLoad host = LoadBetween(clock_before, ReadCpuClock());
    const bool contended = Contended(host, options.threads);
    NoiseReport noise = AssessNoise(samples);
    // Keep the better attempt: one with the cores it needed over one without, then the quieter
    // (a re-measurement that is noisier does not replace a calmer one).
    if (attempt == 0 || (m.contended && !contended) ||
        (m.contended == contended && noise.batch_median_cv < m.noise.batch_median_cv)) {
      m.samples_us = std::move(samples);
      m.noise = noise;
      m.hit_time_limit = hit_limit;
      m.host = host;
      m.contended = contended;
    }
    m.attempts = attempt + 1;
    if ((!m.noise.noisy && !m.contended) || hit_limit) break;
  }
  m.stats = Summarize(m.samples_us);
  return m;
}

}  // namespace latte
