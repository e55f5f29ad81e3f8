#include "run/xnnpack/xnnpack_backend.h"

#include "run/int8_kernels.h"
#include "run/int8_plan.h"
#include "run/kind_table.h"
#include "run/node_checks.h"

#include <pthreadpool.h>
#include <xnnpack.h>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <functional>
#include <iterator>
#include <limits>
#include <mutex>
#include <vector>

#include "ir/op_params.h"

#ifndef LATTE_XNNPACK_VERSION
#define LATTE_XNNPACK_VERSION "unknown"
#endif

namespace latte {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

const char* XnnStatusName(xnn_status status) {
  switch (status) {
    case xnn_status_success: return "success";
    case xnn_status_uninitialized: return "uninitialized";
    case xnn_status_invalid_parameter: return "invalid parameter";
    case xnn_status_invalid_state: return "invalid state";
    case xnn_status_unsupported_parameter: return "unsupported parameter";
    case xnn_status_unsupported_hardware: return "unsupported hardware";
    case xnn_status_out_of_memory: return "out of memory";
  }
  return "unknown status";
}

// XNNPACK refusing a parameter is "unsupported" (a valid node it cannot run); the rest is ours.
Status Check(xnn_status status, const char* call) {
  if (status == xnn_status_success) return Status::Ok();
  std::string message = std::string(call) + " failed: " + XnnStatusName(status);
  if (status == xnn_status_unsupported_parameter || status == xnn_status_unsupported_hardware ||
      status == xnn_status_invalid_parameter)
    return Unsupported(message);
  return Internal(message);
}

Status InitializeOnce() {
  static std::once_flag once;
  static xnn_status status = xnn_status_uninitialized;
  std::call_once(once, [] { status = xnn_initialize(nullptr); });
  return Check(status, "xnn_initialize");
}

Status NoBuffer(TensorId id) { return InvalidInput("tensor " + std::to_string(id) + " has no buffer"); }

struct OpDeleter {
  void operator()(xnn_operator_t op) const { xnn_delete_operator(op); }
};
using UniqueOp = std::unique_ptr<xnn_operator, OpDeleter>;

// One prepared node: the operators it owns and the steps (setup + run) each Run performs.
class XnnNode final : public PreparedNode {
 public:
  using Step = std::function<Status(TensorBuffers&)>;
  Status Run(TensorBuffers& buffers) override {
    for (auto& step : steps_) LATTE_RETURN_IF_ERROR(step(buffers));
    return Status::Ok();
  }
  xnn_operator_t Own(xnn_operator_t op) {
    ops_.emplace_back(op);
    return op;
  }
  void AddStep(Step step) { steps_.push_back(std::move(step)); }
  /// Keeps a padded copy of constant `id`: XNNPACK may read XNN_EXTRA_BYTES past an input,
  /// and a constant's data (the graph's) has no spare bytes.
  void BindConstant(TensorId id, const Tensor& tensor) {
    const size_t n = tensor.data->size() / sizeof(float);
    auto copy = std::make_unique<float[]>(n + XNN_EXTRA_BYTES / sizeof(float));
    std::memcpy(copy.get(), tensor.data->data(), n * sizeof(float));
    std::fill(copy.get() + n, copy.get() + n + XNN_EXTRA_BYTES / sizeof(float), 0.0f);
    constants_.emplace_back(id, std::move(copy));
  }
  /// Keeps `values` alive as long as the node (parameters an operator may point to).
  const float* Keep(std::vector<float> values) {
    kept_.push_back(std::move(values));
    return kept_.back().data();
  }
  /// `n` zeroed bytes that live as long as the node (int8 activations between steps).
  std::int8_t* KeepBytes(size_t n) {
    kept_bytes_.emplace_back(n, std::int8_t{0});
    return kept_bytes_.back().data();
  }
  /// An input's data: a bound constant's padded copy, else the buffer's.
  const float* In(const TensorBuffers& buffers, TensorId id) const {
    for (const auto& [cid, data] : constants_)
      if (cid == id) return data.get();
    return buffers.as<float>(id);
  }
  /// A step's float input `x` (as In) and output `y`, or which of them has no buffer.
  struct InOut {
    const float* x;
    float* y;
  };
  Expected<InOut> Buffers(TensorBuffers& buffers, TensorId in, TensorId out) const {
    const float* x = In(buffers, in);
    float* y = buffers.mutable_as<float>(out);
    if (x == nullptr) return NoBuffer(in);
    if (y == nullptr) return NoBuffer(out);
    return InOut{x, y};
  }

