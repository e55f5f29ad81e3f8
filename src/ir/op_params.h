#pragma once
// Typed views of the attributes of the heavy ops, resolved against the actual tensor
// shapes (layouts, padding modes): what cost, reports, backends and predictors read.

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"

namespace latte {

struct Padding2D {
  std::int64_t top = 0, left = 0, bottom = 0, right = 0;
};

/// Output size and padding for one spatial dimension of a conv or pool.
/// `padding` is "same", "same_lower", "valid" or "explicit" (then pad_begin/pad_end are used).
Expected<std::int64_t> ConvOutputSize(std::int64_t in, std::int64_t kernel, std::int64_t stride, std::int64_t dilation,
                                      const std::string& padding, std::int64_t& pad_begin, std::int64_t& pad_end,
                                      bool ceil_mode = false);

/// Conv, depthwise conv and transposed conv, in layout-free terms.
struct ConvParams {
  std::int64_t batch = 1;
  std::int64_t in_c = 0, in_h = 0, in_w = 0;
  std::int64_t out_c = 0, out_h = 0, out_w = 0;
  std::int64_t kernel_h = 1, kernel_w = 1;
  std::int64_t stride_h = 1, stride_w = 1;
  std::int64_t dilation_h = 1, dilation_w = 1;
  std::int64_t groups = 1;
  Padding2D pads{};
  bool has_bias = false;
  std::string activation = "none";
  bool nhwc = true;
};

/// Reads a conv2d, depthwise_conv2d or transpose_conv2d node; input and weight shapes must be
/// known. Fails naming what is missing or inconsistent (channels vs weights, groups).
Expected<ConvParams> GetConvParams(const Graph& graph, const Node& node);

/// Pools (max, avg, global), layout-free.
struct PoolParams {
  std::int64_t batch = 1, channels = 0, in_h = 0, in_w = 0, out_h = 0, out_w = 0;
  std::int64_t kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1;
  Padding2D pads{};
  bool nhwc = true;
};
Expected<PoolParams> GetPoolParams(const Graph& graph, const Node& node);

/// Fully connected: rows × in_features → rows × out_features.
struct FullyConnectedParams {
  std::int64_t rows = 1, in_features = 0, out_features = 0;
  bool has_bias = false;
};
Expected<FullyConnectedParams> GetFullyConnectedParams(const Graph& graph, const Node& node);

/// GELU's form, ONNX's "approximate" attribute (every importer writes it so): "none", the exact
/// form with erf, is false; "tanh" is true; any other value is invalid input.
Expected<bool> GeluTanhForm(const std::string& approximate);
/// The same for a gelu node ("none" when the attribute is absent).
Expected<bool> GeluTanhForm(const Node& node);

/// One axis of a slice, resolved as ONNX's Slice defines it: the first element read, how many are
/// read, and the step between them (negative: walking backwards from `start`).
struct SliceAxis {
  std::int64_t start = 0, count = 0, step = 1;
};
/// Every axis of a slice node over an input of shape `x` (an axis the node does not name: whole,
/// step 1). Negative starts and ends count from the end, then both are clamped to the axis, as
/// ONNX does. Fails on a step of 0, an axis out of range or named twice, or attributes of
/// different lengths. Shape inference and the backends read slices through this one rule.
Expected<std::vector<SliceAxis>> ResolveSlice(const Node& node, const Shape& x);

}  // namespace latte
