#pragma once
// The ONNX ops that are one Latte kind each, with the same inputs and no attribute to translate:
// the one table the importer maps them by and the exporter writes them from. An op that needs
// code (attributes, extra inputs, several nodes) is mapped in onnx_node_mapper and written in
// onnx_export instead.

#include <span>
#include <string_view>

#include "ir/op_kind.h"

namespace latte {

struct OnnxOneToOne {
  std::string_view onnx_op;  // "Exp"
  OpKind kind;               // OpKind::kExp
};

/// Every such pair; each kind appears once.
std::span<const OnnxOneToOne> OnnxOneToOneOps();

}  // namespace latte
