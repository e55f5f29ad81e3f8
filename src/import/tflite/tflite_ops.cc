#include "import/tflite/tflite_ops.h"

#include <cstring>
#include <limits>
#include <optional>

#include "import/tflite/tflite_schema.h"

namespace latte::tflite {
namespace {

using Ints = std::vector<std::int64_t>;
constexpr std::int64_t kMaxInt = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMinInt = std::numeric_limits<std::int64_t>::min();
// Values a configuration input (shape, axes, paddings, sizes) may have; each is copied into
// every node reading it, so a shared huge constant must not be.
constexpr std::size_t kMaxConfigValues = 1024;

// Maps one operator. Holds the node being built; each Map* fills its kind and attributes.
class Mapper {
 public:
  Mapper(const TfModel& model, std::size_t index)
      : model_(model), op_(model.operators[index]), where_(DescribeOperator(op_, index)) {
    node_.source_op = OperatorName(op_);
    node_.name = op_.outputs.empty() ? "operator " + std::to_string(index)
                                     : model.tensors[static_cast<std::size_t>(op_.outputs[0])].name;
    for (std::int32_t t : op_.inputs) node_.inputs.push_back(t < 0 ? kNoTensor : t);
    node_.outputs.assign(op_.outputs.begin(), op_.outputs.end());
  }

  Expected<Node> Map();

 private:
  Status Fail(const std::string& what) const { return InvalidInput(where_ + ": " + what); }

  const TfTensor* In(std::size_t i) const {
    if (i >= op_.inputs.size() || op_.inputs[i] < 0) return nullptr;
    return &model_.tensors[static_cast<std::size_t>(op_.inputs[i])];
  }
  TensorId InId(std::size_t i) const { return In(i) ? op_.inputs[i] : kNoTensor; }
  const TfTensor* Out(std::size_t i) const {
    return i < op_.outputs.size() ? &model_.tensors[static_cast<std::size_t>(op_.outputs[i])] : nullptr;
  }

  Status NeedInputs(std::size_t n) const {
    for (std::size_t i = 0; i < n; ++i)
      if (In(i) == nullptr)
        return Fail("needs " + std::to_string(n) + " inputs, input " + std::to_string(i) + " is missing");
    if (op_.outputs.empty()) return Fail("has no outputs");
    return Status::Ok();
  }

  // The options table when its union tag is `expected`; an absent table (every field at its
  // default) when the operator has none.
  Expected<FbTable> Options(OptionsType expected, const char* name) const {
    if (op_.options_type == kNoOptions) return FbTable();
    if (op_.options_type != expected)
      return Fail("builtin_options has type " + std::to_string(op_.options_type) + ", expected " +
                  std::to_string(expected) + " (" + name + ")");
    return op_.options;
  }

  Expected<std::string> Activation(const FbTable& options, Field field) const {
    LATTE_ASSIGN_OR_RETURN(std::int8_t a, options.Scalar<std::int8_t>(field, 0));
    switch (a) {
      case 0: return std::string("none");
      case 1: return std::string("relu");
      case 2: return std::string("relu_n1_to_1");
      case 3: return std::string("relu6");
      case 4: return std::string("tanh");
      case 5: return std::string("sign_bit");
      default: return Fail("unknown fused activation " + std::to_string(a));
    }
  }
  Status SetActivation(const FbTable& options, Field field) {
    LATTE_ASSIGN_OR_RETURN(std::string a, Activation(options, field));
    node_.attrs.Set("activation", a);
    return Status::Ok();
  }

  Expected<std::string> Padding(const FbTable& options, Field field) const {
    LATTE_ASSIGN_OR_RETURN(std::int8_t p, options.Scalar<std::int8_t>(field, kPaddingSame));
    if (p == kPaddingSame) return std::string("same");
    if (p == kPaddingValid) return std::string("valid");
    return Fail("unknown padding " + std::to_string(p) + " (0 SAME, 1 VALID)");
  }

  // [h, w] from two int fields, each at least 1.
  Expected<Ints> Pair(const FbTable& options, Field h, Field w, std::int32_t fallback, const char* what) const {
    LATTE_ASSIGN_OR_RETURN(std::int32_t vh, options.Scalar<std::int32_t>(h, fallback));
    LATTE_ASSIGN_OR_RETURN(std::int32_t vw, options.Scalar<std::int32_t>(w, fallback));
    if (vh < 1 || vw < 1)
      return Fail(std::string(what) + " are " + std::to_string(vh) + "x" + std::to_string(vw) + ", must be ≥ 1");
    return Ints{vh, vw};
  }

  // An NHWC conv's layout, strides, dilations, padding and fused activation from `options`, a
  // `kTable` (Conv2DOptions and DepthwiseConv2DOptions name these fields alike, at other ids).
  template <const auto& kTable>
  Status SetConvGeometry(const FbTable& options, const char* filter_layout) {
    node_.attrs.Set("layout", std::string("NHWC"));
    node_.attrs.Set("filter_layout", std::string(filter_layout));
    LATTE_ASSIGN_OR_RETURN(Ints strides, Pair(options, kTable["stride_h"], kTable["stride_w"], 0, "strides"));
    LATTE_ASSIGN_OR_RETURN(Ints dilations,
                           Pair(options, kTable["dilation_h_factor"], kTable["dilation_w_factor"], 1, "dilations"));
    LATTE_ASSIGN_OR_RETURN(std::string padding, Padding(options, kTable["padding"]));
    node_.attrs.Set("strides", strides);
    node_.attrs.Set("dilations", dilations);
    node_.attrs.Set("padding", padding);
    return SetActivation(options, kTable["fused_activation_function"]);
  }

