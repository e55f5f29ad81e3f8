#pragma once
// ONNX node → Latte node(s), following the conventions of ir/op_kinds.def.

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "core/status.h"
#include "import/onnx/onnx_import_state.h"

namespace latte::onnx_import {

/// Adds the Latte node(s) for one ONNX node (not a Constant and not folded away). An op Latte
/// does not know, or cannot map because an input it needs is not a constant, becomes one
/// kOpaque node saying why, with the file's shapes. Fails only on bad input (an attribute of
/// the wrong type, a malformed value), naming the node by its `index` in the file. For an op
/// Latte has no kind for, `why_opaque` (when not empty) is the reason the opaque node gives
/// (why the import could not fold it) instead of "not supported".
Status AddOnnxNode(ImportState& state, const onnx::NodeProto& proto, int index, const std::string& why_opaque = "");

/// Names a node's subgraphs (If, Loop, Scan bodies) read from the enclosing graph without
/// listing them as inputs: the opaque node must depend on them too.
std::vector<std::string> OuterScopeReads(const onnx::NodeProto& proto);

}  // namespace latte::onnx_import
