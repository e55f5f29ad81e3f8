#pragma once
// Tensor: a value in the graph, with its shape, element type, quantization and, for
// constants, its data.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/dtype.h"

namespace latte {

/// Dimensions; kUnknownDim marks a dimension not known before run time.
using Shape = std::vector<std::int64_t>;
inline constexpr std::int64_t kUnknownDim = -1;

/// Affine quantization: real = scale * (q - zero_point), per tensor or per channel on `axis`.
struct QuantParams {
  std::vector<float> scale;
  std::vector<std::int64_t> zero_point;
  std::int32_t axis = 0;
  bool empty() const { return scale.empty(); }
  bool operator==(const QuantParams&) const = default;
};

struct Tensor {
  std::string name;
  DataType dtype = DataType::kFloat32;
  Shape shape;
  bool shape_known = false;  // false: rank unknown (shape is empty then)
  QuantParams quant;
  /// Constant data (little-endian, row-major in `shape`); null for activations. Shared so
  /// that copying a graph does not copy weights.
  std::shared_ptr<const std::vector<std::uint8_t>> data;

  bool is_constant() const { return data != nullptr; }
  /// True when the rank and every dimension are known.
  bool fully_known() const;
  /// Product of dims; nullopt if any is unknown or the product overflows.
  std::optional<std::int64_t> num_elements() const;
  /// num_elements() * element size; nullopt if unknown.
  std::optional<std::int64_t> num_bytes() const;
};

/// "1x3x224x224", "?" for unknown dims, "*" for unknown rank, "scalar" for rank 0.
std::string ShapeToString(const Shape& shape, bool shape_known = true);
/// Parses "1x3x48x192" (positive dims only).
Expected<Shape> ParseShape(const std::string& text);
/// Product with overflow check; nullopt if a dim is unknown/negative or it overflows int64.
std::optional<std::int64_t> ShapeElements(const Shape& shape);

/// Reads constant integer data (int32 or int64) as int64; fails for other types or no data.
Expected<std::vector<std::int64_t>> ConstantInts(const Tensor& tensor);
/// Reads constant float data (float32, float16, bfloat16 or float64) as float.
Expected<std::vector<float>> ConstantFloats(const Tensor& tensor);

}  // namespace latte
