#include "import/onnx/onnx_folding.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "import/onnx/onnx_attributes.h"
#include "import/onnx/onnx_tensor.h"
#include "ir/shape_inference.h"

namespace latte::onnx_import {
namespace {

using Ints = std::vector<std::int64_t>;
using Reals = std::vector<double>;

// Shape arithmetic is small; a bigger computed tensor is real data and is left to the graph.
constexpr std::int64_t kMaxFoldElements = 1 << 16;
// ConstantOfShape, Range, Expand and Tile only fill or copy: their outputs (a pad's zeros, a
// mask) may be bigger, up to 16 MB of float32.
constexpr std::int64_t kMaxFillElements = 1 << 22;

bool IsReal(DataType t) { return t == DataType::kFloat32 || t == DataType::kFloat64; }

// The types the folder computes in: every integer type Latte has, bool, float32 and float64
// (float16 would need rounding to half on every step: left to the graph).
bool IsFoldable(DataType t) {
  switch (t) {
    case DataType::kInt8: case DataType::kUInt8: case DataType::kInt16: case DataType::kInt32:
    case DataType::kInt64: case DataType::kBool: case DataType::kFloat32: case DataType::kFloat64: return true;
    default: return false;
  }
}

// Whether integer `v` fits integer (or bool) type `t`.
bool Fits(DataType t, std::int64_t v) {
  switch (t) {
    case DataType::kBool: return v == 0 || v == 1;
    case DataType::kInt8: return v >= -128 && v <= 127;
    case DataType::kUInt8: return v >= 0 && v <= 255;
    case DataType::kInt16: return v >= -32768 && v <= 32767;
    case DataType::kInt32: return v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max();
    default: return true;
  }
}

// A float value rounded to `t` (float32 arithmetic done in double and rounded once is exact:
// double has more than twice float's precision).
double RoundTo(DataType t, double v) { return t == DataType::kFloat32 ? static_cast<double>(static_cast<float>(v)) : v; }

// A small constant as the folder computes with it: integers and bools exactly as int64,
// floats as doubles holding values of their type.
struct Values {
  Shape shape;
  DataType dtype = DataType::kInt64;
  Ints ints;    // integer and bool types
  Reals reals;  // float32 and float64

  bool real() const { return IsReal(dtype); }
  std::int64_t size() const { return static_cast<std::int64_t>(real() ? reals.size() : ints.size()); }
  double Real(std::int64_t i) const { return real() ? reals[static_cast<size_t>(i)] : static_cast<double>(ints[static_cast<size_t>(i)]); }
  // An empty tensor of the same type, shaped `s`.
  Values Like(Shape s, DataType type) const { return Values{std::move(s), type, {}, {}}; }
  // Appends element `i` of `from` (of the same type).
  void Append(const Values& from, std::int64_t i) {
    if (real()) reals.push_back(from.reals[static_cast<size_t>(i)]);
    else ints.push_back(from.ints[static_cast<size_t>(i)]);
  }
};

// A constant of a type the folder computes in, with at most kMaxFoldElements values.
std::optional<Values> ValuesOf(const Tensor& t) {
  if (!t.is_constant() || !IsFoldable(t.dtype)) return std::nullopt;
  auto n = t.num_elements();
  if (!n || *n > kMaxFoldElements) return std::nullopt;
  Values v{t.shape, t.dtype, {}, {}};
  if (v.real()) {
    auto values = ReadDoubles(t);
    if (!values.ok()) return std::nullopt;
    v.reals = std::move(*values);
  } else {
    auto values = ReadInts(t);
    if (!values.ok()) return std::nullopt;
    v.ints = std::move(*values);
  }
  if (v.size() != *n) return std::nullopt;
  return v;
}

// For each element of `out` (a broadcast of `in`), the index of the element of `in` it reads.
Ints SourceIndex(const Shape& in, const Shape& out) {
  const size_t rank = out.size(), offset = rank - in.size();
  Ints stride(rank, 0);
  std::int64_t step = 1;
  for (size_t i = in.size(); i-- > 0;) {
    stride[i + offset] = in[i] == 1 ? 0 : step;
    step *= in[i];
  }
  const std::int64_t total = ShapeElements(out).value_or(0);
  Ints index(static_cast<size_t>(total));
  Ints pos(rank, 0);
  std::int64_t src = 0;
  for (std::int64_t k = 0; k < total; ++k) {
    index[static_cast<size_t>(k)] = src;
    for (size_t d = rank; d-- > 0;) {
      src += stride[d];
      if (++pos[d] < out[d]) break;
      src -= stride[d] * out[d];
      pos[d] = 0;
    }
  }
  return index;
}
class Folder {
 public:
  Folder(ImportState& state, const onnx::NodeProto& proto) : state_(state), proto_(proto), attrs_(proto) {}

