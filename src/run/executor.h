#pragma once
// Executor: runs a Graph with a backend chosen per node (one for all by default; per op kind or
// per node for the Pareto search). A node its backend cannot run goes to the named fallback
// backend, or the executor refuses to start, saying which node and why: never silently wrong.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "run/backend_registry.h"

namespace latte {

/// Which backend runs which node. Most specific wins: by node, then by op kind, then default.
struct Placement {
  std::string default_backend = "xnnpack";
  std::map<OpKind, std::string> by_op_kind;
  std::map<NodeId, std::string> by_node;
  /// Backend for nodes the chosen one cannot run; empty = such a node is an error.
  std::string fallback;
  std::string BackendFor(const Graph& graph, NodeId node) const;
};

/// Where a node ended up and why.
struct NodeAssignment {
  std::string backend;
  bool fell_back = false;
  std::string why;  // the chosen backend's "no", when it fell back
};

class Executor {
 public:
  /// Creates the backends `placement` names, checks support, prepares every node (weights packed
  /// once) and allocates buffers. The graph must outlive the executor.
  static Expected<std::unique_ptr<Executor>> Create(const Graph& graph, const Placement& placement,
                                                    const BackendRegistry& registry, const RunOptions& options);

  /// Runs every node once, in order.
  Status Run();
  /// Runs every node once and adds each node's wall time in microseconds to `node_us`
  /// (resized to the node count on first use).
  Status RunProfiled(std::vector<double>& node_us);

  TensorBuffers& buffers() { return buffers_; }
  const std::vector<NodeAssignment>& assignments() const { return assignments_; }
  /// "xnnpack XNNPACK 2022-02-16 (1 thread)" per backend in use.
  std::vector<std::string> BackendVersions() const;

 private:
  Executor(const Graph& graph, TensorBuffers buffers) : graph_(graph), buffers_(std::move(buffers)) {}
  const Graph& graph_;
  TensorBuffers buffers_;
  std::map<std::string, std::unique_ptr<Backend>> backends_;
  std::vector<std::unique_ptr<PreparedNode>> prepared_;
  std::vector<NodeAssignment> assignments_;
};

/// Fills every graph input with uniform random values in [-1, 1) (fixed seed): the protocol's
/// random inputs. Non-float inputs are zeroed.
void FillRandomInputs(const Graph& graph, TensorBuffers& buffers, unsigned seed = 0);

}  // namespace latte
