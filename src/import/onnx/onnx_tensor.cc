#include "import/onnx/onnx_tensor.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

namespace latte::onnx_import {
namespace {

using P = onnx::TensorProto;

// Appends the low `size` bytes of `value`, little-endian (the host is little-endian, as the
// ONNX raw_data format is).
template <typename T>
void AppendBytes(std::vector<std::uint8_t>& out, T value, std::size_t size) {
  std::uint8_t bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.insert(out.end(), bytes, bytes + std::min(size, sizeof(T)));
}

std::string Plural(std::int64_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

}  // namespace

DataType DataTypeFromOnnx(std::int32_t onnx_type) {
  switch (onnx_type) {
    case P::FLOAT: return DataType::kFloat32;
    case P::FLOAT16: return DataType::kFloat16;
    case P::DOUBLE: return DataType::kFloat64;
    case P::INT8: return DataType::kInt8;
    case P::UINT8: return DataType::kUInt8;
    case P::INT16: return DataType::kInt16;
    case P::INT32: return DataType::kInt32;
    case P::INT64: return DataType::kInt64;
    case P::BOOL: return DataType::kBool;
    case P::STRING: return DataType::kString;
    default: return DataType::kUnknown;
  }
}

Expected<int> OnnxTypeOf(DataType type) {
  switch (type) {
    case DataType::kFloat32: return onnx::TensorProto_DataType_FLOAT;
    case DataType::kFloat16: return onnx::TensorProto_DataType_FLOAT16;
    case DataType::kFloat64: return onnx::TensorProto_DataType_DOUBLE;
    case DataType::kInt8: return onnx::TensorProto_DataType_INT8;
    case DataType::kUInt8: return onnx::TensorProto_DataType_UINT8;
    case DataType::kInt16: return onnx::TensorProto_DataType_INT16;
    case DataType::kInt32: return onnx::TensorProto_DataType_INT32;
    case DataType::kInt64: return onnx::TensorProto_DataType_INT64;
    case DataType::kBool: return onnx::TensorProto_DataType_BOOL;
    default: break;
  }
  return Unsupported("no ONNX element type for " + std::string(DataTypeName(type)));
}

std::size_t OnnxElementSize(std::int32_t onnx_type) {
  switch (onnx_type) {
    case P::UINT8: case P::INT8: case P::BOOL: return 1;
    case P::UINT16: case P::INT16: case P::FLOAT16: case P::BFLOAT16: return 2;
    case P::FLOAT: case P::INT32: case P::UINT32: return 4;
    case P::INT64: case P::UINT64: case P::DOUBLE: case P::COMPLEX64: return 8;
    case P::COMPLEX128: return 16;
    default: return 0;
  }
}

std::string OnnxTypeName(std::int32_t onnx_type) {
  DataType t = DataTypeFromOnnx(onnx_type);
  if (t != DataType::kUnknown) return std::string(DataTypeName(t));
  switch (onnx_type) {
    case P::UINT16: return "uint16";
    case P::UINT32: return "uint32";
    case P::UINT64: return "uint64";
    case P::BFLOAT16: return "bfloat16";
    case P::COMPLEX64: return "complex64";
    case P::COMPLEX128: return "complex128";
    case P::UNDEFINED: return "undefined";
    default: return "type " + std::to_string(onnx_type);
  }
}

std::optional<Shape> ShapeFromType(const onnx::TypeProto& type) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return std::nullopt;
  Shape shape;
  for (const auto& dim : type.tensor_type().shape().dim())
    shape.push_back(dim.has_dim_value() && dim.dim_value() >= 0 ? dim.dim_value() : kUnknownDim);
  return shape;
}

DataType DataTypeFromType(const onnx::TypeProto& type) {
  if (!type.has_tensor_type()) return DataType::kUnknown;
  return DataTypeFromOnnx(type.tensor_type().elem_type());
}

Expected<Tensor> TensorFromProto(const onnx::TensorProto& proto, const std::string& name) {
  const std::string what = "tensor '" + name + "'";
  if (proto.data_location() == P::EXTERNAL || proto.external_data_size() > 0)
    return Unsupported(what + " stores its data in an external file, which Latte does not read");
  if (proto.has_segment()) return Unsupported(what + " is stored in segments, which Latte does not read");

  Tensor tensor;
  tensor.name = name;
  tensor.shape_known = true;
  for (std::int64_t d : proto.dims()) {
    if (d < 0) return InvalidInput(what + " has negative dimension " + std::to_string(d));
    tensor.shape.push_back(d);
  }
  const auto count = ShapeElements(tensor.shape);
  if (!count) {
    const std::string dims = tensor.shape.size() <= 8 ? "dims " + ShapeToString(tensor.shape)
                                                      : std::to_string(tensor.shape.size()) + " dims";
    return InvalidInput(what + " has " + dims + " whose product overflows");
  }
  const std::int32_t type = proto.data_type();
  if (type == P::UNDEFINED) return InvalidInput(what + " has no data type");
  if (!onnx::TensorProto_DataType_IsValid(type)) return InvalidInput(what + " has unknown data type " + std::to_string(type));
  tensor.dtype = DataTypeFromOnnx(type);
  const std::string declared = (tensor.shape.size() <= 8 ? "its dims " + ShapeToString(tensor.shape)
                                                          : "its " + std::to_string(tensor.shape.size()) + " dims") +
                               " of " + OnnxTypeName(type);
  auto data = std::make_shared<std::vector<std::uint8_t>>();

  if (type == P::STRING) {
    // Strings carry no fixed-size bytes; Latte keeps only the shape.
    if (proto.string_data_size() != *count)
      return InvalidInput(what + " has " + Plural(proto.string_data_size(), "string") + ", but " + declared + " need " +
                          std::to_string(*count));
    tensor.data = std::move(data);
    return tensor;
  }

  const std::size_t element_size = OnnxElementSize(type);
  if (static_cast<std::uint64_t>(*count) > std::numeric_limits<std::uint64_t>::max() / 16)
    return InvalidInput(what + " has dims " + ShapeToString(tensor.shape) + " too large for any data");
  const std::uint64_t needed = static_cast<std::uint64_t>(*count) * element_size;

  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    if (raw.size() != needed)
      return InvalidInput(what + " has " + Plural(static_cast<std::int64_t>(raw.size()), "byte") + " of data, but " +
                          declared + " need " + std::to_string(needed));
    data->assign(raw.begin(), raw.end());
    tensor.data = std::move(data);
    return tensor;
  }

