#include "ir/shape_inference.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "ir/op_params.h"

namespace latte {
namespace {

constexpr std::int64_t kMaxElements = std::int64_t{1} << 40;  // a shape beyond this is hostile

const Tensor& In(const Graph& g, const Node& n, size_t i) { return g.tensor(n.inputs[i]); }

Expected<Shape> KnownInput(const Graph& g, const Node& n, size_t i) {
  if (n.input(i) == kNoTensor) return InvalidInput("input " + std::to_string(i) + " is missing");
  const Tensor& t = In(g, n, i);
  if (!t.fully_known())
    return InvalidInput("input " + std::to_string(i) + " '" + t.name + "' has unknown shape " + ShapeToString(t.shape, t.shape_known));
  return t.shape;
}

// Normalizes a possibly negative axis for a tensor of `rank` dims (`rank + 1` for unsqueeze).
Expected<std::int64_t> Axis(std::int64_t axis, std::int64_t rank) {
  if (axis < -rank || axis >= rank)
    return InvalidInput("axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}


Shape Spatial(bool nhwc, std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) {
  return nhwc ? Shape{n, h, w, c} : Shape{n, c, h, w};
}

Expected<Shape> Reduce(const Node& node, const Shape& x) {
  const auto rank = static_cast<std::int64_t>(x.size());
  std::vector<bool> reduced(x.size(), false);
  auto axes = node.attrs.GetInts("axes");
  if (!axes || axes->empty()) {
    std::fill(reduced.begin(), reduced.end(), true);
  } else {
    for (auto a : *axes) {
      LATTE_ASSIGN_OR_RETURN(auto axis, Axis(a, rank));
      reduced[axis] = true;
    }
  }
  const bool keep = node.attrs.GetInt("keepdims", 1) != 0;
  Shape out;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!reduced[i]) out.push_back(x[i]);
    else if (keep) out.push_back(1);
  }
  return out;
}

Expected<Shape> ReshapeTarget(const Graph& g, const Node& node, const Shape& x) {
  std::vector<std::int64_t> target;
  if (auto attr = node.attrs.GetInts("shape")) {
    target = *attr;
  } else if (node.input(1) != kNoTensor && In(g, node, 1).is_constant()) {
    LATTE_ASSIGN_OR_RETURN(target, ConstantInts(In(g, node, 1)));
  } else {
    return Unsupported("reshape target shape is computed at run time");
  }
  const bool copy_zero = node.attrs.GetInt("copy_zero", 0) != 0;
  auto total = ShapeElements(x);
  if (!total) return InvalidInput("input shape " + ShapeToString(x) + " is too large");
  Shape out;
  int infer = -1;
  std::int64_t known = 1;
  for (size_t i = 0; i < target.size(); ++i) {
    std::int64_t d = target[i];
    if (d == 0 && copy_zero) {
      if (i >= x.size()) return InvalidInput("reshape copies dim " + std::to_string(i) + " of a rank-" + std::to_string(x.size()) + " input");
      d = x[i];
    }
    if (d == -1) {
      if (infer >= 0) return InvalidInput("reshape target has more than one -1");
      infer = static_cast<int>(i);
    } else if (d < 0 || d > kMaxElements) {
      return InvalidInput("reshape target has dimension " + std::to_string(d));
    } else {
      known *= d;
      if (known > kMaxElements) return InvalidInput("reshape target is too large");
    }
    out.push_back(d);
  }
  if (infer >= 0) {
    if (known == 0 || *total % known != 0)
      return InvalidInput("cannot reshape " + ShapeToString(x) + " into " + ShapeToString(target));
    out[infer] = *total / known;
  } else if (known != *total) {
    return InvalidInput("cannot reshape " + ShapeToString(x) + " (" + std::to_string(*total) + " elements) into " +
                        ShapeToString(out));
  }
  return out;
}

Expected<std::vector<Shape>> Split(const Node& node, const Shape& x) {
  LATTE_ASSIGN_OR_RETURN(auto axis, Axis(node.attrs.GetInt("axis", 0), static_cast<std::int64_t>(x.size())));
  const auto parts = static_cast<std::int64_t>(node.outputs.size());
  if (parts == 0) return InvalidInput("split has no outputs");
  std::vector<std::int64_t> sizes;
  if (auto attr = node.attrs.GetInts("sizes"); attr && !attr->empty()) {
    sizes = *attr;
    if (static_cast<std::int64_t>(sizes.size()) != parts)
      return InvalidInput("split has " + std::to_string(sizes.size()) + " sizes for " + std::to_string(parts) + " outputs");
    std::int64_t sum = 0;
    for (auto s : sizes) {
      if (s < 0 || s > kMaxElements) return InvalidInput("split size " + std::to_string(s));
      sum += s;
    }
    if (sum != x[axis]) return InvalidInput("split sizes add up to " + std::to_string(sum) + ", the axis has " + std::to_string(x[axis]));
  } else {
    // Equal parts; ONNX gives the last part the remainder when it does not divide.
    const std::int64_t each = (x[axis] + parts - 1) / parts;
    for (std::int64_t i = 0; i < parts; ++i) sizes.push_back(std::min(each, std::max<std::int64_t>(x[axis] - i * each, 0)));
  }
  std::vector<Shape> out;
  for (auto s : sizes) {
    Shape o = x;
    o[axis] = s;
    out.push_back(o);
  }
  return out;
}

Expected<Shape> Slice(const Node& node, const Shape& x) {
  LATTE_ASSIGN_OR_RETURN(const std::vector<SliceAxis> axes, ResolveSlice(node, x));
  Shape out(x.size());
  for (size_t d = 0; d < x.size(); ++d) out[d] = axes[d].count;
  return out;
}

Expected<Shape> Resize(const Node& node, const Shape& x) {
  if (x.size() != 4) return InvalidInput("resize input must have rank 4, has " + ShapeToString(x));
  const bool nhwc = node.attrs.GetString("layout", "NHWC") == "NHWC";
  const size_t h = nhwc ? 1 : 2, w = nhwc ? 2 : 3;
  Shape out = x;
  if (auto sizes = node.attrs.GetInts("sizes"); sizes && !sizes->empty()) {
    if (sizes->size() == 2) out[h] = (*sizes)[0], out[w] = (*sizes)[1];
    else if (sizes->size() == 4) out = *sizes;
    else return InvalidInput("resize 'sizes' must have 2 or 4 values");
  } else if (auto scales = node.attrs.GetFloats("scales"); scales && !scales->empty()) {
    std::vector<double> s(4, 1.0);
    if (scales->size() == 2) s[h] = (*scales)[0], s[w] = (*scales)[1];
    else if (scales->size() == 4) s = *scales;
    else return InvalidInput("resize 'scales' must have 2 or 4 values");
    for (size_t i = 0; i < 4; ++i) {
      if (!(s[i] > 0) || s[i] > 1e6) return InvalidInput("resize scale " + std::to_string(s[i]));
      out[i] = static_cast<std::int64_t>(std::floor(static_cast<double>(x[i]) * s[i]));
    }
  } else {
    return InvalidInput("resize has neither 'sizes' nor 'scales'");
  }
  for (auto d : out)
    if (d < 1 || d > kMaxElements) return InvalidInput("resize output " + ShapeToString(out));
  return out;
}

Expected<Shape> DepthSpace(const Node& node, const Shape& x, bool to_space) {
  if (x.size() != 4) return InvalidInput("input must have rank 4, has " + ShapeToString(x));
  const std::int64_t b = node.attrs.GetInt("block_size", 0);
  if (b < 1 || b > 4096) return InvalidInput("block_size " + std::to_string(b));
  const bool nhwc = node.attrs.GetString("layout", "NHWC") == "NHWC";
  std::int64_t n = x[0], c = nhwc ? x[3] : x[1], h = nhwc ? x[1] : x[2], w = nhwc ? x[2] : x[3];
  if (to_space) {
    if (c % (b * b) != 0) return InvalidInput(std::to_string(c) + " channels not divisible by block_size² " + std::to_string(b * b));
    return Spatial(nhwc, n, c / (b * b), h * b, w * b);
  }
  if (h % b != 0 || w % b != 0) return InvalidInput("spatial dims not divisible by block_size " + std::to_string(b));
  return Spatial(nhwc, n, c * b * b, h / b, w / b);
}

Expected<Shape> MatMul(const Node& node, Shape a, Shape b) {
  if (a.empty() || b.empty()) return InvalidInput("matmul of a scalar");
  const bool a_vec = a.size() == 1, b_vec = b.size() == 1;
  if (a_vec) a.insert(a.begin(), 1);
  if (b_vec) b.push_back(1);
  if (node.attrs.GetInt("transpose_a", 0)) std::swap(a[a.size() - 1], a[a.size() - 2]);
  if (node.attrs.GetInt("transpose_b", 0)) std::swap(b[b.size() - 1], b[b.size() - 2]);
  if (a.back() != b[b.size() - 2])
    return InvalidInput("matmul inner dims differ: " + ShapeToString(a) + " × " + ShapeToString(b));
  LATTE_ASSIGN_OR_RETURN(Shape batch, BroadcastShapes(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2)));
  Shape out = batch;
  if (!a_vec) out.push_back(a[a.size() - 2]);
  if (!b_vec) out.push_back(b.back());
  return out;
}

Expected<std::vector<Shape>> InferKnown(const Graph& g, const Node& node) {
  using K = OpKind;
  auto one = [](Expected<Shape> s) -> Expected<std::vector<Shape>> {
    if (!s.ok()) return s.status();
    return std::vector<Shape>{*s};
  };
  LATTE_ASSIGN_OR_RETURN(Shape x, KnownInput(g, node, 0));
  const auto rank = static_cast<std::int64_t>(x.size());
  switch (node.kind) {
    case K::kConv2D: case K::kDepthwiseConv2D: case K::kTransposeConv2D: {
      LATTE_ASSIGN_OR_RETURN(ConvParams p, GetConvParams(g, node));
      return one(Spatial(p.nhwc, p.batch, p.out_c, p.out_h, p.out_w));
    }
    case K::kMaxPool2D: case K::kAvgPool2D: case K::kGlobalAvgPool: case K::kGlobalMaxPool: {
      LATTE_ASSIGN_OR_RETURN(PoolParams p, GetPoolParams(g, node));
      return one(Spatial(p.nhwc, p.batch, p.channels, p.out_h, p.out_w));
    }
    case K::kFullyConnected: {
      LATTE_ASSIGN_OR_RETURN(FullyConnectedParams p, GetFullyConnectedParams(g, node));
      const bool keep = node.attrs.GetString("weights_layout", "OI") == "IO" || node.attrs.GetInt("keep_num_dims", 0) != 0;
      if (!keep) return one(Shape{p.rows, p.out_features});
      if (x.empty() || x.back() != p.in_features)
        return InvalidInput("input " + ShapeToString(x) + " does not end in " + std::to_string(p.in_features) + " features");
      Shape out = x;
      out.back() = p.out_features;
      return one(out);
    }
    case K::kMatMul: {
      LATTE_ASSIGN_OR_RETURN(Shape b, KnownInput(g, node, 1));
      return one(MatMul(node, x, b));
    }
    case K::kAdd: case K::kSub: case K::kMul: case K::kDiv: case K::kPow: case K::kMaximum: case K::kMinimum:
    case K::kSquaredDifference: case K::kEqual: case K::kNotEqual: case K::kLess: case K::kLessEqual:
    case K::kGreater: case K::kGreaterEqual: case K::kLogicalAnd: case K::kLogicalOr: {
      LATTE_ASSIGN_OR_RETURN(Shape b, KnownInput(g, node, 1));
      return one(BroadcastShapes(x, b));
    }
    case K::kWhere: {
      LATTE_ASSIGN_OR_RETURN(Shape a, KnownInput(g, node, 1));
      LATTE_ASSIGN_OR_RETURN(Shape b, KnownInput(g, node, 2));
      LATTE_ASSIGN_OR_RETURN(Shape ab, BroadcastShapes(a, b));
      return one(BroadcastShapes(x, ab));
    }
    case K::kLayerNorm: {
      LATTE_RETURN_IF_ERROR(Axis(node.attrs.GetInt("axis", -1), rank));
      // scale and bias broadcast to the normalized dims (and so to x).
      for (size_t i = 1; i < 3; ++i) {
        if (node.input(i) == kNoTensor) continue;
        LATTE_ASSIGN_OR_RETURN(Shape p, KnownInput(g, node, i));
        auto out = BroadcastShapes(x, p);
        if (!out.ok() || *out != x) return InvalidInput("layer_norm " + std::string(i == 1 ? "scale " : "bias ") + ShapeToString(p) +
                                          " does not broadcast to " + ShapeToString(x));
      }
      return one(x);
    }
    case K::kArgMax: case K::kArgMin: {
      LATTE_ASSIGN_OR_RETURN(auto axis, Axis(node.attrs.GetInt("axis", 0), rank));
      Shape out;
      for (std::int64_t i = 0; i < rank; ++i) {
        if (i != axis) out.push_back(x[static_cast<size_t>(i)]);
        else if (node.attrs.GetInt("keepdims", 1) != 0) out.push_back(1);
      }
      return one(out);
    }
    case K::kPRelu: {
      LATTE_ASSIGN_OR_RETURN(Shape slope, KnownInput(g, node, 1));
      LATTE_ASSIGN_OR_RETURN(Shape out, BroadcastShapes(x, slope));
      if (out != x) return InvalidInput("prelu slope " + ShapeToString(slope) + " does not broadcast to " + ShapeToString(x));
      return one(x);
    }
    case K::kIdentity: case K::kCast: case K::kDequantize: case K::kQuantize:
      return one(x);
    case K::kOpaque:
      break;
    default:
      // Element by element (op_kinds.def's unary family): the input's shape. The ops of other
      // families each have their rule above.
      if (KernelFamilyOf(node.kind) == KernelFamily::kUnary) return one(x);
      break;
    case K::kSoftmax: case K::kLogSoftmax:
      LATTE_RETURN_IF_ERROR(Axis(node.attrs.GetInt("axis", -1), std::max<std::int64_t>(rank, 1)));
      return one(x);
    case K::kMean: case K::kReduceSum: case K::kReduceMax: case K::kReduceMin:
      return one(Reduce(node, x));
    case K::kReshape:
      return one(ReshapeTarget(g, node, x));
    case K::kFlatten: {
      std::int64_t axis = node.attrs.GetInt("axis", 1);
      if (axis < -rank || axis > rank) return InvalidInput("flatten axis " + std::to_string(axis) + " out of range");
      if (axis < 0) axis += rank;
      std::int64_t a = 1, b = 1;
      for (std::int64_t i = 0; i < rank; ++i) (i < axis ? a : b) *= x[i];
      return one(Shape{a, b});
    }
    case K::kSqueeze: {
      std::vector<bool> drop(x.size(), false);
      auto axes = node.attrs.GetInts("axes");
      if (!axes || axes->empty()) {
        for (size_t i = 0; i < x.size(); ++i) drop[i] = x[i] == 1;
      } else {
        for (auto a : *axes) {
          LATTE_ASSIGN_OR_RETURN(auto axis, Axis(a, rank));
          if (x[axis] != 1) return InvalidInput("cannot squeeze dim " + std::to_string(axis) + " of size " + std::to_string(x[axis]));
          drop[axis] = true;
        }
      }
      Shape out;
      for (size_t i = 0; i < x.size(); ++i)
        if (!drop[i]) out.push_back(x[i]);
      return one(out);
    }
    case K::kUnsqueeze: {
      auto axes = node.attrs.GetInts("axes");
      if (!axes || axes->empty()) return InvalidInput("unsqueeze has no 'axes'");
      const auto out_rank = rank + static_cast<std::int64_t>(axes->size());
      if (out_rank > 64) return InvalidInput("unsqueeze to rank " + std::to_string(out_rank));
      std::vector<bool> inserted(out_rank, false);
      for (auto a : *axes) {
        LATTE_ASSIGN_OR_RETURN(auto axis, Axis(a, out_rank));
        if (inserted[axis]) return InvalidInput("unsqueeze axis " + std::to_string(a) + " repeated");
        inserted[axis] = true;
      }
      Shape out;
      size_t next = 0;
      for (std::int64_t i = 0; i < out_rank; ++i) out.push_back(inserted[i] ? 1 : x[next++]);
      return one(out);
    }
    case K::kTranspose: {
      std::vector<std::int64_t> perm(x.size());
      if (auto p = node.attrs.GetInts("perm"); p && !p->empty()) perm = *p;
      else for (size_t i = 0; i < x.size(); ++i) perm[i] = rank - 1 - static_cast<std::int64_t>(i);
      if (perm.size() != x.size()) return InvalidInput("transpose perm has " + std::to_string(perm.size()) + " values for rank " + std::to_string(rank));
      std::vector<bool> seen(x.size(), false);
      Shape out;
      for (auto p : perm) {
        LATTE_ASSIGN_OR_RETURN(auto axis, Axis(p, rank));
        if (seen[axis]) return InvalidInput("transpose perm repeats axis " + std::to_string(axis));
        seen[axis] = true;
        out.push_back(x[axis]);
      }
      return one(out);
    }
    case K::kConcat: {
      LATTE_ASSIGN_OR_RETURN(auto axis, Axis(node.attrs.GetInt("axis", 0), rank));
      Shape out = x;
      for (size_t i = 1; i < node.inputs.size(); ++i) {
        LATTE_ASSIGN_OR_RETURN(Shape y, KnownInput(g, node, i));
        if (y.size() != x.size()) return InvalidInput("concat inputs have ranks " + std::to_string(x.size()) + " and " + std::to_string(y.size()));
        for (size_t d = 0; d < x.size(); ++d)
          if (static_cast<std::int64_t>(d) != axis && y[d] != x[d])
            return InvalidInput("concat inputs " + ShapeToString(x) + " and " + ShapeToString(y) + " differ off axis " + std::to_string(axis));
        out[axis] += y[axis];
      }
      return one(out);
    }
    case K::kSplit:
      return Split(node, x);
    case K::kSlice:
      return one(Slice(node, x));
    case K::kPad: {
      auto pads = node.attrs.GetInts("pads");
      if (!pads || pads->size() != 2 * x.size())
        return InvalidInput("pad needs " + std::to_string(2 * x.size()) + " 'pads' values");
      Shape out = x;
      for (size_t i = 0; i < x.size(); ++i) {
        const std::int64_t b = (*pads)[i], e = (*pads)[i + x.size()];
        if (std::abs(b) > kMaxElements || std::abs(e) > kMaxElements) return InvalidInput("pad of " + std::to_string(std::max(b, e)));
        out[i] = x[i] + b + e;
        if (out[i] < 0) return InvalidInput("padding makes dim " + std::to_string(i) + " negative");
      }
      return one(out);
    }
    case K::kGather: {
      LATTE_ASSIGN_OR_RETURN(Shape idx, KnownInput(g, node, 1));
      LATTE_ASSIGN_OR_RETURN(auto axis, Axis(node.attrs.GetInt("axis", 0), rank));
      Shape out(x.begin(), x.begin() + axis);
      out.insert(out.end(), idx.begin(), idx.end());
      out.insert(out.end(), x.begin() + axis + 1, x.end());
      return one(out);
    }
    case K::kResize:
      return one(Resize(node, x));
    case K::kDepthToSpace:
      return one(DepthSpace(node, x, true));
    case K::kSpaceToDepth:
      return one(DepthSpace(node, x, false));
  }
  return Unsupported("no shape rule for " + std::string(OpName(node.kind)));
}

}  // namespace

