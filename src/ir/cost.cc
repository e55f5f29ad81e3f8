#include "ir/cost.h"

#include "ir/op_params.h"

namespace latte {

NodeCost& NodeCost::operator+=(const NodeCost& o) {
  macs += o.macs;
  flops += o.flops;
  params += o.params;
  weight_bytes += o.weight_bytes;
  input_bytes += o.input_bytes;
  output_bytes += o.output_bytes;
  return *this;
}

namespace {

// FLOPs per output element of a fused activation (clamps count one compare each).
std::int64_t ActivationFlops(const std::string& activation) {
  if (activation == "none" || activation.empty()) return 0;
  if (activation == "relu6" || activation == "relu_n1_to_1") return 2;
  return 1;
}

// Rough FLOPs per element of elementwise and activation ops: one for simple arithmetic,
// more for ops built from several (hard_swish = x * relu6(x + 3) / 6).
std::int64_t ElementFlops(OpKind kind) {
  switch (kind) {
    case OpKind::kRelu6: case OpKind::kReluN1To1: case OpKind::kClip: case OpKind::kLeakyRelu: case OpKind::kPRelu:
    case OpKind::kSquaredDifference:
      return 2;
    case OpKind::kHardSigmoid: return 3;
    case OpKind::kHardSwish: return 4;
    case OpKind::kBatchNorm: return 2;
    // mean, subtract, square, mean, scale by 1/sqrt(var + eps), then scale and shift.
    case OpKind::kLayerNorm: return 8;
    case OpKind::kSigmoid: case OpKind::kTanh: case OpKind::kElu: case OpKind::kGelu: case OpKind::kSoftplus:
    case OpKind::kExp: case OpKind::kLog: case OpKind::kErf: case OpKind::kPow:
      return 4;  // a transcendental ≈ a few FLOPs in vectorized implementations
    default: return 1;
  }
}

}  // namespace

Expected<NodeCost> ComputeNodeCost(const Graph& graph, NodeId id) {
  const Node& node = graph.node(id);
  if (node.kind == OpKind::kOpaque)
    return Unsupported(DescribeNode(graph, id) + ": " +
                       (node.unsupported_reason.empty() ? "op not known to Latte" : node.unsupported_reason));
  NodeCost cost;
  for (TensorId t : node.inputs) {
    if (t == kNoTensor) continue;
    const Tensor& tensor = graph.tensor(t);
    auto bytes = tensor.num_bytes();
    if (!bytes) return Unsupported(DescribeNode(graph, id) + ": input '" + tensor.name + "' has unknown shape");
    if (tensor.is_constant()) {
      cost.params += *tensor.num_elements();
      cost.weight_bytes += *bytes;
    } else {
      cost.input_bytes += *bytes;
    }
  }
  std::int64_t out_elements = 0;
  for (TensorId t : node.outputs) {
    const Tensor& tensor = graph.tensor(t);
    auto bytes = tensor.num_bytes();
    if (!bytes) return Unsupported(DescribeNode(graph, id) + ": output '" + tensor.name + "' has unknown shape");
    cost.output_bytes += *bytes;
    out_elements += *tensor.num_elements();
  }
  const std::int64_t act = out_elements * ActivationFlops(node.attrs.GetString("activation", "none"));
  auto in_elements = [&]() -> std::int64_t {
    auto n = graph.tensor(node.inputs[0]).num_elements();
    return n ? *n : 0;
  };

  switch (OpCategoryOf(node.kind)) {
    case OpCategory::kCompute: {
      if (node.kind == OpKind::kFullyConnected) {
        auto p = GetFullyConnectedParams(graph, node);
        if (!p.ok()) return p.status().WithContext(DescribeNode(graph, id));
        cost.macs = p->rows * p->in_features * p->out_features;
        cost.flops = 2 * cost.macs + (p->has_bias ? out_elements : 0) + act;
      } else if (node.kind == OpKind::kMatMul) {
        const Tensor& a = graph.tensor(node.inputs[0]);
        const bool ta = node.attrs.GetInt("transpose_a", 0) != 0;
        const std::int64_t k = a.shape.empty() ? 1 : (ta && a.shape.size() >= 2 ? a.shape[a.shape.size() - 2] : a.shape.back());
        cost.macs = out_elements * k;  // each output element is a dot product of length K
        cost.flops = 2 * cost.macs + act;
      } else {
        auto p = GetConvParams(graph, node);
        if (!p.ok()) return p.status().WithContext(DescribeNode(graph, id));
        if (node.kind == OpKind::kTransposeConv2D)  // each input pixel scatters a kernel-sized patch
          cost.macs = p->batch * p->in_h * p->in_w * p->in_c * p->kernel_h * p->kernel_w * (p->out_c / p->groups);
        else
          cost.macs = p->batch * p->out_h * p->out_w * p->out_c * p->kernel_h * p->kernel_w * (p->in_c / p->groups);
        cost.flops = 2 * cost.macs + (p->has_bias ? out_elements : 0) + act;
      }
      break;
    }
    case OpCategory::kPool: {
      auto p = GetPoolParams(graph, node);
      if (!p.ok()) return p.status().WithContext(DescribeNode(graph, id));
      cost.flops = out_elements * p->kernel_h * p->kernel_w + act;
      break;
    }
    case OpCategory::kElementwise:
    case OpCategory::kActivation:
    case OpCategory::kNormalization:
      cost.flops = out_elements * ElementFlops(node.kind) + act;
      break;
    case OpCategory::kReduce:
      // softmax: max, subtract, exp, sum, divide per element; reductions: one per input element.
      cost.flops = (node.kind == OpKind::kSoftmax || node.kind == OpKind::kLogSoftmax ? 5 : 1) * in_elements() + act;
      break;
    case OpCategory::kQuantization:
      cost.flops = 2 * out_elements;
      break;
    case OpCategory::kDataMovement:
      cost.flops = (node.kind == OpKind::kResize ? 4 * out_elements : 0) + act;  // bilinear: 4 taps
      break;
    case OpCategory::kUnknown:
      break;
  }
  return cost;
}

}  // namespace latte
