#include "ir/kernel_graph.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <random>

#include <fmt/format.h>

#include "ir/graph_builder.h"
#include "ir/op_params.h"
#include "ir/shape_inference.h"

namespace latte {
namespace {

using Params = std::map<std::string, std::int64_t>;
using Shape4 = std::array<std::int64_t, 4>;

// Largest tensor a one-kernel graph may hold: beyond this a "kernel" is a typo, not a workload.
constexpr std::int64_t kMaxElements = std::int64_t{1} << 31;

// Ops that may follow a main op inside one kernel: one-input activations and binary elementwise ops.
bool IsFusableFollower(OpKind kind) {
  return (KernelFamilyOf(kind) == KernelFamily::kUnary && kind != OpKind::kPRelu && kind != OpKind::kBatchNorm) ||
         KernelFamilyOf(kind) == KernelFamily::kBinary;
}

Status NoFamily(OpKind kind) {
  return Unsupported("no kernel family for '" + std::string(OpName(kind)) + "' (kernel.h documents none)");
}

// The "activation" attribute as an op kind; nullopt for "none".
Expected<std::optional<OpKind>> AttrActivation(const Node& node) {
  const std::string act = node.attrs.GetString("activation", "none");
  if (act == "none") return std::optional<OpKind>();
  if (act == "relu") return std::optional<OpKind>(OpKind::kRelu);
  if (act == "relu6") return std::optional<OpKind>(OpKind::kRelu6);
  if (act == "relu_n1_to_1") return std::optional<OpKind>(OpKind::kReluN1To1);
  if (act == "tanh") return std::optional<OpKind>(OpKind::kTanh);
  return Unsupported("fused activation '" + act + "' has no op kind");
}

// A follower clip with the bounds of relu, relu6 or relu_n1_to_1 is that activation (ONNX writes
// Clip(0, 6) for relu6): the same kernel as the attribute or the named op.
OpKind ClampKind(const Node& node) {
  if (node.kind != OpKind::kClip) return node.kind;
  const double lo = node.attrs.GetFloat("min", -INFINITY), hi = node.attrs.GetFloat("max", INFINITY);
  if (lo == 0.0 && hi == INFINITY) return OpKind::kRelu;
  if (lo == 0.0 && hi == 6.0) return OpKind::kRelu6;
  if (lo == -1.0 && hi == 1.0) return OpKind::kReluN1To1;
  return OpKind::kClip;
}

bool IsAttrActivation(OpKind kind) {
  return kind == OpKind::kRelu || kind == OpKind::kRelu6 || kind == OpKind::kReluN1To1 || kind == OpKind::kTanh;
}

// Main ops whose built node carries a fused activation as its attribute (as TFLite files do).
bool CanCarryActivation(OpKind kind) {
  using K = OpKind;
  return KernelFamilyOf(kind) == KernelFamily::kConv || KernelFamilyOf(kind) == KernelFamily::kPool || kind == K::kFullyConnected ||
         kind == K::kAdd || kind == K::kSub || kind == K::kMul || kind == K::kDiv;
}

bool IsNchwGraph(const Graph& graph) {
  return std::any_of(graph.nodes().begin(), graph.nodes().end(),
                     [](const Node& n) { return n.attrs.GetString("layout", "") == "NCHW"; });
}

// NCHW axis → position in NHWC, and NHWC position → NCHW axis.
constexpr std::array<int, 4> kNchwToNhwc = {0, 3, 1, 2};
constexpr std::array<int, 4> kNhwcFromNchw = {0, 2, 3, 1};

// A tensor of the node with a fully known shape of rank ≤ 4 (any rank when `any_rank`: a shape kernel
// params do not describe).
Expected<const Tensor*> KnownTensor(const Graph& graph, TensorId id, const char* role, bool any_rank = false) {
  if (id == kNoTensor || id < 0 || static_cast<size_t>(id) >= graph.num_tensors())
    return InvalidInput(std::string("has no ") + role);
  const Tensor& t = graph.tensor(id);
  if (!t.fully_known())
    return Unsupported(std::string(role) + " '" + t.name + "' has unknown shape " + ShapeToString(t.shape, t.shape_known));
  if (t.shape.size() > 4 && !any_rank)
    return Unsupported(std::string(role) + " '" + t.name + "' has rank " + std::to_string(t.shape.size()) +
                       ", kernels describe tensors of rank ≤ 4");
  return &t;
}

// The NHWC 4-D view of a shape of rank ≤ 4: leading 1s, and rank-4 tensors of NCHW graphs permuted.
Shape4 Nhwc4(const Shape& shape, bool nchw) {
  Shape4 out = {1, 1, 1, 1};
  const size_t pad = 4 - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) out[pad + i] = shape[i];
  if (nchw && shape.size() == 4) out = {shape[0], shape[2], shape[3], shape[1]};
  return out;
}

// Position in the NHWC 4-D view of axis `axis` (negative allowed) of a rank-`rank` tensor.
Expected<int> NhwcAxis(std::int64_t axis, std::int64_t rank, bool nchw) {
  if (axis < -rank || axis >= rank || rank == 0)
    return InvalidInput("axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  if (axis < 0) axis += rank;
  if (nchw && rank == 4) return kNchwToNhwc[static_cast<size_t>(axis)];
  return static_cast<int>(axis + 4 - rank);
}

void SetShape(Params& p, const char* const names[4], const Shape4& s) {
  for (size_t i = 0; i < 4; ++i) p[names[i]] = s[i];
}
constexpr const char* kNhwcNames[4] = {"n", "h", "w", "c"};

// The params of the main node alone, without its fused activation.
Expected<Params> MainParams(const Graph& graph, const Node& node, bool nchw) {
  Params p;
  const KernelFamily family = KernelFamilyOf(node.kind);
  if (family == KernelFamily::kNone) return NoFamily(node.kind);
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i] == kNoTensor) continue;
    LATTE_RETURN_IF_ERROR(KnownTensor(graph, node.inputs[i], "input"));
  }
  if (node.outputs.empty()) return InvalidInput("has no output");
  // Only concat and resize describe their output's shape; the rest need it known, not small.
  const bool any_rank_out = family != KernelFamily::kConcat && family != KernelFamily::kResize;
  for (TensorId out : node.outputs) LATTE_RETURN_IF_ERROR(KnownTensor(graph, out, "output", any_rank_out));
  LATTE_ASSIGN_OR_RETURN(const Tensor* x, KnownTensor(graph, node.input(0), "input"));
  const Tensor& y = graph.tensor(node.outputs[0]);
  const auto rank = static_cast<std::int64_t>(x->shape.size());
  // Spatial ops say their own layout; the rest follow the graph's.
  const bool node_nchw = node.attrs.GetString("layout", nchw ? "NCHW" : "NHWC") == "NCHW";

  switch (family) {
    case KernelFamily::kConv: {
      LATTE_ASSIGN_OR_RETURN(ConvParams c, GetConvParams(graph, node));
      p = {{"n", c.batch}, {"ih", c.in_h}, {"iw", c.in_w}, {"ic", c.in_c}, {"oc", c.out_c}, {"kh", c.kernel_h},
           {"kw", c.kernel_w}, {"sh", c.stride_h}, {"sw", c.stride_w}, {"dh", c.dilation_h}, {"dw", c.dilation_w},
           {"g", c.groups}, {"pt", c.pads.top}, {"pl", c.pads.left}, {"pb", c.pads.bottom}, {"pr", c.pads.right},
           {"bias", c.has_bias ? 1 : 0}};
      if (node.kind == OpKind::kTransposeConv2D) p["oh"] = c.out_h, p["ow"] = c.out_w;
      return p;
    }
    case KernelFamily::kFullyConnected: {
      LATTE_ASSIGN_OR_RETURN(FullyConnectedParams f, GetFullyConnectedParams(graph, node));
      return Params{{"m", f.rows}, {"k", f.in_features}, {"n", f.out_features}, {"bias", f.has_bias ? 1 : 0}};
    }
    case KernelFamily::kMatMul: {
      LATTE_ASSIGN_OR_RETURN(const Tensor* b, KnownTensor(graph, node.input(1), "input"));
      Shape a_shape = x->shape, b_shape = b->shape;
      if (a_shape.empty() || b_shape.empty()) return InvalidInput("matmul of a scalar");
      if (a_shape.size() == 1) a_shape.insert(a_shape.begin(), 1);
      if (b_shape.size() == 1) b_shape.push_back(1);
      if (node.attrs.GetInt("transpose_a", 0)) std::swap(a_shape[a_shape.size() - 1], a_shape[a_shape.size() - 2]);
      if (node.attrs.GetInt("transpose_b", 0)) std::swap(b_shape[b_shape.size() - 1], b_shape[b_shape.size() - 2]);
      const std::int64_t m = a_shape[a_shape.size() - 2], k = a_shape.back(), n = b_shape.back();
      const std::int64_t out = y.num_elements().value_or(0);
      if (m < 1 || n < 1 || out % (m * n) != 0) return InvalidInput("matmul output " + ShapeToString(y.shape) + " is not batches of m×n");
      return Params{{"b", out / (m * n)}, {"m", m}, {"k", k}, {"n", n}};
    }
    case KernelFamily::kPool: {
      LATTE_ASSIGN_OR_RETURN(PoolParams q, GetPoolParams(graph, node));
      // ceil_mode: the extra last window reads end padding; say so in pb/pr (same windows, same work).
      q.pads.bottom = std::max(q.pads.bottom, (q.out_h - 1) * q.stride_h + q.kernel_h - q.in_h - q.pads.top);
      q.pads.right = std::max(q.pads.right, (q.out_w - 1) * q.stride_w + q.kernel_w - q.in_w - q.pads.left);
      return Params{{"n", q.batch}, {"ih", q.in_h}, {"iw", q.in_w}, {"c", q.channels}, {"kh", q.kernel_h},
                    {"kw", q.kernel_w}, {"sh", q.stride_h}, {"sw", q.stride_w}, {"pt", q.pads.top},
                    {"pl", q.pads.left}, {"pb", q.pads.bottom}, {"pr", q.pads.right}};
    }
    case KernelFamily::kGlobalPool: {
      LATTE_ASSIGN_OR_RETURN(PoolParams q, GetPoolParams(graph, node));
      return Params{{"n", q.batch}, {"h", q.in_h}, {"w", q.in_w}, {"c", q.channels}};
    }
    case KernelFamily::kUnary: case KernelFamily::kReshape:  // batch_norm says its layout; the others have none
      SetShape(p, kNhwcNames, Nhwc4(x->shape, node_nchw));
      return p;
    case KernelFamily::kSoftmax: {
      const std::int64_t axis = node.attrs.GetInt("axis", -1);
      LATTE_ASSIGN_OR_RETURN(int at, NhwcAxis(axis, std::max<std::int64_t>(rank, 1), nchw));
      if (rank > 0 && node.attrs.GetInt("coerce_2d", 0) != 0) {
        const std::int64_t a = axis < 0 ? axis + rank : axis;
        for (std::int64_t d = a + 1; d < rank; ++d)
          if (x->shape[static_cast<size_t>(d)] != 1)
            return Unsupported("softmax over the flattened dims from axis " + std::to_string(axis) + " of " +
                               ShapeToString(x->shape) + " has no kernel params (only over the channel axis)");
      }
      if (rank > 0 && at != 3)
        return Unsupported("softmax over axis " + std::to_string(axis) + " of " + ShapeToString(x->shape) +
                           " is not over the channel (last NHWC) axis; kernel params describe only that");
      SetShape(p, kNhwcNames, Nhwc4(x->shape, nchw));
      return p;
    }
    case KernelFamily::kReduce: {
      SetShape(p, kNhwcNames, Nhwc4(x->shape, nchw));
      std::int64_t bits = 0;
      auto axes = node.attrs.GetInts("axes");
      if (!axes || axes->empty()) {
        for (std::int64_t a = 0; a < rank; ++a) {
          LATTE_ASSIGN_OR_RETURN(int at, NhwcAxis(a, rank, nchw));
          bits |= std::int64_t{1} << at;
        }
      } else {
        for (std::int64_t a : *axes) {
          LATTE_ASSIGN_OR_RETURN(int at, NhwcAxis(a, rank, nchw));
          bits |= std::int64_t{1} << at;
        }
      }
      if (bits == 0) return Unsupported("reduction of a scalar");
      p["axes"] = bits;
      return p;
    }
    case KernelFamily::kBinary: {
      LATTE_ASSIGN_OR_RETURN(const Tensor* b, KnownTensor(graph, node.input(1), "input"));
      // Pad both to the output's rank first (numpy broadcasting), then view as NHWC.
      auto view = [&](const Shape& s) {
        Shape padded(y.shape.size() > s.size() ? y.shape.size() - s.size() : 0, 1);
        padded.insert(padded.end(), s.begin(), s.end());
        return Nhwc4(padded, nchw);
      };
      const Shape4 a4 = view(x->shape), b4 = view(b->shape);
      const char* const a_names[4] = {"a0", "a1", "a2", "a3"};
      const char* const b_names[4] = {"b0", "b1", "b2", "b3"};
      SetShape(p, a_names, a4);
      SetShape(p, b_names, b4);
      return p;
    }
    case KernelFamily::kConcat: {
      const auto out_rank = static_cast<std::int64_t>(y.shape.size());
      const std::int64_t axis = node.attrs.GetInt("axis", 0);
      LATTE_ASSIGN_OR_RETURN(int at, NhwcAxis(axis, out_rank, nchw));
      SetShape(p, kNhwcNames, Nhwc4(y.shape, nchw));
      p["axis"] = at;
      const std::int64_t file_axis = axis < 0 ? axis + out_rank : axis;
      std::int64_t count = 0;
      for (TensorId in : node.inputs) {
        LATTE_ASSIGN_OR_RETURN(const Tensor* t, KnownTensor(graph, in, "input"));
        if (static_cast<std::int64_t>(t->shape.size()) != out_rank) return InvalidInput("concat inputs differ in rank");
        p["d" + std::to_string(count++)] = t->shape[static_cast<size_t>(file_axis)];
      }
      p["inputs"] = count;
      return p;
    }
    case KernelFamily::kResize: {
      if (rank != 4) return InvalidInput("resize input must have rank 4");
      SetShape(p, kNhwcNames, Nhwc4(x->shape, node_nchw));
      p["ih"] = p["h"], p["iw"] = p["w"];
      p.erase("h"), p.erase("w");
      const Shape4 o = Nhwc4(y.shape, node_nchw);
      p["oh"] = o[1], p["ow"] = o[2];
      const std::string mode = node.attrs.GetString("mode", "nearest");
      if (mode != "nearest" && mode != "bilinear") return Unsupported("resize mode '" + mode + "' has no kernel params");
      p["mode"] = mode == "bilinear" ? 1 : 0;
      return p;
    }
    case KernelFamily::kPad: {
      SetShape(p, kNhwcNames, Nhwc4(x->shape, nchw));
      auto pads = node.attrs.GetInts("pads");
      if (!pads || static_cast<std::int64_t>(pads->size()) != 2 * rank)
        return InvalidInput("pad needs " + std::to_string(2 * rank) + " 'pads' values");
      for (int i = 0; i < 8; ++i) p["p" + std::to_string(i)] = 0;
      for (std::int64_t a = 0; a < rank; ++a) {
        LATTE_ASSIGN_OR_RETURN(int at, NhwcAxis(a, rank, nchw));
        p["p" + std::to_string(at)] = (*pads)[static_cast<size_t>(a)];
        p["p" + std::to_string(at + 4)] = (*pads)[static_cast<size_t>(a + rank)];
      }
      return p;
    }
    case KernelFamily::kTranspose: {
      SetShape(p, kNhwcNames, Nhwc4(x->shape, nchw));
      std::vector<std::int64_t> perm(static_cast<size_t>(rank));
      if (auto attr = node.attrs.GetInts("perm"); attr && !attr->empty()) perm = *attr;
      else for (std::int64_t i = 0; i < rank; ++i) perm[static_cast<size_t>(i)] = rank - 1 - i;
      if (static_cast<std::int64_t>(perm.size()) != rank) return InvalidInput("transpose perm does not match the rank");
      for (auto& v : perm) {
        if (v < -rank || v >= rank) return InvalidInput("transpose perm value " + std::to_string(v));
        if (v < 0) v += rank;
      }
      std::array<std::int64_t, 4> nhwc_perm = {0, 1, 2, 3};
      if (nchw && rank == 4) {
        // out_nhwc[i] = out[P[i]] = x[perm[P[i]]] = x_nhwc[Q[perm[P[i]]]].
        for (size_t i = 0; i < 4; ++i)
          nhwc_perm[i] = kNchwToNhwc[static_cast<size_t>(perm[static_cast<size_t>(kNhwcFromNchw[i])])];
      } else {
        const std::int64_t pad = 4 - rank;
        for (std::int64_t i = 0; i < rank; ++i) nhwc_perm[static_cast<size_t>(pad + i)] = perm[static_cast<size_t>(i)] + pad;
      }
      for (size_t i = 0; i < 4; ++i) p["perm" + std::to_string(i)] = nhwc_perm[i];
      return p;
    }
    case KernelFamily::kDepthSpace: {
      if (rank != 4) return InvalidInput("input must have rank 4");
      SetShape(p, kNhwcNames, Nhwc4(x->shape, node_nchw));
      p["block"] = node.attrs.GetInt("block_size", 0);
      return p;
    }
    case KernelFamily::kNone:
      break;
  }
  return NoFamily(node.kind);
}

