#include "ir/kernel_params.h"

#include <algorithm>
#include <functional>
#include <set>
#include <utility>

namespace latte {
namespace {

// The largest size a kernel graph is built with (kernel_graph bounds its tensors alike).
constexpr std::int64_t kMaxValue = std::int64_t{1} << 31;

// Which kernels of a family store a key, as ReadCheckedParams requires it.
enum class StoredBy {
  kAll,
  kTransposeConv,  // transpose_conv2d's alone
  kTablesOnly,     // only tables measured elsewhere: no kernel Latte builds has it
};

// One stored key: the field it is (a plain one or an optional one), its default, the range a
// kernel graph is built with (a size's unless said), and whether 0 is plausible (ParamMayBeZero).
template <class T>
struct Field {
  std::string key;
  std::function<std::int64_t*(T&)> value;
  std::function<std::optional<std::int64_t>*(T&)> optional;
  std::int64_t fallback = 0;
  std::int64_t min = 1, max = kMaxValue;
  bool zero_ok = false;
  StoredBy stored_by = StoredBy::kAll;

  // Builders, as in Entry("pt", &P::pt).NonNegative().
  Field Default(std::int64_t v) && { fallback = v; return std::move(*this); }
  Field Between(std::int64_t lo, std::int64_t hi) && { min = lo, max = hi; return std::move(*this); }
  Field MayBeZero() && { zero_ok = true; return std::move(*this); }
  Field NonNegative() && { return std::move(*this).Between(0, kMaxValue).MayBeZero(); }  // pads
  Field Flag() && { return std::move(*this).Between(0, 1).MayBeZero(); }
  Field StoredOnlyBy(StoredBy by) && { stored_by = by; return std::move(*this); }
};
template <class T>
using Fields = std::vector<Field<T>>;

// A plain field (an absent key reads as `fallback`), or an optional one.
template <class T, class Struct>
Field<T> Entry(std::string key, std::int64_t Struct::*member, std::int64_t fallback = 0) {
  Field<T> f;
  f.key = std::move(key);
  f.value = [member](T& p) { return &(p.*member); };
  return std::move(f).Default(fallback);
}
template <class T>
Field<T> Entry(std::string key, std::optional<std::int64_t> T::*member) {
  Field<T> f;
  f.key = std::move(key);
  f.optional = [member](T& p) { return &(p.*member); };
  return f;
}

template <class T>
Fields<T> Join(std::initializer_list<Fields<T>> parts) {
  Fields<T> all;
  for (const Fields<T>& part : parts) all.insert(all.end(), part.begin(), part.end());
  return all;
}

// Fields prefix0 .. prefix{N-1} of an array, each like `like`.
template <class T, std::size_t N>
Fields<T> ArrayFields(const std::string& prefix, std::array<std::int64_t, N> T::*member, Field<T> like) {
  Fields<T> fields;
  for (std::size_t i = 0; i < N; ++i) {
    like.key = prefix;  // built in steps, as ConcatSizeKey
    like.key += std::to_string(i);
    like.value = [member, i](T& p) { return &(p.*member)[i]; };
    fields.push_back(like);
  }
  return fields;
}

template <class T>
Fields<T> NhwcFields() {
  return {Entry<T>("n", &T::n, 1), Entry<T>("h", &T::h), Entry<T>("w", &T::w), Entry<T>("c", &T::c)};
}
// What convs, pools and resizes share: the input's n ih iw, a window's kh kw sh sw and its pads
// pt pl pb pr (a conv's optional).
template <class T>
Fields<T> InputFields() {
  return {Entry<T>("n", &T::n, 1), Entry<T>("ih", &T::ih), Entry<T>("iw", &T::iw)};
}
template <class T>
Fields<T> WindowFields() {
  return {Entry<T>("kh", &T::kh, 1), Entry<T>("kw", &T::kw, 1), Entry<T>("sh", &T::sh, 1), Entry<T>("sw", &T::sw, 1)};
}
template <class T>
Fields<T> PadFields() {
  return {Entry<T>("pt", &T::pt).NonNegative(), Entry<T>("pl", &T::pl).NonNegative(),
          Entry<T>("pb", &T::pb).NonNegative(), Entry<T>("pr", &T::pr).NonNegative()};
}

// Concat's inputs are counted, each one's size keyed by its position.
constexpr const char* kConcatCount = "inputs";
constexpr std::int64_t kMaxConcatInputs = 4096;
std::string ConcatSizeKey(std::size_t input) {
  std::string key = "d";  // built in steps: GCC 12 warns (-Wrestrict) on "d" + to_string(input)
  key += std::to_string(input);
  return key;
}

// Each family's keys, in the order ReadCheckedParams checks them: Table(Tag<T>) makes them once.
template <class T>
struct Tag {};

Fields<ConvKernelParams> Table(Tag<ConvKernelParams>) {
  using P = ConvKernelParams;
  return Join<P>({
      InputFields<P>(),
      {Entry<P>("ic", &P::ic), Entry<P>("oc", &P::oc)},
      WindowFields<P>(),
      {Entry<P>("dh", &P::dh), Entry<P>("dw", &P::dw), Entry<P>("g", &P::g, 1)},  // depthwise: g is ic (ReadRest)
      PadFields<P>(),
      {Entry<P>("bias", &P::bias).Flag(), Entry<P>("oh", &P::oh).StoredOnlyBy(StoredBy::kTransposeConv),
       Entry<P>("ow", &P::ow).StoredOnlyBy(StoredBy::kTransposeConv),
       Entry<P>("elmt_fused", &P::elmt_fused).Flag().StoredOnlyBy(StoredBy::kTablesOnly)},
  });
}

Fields<FullyConnectedKernelParams> Table(Tag<FullyConnectedKernelParams>) {
  using P = FullyConnectedKernelParams;
  return {Entry<P>("m", &P::m, 1), Entry<P>("k", &P::k), Entry<P>("n", &P::n), Entry<P>("bias", &P::bias).Flag()};
}

Fields<MatMulKernelParams> Table(Tag<MatMulKernelParams>) {
  using P = MatMulKernelParams;
  return {Entry<P>("b", &P::b, 1), Entry<P>("m", &P::m), Entry<P>("k", &P::k), Entry<P>("n", &P::n)};
}

Fields<PoolKernelParams> Table(Tag<PoolKernelParams>) {
  using P = PoolKernelParams;
  return Join<P>({InputFields<P>(), {Entry<P>("c", &P::c)}, WindowFields<P>(), PadFields<P>()});
}

Fields<NhwcParams> Table(Tag<NhwcParams>) { return NhwcFields<NhwcParams>(); }

Fields<ReduceKernelParams> Table(Tag<ReduceKernelParams>) {
  using P = ReduceKernelParams;
  return Join<P>({NhwcFields<P>(), {Entry<P>("axes", &P::axes).Between(1, 15).MayBeZero()}});
}

Fields<TransposeKernelParams> Table(Tag<TransposeKernelParams>) {
  using P = TransposeKernelParams;
  return Join<P>({NhwcFields<P>(), ArrayFields("perm", &P::perm, Field<P>{}.Between(0, 3).MayBeZero())});
}

Fields<PadKernelParams> Table(Tag<PadKernelParams>) {
  using P = PadKernelParams;
  // Negative pads crop.
  return Join<P>({NhwcFields<P>(), ArrayFields("p", &P::p, Field<P>{}.Between(-kMaxValue, kMaxValue).MayBeZero())});
}

Fields<DepthSpaceKernelParams> Table(Tag<DepthSpaceKernelParams>) {
  using P = DepthSpaceKernelParams;
  return Join<P>({NhwcFields<P>(), {Entry<P>("block", &P::block).Between(1, 4096)}});
}

Fields<SliceKernelParams> Table(Tag<SliceKernelParams>) {
  using P = SliceKernelParams;
  return Join<P>({NhwcFields<P>(),
                  {Entry<P>("on", &P::on), Entry<P>("oh", &P::oh), Entry<P>("ow", &P::ow), Entry<P>("oc", &P::oc)}});
}

Fields<ConcatKernelParams> Table(Tag<ConcatKernelParams>) {  // then inputs and d0 d1 ... (ReadRest)
  using P = ConcatKernelParams;
  return Join<P>({NhwcFields<P>(), {Entry<P>("axis", &P::axis).Between(0, 3).MayBeZero()}});
}

Fields<BinaryKernelParams> Table(Tag<BinaryKernelParams>) {
  using P = BinaryKernelParams;
  // An absent dim broadcasts.
  return Join<P>({ArrayFields("a", &P::a, Field<P>{}.Default(1)), ArrayFields("b", &P::b, Field<P>{}.Default(1))});
}

Fields<ResizeKernelParams> Table(Tag<ResizeKernelParams>) {
  using P = ResizeKernelParams;
  return Join<P>({InputFields<P>(), {Entry<P>("c", &P::c), Entry<P>("oh", &P::oh), Entry<P>("ow", &P::ow),
                                      Entry<P>("mode", &P::mode).Flag()}});
}

Fields<GeluKernelParams> Table(Tag<GeluKernelParams>) {
  using P = GeluKernelParams;
  return Join<P>({NhwcFields<P>(), {Entry<P>("tanh", &P::tanh).Flag()}});
}

Fields<CastKernelParams> Table(Tag<CastKernelParams>) {
  using P = CastKernelParams;
  return Join<P>({NhwcFields<P>(), {Entry<P>("to", &P::to)}});
}

Fields<LayerNormKernelParams> Table(Tag<LayerNormKernelParams>) {
  using P = LayerNormKernelParams;
  return Join<P>({NhwcFields<P>(), {Entry<P>("scale", &P::scale).Flag(), Entry<P>("bias", &P::bias).Flag()}});
}

Fields<WhereKernelParams> Table(Tag<WhereKernelParams>) {
  using P = WhereKernelParams;
  return Join<P>({ArrayFields("c", &P::c, Field<P>{}.Default(1)), ArrayFields("x", &P::x, Field<P>{}.Default(1)),
                  ArrayFields("y", &P::y, Field<P>{}.Default(1))});
}

Fields<GatherKernelParams> Table(Tag<GatherKernelParams>) {
  using P = GatherKernelParams;
  return {Entry<P>("outer", &P::outer, 1), Entry<P>("rows", &P::rows), Entry<P>("inner", &P::inner, 1),
          Entry<P>("idx", &P::idx)};
}

template <class T>
const Fields<T>& FieldsOf() {
  static const Fields<T> fields = Table(Tag<T>{});
  return fields;
}

Status OutOfRange(const std::string& key, std::int64_t value, std::int64_t min, std::int64_t max) {
  return InvalidInput("param '" + key + "' is " + std::to_string(value) + ", must be in [" + std::to_string(min) +
                      ", " + std::to_string(max) + "]");
}

// Reads each checked key once, remembering which were read (the rest are not the family's).
class CheckedReader {
 public:
  explicit CheckedReader(const Kernel& kernel) : kernel_(kernel) {}

