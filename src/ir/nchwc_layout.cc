#include "ir/nchwc_layout.h"

#include <algorithm>
#include <cmath>

#include "ir/fusion_rules.h"
#include "ir/kernel_graph.h"
#include "ir/kernel_params.h"
#include "ir/op_params.h"

namespace latte {
namespace {

// What the walk knows of one tensor.
struct Arg {
  bool blocked = false;
  NodeId conv = -1;  // the converted conv that writes it (after fusions), else -1
  std::size_t uses = 1;
};

// What the walk knows of one converted conv.
struct ConvState {
  bool activation = false;  // an activation already runs inside it
  bool sum = false;         // an add already runs inside it
};

// ORT's rule for converting a conv (weights [out, in/groups, kh, kw]), as ONNX Runtime 1.29 runs
// it (seen in its profiles: an 8- or 24-channel conv runs blocked, its channels padded to a whole
// block, where older releases left it in NCHW): a plain conv always converts (under a block of
// input channels it reads the NCHW input directly), a depthwise one too; another grouped conv
// only with whole blocks per group.
bool ConvConverts(std::int64_t in_c, std::int64_t out_c, std::int64_t groups, std::int64_t block) {
  if (groups <= 1) return true;
  const std::int64_t per_group_in = in_c / groups;
  if (per_group_in == 1 && out_c == groups) return true;  // depthwise
  return out_c % block == 0 && per_group_in % block == 0 && out_c % groups == 0 && (out_c / groups) % block == 0;
}

class Walk {
 public:
  Walk(const Graph& graph, int block) : g_(graph), block_(block), nchw_(IsNchwGraph(graph)) {
    plan_.block = block;
    plan_.blocked.assign(graph.num_tensors(), false);
    plan_.fused_into.assign(graph.num_nodes(), -1);
    plan_.runs_blocked.assign(graph.num_nodes(), false);
    plan_.reads_plain.assign(graph.num_nodes(), false);
    args_.resize(graph.num_tensors());
    convs_.resize(graph.num_nodes());
    readers_.assign(graph.num_tensors(), 0);
    for (const Node& node : graph.nodes())
      for (TensorId t : node.inputs)
        if (Valid(t)) ++readers_[static_cast<std::size_t>(t)];
  }

  NchwcPlan Run(const std::vector<NodeId>& order) {
    for (NodeId id : order) Visit(id);
    for (std::size_t t = 0; t < args_.size(); ++t) plan_.blocked[t] = args_[t].blocked;
    return std::move(plan_);
  }

 private:
  bool Valid(TensorId t) const { return t >= 0 && static_cast<std::size_t>(t) < g_.num_tensors(); }
  const Arg& In(const Node& node, std::size_t i) const {
    static const Arg kNone;
    const TensorId t = node.input(i);
    return Valid(t) ? args_[static_cast<std::size_t>(t)] : kNone;
  }
  // The logical channel count of a rank-4 activation, or -1.
  std::int64_t Channels(TensorId t) const {
    if (!Valid(t)) return -1;
    const Tensor& tensor = g_.tensor(t);
    if (!tensor.shape_known || tensor.shape.size() != 4) return -1;
    return tensor.shape[nchw_ ? 1 : 3];
  }
  void Write(const Node& node, Arg arg) {
    if (node.outputs.empty() || !Valid(node.outputs[0])) return;
    if (arg.blocked && Channels(node.outputs[0]) >= 0) plan_.runs_blocked[static_cast<std::size_t>(&node - g_.nodes().data())] = true;
    const auto t = static_cast<std::size_t>(node.outputs[0]);
    arg.uses = std::max<std::size_t>(readers_[t], 1);  // ORT counts a graph output with no reader as one use
    if (Channels(node.outputs[0]) < 0) arg = Arg{};
    args_[t] = arg;
  }