// The Kernel of a chain; errors say why without naming the main node (callers add that).
Expected<Kernel> KernelOfChain(const Graph& graph, const std::vector<NodeId>& nodes, bool nchw) {
  if (nodes.empty()) return InvalidInput("no nodes");
  for (NodeId id : nodes)
    if (id < 0 || static_cast<size_t>(id) >= graph.num_nodes()) return InvalidInput("node id " + std::to_string(id) + " out of range");
  const Node& main = graph.node(nodes[0]);
  if (main.kind == OpKind::kOpaque)
    return Unsupported(main.unsupported_reason.empty() ? "op '" + main.source_op + "' is not known to Latte"
                                                       : main.unsupported_reason);
  Kernel kernel;
  kernel.op = main.kind;
  LATTE_ASSIGN_OR_RETURN(kernel.params, MainParams(graph, main, nchw));
  kernel.dtype = graph.tensor(main.inputs[0]).dtype;
  LATTE_ASSIGN_OR_RETURN(std::optional<OpKind> act, AttrActivation(main));
  if (act) kernel.fused.push_back(*act);

  for (size_t i = 1; i < nodes.size(); ++i) {
    const Node& prev = graph.node(nodes[i - 1]);
    const Node& f = graph.node(nodes[i]);
    const std::string who = DescribeNode(graph, nodes[i]);
    if (prev.outputs.size() != 1) return InvalidInput(who + ": follows a node with " + std::to_string(prev.outputs.size()) + " outputs");
    const TensorId current = prev.outputs[0];
    const Tensor& cur = graph.tensor(current);
    if (!IsFusableFollower(f.kind)) return InvalidInput(who + ": a " + std::string(OpName(f.kind)) + " cannot be fused after another op");
    if (f.outputs.size() != 1) return InvalidInput(who + ": has " + std::to_string(f.outputs.size()) + " outputs");
    LATTE_ASSIGN_OR_RETURN(const Tensor* out, KnownTensor(graph, f.outputs[0], "output"));
    if (out->shape != cur.shape) return InvalidInput(who + ": changes the shape, cannot be fused");
    if (KernelFamilyOf(f.kind) == KernelFamily::kUnary) {
      if (f.inputs.size() != 1 || f.inputs[0] != current) return InvalidInput(who + ": does not read the previous op's output");
    } else {
      if (f.inputs.size() != 2 || (f.inputs[0] != current && f.inputs[1] != current))
        return InvalidInput(who + ": does not read the previous op's output");
      const TensorId other_id = f.inputs[0] == current ? f.inputs[1] : f.inputs[0];
      LATTE_ASSIGN_OR_RETURN(const Tensor* other, KnownTensor(graph, other_id, "operand"));
      if (other->shape != cur.shape)
        return InvalidInput(who + ": other operand " + ShapeToString(other->shape) + " differs from the fused output " +
                            ShapeToString(cur.shape));
    }
    kernel.fused.push_back(ClampKind(f));
    LATTE_ASSIGN_OR_RETURN(std::optional<OpKind> f_act, AttrActivation(f));
    if (f_act) kernel.fused.push_back(*f_act);
  }
  return kernel;
}

