#include "ir/layout.h"

#include <array>
#include <cstring>
#include <map>
#include <set>
#include <memory>
#include <string>
#include <vector>

#include "ir/shape_inference.h"

namespace latte {
namespace {

constexpr std::array<std::int64_t, 4> kToNhwc = {0, 2, 3, 1};  // NCHW → NHWC
constexpr std::array<std::int64_t, 4> kToNchw = {0, 3, 1, 2};  // NHWC → NCHW

bool IsSpatial(OpKind kind) {
  switch (kind) {
    case OpKind::kConv2D: case OpKind::kDepthwiseConv2D: case OpKind::kTransposeConv2D:
    case OpKind::kMaxPool2D: case OpKind::kAvgPool2D: case OpKind::kGlobalAvgPool:
    case OpKind::kGlobalMaxPool: case OpKind::kBatchNorm: case OpKind::kResize:
    case OpKind::kDepthToSpace: case OpKind::kSpaceToDepth:
      return true;
    default:
      return false;
  }
}

// Element by element (op_kinds.def's unary family, identity, cast): with one input, layout does
// not matter (prelu's slope and batch_norm's parameters are per channel: their second input, or
// their layout attribute, sends them elsewhere).
bool IsUnary(OpKind kind) {
  return KernelFamilyOf(kind) == KernelFamily::kUnary || kind == OpKind::kIdentity || kind == OpKind::kCast;
}

bool IsRank4(const Tensor& t) { return t.shape_known && t.shape.size() == 4; }

// Permutes constant data: out dim k is in dim perm[k]. Element size from the dtype.
Expected<Tensor> PermuteConstant(const Tensor& in, const std::array<std::int64_t, 4>& perm, const std::string& name) {
  const size_t elem = DataTypeSize(in.dtype);
  if (!IsRank4(in) || !in.fully_known() || elem == 0 || !in.data) {
    return Unsupported("constant '" + in.name + "' is not a known rank-4 tensor");
  }
  const Shape& s = in.shape;
  Shape out_shape(4);
  for (size_t k = 0; k < 4; ++k) out_shape[k] = s[static_cast<size_t>(perm[k])];
  std::array<std::int64_t, 4> in_strides{};
  in_strides[3] = 1;
  for (int d = 2; d >= 0; --d) in_strides[static_cast<size_t>(d)] = in_strides[static_cast<size_t>(d) + 1] * s[static_cast<size_t>(d) + 1];
  auto data = std::make_shared<std::vector<std::uint8_t>>(in.data->size());
  size_t o = 0;
  for (std::int64_t a = 0; a < out_shape[0]; ++a)
    for (std::int64_t b = 0; b < out_shape[1]; ++b)
      for (std::int64_t c = 0; c < out_shape[2]; ++c)
        for (std::int64_t d = 0; d < out_shape[3]; ++d) {
          const std::array<std::int64_t, 4> idx = {a, b, c, d};
          std::int64_t src = 0;
          for (size_t k = 0; k < 4; ++k) src += idx[k] * in_strides[static_cast<size_t>(perm[k])];
          std::memcpy(data->data() + o * elem, in.data->data() + static_cast<size_t>(src) * elem, elem);
          ++o;
        }
  Tensor out = in;
  out.name = name;
  out.shape = out_shape;
  out.data = std::move(data);
  if (in.quant.scale.size() > 1) {  // per-channel axis follows its dimension
    for (size_t k = 0; k < 4; ++k)
      if (perm[k] == in.quant.axis) out.quant.axis = static_cast<std::int32_t>(k);
  }
  return out;
}

class Converter {
 public:
  Converter(const Graph& src, const LayoutOptions& options) : src_(src), options_(options) {
    out_.name = src.name;
    out_.source_format = src.source_format;
    out_.inputs = src.inputs;
    out_.outputs = src.outputs;
    for (const Tensor& t : src.tensors()) out_.AddTensor(t);  // same ids as the source
  }

  Expected<Graph> Run() {
    for (NodeId id = 0; id < static_cast<NodeId>(src_.num_nodes()); ++id) {
      LATTE_RETURN_IF_ERROR(ConvertNode(id));
    }
    for (TensorId t : out_.outputs) EnsureNchw(t);
    if (!options_.keep_tensor_ids) out_.RemoveUnused();
    LATTE_RETURN_IF_ERROR(out_.Validate());
    LATTE_RETURN_IF_ERROR(out_.SortTopologically());
    LATTE_RETURN_IF_ERROR(InferShapes(out_));
    if (out_.outputs.size() != src_.outputs.size()) return Internal("layout conversion changed the graph outputs");
    for (size_t i = 0; i < out_.outputs.size(); ++i) {
      const Tensor& a = src_.tensor(src_.outputs[i]);
      const Tensor& b = out_.tensor(out_.outputs[i]);
      if (a.shape_known && (a.shape != b.shape || !b.shape_known)) {
        return Internal("layout conversion changed the shape of output '" + a.name + "' from " +
                        ShapeToString(a.shape) + " to " + ShapeToString(b.shape, b.shape_known));
      }
    }
    return std::move(out_);
  }