  using Rule = std::optional<Values> (Folder::*)();
  static const std::unordered_map<std::string_view, Rule>& Rules() {
    static const std::unordered_map<std::string_view, Rule> rules = {
        {"Shape", &Folder::Shape}, {"Size", &Folder::Size}, {"Cast", &Folder::Cast},
        {"Slice", &Folder::Slice}, {"Concat", &Folder::Concat}, {"Gather", &Folder::Gather},
        {"Unsqueeze", &Folder::Unsqueeze}, {"Squeeze", &Folder::Squeeze}, {"Reshape", &Folder::Reshape},
        {"Identity", &Folder::Identity}, {"Add", &Folder::Arithmetic}, {"Sub", &Folder::Arithmetic},
        {"Mul", &Folder::Arithmetic}, {"Div", &Folder::Arithmetic}, {"Mod", &Folder::Arithmetic},
        {"Min", &Folder::MinMax}, {"Max", &Folder::MinMax}, {"Equal", &Folder::Compare},
        {"Less", &Folder::Compare}, {"Greater", &Folder::Compare}, {"LessOrEqual", &Folder::Compare},
        {"GreaterOrEqual", &Folder::Compare}, {"And", &Folder::Logic}, {"Or", &Folder::Logic},
        {"Xor", &Folder::Logic}, {"Not", &Folder::Unary}, {"Neg", &Folder::Unary}, {"Abs", &Folder::Unary},
        {"Floor", &Folder::Unary}, {"Ceil", &Folder::Unary}, {"Round", &Folder::Unary},
        {"Where", &Folder::Where}, {"ConstantOfShape", &Folder::ConstantOfShape}, {"Range", &Folder::Range},
        {"Expand", &Folder::Expand}, {"Tile", &Folder::Tile},
    };
    return rules;
  }

  std::optional<Values> Fold() {
    auto it = Rules().find(proto_.op_type());
    if (it == Rules().end()) return std::nullopt;
    return (this->*(it->second))();
  }

  // Why the last Fold() gave nothing: its own reason, else the first input that is not a
  // constant, else a general one.
  std::string WhyNot() const {
    if (!why_.empty()) return why_;
    const bool shape_only = proto_.op_type() == "Shape" || proto_.op_type() == "Size";
    for (int i = 0; i < proto_.input_size(); ++i) {
      if (proto_.input(i).empty()) continue;
      const Tensor* t = Input(static_cast<size_t>(i));
      if (shape_only && t && !t->fully_known() && !t->is_constant())
        return "the shape of '" + proto_.input(i) + "' is not known at import";
      if (!shape_only && t && !t->is_constant()) return "input '" + proto_.input(i) + "' is not a constant at import";
    }
    return "its constant inputs are of a type, rank or size Latte does not compute";
  }

 private:
  const Tensor* Input(size_t i) const {
    if (i >= static_cast<size_t>(proto_.input_size()) || proto_.input(static_cast<int>(i)).empty()) return nullptr;
    auto it = state_.values.find(proto_.input(static_cast<int>(i)));
    return it == state_.values.end() ? nullptr : &state_.graph.tensor(it->second);
  }
  bool Present(size_t i) const { return Input(i) != nullptr; }
  std::optional<Values> Fail(std::string why) {
    why_ = std::move(why);
    return std::nullopt;
  }

