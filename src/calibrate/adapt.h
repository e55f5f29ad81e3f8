#pragma once
// `latte adapt` as a library call: a pack made on another machine (or on this one at another
// time) corrected for this machine in a minute. It measures a few dozen of the pack's own
// measured kernels again here, chosen to span each kernel class (dense convs, depthwise convs,
// matrix products, the memory-bound rest) from small to large, fits per class how much slower or
// faster this machine runs them (predict/pack_adaptation), measures a few random networks whole
// to set the overall level (kernels alone and in a model do not move alike across machines),
// and returns the pack with that
// correction, this machine's fingerprint and reference reading, and a provenance that says so.

#include <atomic>
#include <iosfwd>
#include <string>
#include <vector>

#include "core/status.h"
#include "predict/pack.h"
#include "run/measure.h"

namespace latte {

class BackendRegistry;

struct AdaptOptions {
  double budget_secs = 60;
  /// The share of the budget for whole random networks (the rest measures kernels).
  double network_share = 0.3;
  std::size_t max_networks = 16;
  /// Kernels the pack measured slower than this are not chosen: a handful would eat the budget.
  double max_kernel_ms = 10;
  std::size_t max_per_class = 40;
  std::string command;  // provenance written into the pack
  const std::atomic<bool>* stop = nullptr;  // raised by a signal handler: stop, adapt nothing
};

/// One kernel measured again.
struct AdaptedKernel {
  Kernel kernel;
  std::string kernel_class;
  double pack_ms = 0;      // the pack's own measurement (its table)
  double measured_ms = 0;  // here, now
};

/// One random network measured whole, against the pack adapted by its kernels.
struct AdaptedNetwork {
  std::size_t nodes = 0;
  double predicted_ms = 0;  // by the class factors alone
  double measured_ms = 0;
};

struct AdaptResult {
  Pack pack;  // the adapted pack (unset fields when interrupted)
  std::vector<AdaptedKernel> kernels;
  /// Kernels alone and kernels in a model do not move alike from one machine to another (caches,
  /// other tenants): whole networks measured here set the overall level, the kernels the classes'
  /// ratios. network_factor scales every class (1 when no network could be used, and why).
  std::vector<AdaptedNetwork> networks;
  double network_factor = 1;
  std::string network_note;
  std::vector<std::string> skipped;  // "KEY: why" for kernels that could not run here
  double reference_now_us = 0;       // the pack's reference kernel measured here (0: none)
  double secs = 0;
  bool interrupted = false;
};

/// The shortest budget adapt accepts: a few kernels of each class and the reference need it.
inline constexpr double kMinAdaptSecs = 10;
/// Fewer whole networks than this set no level (the kernels' factors stand alone).
inline constexpr std::size_t kMinAdaptNetworks = 3;
/// The random networks' seed: none that calibrate's context campaigns draw (seed 0 and up).
inline constexpr std::uint64_t kAdaptNetworkSeed = 0xADA97ull << 20;

/// The checks RunAdapt makes before it measures anything (a budget under kMinAdaptSecs), for
/// callers to make before reading the pack.
Status CheckAdaptOptions(const AdaptOptions& options);

/// Adapts `pack` on its backend and thread count through `registry` (progress on `log`). Fails for
/// a budget under kMinAdaptSecs, a pack without measured kernels to re-measure (no tables), a
/// backend this machine lacks, or fewer than 3 kernels measured within the budget.
Expected<AdaptResult> RunAdapt(Pack pack, const AdaptOptions& options, const BackendRegistry& registry,
                               std::ostream& log);

}  // namespace latte
