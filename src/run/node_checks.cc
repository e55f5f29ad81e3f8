#include "run/node_checks.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace latte {

Status CheckFloatTensors(const Graph& graph, const Node& node, int skip_input, std::string_view backend,
                         std::size_t max_rank, DataType activations) {
  auto check = [&](TensorId id, const char* role) -> Status {
    const Tensor& t = graph.tensor(id);
    if (t.dtype == DataType::kInt8 || t.dtype == DataType::kUInt8 || !t.quant.empty())
      return Unsupported("int8 not implemented");
    const DataType want = t.is_constant() ? DataType::kFloat32 : activations;
    if (t.dtype != want && want == DataType::kFloat32)
      return Unsupported(std::string(role) + " '" + t.name + "' is " + std::string(DataTypeName(t.dtype)) + ": " +
                         std::string(backend) + " runs fp32 only");
    if (t.dtype != want)
      return Unsupported(std::string(role) + " '" + t.name + "' is " + std::string(DataTypeName(t.dtype)) + ": " +
                         std::string(backend) + " at this precision runs " + std::string(DataTypeName(want)) +
                         " activations (a graph the executor converted)");
    if (!t.fully_known()) return Unsupported(std::string(role) + " '" + t.name + "' has unknown shape");
    if (t.shape.size() > max_rank)
      return Unsupported(std::string(role) + " '" + t.name + "' has rank " + std::to_string(t.shape.size()) + " > " +
                         std::to_string(max_rank));
    if (t.num_elements().value_or(0) == 0) return Unsupported(std::string(role) + " '" + t.name + "' is empty");
    return Status::Ok();
  };
  for (std::size_t i = 0; i < node.inputs.size(); ++i)
    if (node.inputs[i] != kNoTensor && static_cast<int>(i) != skip_input)
      LATTE_RETURN_IF_ERROR(check(node.inputs[i], "input"));
  for (TensorId t : node.outputs) LATTE_RETURN_IF_ERROR(check(t, "output"));
  if (node.outputs.size() != 1)
    return Unsupported(std::string(OpName(node.kind)) + " with " + std::to_string(node.outputs.size()) + " outputs");
  return Status::Ok();
}

std::pair<float, float> ClampBounds(const Node& node) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  switch (node.kind) {
    case OpKind::kRelu6: return {0.0f, 6.0f};
    case OpKind::kReluN1To1: return {-1.0f, 1.0f};
    case OpKind::kClip:
      return {static_cast<float>(node.attrs.GetFloat("min", -kInf)), static_cast<float>(node.attrs.GetFloat("max", kInf))};
    default: return {0.0f, kInf};  // relu
  }
}

Expected<const Node*> NhwcNode(const Graph& graph, NodeId id, std::string_view backend) {
  if (id < 0 || static_cast<size_t>(id) >= graph.num_nodes()) return Unsupported("no node " + std::to_string(id));
  const Node& node = graph.node(id);
  const std::string layout = node.attrs.GetString("layout", "NHWC");
  if (layout != "NHWC") return Unsupported("layout " + layout + ": " + std::string(backend) + " runs NHWC graphs");
  if (node.kind == OpKind::kOpaque) return Unsupported("opaque op '" + node.source_op + "'");
  if (node.inputs.empty() || node.input(0) == kNoTensor) return Unsupported(std::string(OpName(node.kind)) + " without input");
  return &node;
}

Status NeedInputs(const Node& node, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (node.input(i) == kNoTensor) return Unsupported(std::string(OpName(node.kind)) + " lacks input " + std::to_string(i));
  return Status::Ok();
}

Status CheckQuantParams(const Tensor& t, const std::string& what, bool per_tensor) {
  const QuantParams& q = t.quant;
  if (per_tensor && (q.scale.size() != 1 || q.zero_point.size() != 1)) return Unsupported(what + " is not quantized per tensor");
  if (q.scale.empty() || q.zero_point.size() != q.scale.size())
    return Unsupported(what + " has " + std::to_string(q.scale.size()) + " scales and " + std::to_string(q.zero_point.size()) + " zero points");
  if (q.scale.size() > 1 && (q.axis < 0 || static_cast<std::size_t>(q.axis) >= t.shape.size() ||
                             t.shape[static_cast<std::size_t>(q.axis)] != static_cast<std::int64_t>(q.scale.size())))
    return Unsupported(what + " has " + std::to_string(q.scale.size()) + " scales, which do not match its shape along axis " +
                       std::to_string(q.axis));
  for (float scale : q.scale)
    if (!std::isnormal(scale) || !(scale > 0)) return Unsupported(what + " has scale " + std::to_string(scale));
  const std::int64_t lo = t.dtype == DataType::kInt8 ? -128 : 0, hi = t.dtype == DataType::kInt32 ? 0 : lo + 255;
  for (std::int64_t zero : q.zero_point)
    if (zero < lo || zero > hi) return Unsupported(what + " has zero point " + std::to_string(zero));
  return Status::Ok();
}

