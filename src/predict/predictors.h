#pragma once
// The concrete predictors behind KernelPredictor (predictor.h). Each is fitted on the samples of
// one kernel kind; MakePredictor() builds them by pack name.

#include <array>
#include <cstdint>
#include <unordered_map>

#include "predict/features.h"
#include "predict/predictor.h"

namespace latte {

// What each predictor below overrides of KernelPredictor (documented there): fitting, predicting,
// and its JSON both ways.
#define LATTE_KERNEL_PREDICTOR_OVERRIDES                                            \
  Status Fit(std::span<const TrainingSample> samples) override;                     \
  Expected<Prediction> Predict(const Kernel& kernel, int threads) const override;   \
  nlohmann::json ToJson() const override;                                           \
  Status FromJson(const nlohmann::json& json) override

/// The key a table keeps a kernel measured at a thread count under ("KEY#threads").
std::string TableKey(const Kernel& kernel, int threads);

/// Exact table hit: the measured median of a kernel seen in training (same key and threads).
/// Repeated measurements of one kernel keep their median; a kernel not measured is kNotFound.
class TablePredictor final : public KernelPredictor {
 public:
  std::string_view Name() const override { return "table"; }
  LATTE_KERNEL_PREDICTOR_OVERRIDES;
  std::size_t size() const { return entries_.size(); }
  /// Every kernel measured, at each thread count, with its median and spread (key order).
  std::vector<TrainingSample> Entries() const;

 private:
  struct Entry {
    double ms = 0, spread_ms = 0;
  };
  // "KEY#threads": hashed, as a lookup compares one key, not the long common prefixes of a
  // sorted map's path (ToJson and Entries sort the keys, so packs stay stable).
  std::unordered_map<std::string, Entry> entries_;
  std::vector<std::string> SortedKeys() const;
};

/// Interpolation in log space over the kind's varying parameters (see interp_predictor.cc):
/// exact on measured points; multilinear in (log parameter, log latency) between grid points
/// when the surrounding grid corners were measured; a missing corner is estimated along the
/// axis whose measured neighbours are closest; with no usable corner, inverse-distance weighting
/// of the 4 nearest samples in normalized log coordinates. What is interpolated is log latency
/// relative to the kernel's work (WorkScaleMs; packs written before: log latency). Outside the
/// measured range a parameter is clamped and the prediction flagged: the clamped neighbours'
/// efficiency is scaled by the query's own work, not their latency copied.
class InterpPredictor final : public KernelPredictor {
 public:
  explicit InterpPredictor(int channel_tile = 1) : channel_tile_(channel_tile) {}
  std::string_view Name() const override { return "interp"; }
  LATTE_KERNEL_PREDICTOR_OVERRIDES;
  /// Inside the grid: every constant and alias holds, every axis value within its measured range.
  bool Covers(const Kernel& kernel, int threads) const override;

 private:
  struct Axis {
    std::string name;              // a parameter, or "threads" / "dtype" (pseudo-parameters)
    std::vector<std::int64_t> values;  // sorted, distinct
    bool log = true;               // coordinates are log(value) (all values > 0), else value
    std::vector<double> coords;    // transformed values
  };
  using Cell = std::vector<std::int32_t>;  // index into each axis' values
  struct CellHash {
    std::size_t operator()(const Cell& cell) const;
  };
  std::int64_t AxisValue(const Axis& axis, const Kernel& kernel, int threads) const;
  bool Lookup(const Cell& cell, double& log_ms) const;
  bool EstimateCell(const Cell& cell, double& log_ms) const;
  double NearestNeighbours(const std::vector<double>& point) const;
  void Index();
  /// The kernel a point of the grid stands for: `kind` (ParseKernelKind of kind_) with the axes'
  /// values and the constants.
  Kernel PointKernel(const Kernel& kind, const std::vector<std::int64_t>& values) const;

  std::string kind_;       // the kernel kind fitted ("add+relu6")
  bool per_work_ = false;  // cells hold log(ms / WorkScaleMs) (every fit now), else log(ms)
  int channel_tile_ = 1;   // the work scale counts a conv's MACs in tiles of this many channels
  std::vector<Axis> axes_;
  std::map<std::string, std::string> aliases_;    // parameter -> the axis it always equals
  std::map<std::string, std::int64_t> constants_;  // parameters that never varied
  std::vector<std::vector<std::int64_t>> point_values_;  // per sample, per axis
  std::vector<double> point_ms_;
  std::unordered_map<Cell, double, CellHash> cells_;    // cell -> log ms (per work when per_work_)
  std::vector<double> point_log_;                       // per point: the same value as its cell
  std::vector<std::vector<double>> point_coords_;       // normalized coordinates (nearest neighbours)
  std::vector<double> axis_scale_;                      // 1 / coordinate range per axis
};

/// Tree ensembles trained with XGBoost's C API on ComputeFeatures() to predict log latency:
/// gradient boosting ("gbdt") or a random forest ("forest": one round of parallel trees,
/// row and column subsampling). The pack holds XGBoost's own JSON model text; prediction walks
/// the trees in process (no XGBoost call per kernel), and the forest's spread is the standard
/// deviation of its trees' predictions.
class TreePredictor final : public KernelPredictor {
 public:
  enum class Mode { kBoosted, kForest };
  TreePredictor(Mode mode, const PredictorOptions& options) : mode_(mode), options_(options) {}
  std::string_view Name() const override { return mode_ == Mode::kBoosted ? "gbdt" : "forest"; }
  LATTE_KERNEL_PREDICTOR_OVERRIDES;
  /// The trees' sum for a feature vector (log of latency over WorkScaleMs, or of latency itself
  /// for a pack fitted before that target), and the standard deviation across trees.
  double PredictLog(const std::vector<float>& features, double* tree_sd = nullptr) const;
  /// Predictions of XGBoost itself for `samples` (in PredictLog's terms), to check the
  /// in-process tree walk (after Fit only: a pack keeps the trees, not XGBoost's model).
  Expected<std::vector<float>> PredictWithXgboost(std::span<const TrainingSample> samples) const;
  std::size_t num_trees() const { return trees_.size(); }

