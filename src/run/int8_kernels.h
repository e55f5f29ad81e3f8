#pragma once
// What every backend that runs a plan lowered to int8 (run/int8_plan) needs, whatever its kernel
// library: an int8 activation's parameters, a real value quantized under them, whether a node was
// lowered to int8, the checks of its tensors, and weights quantized symmetric per output channel
// (the one scheme the backends pack, so their int8 runs of a model agree).

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "ir/graph.h"

namespace latte {

/// An int8 activation's parameters: real = scale × (q − zero).
struct Q8 {
  float scale = 1;
  std::int8_t zero = 0;
};
/// The one scale and zero point of a per-tensor int8 tensor (checked by CheckInt8Tensors).
Q8 Q8Of(const Tensor& t);
/// The same scale and zero point.
bool SameQ8(const Tensor& a, const Tensor& b);

/// A real value (a bound, a pad value) as int8 under `q`, rounded to nearest and saturated; ±inf
/// to the ends.
std::int8_t QuantizeValue(float v, Q8 q);

/// An int8 tensor that is not a constant.
bool IsInt8Activation(const Tensor& t);
/// True when the executor lowered `node` to int8 (it reads or writes an int8 activation).
bool IsInt8Node(const Graph& graph, const Node& node);

/// The int8 forms that keep their input's parameters (data movement, max pooling, clamps) need the
/// executor to have given each int8 input the output's (run/int8_plan does); else kUnsupported.
Status NeedSameInt8Params(const Graph& graph, const Node& node);

/// Activations: int8 with one finite positive scale and a zero point in range (float32 for a
/// quantize's input and a dequantize's output), known, non-empty, of rank ≤ `max_rank`; constants:
/// float32 (weights), or a reshape's shape. One output.
Status CheckInt8Tensors(const Graph& graph, const Node& node, std::size_t max_rank);

/// Symmetric int8 weights for `channels` output channels (channel c's values at i % channels when
/// `channel_is_last`, else in the c-th block of count / channels) into `out`; returns one scale per
/// channel. A channel of zeros takes the largest scale (its values quantize to 0 under any).
std::vector<float> QuantizeWeights(const float* data, std::size_t count, std::size_t channels, bool channel_is_last,
                                   std::vector<std::int8_t>& out);

}  // namespace latte
