#pragma once
// A pack's in-graph context: what a layer costs inside a model beyond its kernel's time alone.
// Kernels are measured alone, run after run; inside a model a layer finds part of its data gone
// from the caches (weights and output buffer last used an inference ago, skip connections
// written long before) and, when its producer has just written its input, part of it closer.
// ir/cache_reuse counts, per layer, the bytes a cache of each level loses inside the graph
// against alone; the extra time is
//   share · (time alone) + layer_ms + l2_ms_per_mib · (bytes lost from L2) + l3_ms_per_mib · (bytes lost from L3)
//     + layout_ms_per_mib · (bytes a layout pass reorders around the layer)
//     + layout_paged_ms_per_mib · (those of them on more than 8 channel planes of whole 4 KiB pages)
// where the share is one for every layer or, when the held-out networks say it predicts them
// better, one per class of kernel (convolutions, dense products, data movement, the rest: a
// transformer's matmuls lose less of their time in a graph than a CNN's convs), layer_ms what
// every layer adds whatever its size (its code and descriptors an inference cold: oneDNN's int8
// layers of under 2 µs alone took 2.4 µs more in their random networks, those of 30–100 µs 17 µs:
// a share alone gave the small ones a tenth of it and the large ones too much),
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

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "ir/cache_reuse.h"
#include "ir/kernel.h"
#include "ir/nchwc_layout.h"
#include "ir/op_kind.h"

namespace latte {

/// The classes of kernel a context model may give shares of their own.
enum class ContextClass { kConv, kDense, kDataMovement, kOther };
inline constexpr std::size_t kContextClasses = 4;
/// Convolutions (conv2d, depthwise, transposed); dense products (fully_connected, matmul); data
/// movement (reshapes, transposes, concats, slices, gathers, pads, resizes, casts); the rest
/// (elementwise ops, activations, pools, reductions, softmax, normalization).
ContextClass ContextClassOf(OpKind op);
/// "conv", "dense", "data_movement", "other": as packs write them.
const char* ContextClassName(ContextClass cls);

/// What the coefficients were fitted to minimise: each layer's relative error in its graph, or
/// each network's (the sum of its layers). Chosen by the held-out networks' error.
enum class ContextObjective { kLayers, kNetworks };
const char* ContextObjectiveName(ContextObjective objective);

struct ContextModel {
  double share = 0;           // extra time as a share of the time alone (every layer's, without class_shares)
  /// The share per class of kernel (ContextClass order), when the fit chose them over one share.
  std::optional<std::array<double, kContextClasses>> class_shares;
  double layer_ms = 0;        // per layer with a kernel, whatever its size (packs before it: 0)
  double l2_ms_per_mib = 0;   // per MiB lost from L2 inside the graph (negative MiB: found)
  double l3_ms_per_mib = 0;   // per MiB lost from L3
  // The same for layers without weights (packs before the split: the coefficients above).
  double weightless_l2_ms_per_mib = 0, weightless_l3_ms_per_mib = 0;
  /// ONNX Runtime's NCHWc block the layout changes were counted with (LayerTraffic::layout_bytes,
  /// ir/nchwc_layout), 0 for a backend without such a pass; and the ms per MiB reordered.
  int layout_block = 0;
  double layout_ms_per_mib = 0;
  /// Added per MiB of reorders whose channel planes are whole 4 KiB pages, of more than 8 channels
  /// (LayerTraffic::layout_paged_bytes; packs before it: 0).
  double layout_paged_ms_per_mib = 0;
  /// How layout_ms_per_mib and layout_paged_ms_per_mib were found: measured (the networks'
  /// layout changes as their profiles timed them, against the bytes they reorder and those of
  /// them on whole pages, two rates) or fitted with the other coefficients (the held-out networks
  /// preferred it, or the networks did not record their layout time).
  bool layout_measured = false;
  std::int64_t l2_bytes = 0;  // the cache sizes the traffic is simulated with
  std::int64_t l3_bytes = 0;
  TensorMemory memory = TensorMemory::kOwnBuffers;  // where the simulated activations live
  ContextObjective objective = ContextObjective::kLayers;  // packs before the choice: layers
  std::size_t graphs = 0;     // networks and layers it was fitted on
  std::size_t layers = 0;
  int folds = 0;              // networks held out in turn, in this many folds
  double cv_alone_rmspe_pct = 0;  // held-out networks: the sum of their layers alone vs in the graph
  double cv_rmspe_pct = 0;        // the same with this model's extra time
  /// The held-out error of the best fit with one share and with shares per class, which decided
  /// between them (0: packs before these were recorded).
  double cv_one_share_rmspe_pct = 0, cv_class_shares_rmspe_pct = 0;

