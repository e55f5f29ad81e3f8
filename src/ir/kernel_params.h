#pragma once
// A kernel's params as one typed struct per kernel family, converted to and from the keys
// Kernel::params stores (and Kernel::Key() spells). kernel_params.cc is the one place that
// spells a key: everything else reads and writes these structs.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "ir/kernel.h"

namespace latte {

// Canonical, layout-free integer parameters, by family of the main op: shapes are NHWC with rank
// padded to 4 by leading 1s, pads resolved to explicit numbers. Each field's comment names its
// key; a field's default is what ReadParams gives when the key is absent, and an optional field
// is one that some producers leave out (ReadParams leaves it empty, WriteParams writes it only
// with a value).
//
// Not kept (same work, other semantics): pad mode, resize coordinate transform, matmul transposes,
// clip bounds of a main clip op, where a slice starts.

/// conv2d, depthwise_conv2d, transpose_conv2d. Keys n ih iw ic oc kh kw sh sw dh dw g pt pl pb pr
/// bias; transpose_conv2d also oh ow. Tables measured elsewhere leave some out: the TensorRT conv
/// library's lines have no dilations, pads or bias and say elmt_fused; CSV tables have no bias.
struct ConvKernelParams {
  std::int64_t n = 1, ih = 0, iw = 0, ic = 0, oc = 0;
  std::int64_t kh = 1, kw = 1, sh = 1, sw = 1;
  std::int64_t g = 1;                          // groups; absent: ic for depthwise_conv2d, 1 otherwise
  std::optional<std::int64_t> dh, dw;          // dilations; absent: 1
  std::optional<std::int64_t> pt, pl, pb, pr;  // pads top, left, bottom, right; absent: not known (0)
  std::optional<std::int64_t> bias;            // 0/1; absent: 0
  std::optional<std::int64_t> oh, ow;          // transpose_conv2d's output size
  std::optional<std::int64_t> elmt_fused;      // the TensorRT library's: 1 when an add is fused
  bool operator==(const ConvKernelParams&) const = default;
};

/// fully_connected: m (rows) k (in features) n (out features) bias (0/1).
struct FullyConnectedKernelParams {
  std::int64_t m = 1, k = 0, n = 0, bias = 0;
  bool operator==(const FullyConnectedKernelParams&) const = default;
};

/// matmul: b (batches) m k n.
struct MatMulKernelParams {
  std::int64_t b = 1, m = 0, k = 0, n = 0;
  bool operator==(const MatMulKernelParams&) const = default;
};

/// max_pool2d, avg_pool2d: n ih iw c kh kw sh sw pt pl pb pr.
struct PoolKernelParams {
  std::int64_t n = 1, ih = 0, iw = 0, c = 0, kh = 1, kw = 1, sh = 1, sw = 1;
  std::int64_t pt = 0, pl = 0, pb = 0, pr = 0;
  bool operator==(const PoolKernelParams&) const = default;
};

/// One NHWC tensor, n h w c: the input of global_avg_pool, global_max_pool, unary ops
/// (activations, exp, ..., batch_norm in inference: a scale and shift per channel), softmax and
/// log_softmax (over the channels), reshape (and flatten, squeeze, unsqueeze, identity, which are
/// reshape kernels). The families below that add to it derive from it.
struct NhwcParams {
  std::int64_t n = 1, h = 0, w = 0, c = 0;
  bool operator==(const NhwcParams&) const = default;
};

/// mean, reduce_sum, reduce_max, reduce_min: the input, and axes (bit i set = axis i of NHWC reduced).
struct ReduceKernelParams : NhwcParams {
  std::int64_t axes = 0;
  bool operator==(const ReduceKernelParams&) const = default;
};

/// transpose: the input, and perm0..perm3 (output axis i is input axis perm[i]).
struct TransposeKernelParams : NhwcParams {
  std::array<std::int64_t, 4> perm{};
  bool operator==(const TransposeKernelParams&) const = default;
};

/// pad: the input, and p0..p7 (the pad before each NHWC dim, then the pad after each).
struct PadKernelParams : NhwcParams {
  std::array<std::int64_t, 8> p{};
  bool operator==(const PadKernelParams&) const = default;
};

/// depth_to_space, space_to_depth: the input, and block.
struct DepthSpaceKernelParams : NhwcParams {
  std::int64_t block = 0;
  bool operator==(const DepthSpaceKernelParams&) const = default;
};

/// slice (steps of 1): the input, and on oh ow oc (the part it copies out), at the lowest rank
/// that has the same copy (axes of size 1 dropped, neighbouring axes kept whole merged).
struct SliceKernelParams : NhwcParams {
  std::int64_t on = 0, oh = 0, ow = 0, oc = 0;
  bool operator==(const SliceKernelParams&) const = default;
};

/// concat: the output, axis, and each input's size along it: d0 d1 ... (inputs = their count).
struct ConcatKernelParams : NhwcParams {
  std::int64_t axis = 0;
  std::vector<std::int64_t> d;
  bool operator==(const ConcatKernelParams&) const = default;
};

/// Binary elementwise ops (add, mul, ...): a0..a3 and b0..b3, the two input shapes (an absent
/// dim reads as 1).
struct BinaryKernelParams {
  std::array<std::int64_t, 4> a{1, 1, 1, 1}, b{1, 1, 1, 1};
  bool operator==(const BinaryKernelParams&) const = default;
};

/// `p` as a kernel of `op` is keyed: a commutative op (IsCommutative) with its operand of more
/// elements first. Either order runs alike (the backends put the broadcast operand second), so a
/// scale times a map and the map times the scale are one kernel, measured and predicted as one.
BinaryKernelParams CanonicalOperandOrder(OpKind op, BinaryKernelParams p);

/// gelu: the input, and tanh (0/1: 1 for the tanh approximation, 0 for the exact erf form).
struct GeluKernelParams : NhwcParams {
  std::int64_t tanh = 0;
  bool operator==(const GeluKernelParams&) const = default;
};

/// cast: the input, and to (the output's DataType, by its enum value; the input's is the kernel's
/// dtype).
struct CastKernelParams : NhwcParams {
  std::int64_t to = 0;
  bool operator==(const CastKernelParams&) const = default;
};

/// layer_norm: n h w c, each row of c values normalized (c: the product of the normalized dims;
/// n h w: the dims before them, as an NHWC view), and scale, bias (0/1: whether each is applied).
struct LayerNormKernelParams : NhwcParams {
  std::int64_t scale = 0, bias = 0;
  bool operator==(const LayerNormKernelParams&) const = default;
};

/// where: c0..c3 (the condition's shape), x0..x3 and y0..y3 (the two choices'), numpy
/// broadcasting (an absent dim reads as 1).
struct WhereKernelParams {
  std::array<std::int64_t, 4> c{1, 1, 1, 1}, x{1, 1, 1, 1}, y{1, 1, 1, 1};
  bool operator==(const WhereKernelParams&) const = default;
};

/// gather: the data as outer × rows × inner around the gathered axis (an embedding table is
/// 1 × vocabulary × width) and idx, the number of indices: the output is outer × idx × inner.
struct GatherKernelParams {
  std::int64_t outer = 1, rows = 0, inner = 1, idx = 0;
  bool operator==(const GatherKernelParams&) const = default;
};

/// resize: n ih iw c oh ow mode (0 nearest, 1 bilinear).
struct ResizeKernelParams {
  std::int64_t n = 1, ih = 0, iw = 0, c = 0, oh = 0, ow = 0, mode = 0;
  bool operator==(const ResizeKernelParams&) const = default;
};

/// `kernel`'s params as a T; an absent key reads as its field's default (an optional field stays
/// empty). Keys that are not T's are ignored.
template <class T>
T ReadParams(const Kernel& kernel);

/// Sets the keys of `params`' fields in `kernel` (an optional field's only when it has a value);
/// other keys are left as they are.
template <class T>
void WriteParams(const T& params, Kernel& kernel);

/// `kernel`'s params as a T, each key T's kernel has (for a conv: all but elmt_fused, and oh ow
/// only for transpose_conv2d) present and in the range a kernel graph can be built with (sizes
/// in [1, 2^31], pads ≥ 0, flags 0/1, a slice's part within its input, ...), and no other key.
/// kInvalidInput naming the first key that is missing, out of range or not T's.
template <class T>
Expected<T> ReadCheckedParams(const Kernel& kernel);

/// The key of a field, for messages that name it and tests of presence:
/// ParamKey(&ConvKernelParams::ih) is "ih", ParamKey(&BinaryKernelParams::a, 2) is "a2".
template <class T>
std::string ParamKey(std::int64_t T::*field);
template <class T>
std::string ParamKey(std::optional<std::int64_t> T::*field);
template <class T, std::size_t N>
std::string ParamKey(std::array<std::int64_t, N> T::*field, std::size_t index);
std::string ParamKey(std::vector<std::int64_t> ConcatKernelParams::*field, std::size_t index);

/// Whether a param of this key may be 0 (pads, flags, modes, axes, permutations): every other
/// counts something and is at least 1. False for a key no family has.
bool ParamMayBeZero(const std::string& key);

}  // namespace latte