  // A small constant input of a type the folder computes in.
  std::optional<Values> Const(size_t i) const {
    const Tensor* t = Input(i);
    return t ? ValuesOf(*t) : std::nullopt;
  }
  std::optional<Values> IntInput(size_t i) const {
    auto v = Const(i);
    if (!v || v->real() || v->dtype == DataType::kBool) return std::nullopt;
    return v;
  }
  // Integers from an attribute (older opsets) or a constant input (newer ones).
  std::optional<Ints> IntsFrom(bool from_input, size_t input, const char* attr) const {
    if (from_input) {
      if (!Present(input)) return Ints{};
      auto v = IntInput(input);
      if (!v) return std::nullopt;
      return v->ints;
    }
    auto v = attrs_.Ints(attr);
    if (!v.ok()) return std::nullopt;
    return v->value_or(Ints{});
  }
  std::int64_t opset() const { return state_.opset; }
  // Output values within `cap` elements, else a reason.
  bool WithinCap(const latte::Shape& shape, std::int64_t cap) {
    auto n = ShapeElements(shape);
    if (n && *n <= cap) return true;
    why_ = "its output " + ShapeToString(shape) + " has more than the " + std::to_string(cap) +
           " elements Latte folds into constant data";
    return false;
  }

  std::optional<Values> Identity() { return Const(0); }

  std::optional<Values> Shape() {
    const Tensor* t = Input(0);
    if (!t || !(t->is_constant() || t->fully_known())) return std::nullopt;
    const auto rank = static_cast<std::int64_t>(t->shape.size());
    auto start = attrs_.Int("start", 0);
    auto end = attrs_.Int("end", rank);
    if (!start.ok() || !end.ok()) return std::nullopt;
    auto clamp = [&](std::int64_t v) { return std::clamp(v < 0 ? v + rank : v, std::int64_t{0}, rank); };
    const std::int64_t b = clamp(*start), e = clamp(*end);
    Values out;
    for (std::int64_t i = b; i < e; ++i) out.ints.push_back(t->shape[i]);
    out.shape = {out.size()};
    return out;
  }

  std::optional<Values> Size() {
    const Tensor* t = Input(0);
    if (!t || !t->fully_known()) return std::nullopt;
    auto n = t->num_elements();
    if (!n) return std::nullopt;
    return Values{{}, DataType::kInt64, {*n}, {}};
  }

  std::optional<Values> Cast() {
    auto in = Const(0);
    const auto* attr = attrs_.Find("to");
    if (!in || !attr) return std::nullopt;
    std::int64_t to = attr->i();
    if (NodeAttributes::TypeOf(*attr) == onnx::AttributeProto::STRING) {
      onnx::TensorProto::DataType parsed;
      if (!onnx::TensorProto::DataType_Parse(attr->s(), &parsed)) return std::nullopt;
      to = parsed;
    }
    if (to < 0 || to > std::numeric_limits<std::int32_t>::max()) return std::nullopt;
    const DataType type = DataTypeFromOnnx(static_cast<std::int32_t>(to));
    if (!IsFoldable(type)) return Fail("Latte does not fold a Cast to " + OnnxTypeName(static_cast<std::int32_t>(to)));
    Values out = in->Like(in->shape, type);
    for (std::int64_t i = 0; i < in->size(); ++i) {
      if (out.real()) {
        // Integers beyond 2^53 would round twice (to double, then to float): not folded.
        if (!in->real() && std::llabs(in->ints[static_cast<size_t>(i)]) > (std::int64_t{1} << 53)) return std::nullopt;
        out.reals.push_back(RoundTo(type, in->Real(i)));
      } else if (type == DataType::kBool) {
        out.ints.push_back(in->Real(i) != 0 ? 1 : 0);
      } else {
        std::int64_t v = 0;
        if (in->real()) {
          const double d = std::trunc(in->reals[static_cast<size_t>(i)]);  // toward zero, as ONNX does
          if (!std::isfinite(d) || std::fabs(d) >= 9.2e18) return Fail("a value does not fit the type it is cast to");
          v = static_cast<std::int64_t>(d);
        } else {
          v = in->ints[static_cast<size_t>(i)];
        }
        if (!Fits(type, v)) return Fail("a value does not fit the type it is cast to");
        out.ints.push_back(v);
      }
    }
    return out;
  }

