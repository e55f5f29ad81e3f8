#pragma once
// The checks every fp32 backend makes before saying it can run a node, with the same wording
// everywhere: a "no" from any backend reads the same way.

#include <cstddef>
#include <string_view>

#include "core/status.h"
#include "ir/graph.h"

namespace latte {

/// Every input (except `skip_input`, e.g. reshape's shape) and the single output must be
/// float32, fully known, non-empty and of rank ≤ `max_rank`; int8 is "not implemented".
/// `backend` names the backend in the message ("xnnpack runs fp32 only").
Status CheckFloatTensors(const Graph& graph, const Node& node, int skip_input, std::string_view backend,
                         std::size_t max_rank);
/// Inputs 0..n-1 must be present.
Status NeedInputs(const Node& node, std::size_t n);
/// Input `i`, when present, must be a constant (`what` names it: "weights", "bias").
Status NeedConstant(const Graph& graph, const Node& node, std::size_t i, const char* what);

}  // namespace latte
