#include "import/onnx/onnx_node_mapper.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "import/onnx/onnx_attributes.h"
#include "import/onnx/onnx_one_to_one.h"
#include "import/onnx/onnx_tensor.h"
#include "ir/op_params.h"

namespace latte::onnx_import {
namespace {

using Ints = std::vector<std::int64_t>;
using Floats = std::vector<double>;

constexpr std::int64_t kMaxDim = std::int64_t{1} << 40;  // beyond any real tensor; stops overflow

// One node being mapped. A mapping function fills `node` (and `extra`), or returns
// Unsupported with the reason the node stays opaque; it changes the graph only once it
// knows it succeeds.
class Mapper {
 public:
  Mapper(ImportState& state, const onnx::NodeProto& proto) : attrs(proto), state_(state), proto_(proto) {}

  const std::string& op() const { return proto_.op_type(); }
  std::int64_t opset() const { return state_.opset; }
  const onnx::NodeProto& proto() const { return proto_; }
  Graph& graph() { return state_.graph; }

  /// Tensor of input `i`, or kNoTensor when absent (past the end or an empty name).
  TensorId In(size_t i) const {
    if (i >= static_cast<size_t>(proto_.input_size()) || proto_.input(static_cast<int>(i)).empty()) return kNoTensor;
    auto it = state_.values.find(proto_.input(static_cast<int>(i)));
    return it == state_.values.end() ? kNoTensor : it->second;
  }
  bool Present(size_t i) const { return In(i) != kNoTensor; }
  const Tensor& T(TensorId id) const { return state_.graph.tensor(id); }
  /// Input `i` when it is present and a constant, else null.
  const Tensor* Const(size_t i) const {
    TensorId id = In(i);
    return id != kNoTensor && T(id).is_constant() ? &T(id) : nullptr;
  }
  /// Rank of input `i`, or -1 when absent or unknown.
  int Rank(size_t i) const {
    TensorId id = In(i);
    return id != kNoTensor && T(id).shape_known ? static_cast<int>(T(id).shape.size()) : -1;
  }
  /// Tensor of output `i`, or kNoTensor when absent.
  TensorId Out(size_t i) const {
    if (i >= static_cast<size_t>(proto_.output_size()) || proto_.output(static_cast<int>(i)).empty()) return kNoTensor;
    auto it = state_.values.find(proto_.output(static_cast<int>(i)));
    return it == state_.values.end() ? kNoTensor : it->second;
  }

  /// The first `n` inputs must be present.
  Status Require(size_t n) const {
    for (size_t i = 0; i < n; ++i)
      if (!Present(i))
        return InvalidInput(op() + " needs " + std::to_string(n) + " inputs; input " + std::to_string(i) + " is missing");
    return Status::Ok();
  }
  Status NonConstant(const std::string& what) const { return Unsupported(op() + " with non-constant '" + what + "'"); }

  /// Constant integer input `i`: nullopt when absent; unsupported when computed at run time.
  Expected<std::optional<Ints>> ConstInts(size_t i, const std::string& what) const {
    if (!Present(i)) return std::optional<Ints>();
    const Tensor* t = Const(i);
    if (!t) return NonConstant(what);
    auto values = ReadInts(*t);
    if (!values.ok()) return InvalidInput("input '" + what + "': " + values.status().message());
    return std::optional<Ints>(std::move(*values));
  }
  Expected<std::optional<Floats>> ConstFloats(size_t i, const std::string& what) const {
    if (!Present(i)) return std::optional<Floats>();
    const Tensor* t = Const(i);
    if (!t) return NonConstant(what);
    auto values = ReadDoubles(*t);
    if (!values.ok()) return InvalidInput("input '" + what + "': " + values.status().message());
    return std::optional<Floats>(std::move(*values));
  }
  /// A constant scalar input (an empty tensor reads as absent).
  Expected<std::optional<double>> ConstScalar(size_t i, const std::string& what) const {
    LATTE_ASSIGN_OR_RETURN(std::optional<Floats> values, ConstFloats(i, what));
    if (!values || values->empty()) return std::optional<double>();
    if (values->size() != 1)
      return InvalidInput("input '" + what + "' has " + std::to_string(values->size()) + " values, expected 1");
    return std::optional<double>((*values)[0]);
  }

  /// Makes the node read its inputs 0..n-1 (absent optional ones at the end are dropped).
  void TakeInputs(size_t n) {
    node.inputs.clear();
    for (size_t i = 0; i < n; ++i) node.inputs.push_back(In(i));
    while (!node.inputs.empty() && node.inputs.back() == kNoTensor) node.inputs.pop_back();
  }

  Node node;
  std::vector<Node> extra;  // nodes that follow `node` (a Gemm's bias add)
  NodeAttributes attrs;