// ---- Building one-kernel graphs ----

// Reads a kernel's params, checking each, and remembers which were read (the rest are unexpected).
class ParamReader {
 public:
  explicit ParamReader(const Kernel& kernel) : kernel_(kernel) {}

  /// The param, which must be present and within [min, 2^31].
  Expected<std::int64_t> Get(const std::string& name, std::int64_t min = 1, std::int64_t max = kMaxElements) {
    read_.insert(name);
    auto it = kernel_.params.find(name);
    if (it == kernel_.params.end()) return InvalidInput("param '" + name + "' is missing");
    if (it->second < min || it->second > max)
      return InvalidInput("param '" + name + "' is " + std::to_string(it->second) + ", must be in [" + std::to_string(min) +
                          ", " + std::to_string(max) + "]");
    return it->second;
  }
  Status CheckNoOthers() const {
    for (const auto& [name, value] : kernel_.params)
      if (!read_.count(name)) return InvalidInput("param '" + name + "' is not one of a " + std::string(OpName(kernel_.op)) + " kernel");
    return Status::Ok();
  }

 private:
  const Kernel& kernel_;
  std::set<std::string> read_;
};

// Fails when a tensor of these dims would exceed 2^31 elements, naming it.
Status CheckElements(const std::string& what, const Shape& shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) {
    if (d < 1 || n > kMaxElements / d)
      return InvalidInput(what + " of shape " + ShapeToString(shape) + " has more than 2^31 elements");
    n *= d;
  }
  return Status::Ok();
}

