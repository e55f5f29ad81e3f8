// Does the drift reference tell how fast the host ran? Within one calibration store, the kernels
// the random networks measured alone in more than one network (seconds to minutes apart; twice in
// one network counts once), each of 50 µs or more: each measurement's log deviation from its
// kernel's mean against the reference's log level at its time (the line between its campaign's
// readings either side). The figures are calibrate/drift_correction's MeasureDriftFollow, the
// estimate `latte fit` raises each drift factor to: slope 1 and a high correlation, the reference
// follows the host and correcting by it in full helps; slope 0, its readings' changes are their
// own. Also the RMS of both deviations: how far one kernel alone moves within a calibration (a
// floor under any prediction from it), and how far the reference does. No timing.
// Usage: drift_follow STORE.db [STORE.db ...]   (every backend's networks in each store together)
#include <cstdio>
#include <set>

#include "calibrate/drift_correction.h"
#include "db/store.h"

using namespace latte;

namespace {

// One store's line; false (said on stderr) when the store cannot be read.
bool Report(const char* path) {
  auto store = Store::OpenReadOnly(path);
  if (!store.ok()) {
    std::fprintf(stderr, "error: %s\n", store.status().message().c_str());
    return false;
  }
  auto layers = store->QueryGraphLayers();
  if (!layers.ok()) {
    std::fprintf(stderr, "error: %s\n", layers.status().message().c_str());
    return false;
  }
  std::set<std::int64_t> campaigns;
  for (const StoredGraphLayer& layer : *layers) campaigns.insert(layer.campaign);
  auto reference = ReadCampaignReference(*store, campaigns);
  if (!reference.ok()) {
    std::fprintf(stderr, "error: %s\n", reference.status().message().c_str());
    return false;
  }
  const DriftFollow follow = MeasureDriftFollow(reference->levels, *layers);
  if (follow.measurements == 0) {
    std::printf("%s: no kernel of %.0f µs or more measured alone in more than one network with reference readings "
                "beside it\n",
                path, kMinFollowUs);
    return true;
  }
  const bool estimated = EstimateDriftFollow(reference->levels, *layers).has_value();
  std::printf("%s: %zu measurements of %zu repeated kernels of ≥ %.0f µs; log alone on log reference level: slope %.2f, "
              "correlation %.2f; RMS deviation alone %.1f%%, reference %.1f%%; %s\n",
              path, follow.measurements, follow.kernels, kMinFollowUs, follow.slope, follow.correlation,
              100 * follow.kernel_rms, 100 * follow.level_rms,
              estimated ? "the fit uses it" : "too few, or a level that did not move: the fit corrects in full");
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: drift_follow STORE.db [STORE.db ...]\n");
    return 2;
  }
  bool ok = true;
  for (int i = 1; i < argc; ++i) ok = Report(argv[i]) && ok;
  return ok ? 0 : 2;
}
