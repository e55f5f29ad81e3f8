#pragma once
// The objectives of an assignment (which backend, at which precision, runs each node), predicted
// without running it: latency, the sum of its kernels as each backend's pack predicts them, layout
// conversions where backends meet and quantizes/dequantizes where precisions meet included (each
// predicted as the kernel it is, by the pack of the backend that runs it); memory, the heap each
// node's preparation keeps on its backend (measured, see node_memory.h) plus the executor's
// activation arena for the planned graph (the activations alive at once, run/tensor_buffers.h).
// (The third, drift, is measured per op: search/int8_drift.h.)

#include <cstddef>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "ir/kernel_graph.h"
#include "predict/pack.h"
#include "run/backend.h"
#include "search/node_memory.h"

namespace latte {

/// One choice of a search, a backend at a precision, and the pack its kernels are predicted with
/// (a pack of that backend and precision).
struct SearchBackend {
  std::string name;
  const Pack* pack = nullptr;
  Precision precision = Precision::kFp32;
  BackendChoice choice() const { return {name, precision}; }
  std::string Label() const { return choice().Label(); }
};

/// Each choice has a pack of its backend and precision, no choice is listed twice, and bf16 choices
/// are not mixed with others (a bf16 run is bf16 throughout). Fails saying which.
Status CheckSearchBackends(const std::vector<SearchBackend>& backends);

struct AssignmentCost {
  double time_ms = 0;           // every predicted kernel, conversions included
  double conversion_ms = 0;     // of which layout conversions inserted where backends meet
  std::size_t kernels = 0;      // predicted kernels, conversions included
  std::size_t conversions = 0;
  std::size_t fallbacks = 0;    // nodes their chosen backend cannot run, moved to the fallback
  std::size_t int8_nodes = 0;   // user nodes that run int8 (their choice is int8 and their backend runs them so)
  double prepared_kb = 0;       // what the backends in use and the nodes' preparations keep
  double activations_kb = 0;    // the activation arena of the planned graph
  double memory_kb() const { return prepared_kb + activations_kb; }
  /// Kernels whose backend's pack cannot predict them while another pack can ("node 'x' (div)
  /// on xnnpack: why"). The time leaves them out, so this assignment cannot be compared with
  /// the others: complete() is false and the search must not rank it.
  std::vector<std::string> unpredicted;
  bool complete() const { return unpredicted.empty(); }
};

class CostModel {
 public:
  /// backends[0] is the fallback: a node its chosen backend cannot run runs there (as the
  /// executor does with Placement::fallback). A node whose choice is int8 runs int8 when its
  /// backend runs it int8 in the whole model at int8 (NodeOnBackend::int8), else fp32 there;
  /// quantize and dequantize nodes are inserted where precisions meet, as the executor's lowering
  /// inserts them. bf16 choices cannot be mixed with others (a bf16 run is bf16 throughout).
  /// Fails when a pack is missing or for another backend or precision, or when the fallback cannot
  /// run some node.
  static Expected<CostModel> Create(const Graph& graph, std::vector<SearchBackend> backends, NodeMemory memory);

  /// `choice[i]` is the index in backends() of user node i's backend and precision.
  Expected<AssignmentCost> Evaluate(const std::vector<int>& choice) const;

  const std::vector<SearchBackend>& backends() const { return backends_; }
  /// Nodes left out of every assignment's time alike, with why: those in no kernel (an op
  /// with no kernel model), and those no all-on-one-backend assignment predicts either. Any
  /// other unpredicted kernel makes its assignment incomplete.
  const std::map<std::string, std::string>& never_predicted() const { return never_predicted_; }

 private:
  CostModel() = default;
  Expected<Prediction> PredictOn(std::size_t backend, const Kernel& kernel) const;
  /// The user nodes of kernels `choice` leaves unpredicted (the probe for always_out_).
  Expected<AssignmentCost> EvaluateWith(const std::vector<int>& choice, std::vector<NodeId>* unpredicted_nodes) const;
  /// The plan of `laid_out` as the assignment runs it (`where`: choice index per user node, after
  /// fallbacks), lowered to int8 where it chose int8. Counts int8 nodes into `cost`.
  GraphPlan PlanFor(const Graph& laid_out, const std::vector<int>& where, const std::vector<std::string>& wanted,
                    AssignmentCost& cost) const;
  /// The choice running inserted node `k` of `plan`: where its neighbours run (as the executor
  /// puts it), at int8 when it is a quantize, a dequantize or a node lowered to int8.
  std::size_t InsertedChoice(const GraphPlan& plan, const std::vector<std::string>& wanted, NodeId k, bool int8) const;

  const Graph* graph_ = nullptr;
  std::vector<SearchBackend> backends_;
  std::vector<FusionRules> rules_;
  NodeMemory memory_;
  bool any_int8_ = false;  // some choice is int8: plans are lowered where the assignment chose int8
  bool bf16_ = false;      // every choice is bf16: plans are lowered to bf16 throughout
  mutable std::unordered_map<std::string, Expected<Prediction>> predictions_;  // "backend|kernel key"
  NhwcBackends nhwc_;  // of backends_, those whose packs say they take NHWC
  mutable std::map<std::vector<bool>, Graph> laid_out_;  // by which user nodes run NHWC
  std::vector<bool> always_out_;  // per user node: unpredicted under every all-on-one-backend assignment
  mutable std::map<std::string, std::string> never_predicted_;
};

}  // namespace latte
