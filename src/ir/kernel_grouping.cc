// A graph grouped into kernels (ir/kernel_graph.h): the canonical Kernel of a chain of nodes, and
// the walk that groups a whole graph by fusion rules.
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "ir/kernel_graph.h"
#include "ir/kernel_params.h"
#include "ir/nchwc_layout.h"
#include "ir/op_params.h"

namespace latte {
namespace {

using Params = ParamMap;
using Shape4 = std::array<std::int64_t, 4>;

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

// NCHW axis → position in NHWC.
constexpr std::array<int, 4> kNchwToNhwc = {0, 3, 1, 2};

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

// A shape of rank > 4 as rank 4 with the same elements, its leading dims merged into the first:
// what a reshape moves depends on its elements alone.
Shape LeadingMerged(const Shape& shape) {
  if (shape.size() <= 4) return shape;
  std::int64_t lead = 1;
  for (size_t i = 0; i + 3 < shape.size(); ++i) lead *= shape[i];
  Shape out = {lead};
  out.insert(out.end(), shape.end() - 3, shape.end());
  return out;
}

// The same data movement as transposing `shape` by `perm` (both rank > 4), at the lowest rank
// that has it: size-1 axes dropped, and input axes that stay neighbours in the output merged.
// kUnsupported when it still needs more than 4 axes.
Expected<std::pair<Shape, std::vector<std::int64_t>>> ReducedTranspose(const Shape& shape, const std::vector<std::int64_t>& perm) {
  std::vector<std::int64_t> kept_index(shape.size(), -1);  // old axis -> axis after dropping 1s
  Shape kept;
  for (size_t a = 0; a < shape.size(); ++a)
    if (shape[a] != 1) kept_index[a] = static_cast<std::int64_t>(kept.size()), kept.push_back(shape[a]);
  std::vector<std::int64_t> order;  // the output's axes, as kept input axes
  for (std::int64_t v : perm)
    if (kept_index[static_cast<size_t>(v)] >= 0) order.push_back(kept_index[static_cast<size_t>(v)]);
  // Runs of the output whose input axes follow each other are one axis: [first, last] each.
  std::vector<std::pair<std::int64_t, std::int64_t>> runs;
  for (std::int64_t v : order) {
    if (!runs.empty() && runs.back().second + 1 == v) runs.back().second = v;
    else runs.emplace_back(v, v);
  }
  if (runs.size() > 4)
    return Unsupported("transpose of " + ShapeToString(shape) + " moves " + std::to_string(runs.size()) +
                       " axes apart, kernels describe at most 4");
  std::vector<std::pair<std::int64_t, std::int64_t>> by_input = runs;
  std::sort(by_input.begin(), by_input.end());
  Shape reduced;
  for (const auto& [first, last] : by_input) {
    std::int64_t size = 1;
    for (std::int64_t a = first; a <= last; ++a) size *= kept[static_cast<size_t>(a)];
    reduced.push_back(size);
  }
  std::vector<std::int64_t> reduced_perm;
  for (const auto& run : runs)
    reduced_perm.push_back(std::find(by_input.begin(), by_input.end(), run) - by_input.begin());
  if (reduced.empty()) reduced = {1}, reduced_perm = {0};
  return std::make_pair(reduced, reduced_perm);
}

// The copy a slice of `in` to `out` (steps of 1) makes, at the lowest rank that has it: axes of
// size 1 in both dropped, and neighbouring axes the slice keeps whole merged. kUnsupported when
// it still needs more than 4 axes.
Expected<std::pair<Shape, Shape>> ReducedSlice(const Shape& in, const Shape& out) {
  Shape reduced_in, reduced_out;
  bool last_whole = false;  // the axis before was kept whole: a whole axis after it merges in
  for (size_t a = 0; a < in.size(); ++a) {
    if (in[a] == 1) continue;
    const bool whole = in[a] == out[a];
    if (whole && last_whole) {
      reduced_in.back() *= in[a];
      reduced_out.back() *= out[a];
    } else {
      reduced_in.push_back(in[a]);
      reduced_out.push_back(out[a]);
    }
    last_whole = whole;
  }
  if (reduced_in.size() > 4)
    return Unsupported("slice of " + ShapeToString(in) + " to " + ShapeToString(out) + " cuts " +
                       std::to_string(reduced_in.size()) + " axes apart, kernels describe at most 4");
  if (reduced_in.empty()) reduced_in = reduced_out = {1};
  return std::make_pair(reduced_in, reduced_out);
}

// The stored params of a family's typed struct.
template <class T>
Params Stored(const T& typed) {
  Kernel kernel;
  WriteParams(typed, kernel);
  return std::move(kernel.params);
}

NhwcParams NhwcOf(const Shape4& s) { return {s[0], s[1], s[2], s[3]}; }

// The params of the main node alone, without its fused activation.
// matmul: the batches of the output, and m k n after the transposes the node asks for.
Expected<Params> MatMulKernelParamsOf(const Graph& graph, const Node& node, const Tensor& x, const Tensor& y) {
  LATTE_ASSIGN_OR_RETURN(const Tensor* b, KnownTensor(graph, node.input(1), "input"));
  Shape a_shape = x.shape, b_shape = b->shape;
  if (a_shape.empty() || b_shape.empty()) return InvalidInput("matmul of a scalar");
  if (a_shape.size() == 1) a_shape.insert(a_shape.begin(), 1);
  if (b_shape.size() == 1) b_shape.push_back(1);
  if (node.attrs.GetInt("transpose_a", 0)) std::swap(a_shape[a_shape.size() - 1], a_shape[a_shape.size() - 2]);
  if (node.attrs.GetInt("transpose_b", 0)) std::swap(b_shape[b_shape.size() - 1], b_shape[b_shape.size() - 2]);
  const std::int64_t m = a_shape[a_shape.size() - 2], k = a_shape.back(), n = b_shape.back();
  const std::int64_t out = y.num_elements().value_or(0);
  if (m < 1 || n < 1 || out % (m * n) != 0) return InvalidInput("matmul output " + ShapeToString(y.shape) + " is not batches of m×n");
  return Stored(MatMulKernelParams{out / (m * n), m, k, n});

}

// softmax: over the channels (the last NHWC axis), or over the contiguous rows of a 4-D tensor's last axis.
Expected<Params> SoftmaxKernelParamsOf(const Node& node, const Tensor& x, bool nchw) {
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  const std::int64_t axis = node.attrs.GetInt("axis", -1);
  LATTE_ASSIGN_OR_RETURN(int at, NhwcAxis(axis, std::max<std::int64_t>(rank, 1), nchw));
  if (rank > 0 && node.attrs.GetInt("coerce_2d", 0) != 0) {
    const std::int64_t a = axis < 0 ? axis + rank : axis;
    for (std::int64_t d = a + 1; d < rank; ++d)
      if (x.shape[static_cast<size_t>(d)] != 1)
        return Unsupported("softmax over the flattened dims from axis " + std::to_string(axis) + " of " +
                           ShapeToString(x.shape) + " has no kernel params (only over the channel axis)");
  }
  // Over the last axis of a 4-D tensor of an NCHW graph (attention's scores, not an image):
  // rows contiguous in memory, as a softmax over NHWC channels has them.
  if (nchw && rank == 4 && (axis == -1 || axis == 3)) return Stored(NhwcOf(Nhwc4(x.shape, false)));
  if (rank > 0 && at != 3)
    return Unsupported("softmax over axis " + std::to_string(axis) + " of " + ShapeToString(x.shape) +
                       " is not over the channel (last NHWC) axis; kernel params describe only that");
  return Stored(NhwcOf(Nhwc4(x.shape, nchw)));

}

// A reduction: the input, and its axes as NHWC bits (argmax and argmin: their one axis).
Expected<Params> ReduceKernelParamsOf(const Node& node, const Tensor& x, bool nchw) {
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  std::int64_t bits = 0;
  auto axes = node.attrs.GetInts("axes");
  if (node.kind == OpKind::kArgMax || node.kind == OpKind::kArgMin) axes = std::vector<std::int64_t>{node.attrs.GetInt("axis", 0)};
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
  return Stored(ReduceKernelParams{NhwcOf(Nhwc4(x.shape, nchw)), bits});

}

// layer_norm: each row of the normalized dims (from axis on) is c, the dims before it n h w (the
// leading ones merged beyond three), in the file's order: the rows are contiguous whatever the
// graph's layout.
Expected<Params> LayerNormKernelParamsOf(const Node& node, const Tensor& x) {
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  std::int64_t axis = node.attrs.GetInt("axis", -1);
  if (axis < -rank || axis >= rank) return InvalidInput("layer_norm axis " + std::to_string(axis) + " out of range");
  if (axis < 0) axis += rank;
  std::int64_t row = 1;
  for (std::int64_t d = axis; d < rank; ++d) row *= x.shape[static_cast<size_t>(d)];
  Shape lead(x.shape.begin(), x.shape.begin() + axis);
  lead = LeadingMerged(lead);  // rank ≤ 4 ...
  if (lead.size() == 4) lead = {lead[0] * lead[1], lead[2], lead[3]};  // ... and ≤ 3 beside the row
  lead.push_back(row);
  return Stored(LayerNormKernelParams{NhwcOf(Nhwc4(lead, false)), node.input(1) != kNoTensor ? 1 : 0,
                                      node.input(2) != kNoTensor ? 1 : 0});
}

// gather: the data around the gathered axis, and the number of indices.
Expected<Params> GatherKernelParamsOf(const Graph& graph, const Node& node, const Tensor& x) {
  LATTE_ASSIGN_OR_RETURN(const Tensor* indices, KnownTensor(graph, node.input(1), "indices", true));
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  std::int64_t axis = node.attrs.GetInt("axis", 0);
  if (axis < -rank || axis >= rank) return InvalidInput("gather axis " + std::to_string(axis) + " out of range");
  if (axis < 0) axis += rank;
  GatherKernelParams p;
  for (std::int64_t d = 0; d < rank; ++d) {
    const std::int64_t size = x.shape[static_cast<size_t>(d)];
    if (d < axis) p.outer *= size;
    else if (d == axis) p.rows = size;
    else p.inner *= size;
  }
  p.idx = indices->num_elements().value_or(0);
  if (p.idx < 1) return Unsupported("a gather of no indices has no kernel params");
  return Stored(p);
}

// concat: the output, the NHWC axis, and each input's size along it.
Expected<Params> ConcatKernelParamsOf(const Graph& graph, const Node& node, const Tensor& y, bool nchw) {
  const auto out_rank = static_cast<std::int64_t>(y.shape.size());
  const std::int64_t axis = node.attrs.GetInt("axis", 0);
  LATTE_ASSIGN_OR_RETURN(int at, NhwcAxis(axis, out_rank, nchw));
  ConcatKernelParams concat{NhwcOf(Nhwc4(y.shape, nchw)), at, {}};
  const std::int64_t file_axis = axis < 0 ? axis + out_rank : axis;
  for (TensorId in : node.inputs) {
    LATTE_ASSIGN_OR_RETURN(const Tensor* t, KnownTensor(graph, in, "input"));
    if (static_cast<std::int64_t>(t->shape.size()) != out_rank) return InvalidInput("concat inputs differ in rank");
    concat.d.push_back(t->shape[static_cast<size_t>(file_axis)]);
  }
  return Stored(concat);

}

// pad: the input, and the pads of each NHWC axis.
Expected<Params> PadKernelParamsOf(const Node& node, const Tensor& x, bool nchw) {
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  PadKernelParams pad{NhwcOf(Nhwc4(x.shape, nchw)), {}};
  auto pads = node.attrs.GetInts("pads");
  if (!pads || static_cast<std::int64_t>(pads->size()) != 2 * rank)
    return InvalidInput("pad needs " + std::to_string(2 * rank) + " 'pads' values");
  for (std::int64_t a = 0; a < rank; ++a) {
    LATTE_ASSIGN_OR_RETURN(int at, NhwcAxis(a, rank, nchw));
    pad.p[static_cast<size_t>(at)] = (*pads)[static_cast<size_t>(a)];
    pad.p[static_cast<size_t>(at + 4)] = (*pads)[static_cast<size_t>(a + rank)];
  }
  return Stored(pad);

}

// transpose: the input and the permutation as the graph holds them in memory (rank > 4 reduced
// first, lower ranks after leading 1s), never an NCHW graph's NHWC view: what a transpose costs is
// which axis ends up innermost, and that view moves another. A ViT's (0,2,1,3) on [1,197,3,64]
// keeps its 64-float rows; in the NHWC view it became (0,3,2,1) on [1,3,64,197], a different
// movement, which ONNX Runtime ran 17 times slower than the model's own (139 µs against 8.2).
Expected<Params> TransposeKernelParamsOf(const Node& node, const Tensor& x) {
  const auto rank = static_cast<std::int64_t>(x.shape.size());
  std::vector<std::int64_t> perm(static_cast<size_t>(rank));
  if (auto attr = node.attrs.GetInts("perm"); attr && !attr->empty()) perm = *attr;
  else for (std::int64_t i = 0; i < rank; ++i) perm[static_cast<size_t>(i)] = rank - 1 - i;
  if (static_cast<std::int64_t>(perm.size()) != rank) return InvalidInput("transpose perm does not match the rank");
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (auto& v : perm) {
    if (v < -rank || v >= rank) return InvalidInput("transpose perm value " + std::to_string(v));
    if (v < 0) v += rank;
    if (seen[static_cast<size_t>(v)]) return InvalidInput("transpose perm repeats axis " + std::to_string(v));
    seen[static_cast<size_t>(v)] = true;
  }
  // Beyond rank 4, the same movement at a lower rank.
  Shape shape = x.shape;
  if (rank > 4) {
    LATTE_ASSIGN_OR_RETURN(auto reduced, ReducedTranspose(shape, perm));
    std::tie(shape, perm) = reduced;
  }
  const auto shape_rank = static_cast<std::int64_t>(shape.size());
  std::array<std::int64_t, 4> padded_perm = {0, 1, 2, 3};
  const std::int64_t pad = 4 - shape_rank;
  for (std::int64_t i = 0; i < shape_rank; ++i) padded_perm[static_cast<size_t>(pad + i)] = perm[static_cast<size_t>(i)] + pad;
  return Stored(TransposeKernelParams{NhwcOf(Nhwc4(shape, false)), padded_perm});
}

Expected<Params> MainParams(const Graph& graph, const Node& node, bool nchw) {
  const KernelFamily family = KernelFamilyOf(node.kind);
  if (family == KernelFamily::kNone) return NoKernelFamily(node.kind);
  // Reshapes and transposes of rank > 4 are described at rank 4, as the same data movement.
  const bool any_rank_in = family == KernelFamily::kReshape || family == KernelFamily::kTranspose ||
                           family == KernelFamily::kSlice || family == KernelFamily::kGather ||
                           family == KernelFamily::kLayerNorm;
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (node.inputs[i] == kNoTensor) continue;
    LATTE_RETURN_IF_ERROR(KnownTensor(graph, node.inputs[i], "input", any_rank_in));
  }
  if (node.outputs.empty()) return InvalidInput("has no output");
  // Only concat and resize describe their output's shape; the rest need it known, not small.
  const bool any_rank_out = family != KernelFamily::kConcat && family != KernelFamily::kResize;
  for (TensorId out : node.outputs) LATTE_RETURN_IF_ERROR(KnownTensor(graph, out, "output", any_rank_out));
  LATTE_ASSIGN_OR_RETURN(const Tensor* x, KnownTensor(graph, node.input(0), "input", any_rank_in));
  const Tensor& y = graph.tensor(node.outputs[0]);
  const auto rank = static_cast<std::int64_t>(x->shape.size());
  // Spatial ops say their own layout; the rest follow the graph's.
  const bool node_nchw = node.attrs.GetString("layout", nchw ? "NCHW" : "NHWC") == "NCHW";

