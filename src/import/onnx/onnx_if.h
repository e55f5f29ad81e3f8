#pragma once
// An If whose condition is a constant at import (folded, or an input given with
// --input-value): the chosen branch's nodes replace it in the main graph.

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "import/onnx/onnx_import_state.h"

namespace latte::onnx_import {

/// The branch an If takes when its condition is a constant single value (true: then_branch),
/// else nullopt.
std::optional<bool> ConstantIfCondition(const ImportState& state, const onnx::NodeProto& proto);

/// Why an If whose condition is not constant stays: names its condition and the graph inputs
/// that condition depends on, with the --input-value that would make it constant.
std::string WhyIfStays(const onnx::GraphProto& graph, const onnx::NodeProto& proto);

struct IfChoice {
  int index;  // of the If node in the graph
  bool then_branch;
};

/// Replaces each chosen If by its branch's nodes and initializers, their names made unique
/// (prefixed with the If's name), the branch's outputs written to the If's outputs.
/// Outer-scope names the branch reads stay as they are. Fails on a malformed If (a branch
/// missing, or with more outputs than the If).
Status InlineIfs(onnx::GraphProto& graph, std::vector<IfChoice> choices);

}  // namespace latte::onnx_import
