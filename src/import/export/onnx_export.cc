#include "import/export/onnx_export.h"

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <vector>

#include "import/onnx/onnx_one_to_one.h"
#include "import/onnx/onnx_tensor.h"
#include "ir/op_params.h"

namespace latte {
namespace {

using Ints = std::vector<std::int64_t>;

// Row-major data of `shape` with its axes permuted (out axis i = in axis perm[i]).
std::vector<std::uint8_t> PermuteBytes(const std::vector<std::uint8_t>& in, const Shape& shape, const Ints& perm,
                                       std::size_t elem) {
  const size_t rank = shape.size();
  std::vector<std::uint8_t> out(in.size());
  Shape out_shape(rank);
  for (size_t i = 0; i < rank; ++i) out_shape[i] = shape[perm[i]];
  std::vector<std::int64_t> in_strides(rank, 1);
  for (size_t i = rank; i-- > 1;) in_strides[i - 1] = in_strides[i] * shape[i];
  const std::int64_t n = static_cast<std::int64_t>(in.size() / elem);
  std::vector<std::int64_t> index(rank, 0);  // index in out_shape
  for (std::int64_t o = 0; o < n; ++o) {
    std::int64_t src = 0;
    for (size_t i = 0; i < rank; ++i) src += index[i] * in_strides[perm[i]];
    std::memcpy(&out[o * elem], &in[src * elem], elem);
    for (size_t i = rank; i-- > 0;) {
      if (++index[i] < out_shape[i]) break;
      index[i] = 0;
    }
  }
  return out;
}

const Ints kToNchw = {0, 3, 1, 2};
// The parts naming the Transposes around an NHWC spatial op ("n12/pre0", "n12/post2").
constexpr const char* kLayoutInPart = "pre";
constexpr const char* kLayoutOutPart = "post";
const Ints kToNhwc = {0, 2, 3, 1};

class Exporter {
 public:
  explicit Exporter(const Graph& graph) : g_(graph) {
    // Graph inputs and outputs claim their own names before any other tensor can.
    for (TensorId id : g_.inputs) Name(id);
    for (TensorId id : g_.outputs) Name(id);
  }

  Status ExportAll() {
    // Inside a whole model an int8 activation is carried as uint8 (the same steps, the zero point
    // moved by 128): ONNX Runtime's x86 kernels take uint8 activations with int8 weights, and its
    // own int8-to-uint8 rewrite skips a quantized value read by more than one node.
    u8_activations_ = true;
    for (NodeId id = 0; id < static_cast<NodeId>(g_.num_nodes()); ++id) LATTE_RETURN_IF_ERROR(EmitChecked(id));
    for (TensorId id : g_.inputs) LATTE_RETURN_IF_ERROR(AddValueInfo(gp()->add_input(), id));
    for (TensorId id : g_.outputs) LATTE_RETURN_IF_ERROR(AddValueInfo(gp()->add_output(), id));
    gp()->set_name(g_.name.empty() ? "latte" : g_.name);
    return Status::Ok();
  }

  Status ExportOne(NodeId id) {
    LATTE_RETURN_IF_ERROR(EmitChecked(id));
    const Node& n = g_.node(id);
    std::set<TensorId> seen;
    for (TensorId t : n.inputs)
      if (t != kNoTensor && !g_.tensor(t).is_constant() && seen.insert(t).second)
        LATTE_RETURN_IF_ERROR(AddValueInfo(gp()->add_input(), t));
    for (TensorId t : n.outputs) LATTE_RETURN_IF_ERROR(AddValueInfo(gp()->add_output(), t));
    gp()->set_name(g_.name + ":" + n.name);
    return Status::Ok();
  }

  std::map<std::string, NodeId>& owners() { return owners_; }

  Expected<std::string> Bytes() {
    model_.set_ir_version(8);
    model_.set_producer_name("latte");
    auto* opset = model_.add_opset_import();
    opset->set_domain("");
    opset->set_version(opset_);
    std::string bytes;
    if (!model_.SerializeToString(&bytes)) return Internal("cannot serialize the exported ONNX model");
    return bytes;
  }

 private:
  onnx::GraphProto* gp() { return model_.mutable_graph(); }

  Status EmitChecked(NodeId id) {
    Status s = Emit(id);
    if (!s.ok()) return s.WithContext(DescribeNode(g_, id) + ": no ONNX export");
    return s;
  }

  // Original tensor names where unique (graph inputs keep what users type), else "t<id>".
  const std::string& Name(TensorId id) {
    auto it = names_.find(id);
    if (it != names_.end()) return it->second;
    std::string name = g_.tensor(id).name;
    if (name.empty() || used_names_.count(name)) name = fmt::format("t{}", id);
    for (int suffix = 1; used_names_.count(name); ++suffix) name = fmt::format("t{}_{}", id, suffix);
    used_names_.insert(name);
    return names_[id] = name;
  }
  std::string Temp(const std::string& hint) {
    std::string name = hint + "#" + std::to_string(temp_++);
    used_names_.insert(name);
    return name;
  }

  Status AddValueInfo(onnx::ValueInfoProto* info, TensorId id) {
    const Tensor& t = g_.tensor(id);
    info->set_name(Name(id));
    LATTE_ASSIGN_OR_RETURN(int type, onnx_import::OnnxTypeOf(t.dtype));
    auto* tensor_type = info->mutable_type()->mutable_tensor_type();
    tensor_type->set_elem_type(type);
    if (!t.shape_known) return Status::Ok();
    auto* shape = tensor_type->mutable_shape();
    for (auto d : t.shape) {
      if (d < 0) shape->add_dim()->set_dim_param("?");
      else shape->add_dim()->set_dim_value(d);
    }
    return Status::Ok();
  }

  void AddInitializer(const std::string& name, int type, const Shape& dims, const void* data, size_t bytes) {
    auto* init = gp()->add_initializer();
    init->set_name(name);
    init->set_data_type(type);
    for (auto d : dims) init->add_dims(d);
    init->set_raw_data(data, bytes);
  }
  // A constant input as is (once).
  Expected<std::string> Constant(TensorId id) {
    const std::string name = Name(id);
    if (added_constants_.insert(id).second) {
      const Tensor& t = g_.tensor(id);
      LATTE_ASSIGN_OR_RETURN(int type, onnx_import::OnnxTypeOf(t.dtype));
      AddInitializer(name, type, t.shape, t.data->data(), t.data->size());
    }
    return name;
  }
  std::string Int64s(const Ints& values, const std::string& hint) {
    const std::string name = Temp(hint);
    AddInitializer(name, onnx::TensorProto_DataType_INT64, {static_cast<std::int64_t>(values.size())}, values.data(),
                   values.size() * sizeof(std::int64_t));
    return name;
  }
  std::string Floats(const std::vector<float>& values, const std::string& hint, bool scalar = false) {
    const std::string name = Temp(hint);
    Shape dims;
    if (!scalar) dims.push_back(static_cast<std::int64_t>(values.size()));
    AddInitializer(name, onnx::TensorProto_DataType_FLOAT, dims, values.data(), values.size() * sizeof(float));
    return name;
  }

