#pragma once
// TFLite importer: reads the flatbuffer with flatbuffers' generic table access and the
// format's field ids (no TensorFlow code or schema).

#include <cstdint>
#include <span>

#include "core/status.h"
#include "ir/graph.h"

namespace latte {

/// Builds the main subgraph (subgraph 0) as a Graph with the file's shapes. Constant weights in
/// fp16 (behind DEQUANTIZE) or sparse (behind DENSIFY) become dense float32 constants.
/// Unknown ops become kOpaque nodes named after their builtin or custom code.
/// Every offset and index is checked: bad input gives kInvalidInput naming the table,
/// never a crash. Does not run shape inference (ImportModel does).
Expected<Graph> ImportTflite(std::span<const std::uint8_t> bytes);

}  // namespace latte