  void Visit(NodeId id) {
    const Node& node = g_.node(id);
    switch (node.kind) {
      case OpKind::kConv2D: case OpKind::kDepthwiseConv2D: return Conv(id, node);
      case OpKind::kMaxPool2D: case OpKind::kAvgPool2D: return Pool(id, node, false);
      case OpKind::kGlobalAvgPool: case OpKind::kGlobalMaxPool: return Pool(id, node, true);
      case OpKind::kAdd: return Binary(id, node, true);
      case OpKind::kMul: return Binary(id, node, false);
      case OpKind::kConcat: return Concat(id, node);
      case OpKind::kRelu: case OpKind::kSigmoid: case OpKind::kTanh:
      case OpKind::kRelu6: case OpKind::kReluN1To1: case OpKind::kClip: case OpKind::kLeakyRelu:
      case OpKind::kHardSigmoid:
        return Activation(id, node, node.kind);
      case OpKind::kBatchNorm:  // rewritten as a depthwise 1×1 conv when its input is blocked
        if (In(node, 0).blocked) return Write(node, Arg{true, id});
        return Write(node, Arg{});
      case OpKind::kResize: return Resize(node);
      case OpKind::kHardSwish:  // ORT runs it as a HardSigmoid and a Mul of the same shape: both blocked
        return Write(node, In(node, 0).blocked ? Arg{true} : Arg{});
      default: return Write(node, Arg{});  // anything else reads and writes the plain layout
    }
  }

  void Conv(NodeId id, const Node& node) {
    const TensorId w = node.input(1), b = node.input(2);
    Expected<ConvParams> p = GetConvParams(g_, node);
    const bool constant = Valid(w) && g_.tensor(w).is_constant() && (b == kNoTensor || (Valid(b) && g_.tensor(b).is_constant()));
    if (!p.ok() || !constant || !ConvConverts(p->in_c, p->out_c, p->groups, block_)) return Write(node, Arg{});
    // A fused activation of the file's is ORT's level-2 Conv+activation fusion: it runs inside.
    convs_[static_cast<std::size_t>(id)].activation = p->activation != "none";
    plan_.reads_plain[static_cast<std::size_t>(id)] = node.kind == OpKind::kConv2D && ConvReadsPlain(p->in_c, p->groups, block_);
    Write(node, Arg{true, id});
  }

  void Pool(NodeId id, const Node& node, bool global) {
    const std::int64_t c = Channels(node.input(0));
    // A global pool converts only a blocked input; the others reorder theirs when aligned.
    const bool converts = global ? In(node, 0).blocked : c > 0 && c % block_ == 0;
    Write(node, converts ? Arg{true} : Arg{});
    AttributeActivation(node);
  }

  void Binary(NodeId id, const Node& node, bool add) {
    if (node.inputs.size() != 2 || !In(node, 0).blocked || !In(node, 1).blocked ||
        Channels(node.input(0)) != Channels(node.input(1))) {
      Write(node, Arg{});
      return AttributeActivation(node);
    }
    const bool same_shape = g_.tensor(node.input(0)).shape == g_.tensor(node.input(1)).shape;
    if (!same_shape) {
      Write(node, add ? Arg{true} : Arg{});  // an add of one channel count reshapes; a mul reorders
      return AttributeActivation(node);
    }
    if (add) {
      for (std::size_t n = 0; n < 2; ++n) {  // the first operand's conv first
        const Arg& operand = In(node, n);
        if (operand.conv < 0 || operand.uses != 1) continue;
        const Node& producer = g_.node(operand.conv);
        if (producer.kind != OpKind::kConv2D && producer.kind != OpKind::kDepthwiseConv2D) continue;
        ConvState& conv = convs_[static_cast<std::size_t>(operand.conv)];
        if (conv.activation || conv.sum) continue;
        conv.sum = true;
        plan_.fused_into[static_cast<std::size_t>(id)] = operand.conv;
        ++plan_.fused_adds;
        Write(node, Arg{true, operand.conv});
        return AttributeActivation(node);
      }
    }
    Write(node, Arg{true});
    AttributeActivation(node);
  }

