#include "run/int8_plan.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace latte {

void ValueRange::Add(float v) {
  if (!std::isfinite(v)) return;
  if (!seen) {
    min = max = v, seen = true;
    return;
  }
  min = std::min(min, v), max = std::max(max, v);
}

QuantParams Int8ParamsFor(const ValueRange& range) {
  const double lo = std::min(0.0, static_cast<double>(range.seen ? range.min : 0.0f));
  const double hi = std::max(0.0, static_cast<double>(range.seen ? range.max : 0.0f));
  // A tensor that was always 0: any scale represents it; one step of 1/255 keeps ratios sane.
  const double scale = hi - lo > 1e-12 ? (hi - lo) / 255.0 : 1.0 / 255.0;
  const double zero = std::clamp(std::round(-128.0 - lo / scale), -128.0, 127.0);
  QuantParams q;
  q.scale = {static_cast<float>(scale)};
  q.zero_point = {static_cast<std::int64_t>(zero)};
  return q;
}

bool KeepsInt8Params(OpKind kind) {
  switch (kind) {
    case OpKind::kReshape: case OpKind::kFlatten: case OpKind::kSqueeze: case OpKind::kUnsqueeze: case OpKind::kIdentity:
    case OpKind::kConcat: case OpKind::kPad: case OpKind::kTranspose: case OpKind::kMaxPool2D: case OpKind::kGlobalMaxPool:
    case OpKind::kRelu: case OpKind::kRelu6: case OpKind::kReluN1To1: case OpKind::kClip: case OpKind::kResize:
    case OpKind::kDepthToSpace:
      return true;
    default:
      return false;
  }
}

namespace {

bool IsFloatActivation(const Tensor& t) { return t.dtype == DataType::kFloat32 && !t.is_constant(); }

// Union-find over tensor ids: the tensors a parameter-keeping int8 node joins share parameters.
struct Classes {
  std::vector<TensorId> parent;
  explicit Classes(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), TensorId{0}); }
  TensorId Find(TensorId t) {
    while (parent[static_cast<size_t>(t)] != t) t = parent[static_cast<size_t>(t)] = parent[static_cast<size_t>(parent[static_cast<size_t>(t)])];
    return t;
  }
  void Join(TensorId a, TensorId b) { parent[static_cast<size_t>(Find(a))] = Find(b); }
};

Node ConvertNode(OpKind kind, std::string name, TensorId from, TensorId to) {
  Node node;
  node.kind = kind;
  node.name = std::move(name);
  node.source_op = "executor";
  node.inputs = {from};
  node.outputs = {to};
  return node;
}

}  // namespace

std::string Int8Ineligibility(const Graph& graph, NodeId k) {
  const Node& node = graph.node(k);
  if (node.outputs.size() != 1) return "it has " + std::to_string(node.outputs.size()) + " outputs";
  if (!IsFloatActivation(graph.tensor(node.outputs[0]))) return "its output is not a float32 activation";
  bool reads_activation = false;
  for (TensorId in : node.inputs) {
    if (in == kNoTensor) continue;
    const Tensor& t = graph.tensor(in);
    if (t.dtype != DataType::kFloat32) {
      // A reshape's shape operand is an integer constant that stays as it is.
      if (t.is_constant() && node.kind == OpKind::kReshape) continue;
      return "its input '" + t.name + "' is " + std::string(DataTypeName(t.dtype)) + ", not float32";
    }
    reads_activation = reads_activation || !t.is_constant();
  }
  if (!reads_activation) return "it reads no activation";
  return "";
}