// Deterministic values in [-scale, scale] (own mapping: std distributions differ between libraries).
std::vector<float> RandomValues(std::int64_t count, std::mt19937& rng, float scale) {
  std::vector<float> v(static_cast<size_t>(count));
  for (float& x : v) x = (static_cast<float>(rng() >> 8) * (1.0f / 16777216.0f) * 2.0f - 1.0f) * scale;
  return v;
}

// Builds the graph step by step, inferring each node's output shapes as it goes (so later steps
// can size their operands) and bounding every tensor.
class KernelGraphBuilder {
 public:
  explicit KernelGraphBuilder(unsigned seed) : rng_(seed) {}

  Expected<TensorId> Input(const std::string& name, const Shape& shape) {
    LATTE_RETURN_IF_ERROR(CheckElements("input '" + name + "'", shape));
    return b_.Input(name, shape);
  }
  Expected<TensorId> Weights(const std::string& name, const Shape& shape, std::int64_t fan_in) {
    LATTE_RETURN_IF_ERROR(CheckElements("constant '" + name + "'", shape));
    const float scale = 1.0f / std::sqrt(static_cast<float>(std::max<std::int64_t>(fan_in, 1)));
    return b_.Constant(name, shape, RandomValues(*ShapeElements(shape), rng_, scale));
  }
  Expected<TensorId> Constant(const std::string& name, const Shape& shape, float value) {
    LATTE_RETURN_IF_ERROR(CheckElements("constant '" + name + "'", shape));
    return b_.Constant(name, shape, std::vector<float>(static_cast<size_t>(*ShapeElements(shape)), value));
  }
  Expected<TensorId> Op(OpKind kind, const std::string& name, std::vector<TensorId> inputs, Attributes attrs) {
    TensorId out = b_.Op1(kind, name, std::move(inputs), std::move(attrs));
    const auto id = static_cast<NodeId>(b_.graph().num_nodes() - 1);
    LATTE_ASSIGN_OR_RETURN(std::vector<Shape> shapes, InferNodeShapes(b_.graph(), id));
    LATTE_RETURN_IF_ERROR(CheckElements("output of " + name, shapes.at(0)));
    Tensor& t = b_.graph().mutable_tensor(out);
    t.shape = shapes[0];
    t.shape_known = true;
    return out;
  }
  const Shape& ShapeOf(TensorId id) { return b_.graph().tensor(id).shape; }
  Expected<Graph> Finish(TensorId out) { return b_.Finish({out}); }

 private:
  GraphBuilder b_;
  std::mt19937 rng_;
};

Attributes SpatialAttrs(std::int64_t sh, std::int64_t sw, std::int64_t pt, std::int64_t pl, std::int64_t pb,
                        std::int64_t pr) {
  Attributes a;
  a.Set("layout", std::string("NHWC"));
  a.Set("strides", std::vector<std::int64_t>{sh, sw});
  a.Set("padding", std::string("explicit"));
  a.Set("pads", std::vector<std::int64_t>{pt, pl, pb, pr});
  return a;
}

Status WindowFits(const char* k_name, std::int64_t k, std::int64_t dilation, const char* in_name, std::int64_t in,
                  std::int64_t pad_begin, std::int64_t pad_end) {
  const std::int64_t effective = (k - 1) * dilation + 1;
  if (effective > in + pad_begin + pad_end)
    return InvalidInput("param '" + std::string(k_name) + "' (" + std::to_string(k) + ", " + std::to_string(effective) +
                        " dilated) is larger than the padded input " + in_name + " " +
                        std::to_string(in + pad_begin + pad_end));
  return Status::Ok();
}

