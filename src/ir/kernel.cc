#include "ir/kernel.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <limits>
#include <set>

#include <fmt/format.h>

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
  key += '|';
  bool first = true;
  for (const auto& [name, value] : params) {  // std::map: sorted by name, hence stable
    if (!first) key += ',';
    first = false;
    key += name;
    key += '=';
    key += std::to_string(value);
  }
  key += '|';
  key += DataTypeName(dtype);
  return key;
}

std::int64_t Kernel::Param(std::string_view name, std::int64_t fallback) const {
  auto it = params.find(std::string(name));
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
  // Parameters that may be 0: pads, flags, modes, permutations, axes. Every other one counts
  // something (a size, a stride, a group) and is at least 1.
  auto may_be_zero = [](const std::string& name) {
    static const std::set<std::string> kZeroOk = {"pt", "pl", "pb", "pr", "bias", "mode", "axis", "axes", "elmt_fused"};
    return kZeroOk.count(name) > 0 || (name.size() == 2 && name[0] == 'p' && std::isdigit(name[1])) ||
           name.rfind("perm", 0) == 0;
  };
  for (const auto& [name, value] : kernel.params) {
    if (value < 0 || value > std::numeric_limits<std::int32_t>::max() || (value == 0 && !may_be_zero(name))) {
      return InvalidInput(fmt::format("kernel {}: {}={} is not a plausible value", kernel.Kind(), name, value));
    }
  }
  const bool windowed = kernel.op == OpKind::kConv2D || kernel.op == OpKind::kDepthwiseConv2D ||
                        kernel.op == OpKind::kMaxPool2D || kernel.op == OpKind::kAvgPool2D;
  // Only where the pads are known: the TensorRT library's lines have none (a 7x7 conv on 6x6 maps
  // is real there, padded by TensorRT).
  if (windowed && kernel.params.count("pt") > 0) {
    for (const auto& [size, window, dilation, pad_a, pad_b] :
         {std::array<const char*, 5>{"ih", "kh", "dh", "pt", "pb"}, std::array<const char*, 5>{"iw", "kw", "dw", "pl", "pr"}}) {
      const std::int64_t reach = kernel.Param(dilation, 1) * (kernel.Param(window, 1) - 1) + 1;
      if (reach > kernel.Param(size, 1) + kernel.Param(pad_a) + kernel.Param(pad_b)) {
        return InvalidInput(fmt::format("kernel {}: a {}={} window does not fit in {}={} with its pads", kernel.Kind(),
                                        window, kernel.Param(window), size, kernel.Param(size)));
      }
    }
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

// The main op's output as the NHWC view kernel.h's n h w c kernels use (ranks below 4 padded
// with leading 1s, as KernelOfNodes views a follower's tensor).
Expected<std::array<std::int64_t, 4>> MainOutputNhwc(const Kernel& k) {
  auto p = [&](const char* name, std::int64_t fallback = 0) { return k.Param(name, fallback); };
  auto need = [&](std::initializer_list<const char*> names) -> Status {
    for (const char* name : names)
      if (!k.params.count(name))
        return Unsupported(fmt::format("the output of a {} kernel needs its parameter '{}'", OpName(k.op), name));
    return Status::Ok();
  };
  switch (k.op) {
    case OpKind::kConv2D: case OpKind::kDepthwiseConv2D:
      LATTE_RETURN_IF_ERROR(need({"ih", "iw", "oc", "kh", "kw"}));
      return std::array<std::int64_t, 4>{p("n", 1), WindowExtent(p("ih"), p("pt"), p("pb"), p("kh"), p("sh", 1), p("dh", 1)),
                                         WindowExtent(p("iw"), p("pl"), p("pr"), p("kw"), p("sw", 1), p("dw", 1)), p("oc")};
    case OpKind::kTransposeConv2D:
      LATTE_RETURN_IF_ERROR(need({"oh", "ow", "oc"}));
      return std::array<std::int64_t, 4>{p("n", 1), p("oh"), p("ow"), p("oc")};
    case OpKind::kFullyConnected:
      LATTE_RETURN_IF_ERROR(need({"n"}));
      return std::array<std::int64_t, 4>{1, 1, p("m", 1), p("n")};
    case OpKind::kMatMul:
      LATTE_RETURN_IF_ERROR(need({"m", "n"}));
      return std::array<std::int64_t, 4>{1, p("b", 1), p("m"), p("n")};
    case OpKind::kMaxPool2D: case OpKind::kAvgPool2D:
      LATTE_RETURN_IF_ERROR(need({"ih", "iw", "c", "kh", "kw"}));
      return std::array<std::int64_t, 4>{p("n", 1), WindowExtent(p("ih"), p("pt"), p("pb"), p("kh"), p("sh", 1), 1),
                                         WindowExtent(p("iw"), p("pl"), p("pr"), p("kw"), p("sw", 1), 1), p("c")};
    case OpKind::kGlobalAvgPool: case OpKind::kGlobalMaxPool:
      LATTE_RETURN_IF_ERROR(need({"c"}));
      return std::array<std::int64_t, 4>{p("n", 1), 1, 1, p("c")};
    case OpKind::kResize:
      LATTE_RETURN_IF_ERROR(need({"oh", "ow", "c"}));
      return std::array<std::int64_t, 4>{p("n", 1), p("oh"), p("ow"), p("c")};
    case OpKind::kConcat:  // its params are the output's
      LATTE_RETURN_IF_ERROR(need({"h", "w", "c"}));
      return std::array<std::int64_t, 4>{p("n", 1), p("h"), p("w"), p("c")};
    case OpKind::kPad:
      LATTE_RETURN_IF_ERROR(need({"h", "w", "c"}));
      return std::array<std::int64_t, 4>{p("n", 1) + p("p0") + p("p4"), p("h") + p("p1") + p("p5"),
                                         p("w") + p("p2") + p("p6"), p("c") + p("p3") + p("p7")};
    default:
      break;
  }
  if (IsBinaryElementwise(k.op)) {
    LATTE_RETURN_IF_ERROR(need({"a0", "a1", "a2", "a3", "b0", "b1", "b2", "b3"}));
    std::array<std::int64_t, 4> out{};
    for (int i = 0; i < 4; ++i) {
      const std::string a = fmt::format("a{}", i), b = fmt::format("b{}", i);
      out[static_cast<std::size_t>(i)] = std::max(p(a.c_str()), p(b.c_str()));
    }
    return out;
  }
  const OpCategory category = OpCategoryOf(k.op);
  if (category == OpCategory::kActivation || category == OpCategory::kElementwise || k.op == OpKind::kSoftmax ||
      k.op == OpKind::kLogSoftmax || k.op == OpKind::kBatchNorm) {  // the output is the input
    LATTE_RETURN_IF_ERROR(need({"h", "w", "c"}));
    return std::array<std::int64_t, 4>{p("n", 1), p("h"), p("w"), p("c")};
  }
  return Unsupported(fmt::format("the output shape of a {} kernel is not known from its parameters", OpName(k.op)));
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
      for (int i = 0; i < 4; ++i) {
        part.params[fmt::format("a{}", i)] = out[static_cast<std::size_t>(i)];
        part.params[fmt::format("b{}", i)] = out[static_cast<std::size_t>(i)];
      }
    } else {
      part.params = {{"n", out[0]}, {"h", out[1]}, {"w", out[2]}, {"c", out[3]}};
    }
    parts.push_back(std::move(part));
  }
  return parts;
}

}  // namespace latte
