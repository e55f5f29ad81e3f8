#pragma once
// The graph as the executor runs it, given which backend each node runs on: NCHW spatial ops
// converted to NHWC for NHWC backends (transposes inserted where layouts meet), zero pads folded
// into the conv after them, decomposed layer norms and GELUs merged into one node (ir/fuse_decomposed),
// clamp activations folded into the op before them. Shared by the executor and by prediction, so a
// predicted kernel is exactly a node (or nodes) that runs.

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"

namespace latte {

struct GraphPlan {
  Graph graph;                                // what runs; the user's tensor ids are kept
  std::vector<std::vector<NodeId>> sources;  // per node of `graph`: the user's nodes it runs (empty: inserted)
  /// A plan lowered to int8 for prediction (LowerPlanToInt8Uncalibrated), per node of `graph`: why
  /// it stays fp32, "" when it runs int8 (an inserted quantize or dequantize too). Empty otherwise.
  std::vector<std::string> fp32_why{};
};

/// The names of the backends that take NHWC activations (BackendRegistry::NhwcBackendNames(), or
/// a pack's own backend when it does: Pack::NhwcBackendNames()). Every other backend runs the
/// graph's layout as the file has it.
using NhwcBackends = std::set<std::string, std::less<>>;

/// `wanted[i]` is the backend of the user's node i.
Expected<GraphPlan> PlanGraphForBackends(const Graph& graph, const std::vector<std::string>& wanted,
                                         const NhwcBackends& nhwc);

/// The plan's two steps, for callers planning many placements (the Pareto search): the layout
/// step depends only on which nodes need NHWC, so its result may be reused for every placement
/// with the same layouts. LayOutForBackends converts (and marks each node with its user node);
/// FuseForBackends folds zero pads into the conv after them, merges decomposed layer norms and
/// GELUs, and folds clamps into the op before them, each when all those nodes run on one backend.
Expected<Graph> LayOutForBackends(const Graph& graph, const std::vector<std::string>& wanted, const NhwcBackends& nhwc);
GraphPlan FuseForBackends(const Graph& laid_out, const std::vector<std::string>& wanted);

/// A plan as it runs at bf16 (--precision bf16): every float32 activation between nodes becomes
/// bfloat16, while the graph's inputs and outputs stay float32 for the caller, converted by
/// inserted cast nodes (float32 → bfloat16 before the first node, bfloat16 → float32 right after
/// the node that writes an output; `sources` empty for them). Constants stay float32: each backend
/// converts the weights it packs (a bias or a norm's parameters may stay float32 inside the
/// primitive). The plan's tensor ids are kept; the twins are new tensors ("x/bf16").
void LowerPlanToBf16(GraphPlan& plan);

/// The backends an inserted node `node` of a plan (a layout transpose; `planned` and `sources`
/// are the plan's) may run on, best first: where its neighbours run (its producers', then its
/// consumers'), then `default_backend`.
std::vector<std::string> InsertedNodeBackends(const Graph& planned, const std::vector<std::vector<NodeId>>& sources,
                                              const std::vector<std::string>& wanted, NodeId node,
                                              const std::string& default_backend);

}  // namespace latte