  // Any input: constants become initializers, activations keep their names, and an int8
  // activation is dequantized for the node reading it (but a dequantize node, which reads it as
  // it is): the QDQ form, one DequantizeLinear per use, as ONNX Runtime's QDQ fusions want it.
  Expected<std::string> In(const Node& n, size_t i) {
    TensorId id = n.input(i);
    if (id == kNoTensor) return std::string();
    if (g_.tensor(id).is_constant()) return Constant(id);
    if (n.kind == OpKind::kDequantize) return Name(id);
    return ActivationIn(id);
  }
  Expected<std::string> ActivationIn(TensorId id) {
    if (!IsQuantizedActivation(id)) return Name(id);
    return Dequantize(Name(id), id);
  }
  // DequantizeLinear of `x`, an int8 value with tensor `id`'s parameters (the tensor itself, or it
  // transposed), into a new float value.
  Expected<std::string> Dequantize(const std::string& x, TensorId id) {
    const std::string out = Temp(x + "_dq");
    LATTE_RETURN_IF_ERROR(Convert("DequantizeLinear", x, id, out, "dq"));
    return out;
  }
  // QuantizeLinear or DequantizeLinear (`op`) of `x` into `out`, with tensor `id`'s scale and zero
  // point (per channel along its axis when it has several); `part` names the node's part.
  Status Convert(const char* op, const std::string& x, TensorId id, const std::string& out, const std::string& part) {
    const Tensor& t = g_.tensor(id);
    LATTE_ASSIGN_OR_RETURN(std::vector<std::string> params, QuantOperands(t, op[0] == 'Q' ? "y" : "x"));
    auto* node = Add(op, {x, params[0], params[1]}, {out}, part);
    if (t.quant.scale.size() > 1) Attr(node, "axis", std::int64_t{t.quant.axis});
    return Status::Ok();
  }
  bool IsQuantizedActivation(TensorId id) const {
    const Tensor& t = g_.tensor(id);
    return !t.is_constant() && !t.quant.empty() && (t.dtype == DataType::kInt8 || t.dtype == DataType::kUInt8);
  }
  // The scale and zero point initializers of a quantized tensor: scalars when per tensor, vectors
  // along its axis when per channel; the zero point in the tensor's own type.
  Expected<std::vector<std::string>> QuantOperands(const Tensor& t, const std::string& hint) {
    const QuantParams& q = t.quant;
    if (q.empty()) return InvalidInput("tensor '" + t.name + "' is " + std::string(DataTypeName(t.dtype)) + " without a scale");
    const bool scalar = q.scale.size() == 1;
    const std::string scale = Floats(q.scale, hint + "_scale", scalar);
    const std::string zero = Temp(hint + "_zero");
    Shape dims;
    if (!scalar) dims.push_back(static_cast<std::int64_t>(q.scale.size()));
    std::vector<std::int64_t> zp = q.zero_point;
    zp.resize(q.scale.size(), zp.empty() ? 0 : zp.back());
    // The zero points in type T, moved by `offset` (the backend checked them in range: clamping
    // only keeps a cast defined).
    auto write_zero = [&](auto tag, int type, std::int64_t offset) {
      using T = decltype(tag);
      std::vector<T> v;
      for (std::int64_t z : zp)
        v.push_back(static_cast<T>(std::clamp<std::int64_t>(z + offset, std::numeric_limits<T>::min(), std::numeric_limits<T>::max())));
      AddInitializer(zero, type, dims, v.data(), v.size() * sizeof(T));
    };
    if (t.dtype == DataType::kInt8 && u8_activations_ && !t.is_constant()) {
      write_zero(std::uint8_t{}, onnx::TensorProto_DataType_UINT8, 128);
    } else if (t.dtype == DataType::kInt8) {
      write_zero(std::int8_t{}, onnx::TensorProto_DataType_INT8, 0);
    } else if (t.dtype == DataType::kUInt8) {
      write_zero(std::uint8_t{}, onnx::TensorProto_DataType_UINT8, 0);
    } else if (t.dtype == DataType::kInt32) {  // a quantized model's bias
      write_zero(std::int32_t{}, onnx::TensorProto_DataType_INT32, 0);
    } else {
      return Unsupported("tensor '" + t.name + "' is quantized as " + std::string(DataTypeName(t.dtype)) + " (int8, uint8 and int32 export)");
    }
    return std::vector<std::string>{scale, zero};
  }

