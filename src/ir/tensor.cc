#include "ir/tensor.h"

#include <cstring>
#include <limits>

#include "ir/half.h"

namespace latte {

bool Tensor::fully_known() const {
  if (!shape_known) return false;
  for (auto d : shape)
    if (d < 0) return false;
  return true;
}

std::optional<std::int64_t> ShapeElements(const Shape& shape) {
  std::int64_t n = 1;
  for (auto d : shape) {
    if (d < 0) return std::nullopt;
    if (d != 0 && n > std::numeric_limits<std::int64_t>::max() / d) return std::nullopt;
    n *= d;
  }
  return n;
}

std::optional<std::int64_t> Tensor::num_elements() const {
  if (!shape_known) return std::nullopt;
  return ShapeElements(shape);
}

std::optional<std::int64_t> Tensor::num_bytes() const {
  auto n = num_elements();
  if (!n) return std::nullopt;
  auto size = static_cast<std::int64_t>(DataTypeSize(dtype));
  if (size != 0 && *n > std::numeric_limits<std::int64_t>::max() / size) return std::nullopt;
  return *n * size;
}

std::string ShapeToString(const Shape& shape, bool shape_known) {
  if (!shape_known) return "*";
  if (shape.empty()) return "scalar";
  std::string out;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += 'x';
    out += shape[i] < 0 ? std::string("?") : std::to_string(shape[i]);
  }
  return out;
}

Expected<Shape> ParseShape(const std::string& text) {
  Shape shape;
  size_t pos = 0;
  if (text.empty()) return InvalidInput("empty shape");
  while (pos <= text.size()) {
    size_t end = text.find_first_of("x,", pos);
    if (end == std::string::npos) end = text.size();
    std::string part = text.substr(pos, end - pos);
    if (part.empty() || part.size() > 12 || part.find_first_not_of("0123456789") != std::string::npos)
      return InvalidInput("bad shape '" + text + "': expected positive integers joined by 'x', like 1x3x224x224");
    std::int64_t d = std::stoll(part);
    if (d <= 0) return InvalidInput("bad shape '" + text + "': dimensions must be positive");
    shape.push_back(d);
    pos = end + 1;
  }
  return shape;
}

Expected<std::vector<std::int64_t>> ConstantInts(const Tensor& tensor) {
  if (!tensor.is_constant()) return InvalidInput("tensor '" + tensor.name + "' is not a constant");
  const auto& bytes = *tensor.data;
  std::vector<std::int64_t> out;
  if (tensor.dtype == DataType::kInt64) {
    out.resize(bytes.size() / 8);
    if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * 8);
  } else if (tensor.dtype == DataType::kInt32) {
    std::vector<std::int32_t> tmp(bytes.size() / 4);
    if (!tmp.empty()) std::memcpy(tmp.data(), bytes.data(), tmp.size() * 4);
    out.assign(tmp.begin(), tmp.end());
  } else {
    return InvalidInput("tensor '" + tensor.name + "' has type " + std::string(DataTypeName(tensor.dtype)) +
                        ", expected int32 or int64");
  }
  return out;
}

Expected<std::vector<float>> ConstantFloats(const Tensor& tensor) {
  if (!tensor.is_constant()) return InvalidInput("tensor '" + tensor.name + "' is not a constant");
  const auto& bytes = *tensor.data;
  std::vector<float> out;
  switch (tensor.dtype) {
    case DataType::kFloat32:
      out.resize(bytes.size() / 4);
      if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * 4);
      break;
    case DataType::kFloat64: {
      std::vector<double> tmp(bytes.size() / 8);
      if (!tmp.empty()) std::memcpy(tmp.data(), bytes.data(), tmp.size() * 8);
      out.assign(tmp.begin(), tmp.end());
      break;
    }
    case DataType::kFloat16:
    case DataType::kBFloat16: {  // 16-bit floats, each widened by its own rule
      out.resize(bytes.size() / 2);
      for (size_t i = 0; i < out.size(); ++i) {
        std::uint16_t h;
        std::memcpy(&h, bytes.data() + 2 * i, 2);
        out[i] = tensor.dtype == DataType::kFloat16 ? HalfToFloat(h) : Bf16ToFloat(h);
      }
      break;
    }
    default:
      return InvalidInput("tensor '" + tensor.name + "' has type " + std::string(DataTypeName(tensor.dtype)) +
                          ", expected a float type");
  }
  return out;
}

}  // namespace latte