  // Slice of a 1-D tensor along its only axis.
  std::optional<Values> Slice() {
    auto data = Const(0);
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
    Values out = data->Like({count}, data->dtype);
    for (std::int64_t k = 0, i = start; k < count; ++k, i += (k < count ? step : 0)) out.Append(*data, i);
    return out;
  }

  // Concat along any axis of tensors of one type.
  std::optional<Values> Concat() {
    auto axis = attrs_.Int("axis", 0);
    if (!axis.ok() || proto_.input_size() == 0) return std::nullopt;
    std::vector<Values> parts;
    for (int i = 0; i < proto_.input_size(); ++i) {
      auto part = Const(static_cast<size_t>(i));
      if (!part || part->shape.empty() || part->dtype != (parts.empty() ? part->dtype : parts[0].dtype) ||
          part->shape.size() != (parts.empty() ? part->shape.size() : parts[0].shape.size()))
        return std::nullopt;
      parts.push_back(std::move(*part));
    }
    const auto rank = static_cast<std::int64_t>(parts[0].shape.size());
    if (*axis < -rank || *axis >= rank) return std::nullopt;
    const auto a = static_cast<size_t>(*axis < 0 ? *axis + rank : *axis);
    latte::Shape shape = parts[0].shape;
    shape[a] = 0;
    for (const Values& p : parts) {
      for (size_t d = 0; d < shape.size(); ++d)
        if (d != a && p.shape[d] != shape[d]) return std::nullopt;
      shape[a] += p.shape[a];
    }
    if (!WithinCap(shape, kMaxFoldElements)) return std::nullopt;
    std::int64_t outer = 1;
    for (size_t d = 0; d < a; ++d) outer *= shape[d];
    Values out = parts[0].Like(shape, parts[0].dtype);
    for (std::int64_t o = 0; o < outer; ++o)
      for (const Values& p : parts) {
        const std::int64_t chunk = outer == 0 ? 0 : p.size() / outer;
        for (std::int64_t k = 0; k < chunk; ++k) out.Append(p, o * chunk + k);
      }
    return out;
  }

  // Gather along any axis: data.shape[:axis] + indices.shape + data.shape[axis+1:].
  std::optional<Values> Gather() {
    auto data = Const(0), indices = IntInput(1);
    auto axis = attrs_.Int("axis", 0);
    if (!data || !indices || data->shape.empty() || !axis.ok()) return std::nullopt;
    const auto rank = static_cast<std::int64_t>(data->shape.size());
    if (*axis < -rank || *axis >= rank) return std::nullopt;
    const auto a = static_cast<size_t>(*axis < 0 ? *axis + rank : *axis);
    latte::Shape shape(data->shape.begin(), data->shape.begin() + static_cast<std::ptrdiff_t>(a));
    shape.insert(shape.end(), indices->shape.begin(), indices->shape.end());
    shape.insert(shape.end(), data->shape.begin() + static_cast<std::ptrdiff_t>(a) + 1, data->shape.end());
    if (!WithinCap(shape, kMaxFoldElements)) return std::nullopt;
    const std::int64_t n = data->shape[a];
    std::int64_t outer = 1, inner = 1;
    for (size_t d = 0; d < a; ++d) outer *= data->shape[d];
    for (size_t d = a + 1; d < data->shape.size(); ++d) inner *= data->shape[d];
    Values out = data->Like(shape, data->dtype);
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::int64_t i : indices->ints) {
        if (i < -n || i >= n) return Fail("index " + std::to_string(i) + " is out of range for " + std::to_string(n) + " values");
        for (std::int64_t k = 0; k < inner; ++k) out.Append(*data, (o * n + (i < 0 ? i + n : i)) * inner + k);
      }
    return out;
  }

