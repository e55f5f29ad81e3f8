#pragma once
// A pack's in-graph context: what a layer costs inside a model beyond its kernel's time alone.
// Kernels are measured alone, run after run; inside a model a layer finds part of its data gone
// from the caches (weights and output buffer last used an inference ago, skip connections
// written long before) and, when its producer has just written its input, part of it closer.
// ir/cache_reuse counts, per layer, the bytes a cache of each level loses inside the graph
// against alone; the extra time is
//   share · (time alone) + l2_ms_per_mib · (bytes lost from L2) + l3_ms_per_mib · (bytes lost from L3)
// with the cache coefficients apart for layers without weights (elementwise ops, pools, resizes:
// they stream what they touch, where a conv reuses it), all non-negative and fitted on layers of
// random networks measured both ways
// (profile/graph_context), never on the models a pack is judged on. The L3 size the traffic is
// simulated with is chosen among fractions of the machine's L3 (other tenants share it) by
// cross-validation over networks, and so is what the fit minimises: each layer's relative error,
// or each network's (its layers summed). Small layers take a larger share longer in a graph than
// large ones; fitted layer by layer that share went to the convs too, and the held-out networks'
// sums came out worse than with no context at all on ONNX Runtime (22.0% RMSPE against 20.8%;
// fitted on the sums, 14.8%). The activations live in the executor's arena (older packs may
// give each tensor its own memory, and say so).

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "ir/cache_reuse.h"
#include "ir/kernel.h"

namespace latte {

/// What the coefficients were fitted to minimise: each layer's relative error in its graph, or
/// each network's (the sum of its layers). Chosen by the held-out networks' error.
enum class ContextObjective { kLayers, kNetworks };
const char* ContextObjectiveName(ContextObjective objective);

struct ContextModel {
  double share = 0;           // extra time as a share of the time alone
  double l2_ms_per_mib = 0;   // per MiB lost from L2 inside the graph (negative MiB: found)
  double l3_ms_per_mib = 0;   // per MiB lost from L3
  // The same for layers without weights (packs before the split: the coefficients above).
  double weightless_l2_ms_per_mib = 0, weightless_l3_ms_per_mib = 0;
  std::int64_t l2_bytes = 0;  // the cache sizes the traffic is simulated with
  std::int64_t l3_bytes = 0;
  TensorMemory memory = TensorMemory::kOwnBuffers;  // where the simulated activations live
  ContextObjective objective = ContextObjective::kLayers;  // packs before the choice: layers
  std::size_t graphs = 0;     // networks and layers it was fitted on
  std::size_t layers = 0;
  int folds = 0;              // networks held out in turn, in this many folds
  double cv_alone_rmspe_pct = 0;  // held-out networks: the sum of their layers alone vs in the graph
  double cv_rmspe_pct = 0;        // the same with this model's extra time

  /// Per layer, the extra ms inside the graph, given each layer's time alone (predicted or
  /// measured) and the graph's traffic (same length). A layer never comes out below half its
  /// time alone.
  std::vector<double> ExtraMs(const std::vector<LayerTraffic>& traffic, const std::vector<double>& alone_ms) const;

  nlohmann::json ToJson() const;
  /// Fails naming the field that is missing, negative or not finite.
  static Expected<ContextModel> FromJson(const nlohmann::json& json);
  bool operator==(const ContextModel& other) const = default;
};

/// One network measured whole (profile/graph_context): per layer in execution order, its kernel,
/// traffic, time alone and time in the graph (ms).
struct MeasuredNetwork {
  std::vector<Kernel> kernels;
  std::vector<LayerTraffic> traffic;
  std::vector<double> alone_ms, in_graph_ms;
};

/// The caches a graph-context campaign ran on (its space records them).
struct ContextCaches {
  std::int64_t l2_bytes = 0, l3_bytes = 0;
};

/// Fits on `networks` (every layer of each) with `caches`. Needs at least 4 networks; holds each
/// network out in turn (in up to 20 folds) to choose the L3 size and to report the accuracy, then
/// fits on all; the objective (layers or networks) is chosen the same way. kInvalidInput when there are too few networks or the caches are unknown, saying
/// which. `memories` are the simulations chosen among. By default the arena alone: every executor
/// Latte runs reuses activation memory (its own arena plan; ONNX Runtime's arena and memory
/// patterns). Chosen by the held-out networks, each tensor in its own memory won on some ORT
/// calibrations by a point of RMSPE and then more than doubled the context of real models,
/// which have more and larger tensors than the random networks.
Expected<ContextModel> FitContextModel(const std::vector<MeasuredNetwork>& networks, const ContextCaches& caches,
                                       const std::vector<TensorMemory>& memories = {TensorMemory::kArena});

}  // namespace latte
