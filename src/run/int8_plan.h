#pragma once
// Post-training quantization of a plan (--precision int8 on an fp32 model): which activations
// become int8 and with what scale and zero point, from the ranges a few fp32 runs saw. Nodes
// chosen to run int8 read and write int8 activations; every other node stays fp32; a quantize or
// dequantize node is inserted wherever the two meet. Constants stay float32: a backend quantizes
// the weights it packs (per output channel) and the biases from them.

#include <functional>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "run/backend.h"
#include "run/graph_prep.h"

namespace latte {

/// The smallest and largest value an activation took in the calibration runs.
struct ValueRange {
  float min = 0, max = 0;
  bool seen = false;
  void Add(float v);
};
/// Per tensor id of a plan's graph.
using ActivationRanges = std::vector<ValueRange>;

/// Asymmetric per-tensor int8 parameters whose 256 steps cover `range` widened to hold 0 (so a
/// zero pad and a relu's floor are exact): scale = (max - min) / 255, zero point in [-128, 127].
QuantParams Int8ParamsFor(const ValueRange& range);

/// Kinds whose int8 form keeps its input's scale and zero point on its output (data movement, max
/// pooling, clamps: TFLite's rule too): the lowering gives all the tensors such a node joins one
/// scale and zero point, covering each of their ranges.
bool KeepsInt8Params(OpKind kind);

/// Why node `k` of an fp32 plan cannot be lowered to int8 whatever the backend ("" when it can):
/// it must read float32 tensors and write one float32 activation.
std::string Int8Ineligibility(const Graph& graph, NodeId k);

/// The lowered plan, and per node of it the node of the fp32 plan it runs (-1: an inserted
/// quantize or dequantize).
struct Int8Plan {
  GraphPlan plan;
  std::vector<NodeId> from;
};

/// Lowers `plan` (fp32) so that its nodes with `int8[k]` read and write int8 activations with the
/// parameters `ranges` imply. The plan's tensor ids are kept, and the graph's inputs and outputs
/// stay float32 for the caller: an activation an int8 node writes becomes int8 in place, except a
/// graph output, whose int8 twin ("y/int8") is dequantized into it; an fp32 node reading an int8
/// activation reads a float32 twin ("x/fp32"); an int8 node reading an fp32 activation reads an
/// int8 twin ("x/int8") a quantize node writes right after the producer. An int8 sigmoid's output
/// has XNNPACK's fixed parameters (scale 1/256, zero point -128), a tanh's (1/128, 0).
Int8Plan LowerPlanToInt8(const GraphPlan& plan, const std::vector<bool>& int8, const ActivationRanges& ranges);

/// Per node of an fp32 plan: whether it runs int8, and why not when it does not.
struct Int8Choice {
  std::vector<bool> int8;
  std::vector<std::string> kept_why;
  /// Every node Int8Ineligibility allows starts int8; the others say why not.
  static Int8Choice Eligible(const Graph& plan_graph);
};

/// Why a node the caller chose to keep fp32 stays fp32 (a per-op precision choice, `latte pareto`'s).
inline constexpr const char* kKeptFp32ByPlacement = "kept fp32 by the placement";

/// Keeps at fp32 each node of `plan` (fp32) whose first user node `user_fp32` marks (a folded
/// activation runs at its op's precision), and each inserted node (a layout transpose) whose
/// input's producer is kept fp32 or is no node: an inserted node follows the node before it.
void KeepUserNodesFp32(const GraphPlan& plan, const std::vector<bool>& user_fp32, Int8Choice& choice);

/// Whether node `node` of a lowered graph, which runs fp32 plan node `plan_node`, can run there.
using Int8Supports = std::function<Expected<Support>(NodeId plan_node, const Graph& lowered, NodeId node)>;

/// The executor's decision before it prepares anything: `plan` lowered with `choice`, each int8
/// node asked `supports`; one refused stays fp32 with the reason in `choice`, and the plan is
/// lowered again (its neighbours' conversions change) until none is refused. The last lowering.
Expected<Int8Plan> SettleInt8Plan(const GraphPlan& plan, const ActivationRanges& ranges, const Int8Supports& supports,
                                  Int8Choice& choice);

}  // namespace latte