Status NeedConstant(const Graph& graph, const Node& node, std::size_t i, const char* what) {
  TensorId id = node.input(i);
  if (id != kNoTensor && !graph.tensor(id).is_constant())
    return Unsupported(std::string(OpName(node.kind)) + " with non-constant " + what);
  return Status::Ok();
}

namespace {

std::int64_t Elements(const Tensor& t) { return t.num_elements().value_or(0); }

Status Invalid(const Node& node, const Status& status) {
  return Unsupported(std::string(OpName(node.kind)) + ": " + status.message());
}

}  // namespace

Expected<std::vector<std::int64_t>> CheckedConstantPads(const Graph& graph, const Node& node) {
  const Shape& xs = graph.tensor(node.inputs[0]).shape;
  const Shape& ys = graph.tensor(node.outputs[0]).shape;
  const size_t rank = xs.size();
  const std::string mode = node.attrs.GetString("mode", "constant");
  if (mode != "constant") return Unsupported("pad mode '" + mode + "' not implemented (constant only)");
  if (node.inputs.size() != 1) return Unsupported("pad with pads as an input");
  auto pads = node.attrs.GetInts("pads");
  if (!pads || pads->size() != 2 * rank) return Unsupported("pad without 2 × rank 'pads'");
  if (std::any_of(pads->begin(), pads->end(), [](auto v) { return v < 0; })) return Unsupported("pad with negative pads");
  if (ys.size() != rank) return Unsupported("pad changes the rank");
  for (size_t i = 0; i < rank; ++i)
    if (ys[i] != xs[i] + (*pads)[i] + (*pads)[i + rank]) return Unsupported("pad output shape disagrees with its pads");
  return *pads;
}

Expected<ConvParams> CheckedConvParams(const Graph& graph, const Node& node) {
  const std::string name(OpName(node.kind));
  LATTE_RETURN_IF_ERROR(NeedInputs(node, 2));
  LATTE_RETURN_IF_ERROR(NeedConstant(graph, node, 1, "weights"));
  LATTE_RETURN_IF_ERROR(NeedConstant(graph, node, 2, "bias"));
  auto params = GetConvParams(graph, node);
  if (!params.ok()) return Invalid(node, params.status());
  const ConvParams& p = *params;
  if (p.has_bias && Elements(graph.tensor(node.inputs[2])) != p.out_c)
    return Unsupported(name + " bias has " + std::to_string(Elements(graph.tensor(node.inputs[2]))) + " values for " +
                       std::to_string(p.out_c) + " output channels");
  const Tensor& y = graph.tensor(node.outputs[0]);
  if (y.shape != Shape{p.batch, p.out_h, p.out_w, p.out_c})
    return Unsupported(name + " output shape " + ShapeToString(y.shape) + " disagrees with its parameters");
  return params;
}

Expected<FullyConnectedParams> CheckedFullyConnectedParams(const Graph& graph, const Node& node) {
  LATTE_RETURN_IF_ERROR(NeedInputs(node, 2));
  LATTE_RETURN_IF_ERROR(NeedConstant(graph, node, 1, "weights"));
  LATTE_RETURN_IF_ERROR(NeedConstant(graph, node, 2, "bias"));
  if (node.attrs.GetFloat("alpha", 1.0) != 1.0 || node.attrs.GetFloat("beta", 1.0) != 1.0)
    return Unsupported("fully_connected with alpha or beta ≠ 1");
  auto params = GetFullyConnectedParams(graph, node);
  if (!params.ok()) return Invalid(node, params.status());
  const FullyConnectedParams& p = *params;
  if (p.has_bias && Elements(graph.tensor(node.inputs[2])) != p.out_features)
    return Unsupported("fully_connected bias is not one value per output feature");
  if (Elements(graph.tensor(node.outputs[0])) != p.rows * p.out_features)
    return Unsupported("fully_connected output size disagrees with its parameters");
  return params;
}

}  // namespace latte