 private:
  TensorId AddActivation(const Tensor& like, const std::string& name) {
    Tensor t;
    t.name = name;
    t.dtype = like.dtype;
    t.quant = like.quant;
    if (like.quant.scale.size() > 1) t.quant.axis = like.quant.axis == 1 ? 3 : like.quant.axis;
    return out_.AddTensor(std::move(t));
  }

  void AddTranspose(const std::string& name, TensorId in, TensorId out, const std::array<std::int64_t, 4>& perm) {
    Node n;
    n.kind = OpKind::kTranspose;
    n.name = name;
    n.source_op = "Transpose";
    n.attrs.Set("perm", std::vector<std::int64_t>(perm.begin(), perm.end()));
    n.inputs = {in};
    n.outputs = {out};
    out_.AddNode(std::move(n));
  }

  // The NHWC version of NCHW tensor `t` (rank 4), adding a transpose the first time.
  TensorId Nhwc(TensorId t) {
    auto it = nhwc_.find(t);
    if (it != nhwc_.end()) return it->second;
    const Tensor src = out_.tensor(t);  // a copy: AddTensor may reallocate
    const TensorId id = AddActivation(src, src.name + ":nhwc");
    AddTranspose(src.name + ":to_nhwc", t, id, kToNhwc);
    nhwc_[t] = id;
    return id;
  }

  // Makes the original (NCHW) tensor `t` available: if only its NHWC version is produced,
  // adds the transpose back into the original tensor id (so its name and shape are kept).
  void EnsureNchw(TensorId t) {
    if (t == kNoTensor || !nhwc_only_.count(t)) return;
    nhwc_only_.erase(t);
    AddTranspose(out_.tensor(t).name + ":to_nchw", nhwc_.at(t), t, kToNchw);
  }

  bool Converted(TensorId t) const { return t != kNoTensor && nhwc_.count(t) != 0; }

  // Emits `node` unchanged in layout: every converted input is read in NCHW.
  void KeepNchw(Node node) {
    for (TensorId t : node.inputs) EnsureNchw(t);
    out_.AddNode(std::move(node));
  }

  // Emits `node` with its outputs in NHWC (new tensors "<name>:nhwc").
  void EmitNhwc(Node node) {
    for (TensorId& o : node.outputs) {
      const TensorId id = AddActivation(out_.tensor(o), out_.tensor(o).name + ":nhwc");
      nhwc_[o] = id;
      nhwc_only_.insert(o);
      o = id;
    }
    out_.AddNode(std::move(node));
  }

  Status ConvertWeights(const Node& src_node, NodeId id, Node& node) {
    const TensorId w = node.input(1);
    if (w == kNoTensor || !out_.tensor(w).is_constant()) {
      return Unsupported(DescribeNode(src_, id) + ": weights are not a constant, cannot convert to NHWC");
    }
    const std::string layout = src_node.attrs.GetString("filter_layout", "");
    std::array<std::int64_t, 4> perm{};
    std::string want;
    if (node.kind == OpKind::kConv2D && layout == "OIHW") {
      perm = {0, 2, 3, 1};
      want = "OHWI";
    } else if (node.kind == OpKind::kDepthwiseConv2D && layout == "OIHW") {
      perm = {1, 2, 3, 0};  // [C*M, 1, kh, kw] → [1, kh, kw, C*M]
      want = "1HWO";
    } else if (node.kind == OpKind::kTransposeConv2D && layout == "IOHW") {
      if (src_node.attrs.GetInt("groups", 1) != 1) {
        return Unsupported(DescribeNode(src_, id) + ": grouped transpose_conv2d cannot be converted to NHWC");
      }
      perm = {1, 2, 3, 0};  // [Cin, Cout, kh, kw] → [Cout, kh, kw, Cin]
      want = "OHWI";
    } else if ((layout == "OHWI" && node.kind != OpKind::kDepthwiseConv2D) ||
               (layout == "1HWO" && node.kind == OpKind::kDepthwiseConv2D)) {
      return Status::Ok();  // already in the NHWC form
    } else {
      return Unsupported(DescribeNode(src_, id) + ": filter_layout '" + layout + "' cannot be converted to NHWC");
    }
    auto t = PermuteConstant(out_.tensor(w), perm, out_.tensor(w).name + ":" + want);
    if (!t.ok()) return t.status().WithContext(DescribeNode(src_, id));
    node.inputs[1] = out_.AddTensor(std::move(t).value());
    node.attrs.Set("filter_layout", want);
    return Status::Ok();
  }

