#pragma once
// What each node of a model costs to keep ready on each backend, measured on this machine:
// whether the backend runs it (and why not), and the memory its preparation and first run keep
// (weights packed in the backend's own layout, primitives, generated code, workspaces), plus
// what the backend itself costs once used (its thread pool, its code paged in).
// The Pareto search's memory objective adds these to the activations; a preparation is cheap
// (no inference runs), so measuring every node on every backend stays far from running every
// assignment.

#include <cstddef>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "run/backend.h"
#include "run/backend_registry.h"

namespace latte {

/// A backend at a precision: what one digit of a per-op assignment chooses.
struct BackendChoice {
  std::string backend;
  Precision precision = Precision::kFp32;
  /// "xnnpack" at fp32, else "xnnpack@int8".
  std::string Label() const;
};

struct NodeOnBackend {
  bool supported = false;
  std::string why;              // when not supported: the backend's reason
  std::size_t prepared_bytes = 0;  // what preparing and running it once keep (0 when not supported)
  /// At int8: whether the backend runs it int8 when it runs the whole model int8, and why not.
  bool int8 = false;
  std::string fp32_why;
};

/// per_node[node][b]: user node `node` of the graph on backends[b].
struct NodeMemory {
  std::vector<BackendChoice> backends;
  std::vector<std::vector<NodeOnBackend>> per_node;
  std::vector<std::size_t> backend_bytes;  // per backend: what creating and warming it up keeps
};

/// Prepares and runs once every node of `graph` on each backend (the graph laid out and fused
/// as that backend alone runs it at that precision, PlanGraphOnBackend's plan; a folded
/// activation's bytes go to the op it is folded into, an inserted quantize's, dequantize's or
/// cast's to the node before it, or after it when it converts an input)
/// and measures what each keeps: the growth of the resident set, or of the heap in use when that
/// is larger (memory freed earlier and reused does not grow the resident set); creating the
/// backend and warming it up on a tiny conv and add is its one-time cost (thread pools, runtime
/// buffers, common code paged in). Each backend
/// in a child process of its own, so this process never starts the backends' thread pools or
/// runtimes. Fails on an unknown backend or a failed preparation or run.
Expected<NodeMemory> MeasureNodeMemory(const Graph& graph, const std::vector<BackendChoice>& backends,
                                       const BackendRegistry& registry, const RunOptions& options);

}  // namespace latte
