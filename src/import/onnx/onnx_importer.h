#pragma once
// ONNX importer: reads the ModelProto with libonnx's protobuf types.

#include <cstdint>
#include <span>

#include "core/status.h"
#include "import/import.h"
#include "ir/graph.h"

namespace latte {

/// Builds the main graph: initializers and Constant nodes become constants; dynamic input dims
/// are set from `options` (or batch 1); ONNX's shape inference fills value shapes where it
/// can; BatchNormalization after a constant Conv is folded into it. Ops Latte does not know
/// become kOpaque nodes named after their op type. Does not run Latte's shape inference.
Expected<Graph> ImportOnnx(std::span<const std::uint8_t> bytes, const ImportOptions& options);

}  // namespace latte
