#pragma once
// What the ONNX importer's steps share while the graph is being built: the graph so far,
// the model's opset and the map from ONNX value names to Latte tensors.

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <unordered_map>

#include "ir/graph.h"

namespace latte::onnx_import {

struct ImportState {
  Graph graph;
  /// Version of the default ("ai.onnx") operator set the model imports.
  std::int64_t opset = 1;
  /// ONNX value name → tensor. Every node output, initializer and graph input has one
  /// before any node is converted, so nodes can be converted in any order.
  std::unordered_map<std::string, TensorId> values;
};

/// `text` with control characters (a newline in a hostile name) shown as '?', so that names
/// and messages stay on one line.
inline std::string Printable(std::string text) {
  for (char& c : text)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return text;
}

/// True for the default operator set's domain ("" or "ai.onnx").
inline bool IsDefaultDomain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

/// "Conv", or "com.microsoft.FusedConv" for an op of another domain: a node's source_op.
inline std::string SourceOpName(const onnx::NodeProto& node) {
  return IsDefaultDomain(node.domain()) ? node.op_type() : node.domain() + "." + node.op_type();
}

/// The node's name in the file, or its first output's when it has none.
inline std::string NodeName(const onnx::NodeProto& node) {
  if (!node.name().empty()) return node.name();
  for (const auto& out : node.output())
    if (!out.empty()) return out;
  return node.op_type();
}

/// "node 12 'conv1' (Conv)": how messages name an ONNX node (index in the file's order).
inline std::string DescribeOnnxNode(const onnx::NodeProto& node, int index) {
  return "node " + std::to_string(index) + " '" + NodeName(node) + "' (" + SourceOpName(node) + ")";
}

}  // namespace latte::onnx_import
