#include "ir/kernel.h"

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
