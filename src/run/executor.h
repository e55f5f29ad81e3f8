#pragma once
// Executor: runs a Graph with a backend chosen per node (one for all by default; per op kind or
// per node for the Pareto search). A node its backend cannot run goes to the named fallback
// backend, or the executor refuses to start, saying which node and why: never silently wrong.
// It runs a prepared copy of the graph: converted to NHWC when its backends need it (explicit
// transposes where layouts meet, each timed as its own entry) and with clamp activations folded
// into the op before them; profiles and assignments still name the user's nodes.

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "run/backend_registry.h"
#include "run/graph_prep.h"
#include "run/int8_plan.h"

namespace latte {

/// Which backend runs which node. Most specific wins: by node, then by op kind, then default.
struct Placement {
  std::string default_backend = "xnnpack";
  std::map<OpKind, std::string> by_op_kind;
  std::map<NodeId, std::string> by_node;
  /// Backend for nodes the chosen one cannot run; empty = such a node is an error.
  std::string fallback;
  /// At --precision int8: user nodes that stay fp32 although their backend could run them int8 (a
  /// per-op precision choice; see KeepUserNodesFp32). Their backends need no int8 at all.
  std::set<NodeId> fp32_nodes;
  std::string BackendFor(const Graph& graph, NodeId node) const;
};

/// Where a node ended up and why.
struct NodeAssignment {
  std::string backend;
  bool fell_back = false;
  std::string why;  // the chosen backend's "no", when it fell back
  /// What the node computes in: the run's precision, except at int8, where a node the backend
  /// cannot run in int8 stays fp32 and `precision_why` says why.
  Precision precision = Precision::kFp32;
  std::string precision_why;
};

/// One node of the prepared graph, as profiles report it: the user's nodes it runs (a conv and
/// the relu folded into it), or none for a node the executor inserted (a layout transpose).
struct ProfileEntry {
  std::string name;             // the first user node's name; for an inserted node its own name
  std::string op;               // "conv2d", "conv2d+relu", "transpose"
  std::vector<NodeId> sources;  // ids of the user's nodes; empty when inserted
  bool inserted = false;
  std::string backend;
  Precision precision = Precision::kFp32;  // at int8: kInt8 for int8 nodes and the inserted quantize/dequantize
};

/// What --precision int8's activation ranges were found on.
struct Int8Calibration {
  int runs = 0;        // fp32 runs
  std::string inputs;  // "generated inputs", "--calibration-data (x: x.npy)"
  /// "4 fp32 runs on generated inputs"
  std::string Describe() const { return std::to_string(runs) + " fp32 runs on " + inputs; }
};

class Executor {
 public:
  /// Creates the backends `placement` names (by the user's node ids and op kinds), prepares a
  /// copy of `graph` for them, checks support, prepares every node (weights packed once) and
  /// allocates buffers. The graph's own tensor ids address the buffers: graph inputs and outputs
  /// keep their ids, shapes and types in the prepared copy (at bf16 too: see LowerPlanToBf16).
  /// At int8 (RunOptions::precision) the plan is first run at fp32 for its activation ranges
  /// (kInt8CalibrationRuns times on generated inputs, or once per sample of
  /// RunOptions::calibration, which must give every float input the same number of samples of its
  /// shape), then lowered (run/int8_plan); a node its backend cannot run in int8
  /// stays fp32, its assignment saying why. A backend without int8 at all (RunsPrecision) fails it.
  static Expected<std::unique_ptr<Executor>> Create(const Graph& graph, const Placement& placement,
                                                    const BackendRegistry& registry, const RunOptions& options);

  /// Runs every node once, in order.
  Status Run();
  /// Runs every node once and adds each prepared node's wall time in microseconds to
  /// `entry_us` (resized to entries().size() on first use); entries() says what each is. A
  /// whole-graph backend's profiler gives the times (its own layout changes, included in them,
  /// are also added to `layout` when given).
  Status RunProfiled(std::vector<double>& entry_us, LayoutUs* layout = nullptr);
  /// True when one backend runs the whole graph as one unit (PreparedGraph).
  bool RunsWholeGraph() const { return whole_graph_ != nullptr; }
  /// At int8: what the activation ranges were found on (runs 0 at other precisions).
  const Int8Calibration& int8_calibration() const { return int8_calibration_; }

  TensorBuffers& buffers() { return buffers_; }
  /// One per node of the user's graph (a folded activation: its producer's backend).
  const std::vector<NodeAssignment>& assignments() const { return assignments_; }
  /// One per node of the prepared graph, in run order.
  const std::vector<ProfileEntry>& entries() const { return entries_; }
  /// The graph that runs (NHWC, activations folded, transposes inserted).
  const Graph& prepared_graph() const { return prepared_graph_; }
  /// "xnnpack XNNPACK 2022-02-16 (1 thread)" per backend in use.
  std::vector<std::string> BackendVersions() const;

  /// Per-node state of an int8 plan (see Create at kInt8): for each node of the lowered plan the
  /// fp32 plan node it runs (-1: inserted), and per fp32 plan node whether it runs int8 or why not.
  struct Int8State {
    std::vector<NodeId> from;
    Int8Choice choice;
  };