  /// Per layer, the extra ms inside the graph, given each layer's time alone (predicted or
  /// measured), its kernel's main op and the graph's traffic (all the same length; a layer
  /// without a kernel, alone 0 ms, passes kOpaque). A layer never comes out below half its time
  /// alone.
  std::vector<double> ExtraMs(const std::vector<LayerTraffic>& traffic, const std::vector<double>& alone_ms,
                              const std::vector<OpKind>& ops) const;
  /// The share of its time alone a layer of `op` adds.
  double ShareOf(OpKind op) const;
  /// "24.4% of the time alone", or per class: "conv 20.1%, dense 3.0%, data_movement 41.0%, other 9.8% of the time alone".
  std::string ShareText() const;

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
  /// The network's own layout changes per run, as its profile measured them (ONNX Runtime's
  /// reorders; NaN: not recorded), against the layers' LayerTraffic::layout_bytes.
  double layout_ms = std::numeric_limits<double>::quiet_NaN();
  /// Each layer's kernel's main op, as ExtraMs takes them.
  std::vector<OpKind> Ops() const;
};

/// The caches a graph-context campaign ran on (its space records them).
struct ContextCaches {
  std::int64_t l2_bytes = 0, l3_bytes = 0;
};

/// Sets each layer's LayerTraffic::layout_bytes and layout_paged_bytes from its reorders (as
/// NchwcReorders lists them per layer; a layer past the end of `reorders` gets none).
void SetLayoutBytes(const std::vector<std::vector<NchwcReorder>>& reorders, std::vector<LayerTraffic>& traffic);

/// Fits on `networks` (every layer of each) with `caches`. Needs at least 4 networks; holds each
/// network out in turn (in up to 20 folds) to choose the L3 size and to report the accuracy, then
/// fits on all; the objective (layers or networks), and one share or one per class of kernel, are
/// chosen the same way (shares per class only when they lower the held-out error by
/// kClassSharesMinGainPct and by more than kClassSharesMinZ standard errors of the gain paired by
/// network: more coefficients must earn their place, on more than a few networks). kInvalidInput when there are too few networks or the caches are unknown, saying
/// which. `memories` are the simulations chosen among. By default the arena alone: every executor
/// Latte runs reuses activation memory (its own arena plan; ONNX Runtime's arena and memory
/// patterns). Chosen by the held-out networks, each tensor in its own memory won on some ORT
/// calibrations by a point of RMSPE and then more than doubled the context of real models,
/// which have more and larger tensors than the random networks.
inline constexpr double kClassSharesMinGainPct = 0.1;
inline constexpr double kClassSharesMinZ = 2.0;
/// The fewest networks FitContextModel fits on (a calibration measures at least these).
inline constexpr std::size_t kMinContextNetworks = 4;
/// `layout_block`: the NCHWc block the networks' LayerTraffic::layout_bytes were counted with (0:
/// none; the model records it, and predictions count a model's layout changes with it). The costs
/// per MiB (plain, and added on whole-page planes) are fitted with the other coefficients, or,
/// when every network that reorders recorded its layout time, may be those times against the
/// networks' bytes (two rates, least squares over the networks) with the others fitted to what
/// they leave (a fitted cost competes with the class shares, which the same networks' other ops
/// can stand in for): the held-out networks choose.
Expected<ContextModel> FitContextModel(const std::vector<MeasuredNetwork>& networks, const ContextCaches& caches,
                                       const std::vector<TensorMemory>& memories = {TensorMemory::kArena},
                                       int layout_block = 0);

}  // namespace latte