  Expected<std::int64_t> Get(const std::string& key, std::int64_t min, std::int64_t max) {
    read_.insert(key);
    auto it = kernel_.params.find(key);
    if (it == kernel_.params.end()) return InvalidInput("param '" + key + "' is missing");
    if (it->second < min || it->second > max) return OutOfRange(key, it->second, min, max);
    return it->second;
  }
  template <class T>
  Status GetFields(T& out) {
    for (const Field<T>& f : FieldsOf<T>()) {
      if (f.stored_by == StoredBy::kTablesOnly) continue;
      if (f.stored_by == StoredBy::kTransposeConv && kernel_.op != OpKind::kTransposeConv2D) continue;
      LATTE_ASSIGN_OR_RETURN(std::int64_t v, Get(f.key, f.min, f.max));
      if (f.value) *f.value(out) = v;
      else *f.optional(out) = v;
    }
    return Status::Ok();
  }
  Status CheckNoOthers() const {
    for (const auto& [key, value] : kernel_.params)
      if (!read_.count(key))
        return InvalidInput("param '" + key + "' is not one of a " + std::string(OpName(kernel_.op)) + " kernel");
    return Status::Ok();
  }

 private:
  const Kernel& kernel_;
  std::set<std::string> read_;
};

// What the field tables leave to a family: a default that depends on another param (a
// depthwise conv's groups), concat's counted sizes, a slice's part bounded by its input.
template <class T>
void ReadRest(const Kernel&, T&) {}
void ReadRest(const Kernel& kernel, ConvKernelParams& p) {
  static const std::string groups = ParamKey(&ConvKernelParams::g);
  if (!kernel.params.count(groups)) p.g = kernel.op == OpKind::kDepthwiseConv2D ? p.ic : 1;
}
void ReadRest(const Kernel& kernel, ConcatKernelParams& p) {
  const std::int64_t count = std::clamp<std::int64_t>(kernel.Param(kConcatCount), 0, kMaxConcatInputs);
  for (std::int64_t i = 0; i < count; ++i) p.d.push_back(kernel.Param(ConcatSizeKey(static_cast<std::size_t>(i))));
}

template <class T>
void WriteRest(const T&, Kernel&) {}
void WriteRest(const ConcatKernelParams& p, Kernel& kernel) {
  kernel.params[kConcatCount] = static_cast<std::int64_t>(p.d.size());
  for (std::size_t i = 0; i < p.d.size(); ++i) kernel.params[ConcatSizeKey(i)] = p.d[i];
}

template <class T>
Status CheckRest(CheckedReader&, T&) {
  return Status::Ok();
}
Status CheckRest(CheckedReader& reader, ConcatKernelParams& p) {
  LATTE_ASSIGN_OR_RETURN(std::int64_t count, reader.Get(kConcatCount, 1, kMaxConcatInputs));
  for (std::int64_t i = 0; i < count; ++i) {
    LATTE_ASSIGN_OR_RETURN(std::int64_t d, reader.Get(ConcatSizeKey(static_cast<std::size_t>(i)), 1, kMaxValue));
    p.d.push_back(d);
  }
  return Status::Ok();
}
Status CheckRest(CheckedReader&, SliceKernelParams& p) {
  using P = SliceKernelParams;
  const std::pair<std::int64_t NhwcParams::*, std::int64_t P::*> parts[] = {
      {&P::n, &P::on}, {&P::h, &P::oh}, {&P::w, &P::ow}, {&P::c, &P::oc}};
  for (const auto& [in, out] : parts)
    if (p.*out > p.*in) return OutOfRange(ParamKey(out), p.*out, 1, p.*in);
  return Status::Ok();
}

// The address of a field of `probe` → its key ("" for none: concat's sizes have no table row).
template <class T>
std::string KeyAt(T& probe, const void* address) {
  for (const Field<T>& f : FieldsOf<T>()) {
    const void* slot = f.value ? static_cast<const void*>(f.value(probe)) : static_cast<const void*>(f.optional(probe));
    if (slot == address) return f.key;
  }
  return "";
}

// Every key that may be 0, over all families.
template <class... T>
std::set<std::string> ZeroOkKeys() {
  std::set<std::string> keys;
  auto add = [&keys](const auto& fields) {
    for (const auto& f : fields)
      if (f.zero_ok) keys.insert(f.key);
  };
  (add(FieldsOf<T>()), ...);
  return keys;
}

}  // namespace

template <class T>
T ReadParams(const Kernel& kernel) {
  T out;
  for (const Field<T>& f : FieldsOf<T>()) {
    auto it = kernel.params.find(f.key);
    if (f.value) *f.value(out) = it == kernel.params.end() ? f.fallback : it->second;
    else if (it != kernel.params.end()) *f.optional(out) = it->second;
  }
  ReadRest(kernel, out);
  return out;
}

// The indices of T's fields in the order of their keys: written in that order, each key lands at
// the end of the kernel's ParamMap, which moves nothing.
template <class T>
const std::vector<std::size_t>& FieldsByKey() {
  static const std::vector<std::size_t> order = [] {
    const Fields<T>& fields = FieldsOf<T>();
    std::vector<std::size_t> indices(fields.size());
    for (std::size_t i = 0; i < indices.size(); ++i) indices[i] = i;
    std::sort(indices.begin(), indices.end(), [&](std::size_t a, std::size_t b) { return fields[a].key < fields[b].key; });
    return indices;
  }();
  return order;
}

template <class T>
void WriteParams(const T& params, Kernel& kernel) {
  T copy = params;  // the field table reaches fields through non-const references
  const Fields<T>& fields = FieldsOf<T>();
  kernel.params.reserve(kernel.params.size() + fields.size());
  for (std::size_t i : FieldsByKey<T>()) {
    const Field<T>& f = fields[i];
    if (f.value) kernel.params[f.key] = *f.value(copy);
    else if (const std::optional<std::int64_t>* v = f.optional(copy); v->has_value()) kernel.params[f.key] = **v;
  }
  WriteRest(params, kernel);
}

template <class T>
Expected<T> ReadCheckedParams(const Kernel& kernel) {
  CheckedReader reader(kernel);
  T out;
  LATTE_RETURN_IF_ERROR(reader.GetFields(out));
  LATTE_RETURN_IF_ERROR(CheckRest(reader, out));
  LATTE_RETURN_IF_ERROR(reader.CheckNoOthers());
  return out;
}

template <class T>
std::string ParamKey(std::int64_t T::*field) {
  T probe;
  return KeyAt(probe, &(probe.*field));
}
template <class T>
std::string ParamKey(std::optional<std::int64_t> T::*field) {
  T probe;
  return KeyAt(probe, &(probe.*field));
}
template <class T, std::size_t N>
std::string ParamKey(std::array<std::int64_t, N> T::*field, std::size_t index) {
  T probe;
  return KeyAt(probe, &(probe.*field)[index]);
}
std::string ParamKey(std::vector<std::int64_t> ConcatKernelParams::*, std::size_t index) {
  return ConcatSizeKey(index);
}

bool ParamMayBeZero(const std::string& key) {
  static const std::set<std::string> keys =
      ZeroOkKeys<ConvKernelParams, FullyConnectedKernelParams, MatMulKernelParams, PoolKernelParams, NhwcParams,
                 ReduceKernelParams, TransposeKernelParams, PadKernelParams, DepthSpaceKernelParams, SliceKernelParams,
                 ConcatKernelParams, BinaryKernelParams, ResizeKernelParams, GeluKernelParams, CastKernelParams, LayerNormKernelParams,
                 WhereKernelParams, GatherKernelParams>();
  return keys.count(key) > 0;
}

#define LATTE_KERNEL_PARAMS(T)                                               \
  template T ReadParams<T>(const Kernel&);                                   \
  template void WriteParams<T>(const T&, Kernel&);                           \
  template Expected<T> ReadCheckedParams<T>(const Kernel&);                  \
  template std::string ParamKey<T>(std::int64_t T::*);
LATTE_KERNEL_PARAMS(ConvKernelParams)
LATTE_KERNEL_PARAMS(FullyConnectedKernelParams)
LATTE_KERNEL_PARAMS(MatMulKernelParams)
LATTE_KERNEL_PARAMS(PoolKernelParams)
LATTE_KERNEL_PARAMS(NhwcParams)
LATTE_KERNEL_PARAMS(ReduceKernelParams)
LATTE_KERNEL_PARAMS(TransposeKernelParams)
LATTE_KERNEL_PARAMS(PadKernelParams)
LATTE_KERNEL_PARAMS(DepthSpaceKernelParams)
LATTE_KERNEL_PARAMS(SliceKernelParams)
LATTE_KERNEL_PARAMS(ConcatKernelParams)
LATTE_KERNEL_PARAMS(BinaryKernelParams)
LATTE_KERNEL_PARAMS(ResizeKernelParams)
LATTE_KERNEL_PARAMS(GeluKernelParams)
LATTE_KERNEL_PARAMS(CastKernelParams)
LATTE_KERNEL_PARAMS(LayerNormKernelParams)
LATTE_KERNEL_PARAMS(WhereKernelParams)
LATTE_KERNEL_PARAMS(GatherKernelParams)
#undef LATTE_KERNEL_PARAMS
template std::string ParamKey<ConvKernelParams>(std::optional<std::int64_t> ConvKernelParams::*);
template std::string ParamKey<BinaryKernelParams, 4>(std::array<std::int64_t, 4> BinaryKernelParams::*, std::size_t);
template std::string ParamKey<TransposeKernelParams, 4>(std::array<std::int64_t, 4> TransposeKernelParams::*,
                                                        std::size_t);
template std::string ParamKey<WhereKernelParams, 4>(std::array<std::int64_t, 4> WhereKernelParams::*, std::size_t);
template std::string ParamKey<PadKernelParams, 8>(std::array<std::int64_t, 8> PadKernelParams::*, std::size_t);

BinaryKernelParams CanonicalOperandOrder(OpKind op, BinaryKernelParams p) {
  const auto elements = [](const std::array<std::int64_t, 4>& d) { return d[0] * d[1] * d[2] * d[3]; };
  if (IsCommutative(op) && elements(p.b) > elements(p.a)) std::swap(p.a, p.b);
  return p;
}

}  // namespace latte
