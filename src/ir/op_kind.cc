#include "ir/op_kind.h"

#include <array>

namespace latte {
namespace {

struct OpInfo {
  OpKind kind;
  std::string_view name;
  OpCategory category;
  KernelFamily family;
};

constexpr OpInfo kOps[] = {
#define LATTE_OP(id, text, category, family) {OpKind::id, text, OpCategory::category, KernelFamily::family},
#include "ir/op_kinds.def"
#undef LATTE_OP
};

constexpr std::array<OpKind, std::size(kOps)> kKinds = [] {
  std::array<OpKind, std::size(kOps)> kinds{};
  for (size_t i = 0; i < std::size(kOps); ++i) kinds[i] = kOps[i].kind;
  return kinds;
}();

}  // namespace

std::string_view OpName(OpKind kind) { return kOps[static_cast<size_t>(kind)].name; }

std::optional<OpKind> OpFromName(std::string_view text) {
  for (const auto& op : kOps)
    if (op.name == text) return op.kind;
  return std::nullopt;
}

OpCategory OpCategoryOf(OpKind kind) { return kOps[static_cast<size_t>(kind)].category; }

KernelFamily KernelFamilyOf(OpKind kind) { return kOps[static_cast<size_t>(kind)].family; }

bool IsBinaryElementwise(OpKind kind) { return KernelFamilyOf(kind) == KernelFamily::kBinary; }

bool IsCommutative(OpKind kind) {
  switch (kind) {
    case OpKind::kAdd: case OpKind::kMul: case OpKind::kMaximum: case OpKind::kMinimum:
    case OpKind::kSquaredDifference: case OpKind::kEqual: case OpKind::kNotEqual:
    case OpKind::kLogicalAnd: case OpKind::kLogicalOr:
      return true;
    default:
      return false;
  }
}

bool IsLogic(OpKind kind) {
  return kind == OpKind::kLogicalAnd || kind == OpKind::kLogicalOr || kind == OpKind::kLogicalNot;
}

bool IsComparisonOrLogic(OpKind kind) {
  switch (kind) {
    case OpKind::kEqual: case OpKind::kNotEqual: case OpKind::kLess: case OpKind::kLessEqual:
    case OpKind::kGreater: case OpKind::kGreaterEqual:
      return true;
    default:
      return IsLogic(kind);
  }
}

DataType FixedOutputType(OpKind kind) {
  if (IsComparisonOrLogic(kind)) return DataType::kBool;
  if (kind == OpKind::kArgMax || kind == OpKind::kArgMin) return DataType::kInt64;
  return DataType::kUnknown;
}

std::string_view OpCategoryName(OpCategory category) {
  switch (category) {
    case OpCategory::kCompute: return "compute";
    case OpCategory::kPool: return "pool";
    case OpCategory::kElementwise: return "elementwise";
    case OpCategory::kActivation: return "activation";
    case OpCategory::kReduce: return "reduce";
    case OpCategory::kDataMovement: return "data_movement";
    case OpCategory::kNormalization: return "normalization";
    case OpCategory::kQuantization: return "quantization";
    case OpCategory::kUnknown: return "unknown";
  }
  return "unknown";
}

std::span<const OpKind> AllOpKinds() { return kKinds; }

}  // namespace latte
