#pragma once
// The facts of the TFLite flatbuffer format that the importer reads: table field ids, enum
// values and union type tags, written down from the format's documentation (no generated code).
// A field's vtable offset is 4 + 2 * id; a union takes two ids (type tag, then the table).

#include <cstdint>
#include <string>

namespace latte::tflite {

/// One field of a table: its id in the schema and its name (for error messages).
struct Field {
  std::uint16_t id;
  const char* name;
  constexpr std::uint16_t vtable_offset() const { return static_cast<std::uint16_t>(4 + 2 * id); }
};

namespace model {
inline constexpr Field kVersion{0, "version"};
inline constexpr Field kOperatorCodes{1, "operator_codes"};
inline constexpr Field kSubgraphs{2, "subgraphs"};
inline constexpr Field kDescription{3, "description"};
inline constexpr Field kBuffers{4, "buffers"};
}  // namespace model

namespace operator_code {
inline constexpr Field kDeprecatedBuiltinCode{0, "deprecated_builtin_code"};  // int8
inline constexpr Field kCustomCode{1, "custom_code"};
inline constexpr Field kVersion{2, "version"};
inline constexpr Field kBuiltinCode{3, "builtin_code"};  // int32
}  // namespace operator_code

namespace subgraph {
inline constexpr Field kTensors{0, "tensors"};
inline constexpr Field kInputs{1, "inputs"};
inline constexpr Field kOutputs{2, "outputs"};
inline constexpr Field kOperators{3, "operators"};
inline constexpr Field kName{4, "name"};
}  // namespace subgraph

namespace tensor {
inline constexpr Field kShape{0, "shape"};
inline constexpr Field kType{1, "type"};  // int8 TensorType
inline constexpr Field kBuffer{2, "buffer"};  // uint32
inline constexpr Field kName{3, "name"};
inline constexpr Field kQuantization{4, "quantization"};
inline constexpr Field kIsVariable{5, "is_variable"};
inline constexpr Field kSparsity{6, "sparsity"};
inline constexpr Field kShapeSignature{7, "shape_signature"};
inline constexpr Field kHasRank{8, "has_rank"};
}  // namespace tensor

namespace quantization {
inline constexpr Field kMin{0, "min"};
inline constexpr Field kMax{1, "max"};
inline constexpr Field kScale{2, "scale"};  // [float]
inline constexpr Field kZeroPoint{3, "zero_point"};  // [int64]
inline constexpr Field kDetailsType{4, "details_type"};
inline constexpr Field kDetails{5, "details"};
inline constexpr Field kQuantizedDimension{6, "quantized_dimension"};
}  // namespace quantization

namespace sparsity {
inline constexpr Field kTraversalOrder{0, "traversal_order"};
inline constexpr Field kBlockMap{1, "block_map"};
inline constexpr Field kDimMetadata{2, "dim_metadata"};
}  // namespace sparsity

namespace dim_metadata {
inline constexpr Field kFormat{0, "format"};  // int8: 0 DENSE, 1 SPARSE_CSR
inline constexpr Field kDenseSize{1, "dense_size"};
inline constexpr Field kArraySegmentsType{2, "array_segments_type"};
inline constexpr Field kArraySegments{3, "array_segments"};
inline constexpr Field kArrayIndicesType{4, "array_indices_type"};
inline constexpr Field kArrayIndices{5, "array_indices"};
}  // namespace dim_metadata

// SparseIndexVector union tags; each table holds one vector field 0 "values".
inline constexpr std::uint8_t kIndexVectorInt32 = 1;
inline constexpr std::uint8_t kIndexVectorUint16 = 2;
inline constexpr std::uint8_t kIndexVectorUint8 = 3;
inline constexpr Field kIndexVectorValues{0, "values"};
inline constexpr std::int8_t kDimDense = 0;
inline constexpr std::int8_t kDimSparseCsr = 1;

namespace op {
inline constexpr Field kOpcodeIndex{0, "opcode_index"};
inline constexpr Field kInputs{1, "inputs"};
inline constexpr Field kOutputs{2, "outputs"};
inline constexpr Field kBuiltinOptionsType{3, "builtin_options_type"};
inline constexpr Field kBuiltinOptions{4, "builtin_options"};
inline constexpr Field kCustomOptions{5, "custom_options"};
inline constexpr Field kCustomOptionsFormat{6, "custom_options_format"};
inline constexpr Field kLargeCustomOptionsOffset{9, "large_custom_options_offset"};
inline constexpr Field kLargeCustomOptionsSize{10, "large_custom_options_size"};
}  // namespace op

namespace buffer {
inline constexpr Field kData{0, "data"};
inline constexpr Field kOffset{1, "offset"};  // uint64, from the start of the file; valid if > 1
inline constexpr Field kSize{2, "size"};  // uint64
}  // namespace buffer

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
};