  // The weights (input 1) and bias (input 2) of a Conv, Gemm or MatMul an int8 node was exported
  // as, quantized as a quantized model carries them: int8 weights (symmetric, per output channel)
  // and an int32 bias at the input's scale times the
  // weights', each behind a DequantizeLinear. `x_scale`: the node's int8 input's scale.
  Status QuantizeWeights(int first_node, float x_scale) {
    const int end = gp()->node_size();
    for (int i = first_node; i < end; ++i) {
      onnx::NodeProto* node = gp()->mutable_node(i);
      const std::string& op = node->op_type();
      const bool conv = op == "Conv";
      if ((!conv && op != "Gemm" && op != "MatMul") || node->input_size() < 2) continue;
      onnx::TensorProto* w = FloatInitializer(node->input(1));
      if (w == nullptr) continue;  // an activation: dequantized where it is read
      // The output channels' axis: a Conv's first, a Gemm's first when it transposes B (else its
      // second), a MatMul's last of its 2-D weights; per tensor otherwise.
      bool trans_b = false;
      for (const onnx::AttributeProto& a : node->attribute()) trans_b = trans_b || (a.name() == "transB" && a.i() != 0);
      int axis = -1;
      if (conv && w->dims_size() >= 1) axis = 0;
      if (op == "Gemm" && w->dims_size() == 2) axis = trans_b ? 0 : 1;
      if (op == "MatMul" && w->dims_size() == 2) axis = 1;
      const std::int64_t channels = axis >= 0 ? w->dims(axis) : 1;
      std::int64_t inner = 1;
      for (int d = axis + 1; axis >= 0 && d < w->dims_size(); ++d) inner *= w->dims(d);
      const std::vector<float> values = FloatsOf(*w);
      auto channel_of = [&](std::size_t j) {
        return axis < 0 ? std::size_t{0} : static_cast<std::size_t>((static_cast<std::int64_t>(j) / inner) % channels);
      };
      std::vector<float> scales(static_cast<std::size_t>(std::max<std::int64_t>(channels, 1)), 0.0f);
      for (std::size_t j = 0; j < values.size(); ++j) scales[channel_of(j)] = std::max(scales[channel_of(j)], std::fabs(values[j]));
      for (float& sc : scales) sc = sc > 0 ? sc / 127.0f : 1.0f;
      std::vector<std::int8_t> q(values.size());
      for (std::size_t j = 0; j < values.size(); ++j)
        q[j] = static_cast<std::int8_t>(std::clamp(std::nearbyint(values[j] / scales[channel_of(j)]), -127.0f, 127.0f));
      Shape dims(w->dims().begin(), w->dims().end());
      const std::string wq = Temp(node->input(1) + "_q");
      AddInitializer(wq, onnx::TensorProto_DataType_INT8, dims, q.data(), q.size());
      const bool per_channel = scales.size() > 1;
      Shape scale_dims;
      if (per_channel) scale_dims.push_back(static_cast<std::int64_t>(scales.size()));
      const std::string ws = Temp(node->input(1) + "_scale"), wz = Temp(node->input(1) + "_zero");
      AddInitializer(ws, onnx::TensorProto_DataType_FLOAT, scale_dims, scales.data(), scales.size() * sizeof(float));
      const std::vector<std::int8_t> zeros(scales.size(), 0);
      AddInitializer(wz, onnx::TensorProto_DataType_INT8, scale_dims, zeros.data(), zeros.size());
      const std::string wf = Temp(node->input(1) + "_dq");
      PendingDequantize({wq, ws, wz}, wf, per_channel ? axis : -1);
      node->set_input(1, wf);
      if ((conv || op == "Gemm") && node->input_size() > 2 && !node->input(2).empty()) {
        onnx::TensorProto* b = FloatInitializer(node->input(2));
        if (b != nullptr) {
          const std::vector<float> bias = FloatsOf(*b);
          std::vector<std::int32_t> bq(bias.size());
          std::vector<float> bs(bias.size());
          for (std::size_t c = 0; c < bias.size(); ++c) {
            bs[c] = x_scale * scales[per_channel ? c % scales.size() : 0];
            bq[c] = static_cast<std::int32_t>(std::clamp(std::nearbyint(bias[c] / bs[c]), -2147483520.0f, 2147483520.0f));
          }
          Shape bias_dims(b->dims().begin(), b->dims().end()), bs_dims;
          if (per_channel) bs_dims.push_back(static_cast<std::int64_t>(bs.size()));
          else bs.resize(1);
          const std::string bname = Temp(node->input(2) + "_q"), bsn = Temp(node->input(2) + "_scale"),
                            bzn = Temp(node->input(2) + "_zero"), bf = Temp(node->input(2) + "_dq");
          AddInitializer(bname, onnx::TensorProto_DataType_INT32, bias_dims, bq.data(), bq.size() * sizeof(std::int32_t));
          AddInitializer(bsn, onnx::TensorProto_DataType_FLOAT, bs_dims, bs.data(), bs.size() * sizeof(float));
          const std::vector<std::int32_t> bz(bs.size(), 0);
          AddInitializer(bzn, onnx::TensorProto_DataType_INT32, bs_dims, bz.data(), bz.size() * sizeof(std::int32_t));
          PendingDequantize({bname, bsn, bzn}, bf, per_channel ? 0 : -1);
          node->set_input(2, bf);
        }
      }
    }
    // The weights' DequantizeLinear nodes go before the nodes that read them (ONNX wants its
    // nodes in an order that runs).
    if (!pending_.empty()) {
      google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
      nodes.Swap(gp()->mutable_node());
      for (int i = 0; i < first_node; ++i) *gp()->add_node() = nodes.Get(i);
      for (onnx::NodeProto& dq : pending_) *gp()->add_node() = std::move(dq);
      for (int i = first_node; i < nodes.size(); ++i) *gp()->add_node() = nodes.Get(i);
      pending_.clear();
    }
    return Status::Ok();
  }
  void PendingDequantize(const std::vector<std::string>& inputs, const std::string& out, int axis) {
    onnx::NodeProto& dq = pending_.emplace_back();
    dq.set_op_type("DequantizeLinear");
    dq.set_name(prefix_ + "/wdq" + std::to_string(parts_++));
    for (const std::string& in : inputs) dq.add_input(in);
    dq.add_output(out);
    if (axis >= 0) Attr(&dq, "axis", std::int64_t{axis});
    owners_[dq.name()] = current_;
    owners_[out] = current_;
  }
  onnx::TensorProto* FloatInitializer(const std::string& name) {
    for (onnx::TensorProto& t : *gp()->mutable_initializer())
      if (t.name() == name) return t.data_type() == onnx::TensorProto_DataType_FLOAT && t.has_raw_data() ? &t : nullptr;
    return nullptr;
  }
  static std::vector<float> FloatsOf(const onnx::TensorProto& t) {
    std::vector<float> v(t.raw_data().size() / sizeof(float));
    std::memcpy(v.data(), t.raw_data().data(), v.size() * sizeof(float));
    return v;
  }

