#include "ir/dtype.h"

#include <array>
#include <string>
#include <utility>

namespace latte {
namespace {
struct TypeInfo {
  DataType type;
  std::string_view name;
  std::size_t size;
};
constexpr std::array<TypeInfo, 11> kTypes = {{
    {DataType::kUnknown, "unknown", 0}, {DataType::kFloat32, "float32", 4},
    {DataType::kFloat16, "float16", 2}, {DataType::kFloat64, "float64", 8},
    {DataType::kInt8, "int8", 1},       {DataType::kUInt8, "uint8", 1},
    {DataType::kInt16, "int16", 2},     {DataType::kInt32, "int32", 4},
    {DataType::kInt64, "int64", 8},     {DataType::kBool, "bool", 1},
    {DataType::kString, "string", 0},
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
  if (precision == "int8") return DataType::kInt8;
  return InvalidInput("unknown precision '" + std::string(precision) + "' (fp32, fp16 or int8)");
}

}  // namespace latte