  // Typed fields: one value per element (two per complex element); the field's own size is
  // what is present, so it is checked before anything is allocated.
  const bool complex = type == P::COMPLEX64 || type == P::COMPLEX128;
  const std::uint64_t values_needed = static_cast<std::uint64_t>(*count) * (complex ? 2 : 1);
  std::uint64_t present = 0;
  switch (type) {
    case P::FLOAT: case P::COMPLEX64: present = static_cast<std::uint64_t>(proto.float_data_size()); break;
    case P::DOUBLE: case P::COMPLEX128: present = static_cast<std::uint64_t>(proto.double_data_size()); break;
    case P::INT64: present = static_cast<std::uint64_t>(proto.int64_data_size()); break;
    case P::UINT32: case P::UINT64: present = static_cast<std::uint64_t>(proto.uint64_data_size()); break;
    default: present = static_cast<std::uint64_t>(proto.int32_data_size()); break;
  }
  if (present != values_needed) {
    if (present == 0) return InvalidInput(what + " has no data, but " + declared + " need " + std::to_string(needed) + " bytes");
    return InvalidInput(what + " has " + Plural(static_cast<std::int64_t>(present), "value") + ", but " + declared +
                        " need " + std::to_string(values_needed));
  }
  data->reserve(needed);
  switch (type) {
    case P::FLOAT: case P::COMPLEX64:
      for (float v : proto.float_data()) AppendBytes(*data, v, 4);
      break;
    case P::DOUBLE: case P::COMPLEX128:
      for (double v : proto.double_data()) AppendBytes(*data, v, 8);
      break;
    case P::INT64:
      for (std::int64_t v : proto.int64_data()) AppendBytes(*data, v, 8);
      break;
    case P::UINT32: case P::UINT64:
      for (std::uint64_t v : proto.uint64_data()) AppendBytes(*data, v, element_size);
      break;
    case P::BOOL:
      for (std::int32_t v : proto.int32_data()) data->push_back(v != 0 ? 1 : 0);
      break;
    default:  // int32, int16, int8, uint16, uint8, float16 and bfloat16 bits: the low bytes
      for (std::int32_t v : proto.int32_data()) AppendBytes(*data, v, element_size);
      break;
  }
  tensor.data = std::move(data);
  return tensor;
}

Expected<std::vector<std::int64_t>> ReadInts(const Tensor& tensor) {
  if (!tensor.is_constant()) return InvalidInput("tensor '" + tensor.name + "' is not a constant");
  const auto& bytes = *tensor.data;
  std::vector<std::int64_t> out;
  auto read = [&](auto sample) {
    using T = decltype(sample);
    out.resize(bytes.size() / sizeof(T));
    for (std::size_t i = 0; i < out.size(); ++i) {
      T v;
      std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
      out[i] = static_cast<std::int64_t>(v);
    }
  };
  switch (tensor.dtype) {
    case DataType::kInt8: read(std::int8_t{}); break;
    case DataType::kUInt8: case DataType::kBool: read(std::uint8_t{}); break;
    case DataType::kInt16: read(std::int16_t{}); break;
    case DataType::kInt32: read(std::int32_t{}); break;
    case DataType::kInt64: read(std::int64_t{}); break;
    default:
      return InvalidInput("tensor '" + tensor.name + "' has type " + std::string(DataTypeName(tensor.dtype)) +
                          ", expected an integer type");
  }
  return out;
}

Expected<std::vector<double>> ReadDoubles(const Tensor& tensor) {
  if (!tensor.is_constant()) return InvalidInput("tensor '" + tensor.name + "' is not a constant");
  if (tensor.dtype == DataType::kFloat32 || tensor.dtype == DataType::kFloat16 || tensor.dtype == DataType::kFloat64) {
    if (tensor.data->empty()) return std::vector<double>{};  // ConstantFloats would memcpy from null
    LATTE_ASSIGN_OR_RETURN(std::vector<float> floats, ConstantFloats(tensor));
    if (tensor.dtype != DataType::kFloat64) return std::vector<double>(floats.begin(), floats.end());
    // float64 read at full precision
    std::vector<double> out(tensor.data->size() / 8);
    std::memcpy(out.data(), tensor.data->data(), out.size() * 8);
    return out;
  }
  auto ints = ReadInts(tensor);
  if (!ints.ok())
    return InvalidInput("tensor '" + tensor.name + "' has type " + std::string(DataTypeName(tensor.dtype)) +
                        ", expected a number type");
  return std::vector<double>(ints->begin(), ints->end());
}

}  // namespace latte::onnx_import