// Builds the main node; returns its output. `act` is the fused activation the node carries.
Expected<TensorId> BuildMain(const Kernel& k, ParamReader& r, KernelGraphBuilder& b, const std::string& act) {
  using K = OpKind;
  const std::string name(OpName(k.op));
  auto with_act = [&](Attributes a) {
    if (!act.empty()) a.Set("activation", act);
    return a;
  };
  switch (KernelFamilyOf(k.op)) {
    case KernelFamily::kConv: {
      LATTE_ASSIGN_OR_RETURN(auto n, r.Get("n"));
      LATTE_ASSIGN_OR_RETURN(auto ih, r.Get("ih"));
      LATTE_ASSIGN_OR_RETURN(auto iw, r.Get("iw"));
      LATTE_ASSIGN_OR_RETURN(auto ic, r.Get("ic"));
      LATTE_ASSIGN_OR_RETURN(auto oc, r.Get("oc"));
      LATTE_ASSIGN_OR_RETURN(auto kh, r.Get("kh"));
      LATTE_ASSIGN_OR_RETURN(auto kw, r.Get("kw"));
      LATTE_ASSIGN_OR_RETURN(auto sh, r.Get("sh"));
      LATTE_ASSIGN_OR_RETURN(auto sw, r.Get("sw"));
      LATTE_ASSIGN_OR_RETURN(auto dh, r.Get("dh"));
      LATTE_ASSIGN_OR_RETURN(auto dw, r.Get("dw"));
      LATTE_ASSIGN_OR_RETURN(auto g, r.Get("g"));
      LATTE_ASSIGN_OR_RETURN(auto pt, r.Get("pt", 0));
      LATTE_ASSIGN_OR_RETURN(auto pl, r.Get("pl", 0));
      LATTE_ASSIGN_OR_RETURN(auto pb, r.Get("pb", 0));
      LATTE_ASSIGN_OR_RETURN(auto pr, r.Get("pr", 0));
      LATTE_ASSIGN_OR_RETURN(auto bias, r.Get("bias", 0, 1));
      if (ic % g != 0) return InvalidInput("param 'g' (" + std::to_string(g) + ") does not divide ic (" + std::to_string(ic) + ")");
      if (oc % g != 0) return InvalidInput("param 'g' (" + std::to_string(g) + ") does not divide oc (" + std::to_string(oc) + ")");
      Attributes a = with_act(SpatialAttrs(sh, sw, pt, pl, pb, pr));
      a.Set("dilations", std::vector<std::int64_t>{dh, dw});
      LATTE_ASSIGN_OR_RETURN(TensorId x, b.Input("x", {n, ih, iw, ic}));
      TensorId w;
      if (k.op == K::kDepthwiseConv2D) {
        if (g != ic) return InvalidInput("param 'g' (" + std::to_string(g) + ") must equal ic (" + std::to_string(ic) + ") for depthwise_conv2d");
        a.Set("filter_layout", std::string("1HWO"));
        a.Set("groups", ic);
        a.Set("depth_multiplier", oc / ic);
        LATTE_ASSIGN_OR_RETURN(w, b.Weights("w", {1, kh, kw, oc}, kh * kw));
      } else {
        a.Set("filter_layout", std::string("OHWI"));
        a.Set("groups", g);
        LATTE_ASSIGN_OR_RETURN(w, b.Weights("w", {oc, kh, kw, ic / g}, kh * kw * (ic / g)));
      }
      if (k.op == K::kTransposeConv2D) {
        LATTE_ASSIGN_OR_RETURN(auto oh, r.Get("oh"));
        LATTE_ASSIGN_OR_RETURN(auto ow, r.Get("ow"));
        // The output size is what the pads leave of the full output, plus output padding < stride.
        const std::int64_t extra_h = oh + pt + pb - ((ih - 1) * sh + (kh - 1) * dh + 1);
        const std::int64_t extra_w = ow + pl + pr - ((iw - 1) * sw + (kw - 1) * dw + 1);
        if (extra_h < 0 || extra_h >= std::max(sh, dh))
          return InvalidInput("param 'oh' (" + std::to_string(oh) + ") does not follow from ih, kh, sh, dh, pt and pb");
        if (extra_w < 0 || extra_w >= std::max(sw, dw))
          return InvalidInput("param 'ow' (" + std::to_string(ow) + ") does not follow from iw, kw, sw, dw, pl and pr");
        if (extra_h != 0 || extra_w != 0) a.Set("output_padding", std::vector<std::int64_t>{extra_h, extra_w});
      } else {
        LATTE_RETURN_IF_ERROR(WindowFits("kh", kh, dh, "height", ih, pt, pb));
        LATTE_RETURN_IF_ERROR(WindowFits("kw", kw, dw, "width", iw, pl, pr));
      }
      std::vector<TensorId> inputs = {x, w};
      if (bias) {
        LATTE_ASSIGN_OR_RETURN(TensorId bt, b.Weights("bias", {oc}, 1));
        inputs.push_back(bt);
      }
      return b.Op(k.op, name, inputs, a);
    }
    case KernelFamily::kFullyConnected: {
      LATTE_ASSIGN_OR_RETURN(auto m, r.Get("m"));
      LATTE_ASSIGN_OR_RETURN(auto kk, r.Get("k"));
      LATTE_ASSIGN_OR_RETURN(auto n, r.Get("n"));
      LATTE_ASSIGN_OR_RETURN(auto bias, r.Get("bias", 0, 1));
      LATTE_ASSIGN_OR_RETURN(TensorId x, b.Input("x", {m, kk}));
      LATTE_ASSIGN_OR_RETURN(TensorId w, b.Weights("w", {n, kk}, kk));
      std::vector<TensorId> inputs = {x, w};
      if (bias) {
        LATTE_ASSIGN_OR_RETURN(TensorId bt, b.Weights("bias", {n}, 1));
        inputs.push_back(bt);
      }
      Attributes a = with_act({});
      a.Set("weights_layout", std::string("OI"));
      return b.Op(k.op, name, inputs, a);
    }
    case KernelFamily::kMatMul: {
      LATTE_ASSIGN_OR_RETURN(auto batch, r.Get("b"));
      LATTE_ASSIGN_OR_RETURN(auto m, r.Get("m"));
      LATTE_ASSIGN_OR_RETURN(auto kk, r.Get("k"));
      LATTE_ASSIGN_OR_RETURN(auto n, r.Get("n"));
      LATTE_ASSIGN_OR_RETURN(TensorId a, b.Input("a", {batch, m, kk}));
      LATTE_ASSIGN_OR_RETURN(TensorId bm, b.Input("b", {batch, kk, n}));
      return b.Op(k.op, name, {a, bm}, with_act({}));
    }
    case KernelFamily::kPool: {
      LATTE_ASSIGN_OR_RETURN(auto n, r.Get("n"));
      LATTE_ASSIGN_OR_RETURN(auto ih, r.Get("ih"));
      LATTE_ASSIGN_OR_RETURN(auto iw, r.Get("iw"));
      LATTE_ASSIGN_OR_RETURN(auto c, r.Get("c"));
      LATTE_ASSIGN_OR_RETURN(auto kh, r.Get("kh"));
      LATTE_ASSIGN_OR_RETURN(auto kw, r.Get("kw"));
      LATTE_ASSIGN_OR_RETURN(auto sh, r.Get("sh"));
      LATTE_ASSIGN_OR_RETURN(auto sw, r.Get("sw"));
      LATTE_ASSIGN_OR_RETURN(auto pt, r.Get("pt", 0));
      LATTE_ASSIGN_OR_RETURN(auto pl, r.Get("pl", 0));
      LATTE_ASSIGN_OR_RETURN(auto pb, r.Get("pb", 0));
      LATTE_ASSIGN_OR_RETURN(auto pr, r.Get("pr", 0));
      LATTE_RETURN_IF_ERROR(WindowFits("kh", kh, 1, "height", ih, pt, pb));
      LATTE_RETURN_IF_ERROR(WindowFits("kw", kw, 1, "width", iw, pl, pr));
      LATTE_ASSIGN_OR_RETURN(TensorId x, b.Input("x", {n, ih, iw, c}));
      Attributes a = with_act(SpatialAttrs(sh, sw, pt, pl, pb, pr));
      a.Set("kernel", std::vector<std::int64_t>{kh, kw});
      return b.Op(k.op, name, {x}, a);
    }
    case KernelFamily::kGlobalPool: case KernelFamily::kUnary: case KernelFamily::kSoftmax: case KernelFamily::kReduce:
    case KernelFamily::kReshape: case KernelFamily::kTranspose: case KernelFamily::kPad: case KernelFamily::kDepthSpace: {
      LATTE_ASSIGN_OR_RETURN(auto n, r.Get("n"));
      LATTE_ASSIGN_OR_RETURN(auto h, r.Get("h"));
      LATTE_ASSIGN_OR_RETURN(auto w, r.Get("w"));
      LATTE_ASSIGN_OR_RETURN(auto c, r.Get("c"));
      const Shape shape = {n, h, w, c};
      Attributes a = with_act({});
      std::vector<TensorId> inputs;
      LATTE_ASSIGN_OR_RETURN(TensorId x, b.Input("x", shape));
      inputs.push_back(x);
      switch (KernelFamilyOf(k.op)) {
        case KernelFamily::kGlobalPool:
          a.Set("layout", std::string("NHWC"));
          break;
        case KernelFamily::kUnary:
          if (k.op == K::kClip) a.Set("min", 0.0), a.Set("max", 6.0);
          if (k.op == K::kLeakyRelu) a.Set("alpha", 0.2);
          if (k.op == K::kElu) a.Set("alpha", 1.0);
          if (k.op == K::kPRelu) {
            LATTE_ASSIGN_OR_RETURN(TensorId slope, b.Weights("slope", {c}, 1));
            inputs.push_back(slope);
          }
          if (k.op == K::kBatchNorm) {  // inference: scale, bias, mean, then a variance above 0
            for (const char* param : {"scale", "bias", "mean"}) {
              LATTE_ASSIGN_OR_RETURN(TensorId t, b.Weights(param, {c}, 1));
              inputs.push_back(t);
            }
            LATTE_ASSIGN_OR_RETURN(TensorId var, b.Constant("var", {c}, 1.0f));
            inputs.push_back(var);
            a.Set("epsilon", 1e-5);
            a.Set("layout", std::string("NHWC"));
          }
          break;
        case KernelFamily::kSoftmax:
          a.Set("axis", std::int64_t{3});
          break;
        case KernelFamily::kReduce: {
          LATTE_ASSIGN_OR_RETURN(auto bits, r.Get("axes", 1, 15));
          std::vector<std::int64_t> axes;
          for (std::int64_t i = 0; i < 4; ++i)
            if (bits & (std::int64_t{1} << i)) axes.push_back(i);
          a.Set("axes", axes);
          a.Set("keepdims", std::int64_t{1});
          break;
        }
        case KernelFamily::kReshape:
          if (k.op == K::kReshape) a.Set("shape", std::vector<std::int64_t>{n, h * w * c});
          if (k.op == K::kFlatten) a.Set("axis", std::int64_t{1});
          if (k.op == K::kUnsqueeze) a.Set("axes", std::vector<std::int64_t>{0});
          if (k.op == K::kSqueeze) {
            std::vector<std::int64_t> axes;
            for (std::int64_t i = 0; i < 4; ++i)
              if (shape[static_cast<size_t>(i)] == 1) axes.push_back(i);
            if (axes.empty()) return InvalidInput("a squeeze kernel needs a dimension of size 1, params n h w c have none");
            a.Set("axes", axes);
          }
          break;
        case KernelFamily::kTranspose: {
          std::vector<std::int64_t> perm;
          std::vector<bool> seen(4, false);
          for (int i = 0; i < 4; ++i) {
            LATTE_ASSIGN_OR_RETURN(auto v, r.Get("perm" + std::to_string(i), 0, 3));
            if (seen[static_cast<size_t>(v)]) return InvalidInput("params perm0..perm3 are not a permutation (repeat " + std::to_string(v) + ")");
            seen[static_cast<size_t>(v)] = true;
            perm.push_back(v);
          }
          a.Set("perm", perm);
          break;
        }
        case KernelFamily::kPad: {
          std::vector<std::int64_t> pads;
          for (int i = 0; i < 8; ++i) {
            LATTE_ASSIGN_OR_RETURN(auto v, r.Get("p" + std::to_string(i), -kMaxElements));
            pads.push_back(v);
          }
          for (size_t i = 0; i < 4; ++i)  // negative pads crop; they may not empty a dimension
            if (shape[i] + pads[i] + pads[i + 4] < 1)
              return InvalidInput("params 'p" + std::to_string(i) + "' and 'p" + std::to_string(i + 4) + "' (" +
                                  std::to_string(pads[i]) + ", " + std::to_string(pads[i + 4]) + ") leave dimension " +
                                  std::to_string(i) + " empty");
          a.Set("pads", pads);
          a.Set("mode", std::string("constant"));
          break;
        }
        case KernelFamily::kDepthSpace: {
          LATTE_ASSIGN_OR_RETURN(auto block, r.Get("block", 1, 4096));
          if (k.op == K::kDepthToSpace && c % (block * block) != 0)
            return InvalidInput("param 'c' (" + std::to_string(c) + ") is not divisible by block² (" + std::to_string(block * block) + ")");
          if (k.op == K::kSpaceToDepth && (h % block != 0 || w % block != 0))
            return InvalidInput("params 'h' and 'w' (" + std::to_string(h) + ", " + std::to_string(w) +
                                ") are not divisible by block (" + std::to_string(block) + ")");
          a.Set("layout", std::string("NHWC"));
          a.Set("block_size", block);
          a.Set("mode", std::string("DCR"));
          break;
        }
        default:
          break;
      }
      return b.Op(k.op, name, inputs, a);
    }
    case KernelFamily::kBinary: {
      Shape as, bs;
      for (int i = 0; i < 4; ++i) {
        LATTE_ASSIGN_OR_RETURN(auto av, r.Get("a" + std::to_string(i)));
        LATTE_ASSIGN_OR_RETURN(auto bv, r.Get("b" + std::to_string(i)));
        if (av != bv && av != 1 && bv != 1)
          return InvalidInput("params 'a" + std::to_string(i) + "' (" + std::to_string(av) + ") and 'b" + std::to_string(i) +
                              "' (" + std::to_string(bv) + ") do not broadcast");
        as.push_back(av);
        bs.push_back(bv);
      }
      LATTE_ASSIGN_OR_RETURN(TensorId a, b.Input("a", as));
      LATTE_ASSIGN_OR_RETURN(TensorId bt, b.Input("b", bs));
      return b.Op(k.op, name, {a, bt}, with_act({}));
    }
    case KernelFamily::kConcat: {
      LATTE_ASSIGN_OR_RETURN(auto n, r.Get("n"));
      LATTE_ASSIGN_OR_RETURN(auto h, r.Get("h"));
      LATTE_ASSIGN_OR_RETURN(auto w, r.Get("w"));
      LATTE_ASSIGN_OR_RETURN(auto c, r.Get("c"));
      LATTE_ASSIGN_OR_RETURN(auto axis, r.Get("axis", 0, 3));
      LATTE_ASSIGN_OR_RETURN(auto count, r.Get("inputs", 1, 4096));
      const Shape out = {n, h, w, c};
      std::vector<TensorId> inputs;
      std::int64_t sum = 0;
      for (std::int64_t i = 0; i < count; ++i) {
        LATTE_ASSIGN_OR_RETURN(auto d, r.Get("d" + std::to_string(i)));
        sum += d;
        Shape s = out;
        s[static_cast<size_t>(axis)] = d;
        LATTE_ASSIGN_OR_RETURN(TensorId x, b.Input("x" + std::to_string(i), s));
        inputs.push_back(x);
      }
      if (sum != out[static_cast<size_t>(axis)])
        return InvalidInput("params d0..d" + std::to_string(count - 1) + " add up to " + std::to_string(sum) +
                            ", the output has " + std::to_string(out[static_cast<size_t>(axis)]) + " along axis " +
                            std::to_string(axis));
      Attributes a = with_act({});
      a.Set("axis", axis);
      return b.Op(k.op, name, inputs, a);
    }
    case KernelFamily::kResize: {
      LATTE_ASSIGN_OR_RETURN(auto n, r.Get("n"));
      LATTE_ASSIGN_OR_RETURN(auto ih, r.Get("ih"));
      LATTE_ASSIGN_OR_RETURN(auto iw, r.Get("iw"));
      LATTE_ASSIGN_OR_RETURN(auto c, r.Get("c"));
      LATTE_ASSIGN_OR_RETURN(auto oh, r.Get("oh"));
      LATTE_ASSIGN_OR_RETURN(auto ow, r.Get("ow"));
      LATTE_ASSIGN_OR_RETURN(auto mode, r.Get("mode", 0, 1));
      LATTE_ASSIGN_OR_RETURN(TensorId x, b.Input("x", {n, ih, iw, c}));
      Attributes a = with_act({});
      a.Set("layout", std::string("NHWC"));
      a.Set("mode", std::string(mode == 1 ? "bilinear" : "nearest"));
      // TFLite's usual semantics, which the backends run directly: half-pixel bilinear, flooring nearest.
      a.Set("coordinate_transformation", std::string(mode == 1 ? "half_pixel" : "asymmetric"));
      if (mode == 0) a.Set("nearest_mode", std::string("floor"));
      a.Set("sizes", std::vector<std::int64_t>{oh, ow});
      return b.Op(k.op, name, {x}, a);
    }
    case KernelFamily::kNone:
      break;
  }
  return NoFamily(k.op);
}

}  // namespace