 private:
  std::vector<UniqueOp> ops_;
  std::vector<Step> steps_;
  std::vector<std::pair<TensorId, std::unique_ptr<float[]>>> constants_;
  std::vector<std::vector<float>> kept_;
  std::vector<std::vector<std::int8_t>> kept_bytes_;
};

// Where Analyze builds; null when it only checks (Supports).
struct Ctx {
  pthreadpool_t pool = nullptr;
  XnnNode* node = nullptr;
};

struct Range {
  float min = -kInf, max = kInf;
  bool full() const { return min == -kInf && max == kInf; }
};

Status RunOp(xnn_operator_t op, pthreadpool_t pool) { return Check(xnn_run_operator(op, pool), "xnn_run_operator"); }

std::vector<size_t> Dims(const Tensor& t) { return std::vector<size_t>(t.shape.begin(), t.shape.end()); }
size_t Elements(const Tensor& t) { return static_cast<size_t>(t.num_elements().value_or(0)); }
// Rows × channels view of an elementwise tensor (channels = last dim).
size_t LastDim(const Tensor& t) { return t.shape.empty() ? 1 : static_cast<size_t>(t.shape.back()); }

std::string Name(const Node& node) { return std::string(OpName(node.kind)); }

Expected<Range> FusedActivation(const Node& node) {
  const std::string act = node.attrs.GetString("activation", "none");
  if (act == "none") return Range{};
  if (act == "relu") return Range{0.0f, kInf};
  if (act == "relu6") return Range{0.0f, 6.0f};
  if (act == "relu_n1_to_1") return Range{-1.0f, 1.0f};
  return Unsupported("fused activation " + act + " not implemented");
}

// Checks every input (except `skip_input`, an int shape) and output: fp32, known, non-empty.
Status CheckTensors(const Graph& graph, const Node& node, int skip_input = -1) {
  return CheckFloatTensors(graph, node, skip_input, "xnnpack", XNN_MAX_TENSOR_DIMS);
}

const float* ConstData(const Graph& graph, TensorId id) {
  if (id == kNoTensor) return nullptr;
  return reinterpret_cast<const float*>(graph.tensor(id).data->data());
}

Status Invalid(const Node& node, const Status& status) { return Unsupported(Name(node) + ": " + status.message()); }

// A clamp run in place on the output, for operators that take no output range.
void AddPostClamp(Ctx& ctx, const Tensor& out_tensor, TensorId out, xnn_operator_t op) {
  const size_t channels = LastDim(out_tensor), batch = Elements(out_tensor) / channels;
  ctx.node->AddStep([op, out, batch, pool = ctx.pool](TensorBuffers& b) -> Status {
    float* y = b.mutable_as<float>(out);
    if (y == nullptr) return NoBuffer(out);
    LATTE_RETURN_IF_ERROR(Check(xnn_setup_clamp_nc_f32(op, batch, y, y, pool), "xnn_setup_clamp_nc_f32"));
    return RunOp(op, pool);
  });
}

Status MaybePostClamp(Ctx& ctx, const Graph& graph, const Node& node, Range range) {
  if (range.full()) return Status::Ok();
  const Tensor& out = graph.tensor(node.outputs[0]);
  const size_t channels = LastDim(out);
  xnn_operator_t op = nullptr;
  LATTE_RETURN_IF_ERROR(Check(xnn_create_clamp_nc_f32(channels, channels, channels, range.min, range.max, 0, &op),
                              "xnn_create_clamp_nc_f32"));
  AddPostClamp(ctx, out, node.outputs[0], ctx.node->Own(op));
  return Status::Ok();
}

using UnarySetup = xnn_status (*)(xnn_operator_t, size_t, const float*, float*, pthreadpool_t);

// Adds the step of an elementwise nc operator over the node's first input and output.
void AddUnaryStep(Ctx& ctx, const Graph& graph, const Node& node, xnn_operator_t op, UnarySetup setup, const char* call) {
  const Tensor& x = graph.tensor(node.inputs[0]);
  const size_t batch = Elements(x) / LastDim(x);
  ctx.node->AddStep([self = ctx.node, op, setup, call, batch, in = node.inputs[0], out = node.outputs[0], pool = ctx.pool](TensorBuffers& b) -> Status {
    LATTE_ASSIGN_OR_RETURN(const XnnNode::InOut io, self->Buffers(b, in, out));
    LATTE_RETURN_IF_ERROR(Check(setup(op, batch, io.x, io.y, pool), call));
    return RunOp(op, pool);
  });
}

Status SameElements(const Graph& graph, const Node& node) {
  if (Elements(graph.tensor(node.inputs[0])) != Elements(graph.tensor(node.outputs[0])))
    return Unsupported(Name(node) + " changes the number of elements");
  return Status::Ok();
}

Status Conv(const Graph& graph, const Node& node, Range range, Ctx* ctx) {
  const bool depthwise = node.kind == OpKind::kDepthwiseConv2D;
  const bool transposed = node.kind == OpKind::kTransposeConv2D;
  const std::string want = depthwise ? "1HWO" : "OHWI";
  const std::string layout = node.attrs.GetString("filter_layout", "");
  if (layout != want) return Unsupported(Name(node) + " filter_layout " + layout + ": xnnpack needs " + want);
  LATTE_ASSIGN_OR_RETURN(const ConvParams p, CheckedConvParams(graph, node));
  std::int64_t adjust_h = 0, adjust_w = 0;
  if (transposed) {
    // XNNPACK: out = stride (in - 1) + adjustment + dilated kernel - pads, adjustment < stride.
    adjust_h = p.out_h + p.pads.top + p.pads.bottom - ((p.in_h - 1) * p.stride_h + (p.kernel_h - 1) * p.dilation_h + 1);
    adjust_w = p.out_w + p.pads.left + p.pads.right - ((p.in_w - 1) * p.stride_w + (p.kernel_w - 1) * p.dilation_w + 1);
    if (adjust_h < 0 || adjust_h >= p.stride_h || adjust_w < 0 || adjust_w >= p.stride_w)
      return Unsupported("transpose_conv2d output " + std::to_string(p.out_h) + "x" + std::to_string(p.out_w) +
                         " needs an adjustment outside [0, stride)");
  }
  if (ctx == nullptr) return Status::Ok();

  const auto u32 = [](std::int64_t v) { return static_cast<std::uint32_t>(v); };
  const float* kernel = ConstData(graph, node.inputs[1]);
  const float* bias = ConstData(graph, node.input(2));
  const size_t group_in = static_cast<size_t>(p.in_c / p.groups), group_out = static_cast<size_t>(p.out_c / p.groups);
  xnn_operator_t op = nullptr;
  if (transposed) {
    LATTE_RETURN_IF_ERROR(Check(
        xnn_create_deconvolution2d_nhwc_f32(u32(p.pads.top), u32(p.pads.right), u32(p.pads.bottom), u32(p.pads.left),
                                            u32(p.kernel_h), u32(p.kernel_w), u32(p.stride_h), u32(p.stride_w),
                                            u32(p.dilation_h), u32(p.dilation_w), u32(p.groups), group_in, group_out,
                                            static_cast<size_t>(p.in_c), static_cast<size_t>(p.out_c), kernel, bias,
                                            range.min, range.max, 0, &op),
        "xnn_create_deconvolution2d_nhwc_f32"));
  } else {
    LATTE_RETURN_IF_ERROR(Check(
        xnn_create_convolution2d_nhwc_f32(u32(p.pads.top), u32(p.pads.right), u32(p.pads.bottom), u32(p.pads.left),
                                          u32(p.kernel_h), u32(p.kernel_w), u32(p.stride_h), u32(p.stride_w),
                                          u32(p.dilation_h), u32(p.dilation_w), u32(p.groups),
                                          depthwise ? 1 : group_in, group_out, static_cast<size_t>(p.in_c),
                                          static_cast<size_t>(p.out_c), kernel, bias, range.min, range.max,
                                          depthwise ? XNN_FLAG_DEPTHWISE_CONVOLUTION : 0, &op),
        "xnn_create_convolution2d_nhwc_f32"));
  }
  ctx->node->Own(op);
  ctx->node->AddStep([self = ctx->node, op, transposed, p, adjust_h, adjust_w, u32, in = node.inputs[0], out = node.outputs[0],
                      pool = ctx->pool](TensorBuffers& b) -> Status {
    LATTE_ASSIGN_OR_RETURN(const XnnNode::InOut io, self->Buffers(b, in, out));
    const auto n = static_cast<size_t>(p.batch), h = static_cast<size_t>(p.in_h), w = static_cast<size_t>(p.in_w);
    if (transposed)
      LATTE_RETURN_IF_ERROR(Check(xnn_setup_deconvolution2d_nhwc_f32(op, n, h, w, u32(adjust_h), u32(adjust_w), io.x, io.y, pool),
                                  "xnn_setup_deconvolution2d_nhwc_f32"));
    else
      LATTE_RETURN_IF_ERROR(Check(xnn_setup_convolution2d_nhwc_f32(op, n, h, w, io.x, io.y, pool), "xnn_setup_convolution2d_nhwc_f32"));
    return RunOp(op, pool);
  });
  return Status::Ok();
}

Status FullyConnected(const Graph& graph, const Node& node, Range range, Ctx* ctx) {
  LATTE_ASSIGN_OR_RETURN(const FullyConnectedParams p, CheckedFullyConnectedParams(graph, node));
  if (ctx == nullptr) return Status::Ok();

  const auto in = static_cast<size_t>(p.in_features), out = static_cast<size_t>(p.out_features);
  const float* weights = ConstData(graph, node.inputs[1]);
  std::vector<float> transposed;
  if (node.attrs.GetString("weights_layout", "OI") == "IO") {  // XNNPACK packs [out, in]
    transposed.resize(in * out);
    for (size_t i = 0; i < in; ++i)
      for (size_t o = 0; o < out; ++o) transposed[o * in + i] = weights[i * out + o];
    weights = transposed.data();
  }
  xnn_operator_t op = nullptr;
  LATTE_RETURN_IF_ERROR(Check(xnn_create_fully_connected_nc_f32(in, out, in, out, weights, ConstData(graph, node.input(2)),
                                                                range.min, range.max, 0, &op),
                              "xnn_create_fully_connected_nc_f32"));
  ctx->node->Own(op);
  ctx->node->AddStep([self = ctx->node, op, rows = static_cast<size_t>(p.rows), x_id = node.inputs[0], y_id = node.outputs[0],
                      pool = ctx->pool](TensorBuffers& b) -> Status {
    LATTE_ASSIGN_OR_RETURN(const XnnNode::InOut io, self->Buffers(b, x_id, y_id));
    LATTE_RETURN_IF_ERROR(Check(xnn_setup_fully_connected_nc_f32(op, rows, io.x, io.y, pool), "xnn_setup_fully_connected_nc_f32"));
    return RunOp(op, pool);
  });
  return Status::Ok();
}

Status Pool(const Graph& graph, const Node& node, Range range, Ctx* ctx) {
  auto params = GetPoolParams(graph, node);
  if (!params.ok()) return Invalid(node, params.status());
  PoolParams p = *params;
  const Tensor& y = graph.tensor(node.outputs[0]);
  if (y.shape != Shape{p.batch, p.out_h, p.out_w, p.channels})
    return Unsupported(Name(node) + " output shape " + ShapeToString(y.shape) + " disagrees with its parameters");
  const bool is_avg = node.kind == OpKind::kAvgPool2D;
  if (auto d = node.attrs.GetInts("dilations"); d && std::any_of(d->begin(), d->end(), [](auto v) { return v != 1; }))
    return Unsupported(Name(node) + " with dilations");
  if (p.kernel_h * p.kernel_w == 1) return Unsupported(Name(node) + " with a 1x1 window: xnnpack rejects it");
  // ceil_mode: XNNPACK rounds down, so widen the end padding until it yields the same size.
  p.pads.bottom = std::max(p.pads.bottom, (p.out_h - 1) * p.stride_h + p.kernel_h - p.in_h - p.pads.top);
  p.pads.right = std::max(p.pads.right, (p.out_w - 1) * p.stride_w + p.kernel_w - p.in_w - p.pads.left);
  if ((p.in_h + p.pads.top + p.pads.bottom - p.kernel_h) / p.stride_h + 1 != p.out_h ||
      (p.in_w + p.pads.left + p.pads.right - p.kernel_w) / p.stride_w + 1 != p.out_w)
    return Unsupported(Name(node) + " output size xnnpack cannot reproduce");
  const bool padded = p.pads.top || p.pads.left || p.pads.bottom || p.pads.right;
  if (is_avg && padded && node.attrs.GetInt("count_include_pad", 0) != 0)
    return Unsupported("avg_pool2d with count_include_pad=1 and padding: xnnpack excludes padding");
  if (ctx == nullptr) return Status::Ok();

  const auto u32 = [](std::int64_t v) { return static_cast<std::uint32_t>(v); };
  const auto c = static_cast<size_t>(p.channels);
  xnn_operator_t op = nullptr;
  if (is_avg) {
    LATTE_RETURN_IF_ERROR(Check(xnn_create_average_pooling2d_nhwc_f32(
                                    u32(p.pads.top), u32(p.pads.right), u32(p.pads.bottom), u32(p.pads.left), u32(p.kernel_h),
                                    u32(p.kernel_w), u32(p.stride_h), u32(p.stride_w), c, c, c, range.min, range.max, 0, &op),
                                "xnn_create_average_pooling2d_nhwc_f32"));
  } else {
    LATTE_RETURN_IF_ERROR(Check(xnn_create_max_pooling2d_nhwc_f32(u32(p.pads.top), u32(p.pads.right), u32(p.pads.bottom),
                                                                  u32(p.pads.left), u32(p.kernel_h), u32(p.kernel_w),
                                                                  u32(p.stride_h), u32(p.stride_w), 1, 1, c, c, c,
                                                                  range.min, range.max, 0, &op),
                                "xnn_create_max_pooling2d_nhwc_f32"));
  }
  ctx->node->Own(op);
  ctx->node->AddStep([self = ctx->node, op, is_avg, p, in = node.inputs[0], out = node.outputs[0], pool = ctx->pool](TensorBuffers& b) -> Status {
    LATTE_ASSIGN_OR_RETURN(const XnnNode::InOut io, self->Buffers(b, in, out));
    const auto n = static_cast<size_t>(p.batch), h = static_cast<size_t>(p.in_h), w = static_cast<size_t>(p.in_w);
    if (is_avg)
      LATTE_RETURN_IF_ERROR(Check(xnn_setup_average_pooling2d_nhwc_f32(op, n, h, w, io.x, io.y, pool), "xnn_setup_average_pooling2d_nhwc_f32"));
    else
      LATTE_RETURN_IF_ERROR(Check(xnn_setup_max_pooling2d_nhwc_f32(op, n, h, w, io.x, io.y, pool), "xnn_setup_max_pooling2d_nhwc_f32"));
    return RunOp(op, pool);
  });
  return Status::Ok();
}

// Mean over the middle of [outer, reduced, inner]: XNNPACK's global average pooling (NWC).
Status AverageOver(const Node& node, size_t outer, size_t reduced, size_t inner, Range range, Ctx* ctx) {
  if (ctx == nullptr) return Status::Ok();
  xnn_operator_t op = nullptr;
  LATTE_RETURN_IF_ERROR(Check(xnn_create_global_average_pooling_nwc_f32(inner, inner, inner, range.min, range.max, 0, &op),
                              "xnn_create_global_average_pooling_nwc_f32"));
  ctx->node->Own(op);
  ctx->node->AddStep([self = ctx->node, op, outer, reduced, in = node.inputs[0], out = node.outputs[0], pool = ctx->pool](TensorBuffers& b) -> Status {
    LATTE_ASSIGN_OR_RETURN(const XnnNode::InOut io, self->Buffers(b, in, out));
    LATTE_RETURN_IF_ERROR(Check(xnn_setup_global_average_pooling_nwc_f32(op, outer, reduced, io.x, io.y, pool),
                                "xnn_setup_global_average_pooling_nwc_f32"));
    return RunOp(op, pool);
  });
  return Status::Ok();
}

Status GlobalPool(const Graph& graph, const Node& node, Range range, Ctx* ctx) {
  auto params = GetPoolParams(graph, node);
  if (!params.ok()) return Invalid(node, params.status());
  const PoolParams& p = *params;
  return AverageOver(node, static_cast<size_t>(p.batch), static_cast<size_t>(p.in_h * p.in_w), static_cast<size_t>(p.channels),
                     range, ctx);
}

Status Mean(const Graph& graph, const Node& node, Range range, Ctx* ctx) {
  const Tensor& x = graph.tensor(node.inputs[0]);
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  std::vector<std::int64_t> axes = node.attrs.GetInts("axes").value_or(std::vector<std::int64_t>{});
  if (axes.empty())
    for (std::int64_t a = 0; a < rank; ++a) axes.push_back(a);
  for (auto& a : axes) {
    if (a < -rank || a >= rank) return Unsupported("mean axis " + std::to_string(a) + " out of range");
    if (a < 0) a += rank;
  }
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  if (axes.back() - axes.front() + 1 != static_cast<std::int64_t>(axes.size()))
    return Unsupported("mean over non-adjacent axes");
  size_t outer = 1, reduced = 1, inner = 1;
  for (std::int64_t a = 0; a < rank; ++a) {
    const auto d = static_cast<size_t>(x.shape[static_cast<size_t>(a)]);
    if (a < axes.front()) outer *= d;
    else if (a <= axes.back()) reduced *= d;
    else inner *= d;
  }
  if (Elements(graph.tensor(node.outputs[0])) != outer * inner) return Unsupported("mean output size disagrees with its axes");
  return AverageOver(node, outer, reduced, inner, range, ctx);
}

Status Binary(const Graph& graph, const Node& node, Range range, Ctx* ctx) {
  LATTE_RETURN_IF_ERROR(NeedInputs(node, 2));
  if (node.inputs.size() != 2) return Unsupported(Name(node) + " with " + std::to_string(node.inputs.size()) + " inputs");
  if (ctx == nullptr) return Status::Ok();
  using Setup = xnn_status (*)(xnn_operator_t, size_t, const size_t*, size_t, const size_t*, const float*, const float*, float*,
                               pthreadpool_t);
  xnn_operator_t op = nullptr;
  Setup setup = nullptr;
  bool fused = true;  // takes the output range itself
  xnn_status created = xnn_status_success;
  switch (node.kind) {
    case OpKind::kAdd: created = xnn_create_add_nd_f32(range.min, range.max, 0, &op), setup = xnn_setup_add_nd_f32; break;
    case OpKind::kSub: created = xnn_create_subtract_nd_f32(range.min, range.max, 0, &op), setup = xnn_setup_subtract_nd_f32; break;
    case OpKind::kMul: created = xnn_create_multiply_nd_f32(range.min, range.max, 0, &op), setup = xnn_setup_multiply_nd_f32; break;
    case OpKind::kDiv: created = xnn_create_divide_nd_f32(range.min, range.max, 0, &op), setup = xnn_setup_divide_nd_f32; break;
    case OpKind::kMaximum: created = xnn_create_maximum_nd_f32(0, &op), setup = xnn_setup_maximum_nd_f32, fused = false; break;
    case OpKind::kMinimum: created = xnn_create_minimum_nd_f32(0, &op), setup = xnn_setup_minimum_nd_f32, fused = false; break;
    case OpKind::kSquaredDifference:
      created = xnn_create_squared_difference_nd_f32(0, &op), setup = xnn_setup_squared_difference_nd_f32, fused = false;
      break;
    default: return Internal("Binary called on " + Name(node));
  }
  LATTE_RETURN_IF_ERROR(Check(created, "xnn_create_*_nd_f32"));
  ctx->node->Own(op);
  ctx->node->AddStep([self = ctx->node, op, setup, a_dims = Dims(graph.tensor(node.inputs[0])), b_dims = Dims(graph.tensor(node.inputs[1])),
                      a_id = node.inputs[0], b_id = node.inputs[1], y_id = node.outputs[0], pool = ctx->pool](TensorBuffers& b) -> Status {
    const float* a = self->In(b, a_id);
    const float* c = self->In(b, b_id);
    float* y = b.mutable_as<float>(y_id);
    if (a == nullptr) return NoBuffer(a_id);
    if (c == nullptr) return NoBuffer(b_id);
    if (y == nullptr) return NoBuffer(y_id);
    LATTE_RETURN_IF_ERROR(Check(setup(op, a_dims.size(), a_dims.data(), b_dims.size(), b_dims.data(), a, c, y, pool), "xnn_setup_*_nd_f32"));
    return RunOp(op, pool);
  });
  return fused ? Status::Ok() : MaybePostClamp(*ctx, graph, node, range);
}

// The unary ops that are one XNNPACK operator each, made from the channel count alone.
using SimpleUnaryCreate = xnn_status (*)(size_t, size_t, size_t, uint32_t, xnn_operator_t*);
struct SimpleUnaryOp {
  OpKind kind;
  SimpleUnaryCreate create;
  UnarySetup setup;
};
constexpr SimpleUnaryOp kSimpleUnary[] = {
    {OpKind::kSigmoid, xnn_create_sigmoid_nc_f32, xnn_setup_sigmoid_nc_f32},
    {OpKind::kHardSwish, xnn_create_hardswish_nc_f32, xnn_setup_hardswish_nc_f32},
    {OpKind::kAbs, xnn_create_abs_nc_f32, xnn_setup_abs_nc_f32},
    {OpKind::kNeg, xnn_create_negate_nc_f32, xnn_setup_negate_nc_f32},
    {OpKind::kSquare, xnn_create_square_nc_f32, xnn_setup_square_nc_f32},
    {OpKind::kFloor, xnn_create_floor_nc_f32, xnn_setup_floor_nc_f32},
    {OpKind::kCeil, xnn_create_ceiling_nc_f32, xnn_setup_ceiling_nc_f32},
    {OpKind::kRound, xnn_create_bankers_rounding_nc_f32, xnn_setup_bankers_rounding_nc_f32},
    {OpKind::kSqrt, xnn_create_square_root_nc_f32, xnn_setup_square_root_nc_f32},
};

Status Unary(const Graph& graph, const Node& node, Range range, Ctx* ctx) {
  if (node.inputs.size() != 1 && node.kind != OpKind::kPRelu) return Unsupported(Name(node) + " with several inputs");
  const Tensor& x = graph.tensor(node.inputs[0]);
  if (x.shape != graph.tensor(node.outputs[0]).shape) return Unsupported(Name(node) + " output shape differs from its input");
  const size_t c = LastDim(x);
  std::vector<float> slope;
  if (node.kind == OpKind::kPRelu) {
    LATTE_RETURN_IF_ERROR(NeedInputs(node, 2));
    LATTE_RETURN_IF_ERROR(NeedConstant(graph, node, 1, "slope"));
    const Tensor& s = graph.tensor(node.inputs[1]);
    const size_t n = Elements(s);
    const bool per_channel = n == c && !s.shape.empty() && static_cast<size_t>(s.shape.back()) == c;
    if (n != 1 && !per_channel)
      return Unsupported("prelu slope " + ShapeToString(s.shape) + ": xnnpack needs one slope per channel (last dim)");
    const float* data = ConstData(graph, node.inputs[1]);
    slope.assign(c, data[0]);
    if (n != 1) slope.assign(data, data + c);
  }
  const bool is_clamp = node.kind == OpKind::kRelu || node.kind == OpKind::kRelu6 || node.kind == OpKind::kReluN1To1 ||
                        node.kind == OpKind::kClip;
  Range clamp;
  if (is_clamp) {
    const auto [min, max] = ClampBounds(node);
    clamp = {std::max(min, range.min), std::min(max, range.max)};
    if (!(clamp.min < clamp.max)) return Unsupported(Name(node) + " with min ≥ max");
  }
  if (ctx == nullptr) return Status::Ok();

  xnn_operator_t op = nullptr;
  xnn_status created = xnn_status_success;
  UnarySetup setup = nullptr;
  switch (node.kind) {
    case OpKind::kRelu: case OpKind::kRelu6: case OpKind::kReluN1To1: case OpKind::kClip:
      created = xnn_create_clamp_nc_f32(c, c, c, clamp.min, clamp.max, 0, &op), setup = xnn_setup_clamp_nc_f32; break;
    case OpKind::kLeakyRelu:
      created = xnn_create_leaky_relu_nc_f32(c, c, c, static_cast<float>(node.attrs.GetFloat("alpha", 0.01)), 0, &op);
      setup = xnn_setup_leaky_relu_nc_f32;
      break;
    case OpKind::kElu:
      created = xnn_create_elu_nc_f32(c, c, c, static_cast<float>(node.attrs.GetFloat("alpha", 1.0)), 0, &op);
      setup = xnn_setup_elu_nc_f32;
      break;
    case OpKind::kPRelu: created = xnn_create_prelu_nc_f32(c, c, c, ctx->node->Keep(std::move(slope)), 0, &op), setup = xnn_setup_prelu_nc_f32; break;
    default: {
      const auto* simple = std::find_if(std::begin(kSimpleUnary), std::end(kSimpleUnary),
                                        [&](const SimpleUnaryOp& s) { return s.kind == node.kind; });
      if (simple == std::end(kSimpleUnary)) return Internal("Unary called on " + Name(node));
      created = simple->create(c, c, c, 0, &op), setup = simple->setup;
    }
  }
  LATTE_RETURN_IF_ERROR(Check(created, "xnn_create_*_nc_f32"));
  AddUnaryStep(*ctx, graph, node, ctx->node->Own(op), setup, "xnn_setup_*_nc_f32");
  return is_clamp ? Status::Ok() : MaybePostClamp(*ctx, graph, node, range);
}

Status Softmax(const Graph& graph, const Node& node, Range range, Ctx* ctx) {
  const Tensor& x = graph.tensor(node.inputs[0]);
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  std::int64_t axis = node.attrs.GetInt("axis", -1);
  if (axis < 0) axis += rank;
  if (axis != rank - 1) return Unsupported("softmax over axis " + std::to_string(axis) + ": xnnpack normalizes the last axis only");
  if (node.attrs.GetFloat("beta", 1.0) != 1.0) return Unsupported("softmax with beta ≠ 1");
  if (ctx == nullptr) return Status::Ok();
  const size_t c = LastDim(x);
  xnn_operator_t op = nullptr;
  LATTE_RETURN_IF_ERROR(Check(xnn_create_softmax_nc_f32(c, c, c, 0, &op), "xnn_create_softmax_nc_f32"));
  AddUnaryStep(*ctx, graph, node, ctx->node->Own(op), xnn_setup_softmax_nc_f32, "xnn_setup_softmax_nc_f32");
  return MaybePostClamp(*ctx, graph, node, range);
}

Status NearestResize(const Graph& graph, const Node& node, Range range, Ctx* ctx);

Status Resize(const Graph& graph, const Node& node, Range range, Ctx* ctx) {
  const Tensor& x = graph.tensor(node.inputs[0]);
  const Tensor& y = graph.tensor(node.outputs[0]);
  const std::string mode = node.attrs.GetString("mode", "");
  if (mode != "bilinear" && mode != "nearest") return Unsupported("resize mode '" + mode + "' not implemented");
  if (x.shape.size() != 4 || y.shape.size() != 4) return Unsupported("resize of rank " + std::to_string(x.shape.size()));
  if (x.shape[0] != y.shape[0] || x.shape[3] != y.shape[3]) return Unsupported("resize changes batch or channels");
  if (mode == "nearest") return NearestResize(graph, node, range, ctx);
  const std::string coords = node.attrs.GetString("coordinate_transformation", "asymmetric");
  std::uint32_t flags = 0;
  if (coords == "align_corners") flags = XNN_FLAG_ALIGN_CORNERS;
  else if (coords == "asymmetric") flags = XNN_FLAG_TENSORFLOW_LEGACY_MODE;
  else if (coords == "pytorch_half_pixel" && (y.shape[1] == 1 || y.shape[2] == 1))
    return Unsupported("resize pytorch_half_pixel to size 1: xnnpack has no such mode");
  else if (coords != "half_pixel" && coords != "pytorch_half_pixel")
    return Unsupported("resize coordinate_transformation '" + coords + "': xnnpack has half_pixel, align_corners, asymmetric");
  // XNNPACK maps coordinates with in/out; ONNX scales that are not exactly out/in map differently.
  if (auto scales = node.attrs.GetFloats("scales"); scales && scales->size() == 2) {
    for (size_t i = 0; i < 2; ++i)
      if (std::abs(static_cast<double>(x.shape[i + 1]) * (*scales)[i] - static_cast<double>(y.shape[i + 1])) > 1e-6)
        return Unsupported("resize scales that are not output/input sizes");
  }
  if (ctx == nullptr) return Status::Ok();
  const auto c = static_cast<size_t>(x.shape[3]);
  xnn_operator_t op = nullptr;
  LATTE_RETURN_IF_ERROR(Check(xnn_create_resize_bilinear2d_nhwc_f32(c, c, c, flags, &op), "xnn_create_resize_bilinear2d_nhwc_f32"));
  ctx->node->Own(op);
  ctx->node->AddStep([self = ctx->node, op, xd = Dims(x), yd = Dims(y), in = node.inputs[0], out = node.outputs[0], pool = ctx->pool](TensorBuffers& b) -> Status {
    LATTE_ASSIGN_OR_RETURN(const XnnNode::InOut io, self->Buffers(b, in, out));
    LATTE_RETURN_IF_ERROR(Check(xnn_setup_resize_bilinear2d_nhwc_f32(op, xd[0], xd[1], xd[2], yd[1], yd[2], io.x, io.y, pool),
                                "xnn_setup_resize_bilinear2d_nhwc_f32"));
    return RunOp(op, pool);
  });
  return MaybePostClamp(*ctx, graph, node, range);
}

Status Pad(const Graph& graph, const Node& node, Range range, Ctx* ctx) {
  const Tensor& x = graph.tensor(node.inputs[0]);
  const size_t rank = x.shape.size();
  LATTE_ASSIGN_OR_RETURN(const std::vector<std::int64_t> pads, CheckedConstantPads(graph, node));
  if (ctx == nullptr) return Status::Ok();
  std::vector<size_t> pre(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(rank));
  std::vector<size_t> post(pads.begin() + static_cast<std::ptrdiff_t>(rank), pads.end());
  const float value = static_cast<float>(node.attrs.GetFloat("value", 0.0));
  xnn_operator_t op = nullptr;
  LATTE_RETURN_IF_ERROR(Check(xnn_create_constant_pad_nd_x32(&value, 0, &op), "xnn_create_constant_pad_nd_x32"));
  ctx->node->Own(op);
  ctx->node->AddStep([self = ctx->node, op, pre, post, xd = Dims(x), in = node.inputs[0], out = node.outputs[0], pool = ctx->pool](TensorBuffers& b) -> Status {
    LATTE_ASSIGN_OR_RETURN(const XnnNode::InOut io, self->Buffers(b, in, out));
    LATTE_RETURN_IF_ERROR(Check(xnn_setup_constant_pad_nd_x32(op, xd.size(), xd.data(), pre.data(), post.data(), io.x, io.y, pool),
                                "xnn_setup_constant_pad_nd_x32"));
    return RunOp(op, pool);
  });
  return MaybePostClamp(*ctx, graph, node, range);
}

// Concat: each input is a strided copy into its slice of every output row.
Status Concat(const Graph& graph, const Node& node, Range range, Ctx* ctx) {
  const Tensor& y = graph.tensor(node.outputs[0]);
  const auto rank = static_cast<std::int64_t>(y.shape.size());
  std::int64_t axis = node.attrs.GetInt("axis", 0);
  if (axis < -rank || axis >= rank) return Unsupported("concat axis " + std::to_string(axis) + " out of range");
  if (axis < 0) axis += rank;
  size_t outer = 1, total = 0;
  for (std::int64_t a = 0; a < axis; ++a) outer *= static_cast<size_t>(y.shape[static_cast<size_t>(a)]);
  std::vector<size_t> inner;
  for (TensorId id : node.inputs) {
    if (id == kNoTensor) return Unsupported("concat with an absent input");
    const Tensor& t = graph.tensor(id);
    if (t.shape.size() != y.shape.size()) return Unsupported("concat of inputs with different ranks");
    inner.push_back(Elements(t) / outer);
    total += inner.back();
  }
  if (total * outer != Elements(y)) return Unsupported("concat output size disagrees with its inputs");
  if (ctx == nullptr) return Status::Ok();
  size_t offset = 0;
  for (size_t i = 0; i < inner.size(); ++i) {
    xnn_operator_t op = nullptr;
    LATTE_RETURN_IF_ERROR(Check(xnn_create_copy_nc_x32(inner[i], inner[i], total, 0, &op), "xnn_create_copy_nc_x32"));
    ctx->node->Own(op);
    ctx->node->AddStep([self = ctx->node, op, outer, offset, in = node.inputs[i], out = node.outputs[0], pool = ctx->pool](TensorBuffers& b) -> Status {
      LATTE_ASSIGN_OR_RETURN(const XnnNode::InOut io, self->Buffers(b, in, out));
      LATTE_RETURN_IF_ERROR(Check(xnn_setup_copy_nc_x32(op, outer, io.x, io.y + offset, pool), "xnn_setup_copy_nc_x32"));
      return RunOp(op, pool);
    });
    offset += inner[i];
  }
  return MaybePostClamp(*ctx, graph, node, range);
}

// Reshape and friends on contiguous data: one copy of every element.
Status Copy(const Graph& graph, const Node& node, Range range, Ctx* ctx) {
  LATTE_RETURN_IF_ERROR(SameElements(graph, node));
  if (ctx == nullptr) return Status::Ok();
  const size_t n = Elements(graph.tensor(node.outputs[0]));
  xnn_operator_t op = nullptr;
  LATTE_RETURN_IF_ERROR(Check(xnn_create_copy_nc_x32(n, n, n, 0, &op), "xnn_create_copy_nc_x32"));
  ctx->node->Own(op);
  ctx->node->AddStep([self = ctx->node, op, in = node.inputs[0], out = node.outputs[0], pool = ctx->pool](TensorBuffers& b) -> Status {
    LATTE_ASSIGN_OR_RETURN(const XnnNode::InOut io, self->Buffers(b, in, out));
    LATTE_RETURN_IF_ERROR(Check(xnn_setup_copy_nc_x32(op, 1, io.x, io.y, pool), "xnn_setup_copy_nc_x32"));
    return RunOp(op, pool);
  });
  return MaybePostClamp(*ctx, graph, node, range);
}

Status DepthToSpace(const Graph& graph, const Node& node, Range range, Ctx* ctx) {
  const Tensor& x = graph.tensor(node.inputs[0]);
  const Tensor& y = graph.tensor(node.outputs[0]);
  const std::string mode = node.attrs.GetString("mode", "DCR");
  if (mode != "DCR") return Unsupported("depth_to_space mode " + mode + ": xnnpack has DCR only");
  const std::int64_t block = node.attrs.GetInt("block_size", 0);
  if (block < 2) return Unsupported("depth_to_space with block_size " + std::to_string(block));
  if (x.shape.size() != 4 || y.shape != Shape{x.shape[0], x.shape[1] * block, x.shape[2] * block, x.shape[3] / (block * block)} ||
      x.shape[3] % (block * block) != 0)
    return Unsupported("depth_to_space shapes " + ShapeToString(x.shape) + " → " + ShapeToString(y.shape) + " are not NHWC DCR");
  if (ctx == nullptr) return Status::Ok();
  const auto out_c = static_cast<size_t>(y.shape[3]);
  xnn_operator_t op = nullptr;
  LATTE_RETURN_IF_ERROR(Check(xnn_create_depth_to_space_nhwc_x32(out_c, static_cast<size_t>(x.shape[3]), out_c,
                                                                 static_cast<std::uint32_t>(block), 0, &op),
                              "xnn_create_depth_to_space_nhwc_x32"));
  ctx->node->Own(op);
  ctx->node->AddStep([self = ctx->node, op, xd = Dims(x), in = node.inputs[0], out = node.outputs[0], pool = ctx->pool](TensorBuffers& b) -> Status {
    LATTE_ASSIGN_OR_RETURN(const XnnNode::InOut io, self->Buffers(b, in, out));
    LATTE_RETURN_IF_ERROR(Check(xnn_setup_depth_to_space_nhwc_x32(op, xd[0], xd[1], xd[2], io.x, io.y, pool),
                                "xnn_setup_depth_to_space_nhwc_x32"));
    return RunOp(op, pool);
  });
  return MaybePostClamp(*ctx, graph, node, range);
}

// A strided copy of `channels` floats per row, `rows` rows, from `in` (+ in_offset) to `out`
// (+ out_offset): the building block of nearest resize.
void AddStridedCopy(Ctx& ctx, size_t channels, size_t in_stride, size_t out_stride, size_t rows,
                    std::function<const float*(TensorBuffers&)> in, std::function<float*(TensorBuffers&)> out, Status* status) {
  xnn_operator_t op = nullptr;
  *status = Check(xnn_create_copy_nc_x32(channels, in_stride, out_stride, 0, &op), "xnn_create_copy_nc_x32");
  if (!status->ok()) return;
  ctx.node->Own(op);
  ctx.node->AddStep([op, rows, in, out, pool = ctx.pool](TensorBuffers& b) -> Status {
    const float* x = in(b);
    float* y = out(b);
    if (x == nullptr || y == nullptr) return InvalidInput("nearest resize: a tensor has no buffer");
    LATTE_RETURN_IF_ERROR(Check(xnn_setup_copy_nc_x32(op, rows, x, y, pool), "xnn_setup_copy_nc_x32"));
    return RunOp(op, pool);
  });
}

// Nearest resize by whole factors (out = factor × in on each spatial axis), composed of
// XNNPACK's strided copies: XNNPACK (2022) has no nearest resize. Each input pixel is copied
// factor_w times along its row into a scratch image, then each row factor_h times.
Status NearestResize(const Graph& graph, const Node& node, Range range, Ctx* ctx) {
  const Tensor& x = graph.tensor(node.inputs[0]);
  const Tensor& y = graph.tensor(node.outputs[0]);
  const std::int64_t fh = y.shape[1] / x.shape[1], fw = y.shape[2] / x.shape[2];
  if (fh * x.shape[1] != y.shape[1] || fw * x.shape[2] != y.shape[2])
    return Unsupported("nearest resize " + ShapeToString(x.shape) + " → " + ShapeToString(y.shape) +
                       ": xnnpack composes whole upscaling factors only");
  // Coordinates follow the file's scales, which must then be those factors.
  if (auto scales = node.attrs.GetFloats("scales"); scales && scales->size() == 2 &&
                                                    ((*scales)[0] != static_cast<double>(fh) || (*scales)[1] != static_cast<double>(fw)))
    return Unsupported("nearest resize with scales that are not output/input sizes");
  const std::string coords = node.attrs.GetString("coordinate_transformation", "asymmetric");
  // Rounding of the source coordinate: ONNX's "nearest_mode" (default round_prefer_floor); TFLite floors.
  const std::string rounding =
      node.attrs.GetString("nearest_mode", graph.source_format == "tflite" ? "floor" : "round_prefer_floor");
  // With a whole factor f, output o reads input floor(o / f) exactly when the file's rule says so:
  // asymmetric maps o to o/f (fraction up to (f-1)/f), half_pixel to o/f + (1-f)/(2f) (within ±½ of floor).
  const std::int64_t f = std::max(fh, fw);
  bool exact = f == 1;
  if (coords == "asymmetric") {
    exact = exact || rounding == "floor" || (rounding == "round_prefer_floor" && f <= 2);
  } else if (coords == "half_pixel" || coords == "pytorch_half_pixel") {
    exact = exact || rounding == "round_prefer_floor" || rounding == "round_prefer_ceil" ||
            (graph.source_format == "tflite" && rounding == "floor");  // TFLite rounds half-pixel centres
  }
  if (!exact)
    return Unsupported("nearest resize by " + std::to_string(fh) + "x" + std::to_string(fw) + " with " + coords + " / " +
                       rounding + " rounding does not read input floor(out / factor): not composable from copies");
  if (ctx == nullptr) return Status::Ok();
  const auto n = static_cast<size_t>(x.shape[0]), h = static_cast<size_t>(x.shape[1]), w = static_cast<size_t>(x.shape[2]);
  const auto c = static_cast<size_t>(x.shape[3]), sh = static_cast<size_t>(fh), sw = static_cast<size_t>(fw);
  const TensorId in = node.inputs[0], out = node.outputs[0];
  XnnNode* self = ctx->node;
  // Width pass target: the output itself when there is no height pass, else a scratch image.
  float* scratch = nullptr;
  if (sh > 1 && sw > 1) {
    std::vector<float> room(n * h * w * sw * c + XNN_EXTRA_BYTES / sizeof(float), 0.0f);
    scratch = const_cast<float*>(self->Keep(std::move(room)));
  }
  Status status;
  if (sw > 1) {
    for (size_t j = 0; j < sw && status.ok(); ++j) {
      AddStridedCopy(*ctx, c, c, sw * c, n * h * w, [self, in](TensorBuffers& b) { return self->In(b, in); },
                     [scratch, out, j, c](TensorBuffers& b) { return (scratch ? scratch : b.mutable_as<float>(out)) + j * c; },
                     &status);
    }
  }
  if (sh > 1 && status.ok()) {
    const size_t row = w * sw * c;
    for (size_t i = 0; i < sh && status.ok(); ++i) {
      AddStridedCopy(*ctx, row, row, sh * row, n * h,
                     [scratch, self, in](TensorBuffers& b) { return scratch ? static_cast<const float*>(scratch) : self->In(b, in); },
                     [out, i, row](TensorBuffers& b) { return b.mutable_as<float>(out) + i * row; }, &status);
    }
  }
  if (sh == 1 && sw == 1) {
    const size_t all = n * h * w * c;
    AddStridedCopy(*ctx, all, all, all, 1, [self, in](TensorBuffers& b) { return self->In(b, in); },
                   [out](TensorBuffers& b) { return b.mutable_as<float>(out); }, &status);
  }
  LATTE_RETURN_IF_ERROR(status);
  return MaybePostClamp(*ctx, graph, node, range);
}

// Transpose: XNNPACK (2022) has no transpose operator, but its channel shuffle is a batch of 2-D
// transposes ([groups, group_channels] → [group_channels, groups] in each row). Any permutation
// that swaps two blocks of adjacent axes behind fixed leading axes (NCHW ↔ NHWC among them) is
// one shuffle once size-1 axes are dropped and axes that stay neighbours are merged.
Status Transpose(const Graph& graph, const Node& node, Range range, Ctx* ctx) {
  const Tensor& x = graph.tensor(node.inputs[0]);
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  std::vector<std::int64_t> perm = node.attrs.GetInts("perm").value_or(std::vector<std::int64_t>{});
  if (perm.empty())
    for (std::int64_t a = rank - 1; a >= 0; --a) perm.push_back(a);
  if (static_cast<std::int64_t>(perm.size()) != rank) return Unsupported("transpose perm of the wrong length");
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (auto& a : perm) {
    if (a < 0) a += rank;
    if (a < 0 || a >= rank || seen[static_cast<size_t>(a)]) return Unsupported("transpose perm is not a permutation");
    seen[static_cast<size_t>(a)] = true;
  }
  // Output axes as runs of input axes that stay in order next to each other.
  std::vector<std::pair<std::int64_t, size_t>> runs;  // (first input axis, elements)
  std::int64_t last = -2;
  for (std::int64_t a : perm) {
    const auto d = static_cast<size_t>(x.shape[static_cast<size_t>(a)]);
    if (d == 1) continue;
    if (a == last + 1 && !runs.empty()) {
      runs.back().second *= d;
    } else {
      runs.emplace_back(a, d);
    }
    last = a;
  }
  // Runs in input order: the shuffle needs output = [outer, B, A] for input [outer, A, B].
  size_t outer = 1, groups = 1, group_channels = 1;
  if (runs.size() <= 1) {
    // A copy: nothing moves.
  } else if (runs.size() == 2 && runs[0].first > runs[1].first) {
    groups = runs[1].second, group_channels = runs[0].second;
  } else if (runs.size() == 3 && runs[0].first < runs[2].first && runs[2].first < runs[1].first) {
    outer = runs[0].second, groups = runs[2].second, group_channels = runs[1].second;
  } else {
    return Unsupported("transpose " + ShapeToString(x.shape) +
                       " with this perm: xnnpack (2022) has no transpose; only a swap of two blocks of axes runs (as a channel shuffle)");
  }
  if (ctx == nullptr) return Status::Ok();
  const size_t total = Elements(x);
  xnn_operator_t op = nullptr;
  if (groups == 1) {
    LATTE_RETURN_IF_ERROR(Check(xnn_create_copy_nc_x32(total, total, total, 0, &op), "xnn_create_copy_nc_x32"));
  } else {
    const size_t row = groups * group_channels;
    LATTE_RETURN_IF_ERROR(Check(xnn_create_channel_shuffle_nc_x32(groups, group_channels, row, row, 0, &op),
                                "xnn_create_channel_shuffle_nc_x32"));
  }
  ctx->node->Own(op);
  ctx->node->AddStep([self = ctx->node, op, outer, shuffle = groups > 1, in = node.inputs[0], out = node.outputs[0],
                      pool = ctx->pool](TensorBuffers& b) -> Status {
    LATTE_ASSIGN_OR_RETURN(const XnnNode::InOut io, self->Buffers(b, in, out));
    if (shuffle)
      LATTE_RETURN_IF_ERROR(Check(xnn_setup_channel_shuffle_nc_x32(op, outer, io.x, io.y, pool), "xnn_setup_channel_shuffle_nc_x32"));
    else
      LATTE_RETURN_IF_ERROR(Check(xnn_setup_copy_nc_x32(op, 1, io.x, io.y, pool), "xnn_setup_copy_nc_x32"));
    return RunOp(op, pool);
  });
  return MaybePostClamp(*ctx, graph, node, range);
}

// y = op(x, c) with a constant `c` of `c_dims` the node keeps (padded for XNNPACK's over-reads),
// writing `out`, clamped to `range`. Multiply and add: the pieces of hard_sigmoid and batch_norm.
Status AddConstantBinary(Ctx& ctx, bool multiply, std::vector<size_t> x_dims, std::vector<float> c,
                         std::vector<size_t> c_dims, TensorId in, bool in_is_out, TensorId out, Range range) {
  c.resize(c.size() + XNN_EXTRA_BYTES / sizeof(float), 0.0f);
  const float* constant = ctx.node->Keep(std::move(c));
  xnn_operator_t op = nullptr;
  LATTE_RETURN_IF_ERROR(Check(multiply ? xnn_create_multiply_nd_f32(range.min, range.max, 0, &op)
                                       : xnn_create_add_nd_f32(range.min, range.max, 0, &op),
                              multiply ? "xnn_create_multiply_nd_f32" : "xnn_create_add_nd_f32"));
  ctx.node->Own(op);
  ctx.node->AddStep([self = ctx.node, op, multiply, x_dims, c_dims, constant, in, in_is_out, out,
                     pool = ctx.pool](TensorBuffers& b) -> Status {
    const float* x = in_is_out ? b.as<float>(out) : self->In(b, in);
    float* y = b.mutable_as<float>(out);
    if (x == nullptr) return NoBuffer(in);
    if (y == nullptr) return NoBuffer(out);
    const xnn_status s = multiply ? xnn_setup_multiply_nd_f32(op, x_dims.size(), x_dims.data(), c_dims.size(), c_dims.data(),
                                                              x, constant, y, pool)
                                  : xnn_setup_add_nd_f32(op, x_dims.size(), x_dims.data(), c_dims.size(), c_dims.data(), x,
                                                         constant, y, pool);
    LATTE_RETURN_IF_ERROR(Check(s, multiply ? "xnn_setup_multiply_nd_f32" : "xnn_setup_add_nd_f32"));
    return RunOp(op, pool);
  });
  return Status::Ok();
}

// hard_sigmoid = clamp(alpha x + beta, 0, 1): a multiply, then an add whose output range is [0, 1]
// (XNNPACK (2022) has no hard_sigmoid operator).
Status HardSigmoid(const Graph& graph, const Node& node, Range range, Ctx* ctx) {
  if (node.inputs.size() != 1) return Unsupported("hard_sigmoid with several inputs");
  const Tensor& x = graph.tensor(node.inputs[0]);
  if (x.shape != graph.tensor(node.outputs[0]).shape) return Unsupported("hard_sigmoid output shape differs from its input");
  const Range clamp{std::max(0.0f, range.min), std::min(1.0f, range.max)};
  if (!(clamp.min < clamp.max)) return Unsupported("hard_sigmoid with a fused activation leaving no range");
  if (ctx == nullptr) return Status::Ok();
  const auto alpha = static_cast<float>(node.attrs.GetFloat("alpha", 0.2)), beta = static_cast<float>(node.attrs.GetFloat("beta", 0.5));
  LATTE_RETURN_IF_ERROR(AddConstantBinary(*ctx, true, Dims(x), {alpha}, {1}, node.inputs[0], false, node.outputs[0], Range{}));
  return AddConstantBinary(*ctx, false, Dims(x), {beta}, {1}, node.outputs[0], true, node.outputs[0], clamp);
}

// batch_norm (inference, channels last): y = x scale' + shift' with scale' = scale / sqrt(var + eps)
// and shift' = bias - mean scale', folded once here; a multiply and an add per run.
Status BatchNorm(const Graph& graph, const Node& node, Range range, Ctx* ctx) {
  LATTE_RETURN_IF_ERROR(NeedInputs(node, 5));
  for (size_t i = 1; i < 5; ++i) LATTE_RETURN_IF_ERROR(NeedConstant(graph, node, i, "batch_norm parameters"));
  const Tensor& x = graph.tensor(node.inputs[0]);
  if (x.shape.size() < 2) return Unsupported("batch_norm of rank " + std::to_string(x.shape.size()));
  const size_t c = LastDim(x);
  for (size_t i = 1; i < 5; ++i)
    if (Elements(graph.tensor(node.inputs[i])) != c)
      return Unsupported("batch_norm parameter " + std::to_string(i) + " is not one value per channel (last dim)");
  if (x.shape != graph.tensor(node.outputs[0]).shape) return Unsupported("batch_norm output shape differs from its input");
  if (ctx == nullptr) return Status::Ok();
  const float *scale = ConstData(graph, node.inputs[1]), *bias = ConstData(graph, node.inputs[2]);
  const float *mean = ConstData(graph, node.inputs[3]), *var = ConstData(graph, node.inputs[4]);
  const double eps = node.attrs.GetFloat("epsilon", 1e-5);
  std::vector<float> mul(c), add(c);
  for (size_t i = 0; i < c; ++i) {
    const double s = static_cast<double>(scale[i]) / std::sqrt(static_cast<double>(var[i]) + eps);
    mul[i] = static_cast<float>(s);
    add[i] = static_cast<float>(static_cast<double>(bias[i]) - static_cast<double>(mean[i]) * s);
  }
  LATTE_RETURN_IF_ERROR(AddConstantBinary(*ctx, true, Dims(x), std::move(mul), {c}, node.inputs[0], false, node.outputs[0], Range{}));
  return AddConstantBinary(*ctx, false, Dims(x), std::move(add), {c}, node.outputs[0], true, node.outputs[0], range);
}

// --- int8 (--precision int8): a node whose activations the executor lowered to int8 (run/int8_plan:
// per-tensor asymmetric scale and zero point in Tensor::quant) runs on XNNPACK's signed 8-bit
// operators. Weights are quantized here from the fp32 constants, symmetric per output channel
// (qc8) for conv2d, depthwise_conv2d and fully_connected (as a 1x1 qc8 convolution: this XNNPACK's
// qs8 fully-connected operator takes one weight scale); a binary op's constant operand is quantized
// with its own per-tensor parameters. quantize and dequantize are XNNPACK's converts.

// The node's activation input `in` and output `out` as int8 (or raw bytes for converts).
struct Int8Io {
  const std::int8_t* x;
  std::int8_t* y;
};
Expected<Int8Io> Int8Buffers(TensorBuffers& b, TensorId in, TensorId out) {
  const auto* x = reinterpret_cast<const std::int8_t*>(b.data(in));
  auto* y = reinterpret_cast<std::int8_t*>(b.mutable_data(out));
  if (x == nullptr) return NoBuffer(in);
  if (y == nullptr) return NoBuffer(out);
  return Int8Io{x, y};
}

// Adds a step running `op` (set up by `setup` on the node's int8 input and output) once.
void AddInt8Step(Ctx& ctx, const Node& node, xnn_operator_t op,
                 std::function<xnn_status(xnn_operator_t, const std::int8_t*, std::int8_t*, pthreadpool_t)> setup) {
  ctx.node->AddStep([op, setup, in = node.inputs[0], out = node.outputs[0], pool = ctx.pool](TensorBuffers& b) -> Status {
    LATTE_ASSIGN_OR_RETURN(const Int8Io io, Int8Buffers(b, in, out));
    LATTE_RETURN_IF_ERROR(Check(setup(op, io.x, io.y, pool), "xnn_setup (int8)"));
    return RunOp(op, pool);
  });
}

// A qc8 convolution (the int8 conv2d, depthwise_conv2d and fully_connected): weights `w` in OHWI
// (or 1HWO when depthwise), quantized per output channel; the bias as int32 at x_scale × w_scale.
Status AddQc8Convolution(Ctx& ctx, const Graph& graph, const Node& node, const ConvParams& p, const float* w, size_t w_count,
                         bool depthwise, Range range) {
  const Q8 qx = Q8Of(graph.tensor(node.inputs[0])), qy = Q8Of(graph.tensor(node.outputs[0]));
  std::vector<std::int8_t> qw;
  const std::vector<float> w_scale = QuantizeWeights(w, w_count, static_cast<size_t>(p.out_c), depthwise, qw);
  std::vector<std::int32_t> qb(static_cast<size_t>(p.out_c), 0);
  if (p.has_bias) {
    const float* bias = ConstData(graph, node.inputs[2]);
    for (size_t c = 0; c < qb.size(); ++c) {
      const double b = std::round(static_cast<double>(bias[c]) / (static_cast<double>(qx.scale) * w_scale[c]));
      qb[c] = static_cast<std::int32_t>(std::clamp(b, -2147483647.0, 2147483647.0));
    }
  }
  const auto u32 = [](std::int64_t v) { return static_cast<std::uint32_t>(v); };
  const size_t group_in = static_cast<size_t>(p.in_c / p.groups), group_out = static_cast<size_t>(p.out_c / p.groups);
  xnn_operator_t op = nullptr;
  LATTE_RETURN_IF_ERROR(Check(
      xnn_create_convolution2d_nhwc_qc8(u32(p.pads.top), u32(p.pads.right), u32(p.pads.bottom), u32(p.pads.left), u32(p.kernel_h),
                                        u32(p.kernel_w), u32(p.stride_h), u32(p.stride_w), u32(p.dilation_h), u32(p.dilation_w),
                                        u32(p.groups), depthwise ? 1 : group_in, group_out, static_cast<size_t>(p.in_c),
                                        static_cast<size_t>(p.out_c), qx.zero, qx.scale, w_scale.data(), qw.data(), qb.data(),
                                        qy.zero, qy.scale, QuantizeValue(range.min, qy), QuantizeValue(range.max, qy),
                                        depthwise ? XNN_FLAG_DEPTHWISE_CONVOLUTION : 0, &op),
      "xnn_create_convolution2d_nhwc_qc8"));
  ctx.node->Own(op);
  const auto n = static_cast<size_t>(p.batch), h = static_cast<size_t>(p.in_h), wd = static_cast<size_t>(p.in_w);
  AddInt8Step(ctx, node, op, [n, h, wd](xnn_operator_t o, const std::int8_t* x, std::int8_t* y, pthreadpool_t pool) {
    return xnn_setup_convolution2d_nhwc_qc8(o, n, h, wd, x, y, pool);
  });
  return Status::Ok();
}

Status Int8Conv(const Graph& graph, const Node& node, Range range, Ctx* ctx) {
  if (node.kind == OpKind::kTransposeConv2D)
    return Unsupported("xnnpack has no per-channel int8 transpose_conv2d (its qs8 deconvolution takes one weight scale)");
  LATTE_RETURN_IF_ERROR(Conv(graph, node, range, nullptr));  // the fp32 checks: layout, weights, shapes
  if (ctx == nullptr) return Status::Ok();
  const ConvParams p = *GetConvParams(graph, node);
  return AddQc8Convolution(*ctx, graph, node, p, ConstData(graph, node.inputs[1]), Elements(graph.tensor(node.inputs[1])),
                           node.kind == OpKind::kDepthwiseConv2D, range);
}

Status Int8FullyConnected(const Graph& graph, const Node& node, Range range, Ctx* ctx) {
  LATTE_RETURN_IF_ERROR(FullyConnected(graph, node, range, nullptr));
  if (ctx == nullptr) return Status::Ok();
  const FullyConnectedParams f = *GetFullyConnectedParams(graph, node);
  const auto in = static_cast<size_t>(f.in_features), out = static_cast<size_t>(f.out_features);
  std::vector<float> weights(ConstData(graph, node.inputs[1]), ConstData(graph, node.inputs[1]) + in * out);
  if (node.attrs.GetString("weights_layout", "OI") == "IO") {  // OHWI with H = W = 1 is [out, in]
    std::vector<float> t(in * out);
    for (size_t i = 0; i < in; ++i)
      for (size_t o = 0; o < out; ++o) t[o * in + i] = weights[i * out + o];
    weights = std::move(t);
  }
  // rows × in as a batch of 1x1 images: a 1x1 convolution with one scale per output channel.
  ConvParams p;
  p.batch = f.rows, p.in_h = p.in_w = p.out_h = p.out_w = 1, p.in_c = f.in_features, p.out_c = f.out_features;
  p.kernel_h = p.kernel_w = p.stride_h = p.stride_w = p.dilation_h = p.dilation_w = p.groups = 1;
  p.has_bias = f.has_bias;
  return AddQc8Convolution(*ctx, graph, node, p, weights.data(), weights.size(), false, range);
}

Status Convert(const Graph& graph, const Node& node, Range range, Ctx* ctx) {
  if (!range.full()) return Unsupported(Name(node) + " with a fused activation");
  const bool quantize = node.kind == OpKind::kQuantize;
  const Tensor& x = graph.tensor(node.inputs.at(0));
  const Tensor& y = graph.tensor(node.outputs.at(0));
  if (quantize ? (x.dtype != DataType::kFloat32 || !IsInt8Activation(y)) : (!IsInt8Activation(x) || y.dtype != DataType::kFloat32))
    return Unsupported(Name(node) + (quantize ? " from float32 to int8" : " from int8 to float32") + " only");
  if (Elements(x) != Elements(y)) return Unsupported(Name(node) + " changes the number of elements");
  if (ctx == nullptr) return Status::Ok();
  const size_t n = Elements(x);
  xnn_operator_t op = nullptr;
  if (quantize) {
    const Q8 q = Q8Of(y);
    LATTE_RETURN_IF_ERROR(Check(xnn_create_convert_nc_f32_qs8(n, n, n, q.scale, q.zero, -128, 127, 0, &op), "xnn_create_convert_nc_f32_qs8"));
  } else {
    const Q8 q = Q8Of(x);
    LATTE_RETURN_IF_ERROR(Check(xnn_create_convert_nc_qs8_f32(n, n, n, q.scale, q.zero, 0, &op), "xnn_create_convert_nc_qs8_f32"));
  }
  ctx->node->Own(op);
  ctx->node->AddStep([op, quantize, in = node.inputs[0], out = node.outputs[0], pool = ctx->pool](TensorBuffers& b) -> Status {
    const std::uint8_t* x = b.data(in);
    std::uint8_t* y = b.mutable_data(out);
    if (x == nullptr) return NoBuffer(in);
    if (y == nullptr) return NoBuffer(out);
    const xnn_status s = quantize ? xnn_setup_convert_nc_f32_qs8(op, 1, reinterpret_cast<const float*>(x), reinterpret_cast<std::int8_t*>(y), pool)
                                  : xnn_setup_convert_nc_qs8_f32(op, 1, reinterpret_cast<const std::int8_t*>(x), reinterpret_cast<float*>(y), pool);
    LATTE_RETURN_IF_ERROR(Check(s, quantize ? "xnn_setup_convert_nc_f32_qs8" : "xnn_setup_convert_nc_qs8_f32"));
    return RunOp(op, pool);
  });
  return Status::Ok();
}

// add, sub, mul on int8 (broadcasting as the fp32 ones). A constant operand is quantized here with
// its own parameters (Int8ParamsFor its values).
Status Int8Binary(const Graph& graph, const Node& node, Range range, Ctx* ctx) {
  LATTE_RETURN_IF_ERROR(NeedInputs(node, 2));
  if (node.inputs.size() != 2) return Unsupported(Name(node) + " with " + std::to_string(node.inputs.size()) + " inputs");
  if (ctx == nullptr) return Status::Ok();
  Q8 q[2];
  const std::int8_t* constant[2] = {nullptr, nullptr};
  for (int i = 0; i < 2; ++i) {
    const Tensor& t = graph.tensor(node.inputs[static_cast<size_t>(i)]);
    if (!t.is_constant()) {
      q[i] = Q8Of(t);
      continue;
    }
    const float* v = ConstData(graph, node.inputs[static_cast<size_t>(i)]);
    const size_t n = Elements(t);
    ValueRange r;
    for (size_t k = 0; k < n; ++k) r.Add(v[k]);
    const QuantParams p = Int8ParamsFor(r);
    q[i] = {p.scale[0], static_cast<std::int8_t>(p.zero_point[0])};
    std::int8_t* data = ctx->node->KeepBytes(n + XNN_EXTRA_BYTES);
    for (size_t k = 0; k < n; ++k) data[k] = QuantizeValue(v[k], q[i]);
    constant[i] = data;
  }
  const Q8 qy = Q8Of(graph.tensor(node.outputs[0]));
  const std::int8_t lo = QuantizeValue(range.min, qy), hi = QuantizeValue(range.max, qy);
  using Setup = xnn_status (*)(xnn_operator_t, size_t, const size_t*, size_t, const size_t*, const std::int8_t*, const std::int8_t*,
                               std::int8_t*, pthreadpool_t);
  xnn_operator_t op = nullptr;
  Setup setup = nullptr;
  xnn_status created = xnn_status_success;
  switch (node.kind) {
    case OpKind::kAdd: created = xnn_create_add_nd_qs8(q[0].zero, q[0].scale, q[1].zero, q[1].scale, qy.zero, qy.scale, lo, hi, 0, &op), setup = xnn_setup_add_nd_qs8; break;
    case OpKind::kSub: created = xnn_create_subtract_nd_qs8(q[0].zero, q[0].scale, q[1].zero, q[1].scale, qy.zero, qy.scale, lo, hi, 0, &op), setup = xnn_setup_subtract_nd_qs8; break;
    case OpKind::kMul: created = xnn_create_multiply_nd_qs8(q[0].zero, q[0].scale, q[1].zero, q[1].scale, qy.zero, qy.scale, lo, hi, 0, &op), setup = xnn_setup_multiply_nd_qs8; break;
    default: return Internal("Int8Binary called on " + Name(node));
  }
  LATTE_RETURN_IF_ERROR(Check(created, "xnn_create_*_nd_qs8"));
  ctx->node->Own(op);
  ctx->node->AddStep([op, setup, a_dims = Dims(graph.tensor(node.inputs[0])), b_dims = Dims(graph.tensor(node.inputs[1])), c0 = constant[0],
                      c1 = constant[1], a_id = node.inputs[0], b_id = node.inputs[1], y_id = node.outputs[0], pool = ctx->pool](TensorBuffers& b) -> Status {
    const auto* a = c0 ? c0 : reinterpret_cast<const std::int8_t*>(b.data(a_id));
    const auto* c = c1 ? c1 : reinterpret_cast<const std::int8_t*>(b.data(b_id));
    auto* y = reinterpret_cast<std::int8_t*>(b.mutable_data(y_id));
    if (a == nullptr) return NoBuffer(a_id);
    if (c == nullptr) return NoBuffer(b_id);
    if (y == nullptr) return NoBuffer(y_id);
    LATTE_RETURN_IF_ERROR(Check(setup(op, a_dims.size(), a_dims.data(), b_dims.size(), b_dims.data(), a, c, y, pool), "xnn_setup_*_nd_qs8"));
    return RunOp(op, pool);
  });
  return Status::Ok();
}

// sigmoid, tanh, elu and the clamps (relu, relu6, relu_n1_to_1, clip) on int8.
Status Int8Unary(const Graph& graph, const Node& node, Range range, Ctx* ctx) {
  if (node.inputs.size() != 1) return Unsupported(Name(node) + " with several inputs");
  const Tensor& x = graph.tensor(node.inputs[0]);
  const Tensor& y = graph.tensor(node.outputs[0]);
  if (x.shape != y.shape) return Unsupported(Name(node) + " output shape differs from its input");
  const bool is_clamp = node.kind == OpKind::kRelu || node.kind == OpKind::kRelu6 || node.kind == OpKind::kReluN1To1 ||
                        node.kind == OpKind::kClip;
  if (is_clamp) {
    LATTE_RETURN_IF_ERROR(Unary(graph, node, range, nullptr));  // the bounds' checks
    LATTE_RETURN_IF_ERROR(NeedSameInt8Params(graph, node));
  }
  if (ctx == nullptr) return Status::Ok();
  const size_t c = LastDim(x);
  const Q8 qx = Q8Of(x), qy = Q8Of(y);
  xnn_operator_t op = nullptr;
  using Setup = xnn_status (*)(xnn_operator_t, size_t, const std::int8_t*, std::int8_t*, pthreadpool_t);
  Setup setup = nullptr;
  xnn_status created = xnn_status_success;
  const std::int8_t lo = QuantizeValue(range.min, qy), hi = QuantizeValue(range.max, qy);
  switch (node.kind) {
    case OpKind::kSigmoid: created = xnn_create_sigmoid_nc_qs8(c, c, c, qx.zero, qx.scale, qy.zero, qy.scale, lo, hi, 0, &op), setup = xnn_setup_sigmoid_nc_qs8; break;
    case OpKind::kTanh: created = xnn_create_tanh_nc_qs8(c, c, c, qx.zero, qx.scale, qy.zero, qy.scale, lo, hi, 0, &op), setup = xnn_setup_tanh_nc_qs8; break;
    case OpKind::kElu:
      created = xnn_create_elu_nc_qs8(c, c, c, static_cast<float>(node.attrs.GetFloat("alpha", 1.0)), qx.zero, qx.scale, qy.zero, qy.scale, lo, hi, 0, &op);
      setup = xnn_setup_elu_nc_qs8;
      break;
    default: {  // a clamp: its bounds (and a fused range) as int8 under the shared parameters
      const auto [min, max] = ClampBounds(node);
      created = xnn_create_clamp_nc_s8(c, c, c, QuantizeValue(std::max(min, range.min), qy), QuantizeValue(std::min(max, range.max), qy), 0, &op);
      setup = xnn_setup_clamp_nc_s8;
    }
  }
  LATTE_RETURN_IF_ERROR(Check(created, "xnn_create_*_nc_qs8"));
  ctx->node->Own(op);
  const size_t batch = Elements(x) / c;
  AddInt8Step(*ctx, node, op, [setup, batch](xnn_operator_t o, const std::int8_t* in, std::int8_t* out, pthreadpool_t pool) {
    return setup(o, batch, in, out, pool);
  });
  return Status::Ok();
}

// max_pool2d and global_max_pool (same parameters in and out), global_avg_pool and mean (over
// adjacent axes, as XNNPACK's global average pooling).
Status Int8Pool(const Graph& graph, const Node& node, Range range, Ctx* ctx) {
  const Tensor& x = graph.tensor(node.inputs[0]);
  const Tensor& y = graph.tensor(node.outputs[0]);
  const Q8 qx = Q8Of(x), qy = Q8Of(y);
  const std::int8_t lo = QuantizeValue(range.min, qy), hi = QuantizeValue(range.max, qy);
  if (node.kind == OpKind::kMaxPool2D || node.kind == OpKind::kGlobalMaxPool) {
    LATTE_RETURN_IF_ERROR(Pool(graph, node, range, nullptr));
    LATTE_RETURN_IF_ERROR(NeedSameInt8Params(graph, node));
    if (ctx == nullptr) return Status::Ok();
    PoolParams p = *GetPoolParams(graph, node);  // as Pool widens the end padding for ceil_mode
    p.pads.bottom = std::max(p.pads.bottom, (p.out_h - 1) * p.stride_h + p.kernel_h - p.in_h - p.pads.top);
    p.pads.right = std::max(p.pads.right, (p.out_w - 1) * p.stride_w + p.kernel_w - p.in_w - p.pads.left);
    const auto u32 = [](std::int64_t v) { return static_cast<std::uint32_t>(v); };
    const auto c = static_cast<size_t>(p.channels);
    xnn_operator_t op = nullptr;
    LATTE_RETURN_IF_ERROR(Check(xnn_create_max_pooling2d_nhwc_s8(u32(p.pads.top), u32(p.pads.right), u32(p.pads.bottom), u32(p.pads.left),
                                                                 u32(p.kernel_h), u32(p.kernel_w), u32(p.stride_h), u32(p.stride_w), 1, 1,
                                                                 c, c, c, lo, hi, 0, &op),
                                "xnn_create_max_pooling2d_nhwc_s8"));
    ctx->node->Own(op);
    const auto n = static_cast<size_t>(p.batch), h = static_cast<size_t>(p.in_h), w = static_cast<size_t>(p.in_w);
    AddInt8Step(*ctx, node, op, [n, h, w](xnn_operator_t o, const std::int8_t* in, std::int8_t* out, pthreadpool_t pool) {
      return xnn_setup_max_pooling2d_nhwc_s8(o, n, h, w, in, out, pool);
    });
    return Status::Ok();
  }
  // The fp32 handler checks the shapes and axes; its (null-context) answer says what it would reduce.
  size_t outer = 0, reduced = 0, inner = 0;
  if (node.kind == OpKind::kGlobalAvgPool) {
    LATTE_RETURN_IF_ERROR(GlobalPool(graph, node, range, nullptr));
    const PoolParams p = *GetPoolParams(graph, node);
    outer = static_cast<size_t>(p.batch), reduced = static_cast<size_t>(p.in_h * p.in_w), inner = static_cast<size_t>(p.channels);
  } else {
    LATTE_RETURN_IF_ERROR(Mean(graph, node, range, nullptr));
    std::vector<std::int64_t> axes = node.attrs.GetInts("axes").value_or(std::vector<std::int64_t>{});
    const auto rank = static_cast<std::int64_t>(x.shape.size());
    if (axes.empty())
      for (std::int64_t a = 0; a < rank; ++a) axes.push_back(a);
    for (auto& a : axes) a = a < 0 ? a + rank : a;
    const auto [first, last] = std::minmax_element(axes.begin(), axes.end());
    outer = reduced = inner = 1;
    for (std::int64_t a = 0; a < rank; ++a) {
      const auto d = static_cast<size_t>(x.shape[static_cast<size_t>(a)]);
      (a < *first ? outer : a <= *last ? reduced : inner) *= d;
    }
  }
  if (ctx == nullptr) return Status::Ok();
  xnn_operator_t op = nullptr;
  LATTE_RETURN_IF_ERROR(Check(xnn_create_global_average_pooling_nwc_qs8(inner, inner, inner, qx.zero, qx.scale, qy.zero, qy.scale, lo, hi, 0, &op),
                              "xnn_create_global_average_pooling_nwc_qs8"));
  ctx->node->Own(op);
  AddInt8Step(*ctx, node, op, [outer, reduced](xnn_operator_t o, const std::int8_t* in, std::int8_t* out, pthreadpool_t pool) {
    return xnn_setup_global_average_pooling_nwc_qs8(o, outer, reduced, in, out, pool);
  });
  return Status::Ok();
}

// Data movement on int8 (reshape and friends, concat, constant pad) and bilinear resize: the same
// bytes moved as the fp32 forms move floats, under one shared scale and zero point.
Status Int8Move(const Graph& graph, const Node& node, Range range, Ctx* ctx) {
  if (!range.full()) return Unsupported("int8 " + Name(node) + " with a fused activation");
  for (TensorId in : node.inputs)
    if (in != kNoTensor && graph.tensor(in).is_constant() && !(node.kind == OpKind::kReshape && in == node.input(1)))
      return Unsupported("int8 " + Name(node) + " of a constant input is not implemented");
  LATTE_RETURN_IF_ERROR(NeedSameInt8Params(graph, node));
  const Tensor& x = graph.tensor(node.inputs[0]);
  const Tensor& y = graph.tensor(node.outputs[0]);
  const Q8 qy = Q8Of(y);
  switch (node.kind) {
    case OpKind::kResize: {
      LATTE_RETURN_IF_ERROR(Resize(graph, node, range, nullptr));
      if (node.attrs.GetString("mode", "") != "bilinear") return Unsupported("int8 nearest resize is not implemented (bilinear is)");
      if (ctx == nullptr) return Status::Ok();
      const std::string coords = node.attrs.GetString("coordinate_transformation", "asymmetric");
      const std::uint32_t flags = coords == "align_corners" ? XNN_FLAG_ALIGN_CORNERS : coords == "asymmetric" ? XNN_FLAG_TENSORFLOW_LEGACY_MODE : 0;
      const auto c = static_cast<size_t>(x.shape[3]);
      xnn_operator_t op = nullptr;
      LATTE_RETURN_IF_ERROR(Check(xnn_create_resize_bilinear2d_nhwc_s8(c, c, c, flags, &op), "xnn_create_resize_bilinear2d_nhwc_s8"));
      ctx->node->Own(op);
      AddInt8Step(*ctx, node, op, [xd = Dims(x), yd = Dims(y)](xnn_operator_t o, const std::int8_t* in, std::int8_t* out, pthreadpool_t pool) {
        return xnn_setup_resize_bilinear2d_nhwc_s8(o, xd[0], xd[1], xd[2], yd[1], yd[2], in, out, pool);
      });
      return Status::Ok();
    }
    case OpKind::kPad: {
      LATTE_RETURN_IF_ERROR(Pad(graph, node, range, nullptr));
      if (ctx == nullptr) return Status::Ok();
      const std::vector<std::int64_t> pads = *CheckedConstantPads(graph, node);
      const size_t rank = x.shape.size();
      std::vector<size_t> pre(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(rank));
      std::vector<size_t> post(pads.begin() + static_cast<std::ptrdiff_t>(rank), pads.end());
      std::int8_t* value = ctx->node->KeepBytes(1);
      *value = QuantizeValue(static_cast<float>(node.attrs.GetFloat("value", 0.0)), qy);
      xnn_operator_t op = nullptr;
      LATTE_RETURN_IF_ERROR(Check(xnn_create_constant_pad_nd_x8(value, 0, &op), "xnn_create_constant_pad_nd_x8"));
      ctx->node->Own(op);
      AddInt8Step(*ctx, node, op, [pre, post, xd = Dims(x)](xnn_operator_t o, const std::int8_t* in, std::int8_t* out, pthreadpool_t pool) {
        return xnn_setup_constant_pad_nd_x8(o, xd.size(), xd.data(), pre.data(), post.data(), in, out, pool);
      });
      return Status::Ok();
    }
    case OpKind::kConcat: {
      LATTE_RETURN_IF_ERROR(Concat(graph, node, range, nullptr));
      if (ctx == nullptr) return Status::Ok();
      const auto rank = static_cast<std::int64_t>(y.shape.size());
      std::int64_t axis = node.attrs.GetInt("axis", 0);
      if (axis < 0) axis += rank;
      size_t outer = 1;
      for (std::int64_t a = 0; a < axis; ++a) outer *= static_cast<size_t>(y.shape[static_cast<size_t>(a)]);
      const size_t total = Elements(y) / outer;
      size_t offset = 0;
      for (TensorId in : node.inputs) {
        const size_t inner = Elements(graph.tensor(in)) / outer;
        xnn_operator_t op = nullptr;
        LATTE_RETURN_IF_ERROR(Check(xnn_create_copy_nc_x8(inner, inner, total, 0, &op), "xnn_create_copy_nc_x8"));
        ctx->node->Own(op);
        ctx->node->AddStep([op, outer, offset, in, out = node.outputs[0], pool = ctx->pool](TensorBuffers& b) -> Status {
          LATTE_ASSIGN_OR_RETURN(const Int8Io io, Int8Buffers(b, in, out));
          LATTE_RETURN_IF_ERROR(Check(xnn_setup_copy_nc_x8(op, outer, io.x, io.y + offset, pool), "xnn_setup_copy_nc_x8"));
          return RunOp(op, pool);
        });
        offset += inner;
      }
      return Status::Ok();
    }
    default: {  // reshape, flatten, squeeze, unsqueeze, identity: one copy of every byte
      LATTE_RETURN_IF_ERROR(SameElements(graph, node));
      if (ctx == nullptr) return Status::Ok();
      const size_t n = Elements(y);
      xnn_operator_t op = nullptr;
      LATTE_RETURN_IF_ERROR(Check(xnn_create_copy_nc_x8(n, n, n, 0, &op), "xnn_create_copy_nc_x8"));
      ctx->node->Own(op);
      AddInt8Step(*ctx, node, op, [](xnn_operator_t o, const std::int8_t* in, std::int8_t* out, pthreadpool_t pool) {
        return xnn_setup_copy_nc_x8(o, 1, in, out, pool);
      });
      return Status::Ok();
    }
  }
}

// The kinds this backend runs in int8, and what analyzes and creates each: the one list of them.
using Int8Handler = Status (*)(const Graph&, const Node&, Range, Ctx*);
const KindTable<Int8Handler>& Int8Handlers() {
  using K = OpKind;
  static const KindTable<Int8Handler> handlers = [] {
    KindTable<Int8Handler> h;
    h.Add({K::kConv2D, K::kDepthwiseConv2D, K::kTransposeConv2D}, Int8Conv);
    h.Add({K::kFullyConnected}, Int8FullyConnected);
    h.Add({K::kQuantize, K::kDequantize}, Convert);
    h.Add({K::kAdd, K::kSub, K::kMul}, Int8Binary);
    h.Add({K::kSigmoid, K::kTanh, K::kElu, K::kRelu, K::kRelu6, K::kReluN1To1, K::kClip}, Int8Unary);
    h.Add({K::kMaxPool2D, K::kGlobalMaxPool, K::kGlobalAvgPool, K::kMean}, Int8Pool);
    h.Add({K::kReshape, K::kFlatten, K::kSqueeze, K::kUnsqueeze, K::kIdentity, K::kConcat, K::kPad, K::kResize}, Int8Move);
    return h;
  }();
  return handlers;
}

// Why a kind has no int8 form here: what this XNNPACK lacks, or what Latte has not built on it.
std::string NoInt8(OpKind kind) {
  const std::string name(OpName(kind));
  switch (kind) {
    case OpKind::kAvgPool2D: return "xnnpack has no int8 avg_pool2d (its average pooling is qu8 only)";
    case OpKind::kLeakyRelu: return "xnnpack has no int8 leaky_relu (qu8 only)";
    case OpKind::kSoftmax: return "xnnpack has no int8 softmax (qu8 only)";
    case OpKind::kDepthToSpace: return "xnnpack has no int8 depth_to_space (x32 only)";
    case OpKind::kTranspose:
      return "int8 transpose is not implemented in Latte's xnnpack backend (XNNPACK's x8 channel shuffle could run it)";
    default: return "xnnpack has no int8 " + name;
  }
}

// What analyzes and creates each kind this backend runs: the one list of them.
using Handler = Status (*)(const Graph&, const Node&, Range, Ctx*, Precision);
// A handler of an fp32 node (at --precision int8 too, for the nodes kept at fp32).
template <Status (*F)(const Graph&, const Node&, Range, Ctx*)>
Status AnyPrecision(const Graph& graph, const Node& node, Range range, Ctx* ctx, Precision) {
  return F(graph, node, range, ctx);
}
const KindTable<Handler>& Handlers() {
  using K = OpKind;
  static const KindTable<Handler> handlers = [] {
    KindTable<Handler> h;
    h.Add({K::kConv2D, K::kDepthwiseConv2D, K::kTransposeConv2D}, AnyPrecision<Conv>);
    h.Add({K::kFullyConnected}, AnyPrecision<FullyConnected>);
    // A global max pool is a max pool with the whole image as window.
    h.Add({K::kMaxPool2D, K::kAvgPool2D, K::kGlobalMaxPool}, AnyPrecision<Pool>);
    h.Add({K::kGlobalAvgPool}, AnyPrecision<GlobalPool>);
    h.Add({K::kMean}, AnyPrecision<Mean>);
    h.Add({K::kAdd, K::kSub, K::kMul, K::kDiv, K::kMaximum, K::kMinimum, K::kSquaredDifference}, AnyPrecision<Binary>);
    h.Add({K::kRelu, K::kRelu6, K::kReluN1To1, K::kClip, K::kLeakyRelu, K::kPRelu, K::kElu}, AnyPrecision<Unary>);
    for (const SimpleUnaryOp& op : kSimpleUnary) h.Add(op.kind, AnyPrecision<Unary>);
    h.Add({K::kSoftmax}, AnyPrecision<Softmax>);
    h.Add({K::kResize}, AnyPrecision<Resize>);
    h.Add({K::kPad}, AnyPrecision<Pad>);
    h.Add({K::kConcat}, AnyPrecision<Concat>);
    h.Add({K::kReshape, K::kFlatten, K::kSqueeze, K::kUnsqueeze, K::kIdentity}, AnyPrecision<Copy>);
    h.Add({K::kDepthToSpace}, AnyPrecision<DepthToSpace>);
    h.Add({K::kTranspose}, AnyPrecision<Transpose>);
    h.Add({K::kHardSigmoid}, AnyPrecision<HardSigmoid>);
    h.Add({K::kBatchNorm}, AnyPrecision<BatchNorm>);
    return h;
  }();
  return handlers;
}

// Why the library itself cannot run a kind (Debian 12's XNNPACK has no operator for it), or "".
std::string MissingFromLibrary(OpKind kind) {
  if (IsComparisonOrLogic(kind) || kind == OpKind::kWhere)
    return "this XNNPACK has no comparison, logical or select operators (bool tensors)";
  if (kind == OpKind::kLayerNorm) return "this XNNPACK has no layer normalization operator";
  if (kind == OpKind::kArgMax || kind == OpKind::kArgMin)
    return "this XNNPACK has no argmax/argmin along an axis (only argmax pooling of 2-D windows)";
  if (kind == OpKind::kGather) return "this XNNPACK has no gather operator";
  if (kind == OpKind::kMatMul)
    return "this XNNPACK (git 2022-02-16) has no batch matrix multiply (no xnn_create_batch_matrix_multiply_nc_f32); "
           "only a product by constant weights runs, as fully_connected";
  if (kind == OpKind::kGelu) return "this XNNPACK has no GELU operator";
  return "";
}

// Checks `node` and, with a context, creates its operators. Every refusal is kUnsupported.
Status Analyze(const Graph& graph, NodeId id, Precision precision, Ctx* ctx) {
  if (precision == Precision::kBf16)
    return Unsupported(std::string("bf16 unsupported on xnnpack, because XNNPACK ") + LATTE_XNNPACK_VERSION +
                       " has no bf16 operators (none in xnnpack.h)");
  if (id >= 0 && static_cast<size_t>(id) < graph.num_nodes())
    if (const std::string missing = MissingFromLibrary(graph.node(id).kind); !missing.empty())
      return Unsupported(std::string(OpName(graph.node(id).kind)) + " is unsupported on xnnpack, because " + missing);
  LATTE_ASSIGN_OR_RETURN(const Node* checked, NhwcNode(graph, id, "xnnpack"));
  const Node& node = *checked;
  if (IsInt8Node(graph, node)) {
    if (precision != Precision::kInt8) return Unsupported("an int8 node runs at --precision int8 only");
    const Int8Handler* handler = Int8Handlers().Find(node.kind);
    if (handler == nullptr) return Unsupported(NoInt8(node.kind));
    LATTE_RETURN_IF_ERROR(CheckInt8Tensors(graph, node, XNN_MAX_TENSOR_DIMS));
    LATTE_ASSIGN_OR_RETURN(const Range range, FusedActivation(node));
    if (ctx != nullptr) return (*handler)(graph, node, range, ctx);
    // Without weights to pack, creating the operators is cheap: Supports then knows XNNPACK's own
    // limits (scale ratios) too. A conv's are found when it is prepared.
    const bool packs_weights = node.kind == OpKind::kConv2D || node.kind == OpKind::kDepthwiseConv2D ||
                               node.kind == OpKind::kFullyConnected;
    if (packs_weights) return (*handler)(graph, node, range, nullptr);
    XnnNode scratch;
    Ctx trial{nullptr, &scratch};
    return (*handler)(graph, node, range, &trial);
  }
  const Handler* handler = Handlers().Find(node.kind);
  if (handler == nullptr) return Unsupported(Name(node) + " not implemented in the xnnpack backend");
  LATTE_RETURN_IF_ERROR(CheckTensors(graph, node, node.kind == OpKind::kReshape ? 1 : -1));
  LATTE_ASSIGN_OR_RETURN(const Range range, FusedActivation(node));
  if (ctx != nullptr) {
    // Constants read at run time (not weights packed at create) get padded copies.
    const bool has_weights = node.kind == OpKind::kConv2D || node.kind == OpKind::kDepthwiseConv2D ||
                             node.kind == OpKind::kTransposeConv2D || node.kind == OpKind::kFullyConnected ||
                             node.kind == OpKind::kPRelu || node.kind == OpKind::kReshape || node.kind == OpKind::kBatchNorm;
    const size_t read_at_run = has_weights ? 1 : node.inputs.size();
    for (size_t i = 0; i < read_at_run; ++i)
      if (node.inputs[i] != kNoTensor && graph.tensor(node.inputs[i]).is_constant())
        ctx->node->BindConstant(node.inputs[i], graph.tensor(node.inputs[i]));
  }
  return (*handler)(graph, node, range, ctx, precision);
}

}  // namespace

