#pragma once
// ONNX tensors and value types → Latte tensors: element types, shapes, and constant data
// decoded with every declared size checked against the bytes actually present.

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/tensor.h"

namespace latte::onnx_import {

/// Latte's type for an ONNX TensorProto data type; kUnknown for the types Latte lacks
/// (bfloat16, uint16, uint32, uint64, complex) and for numbers no ONNX version defines.
DataType DataTypeFromOnnx(std::int32_t onnx_type);

/// The ONNX TensorProto data type of a Latte type; kUnsupported for kUnknown and kString.
Expected<int> OnnxTypeOf(DataType type);

/// Bytes per element of an ONNX data type (also for types Latte lacks); 0 for string,
/// undefined and unknown numbers.
std::size_t OnnxElementSize(std::int32_t onnx_type);

/// "float32", "bfloat16", "type 99": names an ONNX data type in messages.
std::string OnnxTypeName(std::int32_t onnx_type);

/// Shape of a value from its TypeProto: nullopt when the rank is unknown (or it is not a
/// tensor); symbolic, absent or negative dims become kUnknownDim.
std::optional<Shape> ShapeFromType(const onnx::TypeProto& type);

/// Element type of a value from its TypeProto (kUnknown when not a tensor or not given).
DataType DataTypeFromType(const onnx::TypeProto& type);

/// Decodes an initializer or a Constant's value into a constant tensor named `name`. Refuses
/// external data (never opens a path named by a model) and checks the dims (non-negative,
/// no overflow) against the data present before allocating anything.
Expected<Tensor> TensorFromProto(const onnx::TensorProto& proto, const std::string& name);

/// Values of a constant integer or bool tensor (any width) as int64; fails for other types.
Expected<std::vector<std::int64_t>> ReadInts(const Tensor& tensor);
/// Values of a constant numeric tensor (float or integer) as double.
Expected<std::vector<double>> ReadDoubles(const Tensor& tensor);

}  // namespace latte::onnx_import
