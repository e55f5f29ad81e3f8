#pragma once
// How far a run's outputs are from a reference run's on the same inputs: what a lower precision
// (bf16, int8) costs in accuracy, beside what it saves in time. Per graph output: the largest
// absolute difference and the cosine similarity of the two outputs as vectors.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "ir/graph.h"
#include "run/tensor_buffers.h"

namespace latte {

/// One graph output against the reference's.
struct OutputDrift {
  std::string name;
  std::int64_t elements = 0;
  double max_abs_diff = 0;  // over the elements finite in both
  double cosine = 1;        // of the finite pairs; exactly 1 when they are equal, 0 when only one is all zero
  /// Elements non-finite (NaN, ±inf) in one run and not the same in the other: left out of both
  /// figures above, and counted here so they are not hidden.
  std::int64_t nonfinite_mismatches = 0;
};

/// A run's drift: one entry per graph output, and the worst of them.
struct RunDrift {
  bool measured = false;
  std::string reference;  // what the outputs were compared with: "fp32 (this run)", "fp32"
  std::string why;        // when !measured: why there is no comparison
  std::vector<OutputDrift> outputs;
  double max_abs_diff = 0;            // the largest over the outputs
  double cosine = 1;                  // the lowest over the outputs
  std::int64_t nonfinite_mismatches = 0;
};

/// Compares every graph output of `graph` in `run` with the same tensor in `reference` (each
/// allocated for a plan of `graph`, so the graph's output ids address both). Outputs of float32,
/// bfloat16, integer and bool types are compared as numbers; fails naming an output whose two
/// buffers differ in size or whose type is not numeric.
Expected<RunDrift> CompareOutputs(const Graph& graph, const TensorBuffers& reference, const TensorBuffers& run,
                                  std::string reference_name);

/// {"reference", "max_abs_diff", "cosine", "nonfinite_mismatches", "outputs": [{"name", "elements",
/// "max_abs_diff", "cosine", "nonfinite_mismatches"}]}, or {"why"} when not measured.
nlohmann::json RunDriftToJson(const RunDrift& drift);
RunDrift RunDriftFromJson(const nlohmann::json& json);

}  // namespace latte
