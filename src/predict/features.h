#pragma once
// Features of a kernel for the fitted predictors: the kernel's own parameters plus derived cost
// (MACs, bytes moved, arithmetic intensity, output H and W), log-scaled so that trees split and
// interpolation works on ratios rather than differences. Versioned: a pack records the version
// it was fitted with and refuses another.

#include <cstdint>
#include <string>
#include <vector>

#include "ir/kernel.h"

namespace latte {

/// Bumped whenever ComputeFeatures() changes what it computes; stored in every pack and with
/// every tree ensemble, which computes the version it was fitted with (older ones stay readable).
///   1: parameters, cost, output extent, threads, dtype, fused ops.
///   2: + the idle share of the last SIMD vector of the kernel's vectorized channels, at 4, 8,
///      16 and 32 lanes (a conv of 48 output channels fills 16 lanes three times and 32 lanes
///      1.5 times: XNNPACK on AVX-512 runs such kernels up to 30% faster per MAC than 45 or 50).
///   3: + the shape of the work as a matrix product sees it (GemmShape): log rows, log reduction
///      length, the idle share of the last 16-float vector along m, k and n, and log bytes of one
///      independent unit (one matrix of a batch, one softmax row): a transformer's matmuls, softmax
///      and gelu change shape, alignment and cache fit with the sequence length, not only their work.
inline constexpr int kFeatureVersion = 3;

/// Work and traffic of one kernel, derived from its parameters (see ir/kernel.h for the
/// parameters of each family). Unknown families give zeros, never an error: the raw parameters
/// still describe them.
struct KernelCost {
  double macs = 0;        // multiply-accumulates (conv, fc, matmul); element operations otherwise
  double in_bytes = 0;    // activations read (including a fused add's second operand)
  double weight_bytes = 0;
  double out_bytes = 0;
  double out_elements = 0;
  double oh = 0, ow = 0;  // output height and width (spatial families), else 0
  /// Contiguous stretches the op walks: a broadcasting elementwise op restarts its inner loop for
  /// every stretch of the innermost dimensions where both operands agree or one stays put (an add
  /// of [1,1,1,C] to [1,H,W,C] walks H·W stretches of C; a multiply of [1,C,H,W] by [1,C,1,1], C
  /// stretches of H·W); a slice, one per run it copies; a gather, one per row it looks up; 1 for
  /// every other kernel.
  double runs = 1;
  double Bytes() const { return in_bytes + weight_bytes + out_bytes; }
  /// FLOPs per byte moved (2 per MAC); 0 when nothing is moved.
  double Intensity() const { return Bytes() > 0 ? 2 * macs / Bytes() : 0; }
};

/// Cost of `kernel` from its parameters and dtype.
KernelCost ComputeKernelCost(const Kernel& kernel);

/// The layout of a feature vector for one kernel kind: the parameter names (fixed at fit time)
/// followed by the derived features named by DerivedFeatureNames().
struct FeatureSchema {
  std::vector<std::string> param_names;
  int version = kFeatureVersion;  // which derived features follow the parameters (1..kFeatureVersion)
  /// Schema of the union of the parameter names of `kernels`, sorted, at kFeatureVersion.
  static FeatureSchema FromKernels(const std::vector<const Kernel*>& kernels);
  std::size_t Size() const;
  /// Every feature name, in vector order.
  std::vector<std::string> Names() const;
};

/// Names of the derived features appended after the parameters, at feature `version`.
const std::vector<std::string>& DerivedFeatureNames(int version = kFeatureVersion);

/// The channel count a kernel's SIMD loops run over, in NHWC: a conv's output channels per group
/// (a depthwise conv's channels), a fully-connected or matmul's output columns, the channels of a
/// pool, resize or other (h, w, c) kernel, the innermost dimension of a broadcast elementwise op;
/// 0 when the kernel has none.
double VectorChannels(const Kernel& kernel);

/// A kernel's work as a matrix product sees it: `batches` products of `m` rows each reducing over
/// `k` to `n` outputs; `unit_bytes` what one independent unit reads and writes. fully_connected
/// and matmul: their b (1 for fully_connected), m, k, n, one product as the unit; softmax and
/// log_softmax: n·h·w rows, each reducing its c to c, one row as the unit; other kernels of one
/// NHWC tensor: n·h·w rows of c, no reduction (k = 1), the tensor as the unit. Zeros for the rest.
struct GemmShape {
  double batches = 1, m = 0, k = 0, n = 0, unit_bytes = 0;
};
GemmShape GemmShapeOf(const Kernel& kernel);

/// The idle share of the last `lanes`-wide vector over `channels`: (⌈c/L⌉·L − c) / (⌈c/L⌉·L); 0
/// for no channels.
double LaneTail(double channels, int lanes);

/// A nominal time for `kernel`'s work, in ms: 1 µs + max(2·MACs / 100 GFLOP/s, bytes / 20 GB/s).
/// Not this device's figures and not a prediction: a fixed scale that grows with the work, so
/// that a fitted model can learn latency *relative to the work* (how efficient a kernel is),
/// which stays near its training values beyond the training ranges where latency itself does not.
///
/// `channel_tile`: the output channels the backend's inner loop computes at once (one SIMD
/// vector of them: 16 floats with AVX-512), or 1. A conv, depthwise conv, transposed conv or
/// fully connected kernel then counts its MACs in whole tiles of output channels (per group), as
/// the kernel computes them: XNNPACK runs a 3×3 depthwise on 8 channels in the time of 16, and a
/// conv to 8 outputs in that of 16 (the stores' samples: 0.17 vs 0.09 ns per MAC unpadded, 0.085
/// vs 0.092 in whole tiles), so its efficiency per tiled MAC is its neighbours'.
double WorkScaleMs(const Kernel& kernel, int channel_tile = 1);
/// The same from a cost already computed (ComputeFeatures returns the one it computes) and the
/// kernel's ChannelTileFactor.
double WorkScaleMs(const KernelCost& cost, double tile_factor = 1);
/// The MACs `kernel` computes in whole `channel_tile`s of output channels over those it needs: ≥ 1;
/// 1 for a tile of 1 or a kind whose channels are not its vector loop's (see WorkScaleMs).
double ChannelTileFactor(const Kernel& kernel, int channel_tile);
/// The same from the kernel's op and VectorChannels, already read (ComputeFeatures gives them).
double ChannelTileFactor(OpKind op, double vector_channels, int channel_tile);

/// log2(1 + x) for x >= 0 (and -log2(1 - x) below, so that the map stays monotone).
double LogScale(double x);

/// Feature vector of `kernel` run with `threads` threads, in `schema`'s order. A parameter the
/// schema names but the kernel lacks reads as 0. Returns the kernel's cost it derived them from,
/// and its VectorChannels in `vector_channels` when asked (a predictor's channel tile needs them).
KernelCost ComputeFeatures(const FeatureSchema& schema, const Kernel& kernel, int threads, std::vector<float>& out,
                           double* vector_channels = nullptr);

}  // namespace latte
