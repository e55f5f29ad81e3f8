#pragma once
// Kernel predictors: fitted on measured kernels of one kind, they predict a kernel's latency and
// say how (table hit, interpolation, trees, forest, roofline). Every predictor serializes to JSON
// (packs are JSON, never pickles) and reads itself back to identical predictions.

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "ir/kernel.h"

namespace latte {

/// Which predictor produced a number. kSumOfParts: a fused kind the pack never measured, predicted
/// as its main op and each fused op alone (an upper bound of the fused kernel: fusing saves a pass).
enum class PredictionSource { kTableHit, kInterpolation, kTrees, kForest, kTraffic, kRoofline, kSumOfParts };

/// "table", "interp", "gbdt", "forest", "traffic", "roofline", "sum-of-parts": the names used in
/// packs, flags and reports.
std::string_view PredictionSourceName(PredictionSource source);

/// The kind a pack fits and looks a kernel up by: Kernel::Kind(), with "|int8" after an int8
/// kernel's and "|bf16" after a bfloat16 one's (an int8 pack's int8 convolution is another
/// routine than its fp32 one, and a bf16 pack's casts at a model's edges read float32, so each is
/// fitted apart; other dtypes share their kind's models, the dtype one of the features).
std::string ModelKind(const Kernel& kernel);
/// Inverse of ModelKind: a kernel of the kind, int8 or bf16 when the kind says so.
Expected<Kernel> ParseModelKind(std::string_view kind);

/// One predicted latency.
struct Prediction {
  double ms = 0;
  double spread_ms = 0;  // one standard deviation (estimated), in ms
  PredictionSource source = PredictionSource::kTableHit;
  bool outside_training_range = false;  // some parameter lies outside what the fit has seen
};

/// One measured kernel to fit on (predict's own type: it does not depend on the store's rows).
struct TrainingSample {
  Kernel kernel;
  int threads = 1;
  double p50_ms = 0;
  double spread_ms = 0;  // one standard deviation of the measurement (estimated); 0 when unknown
  /// False for a sample that is not a measurement of this configuration (`calibrate --from`: a
  /// pack's kernel as adapted here): fitted, but never answered as an exact table hit.
  bool measured = true;
};

/// Knobs of one XGBoost tree ensemble (its parameter names in parentheses).
struct TreeEnsembleOptions {
  int trees = 0;              // boosted: one tree a round; forest: all in one round (num_parallel_tree)
  int max_depth = 0;          // (max_depth)
  double eta = 1;             // learning rate (eta)
  double subsample = 1;       // share of the samples each tree sees (subsample)
  double colsample = 1;       // share of the features: per tree when boosted, per split in a forest
  double min_child_weight = 1;  // (min_child_weight)
};

/// Knobs of the fitted predictors; defaults are what `latte fit` uses.
struct PredictorOptions {
  // Gradient-boosted trees (predict log latency).
  TreeEnsembleOptions gbdt{.trees = 600, .max_depth = 8, .eta = 0.05, .subsample = 0.8, .colsample = 0.8};
  // Random forest (XGBoost's forest mode: one round of parallel trees, not shrunk: eta 1).
  TreeEnsembleOptions forest{.trees = 100, .max_depth = 14, .eta = 1, .subsample = 0.8, .colsample = 0.6};
  // Roofline: the device's peak arithmetic and memory bandwidth; 0 = estimate from the samples.
  double peak_gflops = 0;
  double bandwidth_gbs = 0;
  int seed = 0;
  /// The output channels the backend's kernels compute at once (WorkScaleMs' channel_tile): the
  /// trees, interpolation and roofline count a conv's work in whole tiles of them. 1: as is.
  int channel_tile = 1;
  /// The backend runs image tensors NCHW (ONNX Runtime; WithNchwTensors): the traffic predictor
  /// counts a broadcast's stretches in that order, where a channel's scale walks its whole plane.
  bool nchw_tensors = false;
  // One thread by default: on per-kind data and a shared machine, OpenMP spin-waiting costs more than it gains.
  int xgboost_threads = 1;  // 0 = XGBoost's default (all cores)
};

/// Latency model for one kernel kind.
class KernelPredictor {
 public:
  virtual ~KernelPredictor() = default;
  /// The pack name of this predictor type ("gbdt", ...).
  virtual std::string_view Name() const = 0;
  /// Fits on samples of one kind (replacing any previous fit). Fails on empty or unusable input.
  virtual Status Fit(std::span<const TrainingSample> samples) = 0;
  /// Predicts `kernel` run with `threads` threads; fails (kNotFound or kUnsupported) saying why
  /// when this predictor has no answer, never returning 0.
  virtual Expected<Prediction> Predict(const Kernel& kernel, int threads) const = 0;
  /// Whether `kernel` lies where this predictor was fitted to answer (interpolation: inside its
  /// grid); a predictor that reads every feature of any kernel says yes. Cheap: no prediction.
  virtual bool Covers(const Kernel& kernel, int threads) const { return true; }
  virtual nlohmann::json ToJson() const = 0;
  /// Reads what ToJson() wrote; fails naming the missing or malformed field.
  virtual Status FromJson(const nlohmann::json& json) = 0;