FusionRules FusionRules::Default() {
  FusionRules rules;
  rules.kinds_ = {"conv2d+relu",           "conv2d+relu6",        "depthwise_conv2d+relu", "depthwise_conv2d+relu6",
                  "conv2d+add",            "conv2d+add+relu",     "conv2d+add+relu6",      "fully_connected+relu",
                  "fully_connected+relu6", "add+relu",            "add+relu6"};
  return rules;
}

Expected<FusionRules> FusionRules::FromKinds(const std::vector<std::string>& kinds) {
  FusionRules rules;
  for (const std::string& kind : kinds) {
    LATTE_ASSIGN_OR_RETURN(Kernel k, ParseKernelKind(kind));
    if (k.fused.empty()) return InvalidInput("fusion rule '" + kind + "' fuses nothing (expected main+follower)");
    if (KernelFamilyOf(k.op) == KernelFamily::kNone) return InvalidInput("fusion rule '" + kind + "': " + NoFamily(k.op).message());
    for (OpKind f : k.fused)
      if (!IsFusableFollower(f))
        return InvalidInput("fusion rule '" + kind + "': " + std::string(OpName(f)) +
                            " cannot follow inside a kernel (only one-input activations and binary elementwise ops)");
    rules.kinds_.insert(k.Kind());
  }
  return rules;
}