/// BuiltinOptions union tags of the options tables the importer reads.
enum OptionsType : std::uint8_t {
  kNoOptions = 0, kConv2DOptions = 1, kDepthwiseConv2DOptions = 2, kPool2DOptions = 5,
  kFullyConnectedOptions = 8, kSoftmaxOptions = 9, kConcatenationOptions = 10, kAddOptions = 11,
  kResizeBilinearOptions = 15, kReshapeOptions = 17, kSpaceToDepthOptions = 19, kMulOptions = 21,
  kGatherOptions = 23, kReducerOptions = 27, kSubOptions = 28, kDivOptions = 29, kSqueezeOptions = 30,
  kStridedSliceOptions = 32, kSplitOptions = 35, kTransposeConvOptions = 49,
  kResizeNearestNeighborOptions = 74, kLeakyReluOptions = 75, kMirrorPadOptions = 77, kSplitVOptions = 79,
  kDepthToSpaceOptions = 94, kBatchMatMulOptions = 101,
};

// Options table fields.
namespace conv2d_options {
inline constexpr Field kPadding{0, "padding"};
inline constexpr Field kStrideW{1, "stride_w"};
inline constexpr Field kStrideH{2, "stride_h"};
inline constexpr Field kActivation{3, "fused_activation_function"};
inline constexpr Field kDilationW{4, "dilation_w_factor"};  // default 1
inline constexpr Field kDilationH{5, "dilation_h_factor"};  // default 1
}  // namespace conv2d_options
namespace depthwise_options {
inline constexpr Field kPadding{0, "padding"};
inline constexpr Field kStrideW{1, "stride_w"};
inline constexpr Field kStrideH{2, "stride_h"};
inline constexpr Field kDepthMultiplier{3, "depth_multiplier"};
inline constexpr Field kActivation{4, "fused_activation_function"};
inline constexpr Field kDilationW{5, "dilation_w_factor"};  // default 1
inline constexpr Field kDilationH{6, "dilation_h_factor"};  // default 1
}  // namespace depthwise_options
namespace pool2d_options {
inline constexpr Field kPadding{0, "padding"};
inline constexpr Field kStrideW{1, "stride_w"};
inline constexpr Field kStrideH{2, "stride_h"};
inline constexpr Field kFilterW{3, "filter_width"};
inline constexpr Field kFilterH{4, "filter_height"};
inline constexpr Field kActivation{5, "fused_activation_function"};
}  // namespace pool2d_options
namespace fully_connected_options {
inline constexpr Field kActivation{0, "fused_activation_function"};
inline constexpr Field kWeightsFormat{1, "weights_format"};
inline constexpr Field kKeepNumDims{2, "keep_num_dims"};
}  // namespace fully_connected_options
namespace transpose_conv_options {
inline constexpr Field kPadding{0, "padding"};
inline constexpr Field kStrideW{1, "stride_w"};
inline constexpr Field kStrideH{2, "stride_h"};
inline constexpr Field kActivation{3, "fused_activation_function"};
}  // namespace transpose_conv_options
// Add, Sub, Mul, Div: the fused activation is field 0.
inline constexpr Field kBinaryActivation{0, "fused_activation_function"};
namespace concatenation_options {
inline constexpr Field kAxis{0, "axis"};
inline constexpr Field kActivation{1, "fused_activation_function"};
}  // namespace concatenation_options
inline constexpr Field kSoftmaxBeta{0, "beta"};
inline constexpr Field kReshapeNewShape{0, "new_shape"};
inline constexpr Field kBlockSize{0, "block_size"};  // SpaceToDepth, DepthToSpace
inline constexpr Field kReducerKeepDims{0, "keep_dims"};
inline constexpr Field kSqueezeDims{0, "squeeze_dims"};
inline constexpr Field kLeakyReluAlpha{0, "alpha"};
inline constexpr Field kMirrorPadMode{0, "mode"};  // 0 REFLECT, 1 SYMMETRIC
namespace resize_options {  // ResizeBilinearOptions: fields 0, 1 are deprecated
inline constexpr Field kBilinearAlignCorners{2, "align_corners"};
inline constexpr Field kBilinearHalfPixel{3, "half_pixel_centers"};
inline constexpr Field kNearestAlignCorners{0, "align_corners"};
inline constexpr Field kNearestHalfPixel{1, "half_pixel_centers"};
}  // namespace resize_options
namespace gather_options {
inline constexpr Field kAxis{0, "axis"};
inline constexpr Field kBatchDims{1, "batch_dims"};
}  // namespace gather_options
namespace strided_slice_options {
inline constexpr Field kBeginMask{0, "begin_mask"};
inline constexpr Field kEndMask{1, "end_mask"};
inline constexpr Field kEllipsisMask{2, "ellipsis_mask"};
inline constexpr Field kNewAxisMask{3, "new_axis_mask"};
inline constexpr Field kShrinkAxisMask{4, "shrink_axis_mask"};
inline constexpr Field kOffset{5, "offset"};
}  // namespace strided_slice_options
inline constexpr Field kSplitNumSplits{0, "num_splits"};  // Split, SplitV
namespace batch_matmul_options {
inline constexpr Field kAdjX{0, "adj_x"};
inline constexpr Field kAdjY{1, "adj_y"};
}  // namespace batch_matmul_options

/// "CONV_2D" for a BuiltinOperator value; "" for values the format does not define.
std::string BuiltinOpName(std::int32_t code);

}  // namespace latte::tflite
