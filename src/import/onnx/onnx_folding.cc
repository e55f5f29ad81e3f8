#include "import/onnx/onnx_folding.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>

#include "import/onnx/onnx_attributes.h"
#include "import/onnx/onnx_tensor.h"

namespace latte::onnx_import {
namespace {

using Ints = std::vector<std::int64_t>;

// Shape arithmetic is small; anything bigger is real data and is left to the graph.
constexpr std::int64_t kMaxFoldElements = 1 << 16;

struct IntValues {
  Shape shape;
  Ints values;
  DataType dtype = DataType::kInt64;  // int32 or int64
};

class Folder {
 public:
  Folder(ImportState& state, const onnx::NodeProto& proto) : state_(state), proto_(proto), attrs_(proto) {}

  std::optional<IntValues> Fold() {
    const std::string& op = proto_.op_type();
    if (op == "Shape") return Shape();
    if (op == "Cast") return Cast();
    if (op == "Slice") return Slice();
    if (op == "Concat") return Concat();
    if (op == "Gather") return Gather();
    if (op == "Unsqueeze") return Unsqueeze();
    if (op == "Squeeze") return Squeeze();
    if (op == "Reshape") return Reshape();
    if (op == "Identity") return IntInput(0);
    return std::nullopt;
  }

 private:
  const Tensor* Input(size_t i) const {
    if (i >= static_cast<size_t>(proto_.input_size()) || proto_.input(static_cast<int>(i)).empty()) return nullptr;
    auto it = state_.values.find(proto_.input(static_cast<int>(i)));
    return it == state_.values.end() ? nullptr : &state_.graph.tensor(it->second);
  }
  bool Present(size_t i) const { return Input(i) != nullptr; }

  // A small constant int32/int64 input.
  std::optional<IntValues> IntInput(size_t i) const {
    const Tensor* t = Input(i);
    if (!t || !t->is_constant() || (t->dtype != DataType::kInt32 && t->dtype != DataType::kInt64)) return std::nullopt;
    auto n = t->num_elements();
    if (!n || *n > kMaxFoldElements) return std::nullopt;
    auto values = ReadInts(*t);
    if (!values.ok() || static_cast<std::int64_t>(values->size()) != *n) return std::nullopt;
    return IntValues{t->shape, std::move(*values), t->dtype};
  }
  // Integers from an attribute (older opsets) or a constant input (newer ones).
  std::optional<Ints> IntsFrom(bool from_input, size_t input, const char* attr) const {
    if (from_input) {
      if (!Present(input)) return Ints{};
      auto v = IntInput(input);
      if (!v) return std::nullopt;
      return v->values;
    }
    auto v = attrs_.Ints(attr);
    if (!v.ok()) return std::nullopt;
    return v->value_or(Ints{});
  }
  std::int64_t opset() const { return state_.opset; }

  std::optional<IntValues> Shape() const {
    const Tensor* t = Input(0);
    if (!t || !(t->is_constant() || t->fully_known())) return std::nullopt;
    const auto rank = static_cast<std::int64_t>(t->shape.size());
    auto start = attrs_.Int("start", 0);
    auto end = attrs_.Int("end", rank);
    if (!start.ok() || !end.ok()) return std::nullopt;
    auto clamp = [&](std::int64_t v) { return std::clamp(v < 0 ? v + rank : v, std::int64_t{0}, rank); };
    const std::int64_t b = clamp(*start), e = clamp(*end);
    IntValues out;
    for (std::int64_t i = b; i < e; ++i) out.values.push_back(t->shape[i]);
    out.shape = {static_cast<std::int64_t>(out.values.size())};
    return out;
  }

