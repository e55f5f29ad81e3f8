#pragma once
// A whole model predicted from its kernels: the graph is split into kernels by the pack's fusion
// rules, each kernel is predicted by the pack, and the total is their sum with an interval.
// Coverage is part of the answer: a node no kernel covers, or a kernel the pack cannot predict,
// is listed with why and left out of the total (never counted as zero without saying so).

#include <map>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/status.h"
#include "ir/graph.h"
#include "ir/kernel_graph.h"
#include "predict/pack.h"
#include "run/graph_prep.h"

namespace latte {

class BackendRegistry;

/// One predicted kernel of the model.
struct LayerPrediction {
  std::vector<NodeId> nodes;  // main node first
  /// The user's nodes these run, by name (a relu folded into its conv: both; an inserted layout
  /// transpose: its own name); empty until NameUserNodes.
  std::vector<std::string> names;
  Kernel kernel;
  Prediction prediction;  // the kernel alone
  /// What the layer costs inside this model beyond its kernel alone (the pack's context model;
  /// 0 when the pack has none). Negative when the model leaves it more in cache than alone.
  double context_ms = 0;
  /// The layer's predicted time in the model.
  double ms() const { return prediction.ms + context_ms; }
  /// With an int8 pack (the plan's fp32_why, set by NameUserNodes): whether the layer runs int8
  /// (an inserted quantize or dequantize too), and when not, why it stays fp32.
  bool int8 = false;
  std::string fp32_why{};
};

/// A node (or a kernel's nodes) the prediction does not cover, and why.
struct UncoveredLayer {
  std::vector<NodeId> nodes;
  std::vector<std::string> names;  // as LayerPrediction::names
  std::string op;   // the main node's op name ("conv2d", or the file's name for an opaque op)
  std::string why;
};

/// How uncertain a model's total is: one standard deviation (ms) from each of three independent
/// sources, combined in quadrature for the interval when the pack's interval is not calibrated on
/// networks (predict/network_interval; then these are for the report only).
struct PredictionUncertainty {
  /// The kernels' spreads summed: one pack's errors share a bias, so they add like fully
  /// correlated errors, not in quadrature.
  double kernels_sd_ms = 0;
  /// The context model's held-out error on whole random networks (its cv RMSPE) × the total;
  /// 0 without a context model.
  double context_sd_ms = 0;
  /// The machine's own drift while the pack was measured (the reference kernel's spread) × the
  /// total; 0 when the pack does not know it.
  double machine_sd_ms = 0;
  /// The held-out networks the interval was calibrated on; 0: the interval is ± kIntervalZ · sd_ms().
  std::size_t calibrated_networks = 0;
  double sd_ms() const;
};

/// The interval around a model's total: this share of real runs is meant to fall inside it,
/// at ± kIntervalZ standard deviations.
inline constexpr double kIntervalLevel = 0.90;
inline constexpr double kIntervalZ = 1.645;

struct ModelPrediction {
  std::vector<LayerPrediction> layers;  // in execution order
  std::vector<UncoveredLayer> uncovered;
  double total_ms = 0;        // sum of the layers' ms() (uncovered layers excluded, see coverage)
  double context_ms = 0;      // of which the layers' in-graph context (0 without a context model)
  bool context_applied = false;  // the pack has a context model and it was applied
  bool attention = false;        // the model has a matmul of two activations
  /// What the context and interval applied were fitted on: "random CNN networks", or
  /// "transformer encoders" for a model with attention when the pack has them.
  std::string context_family;
  const ContextModel* context = nullptr;  // the context model applied (the pack's), if any
  PredictionUncertainty uncertainty;
  /// The pack's calibrated interval around the total (Pack::interval), else total ∓ kIntervalZ ·
  /// uncertainty.sd_ms() (not below 0).
  double interval_lo_ms = 0;
  double interval_hi_ms = 0;
  std::size_t covered_nodes = 0;    // of the planned graph's nodes; the user's after NameUserNodes
  std::size_t uncovered_nodes = 0;  // likewise
  std::size_t total_nodes = 0;
  std::size_t outside_range = 0;  // layers with a parameter outside the pack's training ranges
  /// Predicted time per source ("table", "gbdt", ...), for the report.
  std::map<std::string, double> ms_by_source;
};

/// `graph` laid out and fused exactly as the executor runs it on the pack's backend (NCHW graphs
/// converted to NHWC with the transposes that inserts; clamps folded into the op before them).
/// With a pack of precision int8, then lowered as the executor lowers it at --precision int8 (which
/// nodes run int8 is the backend's answer: run/executor's LowerPlanToInt8Uncalibrated, no model
/// run), for which `registry` must know the pack's backend; without one such a pack is refused.
Expected<GraphPlan> PlanGraphForPrediction(const Graph& graph, const Pack& pack, const BackendRegistry* registry = nullptr);

/// Names every layer of `prediction` (made on `plan.graph`) by the user's nodes it runs and counts
/// the coverage in them, as `inspect` counts the model: a relu folded into its conv is two of the
/// user's nodes, a layout transpose the plan inserted none. An int8 plan's layers also get their
/// precision (LayerPrediction::int8, fp32_why).
void NameUserNodes(const GraphPlan& plan, const Graph& user, ModelPrediction& prediction);

/// "" when `here` is the kind of machine the pack was fitted on; otherwise one line saying how
/// it differs (the predictions stay those of the pack's machine).
std::string CompareMachine(const Pack& pack, const DeviceFingerprint& here);

/// Predicts every kernel of `graph` with `pack`, and when the pack has a context model, each
/// layer's in-graph context from the traffic of all layers (uncovered ones included: they run and
/// touch memory too) in the order the executor runs them. `graph` must have known shapes and be laid out as
/// the pack's backend runs it (see PlanGraphForPrediction). Fails only on a malformed graph.
Expected<ModelPrediction> PredictModel(const Graph& graph, const Pack& pack);

}  // namespace latte