  void Concat(NodeId id, const Node& node) {
    const std::int64_t axis = node.attrs.GetInt("axis", 0);
    const bool channel_axis = nchw_ ? (axis == 1 || axis == -3) : (axis == 3 || axis == -1);
    bool converts = channel_axis && !node.inputs.empty();
    for (std::size_t i = 0; converts && i < node.inputs.size(); ++i) {
      const std::int64_t c = Channels(node.inputs[i]);
      converts = In(node, i).blocked && c > 0 && c % block_ == 0;
    }
    Write(node, converts ? Arg{true} : Arg{});
    AttributeActivation(node);
  }

  void Resize(const Node& node) {
    // ORT's blocked upsample: whole scales (from the maps, as a TFLite file gives sizes, or the
    // scales attribute), nearest with asymmetric coordinates, or bilinear with half-pixel ones
    // (ORT 1.29's profiles of MediaPipe's 2× upsamplings: blocked, no reorder around them).
    bool whole = false;
    const TensorId x = node.input(0), y = node.outputs.empty() ? kNoTensor : node.outputs[0];
    if (Valid(x) && Valid(y) && Channels(x) >= 0 && Channels(y) >= 0) {
      const Shape& in = g_.tensor(x).shape;
      const Shape& out = g_.tensor(y).shape;
      const std::size_t h = nchw_ ? 2 : 1, w = h + 1;
      whole = in[h] > 0 && in[w] > 0 && out[h] >= in[h] && out[w] >= in[w] && out[h] % in[h] == 0 && out[w] % in[w] == 0;
    } else if (auto scales = node.attrs.GetFloats("scales"); scales && scales->size() == 2) {
      whole = true;
      for (std::size_t i = 0; whole && i < 2; ++i) whole = (*scales)[i] >= 1 && std::floor((*scales)[i]) == (*scales)[i];
    }
    const std::string mode = node.attrs.GetString("mode", "nearest");
    const std::string coordinates = node.attrs.GetString("coordinate_transformation", "asymmetric");
    const bool kernel = (mode == "nearest" && coordinates == "asymmetric") || (mode == "bilinear" && coordinates == "half_pixel");
    Write(node, In(node, 0).blocked && whole && kernel ? Arg{true} : Arg{});
  }

  // An activation node, or a node's activation attribute (the exporter writes it as a node after).
  void Activation(NodeId id, const Node& node, OpKind kind) {
    const Arg input = In(node, 0);
    const TensorId x = node.input(0);
    // ORT's level-2 fusion first: any of these right after a conv, its only reader, runs inside it.
    // Then the NCHWc pass: relu, sigmoid, tanh and hard sigmoid keep the blocked layout (the first
    // three run inside a conv whose add they follow); clamps are not converted.
    const bool after_conv = input.conv >= 0 && input.conv == (Valid(x) ? g_.Producer(x) : -1);
    const bool converted = kind == OpKind::kRelu || kind == OpKind::kSigmoid || kind == OpKind::kTanh ||
                           kind == OpKind::kHardSigmoid;
    if (!input.blocked || !(after_conv || converted)) return Write(node, Arg{});
    if (RunsInside(input.conv, input.uses)) {
      plan_.fused_into[static_cast<std::size_t>(id)] = input.conv;
      return Write(node, Arg{true, input.conv});
    }
    Write(node, converted ? Arg{true} : Arg{});
  }

  void AttributeActivation(const Node& node) {
    Expected<std::optional<OpKind>> act = AttrActivation(node);
    if (!act.ok() || !act->has_value() || node.outputs.empty() || !Valid(node.outputs[0])) return;
    Arg& out = args_[static_cast<std::size_t>(node.outputs[0])];
    if (!out.blocked) return;
    if (**act != OpKind::kRelu && **act != OpKind::kTanh) {  // a clamp after it: the plain layout again
      out = Arg{};
      return;
    }
    // The exporter writes it as a node whose one reader is that node: it runs inside the conv the
    // node's output comes from (if any, with no activation yet), or as a node of its own, blocked.
    if (!RunsInside(out.conv, 1)) out.conv = -1;
  }