  onnx::NodeProto* Add(const std::string& op, std::vector<std::string> inputs, std::vector<std::string> outputs,
                       const std::string& part = "") {
    auto* node = gp()->add_node();
    node->set_op_type(op);
    node->set_name(part.empty() ? prefix_ : prefix_ + "/" + part + std::to_string(parts_++));
    for (auto& s : inputs) node->add_input(s);
    for (auto& s : outputs) node->add_output(s);
    owners_[node->name()] = current_;
    for (auto& s : outputs) owners_[s] = current_;
    return node;
  }
  static void Attr(onnx::NodeProto* node, const std::string& name, std::int64_t v) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto_AttributeType_INT);
    a->set_i(v);
  }
  static void Attr(onnx::NodeProto* node, const std::string& name, double v) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto_AttributeType_FLOAT);
    a->set_f(static_cast<float>(v));
  }
  static void Attr(onnx::NodeProto* node, const std::string& name, const std::string& v) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto_AttributeType_STRING);
    a->set_s(v);
  }
  static void Attr(onnx::NodeProto* node, const std::string& name, const Ints& v) {
    auto* a = node->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto_AttributeType_INTS);
    for (auto x : v) a->add_ints(x);
  }

  std::string Transpose(const std::string& x, const Ints& perm, const std::string& part) {
    std::string out = Temp(x + "_T");
    Attr(Add("Transpose", {x}, {out}, part), "perm", perm);
    return out;
  }

  // A weight with its axes permuted: a permuted copy when constant, else a Transpose node.
  Expected<std::string> Permuted(TensorId id, const Ints& perm) {
    const Tensor& t = g_.tensor(id);
    if (!t.is_constant()) {
      LATTE_ASSIGN_OR_RETURN(std::string x, ActivationIn(id));
      return Transpose(x, perm, "w");
    }
    LATTE_ASSIGN_OR_RETURN(int type, onnx_import::OnnxTypeOf(t.dtype));
    if (t.shape.size() != perm.size()) return InvalidInput("weights '" + t.name + "' have rank " + std::to_string(t.shape.size()));
    std::vector<std::uint8_t> data = PermuteBytes(*t.data, t.shape, perm, DataTypeSize(t.dtype));
    Shape dims(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) dims[i] = t.shape[perm[i]];
    const std::string name = Temp(t.name);
    AddInitializer(name, type, dims, data.data(), data.size());
    return name;
  }

  // The activation "activation" asks for, from `x` to `out`.
  Status Activation(const std::string& act, const std::string& x, const std::string& out) {
    if (act == "relu") {
      Add("Relu", {x}, {out}, "act");
    } else if (act == "relu6") {
      Add("Clip", {x, Floats({0.0f}, "min", true), Floats({6.0f}, "max", true)}, {out}, "act");
    } else if (act == "relu_n1_to_1") {
      Add("Clip", {x, Floats({-1.0f}, "min", true), Floats({1.0f}, "max", true)}, {out}, "act");
    } else if (act == "tanh") {
      Add("Tanh", {x}, {out}, "act");
    } else {
      return Unsupported("fused activation '" + act + "' has no ONNX form");
    }
    return Status::Ok();
  }

  struct Io {
    std::string x;    // the main op's data input (NCHW when the op is spatial)
    std::string out;  // where the main op writes
  };

  Status Emit(NodeId id) {
    const Node& n = g_.node(id);
    prefix_ = fmt::format("n{}", id);
    current_ = id;
    parts_ = 0;
    if (n.kind == OpKind::kOpaque)
      return Unsupported("op '" + n.source_op + "' is unknown to Latte" +
                         (n.unsupported_reason.empty() ? "" : " (" + n.unsupported_reason + ")"));
    for (TensorId t : n.outputs)
      if (!g_.tensor(t).shape_known) return InvalidInput("output '" + g_.tensor(t).name + "' has an unknown shape");
    const std::string act = n.attrs.GetString("activation", "none");
    // An absent "layout" is NHWC, as op_params reads it.
    const bool spatial = IsSpatial(n.kind) && n.attrs.GetString("layout", "NHWC") == "NHWC";
    if (spatial && g_.tensor(n.inputs.at(0)).shape.size() != 4)
      return Unsupported("NHWC " + std::string(OpName(n.kind)) + " of a tensor that is not 4-D");
    if (n.outputs.size() != 1 && (act != "none" || spatial)) return Internal("multi-output op with a layout or activation");

    // A node computing in int8 (it writes an int8 activation) is exported in float between the
    // DequantizeLinear of its inputs and a QuantizeLinear of its output, its weights quantized;
    // a spatial one's layout Transposes go outside those, on the int8 values, so that the
    // dequantize, the op and the quantize stay one group for ONNX Runtime to fuse, and the
    // Transposes of neighbours meet and cancel.
    const int first_node = gp()->node_size();
    const bool int8 = n.kind != OpKind::kQuantize && n.outputs.size() == 1 && IsQuantizedActivation(n.outputs[0]);
    if (int8 && n.kind == OpKind::kPad) {
      if (std::optional<Status> done = EmitQuantizedPad(n)) return *done;
    }
    Io io;
    if (spatial && int8 && IsQuantizedActivation(n.inputs.at(0))) {
      const std::string x = Transpose(Name(n.inputs[0]), kToNchw, kLayoutInPart);
      LATTE_ASSIGN_OR_RETURN(io.x, Dequantize(x, n.inputs[0]));
    } else {
      LATTE_ASSIGN_OR_RETURN(io.x, In(n, 0));
      if (spatial) io.x = Transpose(io.x, kToNchw, kLayoutInPart);
    }
    const std::string final_out = n.outputs.empty() ? std::string() : Name(n.outputs[0]);
    std::string after_act = int8 ? Temp(final_out + "_f") : final_out;
    if (spatial) after_act = Temp(final_out + "_nchw");
    io.out = act == "none" ? after_act : Temp(final_out + "_noact");
    LATTE_RETURN_IF_ERROR(EmitOp(n, io));
    if (act != "none") LATTE_RETURN_IF_ERROR(Activation(act, io.out, after_act));
    if (int8) {
      const Tensor& in = g_.tensor(n.inputs.at(0));
      const float x_scale = IsQuantizedActivation(n.inputs[0]) && in.quant.scale.size() == 1 ? in.quant.scale[0] : 0.0f;
      if (x_scale > 0) LATTE_RETURN_IF_ERROR(QuantizeWeights(first_node, x_scale));
      const std::string quantized = spatial ? Temp(final_out + "_nchw_q") : final_out;
      LATTE_RETURN_IF_ERROR(Convert("QuantizeLinear", after_act, n.outputs[0], quantized, "q"));
      if (spatial) Attr(Add("Transpose", {quantized}, {final_out}, kLayoutOutPart), "perm", kToNhwc);
    } else if (spatial) {
      Attr(Add("Transpose", {after_act}, {final_out}, kLayoutOutPart), "perm", kToNhwc);
    }
    return Status::Ok();
  }

  // An int8 pad whose input and output share their parameters pads the quantized values with
  // the zero point (what 0 is), with no dequantize and quantize around it (ONNX Runtime has no
  // fusion that would remove them); nullopt when the parameters differ or the pad value is not 0.
  std::optional<Status> EmitQuantizedPad(const Node& n) {
    const TensorId in = n.inputs.at(0);
    if (!IsQuantizedActivation(in) || !(g_.tensor(in).quant == g_.tensor(n.outputs[0]).quant) ||
        g_.tensor(in).dtype != g_.tensor(n.outputs[0]).dtype || n.attrs.GetFloat("value", 0.0) != 0.0)
      return std::nullopt;
    auto pads = n.attrs.GetInts("pads");
    if (!pads) return InvalidInput("pad without 'pads'");
    Expected<std::vector<std::string>> params = QuantOperands(g_.tensor(n.outputs[0]), "pad");
    if (!params.ok()) return params.status();
    const std::string mode = n.attrs.GetString("mode", "constant");
    std::vector<std::string> inputs = {Name(in), Int64s(*pads, "pads")};
    if (mode == "constant") inputs.push_back((*params)[1]);
    Attr(Add("Pad", inputs, {Name(n.outputs[0])}), "mode", mode);
    return Status::Ok();
  }


  static bool IsSpatial(OpKind k) {
    switch (k) {
      case OpKind::kConv2D: case OpKind::kDepthwiseConv2D: case OpKind::kTransposeConv2D:
      case OpKind::kMaxPool2D: case OpKind::kAvgPool2D: case OpKind::kGlobalAvgPool: case OpKind::kGlobalMaxPool:
      case OpKind::kResize: case OpKind::kDepthToSpace: case OpKind::kSpaceToDepth: case OpKind::kBatchNorm:
        return true;
      default: return false;
    }
  }

  Status EmitOp(const Node& n, const Io& io) {
    using K = OpKind;
    // Written as they are read (onnx_one_to_one), and PRelu, whose import checks its slope.
    static const std::map<OpKind, std::string> kSimple = [] {
      std::map<OpKind, std::string> simple = {{K::kPRelu, "PRelu"}};
      for (const OnnxOneToOne& op : OnnxOneToOneOps()) simple.emplace(op.kind, std::string(op.onnx_op));
      return simple;
    }();
    if (auto it = kSimple.find(n.kind); it != kSimple.end()) {
      std::vector<std::string> inputs = {io.x};
      for (size_t i = 1; i < n.inputs.size(); ++i) {
        LATTE_ASSIGN_OR_RETURN(std::string in, In(n, i));
        inputs.push_back(in);
      }
      Add(it->second, inputs, {io.out});
      return Status::Ok();
    }
    switch (n.kind) {
      case K::kConv2D: case K::kDepthwiseConv2D: case K::kTransposeConv2D: return EmitConv(n, io);
      case K::kFullyConnected: return EmitFullyConnected(n, io);
      case K::kMatMul: return EmitMatMul(n, io);
      case K::kMaxPool2D: case K::kAvgPool2D: return EmitPool(n, io);
      case K::kSoftmax: case K::kLogSoftmax: return EmitSoftmax(n, io);
      case K::kResize: return EmitResize(n, io);
      case K::kMean: case K::kReduceMax: case K::kReduceMin: case K::kReduceSum: return EmitReduce(n, io);
      case K::kArgMax: case K::kArgMin: {
        auto* node = Add(n.kind == K::kArgMax ? "ArgMax" : "ArgMin", {io.x}, {io.out});
        Attr(node, "axis", n.attrs.GetInt("axis", 0));
        Attr(node, "keepdims", n.attrs.GetInt("keepdims", 1));
        if (n.attrs.GetInt("select_last_index", 0)) Attr(node, "select_last_index", std::int64_t{1});
        return Status::Ok();
      }
      case K::kLayerNorm: return EmitLayerNorm(n, io);
      case K::kQuantize:
        if (n.outputs.size() != 1) return InvalidInput("quantize with " + std::to_string(n.outputs.size()) + " outputs");
        return Convert("QuantizeLinear", io.x, n.outputs[0], io.out, "");
      case K::kDequantize: return Convert("DequantizeLinear", io.x, n.inputs.at(0), io.out, "");
      default: break;
    }
    if (std::optional<Status> done = EmitElementwise(n, io)) return *done;
    if (std::optional<Status> done = EmitDataMovement(n, io)) return *done;
    return Unsupported(std::string(OpName(n.kind)) + " has no ONNX export");
  }

  Status EmitMatMul(const Node& n, const Io& io) {
    LATTE_ASSIGN_OR_RETURN(std::string b, In(n, 1));
    std::string x = io.x;
    if (n.attrs.GetInt("transpose_a", 0)) x = Transpose(x, LastTwoSwapped(n.input(0)), "ta");
    if (n.attrs.GetInt("transpose_b", 0)) b = Transpose(b, LastTwoSwapped(n.input(1)), "tb");
    Add("MatMul", {x, b}, {io.out});
    return Status::Ok();
  }

  // LayerNormalization (opset 17) takes a scale always: ones when the node has none.
  Status EmitLayerNorm(const Node& n, const Io& io) {
    const Tensor& x = g_.tensor(n.inputs.at(0));
    if (x.dtype != DataType::kFloat32) return Unsupported("layer_norm of " + std::string(DataTypeName(x.dtype)));
    const auto rank = static_cast<std::int64_t>(x.shape.size());
    std::int64_t axis = n.attrs.GetInt("axis", -1);
    if (axis < 0) axis += rank;
    std::vector<std::string> inputs = {io.x};
    LATTE_ASSIGN_OR_RETURN(std::string scale, In(n, 1));
    LATTE_ASSIGN_OR_RETURN(std::string bias, In(n, 2));
    if (scale.empty()) {
      std::int64_t count = 1;
      Shape dims(x.shape.begin() + axis, x.shape.end());
      for (auto d : dims) count *= d;
      const std::string name = Temp("ones");
      std::vector<float> ones(static_cast<size_t>(count), 1.0f);
      AddInitializer(name, onnx::TensorProto_DataType_FLOAT, dims, ones.data(), ones.size() * sizeof(float));
      scale = name;
    }
    inputs.push_back(scale);
    if (!bias.empty()) inputs.push_back(bias);
    auto* node = Add("LayerNormalization", inputs, {io.out});
    Attr(node, "axis", axis);
    Attr(node, "epsilon", n.attrs.GetFloat("epsilon", 1e-5));
    opset_ = std::max(opset_, 17);
    return Status::Ok();
  }

  Status EmitPool(const Node& n, const Io& io) {
    const Attributes& a = n.attrs;
    LATTE_ASSIGN_OR_RETURN(PoolParams p, GetPoolParams(g_, n));
    auto* node = Add(n.kind == OpKind::kMaxPool2D ? "MaxPool" : "AveragePool", {io.x}, {io.out});
    Attr(node, "kernel_shape", Ints{p.kernel_h, p.kernel_w});
    Attr(node, "strides", Ints{p.stride_h, p.stride_w});
    Attr(node, "pads", Ints{p.pads.top, p.pads.left, p.pads.bottom, p.pads.right});
    if (a.GetInt("ceil_mode", 0)) Attr(node, "ceil_mode", std::int64_t{1});
    if (n.kind == OpKind::kAvgPool2D && a.GetInt("count_include_pad", 0)) Attr(node, "count_include_pad", std::int64_t{1});
    return Status::Ok();
  }

  Status EmitReduce(const Node& n, const Io& io) {
    using K = OpKind;
    const char* op = n.kind == K::kMean ? "ReduceMean" : n.kind == K::kReduceMax ? "ReduceMax"
                     : n.kind == K::kReduceMin ? "ReduceMin" : "ReduceSum";
    auto axes = n.attrs.GetInts("axes");
    std::vector<std::string> inputs = {io.x};
    if (n.kind == K::kReduceSum && axes && !axes->empty()) inputs.push_back(Int64s(*axes, "axes"));
    auto* node = Add(op, inputs, {io.out});
    if (n.kind != K::kReduceSum && axes && !axes->empty()) Attr(node, "axes", *axes);
    Attr(node, "keepdims", n.attrs.GetInt("keepdims", 1));
    return Status::Ok();
  }

  // Elementwise ops with attributes, or that opset 14 writes as several ops; nullopt for another kind.
  std::optional<Status> EmitElementwise(const Node& n, const Io& io) {
    using K = OpKind;
    const Attributes& a = n.attrs;
    switch (n.kind) {
      case K::kSquaredDifference: {
        LATTE_ASSIGN_OR_RETURN(std::string b, In(n, 1));
        std::string d = Temp(io.out + "_diff");
        Add("Sub", {io.x, b}, {d}, "sub");
        Add("Mul", {d, d}, {io.out});
        return Status::Ok();
      }
      case K::kRelu6: Clip(io, 0.0, 6.0); return Status::Ok();
      case K::kReluN1To1: Clip(io, -1.0, 1.0); return Status::Ok();
      case K::kClip: Clip(io, a.GetFloat("min", -INFINITY), a.GetFloat("max", INFINITY)); return Status::Ok();
      case K::kSquare: Add("Mul", {io.x, io.x}, {io.out}); return Status::Ok();
      case K::kRsqrt: {
        std::string s = Temp(io.out + "_sqrt");
        Add("Sqrt", {io.x}, {s}, "sqrt");
        Add("Reciprocal", {s}, {io.out});
        return Status::Ok();
      }
      case K::kHardSigmoid: case K::kLeakyRelu: case K::kElu: {
        const char* op = n.kind == K::kHardSigmoid ? "HardSigmoid" : n.kind == K::kLeakyRelu ? "LeakyRelu" : "Elu";
        auto* node = Add(op, {io.x}, {io.out});
        if (a.Has("alpha")) Attr(node, "alpha", a.GetFloat("alpha", 0.0));
        if (n.kind == K::kHardSigmoid && a.Has("beta")) Attr(node, "beta", a.GetFloat("beta", 0.5));
        return Status::Ok();
      }
      case K::kNotEqual: {  // ONNX has no NotEqual: Not(Equal)
        LATTE_ASSIGN_OR_RETURN(std::string b, In(n, 1));
        std::string e = Temp(io.out + "_eq");
        Add("Equal", {io.x, b}, {e}, "eq");
        Add("Not", {e}, {io.out});
        return Status::Ok();
      }
      case K::kGelu: {  // opset 14 has no Gelu: written out as PyTorch exports it
        LATTE_ASSIGN_OR_RETURN(const bool tanh, GeluTanhForm(a.GetString("approximate", "none")));
        if (tanh) {  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
          std::string c = Temp(io.out + "_cube"), k = Temp(io.out + "_k"), in = Temp(io.out + "_in"),
                      sc = Temp(io.out + "_sc"), t = Temp(io.out + "_t"), p = Temp(io.out + "_p"),
                      h = Temp(io.out + "_h");
          Add("Pow", {io.x, Floats({3.0f}, "three", true)}, {c}, "cube");
          Add("Mul", {c, Floats({0.044715f}, "k", true)}, {k}, "k");
          Add("Add", {io.x, k}, {in}, "inner");
          Add("Mul", {in, Floats({static_cast<float>(0.7978845608028654 /* √(2/π) */)}, "c", true)}, {sc}, "scale");
          Add("Tanh", {sc}, {t}, "tanh");
          Add("Add", {t, Floats({1.0f}, "one", true)}, {p}, "plus");
          Add("Mul", {io.x, Floats({0.5f}, "half", true)}, {h}, "half");
          Add("Mul", {h, p}, {io.out});
          return Status::Ok();
        }
        // 0.5 x (1 + erf(x / sqrt 2))
        std::string s = Temp(io.out + "_s"), e = Temp(io.out + "_e"), p = Temp(io.out + "_p"), m = Temp(io.out + "_m");
        Add("Mul", {io.x, Floats({static_cast<float>(1.0 / std::sqrt(2.0))}, "c", true)}, {s}, "scale");
        Add("Erf", {s}, {e}, "erf");
        Add("Add", {e, Floats({1.0f}, "one", true)}, {p}, "plus");
        Add("Mul", {io.x, p}, {m}, "mul");
        Add("Mul", {m, Floats({0.5f}, "half", true)}, {io.out});
        return Status::Ok();
      }
      default: return std::nullopt;
    }
  }

  // Ops that move data (shape, order, joins, splits, pads, gathers, casts) and batch_norm; nullopt
  // for another kind.
  std::optional<Status> EmitDataMovement(const Node& n, const Io& io) {
    using K = OpKind;
    const Attributes& a = n.attrs;
    switch (n.kind) {
      case K::kReshape: case K::kSqueeze: case K::kUnsqueeze: {
        // The output shape is known: one Reshape to it covers all three.
        Add("Reshape", {io.x, Int64s(g_.tensor(n.outputs[0]).shape, "shape")}, {io.out});
        return Status::Ok();
      }
      case K::kFlatten: Attr(Add("Flatten", {io.x}, {io.out}), "axis", a.GetInt("axis", 1)); return Status::Ok();
      case K::kTranspose: {
        auto* node = Add("Transpose", {io.x}, {io.out});
        if (auto perm = a.GetInts("perm")) Attr(node, "perm", *perm);
        return Status::Ok();
      }
      case K::kConcat: {
        std::vector<std::string> inputs;
        for (size_t i = 0; i < n.inputs.size(); ++i) {
          LATTE_ASSIGN_OR_RETURN(std::string in, In(n, i));
          inputs.push_back(in);
        }
        Attr(Add("Concat", inputs, {io.out}), "axis", a.GetInt("axis", 0));
        return Status::Ok();
      }
      case K::kSplit: {
        const Tensor& x = g_.tensor(n.inputs[0]);
        std::int64_t axis = a.GetInt("axis", 0);
        if (axis < 0) axis += static_cast<std::int64_t>(x.shape.size());
        Ints sizes;
        std::vector<std::string> outs;
        for (TensorId t : n.outputs) {
          sizes.push_back(g_.tensor(t).shape.at(static_cast<size_t>(axis)));
          outs.push_back(Name(t));
        }
        Attr(Add("Split", {io.x, Int64s(sizes, "split")}, outs), "axis", axis);
        return Status::Ok();
      }
      case K::kSlice: {
        auto starts = a.GetInts("starts"), ends = a.GetInts("ends");
        if (!starts || !ends) return InvalidInput("slice without 'starts' and 'ends'");
        std::vector<std::string> inputs = {io.x, Int64s(*starts, "starts"), Int64s(*ends, "ends")};
        auto axes = a.GetInts("axes"), steps = a.GetInts("steps");
        if (axes || steps) {
          Ints all(starts->size());
          for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<std::int64_t>(i);
          inputs.push_back(Int64s(axes ? *axes : all, "axes"));
        }
        if (steps) inputs.push_back(Int64s(*steps, "steps"));
        Add("Slice", inputs, {io.out});
        return Status::Ok();
      }
      case K::kPad: {
        auto pads = a.GetInts("pads");
        if (!pads) return InvalidInput("pad without 'pads'");
        const std::string mode = a.GetString("mode", "constant");
        std::vector<std::string> inputs = {io.x, Int64s(*pads, "pads")};
        const double value = a.GetFloat("value", 0.0);
        if (mode == "constant" && value != 0.0) {
          if (g_.tensor(n.inputs[0]).dtype != DataType::kFloat32) return Unsupported("non-zero pad value of a non-float tensor");
          inputs.push_back(Floats({static_cast<float>(value)}, "value", true));
        }
        Attr(Add("Pad", inputs, {io.out}), "mode", mode);
        return Status::Ok();
      }
      case K::kGather: {
        LATTE_ASSIGN_OR_RETURN(std::string indices, In(n, 1));
        Attr(Add("Gather", {io.x, indices}, {io.out}), "axis", a.GetInt("axis", 0));
        return Status::Ok();
      }
      case K::kDepthToSpace: case K::kSpaceToDepth: {
        auto* node = Add(n.kind == K::kDepthToSpace ? "DepthToSpace" : "SpaceToDepth", {io.x}, {io.out});
        Attr(node, "blocksize", a.GetInt("block_size", 1));
        if (n.kind == K::kDepthToSpace) Attr(node, "mode", a.GetString("mode", "DCR"));
        else if (a.GetString("mode", "DCR") != "DCR") return Unsupported("space_to_depth with mode " + a.GetString("mode", ""));
        return Status::Ok();
      }
      case K::kCast: {
        auto to = DataTypeFromName(a.GetString("to", ""));
        if (!to) return InvalidInput("cast to unknown type '" + a.GetString("to", "") + "'");
        LATTE_ASSIGN_OR_RETURN(int type, onnx_import::OnnxTypeOf(*to));
        Attr(Add("Cast", {io.x}, {io.out}), "to", std::int64_t{type});
        return Status::Ok();
      }
      case K::kBatchNorm: {
        std::vector<std::string> inputs = {io.x};
        for (size_t i = 1; i < 5; ++i) {
          LATTE_ASSIGN_OR_RETURN(std::string in, In(n, i));
          if (in.empty()) return InvalidInput("batch_norm without input " + std::to_string(i));
          inputs.push_back(in);
        }
        Attr(Add("BatchNormalization", inputs, {io.out}), "epsilon", a.GetFloat("epsilon", 1e-5));
        return Status::Ok();
      }
      default: return std::nullopt;
    }
  }

  Ints LastTwoSwapped(TensorId id) {
    const size_t rank = g_.tensor(id).shape.size();
    Ints perm(rank);
    for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<std::int64_t>(i);
    if (rank >= 2) std::swap(perm[rank - 1], perm[rank - 2]);
    return perm;
  }

  void Clip(const Io& io, double lo, double hi) {
    std::vector<std::string> inputs = {io.x};
    inputs.push_back(std::isinf(lo) ? std::string() : Floats({static_cast<float>(lo)}, "min", true));
    if (!std::isinf(hi)) inputs.push_back(Floats({static_cast<float>(hi)}, "max", true));
    Add("Clip", inputs, {io.out});
  }

  Status EmitConv(const Node& n, const Io& io) {
    LATTE_ASSIGN_OR_RETURN(ConvParams p, GetConvParams(g_, n));
    const std::string layout = n.attrs.GetString("filter_layout", "");
    std::string w;
    if (n.kind == OpKind::kTransposeConv2D) {
      if (layout == "IOHW") {
        LATTE_ASSIGN_OR_RETURN(w, In(n, 1));
      } else if (layout == "OHWI" && p.groups == 1) {
        LATTE_ASSIGN_OR_RETURN(w, Permuted(n.input(1), {3, 0, 1, 2}));
      } else {
        return Unsupported("transpose_conv2d with filter_layout " + layout + " and groups " + std::to_string(p.groups));
      }
    } else if (layout == "OIHW") {
      LATTE_ASSIGN_OR_RETURN(w, In(n, 1));
    } else if (layout == "OHWI") {
      LATTE_ASSIGN_OR_RETURN(w, Permuted(n.input(1), {0, 3, 1, 2}));
    } else if (layout == "1HWO") {
      LATTE_ASSIGN_OR_RETURN(w, Permuted(n.input(1), {3, 0, 1, 2}));
    } else {
      return Unsupported("filter_layout " + layout);
    }
    std::vector<std::string> inputs = {io.x, w};
    if (n.input(2) != kNoTensor) {
      LATTE_ASSIGN_OR_RETURN(std::string b, In(n, 2));
      const auto bias_n = g_.tensor(n.input(2)).num_elements();
      if (!bias_n || *bias_n != p.out_c) {
        // A bias broadcast from fewer values (TFLite allows [1]): add it as a separate node.
        std::string conv_out = Temp(io.out + "_nobias");
        LATTE_RETURN_IF_ERROR(ConvNode(n, p, inputs, conv_out));
        std::string shaped = Temp(b + "_nchw");
        Add("Reshape", {b, Int64s({1, -1, 1, 1}, "bias_shape")}, {shaped}, "bias_shape");
        Add("Add", {conv_out, shaped}, {io.out}, "bias");
        return Status::Ok();
      }
      inputs.push_back(b);
    }
    return ConvNode(n, p, inputs, io.out);
  }

  Status ConvNode(const Node& n, const ConvParams& p, const std::vector<std::string>& inputs, const std::string& out) {
    const bool transposed = n.kind == OpKind::kTransposeConv2D;
    auto* node = Add(transposed ? "ConvTranspose" : "Conv", inputs, {out});
    Attr(node, "kernel_shape", Ints{p.kernel_h, p.kernel_w});
    Attr(node, "strides", Ints{p.stride_h, p.stride_w});
    Attr(node, "dilations", Ints{p.dilation_h, p.dilation_w});
    Attr(node, "pads", Ints{p.pads.top, p.pads.left, p.pads.bottom, p.pads.right});
    Attr(node, "group", p.groups);
    if (transposed) {
      const std::int64_t full_h = (p.in_h - 1) * p.stride_h + (p.kernel_h - 1) * p.dilation_h + 1;
      const std::int64_t full_w = (p.in_w - 1) * p.stride_w + (p.kernel_w - 1) * p.dilation_w + 1;
      const std::int64_t op_h = p.out_h - (full_h - p.pads.top - p.pads.bottom);
      const std::int64_t op_w = p.out_w - (full_w - p.pads.left - p.pads.right);
      if (op_h < 0 || op_w < 0) return Unsupported("transposed conv output smaller than its padding allows");
      if (op_h || op_w) Attr(node, "output_padding", Ints{op_h, op_w});
    }
    return Status::Ok();
  }

  Status EmitFullyConnected(const Node& n, const Io& io) {
    const Attributes& a = n.attrs;
    const bool oi = a.GetString("weights_layout", "OI") == "OI";
    const Tensor& x = g_.tensor(n.inputs.at(0));
    const double alpha = a.GetFloat("alpha", 1.0), beta = a.GetFloat("beta", 1.0);
    LATTE_ASSIGN_OR_RETURN(std::string w, In(n, 1));
    LATTE_ASSIGN_OR_RETURN(std::string b, In(n, 2));
    const std::int64_t in_features = g_.tensor(n.input(1)).shape.at(oi ? 1 : 0);
    std::string xin = io.x;
    const bool flatten = oi && !a.GetInt("keep_num_dims", 0) && x.shape.size() != 2;
    if (flatten) {
      xin = Temp(io.x + "_2d");
      Add("Reshape", {io.x, Int64s({-1, in_features}, "rows")}, {xin}, "rows");
    }
    if (x.shape.size() == 2 || flatten) {
      std::vector<std::string> inputs = {xin, w};
      if (!b.empty()) inputs.push_back(b);
      auto* node = Add("Gemm", inputs, {io.out});
      if (oi) Attr(node, "transB", std::int64_t{1});
      if (alpha != 1.0) Attr(node, "alpha", alpha);
      if (beta != 1.0) Attr(node, "beta", beta);
      return Status::Ok();
    }
    if (alpha != 1.0 || beta != 1.0) return Unsupported("fully_connected with alpha/beta on a rank-" + std::to_string(x.shape.size()) + " input");
    if (oi) {
      LATTE_ASSIGN_OR_RETURN(w, Permuted(n.input(1), {1, 0}));
    }
    if (b.empty()) {
      Add("MatMul", {xin, w}, {io.out});
      return Status::Ok();
    }
    std::string m = Temp(io.out + "_mm");
    Add("MatMul", {xin, w}, {m}, "mm");
    Add("Add", {m, b}, {io.out});
    return Status::Ok();
  }

  Status EmitSoftmax(const Node& n, const Io& io) {
    const Attributes& a = n.attrs;
    const char* op = n.kind == OpKind::kSoftmax ? "Softmax" : "LogSoftmax";
    std::string x = io.x;
    const double beta = a.GetFloat("beta", 1.0);
    if (beta != 1.0) {
      std::string scaled = Temp(x + "_beta");
      Add("Mul", {x, Floats({static_cast<float>(beta)}, "beta", true)}, {scaled}, "beta");
      x = scaled;
    }
    const std::int64_t axis = a.GetInt("axis", -1);
    if (!a.GetInt("coerce_2d", 0)) {
      Attr(Add(op, {x}, {io.out}), "axis", axis);
      return Status::Ok();
    }
    std::string flat = Temp(x + "_2d"), soft = Temp(x + "_soft");
    Attr(Add("Flatten", {x}, {flat}, "flat"), "axis", axis);
    Attr(Add(op, {flat}, {soft}, "soft"), "axis", std::int64_t{1});
    Add("Reshape", {soft, Int64s(g_.tensor(n.outputs[0]).shape, "shape")}, {io.out});
    return Status::Ok();
  }

  Status EmitResize(const Node& n, const Io& io) {
    const Attributes& a = n.attrs;
    const std::string mode = a.GetString("mode", "nearest");
    const std::string coords = a.GetString("coordinate_transformation", "asymmetric");
    const Shape& out = g_.tensor(n.outputs[0]).shape;
    const bool nhwc = a.GetString("layout", "NHWC") == "NHWC";
    // The known output shape, in NCHW: exact whether the file gave sizes or scales.
    const Ints sizes = nhwc ? Ints{out[0], out[3], out[1], out[2]} : Ints(out.begin(), out.end());
    std::vector<std::string> inputs = {io.x, "", ""};
    auto scales = a.GetFloats("scales");
    if (scales && scales->size() == 2) {
      inputs[2] = Floats({1.0f, 1.0f, static_cast<float>((*scales)[0]), static_cast<float>((*scales)[1])}, "scales");
    } else {
      inputs.push_back(Int64s(sizes, "sizes"));
    }
    auto* node = Add("Resize", inputs, {io.out});
    if (mode == "bilinear") {
      Attr(node, "mode", std::string("linear"));
    } else if (mode == "nearest") {
      Attr(node, "mode", std::string("nearest"));
      // TFLite and Latte's kernels pick floor without half-pixel centers, round with them.
      Attr(node, "nearest_mode", std::string(coords == "asymmetric" ? "floor" : "round_prefer_ceil"));
    } else {
      return Unsupported("resize mode '" + mode + "'");
    }
    Attr(node, "coordinate_transformation_mode", coords);
    return Status::Ok();
  }

  const Graph& g_;
  onnx::ModelProto model_;
  std::map<TensorId, std::string> names_;
  std::set<std::string> used_names_;
  std::set<TensorId> added_constants_;
  std::map<std::string, NodeId> owners_;
  std::vector<onnx::NodeProto> pending_;  // a node's weights' DequantizeLinear, placed before it
  bool u8_activations_ = false;           // ExportAll: int8 activations written as uint8
  std::string prefix_;
  NodeId current_ = -1;
  int parts_ = 0;
  int temp_ = 0;
  int opset_ = kOnnxExportOpset;  // raised by an op that needs a later one (LayerNormalization: 17)
};

}  // namespace