  // A constant operand of a binary op with a converted rank-4 input: the NHWC equivalent,
  // or kNoTensor when its broadcast cannot be expressed in NHWC.
  TensorId BroadcastConstant(TensorId c) {
    const Tensor& t = out_.tensor(c);
    if (!t.shape_known) return kNoTensor;
    const Shape& s = t.shape;
    auto all_ones = [](const Shape& v) {
      for (auto d : v) if (d != 1) return false;
      return true;
    };
    if (all_ones(s)) return c;  // a scalar broadcasts the same in any layout
    Shape ch;  // the channel count if s is [C,1,1] or [1,C,1,1]
    if (s.size() == 3 && s[1] == 1 && s[2] == 1) ch = {s[0]};
    if (s.size() == 4 && s[0] == 1 && s[2] == 1 && s[3] == 1) ch = {s[1]};
    if (ch.empty()) return kNoTensor;
    Tensor n = t;  // one non-1 dim: the data order is unchanged
    n.name = t.name + ":nhwc";
    n.shape = s.size() == 3 ? Shape{1, 1, ch[0]} : Shape{1, 1, 1, ch[0]};
    return out_.AddTensor(std::move(n));
  }

  // Rewrites the axis attributes of a single-input op whose rank-4 input becomes NHWC and
  // whose outputs stay rank 4; false (node untouched) when the op has no such NHWC form.
  static bool RemapAxes(Node& node) {
    auto map = [](std::int64_t a) -> std::int64_t {
      if (a < 0) a += 4;
      return a >= 0 && a < 4 ? kToNchw[static_cast<size_t>(a)] : -1;  // NCHW axis → NHWC axis
    };
    auto map_all = [&](const std::vector<std::int64_t>& axes, std::vector<std::int64_t>& out) {
      out.clear();
      for (auto a : axes) {
        if (map(a) < 0) return false;
        out.push_back(map(a));
      }
      return true;
    };
    std::vector<std::int64_t> mapped;
    switch (node.kind) {
      case OpKind::kMean: case OpKind::kReduceSum: case OpKind::kReduceMax: case OpKind::kReduceMin: {
        if (node.attrs.GetInt("keepdims", 1) != 1) return false;  // the rank would change
        auto axes = node.attrs.GetInts("axes");
        if (!axes || axes->empty()) return true;  // all axes, in any layout
        if (!map_all(*axes, mapped)) return false;
        node.attrs.Set("axes", mapped);
        return true;
      }
      case OpKind::kSoftmax: case OpKind::kLogSoftmax: {
        if (node.attrs.GetInt("coerce_2d", 0) != 0) return false;  // flattened rows differ in NHWC
        const std::int64_t a = map(node.attrs.GetInt("axis", -1));
        if (a < 0) return false;
        node.attrs.Set("axis", a);
        return true;
      }
      case OpKind::kSplit: {
        const std::int64_t a = map(node.attrs.GetInt("axis", 0));
        if (a < 0) return false;
        node.attrs.Set("axis", a);
        return true;
      }
      case OpKind::kPad: {
        auto pads = node.attrs.GetInts("pads");
        if (!pads || pads->size() != 8) return false;
        std::vector<std::int64_t> p(8);
        for (size_t k = 0; k < 4; ++k) {
          p[k] = (*pads)[static_cast<size_t>(kToNhwc[k])];
          p[k + 4] = (*pads)[static_cast<size_t>(kToNhwc[k]) + 4];
        }
        node.attrs.Set("pads", p);
        return true;
      }
      case OpKind::kSlice: {
        if (!node.attrs.GetInts("starts") || !node.attrs.GetInts("ends")) return false;
        std::vector<std::int64_t> axes = node.attrs.GetInts("axes").value_or(std::vector<std::int64_t>{});
        if (!node.attrs.GetInts("axes")) {
          for (std::int64_t a = 0; a < static_cast<std::int64_t>(node.attrs.GetInts("starts")->size()); ++a) axes.push_back(a);
        }
        if (!map_all(axes, mapped)) return false;
        node.attrs.Set("axes", mapped);
        return true;
      }
      default:
        return false;
    }
  }

