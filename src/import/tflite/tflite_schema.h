#pragma once
// The facts of the TFLite flatbuffer format that the importer reads: its tables' fields, enum
// values and union type tags, written down from the format's documentation (no generated code).
// A field's id is its place in its table's declaration in schema.fbs, and its vtable offset
// 4 + 2 * id.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace latte::tflite {

/// One field of a table: its id in the schema and its name (for error messages).
struct Field {
  std::uint16_t id;
  const char* name;
  constexpr std::uint16_t vtable_offset() const { return static_cast<std::uint16_t>(4 + 2 * id); }
};

/// One table as schema.fbs declares it: its fields' names in declaration order, which is their
/// ids (a union field takes two, `x_type` then `x`; a deprecated field keeps its place), up to
/// the last field the importer reads. `schema::Pool2DOptions["stride_w"]` is that field, id 1;
/// a name the table does not have does not compile.
template <std::size_t N>
struct SchemaTable {
  const char* fields[N];
  consteval Field operator[](std::string_view name) const {
    for (std::size_t i = 0; i < N; ++i)
      if (std::string_view(fields[i]) == name) return Field{static_cast<std::uint16_t>(i), fields[i]};
    throw "no such field in this table";  // not a constant expression: a compile error
  }
};
template <typename... Names>
SchemaTable(Names...) -> SchemaTable<sizeof...(Names)>;

/// The tables the importer reads, each named as schema.fbs names it.
namespace schema {
inline constexpr SchemaTable Model{"version", "operator_codes", "subgraphs", "description", "buffers"};
// deprecated_builtin_code is an int8, builtin_code an int32.
inline constexpr SchemaTable OperatorCode{"deprecated_builtin_code", "custom_code", "version", "builtin_code"};
inline constexpr SchemaTable SubGraph{"tensors", "inputs", "outputs", "operators", "name"};
// type is an int8 TensorType, buffer a uint32.
inline constexpr SchemaTable Tensor{
    "shape", "type", "buffer", "name", "quantization", "is_variable", "sparsity", "shape_signature", "has_rank"};
// scale is [float], zero_point [int64]; details is a union.
inline constexpr SchemaTable QuantizationParameters{
    "min", "max", "scale", "zero_point", "details_type", "details", "quantized_dimension"};
inline constexpr SchemaTable SparsityParameters{"traversal_order", "block_map", "dim_metadata"};
// format is an int8 (kDimDense, kDimSparseCsr); the arrays are SparseIndexVector unions.
inline constexpr SchemaTable DimensionMetadata{
    "format", "dense_size", "array_segments_type", "array_segments", "array_indices_type", "array_indices"};
// Int32Vector, Uint16Vector and Uint8Vector: the tables of the SparseIndexVector union, alike.
inline constexpr SchemaTable IndexVector{"values"};
inline constexpr SchemaTable Operator{
    "opcode_index", "inputs", "outputs", "builtin_options_type", "builtin_options", "custom_options",
    "custom_options_format", "mutating_variable_inputs", "intermediates", "large_custom_options_offset",
    "large_custom_options_size"};
// offset and size are uint64; offset (from the start of the file) is valid when > 1.
inline constexpr SchemaTable Buffer{"data", "offset", "size"};

// Options tables.
inline constexpr SchemaTable Conv2DOptions{
    "padding", "stride_w", "stride_h", "fused_activation_function", "dilation_w_factor", "dilation_h_factor"};
inline constexpr SchemaTable DepthwiseConv2DOptions{
    "padding", "stride_w", "stride_h", "depth_multiplier", "fused_activation_function", "dilation_w_factor",
    "dilation_h_factor"};
inline constexpr SchemaTable Pool2DOptions{
    "padding", "stride_w", "stride_h", "filter_width", "filter_height", "fused_activation_function"};
inline constexpr SchemaTable TransposeConvOptions{"padding", "stride_w", "stride_h", "fused_activation_function"};
inline constexpr SchemaTable FullyConnectedOptions{"fused_activation_function", "weights_format", "keep_num_dims"};
// AddOptions, SubOptions, MulOptions and DivOptions alike up to here.
inline constexpr SchemaTable ArithmeticOptions{"fused_activation_function"};
inline constexpr SchemaTable ConcatenationOptions{"axis", "fused_activation_function"};
inline constexpr SchemaTable SoftmaxOptions{"beta"};
inline constexpr SchemaTable ReshapeOptions{"new_shape"};
// DepthToSpaceOptions alike.
inline constexpr SchemaTable SpaceToDepthOptions{"block_size"};
inline constexpr SchemaTable ReducerOptions{"keep_dims"};
inline constexpr SchemaTable SqueezeOptions{"squeeze_dims"};
inline constexpr SchemaTable LeakyReluOptions{"alpha"};
// mode: 0 REFLECT, 1 SYMMETRIC.
inline constexpr SchemaTable MirrorPadOptions{"mode"};
// new_height and new_width are deprecated.
inline constexpr SchemaTable ResizeBilinearOptions{"new_height", "new_width", "align_corners", "half_pixel_centers"};
inline constexpr SchemaTable ResizeNearestNeighborOptions{"align_corners", "half_pixel_centers"};
inline constexpr SchemaTable GatherOptions{"axis", "batch_dims"};
inline constexpr SchemaTable StridedSliceOptions{
    "begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask", "offset"};
// SplitVOptions alike.
inline constexpr SchemaTable SplitOptions{"num_splits"};
inline constexpr SchemaTable BatchMatMulOptions{"adj_x", "adj_y"};
inline constexpr SchemaTable GeluOptions{"approximate"};
}  // namespace schema