Expected<FusionRules> FusionRules::FromJson(const nlohmann::json& json) {
  if (!json.is_array()) return InvalidInput("fusion rules must be a JSON array of kernel kinds, got " + std::string(json.type_name()));
  std::vector<std::string> kinds;
  for (size_t i = 0; i < json.size(); ++i) {
    if (!json[i].is_string()) return InvalidInput("fusion rule " + std::to_string(i) + " is not a string: " + json[i].dump());
    kinds.push_back(json[i].get<std::string>());
  }
  return FromKinds(kinds);
}

nlohmann::json FusionRules::ToJson() const {
  nlohmann::json out = nlohmann::json::array();
  for (const std::string& kind : kinds_) out.push_back(kind);
  return out;
}

Expected<Kernel> KernelOfNodes(const Graph& graph, const std::vector<NodeId>& nodes) {
  auto kernel = KernelOfChain(graph, nodes, IsNchwGraph(graph));
  if (!kernel.ok() && !nodes.empty() && nodes[0] >= 0 && static_cast<size_t>(nodes[0]) < graph.num_nodes())
    return kernel.status().WithContext(DescribeNode(graph, nodes[0]));
  return kernel;
}

Expected<KernelGrouping> GroupIntoKernels(const Graph& graph, const FusionRules& rules) {
  return GroupIntoKernels(graph, [&rules](const std::vector<NodeId>&, const std::string& kind) { return rules.Allows(kind); });
}

Expected<KernelGrouping> GroupIntoKernels(const Graph& graph, const FusionPredicate& may_fuse) {
  LATTE_ASSIGN_OR_RETURN(std::vector<NodeId> order, graph.TopologicalOrder());
  const bool nchw = IsNchwGraph(graph);
  std::vector<std::vector<NodeId>> consumers(graph.num_tensors());
  for (size_t i = 0; i < graph.num_nodes(); ++i) {
    for (TensorId t : graph.node(static_cast<NodeId>(i)).inputs) {
      if (t < 0 || static_cast<size_t>(t) >= consumers.size()) continue;
      auto& list = consumers[static_cast<size_t>(t)];
      if (list.empty() || list.back() != static_cast<NodeId>(i)) list.push_back(static_cast<NodeId>(i));
    }
  }
  std::vector<bool> is_output(graph.num_tensors(), false);
  for (TensorId t : graph.outputs)
    if (t >= 0 && static_cast<size_t>(t) < is_output.size()) is_output[static_cast<size_t>(t)] = true;
  std::vector<size_t> position(graph.num_nodes());
  for (size_t i = 0; i < order.size(); ++i) position[static_cast<size_t>(order[i])] = i;

  KernelGrouping result;
  std::vector<bool> taken(graph.num_nodes(), false);
  for (NodeId id : order) {
    if (taken[static_cast<size_t>(id)]) continue;
    taken[static_cast<size_t>(id)] = true;
    auto kernel = KernelOfChain(graph, {id}, nchw);
    if (!kernel.ok()) {
      result.uncovered.push_back({id, NodeOpName(graph.node(id)), kernel.status().message()});
      continue;
    }
    KernelGroup group{std::move(kernel).value(), {id}};
    while (true) {
      const Node& last = graph.node(group.nodes.back());
      if (last.outputs.size() != 1) break;
      const TensorId t = last.outputs[0];
      if (t < 0 || static_cast<size_t>(t) >= consumers.size() || is_output[static_cast<size_t>(t)]) break;
      const auto& readers = consumers[static_cast<size_t>(t)];
      if (readers.size() != 1 || taken[static_cast<size_t>(readers[0])]) break;
      const NodeId next = readers[0];
      if (!IsFusableFollower(graph.node(next).kind)) break;
      std::vector<NodeId> chain = group.nodes;
      chain.push_back(next);
      auto candidate = KernelOfChain(graph, chain, nchw);
      if (!candidate.ok() || !may_fuse(chain, candidate->Kind())) break;
      taken[static_cast<size_t>(next)] = true;
      group.kernel = std::move(candidate).value();
      group.nodes = std::move(chain);
    }
    result.kernels.push_back(std::move(group));
  }
  // A kernel reads only last-node outputs of other kernels, so ordering by last node is topological.
  std::stable_sort(result.kernels.begin(), result.kernels.end(), [&](const KernelGroup& a, const KernelGroup& b) {
    return position[static_cast<size_t>(a.nodes.back())] < position[static_cast<size_t>(b.nodes.back())];
  });
  return result;
}