 private:
  Executor(Graph prepared, TensorBuffers buffers) : prepared_graph_(std::move(prepared)), buffers_(std::move(buffers)) {}
  // Prepares `plan` (node by node, or whole): the second half of Create. With `int8`, a node that
  // runs int8 and that its backend refuses to prepare sets `*refused` (its plan node) and fails.
  // `node_by_node` prepares every node apart even on a whole-graph backend (so that RunObserving
  // sees its activations).
  static Expected<std::unique_ptr<Executor>> Build(const Graph& graph, GraphPlan plan, const std::vector<std::string>& wanted,
                                                   const Placement& placement, const BackendRegistry& registry,
                                                   const RunOptions& options, const Int8State* int8, NodeId* refused,
                                                   bool node_by_node = false);
  // --precision int8: calibrates on an fp32 executor, lowers the plan, and keeps at fp32 each node
  // its backend cannot run in int8.
  static Expected<std::unique_ptr<Executor>> CreateInt8(const Graph& graph, GraphPlan plan, const std::vector<std::string>& wanted,
                                                        const Placement& placement, const BackendRegistry& registry,
                                                        const RunOptions& options);
  // Runs every prepared node once, calling `after(k)` when node k of the prepared graph has run.
  Status RunObserving(const std::function<void(NodeId)>& after);
  Graph prepared_graph_;
  TensorBuffers buffers_;
  std::map<std::string, std::unique_ptr<Backend>> backends_;
  std::vector<std::unique_ptr<PreparedNode>> prepared_;
  // Set when one backend runs the whole graph (every node placed on a RunsWholeGraphs backend
  // that supports them all): then prepared_ is empty and entries_ still name each node.
  std::unique_ptr<PreparedGraph> whole_graph_;
  Int8Calibration int8_calibration_;
  std::vector<ProfileEntry> entries_;
  std::vector<NodeAssignment> assignments_;
};


/// `plan` (fp32, every node on `backend`) lowered to int8 as Executor::Create lowers it at
/// --precision int8, without running anything: the same choice of nodes (Int8Choice::Eligible, then
/// SettleInt8Plan on the backend's Supports), but every activation under one scale and zero point
/// instead of calibrated ones, since an int8 kernel's time does not depend on them. What calibrated
/// scales can still change: a node the backend refuses only for its scale ratios (XNNPACK's limits),
/// or only when it creates the operator (a conv's), runs fp32 in a real run. Fills `fp32_why`.
Expected<GraphPlan> LowerPlanToInt8Uncalibrated(const GraphPlan& plan, const std::string& backend,
                                                const BackendRegistry& registry, RunOptions options);

/// `plan` lowered as LowerPlanToInt8Uncalibrated lowers it, but with every node that an int8 run of
/// it (its executor's `entries`) kept fp32 kept fp32 too (fp32_why: kKeptFp32ByRun): the
/// uncalibrated plan of what that run ran, checked node for node against it (CheckRunMatchesInt8Plan's
/// Unsupported when they still differ). A run's real scales can keep a node fp32 that one scale
/// for all lowers (XNNPACK's limits on scale ratios: an add of a small constant to a wide activation).
inline constexpr const char* kKeptFp32ByRun = "kept fp32 by the run's calibrated scales";
Expected<GraphPlan> LowerPlanToInt8AsRun(const GraphPlan& plan, const std::string& backend, const BackendRegistry& registry,
                                         RunOptions options, const std::vector<ProfileEntry>& entries);

/// `graph` planned with every node on `backend` as the executor runs it at `run.precision`:
/// PlanGraphForBackends's plan, at int8 lowered by LowerPlanToInt8Uncalibrated, at bf16 by
/// LowerPlanToBf16. The one plan that
/// prediction, an int8 kernel's parts and the layers of a network measured in context split into
/// kernels.
Expected<GraphPlan> PlanGraphOnBackend(const Graph& graph, const std::string& backend, const BackendRegistry& registry,
                                       const RunOptions& run);

/// Whether an int8 run (its executor's `entries`) ran the nodes of an uncalibrated int8 `plan` at
/// the same precisions, node for node: the run's calibrated scales may keep a node fp32 that the
/// plan lowered, or the other way (XNNPACK's scale limits). Unsupported naming the first node that
/// differs: such a run cannot be compared with the plan layer by layer.
Status CheckRunMatchesInt8Plan(const GraphPlan& plan, const std::vector<ProfileEntry>& entries);

/// Fills every graph input with uniform random values in [-1, 1) (fixed seed): the protocol's
/// random inputs. Bool inputs get random true and false; int32/int64 inputs that only gathers read
/// as indices get indices in range of what they gather from (an embedding's rows); other integer
/// and other non-float inputs are zeroed.
void FillRandomInputs(const Graph& graph, TensorBuffers& buffers, unsigned seed = 0);

/// Post-training calibration at --precision int8: this many fp32 runs on FillRandomInputs with
/// seeds 1, 2, ... (the measured runs use seed 0), each activation's minimum and maximum kept.
inline constexpr int kInt8CalibrationRuns = 4;

}  // namespace latte
