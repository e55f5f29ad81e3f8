// Does drift correction make a store's measurements agree? Kernels measured more than once (in
// campaigns hours apart) should read the same time; the host's drift makes them differ. For every
// such kernel, each measurement's log deviation from the kernel's mean, as stored and as
// calibrate/drift_correction scales it (the fit's own correction): RMS and the share within ±2%.
// Reads the store only; no timing. Usage: repeat_agreement DB [BACKEND=xnnpack]
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "db/store.h"
#include "calibrate/drift_correction.h"

using namespace latte;

namespace {

struct Agreement {
  double rms_pct = 0, within2_pct = 0;
  std::size_t kernels = 0, measurements = 0;
};

// `p50s` by kernel key: every deviation from its kernel's mean log.
Agreement Measure(const std::map<std::string, std::vector<double>>& p50s) {
  Agreement a;
  double sum2 = 0;
  std::size_t within = 0;
  for (const auto& [key, values] : p50s) {
    if (values.size() < 2) continue;
    ++a.kernels;
    double mean = 0;
    for (double v : values) mean += std::log(v) / static_cast<double>(values.size());
    for (double v : values) {
      const double d = std::log(v) - mean;
      sum2 += d * d;
      within += std::abs(d) < std::log(1.02) ? 1 : 0;
      ++a.measurements;
    }
  }
  if (a.measurements > 0) {
    a.rms_pct = 100 * std::sqrt(sum2 / static_cast<double>(a.measurements));
    a.within2_pct = 100.0 * static_cast<double>(within) / static_cast<double>(a.measurements);
  }
  return a;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: repeat_agreement DB [BACKEND]\n");
    return 2;
  }
  auto store = Store::OpenReadOnly(argv[1]);
  if (!store.ok()) {
    std::fprintf(stderr, "error: %s\n", store.status().message().c_str());
    return 2;
  }
  MeasurementFilter filter;
  filter.backend = argc > 2 ? argv[2] : "xnnpack";
  auto rows = store->QueryMeasurements(filter);
  if (!rows.ok()) {
    std::fprintf(stderr, "error: %s\n", rows.status().message().c_str());
    return 2;
  }
  // The readings and level as FitFromStore takes them.
  auto reference = ReadCampaignReference(*store, *rows);
  if (!reference.ok()) {
    std::fprintf(stderr, "error: %s\n", reference.status().message().c_str());
    return 2;
  }
  DriftCorrector corrector(reference->levels, reference->LevelUs());
  std::map<std::string, std::vector<double>> stored, corrected;
  for (const StoredMeasurement& m : *rows) {
    if (!(m.stats.p50 > 0)) continue;
    const std::string key = m.kernel.Key();
    stored[key].push_back(m.stats.p50);
    corrected[key].push_back(m.stats.p50 * corrector.Factor(m.campaign, m.time));
  }
  const Agreement before = Measure(stored), after = Measure(corrected);
  std::printf("%s: %zu measurements, %zu reference readings; %s\n", argv[1], rows->size(), reference->readings.size(),
              corrector.Finish().Describe().c_str());
  std::printf("kernels measured more than once: %zu (%zu measurements)\n", before.kernels, before.measurements);
  std::printf("deviation from the kernel's mean, as stored:       RMS %.2f%%, within ±2%% %.1f%%\n", before.rms_pct,
              before.within2_pct);
  std::printf("deviation from the kernel's mean, drift-corrected: RMS %.2f%%, within ±2%% %.1f%%\n", after.rms_pct,
              after.within2_pct);
  return 0;
}