Expected<Graph> BuildKernelGraph(const Kernel& kernel, unsigned seed) {
  if (kernel.dtype != DataType::kFloat32)
    return Unsupported("kernel " + kernel.Kind() + " is " + std::string(DataTypeName(kernel.dtype)) +
                       ", only float32 kernels can be built");
  if (KernelFamilyOf(kernel.op) == KernelFamily::kNone) return NoFamily(kernel.op);
  for (OpKind f : kernel.fused)
    if (!IsFusableFollower(f))
      return InvalidInput("kernel " + kernel.Kind() + ": " + std::string(OpName(f)) + " cannot be fused after another op");

  // A leading activation rides on the main node as its attribute when the main op can carry it.
  size_t next = 0;
  std::string main_act;
  if (!kernel.fused.empty() && IsAttrActivation(kernel.fused[0]) && CanCarryActivation(kernel.op)) {
    main_act = std::string(OpName(kernel.fused[0]));
    next = 1;
  }
  ParamReader reader(kernel);
  KernelGraphBuilder b(seed);
  LATTE_ASSIGN_OR_RETURN(TensorId out, BuildMain(kernel, reader, b, main_act));
  LATTE_RETURN_IF_ERROR(reader.CheckNoOthers());
  for (size_t i = next; i < kernel.fused.size(); ++i) {
    const OpKind f = kernel.fused[i];
    const std::string name = "fused" + std::to_string(i) + ":" + std::string(OpName(f));
    Attributes a;
    if (KernelFamilyOf(f) == KernelFamily::kBinary) {
      LATTE_ASSIGN_OR_RETURN(TensorId other, b.Input("operand" + std::to_string(i), b.ShapeOf(out)));
      if (i + 1 < kernel.fused.size() && IsAttrActivation(kernel.fused[i + 1]) && CanCarryActivation(f)) {
        a.Set("activation", std::string(OpName(kernel.fused[i + 1])));
        ++i;
      }
      LATTE_ASSIGN_OR_RETURN(out, b.Op(f, name, {out, other}, a));
    } else {
      if (f == OpKind::kClip) a.Set("min", -2.0), a.Set("max", 2.0);  // not a relu's bounds: stays a clip
      if (f == OpKind::kLeakyRelu) a.Set("alpha", 0.2);
      if (f == OpKind::kElu) a.Set("alpha", 1.0);
      LATTE_ASSIGN_OR_RETURN(out, b.Op(f, name, {out}, a));
    }
  }
  LATTE_ASSIGN_OR_RETURN(Graph graph, b.Finish(out));
  LATTE_RETURN_IF_ERROR(graph.Validate());
  // Params the checks above let through but that do not describe one kernel (e.g. inconsistent
  // sizes) show up as a different kernel read back: refuse rather than measure something else.
  std::vector<NodeId> all(graph.num_nodes());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<NodeId>(i);
  LATTE_ASSIGN_OR_RETURN(Kernel built, KernelOfNodes(graph, all));
  if (!(built == kernel))
    return InvalidInput("kernel params do not describe one kernel: asked for " + kernel.Key() + ", built " + built.Key());
  return graph;
}


Expected<Graph> JoinKernels(const std::vector<JoinedKernel>& kernels) {
  if (kernels.empty()) return InvalidInput("no kernels to join");
  Graph joined;
  std::vector<TensorId> outputs;
  for (std::size_t ki = 0; ki < kernels.size(); ++ki) {
    LATTE_ASSIGN_OR_RETURN(Graph g, BuildKernelGraph(kernels[ki].kernel, static_cast<unsigned>(ki)));
    std::string prefix = "k";  // built in steps: GCC 12 warns (-Wrestrict) on "k" + to_string(ki) + ":"
    prefix += std::to_string(ki);
    prefix += ':';
    std::map<TensorId, TensorId> map;
    for (std::size_t i = 0; i < g.inputs.size() && i < kernels[ki].from.size(); ++i) {
      const int source = kernels[ki].from[i];
      if (source < 0) continue;
      if (static_cast<std::size_t>(source) >= ki) {
        return InvalidInput(fmt::format("kernel {} reads kernel {}: only earlier kernels can be read", ki, source));
      }
      const TensorId from = outputs[static_cast<std::size_t>(source)];
      if (joined.tensor(from).shape != g.tensor(g.inputs[i]).shape) {
        return InvalidInput(fmt::format("kernel {} input {} is {} but kernel {} writes {}", ki, i,
                                        ShapeToString(g.tensor(g.inputs[i]).shape), source,
                                        ShapeToString(joined.tensor(from).shape)));
      }
      map[g.inputs[i]] = from;
    }
    for (std::size_t t = 0; t < g.num_tensors(); ++t) {
      const TensorId id = static_cast<TensorId>(t);
      if (map.count(id)) continue;
      Tensor copy = g.tensor(id);
      copy.name = prefix + copy.name;
      map[id] = joined.AddTensor(copy);
      if (std::find(g.inputs.begin(), g.inputs.end(), id) != g.inputs.end()) joined.inputs.push_back(map[id]);
    }
    for (const Node& node : g.nodes()) {
      Node copy = node;
      copy.name = prefix + node.name;
      for (TensorId& t : copy.inputs)
        if (t != kNoTensor) t = map[t];
      for (TensorId& t : copy.outputs) t = map[t];
      joined.AddNode(copy);
    }
    outputs.push_back(map[g.outputs.front()]);
  }
  joined.outputs = {outputs.back()};
  LATTE_RETURN_IF_ERROR(joined.Validate());
  return joined;
}

}  // namespace latte