  switch (family) {
    case KernelFamily::kConv: {
      LATTE_ASSIGN_OR_RETURN(ConvParams c, GetConvParams(graph, node));
      const bool transpose = node.kind == OpKind::kTransposeConv2D;  // only it stores its output size
      return Stored(ConvKernelParams{.n = c.batch, .ih = c.in_h, .iw = c.in_w, .ic = c.in_c, .oc = c.out_c,
                                     .kh = c.kernel_h, .kw = c.kernel_w, .sh = c.stride_h, .sw = c.stride_w,
                                     .g = c.groups, .dh = c.dilation_h, .dw = c.dilation_w, .pt = c.pads.top,
                                     .pl = c.pads.left, .pb = c.pads.bottom, .pr = c.pads.right,
                                     .bias = c.has_bias ? 1 : 0,
                                     .oh = transpose ? std::optional(c.out_h) : std::nullopt,
                                     .ow = transpose ? std::optional(c.out_w) : std::nullopt,
                                     .elmt_fused = std::nullopt});
    }
    case KernelFamily::kFullyConnected: {
      LATTE_ASSIGN_OR_RETURN(FullyConnectedParams f, GetFullyConnectedParams(graph, node));
      return Stored(FullyConnectedKernelParams{f.rows, f.in_features, f.out_features, f.has_bias ? 1 : 0});
    }
    case KernelFamily::kMatMul: return MatMulKernelParamsOf(graph, node, *x, y);
    case KernelFamily::kPool: {
      LATTE_ASSIGN_OR_RETURN(PoolParams q, GetPoolParams(graph, node));
      // ceil_mode: the extra last window reads end padding; say so in pb/pr (same windows, same work).
      q.pads.bottom = std::max(q.pads.bottom, (q.out_h - 1) * q.stride_h + q.kernel_h - q.in_h - q.pads.top);
      q.pads.right = std::max(q.pads.right, (q.out_w - 1) * q.stride_w + q.kernel_w - q.in_w - q.pads.left);
      return Stored(PoolKernelParams{q.batch, q.in_h, q.in_w, q.channels, q.kernel_h, q.kernel_w, q.stride_h,
                                     q.stride_w, q.pads.top, q.pads.left, q.pads.bottom, q.pads.right});
    }
    case KernelFamily::kGlobalPool: {
      LATTE_ASSIGN_OR_RETURN(PoolParams q, GetPoolParams(graph, node));
      return Stored(NhwcParams{q.batch, q.in_h, q.in_w, q.channels});
    }
    case KernelFamily::kUnary:  // batch_norm says its layout; the others have none
      if (node.kind == OpKind::kGelu) {
        LATTE_ASSIGN_OR_RETURN(const bool tanh, GeluTanhForm(node));
        return Stored(GeluKernelParams{NhwcOf(Nhwc4(x->shape, node_nchw)), tanh ? 1 : 0});
      }
      if (node.kind == OpKind::kCast) {
        const DataType to = graph.tensor(node.outputs[0]).dtype;
        if (to == DataType::kUnknown) return InvalidInput("cast to an unknown type");
        return Stored(CastKernelParams{NhwcOf(Nhwc4(x->shape, node_nchw)), static_cast<std::int64_t>(to)});
      }
      return Stored(NhwcOf(Nhwc4(x->shape, node_nchw)));
    case KernelFamily::kLayerNorm: return LayerNormKernelParamsOf(node, *x);
    case KernelFamily::kGather: return GatherKernelParamsOf(graph, node, *x);
    case KernelFamily::kWhere: {
      auto view = [&](const Shape& s) {  // padded to the output's rank, then NHWC (as binary ops)
        Shape padded(y.shape.size() > s.size() ? y.shape.size() - s.size() : 0, 1);
        padded.insert(padded.end(), s.begin(), s.end());
        return Nhwc4(padded, nchw);
      };
      LATTE_ASSIGN_OR_RETURN(const Tensor* a, KnownTensor(graph, node.input(1), "input"));
      LATTE_ASSIGN_OR_RETURN(const Tensor* b, KnownTensor(graph, node.input(2), "input"));
      return Stored(WhereKernelParams{view(x->shape), view(a->shape), view(b->shape)});
    }
    case KernelFamily::kReshape:
      return Stored(NhwcOf(Nhwc4(LeadingMerged(x->shape), node_nchw && rank == 4)));
    case KernelFamily::kSoftmax: return SoftmaxKernelParamsOf(node, *x, nchw);
    case KernelFamily::kReduce: return ReduceKernelParamsOf(node, *x, nchw);
    case KernelFamily::kBinary: {
      LATTE_ASSIGN_OR_RETURN(const Tensor* b, KnownTensor(graph, node.input(1), "input"));
      // Pad both to the output's rank first (numpy broadcasting), then view as NHWC.
      auto view = [&](const Shape& s) {
        Shape padded(y.shape.size() > s.size() ? y.shape.size() - s.size() : 0, 1);
        padded.insert(padded.end(), s.begin(), s.end());
        return Nhwc4(padded, nchw);
      };
      return Stored(CanonicalOperandOrder(node.kind, BinaryKernelParams{view(x->shape), view(b->shape)}));
    }
    case KernelFamily::kConcat: return ConcatKernelParamsOf(graph, node, y, nchw);
    case KernelFamily::kResize: {
      if (rank != 4) return InvalidInput("resize input must have rank 4");
      const Shape4 i = Nhwc4(x->shape, node_nchw), o = Nhwc4(y.shape, node_nchw);
      const std::string mode = node.attrs.GetString("mode", "nearest");
      if (mode != "nearest" && mode != "bilinear") return Unsupported("resize mode '" + mode + "' has no kernel params");
      return Stored(ResizeKernelParams{i[0], i[1], i[2], i[3], o[1], o[2], mode == "bilinear" ? 1 : 0});
    }
    case KernelFamily::kPad: return PadKernelParamsOf(node, *x, nchw);
    case KernelFamily::kTranspose: return TransposeKernelParamsOf(node, *x);
    case KernelFamily::kSlice: {
      if (auto steps = node.attrs.GetInts("steps"))
        for (std::int64_t step : *steps)
          if (step != 1) return Unsupported("a slice with steps other than 1 has no kernel params");
      if (y.shape.size() != x->shape.size()) return InvalidInput("slice output rank differs from its input's");
      LATTE_ASSIGN_OR_RETURN(auto reduced, ReducedSlice(x->shape, y.shape));
      const Shape4 out = Nhwc4(reduced.second, false);
      return Stored(SliceKernelParams{NhwcOf(Nhwc4(reduced.first, false)), out[0], out[1], out[2], out[3]});
    }
    case KernelFamily::kDepthSpace: {
      if (rank != 4) return InvalidInput("input must have rank 4");
      return Stored(DepthSpaceKernelParams{NhwcOf(Nhwc4(x->shape, node_nchw)), node.attrs.GetInt("block_size", 0)});
    }
    case KernelFamily::kNone:
      break;
  }
  return NoKernelFamily(node.kind);
}

// The Kernel of a chain's main node alone (with an activation its attributes fuse); errors say
// why without naming the node (callers add that).
Expected<Kernel> MainKernel(const Graph& graph, NodeId id, bool nchw) {
  if (id < 0 || static_cast<size_t>(id) >= graph.num_nodes()) return InvalidInput("node id " + std::to_string(id) + " out of range");
  const Node& main = graph.node(id);
  if (main.kind == OpKind::kOpaque)
    return Unsupported(main.unsupported_reason.empty() ? "op '" + main.source_op + "' is not known to Latte"
                                                       : main.unsupported_reason);
  Kernel kernel;
  // Reshape, flatten, squeeze, unsqueeze and identity move data alike (a copy at most): one kind.
  kernel.op = KernelFamilyOf(main.kind) == KernelFamily::kReshape ? OpKind::kReshape : main.kind;
  LATTE_ASSIGN_OR_RETURN(kernel.params, MainParams(graph, main, nchw));
  // The data's dtype: where's choices (input 1), not its condition; a binary op's activation, not
  // a constant operand written first (a scale times a map: at int8 and bf16 constants stay float32).
  std::size_t data = main.kind == OpKind::kWhere ? 1 : 0;
  if (KernelFamilyOf(main.kind) == KernelFamily::kBinary && main.inputs.size() > 1 &&
      graph.tensor(main.inputs[0]).is_constant() && !graph.tensor(main.inputs[1]).is_constant())
    data = 1;
  kernel.dtype = graph.tensor(main.inputs[data]).dtype;
  LATTE_ASSIGN_OR_RETURN(std::optional<OpKind> act, AttrActivation(main));
  if (act) kernel.fused.push_back(*act);
  return kernel;
}

// `kernel` (whose last node is `previous`) with node `next` fused after it, or why it cannot be.
Status AppendFollower(const Graph& graph, NodeId previous, NodeId next, Kernel& kernel) {
  if (next < 0 || static_cast<size_t>(next) >= graph.num_nodes()) return InvalidInput("node id " + std::to_string(next) + " out of range");
  const Node& prev = graph.node(previous);
  const Node& f = graph.node(next);
  const auto who = [&] { return DescribeNode(graph, next); };  // built only for an error
  if (prev.outputs.size() != 1) return InvalidInput(who() + ": follows a node with " + std::to_string(prev.outputs.size()) + " outputs");
  const TensorId current = prev.outputs[0];
  const Tensor& cur = graph.tensor(current);
  if (!IsFusableFollower(f.kind)) return InvalidInput(who() + ": a " + std::string(OpName(f.kind)) + " cannot be fused after another op");
  if (f.outputs.size() != 1) return InvalidInput(who() + ": has " + std::to_string(f.outputs.size()) + " outputs");
  LATTE_ASSIGN_OR_RETURN(const Tensor* out, KnownTensor(graph, f.outputs[0], "output"));
  if (out->shape != cur.shape) return InvalidInput(who() + ": changes the shape, cannot be fused");
  if (KernelFamilyOf(f.kind) == KernelFamily::kUnary) {
    if (f.inputs.size() != 1 || f.inputs[0] != current) return InvalidInput(who() + ": does not read the previous op's output");
  } else {
    if (f.inputs.size() != 2 || (f.inputs[0] != current && f.inputs[1] != current))
      return InvalidInput(who() + ": does not read the previous op's output");
    const TensorId other_id = f.inputs[0] == current ? f.inputs[1] : f.inputs[0];
    LATTE_ASSIGN_OR_RETURN(const Tensor* other, KnownTensor(graph, other_id, "operand"));
    if (other->shape != cur.shape)
      return InvalidInput(who() + ": other operand " + ShapeToString(other->shape) + " differs from the fused output " +
                          ShapeToString(cur.shape));
  }
  kernel.fused.push_back(ClampKind(f));
  LATTE_ASSIGN_OR_RETURN(std::optional<OpKind> f_act, AttrActivation(f));
  if (f_act) kernel.fused.push_back(*f_act);
  return Status::Ok();
}

// The Kernel of a chain; errors say why without naming the main node (callers add that).
Expected<Kernel> KernelOfChain(const Graph& graph, const std::vector<NodeId>& nodes, bool nchw) {
  if (nodes.empty()) return InvalidInput("no nodes");
  for (NodeId id : nodes)
    if (id < 0 || static_cast<size_t>(id) >= graph.num_nodes()) return InvalidInput("node id " + std::to_string(id) + " out of range");
  LATTE_ASSIGN_OR_RETURN(Kernel kernel, MainKernel(graph, nodes[0], nchw));
  for (size_t i = 1; i < nodes.size(); ++i) LATTE_RETURN_IF_ERROR(AppendFollower(graph, nodes[i - 1], nodes[i], kernel));
  return kernel;
}

}  // namespace