Expected<std::string> ExportOnnx(const Graph& graph, std::map<std::string, NodeId>* owners) {
  Exporter exporter(graph);
  LATTE_RETURN_IF_ERROR(exporter.ExportAll());
  if (owners != nullptr) *owners = std::move(exporter.owners());
  return exporter.Bytes();
}

Expected<std::string> ExportOnnxNode(const Graph& graph, NodeId id) {
  if (id < 0 || static_cast<size_t>(id) >= graph.num_nodes()) return InvalidInput("no node " + std::to_string(id));
  Exporter exporter(graph);
  LATTE_RETURN_IF_ERROR(exporter.ExportOne(id));
  return exporter.Bytes();
}

Status CheckOnnxExportable(const Graph& graph, NodeId id) {
  auto bytes = ExportOnnxNode(graph, id);
  return bytes.ok() ? Status::Ok() : bytes.status();
}

NodeId OnnxNodeOwner(const std::string& name) {
  if (name.size() < 2 || name[0] != 'n') return -1;
  NodeId id = 0;
  size_t i = 1;
  for (; i < name.size() && name[i] >= '0' && name[i] <= '9'; ++i) {
    if (id > 100000000) return -1;
    id = id * 10 + (name[i] - '0');
  }
  if (i == 1 || (i < name.size() && name[i] != '/')) return -1;
  return id;
}

bool IsOnnxLayoutTranspose(const std::string& name) {
  const std::size_t slash = name.find('/');
  if (OnnxNodeOwner(name) < 0 || slash == std::string::npos) return false;
  const std::string_view part = std::string_view(name).substr(slash + 1);
  auto numbered = [&](std::string_view prefix) {  // prefix, then the part's counter
    return part.size() > prefix.size() && part.starts_with(prefix) &&
           std::all_of(part.begin() + static_cast<std::ptrdiff_t>(prefix.size()), part.end(),
                       [](char c) { return c >= '0' && c <= '9'; });
  };
  return numbered(kLayoutInPart) || numbered(kLayoutOutPart);
}

}  // namespace latte
