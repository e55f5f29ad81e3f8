#pragma once
// `latte calibrate` as a library call: everything needed to predict on this machine, within a
// time budget. It finds which op chains the backend fuses, profiles the kernels of the given
// models (and their neighbourhoods), measures random networks layer by layer in the graph and
// alone (the in-graph context), then kernels of architectures like real networks
// (profile/architectures), then random kernels of every common kind, then adaptive rounds
// where the current fit explains the store worst, and fits a pack on all of it with the detected
// fusion rules. Every phase is a resumable campaign in the store: the same command run
// again continues where it stopped, and its measurements are kept for later fits.

#include <atomic>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/tensor.h"
#include "calibrate/fit_store.h"
#include "predict/pack.h"
#include "profile/fusion.h"
#include "profile/graph_context.h"
#include "profile/profile.h"

namespace latte {

class BackendRegistry;

struct CalibrateOptions {
  std::string backend = "xnnpack";
  int num_threads = 1;
  /// fp32; int8: the kernels an int8 model is made of (profile/campaign's LoweredKernels:
  /// int8 kernels, the conversions where int8 meets fp32, the kinds the backend keeps fp32 at fp32),
  /// fitted into a pack of precision int8; bf16: those a bf16 model is made of (bf16 kernels, the
  /// casts at its float32 edges), fitted into a pack of precision bf16. Fusion is detected at fp32.
  Precision precision = Precision::kFp32;
  std::string db;                       // the store the campaigns write to
  double budget_secs = 600;             // the whole calibration, fusion detection included
  std::vector<std::string> models;      // their kernels are profiled first (optional)
  std::map<std::string, Shape> input_shapes;
  std::map<std::string, std::vector<std::string>> input_values;  // --input-value: the models' inputs made constants
  /// Kinds of the random and adaptive phases (the detected fused kinds are added).
  std::vector<std::string> kinds = DefaultCalibrationKinds();
  std::uint64_t seed = 0;
  bool detect_fusion = true;            // false: FusionRules::Default()'s kinds
  FitOptions fit;
  const std::atomic<bool>* stop = nullptr;  // raised by a signal handler: stop cleanly, fit nothing
  bool tty = false;                     // progress as a redrawn bar
  std::string command;                  // provenance written into the pack
  /// `--from P.json`: start from a pack instead of from nothing. Its fusion rules are used (no
  /// detection; the backend's declared FusedByConstruction kinds added), it is adapted to this machine first (calibrate/adapt, kFromAdaptShare of the
  /// budget), and its measured kernels, as the adapted pack predicts them here, join the fit
  /// wherever this store has no measurement of the same kernel. RunCalibrate takes it over (it is
  /// adapted in place: a pack is tens of MB, not copied).
  Pack* from = nullptr;
  std::string from_path;                // for the report (set before the pack is read: no fusion detection)
  /// The kinds sampled at random when none are given: the ops of common CNNs and MLPs, and the
  /// pow, sqrt and matmul of layer norms and attention.
  static std::vector<std::string> DefaultCalibrationKinds();
};

/// One profiling phase and what it did.
struct CalibratePhase {
  std::string name;        // "models", "random", "adaptive 1", ...
  double budget_secs = 0;  // what it was given
  double spent_secs = 0;
  ProfileResult result;
};

struct CalibrateResult {
  std::optional<FusionReport> fusion;     // when detected
  std::vector<std::string> fusion_rules;  // written into the pack
  double fusion_secs = 0;
  std::vector<CalibratePhase> phases;
  /// The networks measured in context (for the pack's in-graph context model), one campaign per
  /// family, when that phase ran.
  struct ContextPhase {
    std::string family;  // "inverted residual", "hard-swish, squeeze-and-excite", "transformer encoders"
    GraphContextResult result;
    double secs = 0;
  };
  std::vector<ContextPhase> graph_contexts;
  /// What starting from a pack did (when options.from was given).
  struct FromPack {
    std::string path;
    std::size_t kernels = 0;       // its measured kernels (table entries)
    std::size_t adapted = 0;       // of which predicted here through the adaptation (the fit's prior)
    std::size_t remeasured = 0;    // kernels the adaptation measured again
    double network_factor = 1;     // the adaptation's overall level
    double secs = 0;
  };
  std::optional<FromPack> from;
  bool interrupted = false;               // stopped by the stop flag: nothing fitted
  StoreFit fit;                           // the pack (when not interrupted)
};

/// The shortest budget calibrate accepts: fusion detection and a useful sample need this much.
inline constexpr double kMinCalibrateSecs = 30;
/// With fusion detection (which takes about 30 s on one core of this project's machine).
inline constexpr double kMinCalibrateWithFusionSecs = 120;

/// The share of the budget `--from` gives the pack's adaptation (at least kMinAdaptSecs, at most
/// kMaxFromAdaptSecs).
inline constexpr double kFromAdaptShare = 0.1;
inline constexpr double kMaxFromAdaptSecs = 120;

/// A profiling phase given less than this is skipped: a campaign needs its reference readings and a
/// few kernels.
inline constexpr double kMinCalibratePhaseSecs = 5;

/// What a profiling phase of calibrate gets: `share` of the `left_secs` of the budget, or nothing
/// (nullopt) when that is under kMinCalibratePhaseSecs. A calibration always measures kernels (its
/// pack is fitted on them): while none is measured (`kernels_measured` 0: the phases before, fusion
/// detection or the networks in context, overran a short budget on a slow or busy machine), a phase
/// gets kMinCalibratePhaseSecs even past the budget.
std::optional<double> CalibratePhaseBudget(double left_secs, double share, std::size_t kernels_measured);

/// The checks RunCalibrate makes before it starts: an unknown backend, a budget under
/// kMinCalibrateSecs (or under kMinCalibrateWithFusionSecs with fusion detection), a `from` pack
/// of another backend, thread count or precision, a precision other than fp32 and int8 or one the
/// backend lacks.
Status CheckCalibrateOptions(const CalibrateOptions& options, const BackendRegistry& registry);

/// Whether `backend` runs attention's scores, a batched matmul of two activations, at
/// `run.precision` as a model at that precision runs it (oneDNN and ONNX Runtime do; Debian's
/// XNNPACK does not): calibrate then measures encoder kernels and networks too, and layer_norm and
/// gelu join its random kinds.
bool BackendRunsAttention(const std::string& backend, const BackendRegistry& registry, const RunOptions& run);

/// Runs a whole calibration (progress on `log`). Fails for an unknown backend, a budget under
/// kMinCalibrateSecs, models that cannot be read, or a store that cannot be written.
Expected<CalibrateResult> RunCalibrate(const CalibrateOptions& options, const BackendRegistry& registry,
                                       std::ostream& log);

}  // namespace latte