  std::optional<IntValues> Cast() const {
    const Tensor* t = Input(0);
    const auto* attr = attrs_.Find("to");
    if (!t || !t->is_constant() || !attr) return std::nullopt;
    std::int64_t to = attr->i();
    if (NodeAttributes::TypeOf(*attr) == onnx::AttributeProto::STRING) {
      onnx::TensorProto::DataType parsed;
      if (!onnx::TensorProto::DataType_Parse(attr->s(), &parsed)) return std::nullopt;
      to = parsed;
    }
    if (to != onnx::TensorProto::INT32 && to != onnx::TensorProto::INT64) return std::nullopt;
    auto n = t->num_elements();
    if (!n || *n > kMaxFoldElements) return std::nullopt;
    auto values = ReadDoubles(*t);  // every numeric type; int64 beyond 2^53 is not shape-like
    if (!values.ok() || static_cast<std::int64_t>(values->size()) != *n) return std::nullopt;
    IntValues out;
    out.shape = t->shape;
    out.dtype = to == onnx::TensorProto::INT32 ? DataType::kInt32 : DataType::kInt64;
    for (double v : *values) {
      if (!std::isfinite(v) || std::fabs(v) > 9.0e18) return std::nullopt;
      auto i = static_cast<std::int64_t>(v);  // truncates toward zero, as ONNX does
      out.values.push_back(out.dtype == DataType::kInt32 ? static_cast<std::int32_t>(i) : i);
    }
    return out;
  }

  // Slice of a 1-D tensor along its only axis.
  std::optional<IntValues> Slice() const {
    auto data = IntInput(0);
    if (!data || data->shape.size() != 1) return std::nullopt;
    const bool inputs = opset() >= 10;
    auto starts = IntsFrom(inputs, 1, "starts"), ends = IntsFrom(inputs, 2, "ends");
    auto axes = IntsFrom(inputs, 3, "axes"), steps = IntsFrom(inputs, 4, "steps");
    if (!starts || !ends || !axes || !steps || starts->size() != 1 || ends->size() != 1) return std::nullopt;
    if (!axes->empty() && (axes->size() != 1 || ((*axes)[0] != 0 && (*axes)[0] != -1))) return std::nullopt;
    if (!steps->empty() && steps->size() != 1) return std::nullopt;
    const std::int64_t n = data->shape[0];
    const std::int64_t step = steps->empty() ? 1 : (*steps)[0];
    if (step == 0) return std::nullopt;
    std::int64_t start = (*starts)[0], end = (*ends)[0];
    if (start < 0) start += n;
    if (end < 0) end += n;
    std::int64_t count = 0;
    if (step > 0) {
      start = std::clamp(start, std::int64_t{0}, n);
      end = std::clamp(end, std::int64_t{0}, n);
      if (end > start) count = (end - start - 1) / step + 1;
    } else if (n > 0) {
      start = std::clamp(start, std::int64_t{0}, n - 1);
      end = std::clamp(end, std::int64_t{-1}, n - 1);
      if (start > end) count = step == std::numeric_limits<std::int64_t>::min() ? 1 : (start - end - 1) / -step + 1;
    }
    IntValues out;
    out.dtype = data->dtype;
    for (std::int64_t k = 0, i = start; k < count; ++k, i += (k < count ? step : 0)) out.values.push_back(data->values[i]);
    out.shape = {count};
    return out;
  }

  // Concat of 1-D tensors.
  std::optional<IntValues> Concat() const {
    auto axis = attrs_.Int("axis", 0);
    if (!axis.ok() || (*axis != 0 && *axis != -1) || proto_.input_size() == 0) return std::nullopt;
    IntValues out;
    for (int i = 0; i < proto_.input_size(); ++i) {
      auto part = IntInput(static_cast<size_t>(i));
      if (!part || part->shape.size() != 1) return std::nullopt;
      if (i == 0) out.dtype = part->dtype;
      else if (part->dtype != out.dtype) return std::nullopt;
      out.values.insert(out.values.end(), part->values.begin(), part->values.end());
    }
    if (static_cast<std::int64_t>(out.values.size()) > kMaxFoldElements) return std::nullopt;
    out.shape = {static_cast<std::int64_t>(out.values.size())};
    return out;
  }