Int8Plan LowerPlanToInt8(const GraphPlan& plan, const std::vector<bool>& int8, const ActivationRanges& ranges) {
  const Graph& before = plan.graph;
  const size_t num_tensors = before.num_tensors();
  auto is_int8 = [&](NodeId k) { return k >= 0 && static_cast<size_t>(k) < int8.size() && int8[static_cast<size_t>(k)]; };

  // Parameters: one per class of tensors a parameter-keeping int8 node joins, covering them all.
  Classes classes(num_tensors);
  for (NodeId k = 0; k < static_cast<NodeId>(before.num_nodes()); ++k) {
    const Node& node = before.node(k);
    if (!is_int8(k) || !KeepsInt8Params(node.kind)) continue;
    for (TensorId in : node.inputs)
      if (in != kNoTensor && IsFloatActivation(before.tensor(in))) classes.Join(in, node.outputs[0]);
  }
  std::vector<ValueRange> class_range(num_tensors);
  for (size_t t = 0; t < num_tensors && t < ranges.size(); ++t) {
    ValueRange& r = class_range[static_cast<size_t>(classes.Find(static_cast<TensorId>(t)))];
    if (ranges[t].seen) r.Add(ranges[t].min), r.Add(ranges[t].max);
  }
  // XNNPACK's (and TFLite's) int8 sigmoid and tanh write fixed output parameters: their [0, 1)
  // and [-1, 1) in 256 steps.
  std::vector<QuantParams> fixed(num_tensors);
  for (NodeId k = 0; k < static_cast<NodeId>(before.num_nodes()); ++k) {
    const Node& node = before.node(k);
    if (!is_int8(k) || (node.kind != OpKind::kSigmoid && node.kind != OpKind::kTanh)) continue;
    QuantParams& q = fixed[static_cast<size_t>(classes.Find(node.outputs[0]))];
    q.scale = {node.kind == OpKind::kSigmoid ? 1.0f / 256.0f : 1.0f / 128.0f};
    q.zero_point = {node.kind == OpKind::kSigmoid ? -128 : 0};
  }
  auto params = [&](TensorId t) {
    const auto c = static_cast<size_t>(classes.Find(t));
    return fixed[c].empty() ? Int8ParamsFor(class_range[c]) : fixed[c];
  };

  Int8Plan out;
  Graph& lowered = out.plan.graph;
  for (const Tensor& t : before.tensors()) lowered.AddTensor(t);
  lowered.inputs = before.inputs;
  lowered.outputs = before.outputs;
  lowered.name = before.name;
  lowered.source_format = before.source_format;

  // Per activation: which form each side reads. int8_of[t]: the int8 tensor int8 nodes use;
  // float_of[t]: the float32 one fp32 nodes and the caller use.
  std::vector<TensorId> int8_of(num_tensors, kNoTensor), float_of(num_tensors, kNoTensor);
  std::vector<bool> is_output(num_tensors, false);
  for (TensorId t : before.outputs) is_output[static_cast<size_t>(t)] = true;
  auto twin = [&](TensorId t, const char* suffix, DataType type) {
    Tensor copy = before.tensor(t);
    copy.name += suffix;
    copy.dtype = type;
    copy.quant = type == DataType::kInt8 ? params(t) : QuantParams{};
    return lowered.AddTensor(std::move(copy));
  };
  // Conversions to add right after the producer of t (or first, for a graph input).
  std::vector<std::vector<Node>> after(num_tensors);
  for (size_t i = 0; i < num_tensors; ++i) {
    const auto t = static_cast<TensorId>(i);
    if (!IsFloatActivation(before.tensor(t))) continue;
    const NodeId producer = before.Producer(t);
    bool int8_use = false, float_use = is_output[i];
    for (NodeId c : before.Consumers(t)) (is_int8(c) ? int8_use : float_use) = true;
    const std::string& name = before.tensor(t).name;
    if (is_int8(producer)) {
      if (is_output[i]) {
        int8_of[i] = twin(t, "/int8", DataType::kInt8), float_of[i] = t;
        after[i].push_back(ConvertNode(OpKind::kDequantize, name + "/dequantize", int8_of[i], t));
      } else {
        Tensor& in_place = lowered.mutable_tensor(t);
        in_place.dtype = DataType::kInt8, in_place.quant = params(t);
        int8_of[i] = t;
        if (float_use) {
          float_of[i] = twin(t, "/fp32", DataType::kFloat32);
          after[i].push_back(ConvertNode(OpKind::kDequantize, name + "/dequantize", t, float_of[i]));
        }
      }
    } else {
      float_of[i] = t;
      if (int8_use) {
        int8_of[i] = twin(t, "/int8", DataType::kInt8);
        after[i].push_back(ConvertNode(OpKind::kQuantize, name + "/quantize", t, int8_of[i]));
      }
    }
  }

  auto emit = [&](Node node, std::vector<NodeId> sources, NodeId from) {
    lowered.AddNode(std::move(node));
    out.plan.sources.push_back(std::move(sources));
    out.from.push_back(from);
  };
  for (size_t i = 0; i < num_tensors; ++i)
    if (before.Producer(static_cast<TensorId>(i)) < 0)
      for (Node& convert : after[i]) emit(std::move(convert), {}, -1);
  for (NodeId k = 0; k < static_cast<NodeId>(before.num_nodes()); ++k) {
    Node node = before.node(k);
    const bool low = is_int8(k);
    for (TensorId& in : node.inputs) {
      if (in == kNoTensor || !IsFloatActivation(before.tensor(in))) continue;
      const TensorId use = low ? int8_of[static_cast<size_t>(in)] : float_of[static_cast<size_t>(in)];
      if (use != kNoTensor) in = use;
    }
    for (TensorId& o : node.outputs)
      if (low && int8_of[static_cast<size_t>(o)] != kNoTensor) o = int8_of[static_cast<size_t>(o)];
    const std::vector<TensorId> written = before.node(k).outputs;
    emit(std::move(node), plan.sources[static_cast<size_t>(k)], k);
    for (TensorId o : written)
      for (Node& convert : after[static_cast<size_t>(o)]) emit(std::move(convert), {}, -1);
  }
  return out;
}

