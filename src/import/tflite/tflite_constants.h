#pragma once
// Constant folding at import: sparse weights (TFLite's sparsity format) and fp16 or
// quantized weights behind DEQUANTIZE become dense constants, so the graph shows the
// weights the kernels really use and no DENSIFY or DEQUANTIZE of constants.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "import/tflite/tflite_model.h"

namespace latte::tflite {

/// Bytes of data the importer may create by expanding constants (dense from sparse,
/// float32 from fp16/int8); stops a small hostile file from asking for gigabytes.
class ByteBudget {
 public:
  explicit ByteBudget(std::uint64_t bytes) : left_(bytes) {}
  /// Takes `bytes` or fails naming `what`.
  Status Take(std::uint64_t bytes, const std::string& what);

 private:
  std::uint64_t left_;
};

/// Expands sparse `values` (elements of `element_size` bytes) to dense row-major data in
/// `shape`. Checks every level, segment and index; fails naming `where` and what is wrong.
Expected<std::vector<std::uint8_t>> DensifyData(const SparsityInfo& sparsity, const Shape& shape,
                                                std::size_t element_size, std::span<const std::uint8_t> values,
                                                ByteBudget& budget, const std::string& where);

/// Folds DENSIFY and DEQUANTIZE operators whose input is constant (following chains such as
/// sparse fp16 → DENSIFY → DEQUANTIZE): their outputs become constants and `folded[i]` is
/// set for each operator removed. Then densifies sparse constants that other operators
/// read directly. Expects producers already checked (one writer per tensor).
Status FoldConstants(TfModel& model, std::vector<bool>& folded, ByteBudget& budget);

}  // namespace latte::tflite
