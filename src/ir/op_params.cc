#include "ir/op_params.h"

#include <algorithm>
#include <limits>

namespace latte {
namespace {

constexpr std::int64_t kMaxDim = std::int64_t{1} << 40;  // far beyond any real tensor; stops overflow

Status CheckPositive(const char* what, std::int64_t v) {
  if (v < 1 || v > kMaxDim) return InvalidInput(std::string(what) + " is " + std::to_string(v) + ", must be ≥ 1");
  return Status::Ok();
}

// Reads a two-element attribute ("strides", "dilations", "kernel") with a default.
Expected<std::pair<std::int64_t, std::int64_t>> Pair(const Node& node, const char* name, std::int64_t fallback) {
  auto v = node.attrs.GetInts(name);
  if (!v) return std::pair{fallback, fallback};
  if (v->size() != 2) return InvalidInput(std::string("attribute '") + name + "' has " + std::to_string(v->size()) + " values, expected 2");
  LATTE_RETURN_IF_ERROR(CheckPositive(name, (*v)[0]));
  LATTE_RETURN_IF_ERROR(CheckPositive(name, (*v)[1]));
  return std::pair{(*v)[0], (*v)[1]};
}

Expected<Padding2D> ExplicitPads(const Node& node) {
  Padding2D p;
  auto pads = node.attrs.GetInts("pads");
  if (!pads) return p;
  if (pads->size() != 4) return InvalidInput("attribute 'pads' has " + std::to_string(pads->size()) + " values, expected 4");
  for (auto v : *pads)
    if (v < 0 || v > kMaxDim) return InvalidInput("attribute 'pads' has value " + std::to_string(v));
  p.top = (*pads)[0];
  p.left = (*pads)[1];
  p.bottom = (*pads)[2];
  p.right = (*pads)[3];
  return p;
}

// The activation input of a conv or pool, layout-free: the node's layout (NHWC unless it says
// NCHW) and the input's dims, rank 4 and fully known.
struct ActivationInput {
  bool nhwc = true;
  std::int64_t batch = 0, channels = 0, h = 0, w = 0;
};

Expected<ActivationInput> ReadActivation(const Graph& graph, const Node& node) {
  const std::string layout = node.attrs.GetString("layout", "NHWC");
  if (layout != "NHWC" && layout != "NCHW") return InvalidInput("unknown layout '" + layout + "'");
  if (node.inputs.empty() || node.inputs[0] == kNoTensor) return InvalidInput("has no input");
  const Tensor& x = graph.tensor(node.inputs[0]);
  if (!x.fully_known() || x.shape.size() != 4)
    return InvalidInput("input '" + x.name + "' has shape " + ShapeToString(x.shape, x.shape_known) + ", expected 4 known dims");
  for (auto d : x.shape) LATTE_RETURN_IF_ERROR(CheckPositive("an input dimension", d));
  if (layout == "NHWC") return ActivationInput{true, x.shape[0], x.shape[3], x.shape[1], x.shape[2]};
  return ActivationInput{false, x.shape[0], x.shape[1], x.shape[2], x.shape[3]};
}

}  // namespace

Expected<std::int64_t> ConvOutputSize(std::int64_t in, std::int64_t kernel, std::int64_t stride, std::int64_t dilation,
                                      const std::string& padding, std::int64_t& pad_begin, std::int64_t& pad_end,
                                      bool ceil_mode) {
  const std::int64_t effective = (kernel - 1) * dilation + 1;
  if (padding == "same" || padding == "same_lower") {
    const std::int64_t out = (in + stride - 1) / stride;
    const std::int64_t total = std::max<std::int64_t>((out - 1) * stride + effective - in, 0);
    pad_begin = padding == "same" ? total / 2 : total - total / 2;
    pad_end = total - pad_begin;
    return out;
  }
  if (padding == "valid") pad_begin = pad_end = 0;
  else if (padding != "explicit") return InvalidInput("unknown padding '" + padding + "'");
  const std::int64_t span = in + pad_begin + pad_end - effective;
  if (span < 0)
    return InvalidInput("window of " + std::to_string(effective) + " does not fit input of " + std::to_string(in) +
                        " with padding " + std::to_string(pad_begin) + "+" + std::to_string(pad_end));
  std::int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  // ONNX: with ceil_mode, a last window that would start in the end padding is dropped.
  if (ceil_mode && (out - 1) * stride >= in + pad_begin) --out;
  return out;
}

Expected<ConvParams> GetConvParams(const Graph& graph, const Node& node) {
  LATTE_ASSIGN_OR_RETURN(const ActivationInput x, ReadActivation(graph, node));
  ConvParams p{.batch = x.batch, .in_c = x.channels, .in_h = x.h, .in_w = x.w, .nhwc = x.nhwc};
  if (node.input(1) == kNoTensor) return InvalidInput("has no weights input");
  const Tensor& w = graph.tensor(node.inputs[1]);
  if (!w.fully_known() || w.shape.size() != 4)
    return InvalidInput("weights '" + w.name + "' have shape " + ShapeToString(w.shape, w.shape_known) + ", expected 4 known dims");
  for (auto d : w.shape) LATTE_RETURN_IF_ERROR(CheckPositive("a weight dimension", d));
  p.has_bias = node.input(2) != kNoTensor;
  p.activation = node.attrs.GetString("activation", "none");
  LATTE_ASSIGN_OR_RETURN(auto strides, Pair(node, "strides", 1));
  LATTE_ASSIGN_OR_RETURN(auto dilations, Pair(node, "dilations", 1));
  p.stride_h = strides.first;
  p.stride_w = strides.second;
  p.dilation_h = dilations.first;
  p.dilation_w = dilations.second;

  const std::string layout = node.attrs.GetString("filter_layout", "");
  std::int64_t w_in = 0;  // input channels per group as the weights say
  if (layout == "OHWI") {
    p.kernel_h = w.shape[1], p.kernel_w = w.shape[2], w_in = w.shape[3];
  } else if (layout == "OIHW") {
    p.kernel_h = w.shape[2], p.kernel_w = w.shape[3], w_in = w.shape[1];
  } else if (layout == "1HWO") {
    p.kernel_h = w.shape[1], p.kernel_w = w.shape[2], w_in = 1;
    if (w.shape[0] != 1) return InvalidInput("depthwise weights '" + w.name + "' must have a leading 1, have " + ShapeToString(w.shape));
  } else if (layout == "IOHW") {
    p.kernel_h = w.shape[2], p.kernel_w = w.shape[3], w_in = w.shape[0];
  } else {
    return InvalidInput("unknown filter_layout '" + layout + "'");
  }

  if (node.kind == OpKind::kDepthwiseConv2D) {
    p.groups = p.in_c;
    if (w_in != 1) return InvalidInput("depthwise weights '" + w.name + "' have " + std::to_string(w_in) + " input channels per group, expected 1");
    p.out_c = layout == "1HWO" ? w.shape[3] : w.shape[0];
    if (p.out_c % p.in_c != 0)
      return InvalidInput("depthwise conv has " + std::to_string(p.out_c) + " output channels, not a multiple of its " +
                          std::to_string(p.in_c) + " input channels");
  } else if (node.kind == OpKind::kConv2D) {
    p.groups = node.attrs.GetInt("groups", 1);
    LATTE_RETURN_IF_ERROR(CheckPositive("groups", p.groups));
    p.out_c = w.shape[0];
    if (w_in * p.groups != p.in_c)
      return InvalidInput("input has " + std::to_string(p.in_c) + " channels but weights '" + w.name + "' " +
                          ShapeToString(w.shape) + " expect " + std::to_string(w_in) + " × " + std::to_string(p.groups) + " groups");
    if (p.out_c % p.groups != 0) return InvalidInput("output channels not divisible by groups");
  } else if (node.kind == OpKind::kTransposeConv2D) {
    p.groups = node.attrs.GetInt("groups", 1);
    LATTE_RETURN_IF_ERROR(CheckPositive("groups", p.groups));
    if (layout == "IOHW") {
      if (w_in != p.in_c) return InvalidInput("input has " + std::to_string(p.in_c) + " channels but weights '" + w.name + "' " + ShapeToString(w.shape) + " expect " + std::to_string(w_in));
      p.out_c = w.shape[1] * p.groups;
    } else if (layout == "OHWI") {
      if (w_in * p.groups != p.in_c) return InvalidInput("input has " + std::to_string(p.in_c) + " channels but weights '" + w.name + "' " + ShapeToString(w.shape) + " expect " + std::to_string(w_in));
      p.out_c = w.shape[0];
    } else {
      return InvalidInput("filter_layout '" + layout + "' is not one of a transposed conv");
    }
  } else {
    return Internal("GetConvParams called on " + std::string(OpName(node.kind)));
  }

  const std::string padding = node.attrs.GetString("padding", "valid");
  LATTE_ASSIGN_OR_RETURN(p.pads, ExplicitPads(node));
  if (node.kind != OpKind::kTransposeConv2D) {
    LATTE_ASSIGN_OR_RETURN(p.out_h, ConvOutputSize(p.in_h, p.kernel_h, p.stride_h, p.dilation_h, padding, p.pads.top, p.pads.bottom));
    LATTE_ASSIGN_OR_RETURN(p.out_w, ConvOutputSize(p.in_w, p.kernel_w, p.stride_w, p.dilation_w, padding, p.pads.left, p.pads.right));
    return p;
  }
  // Transposed conv: the output size is given, or follows from padding.
  std::int64_t out_pad_h = 0, out_pad_w = 0;
  if (auto op = node.attrs.GetInts("output_padding"); op && op->size() == 2) out_pad_h = (*op)[0], out_pad_w = (*op)[1];
  const std::int64_t full_h = (p.in_h - 1) * p.stride_h + (p.kernel_h - 1) * p.dilation_h + 1 + out_pad_h;
  const std::int64_t full_w = (p.in_w - 1) * p.stride_w + (p.kernel_w - 1) * p.dilation_w + 1 + out_pad_w;
  if (auto os = node.attrs.GetInts("output_shape"); os && !os->empty()) {
    if (os->size() != 4) return InvalidInput("attribute 'output_shape' must have 4 values");
    p.out_h = p.nhwc ? (*os)[1] : (*os)[2];
    p.out_w = p.nhwc ? (*os)[2] : (*os)[3];
  } else if (padding == "same" || padding == "same_lower") {
    p.out_h = p.in_h * p.stride_h;
    p.out_w = p.in_w * p.stride_w;
  } else if (padding == "valid") {
    p.out_h = full_h, p.out_w = full_w;
  } else if (padding == "explicit") {
    p.out_h = full_h - p.pads.top - p.pads.bottom;
    p.out_w = full_w - p.pads.left - p.pads.right;
  } else {
    return InvalidInput("unknown padding '" + padding + "'");
  }
  if (padding != "explicit") {
    const std::int64_t th = std::max<std::int64_t>(full_h - p.out_h, 0), tw = std::max<std::int64_t>(full_w - p.out_w, 0);
    p.pads = {th / 2, tw / 2, th - th / 2, tw - tw / 2};
  }
  LATTE_RETURN_IF_ERROR(CheckPositive("transposed conv output height", p.out_h));
  LATTE_RETURN_IF_ERROR(CheckPositive("transposed conv output width", p.out_w));
  return p;
}

Expected<PoolParams> GetPoolParams(const Graph& graph, const Node& node) {
  LATTE_ASSIGN_OR_RETURN(const ActivationInput x, ReadActivation(graph, node));
  PoolParams p{.batch = x.batch, .channels = x.channels, .in_h = x.h, .in_w = x.w, .nhwc = x.nhwc};
  if (node.kind == OpKind::kGlobalAvgPool || node.kind == OpKind::kGlobalMaxPool) {
    p.kernel_h = p.in_h, p.kernel_w = p.in_w, p.out_h = 1, p.out_w = 1;
    return p;
  }
  LATTE_ASSIGN_OR_RETURN(auto kernel, Pair(node, "kernel", 0));
  if (kernel.first == 0) return InvalidInput("pool has no 'kernel' attribute");
  LATTE_ASSIGN_OR_RETURN(auto strides, Pair(node, "strides", 1));
  p.kernel_h = kernel.first, p.kernel_w = kernel.second;
  p.stride_h = strides.first, p.stride_w = strides.second;
  const std::string padding = node.attrs.GetString("padding", "valid");
  const bool ceil_mode = node.attrs.GetInt("ceil_mode", 0) != 0;
  LATTE_ASSIGN_OR_RETURN(p.pads, ExplicitPads(node));
  LATTE_ASSIGN_OR_RETURN(p.out_h, ConvOutputSize(p.in_h, p.kernel_h, p.stride_h, 1, padding, p.pads.top, p.pads.bottom, ceil_mode));
  LATTE_ASSIGN_OR_RETURN(p.out_w, ConvOutputSize(p.in_w, p.kernel_w, p.stride_w, 1, padding, p.pads.left, p.pads.right, ceil_mode));
  return p;
}

Expected<FullyConnectedParams> GetFullyConnectedParams(const Graph& graph, const Node& node) {
  FullyConnectedParams p;
  if (node.input(0) == kNoTensor || node.input(1) == kNoTensor) return InvalidInput("needs an input and weights");
  const Tensor& x = graph.tensor(node.inputs[0]);
  const Tensor& w = graph.tensor(node.inputs[1]);
  if (!w.fully_known() || w.shape.size() != 2)
    return InvalidInput("weights '" + w.name + "' have shape " + ShapeToString(w.shape, w.shape_known) + ", expected 2 known dims");
  const std::string layout = node.attrs.GetString("weights_layout", "OI");
  if (layout == "OI") p.out_features = w.shape[0], p.in_features = w.shape[1];
  else if (layout == "IO") p.in_features = w.shape[0], p.out_features = w.shape[1];
  else return InvalidInput("unknown weights_layout '" + layout + "'");
  LATTE_RETURN_IF_ERROR(CheckPositive("input features", p.in_features));
  LATTE_RETURN_IF_ERROR(CheckPositive("output features", p.out_features));
  auto elements = x.num_elements();
  if (!elements) return InvalidInput("input '" + x.name + "' has unknown shape " + ShapeToString(x.shape, x.shape_known));
  if (layout == "IO" && (x.shape.empty() || x.shape.back() != p.in_features))
    return InvalidInput("input '" + x.name + "' " + ShapeToString(x.shape) + " does not end in the weights' " +
                        std::to_string(p.in_features) + " input features");
  if (*elements % p.in_features != 0)
    return InvalidInput("input '" + x.name + "' has " + std::to_string(*elements) + " elements, not a multiple of " +
                        std::to_string(p.in_features) + " input features");
  p.rows = *elements / p.in_features;
  p.has_bias = node.input(2) != kNoTensor;
  return p;
}

Expected<bool> GeluTanhForm(const std::string& approximate) {
  if (approximate == "none") return false;
  if (approximate == "tanh") return true;
  return InvalidInput("gelu approximate '" + approximate + "' (none or tanh)");
}

Expected<bool> GeluTanhForm(const Node& node) { return GeluTanhForm(node.attrs.GetString("approximate", "none")); }

Expected<std::vector<SliceAxis>> ResolveSlice(const Node& node, const Shape& x) {
  const auto starts = node.attrs.GetInts("starts"), ends = node.attrs.GetInts("ends");
  if (!starts || !ends || starts->size() != ends->size()) return InvalidInput("slice needs 'starts' and 'ends' of one length");
  const auto rank = static_cast<std::int64_t>(x.size());
  std::vector<std::int64_t> axes, steps(starts->size(), 1);
  if (auto a = node.attrs.GetInts("axes")) axes = *a;
  else for (size_t i = 0; i < starts->size(); ++i) axes.push_back(static_cast<std::int64_t>(i));
  if (auto s = node.attrs.GetInts("steps")) steps = *s;
  if (axes.size() != starts->size() || steps.size() != starts->size()) return InvalidInput("slice attributes differ in length");
  std::vector<SliceAxis> out(x.size());
  for (size_t d = 0; d < x.size(); ++d) out[d].count = x[d];
  std::vector<bool> named(x.size(), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    std::int64_t axis = axes[i];
    if (axis < -rank || axis >= rank)
      return InvalidInput("axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
    if (axis < 0) axis += rank;
    if (named[static_cast<size_t>(axis)]) return InvalidInput("slice names axis " + std::to_string(axis) + " twice");
    named[static_cast<size_t>(axis)] = true;
    const std::int64_t dim = x[static_cast<size_t>(axis)], step = steps[i];
    if (step == 0) return InvalidInput("slice step is 0");
    auto clamp = [](std::int64_t v, std::int64_t lo, std::int64_t hi) { return std::min(std::max(v, lo), hi); };
    std::int64_t start = (*starts)[i], end = (*ends)[i];
    if (start < 0) start = start < -dim ? 0 : start + dim;
    if (end < 0) end = end < -dim ? -1 : end + dim;
    std::int64_t count;
    if (step > 0) {
      start = clamp(start, 0, dim);
      end = clamp(end, 0, dim);
      count = end > start ? (end - start + step - 1) / step : 0;
    } else {
      start = clamp(start, 0, dim - 1);
      end = clamp(end, -1, dim - 1);
      count = start > end ? (start - end + (-step) - 1) / (-step) : 0;
    }
    out[static_cast<size_t>(axis)] = SliceAxis{start, count, step};
  }
  return out;
}

}  // namespace latte
