#pragma once
// Element types of tensors, with their names and sizes.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "core/status.h"

namespace latte {

/// Element type of a tensor. kUnknown marks a type an importer could not map. A cast kernel's
/// key spells its output type by this enum's value: new types go at the end.
/// kBFloat16 (bfloat16: float32's sign, exponent and top 7 mantissa bits) is what a graph run at
/// --precision bf16 holds between nodes; no importer produces it.
enum class DataType { kUnknown, kFloat32, kFloat16, kFloat64, kInt8, kUInt8, kInt16, kInt32, kInt64, kBool, kString, kBFloat16 };

/// "float32", "int8", ...
std::string_view DataTypeName(DataType type);
std::optional<DataType> DataTypeFromName(std::string_view name);
/// Bytes per element; 0 for kUnknown and kString.
std::size_t DataTypeSize(DataType type);
/// The dtype a precision name (packs, stores, flags) stands for: "fp32" float32, "fp16" float16,
/// "bf16" bfloat16, "int8" int8.
Expected<DataType> DataTypeFromPrecision(std::string_view precision);

/// float32 → bfloat16 bits, rounded to nearest even (NaN stays a quiet NaN), as oneDNN's
/// conversion and AVX-512 BF16's vcvtneps2bf16 round.
std::uint16_t FloatToBf16(float value);
/// bfloat16 bits → float32 (exact).
float Bf16ToFloat(std::uint16_t bits);

}  // namespace latte
