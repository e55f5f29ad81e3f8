#pragma once
// OpKind: the kinds of operation Latte understands, generated from op_kinds.def.

#include <optional>
#include <span>
#include <string_view>

#include "ir/dtype.h"

namespace latte {

enum class OpKind {
#define LATTE_OP(id, text, category, family) id,
#include "ir/op_kinds.def"
#undef LATTE_OP
};

/// Broad families of ops, used for cost rules and reports.
enum class OpCategory { kCompute, kPool, kElementwise, kActivation, kReduce, kDataMovement, kNormalization, kQuantization, kUnknown };

/// Stable text name ("conv2d"); used in reports, JSON and database keys.
std::string_view OpName(OpKind kind);
std::optional<OpKind> OpFromName(std::string_view text);
OpCategory OpCategoryOf(OpKind kind);

/// Which params a kernel of an op is described by (kernel.h), from op_kinds.def's last column:
/// conv (conv2d, depthwise, transpose), unary (activations, one-input elementwise ops, batch_norm),
/// binary (two-operand elementwise with broadcasting), reshape (and the ops that are reshapes by
/// another name), ... kNone: the op is never a kernel.
enum class KernelFamily {
  kNone, kConv, kFullyConnected, kMatMul, kPool, kGlobalPool, kUnary, kSoftmax, kReduce, kBinary, kConcat,
  kResize, kPad, kReshape, kTranspose, kDepthSpace, kSlice, kWhere, kGather, kLayerNorm,
};
KernelFamily KernelFamilyOf(OpKind kind);
/// A two-operand elementwise op with numpy broadcasting (add, sub, mul, div, pow, maximum,
/// minimum, squared_difference, the comparisons, logical_and, logical_or).
bool IsBinaryElementwise(OpKind kind);
/// A binary op whose operands may be swapped without changing its result (add, mul, maximum,
/// minimum, squared_difference, equal, not_equal, logical_and, logical_or).
bool IsCommutative(OpKind kind);
/// A comparison (equal, ..., greater_equal) or a logical op (logical_and, _or, _not): its output
/// is bool, whatever its inputs are.
bool IsComparisonOrLogic(OpKind kind);
/// The logical ops, whose inputs are bool too (their kernels are bool kernels).
bool IsLogic(OpKind kind);
/// The dtype of the op's outputs when it does not follow its data input's (bool for comparisons
/// and logic; int64 for argmax and argmin, whose files may say int32); kUnknown otherwise.
DataType FixedOutputType(OpKind kind);
std::string_view OpCategoryName(OpCategory category);
/// Every kind, in list order.
std::span<const OpKind> AllOpKinds();

}  // namespace latte