Int8Choice Int8Choice::Eligible(const Graph& plan_graph) {
  Int8Choice choice;
  for (NodeId k = 0; k < static_cast<NodeId>(plan_graph.num_nodes()); ++k) {
    choice.kept_why.push_back(Int8Ineligibility(plan_graph, k));
    choice.int8.push_back(choice.kept_why.back().empty());
  }
  return choice;
}

void KeepUserNodesFp32(const GraphPlan& plan, const std::vector<bool>& user_fp32, Int8Choice& choice) {
  const Graph& graph = plan.graph;
  auto keep = [&](NodeId k) {
    if (!choice.int8[static_cast<size_t>(k)]) return;
    choice.int8[static_cast<size_t>(k)] = false;
    choice.kept_why[static_cast<size_t>(k)] = kKeptFp32ByPlacement;
  };
  // In plan order, so an inserted node sees its producer's decision.
  for (NodeId k = 0; k < static_cast<NodeId>(graph.num_nodes()); ++k) {
    const std::vector<NodeId>& from = plan.sources[static_cast<size_t>(k)];
    if (!from.empty()) {
      const auto user = static_cast<size_t>(from[0]);
      if (user < user_fp32.size() && user_fp32[user]) keep(k);
      continue;
    }
    const std::vector<TensorId>& inputs = graph.node(k).inputs;
    const NodeId producer = inputs.empty() || inputs[0] == kNoTensor ? -1 : graph.Producer(inputs[0]);
    if (producer < 0 || !choice.int8[static_cast<size_t>(producer)]) keep(k);
  }
}

Expected<Int8Plan> SettleInt8Plan(const GraphPlan& plan, const ActivationRanges& ranges, const Int8Supports& supports,
                                  Int8Choice& choice) {
  // Each round refuses at least one node or ends: at most one round per node, and a last one.
  for (size_t round = 0; round <= plan.graph.num_nodes(); ++round) {
    Int8Plan lowered = LowerPlanToInt8(plan, choice.int8, ranges);
    bool refused_any = false;
    for (NodeId j = 0; j < static_cast<NodeId>(lowered.plan.graph.num_nodes()); ++j) {
      const NodeId k = lowered.from[static_cast<size_t>(j)];
      if (k < 0 || !choice.int8[static_cast<size_t>(k)]) continue;
      LATTE_ASSIGN_OR_RETURN(const Support s, supports(k, lowered.plan.graph, j));
      if (!s.ok()) choice.int8[static_cast<size_t>(k)] = false, choice.kept_why[static_cast<size_t>(k)] = s.why(), refused_any = true;
    }
    if (!refused_any) return lowered;
  }
  return Internal("int8 lowering did not settle");
}

}  // namespace latte