Expected<std::vector<Shape>> InferNodeShapes(const Graph& graph, NodeId id) {
  const Node& node = graph.node(id);
  if (node.kind == OpKind::kOpaque)
    return Unsupported(node.unsupported_reason.empty() ? "op '" + node.source_op + "' is not known to Latte"
                                                       : node.unsupported_reason);
  auto shapes = InferKnown(graph, node);
  if (!shapes.ok()) return shapes.status().WithContext(DescribeNode(graph, id));
  if (shapes->size() != node.outputs.size())
    return InvalidInput(DescribeNode(graph, id) + ": has " + std::to_string(node.outputs.size()) + " outputs, expected " +
                        std::to_string(shapes->size()));
  for (const Shape& s : *shapes) {
    auto n = ShapeElements(s);
    if (!n || *n > kMaxElements)
      return InvalidInput(DescribeNode(graph, id) + ": output shape " + ShapeToString(s) + " is too large");
  }
  return shapes;
}

Status InferShapes(Graph& graph) {
  // Tensors downstream of an opaque node (whose shapes only the file can tell).
  std::vector<bool> from_opaque(graph.num_tensors(), false);
  for (const Node& node : graph.nodes())
    if (node.kind == OpKind::kOpaque)
      for (TensorId t : node.outputs) from_opaque[t] = true;
  for (NodeId id = 0; id < static_cast<NodeId>(graph.num_nodes()); ++id) {
    const Node& node = graph.node(id);
    if (node.kind == OpKind::kOpaque) continue;  // keeps the file's shapes
    // Downstream of an opaque op whose output shape the file did not give, nothing can be
    // inferred: keep what the file declared; cost and reports then say the shape is unknown.
    bool inputs_known = true;
    for (TensorId t : node.inputs)
      if (t != kNoTensor && !graph.tensor(t).fully_known() && from_opaque[t]) inputs_known = false;
    if (!inputs_known) {
      for (TensorId t : node.outputs) from_opaque[t] = true;
      continue;
    }
    LATTE_ASSIGN_OR_RETURN(std::vector<Shape> shapes, InferNodeShapes(graph, id));
    // Outputs have the data input's dtype (where's: x, its input 1), unless the kind fixes theirs.
    const size_t data_input = node.kind == OpKind::kWhere ? 1 : 0;
    const DataType in_type = node.input(data_input) == kNoTensor ? DataType::kUnknown : graph.tensor(node.inputs[data_input]).dtype;
    const DataType fixed_type = FixedOutputType(node.kind);
    for (size_t i = 0; i < shapes.size(); ++i) {
      Tensor& out = graph.mutable_tensor(node.outputs[i]);
      if (out.fully_known() && out.shape != shapes[i])
        return InvalidInput(DescribeNode(graph, id) + ": output '" + out.name + "' is declared " + ShapeToString(out.shape) +
                            " but its inputs give " + ShapeToString(shapes[i]));
      out.shape = shapes[i];
      out.shape_known = true;
      // A cast writes its "to"; comparisons write bool whatever a file declared; an argmax's index
      // type may be the file's.
      const std::optional<DataType> cast_to =
          node.kind == OpKind::kCast ? DataTypeFromName(node.attrs.GetString("to", "")) : std::nullopt;
      if (cast_to)
        out.dtype = *cast_to;
      else if (fixed_type == DataType::kBool || (out.dtype == DataType::kUnknown && fixed_type != DataType::kUnknown))
        out.dtype = fixed_type;
      else if (out.dtype == DataType::kUnknown) out.dtype = in_type;
    }
  }
  return Status::Ok();
}

Expected<Shape> BroadcastShapes(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()));
  for (size_t i = 0; i < out.size(); ++i) {
    std::int64_t da = i < out.size() - a.size() ? 1 : a[i - (out.size() - a.size())];
    std::int64_t db = i < out.size() - b.size() ? 1 : b[i - (out.size() - b.size())];
    if (da != db && da != 1 && db != 1)
      return InvalidInput("shapes " + ShapeToString(a) + " and " + ShapeToString(b) + " do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

}  // namespace latte