  // Gather from a 1-D tensor.
  std::optional<IntValues> Gather() const {
    auto data = IntInput(0), indices = IntInput(1);
    auto axis = attrs_.Int("axis", 0);
    if (!data || !indices || data->shape.size() != 1 || !axis.ok() || (*axis != 0 && *axis != -1)) return std::nullopt;
    const std::int64_t n = data->shape[0];
    IntValues out;
    out.dtype = data->dtype;
    out.shape = indices->shape;
    for (std::int64_t i : indices->values) {
      if (i < -n || i >= n) return std::nullopt;
      out.values.push_back(data->values[i < 0 ? i + n : i]);
    }
    return out;
  }

  std::optional<IntValues> Unsqueeze() const {
    auto data = IntInput(0);
    auto axes = IntsFrom(opset() >= 13, 1, "axes");
    if (!data || !axes || axes->empty()) return std::nullopt;
    const auto out_rank = static_cast<std::int64_t>(data->shape.size() + axes->size());
    std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
    for (auto a : *axes) {
      if (a < -out_rank || a >= out_rank) return std::nullopt;
      const auto i = static_cast<size_t>(a < 0 ? a + out_rank : a);
      if (inserted[i]) return std::nullopt;
      inserted[i] = true;
    }
    latte::Shape shape;
    size_t next = 0;
    for (std::int64_t i = 0; i < out_rank; ++i) shape.push_back(inserted[static_cast<size_t>(i)] ? 1 : data->shape[next++]);
    data->shape = shape;
    return data;
  }

  std::optional<IntValues> Squeeze() const {
    auto data = IntInput(0);
    auto axes = IntsFrom(opset() >= 13, 1, "axes");
    if (!data || !axes) return std::nullopt;
    const auto rank = static_cast<std::int64_t>(data->shape.size());
    std::vector<bool> drop(data->shape.size(), false);
    if (axes->empty()) {
      for (size_t i = 0; i < drop.size(); ++i) drop[i] = data->shape[i] == 1;
    }
    for (auto a : *axes) {
      if (a < -rank || a >= rank) return std::nullopt;
      const auto i = static_cast<size_t>(a < 0 ? a + rank : a);
      if (data->shape[i] != 1) return std::nullopt;
      drop[i] = true;
    }
    latte::Shape shape;
    for (size_t i = 0; i < drop.size(); ++i)
      if (!drop[i]) shape.push_back(data->shape[i]);
    data->shape = shape;
    return data;
  }

  std::optional<IntValues> Reshape() const {
    auto data = IntInput(0);
    auto target = IntsFrom(opset() >= 5, 1, "shape");
    auto allowzero = attrs_.Int("allowzero", 0);
    if (!data || !target || (opset() >= 5 && !Present(1)) || !allowzero.ok()) return std::nullopt;
    const auto total = static_cast<std::int64_t>(data->values.size());
    latte::Shape shape;
    std::int64_t known = 1;
    int infer = -1;
    for (size_t i = 0; i < target->size(); ++i) {
      std::int64_t d = (*target)[i];
      if (d == 0 && *allowzero == 0) {
        if (i >= data->shape.size()) return std::nullopt;
        d = data->shape[i];
      }
      if (d == -1) {
        if (infer >= 0) return std::nullopt;
        infer = static_cast<int>(i);
      } else if (d < 0 || d > kMaxFoldElements) {
        return std::nullopt;
      } else {
        known *= d;
        if (known > kMaxFoldElements) return std::nullopt;
      }
      shape.push_back(d);
    }
    if (infer >= 0) {
      if (known == 0 || total % known != 0) return std::nullopt;
      shape[static_cast<size_t>(infer)] = total / known;
    } else if (known != total) {
      return std::nullopt;
    }
    data->shape = shape;
    return data;
  }