bool IsNchwGraph(const Graph& graph) {
  return std::any_of(graph.nodes().begin(), graph.nodes().end(),
                     [](const Node& n) { return n.attrs.GetString("layout", "") == "NCHW"; });
}

Expected<Kernel> KernelOfNodes(const Graph& graph, const std::vector<NodeId>& nodes) {
  auto kernel = KernelOfChain(graph, nodes, IsNchwGraph(graph));
  if (!kernel.ok() && !nodes.empty() && nodes[0] >= 0 && static_cast<size_t>(nodes[0]) < graph.num_nodes())
    return kernel.status().WithContext(DescribeNode(graph, nodes[0]));
  return kernel;
}

Expected<KernelGrouping> GroupIntoKernels(const Graph& graph, const FusionRules& rules) {
  if (rules.NchwcBlock() == 0)
    return GroupIntoKernels(graph, [&rules](const std::vector<NodeId>&, const std::string& kind) { return rules.Allows(kind); });
  // Conditional rules: fused where ORT's NCHWc pass fuses the chain in this graph.
  LATTE_ASSIGN_OR_RETURN(NchwcPlan plan, PlanNchwc(graph, rules.NchwcBlock()));
  return GroupIntoKernels(graph, [&rules, &plan](const std::vector<NodeId>& chain, const std::string& kind) {
    return rules.Allows(kind) || (rules.AllowsWhereNchwcFuses(kind) && NchwcRunsAsOne(plan, chain));
  });
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
    auto kernel = MainKernel(graph, id, nchw);
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
      // A fused kind's key does not say which GELU: fused gelus are the exact form (KernelParts),
      // a tanh one stays a kernel of its own.
      if (graph.node(next).kind == OpKind::kGelu) {
        const auto tanh = GeluTanhForm(graph.node(next));
        if (!tanh.ok() || *tanh) break;
      }
      std::vector<NodeId> chain = group.nodes;
      chain.push_back(next);
      // The group's kernel with one more follower: its main node's params are already known.
      Kernel candidate = group.kernel;
      if (!AppendFollower(graph, group.nodes.back(), next, candidate).ok() || !may_fuse(chain, candidate.Kind())) break;
      taken[static_cast<size_t>(next)] = true;
      group.kernel = std::move(candidate);
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

}  // namespace latte
