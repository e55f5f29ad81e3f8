#include "ir/kernel.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>

#include <fmt/format.h>

#include "ir/kernel_params.h"

namespace latte {
namespace {

std::vector<std::string_view> SplitOn(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

}  // namespace

std::string Kernel::Kind() const {
  std::string kind(OpName(op));
  for (OpKind f : fused) {
    kind += '+';
    kind += OpName(f);
  }
  return kind;
}

std::string Kernel::Key() const {
  std::string key = Kind();
  key.reserve(key.size() + 12 * params.size() + 12);  // one allocation for a typical key
  key += '|';
  bool first = true;
  char digits[24];
  for (const auto& [name, value] : params) {  // sorted by name, hence stable
    if (!first) key += ',';
    first = false;
    key += name;
    key += '=';
    key.append(digits, std::to_chars(digits, digits + sizeof digits, value).ptr);
  }
  key += '|';
  key += DataTypeName(dtype);
  return key;
}

std::int64_t Kernel::Param(std::string_view name, std::int64_t fallback) const {
  auto it = params.find(name);
  return it == params.end() ? fallback : it->second;
}

Expected<Kernel> ParseKernelKind(std::string_view kind) {
  Kernel kernel;
  std::vector<std::string_view> ops = SplitOn(kind, '+');
  for (size_t i = 0; i < ops.size(); ++i) {
    std::optional<OpKind> op = OpFromName(ops[i]);
    if (!op || *op == OpKind::kOpaque) {
      return Status(StatusCode::kInvalidInput, "unknown op '" + std::string(ops[i]) + "' in kernel kind '" + std::string(kind) + "'");
    }
    if (i == 0) {
      kernel.op = *op;
    } else {
      kernel.fused.push_back(*op);
    }
  }
  return kernel;
}

Status CheckKernelParams(const Kernel& kernel) {
  for (const auto& [name, value] : kernel.params) {
    if (value < 0 || value > std::numeric_limits<std::int32_t>::max() || (value == 0 && !ParamMayBeZero(name))) {
      return InvalidInput(fmt::format("kernel {}: {}={} is not a plausible value", kernel.Kind(), name, value));
    }
  }
  // A window must fit in its padded input, only where the pads are known: the TensorRT library's
  // lines have none (a 7x7 conv on 6x6 maps is real there, padded by TensorRT).
  auto fits = [&kernel](const std::string& size_key, std::int64_t size, const std::string& window_key,
                        std::int64_t window, std::int64_t dilation, std::int64_t pads) -> Status {
    if (dilation * (window - 1) + 1 <= size + pads) return Status::Ok();
    return InvalidInput(fmt::format("kernel {}: a {}={} window does not fit in {}={} with its pads", kernel.Kind(),
                                    window_key, window, size_key, size));
  };
  if (kernel.op == OpKind::kConv2D || kernel.op == OpKind::kDepthwiseConv2D) {
    using P = ConvKernelParams;
    const P c = ReadParams<P>(kernel);
    if (!c.pt) return Status::Ok();
    LATTE_RETURN_IF_ERROR(
        fits(ParamKey(&P::ih), c.ih, ParamKey(&P::kh), c.kh, c.dh.value_or(1), *c.pt + c.pb.value_or(0)));
    return fits(ParamKey(&P::iw), c.iw, ParamKey(&P::kw), c.kw, c.dw.value_or(1), c.pl.value_or(0) + c.pr.value_or(0));
  }
  if ((kernel.op == OpKind::kMaxPool2D || kernel.op == OpKind::kAvgPool2D) &&
      kernel.params.count(ParamKey(&PoolKernelParams::pt))) {
    using P = PoolKernelParams;
    const P p = ReadParams<P>(kernel);
    LATTE_RETURN_IF_ERROR(fits(ParamKey(&P::ih), p.ih, ParamKey(&P::kh), p.kh, 1, p.pt + p.pb));
    return fits(ParamKey(&P::iw), p.iw, ParamKey(&P::kw), p.kw, 1, p.pl + p.pr);
  }
  return Status::Ok();
}

Expected<Kernel> ParseKernelKey(std::string_view key) {
  std::vector<std::string_view> parts = SplitOn(key, '|');
  if (parts.size() != 3) {
    return Status(StatusCode::kInvalidInput, "kernel key '" + std::string(key) + "' is not KIND|PARAMS|DTYPE");
  }
  LATTE_ASSIGN_OR_RETURN(Kernel kernel, ParseKernelKind(parts[0]));
  if (!parts[1].empty()) {
    for (std::string_view item : SplitOn(parts[1], ',')) {
      size_t eq = item.find('=');
      std::int64_t value = 0;
      const char* begin = item.data() + (eq == std::string_view::npos ? 0 : eq + 1);
      const char* end = item.data() + item.size();
      auto [ptr, ec] = std::from_chars(begin, end, value);
      if (eq == std::string_view::npos || eq == 0 || ec != std::errc() || ptr != end) {
        return Status(StatusCode::kInvalidInput, "kernel key '" + std::string(key) + "': bad parameter '" + std::string(item) + "'");
      }
      kernel.params[std::string(item.substr(0, eq))] = value;
    }
  }
  std::optional<DataType> dtype = DataTypeFromName(parts[2]);
  if (!dtype) {
    return Status(StatusCode::kInvalidInput, "kernel key '" + std::string(key) + "': unknown dtype '" + std::string(parts[2]) + "'");
  }
  kernel.dtype = *dtype;
  return kernel;
}

}  // namespace latte

namespace latte {
namespace {

// Output extent of a window sliding over `in` with explicit pads.
std::int64_t WindowExtent(std::int64_t in, std::int64_t pad_begin, std::int64_t pad_end, std::int64_t k,
                          std::int64_t stride, std::int64_t dilation) {
  const std::int64_t span = std::max<std::int64_t>(1, dilation) * (k - 1) + 1;
  return std::max<std::int64_t>(1, (in + pad_begin + pad_end - span) / std::max<std::int64_t>(1, stride) + 1);
}

// The main op's output as the NHWC view NhwcParams kernels use (ranks below 4 padded with
// leading 1s, as KernelOfNodes views a follower's tensor).
Expected<std::array<std::int64_t, 4>> MainOutputNhwc(const Kernel& k) {
  auto need = [&](std::initializer_list<std::string> keys) -> Status {
    for (const std::string& key : keys)
      if (!k.params.count(key))
        return Unsupported(fmt::format("the output of a {} kernel needs its parameter '{}'", OpName(k.op), key));
    return Status::Ok();
  };
  using Shape4 = std::array<std::int64_t, 4>;
  switch (KernelFamilyOf(k.op)) {
    case KernelFamily::kConv: {
      using P = ConvKernelParams;
      const P c = ReadParams<P>(k);
      if (k.op == OpKind::kTransposeConv2D) {
        LATTE_RETURN_IF_ERROR(need({ParamKey(&P::oh), ParamKey(&P::ow), ParamKey(&P::oc)}));
        return Shape4{c.n, *c.oh, *c.ow, c.oc};
      }
      LATTE_RETURN_IF_ERROR(
          need({ParamKey(&P::ih), ParamKey(&P::iw), ParamKey(&P::oc), ParamKey(&P::kh), ParamKey(&P::kw)}));
      return Shape4{c.n, WindowExtent(c.ih, c.pt.value_or(0), c.pb.value_or(0), c.kh, c.sh, c.dh.value_or(1)),
                    WindowExtent(c.iw, c.pl.value_or(0), c.pr.value_or(0), c.kw, c.sw, c.dw.value_or(1)), c.oc};
    }
    case KernelFamily::kFullyConnected: {
      using P = FullyConnectedKernelParams;
      LATTE_RETURN_IF_ERROR(need({ParamKey(&P::n)}));
      const P f = ReadParams<P>(k);
      return Shape4{1, 1, f.m, f.n};
    }
    case KernelFamily::kMatMul: {
      using P = MatMulKernelParams;
      LATTE_RETURN_IF_ERROR(need({ParamKey(&P::m), ParamKey(&P::n)}));
      const P m = ReadParams<P>(k);
      return Shape4{1, m.b, m.m, m.n};
    }
    case KernelFamily::kPool: {
      using P = PoolKernelParams;
      LATTE_RETURN_IF_ERROR(
          need({ParamKey(&P::ih), ParamKey(&P::iw), ParamKey(&P::c), ParamKey(&P::kh), ParamKey(&P::kw)}));
      const P p = ReadParams<P>(k);
      return Shape4{p.n, WindowExtent(p.ih, p.pt, p.pb, p.kh, p.sh, 1), WindowExtent(p.iw, p.pl, p.pr, p.kw, p.sw, 1),
                    p.c};
    }
    case KernelFamily::kGlobalPool: {
      LATTE_RETURN_IF_ERROR(need({ParamKey(&NhwcParams::c)}));
      const NhwcParams x = ReadParams<NhwcParams>(k);
      return Shape4{x.n, 1, 1, x.c};
    }
    case KernelFamily::kResize: {
      using P = ResizeKernelParams;
      LATTE_RETURN_IF_ERROR(need({ParamKey(&P::oh), ParamKey(&P::ow), ParamKey(&P::c)}));
      const P r = ReadParams<P>(k);
      return Shape4{r.n, r.oh, r.ow, r.c};
    }
    case KernelFamily::kBinary: {
      using P = BinaryKernelParams;
      for (std::size_t i = 0; i < 4; ++i) LATTE_RETURN_IF_ERROR(need({ParamKey(&P::a, i)}));
      for (std::size_t i = 0; i < 4; ++i) LATTE_RETURN_IF_ERROR(need({ParamKey(&P::b, i)}));
      const P b = ReadParams<P>(k);
      Shape4 out{};
      for (std::size_t i = 0; i < 4; ++i) out[i] = std::max(b.a[i], b.b[i]);
      return out;
    }
    case KernelFamily::kWhere: {
      using P = WhereKernelParams;
      const P p = ReadParams<P>(k);
      Shape4 out{};
      for (std::size_t i = 0; i < 4; ++i) out[i] = std::max({p.c[i], p.x[i], p.y[i]});
      return out;
    }
    case KernelFamily::kGather: {
      using P = GatherKernelParams;
      LATTE_RETURN_IF_ERROR(need({ParamKey(&P::rows), ParamKey(&P::idx)}));
      const P g = ReadParams<P>(k);
      return Shape4{1, g.outer, g.idx, g.inner};
    }
    default:
      break;
  }
  // The output is the input (activations, one-input elementwise ops, softmax, batch_norm), or
  // the params are the output's (concat), or the input padded (pad).
  const OpCategory category = OpCategoryOf(k.op);
  const bool same_shape = category == OpCategory::kActivation || category == OpCategory::kElementwise ||
                          k.op == OpKind::kSoftmax || k.op == OpKind::kLogSoftmax || k.op == OpKind::kBatchNorm ||
                          k.op == OpKind::kLayerNorm || k.op == OpKind::kCast;
  if (!same_shape && k.op != OpKind::kConcat && k.op != OpKind::kPad)
    return Unsupported(fmt::format("the output shape of a {} kernel is not known from its parameters", OpName(k.op)));
  LATTE_RETURN_IF_ERROR(need({ParamKey(&NhwcParams::h), ParamKey(&NhwcParams::w), ParamKey(&NhwcParams::c)}));
  if (k.op == OpKind::kPad) {
    const PadKernelParams p = ReadParams<PadKernelParams>(k);
    return Shape4{p.n + p.p[0] + p.p[4], p.h + p.p[1] + p.p[5], p.w + p.p[2] + p.p[6], p.c + p.p[3] + p.p[7]};
  }
  const NhwcParams x = ReadParams<NhwcParams>(k);
  return Shape4{x.n, x.h, x.w, x.c};
}

}  // namespace

Expected<std::vector<Kernel>> KernelParts(const Kernel& kernel) {
  if (kernel.fused.empty()) return Unsupported("kernel kind '" + kernel.Kind() + "' fuses nothing: it has no parts");
  LATTE_ASSIGN_OR_RETURN(const auto out, MainOutputNhwc(kernel));
  std::vector<Kernel> parts;
  Kernel main = kernel;
  main.fused.clear();
  parts.push_back(std::move(main));
  for (OpKind op : kernel.fused) {
    Kernel part;
    part.op = op;
    part.dtype = kernel.dtype;
    if (IsBinaryElementwise(op)) {
      WriteParams(BinaryKernelParams{out, out}, part);
    } else if (op == OpKind::kGelu) {  // kernel grouping fuses only the exact form
      WriteParams(GeluKernelParams{NhwcParams{out[0], out[1], out[2], out[3]}, 0}, part);
    } else {
      WriteParams(NhwcParams{out[0], out[1], out[2], out[3]}, part);
    }
    parts.push_back(std::move(part));
  }
  return parts;
}

}  // namespace latte
