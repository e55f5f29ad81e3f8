#pragma once
// Validation: a model predicted from a pack and measured for real on the pack's backend in the
// same run, compared per model and per kernel. How a pack is judged (DESIGN.md: on whole models
// it never saw, measured on the same machine in the same run).

#include <cmath>
#include <string>
#include <vector>

#include "core/status.h"
#include "predict/model_prediction.h"
#include "run/benchmark.h"

namespace latte {

/// One kernel of the model: predicted, and measured as the sum of its nodes' profiled times.
struct LayerComparison {
  std::size_t layer = 0;  // index into ModelValidation::prediction.layers
  double predicted_ms = 0;
  double measured_ms = 0;
};

struct ModelValidation {
  std::string model;
  GraphPlan plan;              // the graph as it ran (node ids of the layers)
  ModelPrediction prediction;
  BenchResult bench;           // the real runs (latency in µs, per-entry profile)
  double predicted_ms = 0;     // prediction.total_ms
  double measured_ms = 0;      // median of the whole-model runs
  double error_pct = 0;        // 100 · (predicted − measured) / measured
  /// Measured time of the nodes the prediction does not cover (included in measured_ms,
  /// missing from predicted_ms: said, not hidden).
  double uncovered_measured_ms = 0;
  /// At int8: nodes of the plan that the run's calibrated scales kept fp32 where the uncalibrated
  /// prediction lowered them (XNNPACK's scale ratio limits); the model is then predicted as it ran.
  std::size_t kept_fp32_by_run = 0;
  std::vector<LayerComparison> layers;
};

/// The pack's drift reference kernel measured again now, beside its reading when the pack's
/// measurements were taken: a machine that runs slower or faster today (shared hosts drift by
/// 10% and more within an hour) is told apart from a prediction error.
struct DriftCheck {
  bool measured = false;
  std::string why;  // when !measured: the pack keeps no reading, or the kernel could not run
  std::string kernel;
  double pack_p50_us = 0, now_p50_us = 0;
  /// The share of the reference's changes the pack's measurements followed (PackInfo's
  /// reference_follow): 1 where the reference speaks for every kernel.
  double follow = 1;
  /// now / then: 1.12 means this machine runs the reference 12% slower than when the pack was made.
  double Ratio() const { return measured && pack_p50_us > 0 ? now_p50_us / pack_p50_us : 1.0; }
  /// Ratio() to the power `follow`: what the pack's own kernels would be expected to move by.
  double FollowedRatio() const { return std::pow(Ratio(), follow); }
};

/// Measures the pack's reference kernel on the pack's backend and threads, with the protocol the
/// campaigns used for it. Never fails: what stops it is said in `why`.
DriftCheck MeasureDrift(const Pack& pack, const BackendRegistry& registry);

/// Predicts `graph` with `pack` and measures it with `options` (the placement is the pack's backend
/// on every node; op profiling is switched on for the per-layer comparison). Fails when the model
/// cannot run on the backend, saying which node and why.
Expected<ModelValidation> ValidateModel(const Graph& graph, const std::string& model, const Pack& pack,
                                        BenchOptions options, const BackendRegistry& registry);

}  // namespace latte
