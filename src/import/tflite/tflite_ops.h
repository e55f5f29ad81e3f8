#pragma once
// TFLite operators → Latte nodes, following the conventions of ir/op_kinds.def.

#include <cstddef>

#include "core/status.h"
#include "import/tflite/tflite_model.h"
#include "ir/graph.h"

namespace latte::tflite {

/// Maps operator `index` of `model` to a node whose inputs and outputs are the file's tensor
/// indices (kNoTensor for absent inputs). Constant inputs that Latte keeps as attributes
/// (shapes, paddings, axes, sizes) are read into attributes and left out of the inputs.
/// Ops Latte has no kind for, or whose configuration is only known at run time, become
/// kOpaque with source_op and unsupported_reason set. Fails on malformed options.
Expected<Node> MapOperator(const TfModel& model, std::size_t index);

}  // namespace latte::tflite