  ImportState& state_;
  const onnx::NodeProto& proto_;
  NodeAttributes attrs_;
};

}  // namespace

bool FoldShapeComputation(ImportState& state, const onnx::NodeProto& proto) {
  if (!IsDefaultDomain(proto.domain()) || proto.output_size() != 1 || proto.output(0).empty()) return false;
  auto out_it = state.values.find(proto.output(0));
  if (out_it == state.values.end()) return false;
  std::optional<IntValues> folded = Folder(state, proto).Fold();
  if (!folded) return false;
  auto data = std::make_shared<std::vector<std::uint8_t>>();
  const size_t size = folded->dtype == DataType::kInt32 ? 4 : 8;
  data->resize(folded->values.size() * size);
  for (size_t i = 0; i < folded->values.size(); ++i) {
    if (size == 4) {
      auto v = static_cast<std::int32_t>(folded->values[i]);
      std::memcpy(data->data() + 4 * i, &v, 4);
    } else {
      std::memcpy(data->data() + 8 * i, &folded->values[i], 8);
    }
  }
  Tensor& out = state.graph.mutable_tensor(out_it->second);
  out.dtype = folded->dtype;
  out.shape = folded->shape;
  out.shape_known = true;
  out.data = std::move(data);
  return true;
}

namespace {

// A constant float32 tensor's values, or nullopt.
std::optional<std::vector<float>> Float32Values(const Tensor& t) {
  if (!t.is_constant() || t.dtype != DataType::kFloat32 || !t.fully_known() || t.data->empty()) return std::nullopt;
  auto v = ConstantFloats(t);
  if (!v.ok() || static_cast<std::int64_t>(v->size()) != t.num_elements()) return std::nullopt;
  return std::move(*v);
}

// BN parameter: a constant of any float type with exactly `channels` values.
std::optional<std::vector<float>> ChannelValues(const Graph& g, TensorId id, std::int64_t channels) {
  if (id == kNoTensor || !g.tensor(id).is_constant() || g.tensor(id).data->empty()) return std::nullopt;
  auto v = ConstantFloats(g.tensor(id));
  if (!v.ok() || static_cast<std::int64_t>(v->size()) != channels) return std::nullopt;
  return std::move(*v);
}

std::shared_ptr<const std::vector<std::uint8_t>> FloatBytes(const std::vector<float>& values) {
  auto bytes = std::make_shared<std::vector<std::uint8_t>>(values.size() * sizeof(float));
  std::memcpy(bytes->data(), values.data(), bytes->size());
  return bytes;
}

// Folds batch_norm node `bn` into conv node `conv`; false (graph untouched) when it cannot.
bool FoldOne(Graph& g, NodeId conv_id, NodeId bn_id) {
  const Node& conv = g.node(conv_id);
  const Node& bn = g.node(bn_id);
  if (conv.input(1) == kNoTensor || bn.outputs.size() != 1) return false;
  const Tensor& w = g.tensor(conv.inputs[1]);
  auto weights = Float32Values(w);
  if (!weights || w.shape.size() != 4) return false;
  const bool transposed = conv.kind == OpKind::kTransposeConv2D;
  const std::int64_t groups = transposed ? conv.attrs.GetInt("groups", 1) : 1;
  if (groups < 1 || groups > (std::int64_t{1} << 40) || (transposed && w.shape[0] % groups != 0)) return false;
  // Output channels: O of OIHW; groups × O-per-group of IOHW.
  const std::int64_t channels = transposed ? w.shape[1] * groups : w.shape[0];
  if (channels < 1) return false;
  std::vector<float> bias(static_cast<size_t>(channels), 0.0f);
  if (conv.input(2) != kNoTensor) {
    auto b = Float32Values(g.tensor(conv.inputs[2]));
    if (!b || static_cast<std::int64_t>(b->size()) != channels) return false;
    bias = std::move(*b);
  }
  auto scale = ChannelValues(g, bn.input(1), channels), shift = ChannelValues(g, bn.input(2), channels);
  auto mean = ChannelValues(g, bn.input(3), channels), var = ChannelValues(g, bn.input(4), channels);
  if (!scale || !shift || !mean || !var) return false;
  const auto epsilon = static_cast<float>(bn.attrs.GetFloat("epsilon", 1e-5));

  std::vector<float> factor(static_cast<size_t>(channels));
  for (size_t c = 0; c < factor.size(); ++c) {
    factor[c] = (*scale)[c] / std::sqrt((*var)[c] + epsilon);
    if (!std::isfinite(factor[c])) return false;  // would turn the weights into inf/nan
  }
  const std::int64_t per_kernel = w.shape[2] * w.shape[3];
  if (!transposed) {
    const std::int64_t per_out = w.shape[1] * per_kernel;
    for (size_t i = 0; i < weights->size(); ++i) (*weights)[i] *= factor[i / static_cast<size_t>(per_out)];
  } else {
    const std::int64_t in_per_group = w.shape[0] / groups, out_per_group = w.shape[1];
    for (std::int64_t i = 0; i < w.shape[0]; ++i)
      for (std::int64_t j = 0; j < out_per_group; ++j) {
        const float f = factor[static_cast<size_t>((i / in_per_group) * out_per_group + j)];
        float* kernel = weights->data() + (i * out_per_group + j) * per_kernel;
        for (std::int64_t k = 0; k < per_kernel; ++k) kernel[k] *= f;
      }
  }
  for (size_t c = 0; c < bias.size(); ++c) bias[c] = (bias[c] - (*mean)[c]) * factor[c] + (*shift)[c];

  Tensor new_w = w;
  new_w.data = FloatBytes(*weights);
  Tensor new_b;
  new_b.name = conv.input(2) != kNoTensor ? g.tensor(conv.inputs[2]).name : g.tensor(bn.inputs[2]).name;
  new_b.dtype = DataType::kFloat32;
  new_b.shape = {channels};
  new_b.shape_known = true;
  new_b.data = FloatBytes(bias);
  const TensorId bn_out = bn.outputs[0];
  const TensorId w_id = g.AddTensor(std::move(new_w));  // invalidates the references above
  const TensorId b_id = g.AddTensor(std::move(new_b));
  Node& folded = g.mutable_node(conv_id);
  folded.inputs = {folded.inputs[0], w_id, b_id};
  folded.outputs = {bn_out};
  return true;
}

}  // namespace

int FoldBatchNorms(Graph& g, std::vector<bool>& removed) {
  removed.resize(g.num_nodes(), false);
  std::vector<NodeId> producer(g.num_tensors(), -1);
  std::vector<int> uses(g.num_tensors(), 0);
  for (NodeId n = 0; n < static_cast<NodeId>(g.num_nodes()); ++n) {
    for (TensorId t : g.node(n).outputs) producer[static_cast<size_t>(t)] = n;
    for (TensorId t : g.node(n).inputs)
      if (t != kNoTensor) ++uses[static_cast<size_t>(t)];
  }
  for (TensorId t : g.outputs) ++uses[static_cast<size_t>(t)];  // a graph output is a use too
  int folded = 0;
  for (NodeId n = 0; n < static_cast<NodeId>(g.num_nodes()); ++n) {
    const Node& bn = g.node(n);
    if (removed[n] || bn.kind != OpKind::kBatchNorm || bn.input(0) == kNoTensor) continue;
    const TensorId x = bn.inputs[0];
    const NodeId p = producer[static_cast<size_t>(x)];
    if (p < 0 || removed[p] || uses[static_cast<size_t>(x)] != 1) continue;
    const Node& conv = g.node(p);
    if (conv.kind != OpKind::kConv2D && conv.kind != OpKind::kDepthwiseConv2D && conv.kind != OpKind::kTransposeConv2D) continue;
    if (conv.outputs.size() != 1 || conv.attrs.GetString("activation", "none") != "none") continue;
    if (!FoldOne(g, p, n)) continue;
    removed[n] = true;
    ++folded;
  }
  return folded;
}

}  // namespace latte::onnx_import
