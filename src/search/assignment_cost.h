#pragma once
// The two objectives of an assignment (which backend runs each node), predicted without running
// it: latency, the sum of its kernels as each backend's pack predicts them, layout conversions
// where backends meet included (each predicted as the kernel it is, by the pack of the backend
// that runs it); memory, the heap each node's preparation keeps on its backend (measured, see
// node_memory.h) plus the executor's activation arena for the planned graph (the activations
// alive at once, run/tensor_buffers.h).

#include <cstddef>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "ir/kernel_graph.h"
#include "predict/pack.h"
#include "search/node_memory.h"

namespace latte {

/// One backend of a search and the pack its kernels are predicted with.
struct SearchBackend {
  std::string name;
  const Pack* pack = nullptr;
};

struct AssignmentCost {
  double time_ms = 0;           // every predicted kernel, conversions included
  double conversion_ms = 0;     // of which layout conversions inserted where backends meet
  std::size_t kernels = 0;      // predicted kernels, conversions included
  std::size_t conversions = 0;
  std::size_t fallbacks = 0;    // nodes their chosen backend cannot run, moved to the fallback
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
  /// executor does with Placement::fallback). Fails when a pack is missing or for another
  /// backend, or when the fallback cannot run some node.
  static Expected<CostModel> Create(const Graph& graph, std::vector<SearchBackend> backends, NodeMemory memory);

  /// `choice[i]` is the index in backends() of user node i's backend.
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

  const Graph* graph_ = nullptr;
  std::vector<SearchBackend> backends_;
  std::vector<FusionRules> rules_;
  NodeMemory memory_;
  mutable std::unordered_map<std::string, Expected<Prediction>> predictions_;  // "backend|kernel key"
  NhwcBackends nhwc_;  // of backends_, those whose packs say they take NHWC
  mutable std::map<std::vector<bool>, Graph> laid_out_;  // by which user nodes run NHWC
  std::vector<bool> always_out_;  // per user node: unpredicted under every all-on-one-backend assignment
  mutable std::map<std::string, std::string> never_predicted_;
};

}  // namespace latte
