#pragma once
// The third objective of a per-op precision search: how far an assignment's outputs drift from
// fp32's. Running every assignment is out of reach (brute force evaluates tens of thousands), so
// each op list entry is measured once per int8 choice: the model run with only that entry's nodes
// at int8 (every other node fp32, same backend), against the same backend's fp32 run on the same
// generated inputs. An assignment's drift is then estimated as the sum of its int8 entries'
// drifts: 1 - cosine is, for small errors, the error's energy over the output's, and independent
// errors' energies add. `pareto --verify` measures the real drift of the assignments it runs.

#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "run/backend_registry.h"
#include "run/output_drift.h"
#include "search/encoding.h"
#include "search/node_memory.h"

namespace latte {

struct Int8Drift {
  /// per_entry[e][b]: 1 - cosine of the outputs (the lowest cosine over the graph's outputs) with
  /// only op list entry e's nodes int8 on choice b; 0 for an fp32 choice, and for an entry none of
  /// whose nodes choice b runs int8. A run whose outputs turn non-finite where fp32's are not
  /// counts as 2 (cosine -1: as far as outputs can be).
  std::vector<std::vector<double>> per_entry;
  bool measured = false;  // some choice is int8
  std::size_t runs = 0;   // int8 runs made (one per entry and int8 choice that runs some of its nodes int8)
  /// The estimated drift of an assignment (its digits, one per op list entry): the sum.
  double Estimate(const std::vector<int>& digits) const;
};

/// A run's drift as this objective counts it: 1 - its lowest cosine, or 2 when it has non-finite
/// mismatches.
double DriftFigure(const RunDrift& drift);

/// Measures per_entry for every int8 choice (each in a child process of its own, so this process
/// never starts a backend). The fallback for a node a choice's backend cannot run is choices[0]'s
/// backend, as in the search. Fails when a run fails.
Expected<Int8Drift> MeasureInt8Drift(const Graph& graph, const OpList& ops, const std::vector<BackendChoice>& choices,
                                     const NodeMemory& memory, const BackendRegistry& registry, const RunOptions& run);

}  // namespace latte