 private:
  ImportState& state_;
  const onnx::NodeProto& proto_;
};

// --- shared attribute groups -------------------------------------------------------------

// A two-value attribute of a 2-D window ("strides", "dilations") with a default.
Expected<Ints> Pair(const Mapper& m, const char* name, std::int64_t fallback, std::int64_t min) {
  LATTE_ASSIGN_OR_RETURN(std::optional<Ints> v, m.attrs.Ints(name));
  if (!v) return Ints{fallback, fallback};
  if (v->size() != 2)
    return InvalidInput("attribute '" + std::string(name) + "' has " + std::to_string(v->size()) + " values, expected 2");
  for (auto x : *v)
    if (x < min) return InvalidInput("attribute '" + std::string(name) + "' has value " + std::to_string(x));
  return *v;
}

// ONNX auto_pad / pads → Latte "padding" (+ "pads" [top, left, bottom, right], which is
// also ONNX's order for two spatial dims: x1_begin, x2_begin, x1_end, x2_end).
Status SetPadding(Mapper& m) {
  LATTE_ASSIGN_OR_RETURN(std::string auto_pad, m.attrs.String("auto_pad", "NOTSET"));
  Attributes& a = m.node.attrs;
  if (auto_pad == "NOTSET" || auto_pad.empty()) {
    LATTE_ASSIGN_OR_RETURN(std::optional<Ints> pads, m.attrs.Ints("pads"));
    Ints p = pads.value_or(Ints{0, 0, 0, 0});
    if (p.size() != 4) return InvalidInput("attribute 'pads' has " + std::to_string(p.size()) + " values, expected 4");
    for (auto v : p)
      if (v < 0) return InvalidInput("attribute 'pads' has negative value " + std::to_string(v));
    a.Set("padding", std::string("explicit"));
    a.Set("pads", p);
  } else if (auto_pad == "SAME_UPPER") {
    a.Set("padding", std::string("same"));
  } else if (auto_pad == "SAME_LOWER") {
    a.Set("padding", std::string("same_lower"));
  } else if (auto_pad == "VALID") {
    a.Set("padding", std::string("valid"));
  } else {
    return InvalidInput("unknown auto_pad '" + auto_pad + "'");
  }
  return Status::Ok();
}

// Spatial dims of a conv: from kernel_shape, else the weights' rank, else the input's.
Expected<int> ConvSpatialDims(const Mapper& m) {
  LATTE_ASSIGN_OR_RETURN(std::optional<Ints> kernel, m.attrs.Ints("kernel_shape"));
  if (kernel) return static_cast<int>(kernel->size());
  if (m.Rank(1) >= 0) return m.Rank(1) - 2;
  if (m.Rank(0) >= 0) return m.Rank(0) - 2;
  return 2;  // unknown: the common case
}

Status Check2D(const Mapper& m, int spatial) {
  if (spatial != 2)
    return Unsupported(m.op() + " over " + std::to_string(spatial) + " spatial dims (Latte handles 2-D)");
  return Status::Ok();
}

// --- compute -----------------------------------------------------------------------------

// What Conv and ConvTranspose share: two inputs at least, 2-D, NCHW with `filter_layout`, strides,
// dilations and padding. Returns the group count.
Expected<std::int64_t> MapConvGeometry(Mapper& m, const char* filter_layout) {
  LATTE_RETURN_IF_ERROR(m.Require(2));
  LATTE_ASSIGN_OR_RETURN(int spatial, ConvSpatialDims(m));
  LATTE_RETURN_IF_ERROR(Check2D(m, spatial));
  LATTE_ASSIGN_OR_RETURN(std::int64_t group, m.attrs.Int("group", 1));
  if (group < 1) return InvalidInput("attribute 'group' is " + std::to_string(group) + ", must be ≥ 1");
  Attributes& a = m.node.attrs;
  a.Set("layout", std::string("NCHW"));
  a.Set("filter_layout", std::string(filter_layout));
  LATTE_ASSIGN_OR_RETURN(Ints strides, Pair(m, "strides", 1, 1));
  LATTE_ASSIGN_OR_RETURN(Ints dilations, Pair(m, "dilations", 1, 1));
  a.Set("strides", strides);
  a.Set("dilations", dilations);
  LATTE_RETURN_IF_ERROR(SetPadding(m));
  return group;
}

Status MapConv(Mapper& m) {
  LATTE_ASSIGN_OR_RETURN(std::int64_t group, MapConvGeometry(m, "OIHW"));
  Attributes& a = m.node.attrs;
  // group == input channels with one input channel per group: depthwise. (ONNX: C_in =
  // group × W.shape[1], so W.shape[1] == 1 says exactly that.)
  const Tensor& w = m.T(m.In(1));
  const bool depthwise = group > 1 && w.fully_known() && w.shape.size() == 4 && w.shape[1] == 1 && w.shape[0] % group == 0;
  a.Set("groups", group);
  if (depthwise) {
    m.node.kind = OpKind::kDepthwiseConv2D;
    a.Set("depth_multiplier", w.shape[0] / group);
  } else {
    m.node.kind = OpKind::kConv2D;
  }
  m.TakeInputs(3);
  return Status::Ok();
}

Status MapConvTranspose(Mapper& m) {
  LATTE_ASSIGN_OR_RETURN(std::int64_t group, MapConvGeometry(m, "IOHW"));
  Attributes& a = m.node.attrs;
  a.Set("groups", group);
  if (m.attrs.Has("output_padding")) {
    LATTE_ASSIGN_OR_RETURN(Ints output_padding, Pair(m, "output_padding", 0, 0));
    a.Set("output_padding", output_padding);
  }
  LATTE_ASSIGN_OR_RETURN(std::optional<Ints> output_shape, m.attrs.Ints("output_shape"));
  if (output_shape) {
    // ONNX gives the spatial dims; Latte wants the whole output shape.
    Ints full;
    if (output_shape->size() == 4) {
      full = *output_shape;
    } else if (output_shape->size() == 2) {
      const Tensor& x = m.T(m.In(0));
      const Tensor& w = m.T(m.In(1));
      if (!x.shape_known || x.shape.size() != 4 || x.shape[0] < 0 || !w.fully_known() || w.shape.size() != 4)
        return Unsupported("ConvTranspose with 'output_shape' whose input or weight shapes are not known at import");
      if (w.shape[1] > kMaxDim / group) return InvalidInput("attribute 'group' is " + std::to_string(group));
      full = {x.shape[0], w.shape[1] * group, (*output_shape)[0], (*output_shape)[1]};
    } else {
      return InvalidInput("attribute 'output_shape' has " + std::to_string(output_shape->size()) + " values, expected 2");
    }
    for (auto d : full)
      if (d < 1) return InvalidInput("attribute 'output_shape' has dimension " + std::to_string(d));
    a.Set("output_shape", full);
  }
  m.node.kind = OpKind::kTransposeConv2D;
  m.TakeInputs(3);
  return Status::Ok();
}

// Moves the node's output to a new tensor and adds `node output = that + bias` after it.
void AddBiasNode(Mapper& m, TensorId bias) {
  const TensorId out = m.node.outputs[0];
  Tensor partial = m.T(out);
  partial.name += ":before_bias";
  partial.data.reset();
  const TensorId mid = m.graph().AddTensor(std::move(partial));
  m.node.outputs[0] = mid;
  Node add;
  add.kind = OpKind::kAdd;
  add.name = m.node.name + ":bias";
  add.source_op = m.node.source_op;
  add.inputs = {mid, bias};
  add.outputs = {out};
  m.extra.push_back(std::move(add));
}

Status MapGemm(Mapper& m) {
  LATTE_RETURN_IF_ERROR(m.Require(2));
  LATTE_ASSIGN_OR_RETURN(std::int64_t trans_a, m.attrs.Int("transA", 0));
  LATTE_ASSIGN_OR_RETURN(std::int64_t trans_b, m.attrs.Int("transB", 0));
  LATTE_ASSIGN_OR_RETURN(double alpha, m.attrs.Float("alpha", 1.0));
  LATTE_ASSIGN_OR_RETURN(double beta, m.attrs.Float("beta", 1.0));
  const Tensor* b = m.Const(1);
  const bool fc = trans_a == 0 && b != nullptr && b->shape.size() == 2;
  Attributes& a = m.node.attrs;
  m.node.inputs = {m.In(0), m.In(1)};
  // The IR's matmul and the separate bias add have no scale factors: refuse rather than
  // drop them (the node stays opaque, named, with this reason).
  if ((!fc && alpha != 1.0) || (m.Present(2) && beta != 1.0 && !fc))
    return Unsupported("Gemm with alpha " + std::to_string(alpha) + " and beta " + std::to_string(beta) +
                       " on a non-constant B");
  if (!fc) {
    m.node.kind = OpKind::kMatMul;
    a.Set("transpose_a", std::int64_t{trans_a != 0});
    a.Set("transpose_b", std::int64_t{trans_b != 0});
    if (m.Present(2)) AddBiasNode(m, m.In(2));
    return Status::Ok();
  }
  m.node.kind = OpKind::kFullyConnected;
  a.Set("weights_layout", std::string(trans_b ? "OI" : "IO"));
  if (alpha != 1.0) a.Set("alpha", alpha);
  if (!m.Present(2)) return Status::Ok();
  // C becomes the bias when it is one value per output; otherwise it is a separate add.
  const std::int64_t out_features = trans_b ? b->shape[0] : b->shape[1];
  const Tensor* c = m.Const(2);
  const bool row = c && c->num_elements() == out_features &&
                   (c->shape.size() == 1 || (c->shape.size() == 2 && c->shape[0] == 1));
  if (!row) {
    if (beta != 1.0) return Unsupported("Gemm with beta " + std::to_string(beta) + " on a bias that is not one row");
    AddBiasNode(m, m.In(2));
    return Status::Ok();
  }
  if (beta != 1.0) a.Set("beta", beta);
  TensorId bias = m.In(2);
  if (c->shape.size() != 1) {  // [1, N] → [N], sharing the data
    Tensor flat = *c;
    flat.shape = {out_features};
    bias = m.graph().AddTensor(std::move(flat));
  }
  m.node.inputs.push_back(bias);
  return Status::Ok();
}

Status MapMatMul(Mapper& m) {
  LATTE_RETURN_IF_ERROR(m.Require(2));
  const Tensor* b = m.Const(1);
  if (b && b->shape.size() == 2) {
    m.node.kind = OpKind::kFullyConnected;
    m.node.attrs.Set("weights_layout", std::string("IO"));
  } else {
    m.node.kind = OpKind::kMatMul;
  }
  m.TakeInputs(2);
  return Status::Ok();
}

// --- pooling -----------------------------------------------------------------------------

Status MapPool(Mapper& m, OpKind kind) {
  LATTE_RETURN_IF_ERROR(m.Require(1));
  LATTE_ASSIGN_OR_RETURN(std::optional<Ints> kernel, m.attrs.Ints("kernel_shape"));
  if (!kernel) return InvalidInput("attribute 'kernel_shape' is missing");
  LATTE_RETURN_IF_ERROR(Check2D(m, static_cast<int>(kernel->size())));
  for (auto k : *kernel)
    if (k < 1) return InvalidInput("attribute 'kernel_shape' has value " + std::to_string(k));
  LATTE_ASSIGN_OR_RETURN(std::optional<Ints> dilations, m.attrs.Ints("dilations"));
  if (dilations && std::any_of(dilations->begin(), dilations->end(), [](std::int64_t d) { return d != 1; }))
    return Unsupported(m.op() + " with dilations");
  Attributes& a = m.node.attrs;
  a.Set("layout", std::string("NCHW"));
  a.Set("kernel", *kernel);
  LATTE_ASSIGN_OR_RETURN(Ints strides, Pair(m, "strides", 1, 1));
  a.Set("strides", strides);
  LATTE_RETURN_IF_ERROR(SetPadding(m));
  LATTE_ASSIGN_OR_RETURN(std::int64_t ceil_mode, m.attrs.Int("ceil_mode", 0));
  a.Set("ceil_mode", std::int64_t{ceil_mode != 0});
  if (kind == OpKind::kAvgPool2D) {
    LATTE_ASSIGN_OR_RETURN(std::int64_t count_include_pad, m.attrs.Int("count_include_pad", 0));
    a.Set("count_include_pad", std::int64_t{count_include_pad != 0});
  }
  m.node.kind = kind;
  m.TakeInputs(1);
  return Status::Ok();
}

Status MapGlobalPool(Mapper& m, OpKind kind) {
  LATTE_RETURN_IF_ERROR(m.Require(1));
  if (m.Rank(0) >= 0) LATTE_RETURN_IF_ERROR(Check2D(m, m.Rank(0) - 2));
  m.node.kind = kind;
  m.node.attrs.Set("layout", std::string("NCHW"));
  m.TakeInputs(1);
  return Status::Ok();
}

// --- elementwise -------------------------------------------------------------------------

Status MapBinary(Mapper& m, OpKind kind) {
  if (m.proto().input_size() != 2)
    return Unsupported(m.op() + " with " + std::to_string(m.proto().input_size()) + " inputs (Latte's has 2)");
  LATTE_RETURN_IF_ERROR(m.Require(2));
  // Before opset 7, broadcasting could align B at an axis rather than at the end.
  if (m.opset() < 7 && m.attrs.Has("axis")) {
    LATTE_ASSIGN_OR_RETURN(std::int64_t broadcast, m.attrs.Int("broadcast", 0));
    if (broadcast != 0) return Unsupported(m.op() + " with legacy broadcasting along 'axis'");
  }
  m.node.kind = kind;
  m.TakeInputs(2);
  return Status::Ok();
}

Status MapUnary(Mapper& m, OpKind kind) {
  LATTE_RETURN_IF_ERROR(m.Require(1));
  m.node.kind = kind;
  m.TakeInputs(1);
  return Status::Ok();
}

// An activation with float attributes (name, default) copied under the same names.
Status MapActivation(Mapper& m, OpKind kind, std::initializer_list<std::pair<const char*, double>> params) {
  LATTE_RETURN_IF_ERROR(MapUnary(m, kind));
  for (const auto& [name, fallback] : params) {
    LATTE_ASSIGN_OR_RETURN(double v, m.attrs.Float(name, fallback));
    m.node.attrs.Set(name, v);
  }
  return Status::Ok();
}

Status MapPRelu(Mapper& m) {
  LATTE_RETURN_IF_ERROR(m.Require(2));
  m.node.kind = OpKind::kPRelu;
  m.TakeInputs(2);
  return Status::Ok();
}

Status MapClip(Mapper& m) {
  LATTE_RETURN_IF_ERROR(m.Require(1));
  Attributes& a = m.node.attrs;
  if (m.opset() < 11) {  // bounds are attributes
    if (m.attrs.Has("min")) {
      LATTE_ASSIGN_OR_RETURN(double v, m.attrs.Float("min", 0));
      a.Set("min", v);
    }
    if (m.attrs.Has("max")) {
      LATTE_ASSIGN_OR_RETURN(double v, m.attrs.Float("max", 0));
      a.Set("max", v);
    }
  } else {  // bounds are optional inputs
    LATTE_ASSIGN_OR_RETURN(std::optional<double> lo, m.ConstScalar(1, "min"));
    LATTE_ASSIGN_OR_RETURN(std::optional<double> hi, m.ConstScalar(2, "max"));
    if (lo) a.Set("min", *lo);
    if (hi) a.Set("max", *hi);
  }
  m.node.kind = OpKind::kClip;
  m.TakeInputs(1);
  return Status::Ok();
}

// --- reductions --------------------------------------------------------------------------

Status MapReduce(Mapper& m, OpKind kind) {
  LATTE_RETURN_IF_ERROR(m.Require(1));
  LATTE_ASSIGN_OR_RETURN(std::int64_t keepdims, m.attrs.Int("keepdims", 1));
  // Axes moved from an attribute to an input: ReduceSum at opset 13, the others at 18.
  const bool axes_input = m.op() == "ReduceSum" ? m.opset() >= 13 : m.opset() >= 18;
  std::optional<Ints> axes;
  if (axes_input) {
    LATTE_ASSIGN_OR_RETURN(axes, m.ConstInts(1, "axes"));
  } else {
    LATTE_ASSIGN_OR_RETURN(axes, m.attrs.Ints("axes"));
  }
  LATTE_ASSIGN_OR_RETURN(std::int64_t noop, m.attrs.Int("noop_with_empty_axes", 0));
  m.TakeInputs(1);
  if ((!axes || axes->empty()) && noop != 0) {
    m.node.kind = OpKind::kIdentity;
    return Status::Ok();
  }
  m.node.kind = kind;
  if (axes && !axes->empty()) m.node.attrs.Set("axes", *axes);
  m.node.attrs.Set("keepdims", std::int64_t{keepdims != 0});
  return Status::Ok();
}

Status MapArgReduce(Mapper& m, OpKind kind) {
  LATTE_RETURN_IF_ERROR(m.Require(1));
  LATTE_ASSIGN_OR_RETURN(std::int64_t axis, m.attrs.Int("axis", 0));
  LATTE_ASSIGN_OR_RETURN(std::int64_t keepdims, m.attrs.Int("keepdims", 1));
  LATTE_ASSIGN_OR_RETURN(std::int64_t last, m.attrs.Int("select_last_index", 0));
  m.node.kind = kind;
  m.node.attrs.Set("axis", axis);
  m.node.attrs.Set("keepdims", std::int64_t{keepdims != 0});
  m.node.attrs.Set("select_last_index", std::int64_t{last != 0});
  m.TakeInputs(1);
  return Status::Ok();
}

Status MapLayerNorm(Mapper& m) {
  LATTE_RETURN_IF_ERROR(m.Require(2));
  LATTE_ASSIGN_OR_RETURN(std::int64_t axis, m.attrs.Int("axis", -1));
  LATTE_ASSIGN_OR_RETURN(double epsilon, m.attrs.Float("epsilon", 1e-5));
  // stash_type 1 (the default) computes the statistics in float32, as Latte does; another type
  // would be a different computation.
  LATTE_ASSIGN_OR_RETURN(std::int64_t stash, m.attrs.Int("stash_type", 1));
  if (stash != onnx::TensorProto::FLOAT) return Unsupported("LayerNormalization with stash_type " + std::to_string(stash));
  m.node.kind = OpKind::kLayerNorm;
  m.node.attrs.Set("axis", axis);
  m.node.attrs.Set("epsilon", epsilon);
  m.TakeInputs(3);
  return Status::Ok();
}

Status MapGelu(Mapper& m) {
  LATTE_RETURN_IF_ERROR(m.Require(1));
  LATTE_ASSIGN_OR_RETURN(std::string approximate, m.attrs.String("approximate", "none"));
  LATTE_RETURN_IF_ERROR(GeluTanhForm(approximate).status());
  m.node.kind = OpKind::kGelu;
  m.node.attrs.Set("approximate", approximate);
  m.TakeInputs(1);
  return Status::Ok();
}

Status MapWhere(Mapper& m) {
  LATTE_RETURN_IF_ERROR(m.Require(3));
  m.node.kind = OpKind::kWhere;
  m.TakeInputs(3);
  return Status::Ok();
}

Status MapSoftmax(Mapper& m, OpKind kind) {
  LATTE_RETURN_IF_ERROR(m.Require(1));
  // Before opset 13 the default axis was 1 (and the input was seen as 2-D around it).
  LATTE_ASSIGN_OR_RETURN(std::int64_t axis, m.attrs.Int("axis", m.opset() < 13 ? 1 : -1));
  m.node.kind = kind;
  m.node.attrs.Set("axis", axis);
  if (m.opset() < 13) m.node.attrs.Set("coerce_2d", std::int64_t{1});
  m.TakeInputs(1);
  return Status::Ok();
}

// --- data movement -----------------------------------------------------------------------

Status MapReshape(Mapper& m) {
  LATTE_RETURN_IF_ERROR(m.Require(1));
  std::optional<Ints> shape;
  if (m.opset() < 5) {
    LATTE_ASSIGN_OR_RETURN(shape, m.attrs.Ints("shape"));
  } else {
    LATTE_ASSIGN_OR_RETURN(shape, m.ConstInts(1, "shape"));
  }
  if (!shape) return InvalidInput("Reshape has no target shape");
  LATTE_ASSIGN_OR_RETURN(std::int64_t allowzero, m.attrs.Int("allowzero", 0));
  m.node.kind = OpKind::kReshape;
  m.node.attrs.Set("shape", *shape);
  m.node.attrs.Set("copy_zero", std::int64_t{allowzero == 0});
  m.TakeInputs(1);
  return Status::Ok();
}

Status MapFlatten(Mapper& m) {
  LATTE_RETURN_IF_ERROR(m.Require(1));
  LATTE_ASSIGN_OR_RETURN(std::int64_t axis, m.attrs.Int("axis", 1));
  m.node.kind = OpKind::kFlatten;
  m.node.attrs.Set("axis", axis);
  m.TakeInputs(1);
  return Status::Ok();
}

Status MapSqueeze(Mapper& m, OpKind kind) {
  LATTE_RETURN_IF_ERROR(m.Require(1));
  std::optional<Ints> axes;
  if (m.opset() < 13) {
    LATTE_ASSIGN_OR_RETURN(axes, m.attrs.Ints("axes"));
  } else {
    LATTE_ASSIGN_OR_RETURN(axes, m.ConstInts(1, "axes"));
  }
  if (kind == OpKind::kUnsqueeze && !axes) return InvalidInput("Unsqueeze has no 'axes'");
  m.node.kind = kind;
  if (axes) m.node.attrs.Set("axes", *axes);
  m.TakeInputs(1);
  return Status::Ok();
}

Status MapTranspose(Mapper& m) {
  LATTE_RETURN_IF_ERROR(m.Require(1));
  LATTE_ASSIGN_OR_RETURN(std::optional<Ints> perm, m.attrs.Ints("perm"));
  m.node.kind = OpKind::kTranspose;
  if (perm) m.node.attrs.Set("perm", *perm);
  m.TakeInputs(1);
  return Status::Ok();
}

Status MapConcat(Mapper& m) {
  if (!m.attrs.Has("axis") && m.opset() >= 4) return InvalidInput("attribute 'axis' is missing");
  LATTE_ASSIGN_OR_RETURN(std::int64_t axis, m.attrs.Int("axis", 1));
  m.node.kind = OpKind::kConcat;
  m.node.attrs.Set("axis", axis);
  for (int i = 0; i < m.proto().input_size(); ++i)
    if (m.Present(static_cast<size_t>(i))) m.node.inputs.push_back(m.In(static_cast<size_t>(i)));
  if (m.node.inputs.empty()) return InvalidInput("Concat has no inputs");
  return Status::Ok();
}

Status MapSplit(Mapper& m) {
  LATTE_RETURN_IF_ERROR(m.Require(1));
  LATTE_ASSIGN_OR_RETURN(std::int64_t axis, m.attrs.Int("axis", 0));
  std::optional<Ints> sizes;
  if (m.Present(1)) {
    LATTE_ASSIGN_OR_RETURN(sizes, m.ConstInts(1, "split"));
  } else {
    LATTE_ASSIGN_OR_RETURN(sizes, m.attrs.Ints("split"));
  }
  m.node.outputs.clear();
  for (int i = 0; i < m.proto().output_size(); ++i) {
    TensorId out = m.Out(static_cast<size_t>(i));
    if (out == kNoTensor) return Unsupported("Split with an omitted output");
    m.node.outputs.push_back(out);
  }
  if (m.node.outputs.empty()) return InvalidInput("Split has no outputs");
  m.node.kind = OpKind::kSplit;
  m.node.attrs.Set("axis", axis);
  if (sizes && !sizes->empty()) m.node.attrs.Set("sizes", *sizes);
  m.TakeInputs(1);
  return Status::Ok();
}

Status MapSlice(Mapper& m) {
  LATTE_RETURN_IF_ERROR(m.Require(1));
  std::optional<Ints> starts, ends, axes, steps;
  if (m.opset() < 10) {
    LATTE_ASSIGN_OR_RETURN(starts, m.attrs.Ints("starts"));
    LATTE_ASSIGN_OR_RETURN(ends, m.attrs.Ints("ends"));
    LATTE_ASSIGN_OR_RETURN(axes, m.attrs.Ints("axes"));
  } else {
    LATTE_ASSIGN_OR_RETURN(starts, m.ConstInts(1, "starts"));
    LATTE_ASSIGN_OR_RETURN(ends, m.ConstInts(2, "ends"));
    LATTE_ASSIGN_OR_RETURN(axes, m.ConstInts(3, "axes"));
    LATTE_ASSIGN_OR_RETURN(steps, m.ConstInts(4, "steps"));
  }
  if (!starts || !ends) return InvalidInput("Slice has no 'starts' or 'ends'");
  Attributes& a = m.node.attrs;
  a.Set("starts", *starts);
  a.Set("ends", *ends);
  if (axes) a.Set("axes", *axes);
  if (steps) a.Set("steps", *steps);
  m.node.kind = OpKind::kSlice;
  m.TakeInputs(1);
  return Status::Ok();
}

Status MapPad(Mapper& m) {
  LATTE_RETURN_IF_ERROR(m.Require(1));
  LATTE_ASSIGN_OR_RETURN(std::string mode, m.attrs.String("mode", "constant"));
  if (mode != "constant" && mode != "reflect" && mode != "edge") return Unsupported("Pad mode '" + mode + "'");
  std::optional<Ints> pads;
  double value = 0;
  if (m.opset() < 11) {
    LATTE_ASSIGN_OR_RETURN(pads, m.attrs.Ints(m.attrs.Has("paddings") ? "paddings" : "pads"));
    LATTE_ASSIGN_OR_RETURN(value, m.attrs.Float("value", 0.0));
  } else {
    LATTE_ASSIGN_OR_RETURN(pads, m.ConstInts(1, "pads"));
    LATTE_ASSIGN_OR_RETURN(std::optional<double> v, m.ConstScalar(2, "constant_value"));
    value = v.value_or(0.0);
    if (m.Present(3)) return Unsupported("Pad with 'axes'");
  }
  if (!pads) return InvalidInput("Pad has no 'pads'");
  m.node.kind = OpKind::kPad;
  m.node.attrs.Set("pads", *pads);
  m.node.attrs.Set("mode", mode);
  m.node.attrs.Set("value", value);
  m.TakeInputs(1);
  return Status::Ok();
}

Status MapGather(Mapper& m) {
  LATTE_RETURN_IF_ERROR(m.Require(2));
  LATTE_ASSIGN_OR_RETURN(std::int64_t axis, m.attrs.Int("axis", 0));
  m.node.kind = OpKind::kGather;
  m.node.attrs.Set("axis", axis);
  m.TakeInputs(2);
  return Status::Ok();
}

// Resize (opset 10: [X, scales]; 11+: [X, roi, scales, sizes]) and the older Upsample.
Status MapResize(Mapper& m) {
  LATTE_RETURN_IF_ERROR(m.Require(1));
  LATTE_ASSIGN_OR_RETURN(std::string mode, m.attrs.String("mode", "nearest"));
  std::string coordinates = "asymmetric";
  std::optional<Floats> scales;
  std::optional<Ints> sizes;
  if (m.op() == "Upsample" && m.opset() < 9) {
    LATTE_ASSIGN_OR_RETURN(scales, m.attrs.Floats("scales"));
  } else if (m.op() == "Upsample" || m.opset() < 11) {
    LATTE_ASSIGN_OR_RETURN(scales, m.ConstFloats(1, "scales"));
  } else {
    LATTE_ASSIGN_OR_RETURN(coordinates, m.attrs.String("coordinate_transformation_mode", "half_pixel"));
    LATTE_ASSIGN_OR_RETURN(scales, m.ConstFloats(2, "scales"));
    LATTE_ASSIGN_OR_RETURN(sizes, m.ConstInts(3, "sizes"));
  }
  if (scales && scales->empty()) scales.reset();  // an empty tensor stands for "not given"
  if (sizes && sizes->empty()) sizes.reset();
  if (!scales && !sizes) return InvalidInput(m.op() + " has neither 'scales' nor 'sizes'");
  if (mode == "linear" || mode == "bilinear") mode = "bilinear";
  else if (mode != "nearest") return Unsupported(m.op() + " mode '" + mode + "'");
  if (coordinates != "half_pixel" && coordinates != "align_corners" && coordinates != "asymmetric" &&
      coordinates != "pytorch_half_pixel")
    return Unsupported(m.op() + " with coordinate_transformation_mode '" + coordinates + "'");
  const size_t rank = scales ? scales->size() : sizes->size();
  if (rank != 4) return Unsupported(m.op() + " of a rank-" + std::to_string(rank) + " tensor (Latte resizes NCHW images)");
  Attributes& a = m.node.attrs;
  if (scales) {
    const Floats& s = *scales;
    if (s[0] != 1.0 || s[1] != 1.0) return Unsupported(m.op() + " that scales the batch or channel dim");
    for (double v : s)
      if (!(v > 0) || !std::isfinite(v)) return InvalidInput(m.op() + " scale " + std::to_string(v));
    a.Set("scales", Floats{s[2], s[3]});
  } else {
    const Ints& s = *sizes;
    const Tensor& x = m.T(m.In(0));
    if (x.shape_known && x.shape.size() == 4 && ((x.shape[0] >= 0 && s[0] != x.shape[0]) || (x.shape[1] >= 0 && s[1] != x.shape[1])))
      return Unsupported(m.op() + " that resizes the batch or channel dim");
    for (auto v : s)
      if (v < 1) return InvalidInput(m.op() + " size " + std::to_string(v));
    a.Set("sizes", Ints{s[2], s[3]});
  }
  a.Set("layout", std::string("NCHW"));
  a.Set("mode", mode);
  a.Set("coordinate_transformation", coordinates);
  if (mode == "nearest") {  // how a source coordinate rounds; before opset 11 it floors
    std::string nearest_mode = "floor";
    if (m.op() == "Resize" && m.opset() >= 11) {
      LATTE_ASSIGN_OR_RETURN(nearest_mode, m.attrs.String("nearest_mode", "round_prefer_floor"));
    }
    a.Set("nearest_mode", nearest_mode);
  }
  m.node.kind = OpKind::kResize;
  m.TakeInputs(1);
  return Status::Ok();
}

Status MapDepthSpace(Mapper& m, OpKind kind) {
  LATTE_RETURN_IF_ERROR(m.Require(1));
  LATTE_ASSIGN_OR_RETURN(std::int64_t block, m.attrs.Int("blocksize", 0));
  if (block < 1) return InvalidInput("attribute 'blocksize' is missing or " + std::to_string(block));
  Attributes& a = m.node.attrs;
  a.Set("layout", std::string("NCHW"));
  a.Set("block_size", block);
  if (kind == OpKind::kDepthToSpace) {
    LATTE_ASSIGN_OR_RETURN(std::string mode, m.attrs.String("mode", "DCR"));
    if (mode != "DCR" && mode != "CRD") return InvalidInput("unknown DepthToSpace mode '" + mode + "'");
    a.Set("mode", mode);
  }
  m.node.kind = kind;
  m.TakeInputs(1);
  return Status::Ok();
}

Status MapCast(Mapper& m) {
  LATTE_RETURN_IF_ERROR(m.Require(1));
  std::int32_t to = onnx::TensorProto::UNDEFINED;
  const auto* attr = m.attrs.Find("to");
  if (!attr) return InvalidInput("attribute 'to' is missing");
  if (NodeAttributes::TypeOf(*attr) == onnx::AttributeProto::STRING) {  // Cast-1 names the type
    onnx::TensorProto::DataType parsed;
    if (!onnx::TensorProto::DataType_Parse(attr->s(), &parsed)) return InvalidInput("unknown Cast type '" + attr->s() + "'");
    to = parsed;
  } else {
    LATTE_ASSIGN_OR_RETURN(std::int64_t v, m.attrs.Int("to", 0));
    if (v < 0 || v > std::numeric_limits<std::int32_t>::max()) return InvalidInput("attribute 'to' is " + std::to_string(v));
    to = static_cast<std::int32_t>(v);
  }
  const DataType type = DataTypeFromOnnx(to);
  if (type == DataType::kUnknown) return Unsupported("Cast to " + OnnxTypeName(to));
  m.node.kind = OpKind::kCast;
  m.node.attrs.Set("to", std::string(DataTypeName(type)));
  m.TakeInputs(1);
  if (TensorId out = m.Out(0); out != kNoTensor) m.graph().mutable_tensor(out).dtype = type;
  return Status::Ok();
}

Status MapBatchNorm(Mapper& m) {
  LATTE_RETURN_IF_ERROR(m.Require(5));
  LATTE_ASSIGN_OR_RETURN(std::int64_t training, m.attrs.Int("training_mode", 0));
  if (training != 0) return Unsupported("BatchNormalization in training mode");
  LATTE_ASSIGN_OR_RETURN(std::int64_t spatial, m.attrs.Int("spatial", 1));
  if (spatial == 0) return Unsupported("BatchNormalization with spatial=0 (per-element statistics)");
  LATTE_ASSIGN_OR_RETURN(double epsilon, m.attrs.Float("epsilon", 1e-5));
  m.node.kind = OpKind::kBatchNorm;
  m.node.attrs.Set("epsilon", epsilon);
  m.node.attrs.Set("layout", std::string("NCHW"));
  m.TakeInputs(5);
  return Status::Ok();
}

// Scale and zero point of (De)QuantizeLinear as Latte's QuantParams.
Expected<QuantParams> QuantFromInputs(const Mapper& m, std::int64_t axis) {
  LATTE_ASSIGN_OR_RETURN(std::optional<Floats> scale, m.ConstFloats(1, "scale"));
  LATTE_ASSIGN_OR_RETURN(std::optional<Ints> zero_point, m.ConstInts(2, "zero_point"));
  if (!scale || scale->empty()) return InvalidInput(m.op() + " has no scale");
  if (zero_point && zero_point->size() != scale->size())
    return InvalidInput(m.op() + " has " + std::to_string(scale->size()) + " scales but " +
                        std::to_string(zero_point->size()) + " zero points");
  if (axis < std::numeric_limits<std::int32_t>::min() || axis > std::numeric_limits<std::int32_t>::max())
    return InvalidInput("attribute 'axis' is " + std::to_string(axis));
  QuantParams q;
  q.scale.assign(scale->begin(), scale->end());
  q.zero_point = zero_point.value_or(Ints(scale->size(), 0));
  q.axis = scale->size() > 1 ? static_cast<std::int32_t>(axis) : 0;
  return q;
}

Status MapDequantize(Mapper& m) {
  LATTE_RETURN_IF_ERROR(m.Require(2));
  LATTE_ASSIGN_OR_RETURN(std::int64_t axis, m.attrs.Int("axis", 1));
  LATTE_ASSIGN_OR_RETURN(QuantParams q, QuantFromInputs(m, axis));
  const Tensor& x = m.T(m.In(0));
  // int32: a quantized model's bias, at the input's scale times the weights' (zero point 0).
  if (x.dtype == DataType::kInt32 && std::any_of(q.zero_point.begin(), q.zero_point.end(), [](std::int64_t z) { return z != 0; }))
    return Unsupported("DequantizeLinear of int32 with a non-zero zero point");
  if (!x.quant.empty() && !(x.quant == q))
    return Unsupported("DequantizeLinear of a tensor another node dequantizes with other parameters");
  m.graph().mutable_tensor(m.In(0)).quant = std::move(q);  // params live on the quantized input
  m.node.kind = OpKind::kDequantize;
  m.TakeInputs(1);
  if (TensorId out = m.Out(0); out != kNoTensor) m.graph().mutable_tensor(out).dtype = DataType::kFloat32;
  return Status::Ok();
}

Status MapQuantize(Mapper& m) {
  LATTE_RETURN_IF_ERROR(m.Require(2));
  LATTE_ASSIGN_OR_RETURN(std::int64_t axis, m.attrs.Int("axis", 1));
  LATTE_ASSIGN_OR_RETURN(QuantParams q, QuantFromInputs(m, axis));
  // The zero point's type is the output's (uint8 when there is none).
  DataType type = m.Present(2) ? m.T(m.In(2)).dtype : DataType::kUInt8;
  if (type != DataType::kInt8 && type != DataType::kUInt8) return Unsupported("QuantizeLinear to " + std::string(DataTypeName(type)));
  m.node.kind = OpKind::kQuantize;
  m.TakeInputs(1);
  if (TensorId out = m.Out(0); out != kNoTensor) {
    Tensor& y = m.graph().mutable_tensor(out);
    y.quant = std::move(q);  // params live on the quantized output
    y.dtype = type;
  }
  return Status::Ok();
}

Status MapDropout(Mapper& m) {
  LATTE_RETURN_IF_ERROR(m.Require(1));
  m.node.kind = OpKind::kIdentity;  // inference: passes its input through
  m.TakeInputs(1);
  return Status::Ok();
}

// --- dispatch ----------------------------------------------------------------------------

using MapFn = std::function<Status(Mapper&)>;

// The ops that need code of their own, then the one-to-one ones (onnx_one_to_one) by family.
const std::unordered_map<std::string_view, MapFn>& MapTable() {
  using K = OpKind;
  static const std::unordered_map<std::string_view, MapFn> table = [] {
    std::unordered_map<std::string_view, MapFn> t = {
        {"Conv", MapConv},
        {"ConvTranspose", MapConvTranspose},
        {"Gemm", MapGemm},
        {"MatMul", MapMatMul},
        {"MaxPool", [](Mapper& m) { return MapPool(m, K::kMaxPool2D); }},
        {"AveragePool", [](Mapper& m) { return MapPool(m, K::kAvgPool2D); }},
        {"Sum", [](Mapper& m) { return MapBinary(m, K::kAdd); }},
        {"Dropout", MapDropout},
        {"HardSigmoid", [](Mapper& m) { return MapActivation(m, K::kHardSigmoid, {{"alpha", 0.2}, {"beta", 0.5}}); }},
        {"LeakyRelu", [](Mapper& m) { return MapActivation(m, K::kLeakyRelu, {{"alpha", 0.01}}); }},
        {"Elu", [](Mapper& m) { return MapActivation(m, K::kElu, {{"alpha", 1.0}}); }},
        {"PRelu", MapPRelu},
        {"Clip", MapClip},
        {"ReduceMean", [](Mapper& m) { return MapReduce(m, K::kMean); }},
        {"ReduceSum", [](Mapper& m) { return MapReduce(m, K::kReduceSum); }},
        {"ReduceMax", [](Mapper& m) { return MapReduce(m, K::kReduceMax); }},
        {"ReduceMin", [](Mapper& m) { return MapReduce(m, K::kReduceMin); }},
        {"ArgMax", [](Mapper& m) { return MapArgReduce(m, K::kArgMax); }},
        {"ArgMin", [](Mapper& m) { return MapArgReduce(m, K::kArgMin); }},
        {"LayerNormalization", MapLayerNorm},
        {"Gelu", MapGelu},
        {"Softmax", [](Mapper& m) { return MapSoftmax(m, K::kSoftmax); }},
        {"LogSoftmax", [](Mapper& m) { return MapSoftmax(m, K::kLogSoftmax); }},
        {"Reshape", MapReshape},
        {"Flatten", MapFlatten},
        {"Squeeze", [](Mapper& m) { return MapSqueeze(m, K::kSqueeze); }},
        {"Unsqueeze", [](Mapper& m) { return MapSqueeze(m, K::kUnsqueeze); }},
        {"Transpose", MapTranspose},
        {"Concat", MapConcat},
        {"Split", MapSplit},
        {"Slice", MapSlice},
        {"Pad", MapPad},
        {"Gather", MapGather},
        {"Resize", MapResize},
        {"Upsample", MapResize},
        {"DepthToSpace", [](Mapper& m) { return MapDepthSpace(m, K::kDepthToSpace); }},
        {"SpaceToDepth", [](Mapper& m) { return MapDepthSpace(m, K::kSpaceToDepth); }},
        {"Cast", MapCast},
        {"BatchNormalization", MapBatchNorm},
        {"DequantizeLinear", MapDequantize},
        {"QuantizeLinear", MapQuantize},
    };
    for (const OnnxOneToOne& op : OnnxOneToOneOps()) {
      const OpKind kind = op.kind;
      switch (KernelFamilyOf(kind)) {
        case KernelFamily::kBinary: t.emplace(op.onnx_op, [kind](Mapper& m) { return MapBinary(m, kind); }); break;
        case KernelFamily::kGlobalPool: t.emplace(op.onnx_op, [kind](Mapper& m) { return MapGlobalPool(m, kind); }); break;
        case KernelFamily::kWhere: t.emplace(op.onnx_op, MapWhere); break;
        default: t.emplace(op.onnx_op, [kind](Mapper& m) { return MapUnary(m, kind); }); break;
      }
    }
    return t;
  }();
  return table;
}

bool HasSubgraph(const onnx::NodeProto& proto) {
  for (const auto& attr : proto.attribute())
    if (attr.has_g() || attr.graphs_size() > 0) return true;
  return false;
}

// Mapped kinds write one output (Split aside): a further output the model uses cannot be
// represented, so the node stays opaque.
Status CheckSingleOutput(const Mapper& m) {
  if (m.Out(0) == kNoTensor) return Unsupported(m.op() + " with its first output omitted");
  for (int i = 1; i < m.proto().output_size(); ++i)
    if (!m.proto().output(i).empty())
      return Unsupported(m.op() + " producing its optional output " + std::to_string(i) + " '" + m.proto().output(i) + "'");
  return Status::Ok();
}

void CollectOuterReads(const onnx::GraphProto& graph, std::unordered_set<std::string> local,
                       std::vector<std::string>& reads) {
  for (const auto& v : graph.input()) local.insert(v.name());
  for (const auto& t : graph.initializer()) local.insert(t.name());
  for (const auto& n : graph.node())
    for (const auto& out : n.output()) local.insert(out);
  for (const auto& n : graph.node()) {
    for (const auto& in : n.input())
      if (!in.empty() && !local.count(in) && std::find(reads.begin(), reads.end(), in) == reads.end()) reads.push_back(in);
    for (const auto& attr : n.attribute()) {
      if (attr.has_g()) CollectOuterReads(attr.g(), local, reads);
      for (const auto& g : attr.graphs()) CollectOuterReads(g, local, reads);
    }
  }
}

}  // namespace

std::vector<std::string> OuterScopeReads(const onnx::NodeProto& proto) {
  std::vector<std::string> reads;
  for (const auto& attr : proto.attribute()) {
    if (attr.has_g()) CollectOuterReads(attr.g(), {}, reads);
    for (const auto& g : attr.graphs()) CollectOuterReads(g, {}, reads);
  }
  return reads;
}

Status AddOnnxNode(ImportState& state, const onnx::NodeProto& proto, int index, const std::string& why_opaque) {
  Mapper m(state, proto);
  m.node.name = NodeName(proto);
  m.node.source_op = SourceOpName(proto);
  if (TensorId out = m.Out(0); out != kNoTensor) m.node.outputs = {out};

  Status mapped;
  if (!IsDefaultDomain(proto.domain())) {
    mapped = Unsupported("ONNX op '" + proto.op_type() + "' of domain '" + proto.domain() + "' is not supported by Latte");
  } else if (auto it = MapTable().find(proto.op_type()); it == MapTable().end() || HasSubgraph(proto)) {
    mapped = Unsupported(!why_opaque.empty() ? why_opaque : "ONNX op '" + proto.op_type() + "' is not supported by Latte");
  } else {
    // Checked first: mappings may touch the graph once they succeed.
    if (proto.op_type() != "Split") mapped = CheckSingleOutput(m);
    if (mapped.ok()) mapped = it->second(m);
  }

  if (mapped.code() == StatusCode::kUnsupported) {
    // Opaque: keeps every input (and what its subgraphs read) so that the order stays right,
    // and every output with the shapes ONNX's inference gave them.
    Node opaque;
    opaque.kind = OpKind::kOpaque;
    opaque.name = m.node.name;
    opaque.source_op = m.node.source_op;
    opaque.unsupported_reason = mapped.message();
    for (int i = 0; i < proto.input_size(); ++i)
      if (TensorId t = m.In(static_cast<size_t>(i)); t != kNoTensor) opaque.inputs.push_back(t);
    for (const std::string& name : OuterScopeReads(proto)) {
      auto it = state.values.find(name);
      if (it != state.values.end() && std::find(opaque.inputs.begin(), opaque.inputs.end(), it->second) == opaque.inputs.end())
        opaque.inputs.push_back(it->second);
    }
    for (int i = 0; i < proto.output_size(); ++i)
      if (TensorId t = m.Out(static_cast<size_t>(i)); t != kNoTensor) opaque.outputs.push_back(t);
    state.graph.AddNode(std::move(opaque));
    return Status::Ok();
  }
  if (!mapped.ok()) return mapped.WithContext(DescribeOnnxNode(proto, index));
  state.graph.AddNode(std::move(m.node));
  for (Node& extra : m.extra) state.graph.AddNode(std::move(extra));
  return Status::Ok();
}

}  // namespace latte::onnx_import
