#pragma once
// What the whole-graph run tests share: a graph run through the Executor on random inputs, and
// two runs' outputs compared.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "run/backend_registry.h"
#include "run/executor.h"

namespace latte::testing {

using Outputs = std::vector<std::vector<float>>;

/// One run of a whole graph: every graph output, and where each node ran.
struct GraphRun {
  Outputs outputs;
  std::vector<NodeAssignment> assignments;
  std::size_t entries = 0;  // the prepared graph's nodes the executor runs
  int FellBack() const {
    return static_cast<int>(std::count_if(assignments.begin(), assignments.end(),
                                          [](const NodeAssignment& a) { return a.fell_back; }));
  }
};

/// Runs `graph` once under `placement` on the inputs FillRandomInputs draws from `seed`.
inline Expected<GraphRun> RunGraph(const Graph& graph, const Placement& placement, const BackendRegistry& registry,
                                   unsigned seed, int num_threads = 1) {
  RunOptions options;
  options.num_threads = num_threads;
  LATTE_ASSIGN_OR_RETURN(auto executor, Executor::Create(graph, placement, registry, options));
  FillRandomInputs(graph, executor->buffers(), seed);
  LATTE_RETURN_IF_ERROR(executor->Run());
  GraphRun run;
  run.assignments = executor->assignments();
  run.entries = executor->entries().size();
  for (TensorId id : graph.outputs) {
    const float* data = executor->buffers().as<float>(id);
    run.outputs.emplace_back(data, data + executor->buffers().bytes(id) / sizeof(float));
  }
  return run;
}

/// The placement of every node on `backend`, falling back to `fallback` (none when empty).
inline Placement On(const std::string& backend, const std::string& fallback = "") {
  Placement p;
  p.default_backend = backend;
  p.fallback = fallback;
  return p;
}

/// Every output finite, non-empty, of the same size, and its max abs difference within `rel` of
/// the wanted output's largest magnitude (at least 1): different kernels sum in different orders,
/// and deep models carry the rounding through many layers.
inline void ExpectOutputsClose(const Outputs& got, const Outputs& want, double rel, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t o = 0; o < got.size(); ++o) {
    ASSERT_EQ(got[o].size(), want[o].size()) << what << " output " << o;
    ASSERT_FALSE(want[o].empty()) << what << " output " << o;
    double scale = 1.0, worst = 0.0;
    size_t at = 0;
    for (float v : want[o]) scale = std::max(scale, static_cast<double>(std::abs(v)));
    for (size_t i = 0; i < got[o].size(); ++i) {
      ASSERT_TRUE(std::isfinite(got[o][i]) && std::isfinite(want[o][i])) << what << " output " << o << " element " << i;
      const double err = std::abs(static_cast<double>(got[o][i]) - want[o][i]);
      if (err > worst) worst = err, at = i;
    }
    EXPECT_LE(worst, rel * scale) << what << " output " << o << " element " << at << ": " << got[o][at] << " vs "
                                  << want[o][at];
  }
}

}  // namespace latte::testing