  // Whether an activation of a tensor `conv` writes, read by `uses` nodes, runs inside that conv (one
  // reader, no activation yet); if so, the conv now has one.
  bool RunsInside(NodeId conv, std::size_t uses) {
    if (conv < 0 || uses != 1 || convs_[static_cast<std::size_t>(conv)].activation) return false;
    convs_[static_cast<std::size_t>(conv)].activation = true;
    return true;
  }

  const Graph& g_;
  const std::int64_t block_;
  const bool nchw_;
  NchwcPlan plan_;
  std::vector<Arg> args_;
  std::vector<ConvState> convs_;
  std::vector<std::size_t> readers_;
};

}  // namespace

bool ConvReadsPlain(std::int64_t in_c, std::int64_t groups, std::int64_t block) { return groups <= 1 && in_c < block; }

int HostNchwcBlock() {
#if defined(__x86_64__) || defined(_M_X64)
  return __builtin_cpu_supports("avx512f") ? 16 : 8;
#else
  return 0;
#endif
}

Expected<NchwcPlan> PlanNchwc(const Graph& graph, int block) {
  if (block != 8 && block != 16) return InvalidInput("an NCHWc block of " + std::to_string(block) + " (8 or 16)");
  LATTE_ASSIGN_OR_RETURN(std::vector<NodeId> order, graph.TopologicalOrder());
  return Walk(graph, block).Run(order);
}

bool NchwcRunsAsOne(const NchwcPlan& plan, const std::vector<NodeId>& chain) {
  if (chain.size() < 2) return false;
  for (std::size_t i = 1; i < chain.size(); ++i) {
    const auto node = static_cast<std::size_t>(chain[i]);
    if (node >= plan.fused_into.size() || plan.fused_into[node] != chain[0]) return false;
  }
  return true;
}

bool NchwcReorderAliases(const NchwcReorder& reorder) {
  constexpr std::int64_t kPage = 4096;
  constexpr std::int64_t kL1Ways = 8;  // Zen 4's and most x86 cores' L1 data cache
  return reorder.channels > kL1Ways && reorder.height > 0 && reorder.width > 0 &&
         reorder.height * reorder.width * static_cast<std::int64_t>(sizeof(float)) % kPage == 0;
}

std::vector<std::vector<NchwcReorder>> NchwcReorders(const Graph& graph, const NchwcPlan& plan,
                                                     const std::vector<std::vector<NodeId>>& layers) {
  std::vector<std::vector<NchwcReorder>> reorders(layers.size());
  const bool nchw = IsNchwGraph(graph);
  const std::size_t tensors = graph.num_tensors();
  auto valid = [&](TensorId t) { return t >= 0 && static_cast<std::size_t>(t) < tensors; };
  auto blocked = [&](TensorId t) { return valid(t) && static_cast<std::size_t>(t) < plan.blocked.size() && plan.blocked[t]; };
  auto runs_blocked = [&](NodeId n) {
    return n >= 0 && static_cast<std::size_t>(n) < plan.runs_blocked.size() && plan.runs_blocked[static_cast<std::size_t>(n)];
  };
  // A rank-4 activation's bytes with its channels rounded up to a whole block.
  auto block_bytes = [&](TensorId t) -> std::int64_t {
    const Tensor& tensor = graph.tensor(t);
    const std::int64_t all = tensor.num_bytes().value_or(0);
    if (!tensor.shape_known || tensor.shape.size() != 4) return all;
    const std::int64_t c = tensor.shape[nchw ? 1 : 3];
    if (c <= 0) return all;
    return all / c * ((c + plan.block - 1) / plan.block * plan.block);
  };
  auto reorder = [&](TensorId t, bool into_blocked) {
    NchwcReorder r;
    r.into_blocked = into_blocked;
    r.bytes = block_bytes(t);
    const Tensor& tensor = graph.tensor(t);
    if (tensor.shape_known && tensor.shape.size() == 4) {
      r.channels = tensor.shape[nchw ? 1 : 3];
      r.height = tensor.shape[nchw ? 2 : 1];
      r.width = tensor.shape[nchw ? 3 : 2];
    }
    return r;
  };
  std::vector<bool> reordered_in(tensors, false), reordered_out(tensors, false);
  std::vector<std::vector<NodeId>> readers(tensors);
  for (std::size_t n = 0; n < graph.num_nodes(); ++n)
    for (TensorId t : graph.node(static_cast<NodeId>(n)).inputs)
      if (valid(t)) readers[static_cast<std::size_t>(t)].push_back(static_cast<NodeId>(n));
  // A converted conv that reads its input in the plain layout as it is: a blocked tensor it reads
  // is reordered out for it.
  auto reads_plain = [&](NodeId n) {
    return runs_blocked(n) && static_cast<std::size_t>(n) < plan.reads_plain.size() && plan.reads_plain[static_cast<std::size_t>(n)];
  };
  for (std::size_t i = 0; i < layers.size(); ++i) {
    for (NodeId id : layers[i]) {
      if (id < 0 || static_cast<std::size_t>(id) >= graph.num_nodes()) continue;
      const Node& node = graph.node(id);
      const bool spatial = node.kind == OpKind::kConv2D || node.kind == OpKind::kDepthwiseConv2D ||
                           node.kind == OpKind::kMaxPool2D || node.kind == OpKind::kAvgPool2D;
      if (spatial && runs_blocked(id) && !node.inputs.empty()) {
        const TensorId x = node.inputs[0];
        const bool direct = reads_plain(id);
        if (valid(x) && !blocked(x) && !direct && !reordered_in[static_cast<std::size_t>(x)]) {
          reordered_in[static_cast<std::size_t>(x)] = true;
          reorders[i].push_back(reorder(x, true));
        }
      }
      if (!runs_blocked(id)) continue;
      for (TensorId t : node.outputs) {
        if (!valid(t) || reordered_out[static_cast<std::size_t>(t)]) continue;
        // Plain again after a clamp the node carries (the exporter's Clip after it runs in NCHW);
        // or blocked, and read by a node that runs in the plain layout, or a graph output.
        const std::vector<NodeId>& r = readers[static_cast<std::size_t>(t)];
        const bool output = std::find(graph.outputs.begin(), graph.outputs.end(), t) != graph.outputs.end();
        const bool plain_reader = std::any_of(r.begin(), r.end(), [&](NodeId n) {
          return !runs_blocked(n) || (reads_plain(n) && graph.node(n).input(0) == t);
        });
        if (!blocked(t) || output || plain_reader) {
          reordered_out[static_cast<std::size_t>(t)] = true;
          reorders[i].push_back(reorder(t, false));
        }
      }
    }
  }
  return reorders;
}

namespace {

// A 1×1 NHWC conv with constant weights of 0.5 and a relu (so that no add can run inside it).
Node HelperConv(Graph& graph, const std::string& name, TensorId in, TensorId out, std::int64_t in_c, std::int64_t out_c) {
  Tensor weights;
  weights.name = name + "_weights";
  weights.shape = {out_c, 1, 1, in_c};  // OHWI
  weights.shape_known = true;
  const std::vector<float> values(static_cast<std::size_t>(out_c * in_c), 0.5f);
  auto bytes = std::make_shared<std::vector<std::uint8_t>>(values.size() * sizeof(float));
  std::copy_n(reinterpret_cast<const std::uint8_t*>(values.data()), bytes->size(), bytes->data());
  weights.data = std::move(bytes);
  Node conv;
  conv.kind = OpKind::kConv2D;
  conv.name = name;
  conv.inputs = {in, graph.AddTensor(std::move(weights))};
  conv.outputs = {out};
  conv.attrs.Set("layout", std::string("NHWC"));
  conv.attrs.Set("filter_layout", std::string("OHWI"));
  conv.attrs.Set("strides", std::vector<std::int64_t>{1, 1});
  conv.attrs.Set("dilations", std::vector<std::int64_t>{1, 1});
  conv.attrs.Set("padding", std::string("valid"));
  conv.attrs.Set("activation", std::string("relu"));
  return conv;
}

TensorId AddActivation(Graph& graph, const std::string& name, Shape shape) {
  Tensor t;
  t.name = name;
  t.shape = std::move(shape);
  t.shape_known = true;
  return graph.AddTensor(std::move(t));
}

}  // namespace

Expected<BlockedResidualGraph> BuildBlockedResidualGraph(const Kernel& kernel, int block, unsigned seed) {
  if (!IsResidualFusion(kernel)) return InvalidInput("kernel " + kernel.Kind() + " has no residual add ORT fuses");
  const ConvKernelParams p = ReadParams<ConvKernelParams>(kernel);
  if (!ConvConverts(p.ic, p.oc, p.g, block)) {
    return Unsupported("ONNX Runtime runs this conv and its add apart: " + std::to_string(p.ic) + " input and " +
                       std::to_string(p.oc) + " output channels in " + std::to_string(p.g) +
                       " groups are not aligned to its NCHWc block of " + std::to_string(block));
  }
  LATTE_ASSIGN_OR_RETURN(Graph graph, BuildKernelGraph(kernel, seed));
  NodeId add = -1;
  for (std::size_t i = 0; i < graph.num_nodes(); ++i)
    if (graph.node(static_cast<NodeId>(i)).kind == OpKind::kAdd) add = static_cast<NodeId>(i);
  if (add < 0 || graph.node(add).inputs.size() != 2) return Internal("the graph of " + kernel.Kind() + " has no add");
  const TensorId residual = graph.node(add).inputs[1];
  auto input = std::find(graph.inputs.begin(), graph.inputs.end(), residual);
  if (input == graph.inputs.end() || graph.outputs.size() != 1) return Internal("the add of " + kernel.Kind() + " reads no graph input");
  const Shape shape = graph.tensor(residual).shape;  // NHWC
  if (shape.size() != 4) return Internal("the residual of " + kernel.Kind() + " is not 4-D");

  // In a model the blocked layout runs from conv to conv: the add's other operand comes from a
  // blocked op, so does the conv's input (unless it has under a block of channels: then ORT reads
  // it as it is), and what the kernel writes goes on to another conv. 1×1 convs from one-channel
  // inputs make the operand and the input (blocked, whatever their channels), and a 1×1 conv reads
  // the result: the exporter's layout transposes then cancel around the kernel as in a model, no
  // reorder touches it, and a relu after the add stays inside the conv.
  const TensorId source = AddActivation(graph, "residual_source", {shape[0], shape[1], shape[2], 1});
  *input = source;
  graph.AddNode(HelperConv(graph, "residual_producer", source, residual, 1, shape[3]));
  const NodeId conv = graph.Producer(graph.node(add).inputs[0]);
  if (conv < 0) return Internal("the add of " + kernel.Kind() + " does not read its conv");
  const TensorId x = graph.node(conv).inputs[0];
  if (!ConvReadsPlain(p.ic, p.g, block)) {
    auto x_input = std::find(graph.inputs.begin(), graph.inputs.end(), x);
    if (x_input == graph.inputs.end()) return Internal("the conv of " + kernel.Kind() + " reads no graph input");
    const Shape x_shape = graph.tensor(x).shape;
    const TensorId x_source = AddActivation(graph, "input_source", {x_shape[0], x_shape[1], x_shape[2], 1});
    *x_input = x_source;
    graph.AddNode(HelperConv(graph, "input_producer", x_source, x, 1, x_shape[3]));
  }
  const TensorId result = graph.outputs[0];
  const TensorId sink = AddActivation(graph, "result_sink", {shape[0], shape[1], shape[2], block});
  graph.AddNode(HelperConv(graph, "result_consumer", result, sink, shape[3], block));
  graph.outputs = {sink};
  LATTE_RETURN_IF_ERROR(graph.SortTopologically());
  LATTE_RETURN_IF_ERROR(graph.Validate());
  BlockedResidualGraph built;
  for (std::size_t i = 0; i < graph.num_nodes(); ++i) {
    const std::string& name = graph.node(static_cast<NodeId>(i)).name;
    if (name == "residual_producer" || name == "input_producer" || name == "result_consumer")
      built.helpers.push_back(static_cast<NodeId>(i));
  }
  built.graph = std::move(graph);
  return built;
}

}  // namespace latte