void XnnpackBackend::PoolDeleter::operator()(pthreadpool* pool) const { pthreadpool_destroy(pool); }

XnnpackBackend::XnnpackBackend(const RunOptions& options) : options_(options) {}

Expected<std::unique_ptr<Backend>> XnnpackBackend::Create(const RunOptions& options) {
  LATTE_RETURN_IF_ERROR(InitializeOnce());
  std::unique_ptr<XnnpackBackend> backend(new XnnpackBackend(options));
  if (options.num_threads > 1) {
    backend->pool_.reset(pthreadpool_create(static_cast<size_t>(options.num_threads)));
    if (backend->pool_ == nullptr) return Internal("pthreadpool_create(" + std::to_string(options.num_threads) + ") failed");
  }
  return std::unique_ptr<Backend>(std::move(backend));
}

std::string XnnpackBackend::Version() const {
  const int n = options_.num_threads;
  return std::string("XNNPACK ") + LATTE_XNNPACK_VERSION + " (pthreadpool, " + std::to_string(n) +
         (n == 1 ? " thread)" : " threads)");
}

Support XnnpackBackend::RunsPrecision(Precision precision) const {
  if (precision != Precision::kBf16) return Support::Yes();
  return Support::No(std::string("bf16 unsupported on xnnpack, because XNNPACK ") + LATTE_XNNPACK_VERSION +
                     " has no bf16 operators (none in xnnpack.h)");
}

Support XnnpackBackend::Supports(const Graph& graph, NodeId node) const {
  Status status = Analyze(graph, node, options_.precision, nullptr);
  return status.ok() ? Support::Yes() : Support::No(status.message());
}

Expected<std::unique_ptr<PreparedNode>> XnnpackBackend::Prepare(const Graph& graph, NodeId node) {
  auto prepared = std::make_unique<XnnNode>();
  Ctx ctx{pool_.get(), prepared.get()};
  LATTE_RETURN_IF_ERROR(Analyze(graph, node, options_.precision, &ctx));
  return std::unique_ptr<PreparedNode>(std::move(prepared));
}

void RegisterXnnpackBackend(BackendRegistry& registry) {
  registry.RegisterBuiltin({"xnnpack", "XNNPACK operators (fp32, NHWC), pthreadpool threads",
                            [](const RunOptions& options) { return XnnpackBackend::Create(options); },
                            /*takes_nhwc=*/true, /*clamps_run_apart=*/{}, /*nchwc_block=*/0,
                            /*channels_in_vectors=*/true});
}

}  // namespace latte
