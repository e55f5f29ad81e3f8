#pragma once
// A predictor pack: everything needed to predict kernels for one device + backend + threads +
// precision, as one JSON file (no pickles): the device fingerprint, backend, feature version,
// fusion rules, provenance, and per kernel kind the training ranges, the fitted predictors,
// their cross-validated accuracy and which one was selected.

#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "ir/kernel.h"
#include "predict/context_model.h"
#include "predict/network_interval.h"
#include "predict/pack_adaptation.h"
#include "predict/predictor.h"
#include "run/graph_prep.h"

namespace latte {

/// Pack format version (the layout of the JSON, not the features: see kFeatureVersion).
inline constexpr int kPackFormatVersion = 2;  // 2: trees as four arrays each, not XGBoost's model

/// Accuracy of predictions against measurements.
struct AccuracyMetrics {
  std::size_t n = 0;
  double rmspe_pct = 0;     // root mean square of (predicted - measured) / measured, in %
  double within5_pct = 0;   // share of predictions within ±5% of the measurement
  double within10_pct = 0;  // within ±10%
  nlohmann::json ToJson() const;
  static Expected<AccuracyMetrics> FromJson(const nlohmann::json& json);
};

/// Root mean square of (predicted - measured) / measured, in %, each |error| counted at most `cap`
/// (fit ranks predictors with a cap of 1: SelectionRmspePct in fit.h).
double RmspePct(std::span<const double> predicted, std::span<const double> measured,
                double cap = std::numeric_limits<double>::infinity());

/// Metrics of `predicted` against `measured` (same length, measured > 0).
AccuracyMetrics ComputeAccuracy(std::span<const double> predicted, std::span<const double> measured);

/// The range of each parameter (and threads) seen in training for one kind.
struct TrainingRanges {
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> params;  // also "threads"
  /// Ranges of what the parameters make together (features' KernelCost): the output map's area
  /// ("oh*ow", spatial kinds), the work ("macs") and the bytes moved ("bytes"). The box of
  /// per-parameter ranges misses a kernel whose every parameter was seen but never together: a
  /// 320×320 map where training had square maps up to 224×224 and long ones up to 448×112. Empty
  /// in packs made before they were kept (then only the box is checked).
  std::map<std::string, std::pair<double, double>> derived;
  std::vector<std::string> dtypes;
  void Extend(const Kernel& kernel, int threads);
  /// True when every parameter of `kernel` was seen and lies within its range, what they make
  /// together lies within the derived ranges, and the dtype was seen.
  bool Contains(const Kernel& kernel, int threads) const;
  nlohmann::json ToJson() const;
  static Expected<TrainingRanges> FromJson(const nlohmann::json& json);
};

/// The fitted predictors of one kernel kind and the order they are tried in.
struct KindModel {
  std::string kind;
  std::size_t samples = 0;
  TrainingRanges ranges;
  std::unique_ptr<KernelPredictor> table;  // exact hits; may be null
  std::map<std::string, std::unique_ptr<KernelPredictor>> fitted;  // by name
  std::vector<std::string> order;  // fitted names, best cross-validated first ("selected" = order[0])
  std::map<std::string, AccuracyMetrics> cv;  // cross-validated accuracy per predictor
  /// A fused kind whose parts, each predicted by its own kind, predicted its measurements better
  /// than its own fitted predictors did held out (FitPack): what the table does not hold is
  /// predicted as the sum of its parts (cv["sum-of-parts"] says how well they did).
  bool by_parts = false;
};

/// What a pack was made for and from.
struct PackInfo {
  nlohmann::json device = nlohmann::json::object();  // the device fingerprint (or {"name": ...})
  std::string backend;
  std::string backend_version;
  /// Whether the backend takes NHWC activations (BackendFactory::takes_nhwc): how a model is
  /// planned before its kernels are predicted. Unset in packs written before packs said it.
  std::optional<bool> backend_takes_nhwc;
  int threads = 1;
  std::string precision = "fp32";
  std::vector<std::string> fusion_rules;  // fused kinds the backend runs as one kernel: "conv2d+relu6"
  std::string command;                    // provenance: the command that made the pack
  std::string created;                    // ISO 8601 UTC
  std::string latte_version;              // latte's git describe, or its version
  /// The drift reference kernel as measured while the pack's measurements were taken (the median
  /// of the campaigns' readings; empty key when none): `latte validate` measures it again to tell
  /// a machine that runs slower or faster today from a prediction error.
  std::string reference_kernel;
  double reference_p50_us = 0;
  std::size_t reference_readings = 0;
  /// How much those readings moved: their robust relative standard deviation (core/stats'
  /// RobustRelativeSd; 0 when too few to say). The machine's own drift while the pack's
  /// measurements were taken: part of every prediction's interval.
  double reference_spread = 0;
  /// Measurements scaled to reference_p50_us before fitting (calibrate/drift_correction; 0: none,
  /// or a pack made before measurements were corrected).
  std::size_t reference_corrected = 0;
  /// The power to which those measurements were scaled by the reference's changes: the share of
  /// them the store's repeated kernels followed (calibrate/drift_correction's DriftFollow, clamped
  /// to 0–1); 1 when corrected in full, and for packs made before it was kept. `latte validate`
  /// scales its drift by the same power.
  double reference_follow = 1;
};

/// A loaded or freshly fitted pack.
class Pack {
 public:
  PackInfo info;
  std::map<std::string, KindModel> kinds;  // by Kernel::Kind()
  /// What a layer costs inside a model beyond its kernel alone; unset for packs fitted without
  /// layers measured in context (their predictions are the kernels' times alone).
  std::optional<ContextModel> context;
  /// Set when `latte adapt` corrected the pack for another machine: every kernel prediction is
  /// multiplied by its class's factor (and the factor's uncertainty joins its spread).
  std::optional<PackAdaptation> adaptation;
  /// The interval around a model's total, calibrated on whole networks the pack never saw
  /// (predict/network_interval); unset for packs fitted without enough of them: their interval
  /// sums the kernels' spreads.
  std::optional<NetworkInterval> interval;
  /// The same two fitted on transformer encoders measured in context (a backend that runs
  /// attention): what a model with attention (a matmul of two activations) is predicted with. An
  /// encoder's layers run in a graph much as alone, where a CNN's take a quarter longer; one
  /// context for both over-predicted encoders by 25–48%.
  std::optional<ContextModel> transformer_context;
  std::optional<NetworkInterval> transformer_interval;

