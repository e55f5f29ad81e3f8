#pragma once
// Latte Graph → ONNX model bytes (libonnx's protobuf types), for ONNX Runtime. NHWC (TFLite)
// spatial ops are wrapped in Transposes to NCHW and back (ORT's optimizer cancels the pairs);
// weights are rewritten into ONNX layouts; a fused "activation" becomes its own node.

#include <map>
#include <string>

#include "core/status.h"
#include "ir/graph.h"

namespace latte {

/// The opset the exported models declare (HardSwish needs 14; axes stay attributes below 18).
inline constexpr int kOnnxExportOpset = 14;

/// Exports the whole graph. Graph inputs and outputs keep their tensor names; the ONNX nodes
/// made for Latte node N are named "nN" or "nN/<part>" (see OnnxNodeOwner). An op with no ONNX
/// form fails with kUnsupported naming the node. Shapes must be known.
/// `owners`, when given, gets every ONNX node name and every tensor name an exported node
/// writes, mapped to the Latte node it came from (profilers name ORT's fused nodes after them).
Expected<std::string> ExportOnnx(const Graph& graph, std::map<std::string, NodeId>* owners = nullptr);

/// Exports node `id` alone: its activation inputs become graph inputs, its constants
/// initializers and its outputs graph outputs (a one-kernel model).
Expected<std::string> ExportOnnxNode(const Graph& graph, NodeId id);

/// Whether node `id` has an ONNX form: Ok, or kUnsupported saying why.
Status CheckOnnxExportable(const Graph& graph, NodeId id);

/// The Latte node an exported ONNX node name ("n12", "n12/act") belongs to; -1 if none.
NodeId OnnxNodeOwner(const std::string& onnx_node_name);

/// Whether an exported ONNX node is one of the Transposes wrapped around an NHWC spatial op
/// ("n12/pre0", "n12/post2"): a layout change, which ORT cancels between neighbouring spatial ops
/// of a model but keeps around a kernel exported alone.
bool IsOnnxLayoutTranspose(const std::string& onnx_node_name);

}  // namespace latte
