#pragma once
// The checks every fp32 backend makes before saying it can run a node, with the same wording
// everywhere: a "no" from any backend reads the same way.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"
#include "ir/op_params.h"

namespace latte {

/// Every input (except `skip_input`, e.g. reshape's shape) and the single output must be
/// float32, fully known, non-empty and of rank ≤ `max_rank`; int8 is "not implemented".
/// `backend` names the backend in the message ("xnnpack runs fp32 only"). With `activations`
/// kBFloat16 (a graph run at bf16), activations must be bfloat16 and constants stay float32.
Status CheckFloatTensors(const Graph& graph, const Node& node, int skip_input, std::string_view backend,
                         std::size_t max_rank, DataType activations = DataType::kFloat32);
/// Node `id` of `graph` as an NHWC backend takes it: refused (kUnsupported, `backend` naming the
/// backend) when the id is out of range, the node has another layout, is an opaque op or has no
/// first input.
Expected<const Node*> NhwcNode(const Graph& graph, NodeId id, std::string_view backend);
/// Inputs 0..n-1 must be present.
Status NeedInputs(const Node& node, std::size_t n);
/// Input `i`, when present, must be a constant (`what` names it: "weights", "bias").
Status NeedConstant(const Graph& graph, const Node& node, std::size_t i, const char* what);

/// A quantized tensor's parameters as an int8 kernel takes them (`what` names the tensor in the
/// message, "input 'x'"): with `per_tensor`, one scale and one zero point; else as many zero
/// points as scales, one per tensor or one per slice along its axis. Every scale finite and
/// positive, every zero point in its type's range (int8 −128..127, uint8 0..255, int32 only 0).
Status CheckQuantParams(const Tensor& t, const std::string& what, bool per_tensor);

/// The real bounds a clamp node keeps its input within: relu [0, ∞), relu6 [0, 6], relu_n1_to_1
/// [−1, 1], clip its min and max attributes (±∞ when absent). `node` is one of those four kinds.
std::pair<float, float> ClampBounds(const Node& node);

/// A pad node's pads (begins, then ends, one of each per axis), checked: a constant pad, pads as an
/// attribute, none negative, and the output shape they give.
Expected<std::vector<std::int64_t>> CheckedConstantPads(const Graph& graph, const Node& node);
/// A conv node's params (conv2d, depthwise, transpose) after the checks every backend makes:
/// constant weights and bias, one bias value per output channel, the output shape the params give.
Expected<ConvParams> CheckedConvParams(const Graph& graph, const Node& node);
/// A fully_connected node's params after the same checks (and alpha = beta = 1).
Expected<FullyConnectedParams> CheckedFullyConnectedParams(const Graph& graph, const Node& node);

}  // namespace latte
