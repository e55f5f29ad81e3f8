#pragma once
// A kernel: what a runtime runs as one unit — one main op plus the ops it fuses after it (a
// fused activation, a residual add). The unit that measurements, the store, fusion rules and
// predictors share: profiles measure kernels, the store keys rows by Kernel::Key(), predictors
// predict a Kernel, and a model is predicted as the sum of its kernels.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "ir/dtype.h"
#include "ir/op_kind.h"
#include "ir/param_map.h"

namespace latte {

/// `params` holds the main op's canonical, layout-free integer parameters by key: which keys a
/// kernel family has, and what they mean, is kernel_params.h, whose typed structs read and write
/// them. A fused activation or add is listed in `fused`; an add's other operand has the output's
/// shape. Kinds with no family (split) are reported uncovered, never
/// approximated. `dtype` is the data's: the main op's input 0, where's input 1 (its choices, not
/// its condition); logic kernels are bool.
struct Kernel {
  OpKind op = OpKind::kOpaque;
  std::vector<OpKind> fused;  // in order after the main op: e.g. {kAdd, kRelu}
  DataType dtype = DataType::kFloat32;
  ParamMap params;

  /// "conv2d", "conv2d+relu", "conv2d+add+relu": the kernel kind predictors are fitted per.
  std::string Kind() const;
  /// Stable text key: "conv2d+relu|bias=1,dh=1,...|float32" (params sorted by name).
  std::string Key() const;
  /// A parameter, or `fallback` when absent.
  std::int64_t Param(std::string_view name, std::int64_t fallback = 0) const;
  bool operator==(const Kernel& other) const = default;
};

/// Plausible parameters, as a table measured elsewhere must have them: none negative, none above
/// 2^31 − 1, sizes, strides, dilations and groups ≥ 1 (pads, bias, flags, modes, permutations
/// and axes may be 0), and a conv's or pool's window within its padded input where the pads are
/// given. kInvalidInput
/// naming the parameter.
Status CheckKernelParams(const Kernel& kernel);

/// The kernels a fused kernel is made of, each as it would run alone: the main op without its
/// followers, then each fused op on the main op's output (an activation as an n h w c kernel, a
/// binary op with both operands of the output's shape). What a pack predicts a fused kind by when
/// it measured the parts but never the whole. kUnsupported when `kernel` fuses nothing, or when
/// its main op's output shape cannot be told from its params (saying which).
Expected<std::vector<Kernel>> KernelParts(const Kernel& kernel);

/// Inverse of Kernel::Key(). Fails naming the part that does not parse.
Expected<Kernel> ParseKernelKey(std::string_view key);
/// Inverse of Kernel::Kind(): main op and fused ops.
Expected<Kernel> ParseKernelKind(std::string_view kind);

}  // namespace latte