  /// Predicts `kernel` at the pack's thread count: table hit, else the best fitted predictor
  /// of its kind that has an answer, else roofline. kUnsupported (naming the kind and the kinds
  /// the pack has) when the pack has no model for the kernel's kind: never 0.
  Expected<Prediction> Predict(const Kernel& kernel) const;
  /// Every kernel the pack's tables hold (what it measured), each with its median and spread, by
  /// kind then key; unadapted.
  std::vector<TrainingSample> MeasuredKernels() const;
  /// The pack's backend when it takes NHWC, else none: how a model is planned for its kernels
  /// (run/graph_prep). A pack that does not say (written before packs did) is read as its backend
  /// was registered then: xnnpack and onednn took NHWC, every other backend the file's layout.
  NhwcBackends NhwcBackendNames() const;
  /// Same, at another thread count (the fitted models see threads as a feature). A fused kind
  /// the pack has no model for ("conv2d+relu6" where only conv2d and relu6 were measured), or one
  /// its parts predict better (KindModel::by_parts), is predicted as the sum of its parts
  /// (PredictFromParts), source kSumOfParts; kUnsupported when a part has no model either.
  Expected<Prediction> Predict(const Kernel& kernel, int threads) const;

  /// `kernel` (a fused kind) predicted as the sum of its parts, each by its own kind: the main op
  /// alone, then its followers as the one fused kind they make ("add+relu" of a "conv2d+add+relu"),
  /// itself by its parts when the pack lacks it. Source kSumOfParts; kUnsupported when a part has no model.
  Expected<Prediction> PredictFromParts(const Kernel& kernel, int threads) const;

  nlohmann::json ToJson() const;
  /// Reads a pack; fails naming what is missing or malformed, or a feature version this latte
  /// does not compute.
  static Expected<Pack> FromJson(const nlohmann::json& json);
  /// Writes the pack as indented JSON (stable: the same pack always gives the same bytes).
  Status Save(const std::string& path) const;
  /// Reads PATH; errors are "PATH: what".
  static Expected<Pack> Load(const std::string& path);
  /// A pack file's bytes (JSON, or gzip-compressed JSON expanding to at most kMaxPackBytes).
  static Expected<Pack> FromBytes(std::span<const std::uint8_t> bytes);
  /// The shipped pack is 56 MB of JSON and takes ~6 times that in memory once parsed: 256 MiB
  /// leaves room for much larger calibrations while a small gzip bomb stays a one-line error.
  static constexpr std::uint64_t kMaxPackBytes = std::uint64_t{256} << 20;
  /// The JSON text Save() writes.
  std::string Dump() const;

 private:
  /// The pack's own prediction, before any adaptation.
  Expected<Prediction> PredictUnadapted(const Kernel& kernel, int threads) const;
};

}  // namespace latte
