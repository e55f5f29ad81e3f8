#include "ir/kernel_graph.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <random>

#include <fmt/format.h>

#include "ir/graph_builder.h"
#include "ir/kernel_params.h"
#include "ir/op_params.h"
#include "ir/shape_inference.h"

namespace latte {
namespace {

// Largest tensor a one-kernel graph may hold: beyond this a "kernel" is a typo, not a workload.
constexpr std::int64_t kMaxElements = std::int64_t{1} << 31;

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

  Expected<TensorId> Input(const std::string& name, const Shape& shape, DataType dtype = DataType::kFloat32) {
    LATTE_RETURN_IF_ERROR(CheckElements("input '" + name + "'", shape));
    return b_.Input(name, shape, dtype);
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

Status WindowFits(const std::string& k_name, std::int64_t k, std::int64_t dilation, const char* in_name,
                  std::int64_t in, std::int64_t pad_begin, std::int64_t pad_end) {
  const std::int64_t effective = (k - 1) * dilation + 1;
  if (effective > in + pad_begin + pad_end)
    return InvalidInput("param '" + k_name + "' (" + std::to_string(k) + ", " + std::to_string(effective) +
                        " dilated) is larger than the padded input " + in_name + " " +
                        std::to_string(in + pad_begin + pad_end));
  return Status::Ok();
}

// The main node being built: its kernel, the builder, its name and the fused activation it carries.
struct MainNode {
  const Kernel& k;
  KernelGraphBuilder& b;
  std::string name;
  std::string act;
  Attributes WithAct(Attributes a) const {
    if (!act.empty()) a.Set("activation", act);
    return a;
  }
};

// One function per kernel family: each reads the params checked (kernel_params.h: each present, in
// range, no other) and adds the main node, returning its output.
Expected<TensorId> BuildConv(const MainNode& m) {
  using K = OpKind;
  using P = ConvKernelParams;
  LATTE_ASSIGN_OR_RETURN(const P p, ReadCheckedParams<P>(m.k));
  const std::int64_t ic = p.ic, oc = p.oc, kh = p.kh, kw = p.kw, sh = p.sh, sw = p.sw, g = p.g;
  const std::int64_t dh = *p.dh, dw = *p.dw, pt = *p.pt, pl = *p.pl, pb = *p.pb, pr = *p.pr;
  const std::string g_is = "param '" + ParamKey(&P::g) + "' (" + std::to_string(g) + ")";
  if (ic % g != 0) return InvalidInput(g_is + " does not divide ic (" + std::to_string(ic) + ")");
  if (oc % g != 0) return InvalidInput(g_is + " does not divide oc (" + std::to_string(oc) + ")");
  Attributes a = m.WithAct(SpatialAttrs(sh, sw, pt, pl, pb, pr));
  a.Set("dilations", std::vector<std::int64_t>{dh, dw});
  LATTE_ASSIGN_OR_RETURN(TensorId x, m.b.Input("x", {p.n, p.ih, p.iw, ic}));
  TensorId w;
  if (m.k.op == K::kDepthwiseConv2D) {
    if (g != ic) return InvalidInput(g_is + " must equal ic (" + std::to_string(ic) + ") for depthwise_conv2d");
    a.Set("filter_layout", std::string("1HWO"));
    a.Set("groups", ic);
    a.Set("depth_multiplier", oc / ic);
    LATTE_ASSIGN_OR_RETURN(w, m.b.Weights("w", {1, kh, kw, oc}, kh * kw));
  } else {
    a.Set("filter_layout", std::string("OHWI"));
    a.Set("groups", g);
    LATTE_ASSIGN_OR_RETURN(w, m.b.Weights("w", {oc, kh, kw, ic / g}, kh * kw * (ic / g)));
  }
  if (m.k.op == K::kTransposeConv2D) {
    const std::int64_t oh = *p.oh, ow = *p.ow;
    // The output size is what the pads leave of the full output, plus output padding < stride.
    const std::int64_t extra_h = oh + pt + pb - ((p.ih - 1) * sh + (kh - 1) * dh + 1);
    const std::int64_t extra_w = ow + pl + pr - ((p.iw - 1) * sw + (kw - 1) * dw + 1);
    if (extra_h < 0 || extra_h >= std::max(sh, dh))
      return InvalidInput("param '" + ParamKey(&P::oh) + "' (" + std::to_string(oh) +
                          ") does not follow from ih, kh, sh, dh, pt and pb");
    if (extra_w < 0 || extra_w >= std::max(sw, dw))
      return InvalidInput("param '" + ParamKey(&P::ow) + "' (" + std::to_string(ow) +
                          ") does not follow from iw, kw, sw, dw, pl and pr");
    if (extra_h != 0 || extra_w != 0) a.Set("output_padding", std::vector<std::int64_t>{extra_h, extra_w});
  } else {
    LATTE_RETURN_IF_ERROR(WindowFits(ParamKey(&P::kh), kh, dh, "height", p.ih, pt, pb));
    LATTE_RETURN_IF_ERROR(WindowFits(ParamKey(&P::kw), kw, dw, "width", p.iw, pl, pr));
  }
  std::vector<TensorId> inputs = {x, w};
  if (*p.bias) {
    LATTE_ASSIGN_OR_RETURN(TensorId bt, m.b.Weights("bias", {oc}, 1));
    inputs.push_back(bt);
  }
  return m.b.Op(m.k.op, m.name, inputs, a);
}

Expected<TensorId> BuildFullyConnected(const MainNode& m) {
  LATTE_ASSIGN_OR_RETURN(const FullyConnectedKernelParams p, ReadCheckedParams<FullyConnectedKernelParams>(m.k));
  LATTE_ASSIGN_OR_RETURN(TensorId x, m.b.Input("x", {p.m, p.k}));
  LATTE_ASSIGN_OR_RETURN(TensorId w, m.b.Weights("w", {p.n, p.k}, p.k));
  std::vector<TensorId> inputs = {x, w};
  if (p.bias) {
    LATTE_ASSIGN_OR_RETURN(TensorId bt, m.b.Weights("bias", {p.n}, 1));
    inputs.push_back(bt);
  }
  Attributes a = m.WithAct({});
  a.Set("weights_layout", std::string("OI"));
  return m.b.Op(m.k.op, m.name, inputs, a);
}

Expected<TensorId> BuildMatMul(const MainNode& m) {
  LATTE_ASSIGN_OR_RETURN(const MatMulKernelParams p, ReadCheckedParams<MatMulKernelParams>(m.k));
  LATTE_ASSIGN_OR_RETURN(TensorId a, m.b.Input("a", {p.b, p.m, p.k}));
  LATTE_ASSIGN_OR_RETURN(TensorId bm, m.b.Input("b", {p.b, p.k, p.n}));
  return m.b.Op(m.k.op, m.name, {a, bm}, m.WithAct({}));
}

Expected<TensorId> BuildPool(const MainNode& m) {
  using P = PoolKernelParams;
  LATTE_ASSIGN_OR_RETURN(const P p, ReadCheckedParams<P>(m.k));
  LATTE_RETURN_IF_ERROR(WindowFits(ParamKey(&P::kh), p.kh, 1, "height", p.ih, p.pt, p.pb));
  LATTE_RETURN_IF_ERROR(WindowFits(ParamKey(&P::kw), p.kw, 1, "width", p.iw, p.pl, p.pr));
  LATTE_ASSIGN_OR_RETURN(TensorId x, m.b.Input("x", {p.n, p.ih, p.iw, p.c}));
  Attributes a = m.WithAct(SpatialAttrs(p.sh, p.sw, p.pt, p.pl, p.pb, p.pr));
  a.Set("kernel", std::vector<std::int64_t>{p.kh, p.kw});
  return m.b.Op(m.k.op, m.name, {x}, a);
}

Expected<TensorId> BuildNhwcOp(const MainNode& m) {
  using K = OpKind;
  Attributes a = m.WithAct({});
  NhwcParams p;
  if (m.k.op == K::kGelu) {  // its params say which approximation
    LATTE_ASSIGN_OR_RETURN(const GeluKernelParams g, ReadCheckedParams<GeluKernelParams>(m.k));
    p = g;
    a.Set("approximate", std::string(g.tanh ? "tanh" : "none"));
  } else if (m.k.op == K::kCast) {  // its params say to which type
    LATTE_ASSIGN_OR_RETURN(const CastKernelParams c, ReadCheckedParams<CastKernelParams>(m.k));
    const auto to = static_cast<DataType>(c.to);
    if (c.to <= 0 || c.to > static_cast<std::int64_t>(DataType::kBool))
      return InvalidInput("kernel " + m.k.Key() + ": 'to' " + std::to_string(c.to) + " is no numeric or bool type");
    p = c;
    a.Set("to", std::string(DataTypeName(to)));
  } else {
    LATTE_ASSIGN_OR_RETURN(p, ReadCheckedParams<NhwcParams>(m.k));
  }
  std::vector<TensorId> inputs;
  LATTE_ASSIGN_OR_RETURN(TensorId x, m.b.Input("x", {p.n, p.h, p.w, p.c}, m.k.dtype));
  inputs.push_back(x);
  if (KernelFamilyOf(m.k.op) == KernelFamily::kGlobalPool) a.Set("layout", std::string("NHWC"));
  if (KernelFamilyOf(m.k.op) == KernelFamily::kSoftmax) a.Set("axis", std::int64_t{3});
  if (m.k.op == K::kClip) a.Set("min", 0.0), a.Set("max", 6.0);
  if (m.k.op == K::kLeakyRelu) a.Set("alpha", 0.2);
  if (m.k.op == K::kElu) a.Set("alpha", 1.0);
  if (m.k.op == K::kPRelu) {
    LATTE_ASSIGN_OR_RETURN(TensorId slope, m.b.Weights("slope", {p.c}, 1));
    inputs.push_back(slope);
  }
  if (m.k.op == K::kBatchNorm) {  // inference: scale, bias, mean, then a variance above 0
    for (const char* param : {"scale", "bias", "mean"}) {
      LATTE_ASSIGN_OR_RETURN(TensorId t, m.b.Weights(param, {p.c}, 1));
      inputs.push_back(t);
    }
    LATTE_ASSIGN_OR_RETURN(TensorId var, m.b.Constant("var", {p.c}, 1.0f));
    inputs.push_back(var);
    a.Set("epsilon", 1e-5);
    a.Set("layout", std::string("NHWC"));
  }
  return m.b.Op(m.k.op, m.name, inputs, a);
}

Expected<TensorId> BuildReshape(const MainNode& m) {
  LATTE_ASSIGN_OR_RETURN(const NhwcParams p, ReadCheckedParams<NhwcParams>(m.k));
  LATTE_ASSIGN_OR_RETURN(TensorId x, m.b.Input("x", {p.n, p.h, p.w, p.c}, m.k.dtype));
  Attributes a = m.WithAct({});
  a.Set("shape", std::vector<std::int64_t>{p.n, p.h * p.w * p.c});  // reshape alone (BuildKernelGraph)
  return m.b.Op(m.k.op, m.name, {x}, a);
}

Expected<TensorId> BuildReduce(const MainNode& m) {
  using P = ReduceKernelParams;
  LATTE_ASSIGN_OR_RETURN(const P p, ReadCheckedParams<P>(m.k));
  LATTE_ASSIGN_OR_RETURN(TensorId x, m.b.Input("x", {p.n, p.h, p.w, p.c}));
  std::vector<std::int64_t> axes;
  for (std::int64_t i = 0; i < 4; ++i)
    if (p.axes & (std::int64_t{1} << i)) axes.push_back(i);
  Attributes a = m.WithAct({});
  a.Set("keepdims", std::int64_t{1});
  if (m.k.op == OpKind::kArgMax || m.k.op == OpKind::kArgMin) {  // one axis
    if (axes.size() != 1)
      return InvalidInput("param '" + ParamKey(&P::axes) + "' (" + std::to_string(p.axes) + ") of an " +
                          std::string(OpName(m.k.op)) + " kernel must name one axis");
    a.Set("axis", axes[0]);
    return m.b.Op(m.k.op, m.name, {x}, a);
  }
  a.Set("axes", axes);
  return m.b.Op(m.k.op, m.name, {x}, a);
}

// layer_norm over the last axis, with the scale and bias its params ask for.
Expected<TensorId> BuildLayerNorm(const MainNode& m) {
  LATTE_ASSIGN_OR_RETURN(const LayerNormKernelParams p, ReadCheckedParams<LayerNormKernelParams>(m.k));
  LATTE_ASSIGN_OR_RETURN(TensorId x, m.b.Input("x", {p.n, p.h, p.w, p.c}));
  std::vector<TensorId> inputs = {x};
  if (p.scale) {
    LATTE_ASSIGN_OR_RETURN(TensorId scale, m.b.Weights("scale", {p.c}, 1));
    inputs.push_back(scale);
  } else if (p.bias) {
    inputs.push_back(kNoTensor);
  }
  if (p.bias) {
    LATTE_ASSIGN_OR_RETURN(TensorId bias, m.b.Weights("bias", {p.c}, 1));
    inputs.push_back(bias);
  }
  Attributes a = m.WithAct({});
  a.Set("axis", std::int64_t{-1});
  a.Set("epsilon", 1e-5);
  return m.b.Op(m.k.op, m.name, inputs, a);
}

// where on a bool condition (a graph input: campaigns fill it with random booleans).
Expected<TensorId> BuildWhere(const MainNode& m) {
  using P = WhereKernelParams;
  LATTE_ASSIGN_OR_RETURN(const P p, ReadCheckedParams<P>(m.k));
  for (size_t i = 0; i < 4; ++i) {
    const std::int64_t out = std::max({p.c[i], p.x[i], p.y[i]});
    for (const auto& [dims, key] : {std::pair{&p.c, ParamKey(&P::c, i)}, std::pair{&p.x, ParamKey(&P::x, i)},
                                    std::pair{&p.y, ParamKey(&P::y, i)}})
      if ((*dims)[i] != out && (*dims)[i] != 1)
        return InvalidInput("param '" + key + "' (" + std::to_string((*dims)[i]) + ") does not broadcast to " +
                            std::to_string(out));
  }
  LATTE_ASSIGN_OR_RETURN(TensorId c, m.b.Input("condition", Shape(p.c.begin(), p.c.end()), DataType::kBool));
  LATTE_ASSIGN_OR_RETURN(TensorId x, m.b.Input("x", Shape(p.x.begin(), p.x.end())));
  LATTE_ASSIGN_OR_RETURN(TensorId y, m.b.Input("y", Shape(p.y.begin(), p.y.end())));
  return m.b.Op(m.k.op, m.name, {c, x, y}, m.WithAct({}));
}

// gather of a constant table (an embedding: rows × inner, or outer × rows × inner along axis 1) by
// int64 indices, a graph input (campaigns fill it with indices in range).
Expected<TensorId> BuildGather(const MainNode& m) {
  LATTE_ASSIGN_OR_RETURN(const GatherKernelParams p, ReadCheckedParams<GatherKernelParams>(m.k));
  const Shape table = p.outer == 1 ? Shape{p.rows, p.inner} : Shape{p.outer, p.rows, p.inner};
  LATTE_ASSIGN_OR_RETURN(TensorId data, m.b.Weights("table", table, 1));
  LATTE_ASSIGN_OR_RETURN(TensorId indices, m.b.Input("indices", {p.idx}, DataType::kInt64));
  Attributes a = m.WithAct({});
  a.Set("axis", std::int64_t{p.outer == 1 ? 0 : 1});
  return m.b.Op(m.k.op, m.name, {data, indices}, a);
}

Expected<TensorId> BuildTranspose(const MainNode& m) {
  using P = TransposeKernelParams;
  LATTE_ASSIGN_OR_RETURN(const P p, ReadCheckedParams<P>(m.k));
  LATTE_ASSIGN_OR_RETURN(TensorId x, m.b.Input("x", {p.n, p.h, p.w, p.c}));
  std::vector<bool> seen(4, false);
  for (std::int64_t v : p.perm) {
    if (seen[static_cast<size_t>(v)])
      return InvalidInput("params " + ParamKey(&P::perm, 0) + ".." + ParamKey(&P::perm, 3) +
                          " are not a permutation (repeat " + std::to_string(v) + ")");
    seen[static_cast<size_t>(v)] = true;
  }
  Attributes a = m.WithAct({});
  a.Set("perm", std::vector<std::int64_t>(p.perm.begin(), p.perm.end()));
  return m.b.Op(m.k.op, m.name, {x}, a);
}

Expected<TensorId> BuildPad(const MainNode& m) {
  using P = PadKernelParams;
  LATTE_ASSIGN_OR_RETURN(const P p, ReadCheckedParams<P>(m.k));
  const Shape shape = {p.n, p.h, p.w, p.c};
  LATTE_ASSIGN_OR_RETURN(TensorId x, m.b.Input("x", shape));
  for (size_t i = 0; i < 4; ++i)  // negative pads crop; they may not empty a dimension
    if (shape[i] + p.p[i] + p.p[i + 4] < 1)
      return InvalidInput("params '" + ParamKey(&P::p, i) + "' and '" + ParamKey(&P::p, i + 4) + "' (" +
                          std::to_string(p.p[i]) + ", " + std::to_string(p.p[i + 4]) + ") leave dimension " +
                          std::to_string(i) + " empty");
  Attributes a = m.WithAct({});
  a.Set("pads", std::vector<std::int64_t>(p.p.begin(), p.p.end()));
  a.Set("mode", std::string("constant"));
  return m.b.Op(m.k.op, m.name, {x}, a);
}

Expected<TensorId> BuildDepthSpace(const MainNode& m) {
  using K = OpKind;
  using P = DepthSpaceKernelParams;
  LATTE_ASSIGN_OR_RETURN(const P p, ReadCheckedParams<P>(m.k));
  LATTE_ASSIGN_OR_RETURN(TensorId x, m.b.Input("x", {p.n, p.h, p.w, p.c}));
  if (m.k.op == K::kDepthToSpace && p.c % (p.block * p.block) != 0)
    return InvalidInput("param '" + ParamKey(&P::c) + "' (" + std::to_string(p.c) +
                        ") is not divisible by block² (" + std::to_string(p.block * p.block) + ")");
  if (m.k.op == K::kSpaceToDepth && (p.h % p.block != 0 || p.w % p.block != 0))
    return InvalidInput("params '" + ParamKey(&P::h) + "' and '" + ParamKey(&P::w) + "' (" + std::to_string(p.h) +
                        ", " + std::to_string(p.w) + ") are not divisible by block (" + std::to_string(p.block) +
                        ")");
  Attributes a = m.WithAct({});
  a.Set("layout", std::string("NHWC"));
  a.Set("block_size", p.block);
  a.Set("mode", std::string("DCR"));
  return m.b.Op(m.k.op, m.name, {x}, a);
}

// the part at the start of each axis: where it starts costs nothing
Expected<TensorId> BuildSlice(const MainNode& m) {
  LATTE_ASSIGN_OR_RETURN(const SliceKernelParams p, ReadCheckedParams<SliceKernelParams>(m.k));
  Attributes a = m.WithAct({});
  a.Set("starts", std::vector<std::int64_t>{0, 0, 0, 0});
  a.Set("ends", std::vector<std::int64_t>{p.on, p.oh, p.ow, p.oc});
  a.Set("axes", std::vector<std::int64_t>{0, 1, 2, 3});
  LATTE_ASSIGN_OR_RETURN(TensorId x, m.b.Input("x", {p.n, p.h, p.w, p.c}));
  return m.b.Op(m.k.op, m.name, {x}, a);
}

Expected<TensorId> BuildBinary(const MainNode& m) {
  using P = BinaryKernelParams;
  LATTE_ASSIGN_OR_RETURN(const P p, ReadCheckedParams<P>(m.k));
  for (size_t i = 0; i < 4; ++i)
    if (p.a[i] != p.b[i] && p.a[i] != 1 && p.b[i] != 1)
      return InvalidInput("params '" + ParamKey(&P::a, i) + "' (" + std::to_string(p.a[i]) + ") and '" +
                          ParamKey(&P::b, i) + "' (" + std::to_string(p.b[i]) + ") do not broadcast");
  LATTE_ASSIGN_OR_RETURN(TensorId a, m.b.Input("a", Shape(p.a.begin(), p.a.end()), m.k.dtype));
  LATTE_ASSIGN_OR_RETURN(TensorId bt, m.b.Input("b", Shape(p.b.begin(), p.b.end()), m.k.dtype));
  return m.b.Op(m.k.op, m.name, {a, bt}, m.WithAct({}));
}

Expected<TensorId> BuildConcat(const MainNode& m) {
  using P = ConcatKernelParams;
  LATTE_ASSIGN_OR_RETURN(const P p, ReadCheckedParams<P>(m.k));
  const Shape out = {p.n, p.h, p.w, p.c};
  std::vector<TensorId> inputs;
  std::int64_t sum = 0;
  for (size_t i = 0; i < p.d.size(); ++i) {
    sum += p.d[i];
    Shape s = out;
    s[static_cast<size_t>(p.axis)] = p.d[i];
    LATTE_ASSIGN_OR_RETURN(TensorId x, m.b.Input(fmt::format("x{}", i), s));
    inputs.push_back(x);
  }
  if (sum != out[static_cast<size_t>(p.axis)])
    return InvalidInput("params " + ParamKey(&P::d, 0) + ".." + ParamKey(&P::d, p.d.size() - 1) + " add up to " +
                        std::to_string(sum) + ", the output has " +
                        std::to_string(out[static_cast<size_t>(p.axis)]) + " along axis " + std::to_string(p.axis));
  Attributes a = m.WithAct({});
  a.Set("axis", p.axis);
  return m.b.Op(m.k.op, m.name, inputs, a);
}

Expected<TensorId> BuildResize(const MainNode& m) {
  LATTE_ASSIGN_OR_RETURN(const ResizeKernelParams p, ReadCheckedParams<ResizeKernelParams>(m.k));
  LATTE_ASSIGN_OR_RETURN(TensorId x, m.b.Input("x", {p.n, p.ih, p.iw, p.c}));
  Attributes a = m.WithAct({});
  a.Set("layout", std::string("NHWC"));
  a.Set("mode", std::string(p.mode == 1 ? "bilinear" : "nearest"));
  // TFLite's usual semantics, which the backends run directly: half-pixel bilinear, flooring nearest.
  a.Set("coordinate_transformation", std::string(p.mode == 1 ? "half_pixel" : "asymmetric"));
  if (p.mode == 0) a.Set("nearest_mode", std::string("floor"));
  a.Set("sizes", std::vector<std::int64_t>{p.oh, p.ow});
  return m.b.Op(m.k.op, m.name, {x}, a);
}

// Builds the main node; returns its output. `act` is the fused activation the node carries.
Expected<TensorId> BuildMain(const Kernel& k, KernelGraphBuilder& b, const std::string& act) {
  const MainNode m{k, b, std::string(OpName(k.op)), act};
  switch (KernelFamilyOf(k.op)) {
    case KernelFamily::kConv: return BuildConv(m);
    case KernelFamily::kFullyConnected: return BuildFullyConnected(m);
    case KernelFamily::kMatMul: return BuildMatMul(m);
    case KernelFamily::kPool: return BuildPool(m);
    case KernelFamily::kGlobalPool: case KernelFamily::kUnary: case KernelFamily::kSoftmax: return BuildNhwcOp(m);
    case KernelFamily::kReshape: return BuildReshape(m);
    case KernelFamily::kReduce: return BuildReduce(m);
    case KernelFamily::kTranspose: return BuildTranspose(m);
    case KernelFamily::kPad: return BuildPad(m);
    case KernelFamily::kDepthSpace: return BuildDepthSpace(m);
    case KernelFamily::kSlice: return BuildSlice(m);
    case KernelFamily::kBinary: return BuildBinary(m);
    case KernelFamily::kConcat: return BuildConcat(m);
    case KernelFamily::kResize: return BuildResize(m);
    case KernelFamily::kLayerNorm: return BuildLayerNorm(m);
    case KernelFamily::kWhere: return BuildWhere(m);
    case KernelFamily::kGather: return BuildGather(m);
    case KernelFamily::kNone:
      break;
  }
  return NoKernelFamily(k.op);
}

}  // namespace

Kernel WithNchwTensors(const Kernel& kernel) {
  using Dims = std::array<std::int64_t, 4>;
  auto nchw = [](const Dims& d) { return Dims{d[0], d[3], d[1], d[2]}; };
  auto image = [](std::int64_t h, std::int64_t w) { return h > 1 && w > 1; };
  Kernel out = kernel;
  switch (KernelFamilyOf(kernel.op)) {
    case KernelFamily::kBinary: {
      auto p = ReadParams<BinaryKernelParams>(kernel);
      if (!image(std::max(p.a[1], p.b[1]), std::max(p.a[2], p.b[2]))) break;
      WriteParams(BinaryKernelParams{nchw(p.a), nchw(p.b)}, out);
      break;
    }
    case KernelFamily::kReduce: {
      auto p = ReadParams<ReduceKernelParams>(kernel);
      if (!image(p.h, p.w)) break;
      const Dims d = nchw({p.n, p.h, p.w, p.c});
      // NHWC axis i sits at NCHW position kToNchwPosition[i]: n 0, h 2, w 3, c 1.
      constexpr int kToNchwPosition[4] = {0, 2, 3, 1};
      std::int64_t axes = 0;
      for (int i = 0; i < 4; ++i)
        if (p.axes & (std::int64_t{1} << i)) axes |= std::int64_t{1} << kToNchwPosition[i];
      ReduceKernelParams q;
      q.n = d[0], q.h = d[1], q.w = d[2], q.c = d[3], q.axes = axes;
      WriteParams(q, out);
      break;
    }
    default: break;
  }
  return out;
}

Expected<Graph> BuildKernelGraph(const Kernel& kernel, unsigned seed) {
  // A conversion's graph is an int8 graph's edge: MeasureKernel times it inside one at int8.
  if (kernel.op == OpKind::kQuantize || kernel.op == OpKind::kDequantize)
    return Unsupported("a " + std::string(OpName(kernel.op)) + " kernel is measured at --precision int8 only, as the "
                       "conversion at an int8 kernel's edge");
  // Logic kernels are bool (their inputs are); a cast's input may be any numeric or bool type
  // (an attention mask is int64), and so may a reshape's (the mask's unsqueeze); every other
  // kind's data is float32.
  const bool cast_input = kernel.op == OpKind::kCast && kernel.dtype != DataType::kUnknown &&
                          kernel.dtype != DataType::kString && kernel.dtype != DataType::kFloat16;
  const bool int64_reshape = kernel.op == OpKind::kReshape && kernel.dtype == DataType::kInt64;
  const DataType want = cast_input || int64_reshape ? kernel.dtype
                        : IsLogic(kernel.op)        ? DataType::kBool
                                                    : DataType::kFloat32;
  if (kernel.dtype != want)
    return Unsupported("kernel " + kernel.Kind() + " is " + std::string(DataTypeName(kernel.dtype)) + ", only " +
                       std::string(DataTypeName(want)) + " " + std::string(OpName(kernel.op)) + " kernels can be built");
  if (KernelFamilyOf(kernel.op) == KernelFamily::kNone) return NoKernelFamily(kernel.op);
  if (KernelFamilyOf(kernel.op) == KernelFamily::kReshape && kernel.op != OpKind::kReshape)
    return InvalidInput("a " + std::string(OpName(kernel.op)) +
                        " kernel is a reshape kernel: reshape, flatten, squeeze, unsqueeze and identity move data "
                        "alike, and are measured and predicted as reshape");
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
  KernelGraphBuilder b(seed);
  LATTE_ASSIGN_OR_RETURN(TensorId out, BuildMain(kernel, b, main_act));
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
  // A commutative op asked for with its smaller operand first (a scale times a map, as a network
  // in context wires it) is built in that order and reads back as its key orders it.
  Kernel asked = kernel;
  if (KernelFamilyOf(asked.op) == KernelFamily::kBinary)
    WriteParams(CanonicalOperandOrder(asked.op, ReadParams<BinaryKernelParams>(asked)), asked);
  if (!(built == asked))
    return InvalidInput("kernel params do not describe one kernel: asked for " + kernel.Key() + ", built " + built.Key());
  return graph;
}


Expected<Graph> JoinKernels(const std::vector<JoinedKernel>& kernels, std::vector<std::vector<NodeId>>* kernel_nodes) {
  if (kernels.empty()) return InvalidInput("no kernels to join");
  if (kernel_nodes != nullptr) kernel_nodes->assign(kernels.size(), {});
  Graph joined;
  std::vector<TensorId> outputs;
  for (std::size_t ki = 0; ki < kernels.size(); ++ki) {
    LATTE_ASSIGN_OR_RETURN(Graph g, BuildKernelGraph(kernels[ki].kernel, static_cast<unsigned>(ki)));
    std::string prefix = "k";  // built in steps: GCC 12 warns (-Wrestrict) on "k" + to_string(ki) + ":"
    prefix += std::to_string(ki);
    prefix += ':';
    std::vector<int> from = kernels[ki].from;
    // A commutative kernel is keyed with its larger operand first (CanonicalOperandOrder) while
    // a network may wire it the other way round: its sources are then taken swapped.
    if (IsCommutative(kernels[ki].kernel.op) && g.inputs.size() == 2 && from.size() >= 2) {
      const auto fits = [&](const std::vector<int>& order) {
        for (std::size_t i = 0; i < 2; ++i) {
          const int source = order[i];
          if (source < 0 || static_cast<std::size_t>(source) >= ki) continue;
          if (joined.tensor(outputs[static_cast<std::size_t>(source)]).shape != g.tensor(g.inputs[i]).shape) return false;
        }
        return true;
      };
      std::vector<int> swapped = from;
      std::swap(swapped[0], swapped[1]);
      if (!fits(from) && fits(swapped)) from = std::move(swapped);
    }
    std::map<TensorId, TensorId> map;
    for (std::size_t i = 0; i < g.inputs.size() && i < from.size(); ++i) {
      const int source = from[i];
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
      if (kernel_nodes != nullptr) (*kernel_nodes)[ki].push_back(static_cast<NodeId>(joined.num_nodes()));
      joined.AddNode(copy);
    }
    outputs.push_back(map[g.outputs.front()]);
  }
  joined.outputs = {outputs.back()};
  LATTE_RETURN_IF_ERROR(joined.Validate());
  return joined;
}


}  // namespace latte