  // Integer values of constant input i (a shape, axes, paddings: a few values, read into an
  // attribute); nullopt when it is not a constant.
  Expected<std::optional<Ints>> ConstInts(std::size_t i) const {
    const TfTensor* t = In(i);
    if (t == nullptr || !t->data) return std::optional<Ints>();
    if (t->data->size() > kMaxConfigValues * 8)
      return Fail("input " + std::to_string(i) + " '" + t->name + "' has " + std::to_string(t->data->size()) +
                  " bytes, too many for a shape, axes or paddings");
    Ints out;
    const auto& bytes = *t->data;
    if (t->dtype == DataType::kInt32) {
      for (std::size_t k = 0; k + 4 <= bytes.size(); k += 4) {
        std::int32_t v;
        std::memcpy(&v, bytes.data() + k, 4);
        out.push_back(v);
      }
    } else if (t->dtype == DataType::kInt64) {
      for (std::size_t k = 0; k + 8 <= bytes.size(); k += 8) {
        std::int64_t v;
        std::memcpy(&v, bytes.data() + k, 8);
        out.push_back(v);
      }
    } else {
      return Fail("input " + std::to_string(i) + " '" + t->name + "' has type " + std::string(DataTypeName(t->dtype)) +
                  ", expected int32 or int64");
    }
    return std::optional<Ints>(std::move(out));
  }

  // Keeps only the listed inputs (the others became attributes).
  void KeepInputs(std::initializer_list<std::size_t> which) {
    std::vector<TensorId> kept;
    for (std::size_t i : which) kept.push_back(InId(i));
    while (!kept.empty() && kept.back() == kNoTensor) kept.pop_back();  // trailing optional ones
    node_.inputs = std::move(kept);
  }

  Node Opaque(const std::string& reason) {
    node_.kind = OpKind::kOpaque;
    node_.attrs = Attributes();
    node_.unsupported_reason = reason;
    node_.inputs.clear();
    for (std::int32_t t : op_.inputs) node_.inputs.push_back(t < 0 ? kNoTensor : t);
    return std::move(node_);
  }
  Node RunTime(const std::string& what) {
    return Opaque(node_.source_op + " with " + what + " computed at run time is not supported by Latte");
  }

  // Channel count (last dim) of input i when known.
  std::optional<std::int64_t> Channels(std::size_t i) const {
    const TfTensor* t = In(i);
    if (t == nullptr || !t->shape_known || t->shape.size() != 4 || t->shape[3] <= 0) return std::nullopt;
    return t->shape[3];
  }

  Expected<Node> Conv();
  Expected<Node> DepthwiseConv();
  Expected<Node> TransposeConv();
  Expected<Node> ConvTransposeBias();
  Expected<Node> Pool(OpKind kind);
  Expected<Node> Binary(OpKind kind, OptionsType type, const char* options_name);
  Expected<Node> Unary(OpKind kind);
  Expected<Node> Reshape();
  Expected<Node> Resize(bool bilinear);
  Expected<Node> Pad();
  Expected<Node> Reduce(OpKind kind);
  Expected<Node> StridedSlice();
  Expected<Node> Slice();
  Expected<Node> Split();
  Expected<Node> SplitV();
  Expected<Node> FullyConnected();
  Expected<Node> BatchMatMul();
  Expected<Node> Concatenation();
  Expected<Node> Elu();
  Expected<Node> Relu0To1();
  Expected<Node> LeakyRelu();
  Expected<Node> Cast();
  Expected<Node> Softmax();
  Expected<Node> Transpose();
  Expected<Node> Squeeze();
  Expected<Node> ExpandDims();
  Expected<Node> Gather();
  Expected<Node> DepthSpace();
  Expected<Node> ArgReduce(OpKind kind);
  Expected<Node> Select();
  Expected<Node> Gelu();