 private:
  struct Node {
    std::int32_t left = -1, right = -1;  // -1: leaf
    std::uint32_t feature = 0;
    float value = 0;  // split threshold (go left when feature < value), or leaf value
  };
  Status ParseModel();  // model_text_ into trees_
  /// Appends one tree after checking that its arrays agree and every child follows its parent.
  Status AddTree(const std::vector<std::int32_t>& left, const std::vector<std::int32_t>& right,
                 const std::vector<std::uint32_t>& feature, const std::vector<float>& value);

  // The walk's layout, built from trees_ (which stay as read, for ToJson): every tree in one
  // array, renumbered breadth first so that a split's right child follows its left one (a step
  // is `here + step + !(x < value)`, no branch), and a leaf steps back to itself: it reads a
  // feature that is always 0 against its own value, and its step cancels the comparison's
  // outcome, so a walk may pass it unchanged. Trees are then walked in lockstep groups for their
  // deepest leaf's number of steps (independent chains for the CPU to overlap). 8 bytes a node:
  // a 600-tree model's nodes stay within L2, where 16-byte nodes did not.
  struct FlatNode {
    float value = 0;            // a split's threshold, or a leaf's value
    std::uint16_t feature = 0;  // a leaf: the always-0 feature
    std::int16_t step = 0;      // a split: to its left child (≥ 1); a leaf: 0 or -1 (see above)
  };
  static_assert(sizeof(FlatNode) == 8);
  Status AppendFlat(const std::vector<Node>& tree);

  Mode mode_;
  PredictorOptions options_;
  FeatureSchema schema_;
  std::string model_text_;  // XGBoost's JSON model, after Fit (not saved in packs)
  // What the trees predict: log(ms / WorkScaleMs) (every fit now: beyond the training ranges the
  // trees hold a kernel's efficiency, not its latency), or log(ms) (packs written before).
  bool per_work_ = true;
  int channel_tile_ = 1;  // the work scale counts a conv's MACs in tiles of this many channels
  double base_score_ = 0;
  std::vector<std::vector<Node>> trees_;
  std::vector<FlatNode> flat_;
  std::vector<std::uint32_t> roots_;  // per tree: its root in flat_
  std::vector<std::uint32_t> depth_;  // per tree: steps from the root to its deepest leaf
};

/// Traffic: a memory-bound kernel's time (elementwise ops, pools, copies) from what it moves,
///   t = fixed + per_byte·bytes + per_run·(runs − 1) + per_far_byte·max(0, bytes − cache),
/// runs being KernelCost::runs (a broadcast's inner loops) and `cache` the size past which bytes
/// come from farther away. Every coefficient is ≥ 0, fitted by least squares on relative error
/// (the cache size chosen among a few by the same fit). Unlike interpolation and trees, which
/// answer a kernel beyond the samples with the nearest ones, it scales with the bytes: a kind
/// sampled on small maps still predicts a detector's 320×320 maps as moving more data. A kernel
/// that moves nothing by ComputeKernelCost() is kUnsupported. With `nchw_tensors` the costs are
/// those of the kernel as an NCHW backend runs it (WithNchwTensors): the same bytes, but a
/// [1,1,1,C] operand's broadcast walks C stretches, not H·W (packs before it: NHWC).
class TrafficPredictor final : public KernelPredictor {
 public:
  explicit TrafficPredictor(bool nchw_tensors = false) : nchw_tensors_(nchw_tensors) {}
  std::string_view Name() const override { return "traffic"; }
  LATTE_KERNEL_PREDICTOR_OVERRIDES;

  static constexpr int kTerms = 4;  // fixed, bytes, runs, far bytes

 private:
  std::array<double, kTerms> Terms(const KernelCost& cost) const;
  KernelCost CostOf(const Kernel& kernel) const;
  bool nchw_tensors_ = false;
  std::array<double, kTerms> coefficients_{};  // ms per term
  double cache_bytes_ = 0;
  double min_bytes_ = 0, max_bytes_ = 0;  // the samples' range
};

/// Roofline: time = overhead + max(FLOPs / peak, bytes / bandwidth) / efficiency, with peak and
/// bandwidth from the device (or, when unknown, the best the samples reach) and overhead and
/// efficiency fitted per kind by least squares on relative error. A kernel whose family has no
/// cost model (no MACs and no bytes) is kUnsupported.
class RooflinePredictor final : public KernelPredictor {
 public:
  explicit RooflinePredictor(const PredictorOptions& options)
      : peak_gflops_(options.peak_gflops), bandwidth_gbs_(options.bandwidth_gbs), channel_tile_(options.channel_tile) {}
  std::string_view Name() const override { return "roofline"; }
  LATTE_KERNEL_PREDICTOR_OVERRIDES;

 private:
  double IdealMs(const Kernel& kernel) const;
  double peak_gflops_ = 0, bandwidth_gbs_ = 0;
  int channel_tile_ = 1;  // MACs counted in whole tiles of output channels (ChannelTileFactor)
  double overhead_ms_ = 0, efficiency_ = 1;
};

#undef LATTE_KERNEL_PREDICTOR_OVERRIDES

}  // namespace latte