  Status ConvertNode(NodeId id) {
    const Node& src_node = src_.node(id);
    Node node = src_node;
    const TensorId x = node.input(0);
    const bool x4 = x != kNoTensor && IsRank4(src_.tensor(x));
    if (options_.keep_nchw && options_.keep_nchw(src_node)) {
      KeepNchw(std::move(node));
      return Status::Ok();
    }

    if (IsSpatial(node.kind) && node.attrs.GetString("layout", "NHWC") == "NCHW" && x4) {
      node.inputs[0] = Converted(x) ? nhwc_.at(x) : Nhwc(x);
      node.attrs.Set("layout", "NHWC");
      if (node.kind == OpKind::kConv2D || node.kind == OpKind::kDepthwiseConv2D ||
          node.kind == OpKind::kTransposeConv2D) {
        LATTE_RETURN_IF_ERROR(ConvertWeights(src_node, id, node));
      }
      if (node.kind == OpKind::kResize) {
        for (const char* key : {"sizes", "scales"}) {
          if (auto v = node.attrs.GetFloats(key); v && v->size() == 4) {
            std::vector<double> p(4);
            for (size_t k = 0; k < 4; ++k) p[k] = (*v)[static_cast<size_t>(kToNhwc[k])];
            if (node.attrs.GetInts(key)) {
              node.attrs.Set(key, std::vector<std::int64_t>(p.begin(), p.end()));
            } else {
              node.attrs.Set(key, p);
            }
          }
        }
      }
      if (node.kind == OpKind::kTransposeConv2D && node.attrs.GetInts("output_shape")) {
        auto s = *node.attrs.GetInts("output_shape");
        if (s.size() == 4) node.attrs.Set("output_shape", std::vector<std::int64_t>{s[0], s[2], s[3], s[1]});
      }
      EmitNhwc(std::move(node));
      return Status::Ok();
    }
    if (IsSpatial(node.kind) && node.attrs.GetString("layout", "NHWC") == "NCHW") {
      return Unsupported(DescribeNode(src_, id) + ": NCHW input is not a known rank-4 tensor");
    }

    if (IsUnary(node.kind) && node.inputs.size() == 1 && node.outputs.size() == 1 && Converted(x)) {
      node.inputs[0] = nhwc_.at(x);
      EmitNhwc(std::move(node));
      return Status::Ok();
    }

    if (IsBinaryElementwise(node.kind) && node.inputs.size() == 2 && (Converted(node.inputs[0]) || Converted(node.inputs[1]))) {
      std::vector<TensorId> ins(2);
      bool ok = true;
      for (size_t i = 0; i < 2 && ok; ++i) {
        const TensorId t = node.inputs[i];
        if (Converted(t)) {
          ins[i] = nhwc_.at(t);
        } else if (out_.tensor(t).is_constant()) {
          ins[i] = BroadcastConstant(t);
          ok = ins[i] != kNoTensor;
        } else {
          ok = false;  // an NCHW activation of its own: compute this op in NCHW
        }
      }
      // Both converted operands must be rank 4 for NHWC broadcasting to match.
      for (size_t i = 0; i < 2 && ok; ++i) {
        if (Converted(node.inputs[i]) && !IsRank4(src_.tensor(node.inputs[i]))) ok = false;
      }
      if (ok) {
        node.inputs = ins;
        EmitNhwc(std::move(node));
        return Status::Ok();
      }
    }

    if (node.kind == OpKind::kConcat && !node.inputs.empty()) {
      bool any = false, all4 = true;
      for (TensorId t : node.inputs) {
        any = any || Converted(t);
        all4 = all4 && t != kNoTensor && IsRank4(src_.tensor(t)) && !src_.tensor(t).is_constant();
      }
      if (any && all4) {
        std::int64_t axis = node.attrs.GetInt("axis", 0);
        if (axis < 0) axis += 4;
        if (axis >= 0 && axis < 4) {
          for (TensorId& t : node.inputs) t = Converted(t) ? nhwc_.at(t) : Nhwc(t);
          node.attrs.Set("axis", kToNchw[static_cast<size_t>(axis)]);  // NCHW axis a is NHWC axis inv[a]
          EmitNhwc(std::move(node));
          return Status::Ok();
        }
      }
    }

    if (Converted(x) && node.inputs.size() == 1 && RemapAxes(node)) {
      node.inputs[0] = nhwc_.at(x);
      EmitNhwc(std::move(node));
      return Status::Ok();
    }

    KeepNchw(std::move(node));  // exact, if not fast: converted inputs go back to NCHW
    return Status::Ok();
  }

  const Graph& src_;
  const LayoutOptions& options_;
  Graph out_;
  std::map<TensorId, TensorId> nhwc_;  // source tensor id → its NHWC tensor id
  std::set<TensorId> nhwc_only_;       // converted tensors whose NCHW form is not yet produced
};

}  // namespace

Expected<Graph> ConvertToNhwc(const Graph& graph, const LayoutOptions& options) {
  LATTE_RETURN_IF_ERROR(graph.Validate());
  Graph sorted = graph;
  LATTE_RETURN_IF_ERROR(sorted.SortTopologically());
  return Converter(sorted, options).Run();
}

}  // namespace latte