  const TfModel& model_;
  const TfOperator& op_;
  std::string where_;
  Node node_;
};

Expected<Node> Mapper::Conv() {
  LATTE_RETURN_IF_ERROR(NeedInputs(2));
  LATTE_ASSIGN_OR_RETURN(FbTable o, Options(kConv2DOptions, "Conv2DOptions"));
  node_.kind = OpKind::kConv2D;
  LATTE_RETURN_IF_ERROR(SetConvGeometry<schema::Conv2DOptions>(o, "OHWI"));
  // TFLite runs a grouped conv when the input has a multiple of the filter's channels.
  const TfTensor* w = In(1);
  auto in_c = Channels(0);
  if (in_c && w->shape_known && w->shape.size() == 4 && w->shape[3] > 0 && *in_c % w->shape[3] == 0 &&
      *in_c / w->shape[3] > 1)
    node_.attrs.Set("groups", *in_c / w->shape[3]);
  KeepInputs({0, 1, 2});
  return std::move(node_);
}

Expected<Node> Mapper::DepthwiseConv() {
  LATTE_RETURN_IF_ERROR(NeedInputs(2));
  LATTE_ASSIGN_OR_RETURN(FbTable o, Options(kDepthwiseConv2DOptions, "DepthwiseConv2DOptions"));
  node_.kind = OpKind::kDepthwiseConv2D;
  LATTE_RETURN_IF_ERROR(SetConvGeometry<schema::DepthwiseConv2DOptions>(o, "1HWO"));
  LATTE_ASSIGN_OR_RETURN(std::int32_t multiplier,
                         o.Scalar<std::int32_t>(schema::DepthwiseConv2DOptions["depth_multiplier"], 0));
  // Newer converters leave depth_multiplier unset: the shapes say it.
  const TfTensor* w = In(1);
  if (auto in_c = Channels(0)) {
    node_.attrs.Set("groups", *in_c);
    if (w->shape_known && w->shape.size() == 4 && w->shape[3] > 0 && w->shape[3] % *in_c == 0)
      multiplier = static_cast<std::int32_t>(w->shape[3] / *in_c);
  }
  if (multiplier > 0) node_.attrs.Set("depth_multiplier", std::int64_t{multiplier});
  KeepInputs({0, 1, 2});
  return std::move(node_);
}

// TRANSPOSE_CONV: inputs [output_shape, weights, input, bias?] become [x, w, b?].
Expected<Node> Mapper::TransposeConv() {
  LATTE_RETURN_IF_ERROR(NeedInputs(3));
  LATTE_ASSIGN_OR_RETURN(FbTable o, Options(kTransposeConvOptions, "TransposeConvOptions"));
  LATTE_ASSIGN_OR_RETURN(auto output_shape, ConstInts(0));
  if (!output_shape) {
    const TfTensor* out = Out(0);
    if (!out->fully_known()) return RunTime("an output shape");
    output_shape = out->shape;  // the file's own statement of the size
  }
  if (output_shape->size() != 4)
    return Fail("output_shape has " + std::to_string(output_shape->size()) + " values, expected 4");
  node_.kind = OpKind::kTransposeConv2D;
  node_.attrs.Set("layout", std::string("NHWC"));
  node_.attrs.Set("filter_layout", std::string("OHWI"));
  node_.attrs.Set("output_shape", *output_shape);
  constexpr const auto& f = schema::TransposeConvOptions;
  LATTE_ASSIGN_OR_RETURN(Ints strides, Pair(o, f["stride_h"], f["stride_w"], 0, "strides"));
  LATTE_ASSIGN_OR_RETURN(std::string padding, Padding(o, f["padding"]));
  node_.attrs.Set("strides", strides);
  node_.attrs.Set("padding", padding);
  LATTE_RETURN_IF_ERROR(SetActivation(o, f["fused_activation_function"]));
  KeepInputs({2, 1, 3});
  return std::move(node_);
}

// MediaPipe's custom transposed conv, inputs [x, weights OHWI, bias]. Its custom_options are
// not a flexbuffer but the raw C struct TfLiteTransposeConvParams, little-endian int32s:
// padding (TfLitePadding: 1 SAME, 2 VALID), stride_width, stride_height (12 bytes in
// selfie_segmentation*.tflite: 01000000 02000000 02000000 = SAME, stride 2x2, which takes its
// 128x128x16 input to 256x256x1). Newer writers may append more fields; they are ignored.
Expected<Node> Mapper::ConvTransposeBias() {
  LATTE_RETURN_IF_ERROR(NeedInputs(2));
  if (op_.custom_options.size() < 12)
    return Fail("custom_options has " + std::to_string(op_.custom_options.size()) +
                " bytes, expected at least 12 (padding, stride_w, stride_h)");
  std::int32_t params[3];
  std::memcpy(params, op_.custom_options.data(), sizeof(params));
  if (params[0] != 1 && params[0] != 2)
    return Fail("unknown padding " + std::to_string(params[0]) + " (1 SAME, 2 VALID)");
  if (params[1] < 1 || params[2] < 1)
    return Fail("strides are " + std::to_string(params[2]) + "x" + std::to_string(params[1]) + ", must be ≥ 1");
  node_.kind = OpKind::kTransposeConv2D;
  node_.attrs.Set("layout", std::string("NHWC"));
  node_.attrs.Set("filter_layout", std::string("OHWI"));
  node_.attrs.Set("padding", std::string(params[0] == 1 ? "same" : "valid"));
  node_.attrs.Set("strides", Ints{params[2], params[1]});
  node_.attrs.Set("activation", std::string("none"));
  KeepInputs({0, 1, 2});
  return std::move(node_);
}

Expected<Node> Mapper::Pool(OpKind kind) {
  LATTE_RETURN_IF_ERROR(NeedInputs(1));
  LATTE_ASSIGN_OR_RETURN(FbTable o, Options(kPool2DOptions, "Pool2DOptions"));
  node_.kind = kind;
  node_.attrs.Set("layout", std::string("NHWC"));
  constexpr const auto& f = schema::Pool2DOptions;
  LATTE_ASSIGN_OR_RETURN(Ints kernel, Pair(o, f["filter_height"], f["filter_width"], 0, "filter sizes"));
  LATTE_ASSIGN_OR_RETURN(Ints strides, Pair(o, f["stride_h"], f["stride_w"], 0, "strides"));
  LATTE_ASSIGN_OR_RETURN(std::string padding, Padding(o, f["padding"]));
  node_.attrs.Set("kernel", kernel);
  node_.attrs.Set("strides", strides);
  node_.attrs.Set("padding", padding);
  LATTE_RETURN_IF_ERROR(SetActivation(o, f["fused_activation_function"]));
  KeepInputs({0});
  return std::move(node_);
}

Expected<Node> Mapper::Binary(OpKind kind, OptionsType type, const char* options_name) {
  LATTE_RETURN_IF_ERROR(NeedInputs(2));
  node_.kind = kind;
  if (type != kNoOptions) {
    LATTE_ASSIGN_OR_RETURN(FbTable o, Options(type, options_name));
    LATTE_RETURN_IF_ERROR(SetActivation(o, schema::ArithmeticOptions["fused_activation_function"]));
  }
  KeepInputs({0, 1});
  return std::move(node_);
}

Expected<Node> Mapper::Unary(OpKind kind) {
  LATTE_RETURN_IF_ERROR(NeedInputs(1));
  node_.kind = kind;
  KeepInputs({0});
  return std::move(node_);
}

// RESHAPE: the target from the constant shape input, else from the options.
Expected<Node> Mapper::Reshape() {
  LATTE_RETURN_IF_ERROR(NeedInputs(1));
  LATTE_ASSIGN_OR_RETURN(FbTable o, Options(kReshapeOptions, "ReshapeOptions"));
  LATTE_ASSIGN_OR_RETURN(auto shape, ConstInts(1));
  if (!shape && o.Has(schema::ReshapeOptions["new_shape"])) {
    LATTE_ASSIGN_OR_RETURN(std::vector<std::int32_t> new_shape,
                           o.Scalars<std::int32_t>(schema::ReshapeOptions["new_shape"]));
    shape = Ints(new_shape.begin(), new_shape.end());
  }
  if (!shape) return RunTime("a shape");
  node_.kind = OpKind::kReshape;
  node_.attrs.Set("shape", *shape);
  KeepInputs({0});
  return std::move(node_);
}

Expected<Node> Mapper::Resize(bool bilinear) {
  LATTE_RETURN_IF_ERROR(NeedInputs(2));
  LATTE_ASSIGN_OR_RETURN(FbTable o, bilinear ? Options(kResizeBilinearOptions, "ResizeBilinearOptions")
                                             : Options(kResizeNearestNeighborOptions, "ResizeNearestNeighborOptions"));
  LATTE_ASSIGN_OR_RETURN(auto sizes, ConstInts(1));
  if (!sizes) {
    const TfTensor* out = Out(0);
    if (!out->fully_known() || out->shape.size() != 4) return RunTime("a size");
    sizes = Ints{out->shape[1], out->shape[2]};
  }
  if (sizes->size() != 2) return Fail("size has " + std::to_string(sizes->size()) + " values, expected 2");
  // The two tables name these fields alike, at other ids.
  constexpr const auto& b = schema::ResizeBilinearOptions;
  constexpr const auto& n = schema::ResizeNearestNeighborOptions;
  LATTE_ASSIGN_OR_RETURN(std::uint8_t align,
                         o.Scalar<std::uint8_t>(bilinear ? b["align_corners"] : n["align_corners"], 0));
  LATTE_ASSIGN_OR_RETURN(std::uint8_t half,
                         o.Scalar<std::uint8_t>(bilinear ? b["half_pixel_centers"] : n["half_pixel_centers"], 0));
  node_.kind = OpKind::kResize;
  node_.attrs.Set("layout", std::string("NHWC"));
  node_.attrs.Set("mode", std::string(bilinear ? "bilinear" : "nearest"));
  node_.attrs.Set("sizes", *sizes);
  node_.attrs.Set("coordinate_transformation", std::string(align  ? "align_corners"
                                                           : half ? "half_pixel"
                                                                  : "asymmetric"));
  KeepInputs({0});
  return std::move(node_);
}

// PAD, PADV2, MIRROR_PAD: paddings [rank, 2] become "pads" [begins..., ends...].
Expected<Node> Mapper::Pad() {
  LATTE_RETURN_IF_ERROR(NeedInputs(2));
  LATTE_ASSIGN_OR_RETURN(auto paddings, ConstInts(1));
  if (!paddings) return RunTime("paddings");
  if (paddings->size() % 2 != 0)
    return Fail("paddings has " + std::to_string(paddings->size()) + " values, not [rank, 2]");
  const std::size_t rank = paddings->size() / 2;
  Ints pads(2 * rank);
  for (std::size_t d = 0; d < rank; ++d) {
    pads[d] = (*paddings)[2 * d];
    pads[rank + d] = (*paddings)[2 * d + 1];
  }
  std::string mode = "constant";
  if (op_.builtin == kMirrorPad) {
    LATTE_ASSIGN_OR_RETURN(FbTable o, Options(kMirrorPadOptions, "MirrorPadOptions"));
    LATTE_ASSIGN_OR_RETURN(std::int8_t m, o.Scalar<std::int8_t>(schema::MirrorPadOptions["mode"], 0));
    if (m != 0)
      return Opaque("MIRROR_PAD in SYMMETRIC mode is not supported by Latte (pad modes: constant, reflect, edge)");
    mode = "reflect";
  }
  if (op_.builtin == kPadV2 && In(2) != nullptr) {
    const TfTensor* v = In(2);
    if (!v->data) return RunTime("a padding value");
    if (v->dtype == DataType::kFloat32 && v->data->size() == 4) {
      float value;
      std::memcpy(&value, v->data->data(), 4);
      node_.attrs.Set("value", static_cast<double>(value));
    }
  }
  node_.kind = OpKind::kPad;
  node_.attrs.Set("pads", pads);
  node_.attrs.Set("mode", mode);
  KeepInputs({0});
  return std::move(node_);
}

Expected<Node> Mapper::Reduce(OpKind kind) {
  LATTE_RETURN_IF_ERROR(NeedInputs(2));
  LATTE_ASSIGN_OR_RETURN(FbTable o, Options(kReducerOptions, "ReducerOptions"));
  LATTE_ASSIGN_OR_RETURN(auto axes, ConstInts(1));
  if (!axes) return RunTime("axes");
  LATTE_ASSIGN_OR_RETURN(std::uint8_t keep, o.Scalar<std::uint8_t>(schema::ReducerOptions["keep_dims"], 0));
  node_.kind = kind;
  node_.attrs.Set("axes", *axes);
  node_.attrs.Set("keepdims", std::int64_t{keep != 0});
  KeepInputs({0});
  return std::move(node_);
}

// STRIDED_SLICE maps to slice only without the masks that add, drop or skip dims.
Expected<Node> Mapper::StridedSlice() {
  LATTE_RETURN_IF_ERROR(NeedInputs(4));
  LATTE_ASSIGN_OR_RETURN(FbTable o, Options(kStridedSliceOptions, "StridedSliceOptions"));
  constexpr const auto& f = schema::StridedSliceOptions;
  LATTE_ASSIGN_OR_RETURN(std::int32_t begin_mask, o.Scalar<std::int32_t>(f["begin_mask"], 0));
  LATTE_ASSIGN_OR_RETURN(std::int32_t end_mask, o.Scalar<std::int32_t>(f["end_mask"], 0));
  LATTE_ASSIGN_OR_RETURN(std::int32_t ellipsis, o.Scalar<std::int32_t>(f["ellipsis_mask"], 0));
  LATTE_ASSIGN_OR_RETURN(std::int32_t new_axis, o.Scalar<std::int32_t>(f["new_axis_mask"], 0));
  LATTE_ASSIGN_OR_RETURN(std::int32_t shrink, o.Scalar<std::int32_t>(f["shrink_axis_mask"], 0));
  LATTE_ASSIGN_OR_RETURN(std::uint8_t offset, o.Scalar<std::uint8_t>(f["offset"], 0));
  if (ellipsis != 0 || new_axis != 0 || shrink != 0 || offset != 0)
    return Opaque("STRIDED_SLICE with ellipsis, new-axis, shrink-axis masks or offset is not supported by Latte");
  LATTE_ASSIGN_OR_RETURN(auto begin, ConstInts(1));
  LATTE_ASSIGN_OR_RETURN(auto end, ConstInts(2));
  LATTE_ASSIGN_OR_RETURN(auto strides, ConstInts(3));
  if (!begin || !end || !strides) return RunTime("begin, end or strides");
  const std::size_t n = begin->size();
  if (end->size() != n || strides->size() != n || n > 32)
    return Fail("begin, end and strides have " + std::to_string(n) + ", " + std::to_string(end->size()) + " and " +
                std::to_string(strides->size()) + " values");
  Ints starts(n), ends(n), axes(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t step = (*strides)[i];
    if (step == 0) return Fail("stride " + std::to_string(i) + " is 0");
    const bool whole_begin = (begin_mask >> i) & 1, whole_end = (end_mask >> i) & 1;
    starts[i] = whole_begin ? (step > 0 ? 0 : kMaxInt) : (*begin)[i];
    ends[i] = whole_end ? (step > 0 ? kMaxInt : kMinInt) : (*end)[i];
    axes[i] = static_cast<std::int64_t>(i);
  }
  node_.kind = OpKind::kSlice;
  node_.attrs.Set("starts", starts);
  node_.attrs.Set("ends", ends);
  node_.attrs.Set("axes", axes);
  node_.attrs.Set("steps", *strides);
  KeepInputs({0});
  return std::move(node_);
}

// SLICE: [x, begin, size]; size -1 means to the end.
Expected<Node> Mapper::Slice() {
  LATTE_RETURN_IF_ERROR(NeedInputs(3));
  LATTE_ASSIGN_OR_RETURN(auto begin, ConstInts(1));
  LATTE_ASSIGN_OR_RETURN(auto size, ConstInts(2));
  if (!begin || !size) return RunTime("begin or size");
  if (begin->size() != size->size() || begin->size() > 32)
    return Fail("begin and size have " + std::to_string(begin->size()) + " and " + std::to_string(size->size()) +
                " values");
  Ints ends(begin->size()), axes(begin->size());
  for (std::size_t i = 0; i < begin->size(); ++i) {
    const std::int64_t b = (*begin)[i], s = (*size)[i];
    if (b < 0 || s < -1 || b > (std::int64_t{1} << 40) || s > (std::int64_t{1} << 40))
      return Fail("slice begin " + std::to_string(b) + " size " + std::to_string(s));
    ends[i] = s == -1 ? kMaxInt : b + s;
    axes[i] = static_cast<std::int64_t>(i);
  }
  node_.kind = OpKind::kSlice;
  node_.attrs.Set("starts", *begin);
  node_.attrs.Set("ends", ends);
  node_.attrs.Set("axes", axes);
  KeepInputs({0});
  return std::move(node_);
}

// SPLIT: inputs [axis, x], equal parts.
Expected<Node> Mapper::Split() {
  LATTE_RETURN_IF_ERROR(NeedInputs(2));
  LATTE_ASSIGN_OR_RETURN(FbTable o, Options(kSplitOptions, "SplitOptions"));
  LATTE_ASSIGN_OR_RETURN(std::int32_t num, o.Scalar<std::int32_t>(schema::SplitOptions["num_splits"], 0));
  if (num != static_cast<std::int32_t>(op_.outputs.size()))
    return Fail("num_splits is " + std::to_string(num) + " but the operator has " + std::to_string(op_.outputs.size()) +
                " outputs");
  LATTE_ASSIGN_OR_RETURN(auto axis, ConstInts(0));
  if (!axis) return RunTime("an axis");
  if (axis->size() != 1) return Fail("axis has " + std::to_string(axis->size()) + " values, expected 1");
  node_.kind = OpKind::kSplit;
  node_.attrs.Set("axis", (*axis)[0]);
  KeepInputs({1});
  return std::move(node_);
}

// SPLIT_V: inputs [x, size_splits, axis]; one -1 size takes the rest.
Expected<Node> Mapper::SplitV() {
  LATTE_RETURN_IF_ERROR(NeedInputs(3));
  LATTE_ASSIGN_OR_RETURN(auto sizes, ConstInts(1));
  LATTE_ASSIGN_OR_RETURN(auto axis, ConstInts(2));
  if (!sizes || !axis) return RunTime("sizes or axis");
  if (axis->size() != 1) return Fail("axis has " + std::to_string(axis->size()) + " values, expected 1");
  if (sizes->size() != op_.outputs.size())
    return Fail(std::to_string(sizes->size()) + " sizes for " + std::to_string(op_.outputs.size()) + " outputs");
  int unknown = -1;
  std::int64_t known = 0;
  for (std::size_t i = 0; i < sizes->size(); ++i) {
    const std::int64_t s = (*sizes)[i];
    if (s == -1 && unknown < 0)
      unknown = static_cast<int>(i);
    else if (s < 0 || s > (std::int64_t{1} << 40))
      return Fail("split size " + std::to_string(s));
    else
      known += s;
  }
  if (unknown >= 0) {
    const TfTensor* x = In(0);
    const std::int64_t rank = static_cast<std::int64_t>(x->shape.size());
    const std::int64_t a = (*axis)[0] < 0 ? (*axis)[0] + rank : (*axis)[0];
    if (!x->fully_known() || a < 0 || a >= rank || x->shape[static_cast<std::size_t>(a)] < known)
      return Opaque("SPLIT_V with a -1 size on an input of unknown shape is not supported by Latte");
    (*sizes)[static_cast<std::size_t>(unknown)] = x->shape[static_cast<std::size_t>(a)] - known;
  }
  node_.kind = OpKind::kSplit;
  node_.attrs.Set("axis", (*axis)[0]);
  node_.attrs.Set("sizes", *sizes);
  KeepInputs({0});
  return std::move(node_);
}

// FULLY_CONNECTED: weights [out, in] (OI), keep_num_dims, a fused activation.
Expected<Node> Mapper::FullyConnected() {
  LATTE_RETURN_IF_ERROR(NeedInputs(2));
  LATTE_ASSIGN_OR_RETURN(FbTable o, Options(kFullyConnectedOptions, "FullyConnectedOptions"));
  LATTE_ASSIGN_OR_RETURN(std::uint8_t keep, o.Scalar<std::uint8_t>(schema::FullyConnectedOptions["keep_num_dims"], 0));
  node_.kind = OpKind::kFullyConnected;
  node_.attrs.Set("weights_layout", std::string("OI"));
  node_.attrs.Set("keep_num_dims", std::int64_t{keep != 0});
  LATTE_RETURN_IF_ERROR(SetActivation(o, schema::FullyConnectedOptions["fused_activation_function"]));
  KeepInputs({0, 1, 2});
  return std::move(node_);
}

// BATCH_MATMUL: adj_x / adj_y are transposes of the operands' last two axes.
Expected<Node> Mapper::BatchMatMul() {
  LATTE_RETURN_IF_ERROR(NeedInputs(2));
  LATTE_ASSIGN_OR_RETURN(FbTable o, Options(kBatchMatMulOptions, "BatchMatMulOptions"));
  LATTE_ASSIGN_OR_RETURN(std::uint8_t adj_x, o.Scalar<std::uint8_t>(schema::BatchMatMulOptions["adj_x"], 0));
  LATTE_ASSIGN_OR_RETURN(std::uint8_t adj_y, o.Scalar<std::uint8_t>(schema::BatchMatMulOptions["adj_y"], 0));
  node_.kind = OpKind::kMatMul;
  node_.attrs.Set("transpose_a", std::int64_t{adj_x != 0});
  node_.attrs.Set("transpose_b", std::int64_t{adj_y != 0});
  KeepInputs({0, 1});
  return std::move(node_);
}

// CONCATENATION along an axis, with a fused activation; every input present.
Expected<Node> Mapper::Concatenation() {
  LATTE_RETURN_IF_ERROR(NeedInputs(1));
  LATTE_ASSIGN_OR_RETURN(FbTable o, Options(kConcatenationOptions, "ConcatenationOptions"));
  LATTE_ASSIGN_OR_RETURN(std::int32_t axis, o.Scalar<std::int32_t>(schema::ConcatenationOptions["axis"], 0));
  node_.kind = OpKind::kConcat;
  node_.attrs.Set("axis", std::int64_t{axis});
  LATTE_RETURN_IF_ERROR(SetActivation(o, schema::ConcatenationOptions["fused_activation_function"]));
  for (TensorId t : node_.inputs)
    if (t == kNoTensor) return Fail("has a missing input");
  return std::move(node_);
}

// ELU: TFLite's has alpha 1.
Expected<Node> Mapper::Elu() {
  LATTE_ASSIGN_OR_RETURN(Node n, Unary(OpKind::kElu));
  n.attrs.Set("alpha", 1.0);
  return n;
}

// RELU_0_TO_1: a clip to [0, 1].
Expected<Node> Mapper::Relu0To1() {
  LATTE_ASSIGN_OR_RETURN(Node n, Unary(OpKind::kClip));
  n.attrs.Set("min", 0.0);
  n.attrs.Set("max", 1.0);
  return n;
}

// LEAKY_RELU with its alpha.
Expected<Node> Mapper::LeakyRelu() {
  LATTE_ASSIGN_OR_RETURN(FbTable o, Options(kLeakyReluOptions, "LeakyReluOptions"));
  LATTE_ASSIGN_OR_RETURN(float alpha, o.Scalar<float>(schema::LeakyReluOptions["alpha"], 0.0f));
  LATTE_ASSIGN_OR_RETURN(Node n, Unary(OpKind::kLeakyRelu));
  n.attrs.Set("alpha", static_cast<double>(alpha));
  return n;
}

// CAST to the output tensor's type.
Expected<Node> Mapper::Cast() {
  LATTE_ASSIGN_OR_RETURN(Node n, Unary(OpKind::kCast));
  n.attrs.Set("to", std::string(DataTypeName(Out(0)->dtype)));
  return n;
}

// SOFTMAX (with its beta) and LOG_SOFTMAX: over the last axis.
Expected<Node> Mapper::Softmax() {
  const bool log = op_.builtin == kLogSoftmax;
  double beta = 1.0;
  if (!log) {
    LATTE_ASSIGN_OR_RETURN(FbTable o, Options(kSoftmaxOptions, "SoftmaxOptions"));
    LATTE_ASSIGN_OR_RETURN(float b, o.Scalar<float>(schema::SoftmaxOptions["beta"], 1.0f));
    beta = b;
  }
  LATTE_ASSIGN_OR_RETURN(Node n, Unary(log ? OpKind::kLogSoftmax : OpKind::kSoftmax));
  n.attrs.Set("axis", std::int64_t{-1});
  n.attrs.Set("beta", beta);
  return n;
}

// TRANSPOSE by a constant permutation.
Expected<Node> Mapper::Transpose() {
  LATTE_RETURN_IF_ERROR(NeedInputs(2));
  LATTE_ASSIGN_OR_RETURN(auto perm, ConstInts(1));
  if (!perm) return RunTime("a permutation");
  node_.kind = OpKind::kTranspose;
  node_.attrs.Set("perm", *perm);
  KeepInputs({0});
  return std::move(node_);
}

// SQUEEZE of the listed dims (all size-1 dims when none).
Expected<Node> Mapper::Squeeze() {
  LATTE_RETURN_IF_ERROR(NeedInputs(1));
  LATTE_ASSIGN_OR_RETURN(FbTable o, Options(kSqueezeOptions, "SqueezeOptions"));
  LATTE_ASSIGN_OR_RETURN(std::vector<std::int32_t> dims,
                         o.Scalars<std::int32_t>(schema::SqueezeOptions["squeeze_dims"]));
  node_.kind = OpKind::kSqueeze;
  if (!dims.empty()) node_.attrs.Set("axes", Ints(dims.begin(), dims.end()));
  KeepInputs({0});
  return std::move(node_);
}

// EXPAND_DIMS by one constant axis: an unsqueeze.
Expected<Node> Mapper::ExpandDims() {
  LATTE_RETURN_IF_ERROR(NeedInputs(2));
  LATTE_ASSIGN_OR_RETURN(auto axis, ConstInts(1));
  if (!axis) return RunTime("an axis");
  if (axis->size() != 1) return Fail("axis has " + std::to_string(axis->size()) + " values, expected 1");
  node_.kind = OpKind::kUnsqueeze;
  node_.attrs.Set("axes", *axis);
  KeepInputs({0});
  return std::move(node_);
}

// GATHER along an axis (batch_dims 0 only).
Expected<Node> Mapper::Gather() {
  LATTE_RETURN_IF_ERROR(NeedInputs(2));
  LATTE_ASSIGN_OR_RETURN(FbTable o, Options(kGatherOptions, "GatherOptions"));
  LATTE_ASSIGN_OR_RETURN(std::int32_t axis, o.Scalar<std::int32_t>(schema::GatherOptions["axis"], 0));
  LATTE_ASSIGN_OR_RETURN(std::int32_t batch_dims, o.Scalar<std::int32_t>(schema::GatherOptions["batch_dims"], 0));
  if (batch_dims != 0) return Opaque("GATHER with batch_dims is not supported by Latte");
  node_.kind = OpKind::kGather;
  node_.attrs.Set("axis", std::int64_t{axis});
  KeepInputs({0, 1});
  return std::move(node_);
}

// DEPTH_TO_SPACE and SPACE_TO_DEPTH: NHWC, blocks ordered as TF does (DCR).
Expected<Node> Mapper::DepthSpace() {
  const bool to_space = op_.builtin == kDepthToSpace;
  LATTE_RETURN_IF_ERROR(NeedInputs(1));
  LATTE_ASSIGN_OR_RETURN(FbTable o, to_space ? Options(kDepthToSpaceOptions, "DepthToSpaceOptions")
                                             : Options(kSpaceToDepthOptions, "SpaceToDepthOptions"));
  LATTE_ASSIGN_OR_RETURN(std::int32_t block, o.Scalar<std::int32_t>(schema::SpaceToDepthOptions["block_size"], 0));
  if (block < 1) return Fail("block_size is " + std::to_string(block));
  node_.kind = to_space ? OpKind::kDepthToSpace : OpKind::kSpaceToDepth;
  node_.attrs.Set("layout", std::string("NHWC"));
  node_.attrs.Set("block_size", std::int64_t{block});
  node_.attrs.Set("mode", std::string("DCR"));  // TF orders the depth as (block row, block col, channel)
  KeepInputs({0});
  return std::move(node_);
}

// ARG_MAX, ARG_MIN along one constant axis, which the output drops (TF semantics); the index
// type is the output tensor's (int32 or int64).
Expected<Node> Mapper::ArgReduce(OpKind kind) {
  LATTE_RETURN_IF_ERROR(NeedInputs(2));
  LATTE_ASSIGN_OR_RETURN(auto axis, ConstInts(1));
  if (!axis) return RunTime("an axis");
  if (axis->size() != 1) return Fail("axis has " + std::to_string(axis->size()) + " values, expected 1");
  node_.kind = kind;
  node_.attrs.Set("axis", (*axis)[0]);
  node_.attrs.Set("keepdims", std::int64_t{0});
  node_.attrs.Set("select_last_index", std::int64_t{0});
  KeepInputs({0});
  return std::move(node_);
}

// SELECT_V2 broadcasts its three inputs as numpy does: a where. SELECT (TF1) picks whole rows by
// a rank-1 condition when the choices have a higher rank: only its same-shape form is a where.
Expected<Node> Mapper::Select() {
  LATTE_RETURN_IF_ERROR(NeedInputs(3));
  if (op_.builtin == kSelect) {
    const TfTensor *c = In(0), *x = In(1), *y = In(2);
    if (c == nullptr || x == nullptr || y == nullptr || !c->fully_known() || !x->fully_known() ||
        !y->fully_known() || c->shape != x->shape || x->shape != y->shape)
      return Opaque("SELECT whose condition and choices differ in shape (TF1's row selection) is not supported by Latte");
  }
  node_.kind = OpKind::kWhere;
  KeepInputs({0, 1, 2});
  return std::move(node_);
}

// GELU, exact or (approximate) the tanh form.
Expected<Node> Mapper::Gelu() {
  LATTE_ASSIGN_OR_RETURN(FbTable o, Options(kGeluOptions, "GeluOptions"));
  LATTE_ASSIGN_OR_RETURN(std::uint8_t approximate, o.Scalar<std::uint8_t>(schema::GeluOptions["approximate"], 0));
  LATTE_ASSIGN_OR_RETURN(Node n, Unary(OpKind::kGelu));
  n.attrs.Set("approximate", std::string(approximate ? "tanh" : "none"));
  return n;
}

Expected<Node> Mapper::Map() {
  switch (op_.builtin) {
    case kConv2D: return Conv();
    case kDepthwiseConv2D: return DepthwiseConv();
    case kTransposeConv: return TransposeConv();
    case kFullyConnected: return FullyConnected();
    case kAveragePool2D: return Pool(OpKind::kAvgPool2D);
    case kMaxPool2D: return Pool(OpKind::kMaxPool2D);
    case kAdd: return Binary(OpKind::kAdd, kAddOptions, "AddOptions");
    case kSub: return Binary(OpKind::kSub, kSubOptions, "SubOptions");
    case kMul: return Binary(OpKind::kMul, kMulOptions, "MulOptions");
    case kDiv: return Binary(OpKind::kDiv, kDivOptions, "DivOptions");
    case kMaximum: return Binary(OpKind::kMaximum, kNoOptions, "");
    case kMinimum: return Binary(OpKind::kMinimum, kNoOptions, "");
    case kSquaredDifference: return Binary(OpKind::kSquaredDifference, kNoOptions, "");
    case kPow: return Binary(OpKind::kPow, kNoOptions, "");
    case kPrelu: return Binary(OpKind::kPRelu, kNoOptions, "");
    case kBatchMatMul: return BatchMatMul();
    case kConcatenation: return Concatenation();
    case kLogistic: return Unary(OpKind::kSigmoid);
    case kRelu: return Unary(OpKind::kRelu);
    case kRelu6: return Unary(OpKind::kRelu6);
    case kReluN1To1: return Unary(OpKind::kReluN1To1);
    case kTanh: return Unary(OpKind::kTanh);
    case kHardSwish: return Unary(OpKind::kHardSwish);
    case kExp: return Unary(OpKind::kExp);
    case kLog: return Unary(OpKind::kLog);
    case kSqrt: return Unary(OpKind::kSqrt);
    case kRsqrt: return Unary(OpKind::kRsqrt);
    case kAbs: return Unary(OpKind::kAbs);
    case kNeg: return Unary(OpKind::kNeg);
    case kSquare: return Unary(OpKind::kSquare);
    case kFloor: return Unary(OpKind::kFloor);
    case kCeil: return Unary(OpKind::kCeil);
    case kRound: return Unary(OpKind::kRound);
    case kGelu: return Gelu();
    case kEqual: return Binary(OpKind::kEqual, kNoOptions, "");
    case kNotEqual: return Binary(OpKind::kNotEqual, kNoOptions, "");
    case kLess: return Binary(OpKind::kLess, kNoOptions, "");
    case kLessEqual: return Binary(OpKind::kLessEqual, kNoOptions, "");
    case kGreater: return Binary(OpKind::kGreater, kNoOptions, "");
    case kGreaterEqual: return Binary(OpKind::kGreaterEqual, kNoOptions, "");
    case kLogicalAnd: return Binary(OpKind::kLogicalAnd, kNoOptions, "");
    case kLogicalOr: return Binary(OpKind::kLogicalOr, kNoOptions, "");
    case kLogicalNot: return Unary(OpKind::kLogicalNot);
    case kSelect:
    case kSelectV2: return Select();
    case kArgMax: return ArgReduce(OpKind::kArgMax);
    case kArgMin: return ArgReduce(OpKind::kArgMin);
    case kQuantize: return Unary(OpKind::kQuantize);
    case kDequantize: return Unary(OpKind::kDequantize);  // of an activation (constants were folded)
    case kElu: return Elu();
    case kRelu0To1: return Relu0To1();
    case kLeakyRelu: return LeakyRelu();
    case kCast: return Cast();
    case kSoftmax:
    case kLogSoftmax: return Softmax();
    case kReshape: return Reshape();
    case kResizeBilinear: return Resize(true);
    case kResizeNearestNeighbor: return Resize(false);
    case kPad:
    case kPadV2:
    case kMirrorPad: return Pad();
    case kMean: return Reduce(OpKind::kMean);
    case kSum: return Reduce(OpKind::kReduceSum);
    case kReduceMax: return Reduce(OpKind::kReduceMax);
    case kReduceMin: return Reduce(OpKind::kReduceMin);
    case kTranspose: return Transpose();
    case kSqueeze: return Squeeze();
    case kExpandDims: return ExpandDims();
    case kGather: return Gather();
    case kSpaceToDepth:
    case kDepthToSpace: return DepthSpace();
    case kStridedSlice: return StridedSlice();
    case kSlice: return Slice();
    case kSplit: return Split();
    case kSplitV: return SplitV();
    case kDensify: return Opaque("DENSIFY of a tensor that is not a constant is not supported by Latte");
    case kCustom:
      if (op_.custom_code == "Convolution2DTransposeBias") return ConvTransposeBias();
      return Opaque("custom op '" + op_.custom_code + "' is not supported by Latte");
    default:
      return Opaque("TFLite builtin op '" + OperatorName(op_) + "' (code " + std::to_string(op_.builtin) +
                    ") is not supported by Latte");
  }
}

}  // namespace

Expected<Node> MapOperator(const TfModel& model, std::size_t index) { return Mapper(model, index).Map(); }

}  // namespace latte::tflite