// SparseIndexVector union tags, and DimensionMetadata formats.
inline constexpr std::uint8_t kIndexVectorInt32 = 1;
inline constexpr std::uint8_t kIndexVectorUint16 = 2;
inline constexpr std::uint8_t kIndexVectorUint8 = 3;
inline constexpr std::int8_t kDimDense = 0;
inline constexpr std::int8_t kDimSparseCsr = 1;

/// TensorType values.
enum TensorType : std::int8_t {
  kTypeFloat32 = 0, kTypeFloat16 = 1, kTypeInt32 = 2, kTypeUInt8 = 3, kTypeInt64 = 4, kTypeString = 5,
  kTypeBool = 6, kTypeInt16 = 7, kTypeComplex64 = 8, kTypeInt8 = 9, kTypeFloat64 = 10,
};

/// Padding and ActivationFunctionType values (options tables).
inline constexpr std::int8_t kPaddingSame = 0;
inline constexpr std::int8_t kPaddingValid = 1;

/// BuiltinOperator values the importer treats specially (the full name list is in
/// BuiltinOpName).
enum BuiltinOp : std::int32_t {
  kAdd = 0, kAveragePool2D = 1, kConcatenation = 2, kConv2D = 3, kDepthwiseConv2D = 4, kDepthToSpace = 5,
  kDequantize = 6, kFloor = 8, kFullyConnected = 9, kLogistic = 14, kMaxPool2D = 17, kMul = 18, kRelu = 19,
  kReluN1To1 = 20, kRelu6 = 21, kReshape = 22, kResizeBilinear = 23, kSoftmax = 25, kSpaceToDepth = 26,
  kTanh = 28, kCustom = 32, kPad = 34, kGather = 36, kTranspose = 39, kMean = 40, kSub = 41, kDiv = 42,
  kSqueeze = 43, kStridedSlice = 45, kExp = 47, kSplit = 49, kLogSoftmax = 50, kCast = 53, kPrelu = 54,
  kMaximum = 55, kMinimum = 57, kNeg = 59, kPadV2 = 60, kSlice = 65, kTransposeConv = 67, kExpandDims = 70,
  kLog = 73, kSum = 74, kSqrt = 75, kRsqrt = 76, kPow = 78, kReduceMax = 82, kReduceMin = 89,
  kSquare = 92, kResizeNearestNeighbor = 97, kLeakyRelu = 98, kSquaredDifference = 99, kMirrorPad = 100, kAbs = 101,
  kSplitV = 102, kCeil = 104, kElu = 111, kQuantize = 114, kRound = 116, kHardSwish = 117, kDensify = 124,
  kBatchMatMul = 126, kPlaceholderForGreaterOpCodes = 127, kGelu = 150, kRelu0To1 = 152,
  kArgMax = 56, kLess = 58, kGreater = 61, kGreaterEqual = 62, kLessEqual = 63, kSelect = 64, kEqual = 71,
  kNotEqual = 72, kArgMin = 79, kLogicalOr = 84, kLogicalAnd = 86, kLogicalNot = 87, kSelectV2 = 123,
};

/// BuiltinOptions union tags of the options tables the importer reads.
enum OptionsType : std::uint8_t {
  kNoOptions = 0, kConv2DOptions = 1, kDepthwiseConv2DOptions = 2, kPool2DOptions = 5,
  kFullyConnectedOptions = 8, kSoftmaxOptions = 9, kConcatenationOptions = 10, kAddOptions = 11,
  kResizeBilinearOptions = 15, kReshapeOptions = 17, kSpaceToDepthOptions = 19, kMulOptions = 21,
  kGatherOptions = 23, kReducerOptions = 27, kSubOptions = 28, kDivOptions = 29, kSqueezeOptions = 30,
  kStridedSliceOptions = 32, kSplitOptions = 35, kTransposeConvOptions = 49,
  kResizeNearestNeighborOptions = 74, kLeakyReluOptions = 75, kMirrorPadOptions = 77, kSplitVOptions = 79,
  kDepthToSpaceOptions = 94, kBatchMatMulOptions = 101, kGeluOptions = 116,
};

/// "CONV_2D" for a BuiltinOperator value; "" for values the format does not define.
std::string BuiltinOpName(std::int32_t code);

}  // namespace latte::tflite