  std::optional<Values> Unsqueeze() {
    auto data = Const(0);
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

  std::optional<Values> Squeeze() {
    auto data = Const(0);
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

  std::optional<Values> Reshape() {
    auto data = Const(0);
    auto target = IntsFrom(opset() >= 5, 1, "shape");
    auto allowzero = attrs_.Int("allowzero", 0);
    if (!data || !target || (opset() >= 5 && !Present(1)) || !allowzero.ok()) return std::nullopt;
    const std::int64_t total = data->size();
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

  // --- elementwise, with numpy broadcasting ---------------------------------------------

  // Inputs `first`.. of one type, broadcast to one shape (`index[i][k]`: the element of
  // input i that output element k reads).
  struct Operands {
    std::vector<Values> values;
    latte::Shape shape;
    std::vector<Ints> index;
  };
  std::optional<Operands> Broadcast(size_t first, size_t count, bool same_type = true) {
    Operands ops;
    for (size_t i = first; i < first + count; ++i) {
      auto v = Const(i);
      if (!v) return std::nullopt;
      if (same_type && !ops.values.empty() && v->dtype != ops.values[0].dtype) return std::nullopt;
      ops.values.push_back(std::move(*v));
    }
    ops.shape = ops.values[0].shape;
    for (const Values& v : ops.values) {
      auto shape = BroadcastShapes(ops.shape, v.shape);
      if (!shape.ok()) return std::nullopt;
      ops.shape = *shape;
    }
    if (!WithinCap(ops.shape, kMaxFoldElements)) return std::nullopt;
    for (const Values& v : ops.values) ops.index.push_back(SourceIndex(v.shape, ops.shape));
    return ops;
  }
  static std::int64_t At(const Operands& ops, size_t input, size_t k) {
    return ops.values[input].ints[static_cast<size_t>(ops.index[input][k])];
  }
  static double RealAt(const Operands& ops, size_t input, size_t k) {
    return ops.values[input].Real(ops.index[input][k]);
  }

  // Add, Sub, Mul, Div (integers toward zero, as ONNX defines it) and Mod.
  std::optional<Values> Arithmetic() {
    auto ops = Broadcast(0, 2);
    if (!ops || ops->values[0].dtype == DataType::kBool) return std::nullopt;
    const std::string& op = proto_.op_type();
    auto fmod = attrs_.Int("fmod", 0);
    if (!fmod.ok()) return std::nullopt;
    const DataType type = ops->values[0].dtype;
    Values out = ops->values[0].Like(ops->shape, type);
    const size_t n = ops->index[0].size();
    for (size_t k = 0; k < n; ++k) {
      if (out.real()) {
        const double a = RealAt(*ops, 0, k), b = RealAt(*ops, 1, k);
        double r = 0;
        if (op == "Add") r = a + b;
        else if (op == "Sub") r = a - b;
        else if (op == "Mul") r = a * b;
        else if (op == "Div") r = a / b;
        else if (*fmod == 1) r = std::fmod(a, b);
        else return Fail("Mod of floats needs fmod=1");
        out.reals.push_back(RoundTo(type, r));
        continue;
      }
      const std::int64_t a = At(*ops, 0, k), b = At(*ops, 1, k);
      std::int64_t r = 0;
      bool overflow = false;
      if (op == "Add") overflow = __builtin_add_overflow(a, b, &r);
      else if (op == "Sub") overflow = __builtin_sub_overflow(a, b, &r);
      else if (op == "Mul") overflow = __builtin_mul_overflow(a, b, &r);
      else if (b == 0) return Fail("it divides by zero");
      else if (a == std::numeric_limits<std::int64_t>::min() && b == -1) overflow = true;
      else if (op == "Div") r = a / b;  // C++ truncates toward zero, as ONNX's integer Div
      else {
        r = a % b;  // fmod=1: the sign of the dividend; fmod=0: of the divisor
        if (*fmod == 0 && r != 0 && ((r < 0) != (b < 0))) r += b;
      }
      if (overflow || !Fits(type, r)) return Fail("its result overflows " + std::string(DataTypeName(type)));
      out.ints.push_back(r);
    }
    return out;
  }

  std::optional<Values> MinMax() {
    if (proto_.input_size() < 1) return std::nullopt;
    auto ops = Broadcast(0, static_cast<size_t>(proto_.input_size()));
    if (!ops || ops->values[0].dtype == DataType::kBool) return std::nullopt;
    const bool max = proto_.op_type() == "Max";
    Values out = ops->values[0].Like(ops->shape, ops->values[0].dtype);
    for (size_t k = 0; k < ops->index[0].size(); ++k) {
      if (out.real()) {
        double r = RealAt(*ops, 0, k);
        for (size_t i = 0; i < ops->values.size(); ++i) {
          const double v = RealAt(*ops, i, k);
          if (std::isnan(v)) return Fail("an input is NaN");
          r = max ? std::max(r, v) : std::min(r, v);
        }
        out.reals.push_back(r);
      } else {
        std::int64_t r = At(*ops, 0, k);
        for (size_t i = 1; i < ops->values.size(); ++i) r = max ? std::max(r, At(*ops, i, k)) : std::min(r, At(*ops, i, k));
        out.ints.push_back(r);
      }
    }
    return out;
  }

  std::optional<Values> Compare() {
    auto ops = Broadcast(0, 2);
    if (!ops) return std::nullopt;
    const std::string& op = proto_.op_type();
    Values out{ops->shape, DataType::kBool, {}, {}};
    const bool real = ops->values[0].real();
    for (size_t k = 0; k < ops->index[0].size(); ++k) {
      // Integers compared as integers (int64 beyond 2^53 is exact only so).
      const int c = real ? (RealAt(*ops, 0, k) < RealAt(*ops, 1, k) ? -1 : RealAt(*ops, 0, k) > RealAt(*ops, 1, k) ? 1 : 0)
                         : (At(*ops, 0, k) < At(*ops, 1, k) ? -1 : At(*ops, 0, k) > At(*ops, 1, k) ? 1 : 0);
      const bool unordered = real && (std::isnan(RealAt(*ops, 0, k)) || std::isnan(RealAt(*ops, 1, k)));
      bool r = false;
      if (op == "Equal") r = c == 0;
      else if (op == "Less") r = c < 0;
      else if (op == "Greater") r = c > 0;
      else if (op == "LessOrEqual") r = c <= 0;
      else r = c >= 0;
      out.ints.push_back(r && !unordered ? 1 : 0);
    }
    return out;
  }

  std::optional<Values> Logic() {
    auto ops = Broadcast(0, 2);
    if (!ops || ops->values[0].dtype != DataType::kBool) return std::nullopt;
    const std::string& op = proto_.op_type();
    Values out{ops->shape, DataType::kBool, {}, {}};
    for (size_t k = 0; k < ops->index[0].size(); ++k) {
      const bool a = At(*ops, 0, k) != 0, b = At(*ops, 1, k) != 0;
      out.ints.push_back((op == "And" ? a && b : op == "Or" ? a || b : a != b) ? 1 : 0);
    }
    return out;
  }

  // Not (bool), Neg and Abs (numbers), Floor, Ceil and Round (floats; Round to even).
  std::optional<Values> Unary() {
    auto in = Const(0);
    if (!in) return std::nullopt;
    const std::string& op = proto_.op_type();
    const bool is_bool = in->dtype == DataType::kBool;
    if ((op == "Not") != is_bool) return std::nullopt;
    if ((op == "Floor" || op == "Ceil" || op == "Round") && !in->real()) return std::nullopt;
    Values out = in->Like(in->shape, in->dtype);
    for (std::int64_t i = 0; i < in->size(); ++i) {
      if (in->real()) {
        const double v = in->reals[static_cast<size_t>(i)];
        out.reals.push_back(op == "Neg" ? -v : op == "Abs" ? std::fabs(v) : op == "Floor" ? std::floor(v)
                            : op == "Ceil" ? std::ceil(v) : std::nearbyint(v));
        continue;
      }
      const std::int64_t v = in->ints[static_cast<size_t>(i)];
      if (op == "Not") {
        out.ints.push_back(v == 0 ? 1 : 0);
        continue;
      }
      if (v == std::numeric_limits<std::int64_t>::min()) return Fail("its result overflows int64");
      const std::int64_t r = op == "Abs" && v >= 0 ? v : -v;
      if (!Fits(in->dtype, r)) return Fail("its result overflows " + std::string(DataTypeName(in->dtype)));
      out.ints.push_back(r);
    }
    return out;
  }

  std::optional<Values> Where() {
    auto cond = Const(0);
    if (!cond || cond->dtype != DataType::kBool) return std::nullopt;
    auto ops = Broadcast(0, 3, /*same_type=*/false);
    if (!ops || ops->values[1].dtype != ops->values[2].dtype) return std::nullopt;
    Values out = ops->values[1].Like(ops->shape, ops->values[1].dtype);
    for (size_t k = 0; k < ops->index[0].size(); ++k) {
      const size_t from = At(*ops, 0, k) != 0 ? 1 : 2;
      out.Append(ops->values[from], ops->index[from][k]);
    }
    return out;
  }

  // --- filled and repeated constants ----------------------------------------------------

  std::optional<Values> ConstantOfShape() {
    auto dims = IntInput(0);
    if (!dims || dims->shape.size() != 1) return std::nullopt;
    for (std::int64_t d : dims->ints)
      if (d < 0) return Fail("its shape has a negative dim");
    if (!WithinCap(dims->ints, kMaxFillElements)) return std::nullopt;
    Values fill{{}, DataType::kFloat32, {}, {0.0}};  // the default: a float32 zero
    auto value = attrs_.Tensor("value");
    if (!value.ok()) return std::nullopt;
    if (*value) {
      auto t = TensorFromProto(**value, "value");
      if (!t.ok() || !IsFoldable(t->dtype)) return Fail("its fill value is of a type Latte does not fold");
      auto v = ValuesOf(*t);
      if (!v || v->size() != 1) return std::nullopt;
      fill = std::move(*v);
    }
    const std::int64_t n = ShapeElements(dims->ints).value_or(0);
    Values out = fill.Like(dims->ints, fill.dtype);
    if (out.real()) out.reals.assign(static_cast<size_t>(n), fill.reals[0]);
    else out.ints.assign(static_cast<size_t>(n), fill.ints[0]);
    return out;
  }

  // Range(start, limit, delta): max(ceil((limit - start) / delta), 0) values start + i·delta.
  std::optional<Values> Range() {
    auto ops = Broadcast(0, 3);
    if (!ops || ops->shape.size() > 1 || ops->index[0].size() != 1 || ops->values[0].dtype == DataType::kBool)
      return std::nullopt;
    for (const Values& v : ops->values)
      if (v.size() != 1) return std::nullopt;
    const DataType type = ops->values[0].dtype;
    Values out = ops->values[0].Like({0}, type);
    if (!out.real()) {
      const std::int64_t start = ops->values[0].ints[0], limit = ops->values[1].ints[0], delta = ops->values[2].ints[0];
      if (delta == 0) return Fail("its delta is 0");
      std::int64_t span = 0;
      if (__builtin_sub_overflow(limit, start, &span)) return Fail("its bounds are too far apart");
      std::int64_t n = span / delta + (span % delta != 0 && ((span < 0) == (delta < 0)) ? 1 : 0);  // ceil
      if (n < 0) n = 0;
      if (n > kMaxFillElements) return Fail("it makes more than the " + std::to_string(kMaxFillElements) + " values Latte folds");
      for (std::int64_t i = 0; i < n; ++i) out.ints.push_back(start + i * delta);
      out.shape = {n};
      return out;
    }
    const double start = ops->values[0].reals[0], limit = ops->values[1].reals[0], delta = ops->values[2].reals[0];
    if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) || !std::isfinite(delta)) return Fail("its bounds are not finite or its delta is 0");
    const double count = std::ceil(RoundTo(type, RoundTo(type, limit - start) / delta));
    const std::int64_t n = count > 0 ? static_cast<std::int64_t>(std::min(count, 1e18)) : 0;
    if (n > kMaxFillElements) return Fail("it makes more than the " + std::to_string(kMaxFillElements) + " values Latte folds");
    // Runtimes add delta step by step, the spec multiplies: folded only where both agree.
    double running = start;
    for (std::int64_t i = 0; i < n; ++i, running = RoundTo(type, running + delta)) {
      const double product = RoundTo(type, start + RoundTo(type, static_cast<double>(i) * delta));
      if (product != running) return Fail("its float values depend on how a runtime accumulates them");
      out.reals.push_back(product);
    }
    out.shape = {n};
    return out;
  }

  std::optional<Values> Expand() {
    auto data = Const(0);
    auto dims = IntInput(1);
    if (!data || !dims || dims->shape.size() != 1) return std::nullopt;
    auto shape = BroadcastShapes(data->shape, dims->ints);  // both ways, as ONNX's Expand
    if (!shape.ok()) return std::nullopt;
    if (!WithinCap(*shape, kMaxFillElements)) return std::nullopt;
    Values out = data->Like(*shape, data->dtype);
    for (std::int64_t i : SourceIndex(data->shape, *shape)) out.Append(*data, i);
    return out;
  }

  std::optional<Values> Tile() {
    auto data = Const(0);
    auto repeats = IntInput(1);
    if (!data || !repeats || repeats->ints.size() != data->shape.size()) return std::nullopt;
    latte::Shape shape = data->shape;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (repeats->ints[d] < 0) return Fail("a repeat count is negative");
      if (__builtin_mul_overflow(shape[d], repeats->ints[d], &shape[d])) return std::nullopt;
    }
    if (!WithinCap(shape, kMaxFillElements)) return std::nullopt;
    Values out = data->Like(shape, data->dtype);
    const std::int64_t total = ShapeElements(shape).value_or(0);
    const size_t rank = shape.size();
    Ints pos(rank, 0);
    for (std::int64_t k = 0; k < total; ++k) {
      std::int64_t src = 0;
      for (size_t d = 0; d < rank; ++d) src = src * data->shape[d] + pos[d] % data->shape[d];
      out.Append(*data, src);
      for (size_t d = rank; d-- > 0;) {
        if (++pos[d] < shape[d]) break;
        pos[d] = 0;
      }
    }
    return out;
  }