  /// The relative spread (standard deviation of relative error, e.g. from cross-validation) a
  /// predictor without its own estimate reports as spread_ms / ms.
  void set_relative_spread(double relative) { relative_spread_ = relative; }
  double relative_spread() const { return relative_spread_; }

 protected:
  double relative_spread_ = 0;
};

/// One predictor type as registered: everything fitting, selection and packs need to know of it.
/// A new predictor is its class, a PredictionSource, and one row of PredictorTypes().
struct PredictorType {
  std::string_view name;  // its name in packs, flags and reports: "gbdt"
  PredictionSource source;
  bool fitted;            // false: looked up only (the table), never fitted or ranked
  bool tree_model;        // answers every kernel of its kind (what follows it is never reached)
  bool fits_few_samples;  // fits on fewer samples than cross-validation needs (interp, roofline)
  bool fallback;          // ranked last unless it is the best there is (roofline)
  /// Linear in the bytes a kernel moves, so it extrapolates beyond the sizes it was fitted on
  /// (traffic): kept after the tree of a streaming kind (IsStreamingKernel), for the kernels
  /// outside the kind's ranges or that interpolation declines.
  bool extrapolates_bytes;
  std::unique_ptr<KernelPredictor> (*make)(const PredictorOptions& options);
};

/// The registry, the table first, then the fitted types in the order the selector tries them
/// (and ranks them when none is cross-validated).
const std::vector<PredictorType>& PredictorTypes();
/// The registered type `name`, or null.
const PredictorType* FindPredictorType(std::string_view name);
/// Every fitted predictor type's name, in registry order: "interp", "gbdt", "forest", "traffic",
/// "roofline".
const std::vector<std::string>& FittedPredictorNames();
/// A tree ensemble ("gbdt", "forest"), which answers every kernel of its kind.
bool IsTreePredictor(std::string_view name);
/// A registered type that extrapolates in bytes (PredictorType::extrapolates_bytes).
bool ExtrapolatesBytes(std::string_view name);
/// A kernel whose time is the bytes it streams: its main op elementwise, an activation or data
/// movement (a fused "add+relu" is its add's).
bool IsStreamingKernel(const Kernel& kernel);

/// A new, unfitted predictor of type `name` ("table" or one of FittedPredictorNames()); an unknown
/// name fails listing the known ones.
Expected<std::unique_ptr<KernelPredictor>> MakePredictor(std::string_view name, const PredictorOptions& options);

/// Reads a finite number or a string field of a JSON object, failing with the field's name.
Expected<double> JsonNumber(const nlohmann::json& json, const char* field);
Expected<std::string> JsonString(const nlohmann::json& json, const char* field);
/// A finite number ≥ 0 (a spread, a cost), failing with the field's name.
Expected<double> JsonNonNegative(const nlohmann::json& json, const char* field);
/// A whole number ≥ 0 (a count: samples, readings), failing with the field's name; -5 or 2.5
/// is refused, not wrapped or truncated.
Expected<std::size_t> JsonCount(const nlohmann::json& json, const char* field);

/// A JSON integer (never a float: a float out of an integer's range is undefined behaviour to
/// convert) in lo..hi; the error names `what`.
Expected<std::int64_t> JsonInteger(const nlohmann::json& value, const std::string& what, std::int64_t lo,
                                   std::int64_t hi);
/// An array of such integers.
Expected<std::vector<std::int64_t>> JsonIntegers(const nlohmann::json& value, const std::string& what,
                                                 std::int64_t lo, std::int64_t hi);
/// An array of finite numbers that a float holds (a larger one is undefined behaviour to convert).
Expected<std::vector<float>> JsonFloats(const nlohmann::json& value, const std::string& what);

/// A predictor's "channel_tile" (PredictorOptions::channel_tile): 1 to 64, 1 when absent (packs
/// written before predictors counted work in tiles).
Expected<int> JsonChannelTile(const nlohmann::json& json);

/// The JSON library's message without its "[json.exception.type_error.302] " prefix: what a
/// user reads of a malformed pack.
std::string JsonErrorText(const std::exception& e);

}  // namespace latte
