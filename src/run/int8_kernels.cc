#include "run/int8_kernels.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "run/node_checks.h"

namespace latte {

Q8 Q8Of(const Tensor& t) { return {t.quant.scale.at(0), static_cast<std::int8_t>(t.quant.zero_point.at(0))}; }

bool SameQ8(const Tensor& a, const Tensor& b) { return a.quant.scale == b.quant.scale && a.quant.zero_point == b.quant.zero_point; }

std::int8_t QuantizeValue(float v, Q8 q) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  if (v == -kInf) return -128;
  if (v == kInf) return 127;
  const double x = std::round(static_cast<double>(v) / q.scale) + q.zero;
  return static_cast<std::int8_t>(std::clamp(x, -128.0, 127.0));
}

bool IsInt8Activation(const Tensor& t) { return t.dtype == DataType::kInt8 && !t.is_constant(); }

bool IsInt8Node(const Graph& graph, const Node& node) {
  for (TensorId t : node.outputs)
    if (IsInt8Activation(graph.tensor(t))) return true;
  for (TensorId t : node.inputs)
    if (t != kNoTensor && IsInt8Activation(graph.tensor(t))) return true;
  return false;
}

Status NeedSameInt8Params(const Graph& graph, const Node& node) {
  for (TensorId in : node.inputs)
    if (in != kNoTensor && IsInt8Activation(graph.tensor(in)) && !SameQ8(graph.tensor(in), graph.tensor(node.outputs[0])))
      return Unsupported("int8 " + std::string(OpName(node.kind)) + " needs the same scale and zero point on its inputs and output");
  return Status::Ok();
}

Status CheckInt8Tensors(const Graph& graph, const Node& node, std::size_t max_rank) {
  auto check = [&](TensorId id, const char* role) -> Status {
    const Tensor& t = graph.tensor(id);
    const std::string what = std::string(role) + " '" + t.name + "'";
    if (!t.fully_known()) return Unsupported(what + " has unknown shape");
    if (t.num_elements().value_or(0) == 0) return Unsupported(what + " is empty");
    if (t.shape.size() > max_rank) return Unsupported(what + " has rank > " + std::to_string(max_rank));
    if (t.is_constant() || t.dtype == DataType::kFloat32) {
      if (t.dtype == DataType::kFloat32 || (node.kind == OpKind::kReshape && t.is_constant())) return Status::Ok();
      return Unsupported(what + " is " + std::string(DataTypeName(t.dtype)));
    }
    if (t.dtype != DataType::kInt8) return Unsupported(what + " is " + std::string(DataTypeName(t.dtype)) + ", not int8");
    return CheckQuantParams(t, what, /*per_tensor=*/true);
  };
  for (std::size_t i = 0; i < node.inputs.size(); ++i)
    if (node.inputs[i] != kNoTensor) LATTE_RETURN_IF_ERROR(check(node.inputs[i], "input"));
  if (node.outputs.size() != 1)
    return Unsupported(std::string(OpName(node.kind)) + " with " + std::to_string(node.outputs.size()) + " outputs");
  return check(node.outputs[0], "output");
}

std::vector<float> QuantizeWeights(const float* data, std::size_t count, std::size_t channels, bool channel_is_last,
                                   std::vector<std::int8_t>& out) {
  std::vector<float> scale(channels, 0.0f);
  const auto channel = [&](std::size_t i) { return channel_is_last ? i % channels : i / (count / channels); };
  for (std::size_t i = 0; i < count; ++i) scale[channel(i)] = std::max(scale[channel(i)], std::abs(data[i]));
  const float largest = *std::max_element(scale.begin(), scale.end());
  for (float& s : scale) s = s > 0 ? s / 127.0f : (largest > 0 ? largest / 127.0f : 1.0f);
  out.resize(count);
  for (std::size_t i = 0; i < count; ++i)
    out[i] = static_cast<std::int8_t>(std::clamp(std::round(data[i] / scale[channel(i)]), -127.0f, 127.0f));
  return scale;
}

}  // namespace latte