  ImportState& state_;
  const onnx::NodeProto& proto_;
  NodeAttributes attrs_;
  std::string why_;
};

// The values as constant data of their type.
std::shared_ptr<std::vector<std::uint8_t>> Bytes(const Values& v) {
  auto data = std::make_shared<std::vector<std::uint8_t>>();
  data->reserve(static_cast<size_t>(v.size()) * DataTypeSize(v.dtype));
  auto put = [&](auto x) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(&x);
    data->insert(data->end(), p, p + sizeof(x));
  };
  for (std::int64_t i = 0; i < v.size(); ++i) {
    const auto k = static_cast<size_t>(i);
    switch (v.dtype) {
      case DataType::kFloat32: put(static_cast<float>(v.reals[k])); break;
      case DataType::kFloat64: put(v.reals[k]); break;
      case DataType::kInt8: put(static_cast<std::int8_t>(v.ints[k])); break;
      case DataType::kUInt8: case DataType::kBool: put(static_cast<std::uint8_t>(v.ints[k])); break;
      case DataType::kInt16: put(static_cast<std::int16_t>(v.ints[k])); break;
      case DataType::kInt32: put(static_cast<std::int32_t>(v.ints[k])); break;
      default: put(v.ints[k]); break;
    }
  }
  return data;
}

}  // namespace

bool FoldConstantNode(ImportState& state, const onnx::NodeProto& proto, std::string* why_not) {
  if (!IsDefaultDomain(proto.domain()) || proto.output_size() != 1 || proto.output(0).empty()) return false;
  auto out_it = state.values.find(proto.output(0));
  if (out_it == state.values.end()) return false;
  Folder folder(state, proto);
  std::optional<Values> folded = folder.Fold();
  if (!folded) {
    if (why_not && Folder::Rules().count(proto.op_type())) *why_not = folder.WhyNot();
    return false;
  }
  Tensor& out = state.graph.mutable_tensor(out_it->second);
  out.dtype = folded->dtype;
  out.shape = folded->shape;
  out.shape_known = true;
  out.data = Bytes(*folded);
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
