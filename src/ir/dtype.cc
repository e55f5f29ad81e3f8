#include "ir/dtype.h"

#include <array>
#include <cstring>
#include <string>
#include <utility>

namespace latte {
namespace {
struct TypeInfo {
  DataType type;
  std::string_view name;
  std::size_t size;
};
constexpr std::array<TypeInfo, 12> kTypes = {{
    {DataType::kUnknown, "unknown", 0}, {DataType::kFloat32, "float32", 4},
    {DataType::kFloat16, "float16", 2}, {DataType::kFloat64, "float64", 8},
    {DataType::kInt8, "int8", 1},       {DataType::kUInt8, "uint8", 1},
    {DataType::kInt16, "int16", 2},     {DataType::kInt32, "int32", 4},
    {DataType::kInt64, "int64", 8},     {DataType::kBool, "bool", 1},
    {DataType::kString, "string", 0},   {DataType::kBFloat16, "bfloat16", 2},
}};
}  // namespace

std::string_view DataTypeName(DataType type) {
  for (const auto& t : kTypes)
    if (t.type == type) return t.name;
  return "unknown";
}

std::optional<DataType> DataTypeFromName(std::string_view name) {
  for (const auto& t : kTypes)
    if (t.name == name) return t.type;
  return std::nullopt;
}

std::size_t DataTypeSize(DataType type) {
  for (const auto& t : kTypes)
    if (t.type == type) return t.size;
  return 0;
}

Expected<DataType> DataTypeFromPrecision(std::string_view precision) {
  if (precision == "fp32") return DataType::kFloat32;
  if (precision == "fp16") return DataType::kFloat16;
  if (precision == "bf16") return DataType::kBFloat16;
  if (precision == "int8") return DataType::kInt8;
  return InvalidInput("unknown precision '" + std::string(precision) + "' (fp32, fp16, bf16 or int8)");
}

std::uint16_t FloatToBf16(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0)
    return static_cast<std::uint16_t>((bits >> 16) | 0x0040u);  // NaN: quiet, sign kept
  bits += 0x7fffu + ((bits >> 16) & 1u);  // round to nearest, ties to even (may carry into inf)
  return static_cast<std::uint16_t>(bits >> 16);
}

float Bf16ToFloat(std::uint16_t bits) {
  const std::uint32_t wide = static_cast<std::uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

}  // namespace latte
