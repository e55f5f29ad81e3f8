#pragma once
// Config spaces of kernels and the samplers that draw from them: built-in grids (the TFLite
// estimator's, the TensorRT conv library's, one per other kind), log-uniform random draws, and
// the kernels of real models plus a neighbourhood around each. Every sampler is deterministic
// under its seed: the same config gives the same kernels in the same order.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "ir/kernel.h"
#include "ir/kernel_graph.h"
#include "ir/tensor.h"
#include "profile/encoder_models.h"

namespace latte {

/// A kernel kind as users type it: "conv2d", "dwconv2d", "depthwise_conv2d", "fc+relu",
/// "conv+add+relu" (each part an op name or a short alias). Returns a Kernel with op and fused
/// set and no params. Fails naming the unknown part and listing the aliases.
Expected<Kernel> ParseKindAlias(std::string_view text);
/// A comma-separated list of kinds (duplicates removed, order kept).
Expected<std::vector<Kernel>> ParseKindList(std::string_view list);
/// "conv (conv2d), dwconv/dwconv2d (depthwise_conv2d), ...": for --help and errors.
std::string KindAliasHelp();

/// TF's SAME padding of one spatial dim: {before, after}.
std::pair<std::int64_t, std::int64_t> SamePads(std::int64_t in, std::int64_t kernel, std::int64_t stride,
                                               std::int64_t dilation = 1);

/// A conv2d / depthwise_conv2d kernel with SAME padding, dilation 1 and a bias (batch 1).
/// For depthwise, `cout` is channels × multiplier and groups = cin.
Kernel ConvKernel(OpKind op, std::int64_t h, std::int64_t w, std::int64_t cin, std::int64_t cout, std::int64_t k,
                  std::int64_t stride);
/// A kernel of one NHWC tensor (batch 1): an activation, reduction over H and W, transpose to
/// NCHW, depth/space rearrangement, ...
Kernel NhwcKernel(OpKind op, std::int64_t h, std::int64_t w, std::int64_t c);
/// An elementwise binary kernel of two 1×h×w×c tensors.
Kernel BinaryKernel(OpKind op, std::int64_t h, std::int64_t w, std::int64_t c);
/// The same with operand `side` ('a' or 'b') broadcast: a scalar (1×1×1×1) or, `per_channel`, a
/// vector of channels (1×1×1×c), as models multiply by constants and scale channels.
Kernel BroadcastBinaryKernel(OpKind op, std::int64_t h, std::int64_t w, std::int64_t c, char side, bool per_channel);

/// A conv2d / depthwise_conv2d / grouped conv with SAME padding, dilation 1 and a bias, every
/// size given (ConvKernel is the square, ungrouped, batch-1 case).
Kernel ConvLike(OpKind op, std::int64_t n, std::int64_t ih, std::int64_t iw, std::int64_t ic, std::int64_t oc,
                std::int64_t kh, std::int64_t kw, std::int64_t sh, std::int64_t sw, std::int64_t groups);
/// A fully_connected kernel: m rows of k features to n, with a bias.
Kernel FcKernel(std::int64_t m, std::int64_t k, std::int64_t n);
/// A max or average pool with SAME padding (batch 1).
Kernel PoolKernel(OpKind op, std::int64_t h, std::int64_t w, std::int64_t c, std::int64_t k, std::int64_t s);
/// A resize by an integer `scale` (mode 0 nearest, 1 bilinear; batch 1).
Kernel ResizeKernel(std::int64_t h, std::int64_t w, std::int64_t c, std::int64_t scale, std::int64_t mode);
/// A transposed conv without padding (output (in - 1) × stride + k), with a bias (batch 1).
Kernel TransposeConvKernel(std::int64_t h, std::int64_t w, std::int64_t ic, std::int64_t oc, std::int64_t k,
                           std::int64_t stride);

/// The size of one grid for `kind` (its main op decides; fused ops ride along). `grid` is
/// "default", "tflite" or "tensorrt"; a named grid that has no version for the kind's op
/// falls back to the op's default grid (GridNameFor says which one is used).
std::string GridNameFor(const Kernel& kind, std::string_view grid);
/// Every kernel of the grid, in nested-loop order. Fails for a kind with no built-in grid.
Expected<std::vector<Kernel>> GridKernels(const Kernel& kind, std::string_view grid);

/// `count` distinct kernels of `kind` drawn log-uniformly within the kind's ranges (sizes) and
/// uniformly among its discrete choices (kernel sizes, strides), from `seed`.
Expected<std::vector<Kernel>> RandomKernels(const Kernel& kind, std::size_t count, std::uint64_t seed);

/// How the random strategy splits `count` draws across `kinds`: evenly, except that a binary kind
/// (add, mul, sub, div, ...) counts three times, once per operand shape it is drawn with (equal,
/// a scalar, a channel vector): each shape then gets as many draws as a plain kind. The remainder
/// goes one by one to the first kinds.
std::vector<std::size_t> RandomShares(const std::vector<Kernel>& kinds, std::size_t count);

/// Kernels one step away from `kernel`: channels ±8 (one at a time: in, out) and spatial size
/// ±max(1, size/8) (height and width together), pads recomputed when the original used SAME
/// padding. Non-positive or otherwise impossible neighbours are left out. Kinds whose params
/// do not split into channels and size (concat, resize, pad, matmul) have no neighbours.
std::vector<Kernel> NeighbourKernels(const Kernel& kernel);

/// The most kernels a random sample draws (`--max-kernels`): draws are kept in memory before the
/// campaign starts, and 100,000 is hours of kernels; more is a typo, refused rather than drawn for ever.
inline constexpr std::size_t kMaxRandomKernels = 100'000;

/// What a sampler draws: the campaign's config space (its JSON is part of the campaign's identity).
struct SamplerConfig {
  /// grid | random | from-models | architectures (profile/architectures: kernels of networks like
  /// real ones) | transformers (TransformerKernels: encoder layers' kernels) | adaptive (adaptive.h:
  /// needs a store)
  std::string strategy = "grid";
  std::vector<std::string> kinds;   // canonical kinds (Kernel::Kind()); from-models: empty = all
  std::string grid = "default";     // grid: default | tflite | tensorrt
  std::vector<std::string> models;  // from-models: model files
  std::map<std::string, Shape> input_shapes;  // from-models: --input-shape overrides
  /// from-models: --input-value, inputs made constants (each value's text, as ImportOptions has it)
  std::map<std::string, std::vector<std::string>> input_values;
  bool neighbours = true;           // from-models: add each kernel's neighbourhood
  /// from-models, transformers: lay the models out as this backend runs them (NHWC, activations folded), as
  /// prediction does, so the kernels measured are the ones a pack is asked for. Empty: as imported.
  std::string layout_backend;
  /// Whether layout_backend takes NHWC (its BackendFactory::takes_nhwc); not part of the space's
  /// identity (the backend's name is).
  bool layout_backend_takes_nhwc = false;
  /// from-models, transformers: group nodes into kernels by these fused kinds. Unset:
  /// FusionRules::Default().
  std::optional<std::vector<std::string>> fusion_rules;
  /// adaptive: a kind with too few measurements to fit is skipped with a note instead of failing
  /// the round (calibrate asks for every kind; the random phase may have reached only some).
  bool skip_sparse_kinds = false;
  /// architectures: draw each residual add's conv also with the add fused into it (a backend whose
  /// fusion rules run it so: calibrate sets it from them), or when `kinds` names such a kind.
  bool residual_fusions = false;
  std::uint64_t seed = 0;
  std::size_t max_kernels = 0;      // 0 = the whole grid / every model kernel; random, adaptive: required
  nlohmann::json ToJson() const;
};

/// What a config drew, and notes for the user (per-kind counts, model nodes left out and why).
struct Sample {
  std::vector<Kernel> kernels;
  std::vector<std::string> notes;
};

/// The kernels a config draws, deduplicated by key, in a deterministic order: grid and random
/// kernels of all kinds shuffled together under `seed` (so a campaign cut short by its budget
/// still covers every kind evenly), model kernels in model order followed by their neighbours.
/// Truncated to max_kernels when set. Models that fail to import fail the call, naming the file.
Expected<Sample> SampleKernels(const SamplerConfig& config);

class SplitMix64;

/// A random MobileNet-like network for measuring layers in context: a 3×3 stem conv (stride 1 or
/// 2) on a square RGB input of 64–256, 4–12 inverted-residual blocks (1×1 expand by 1, 2, 4 or 6,
/// 3×3 or 5×5 depthwise with stride 2 a third of the time while the map is over 8, 1×1 project,
/// a residual add when the shape allows, clamped by a relu6 in half the networks; relu6 after
/// expand and depthwise), then up to two decoder
/// steps (bilinear ×2 resize and a 1×1 conv, and in two networks of three the encoder's map of
/// that size through a lateral 1×1 conv, added), like segmentation and landmark heads and FPN-like
/// detectors. Drawn from `rng`.
std::vector<JoinedKernel> RandomNetwork(SplitMix64& rng);

/// A random MobileNetV3-like network, the other family models come in: a 3×3 stride-2 stem conv
/// on a square RGB input of 96–320, 4–12 blocks (1×1 expand by 1–6, 3×3 or 5×5 depthwise, half
/// of the time squeeze-and-excite — global average pool, 1×1 conv with relu, 1×1 conv, hard
/// sigmoid, channel-wise multiply — then 1×1 project, a residual add when the shape allows), up
/// to two ×2 nearest-resize steps with a 1×1 conv. Hard-swish after the stem, expand, depthwise and
/// head convs: one op, or in some networks x · relu6(x + 3) / 6 in three ops as converters export
/// it; in some networks a scalar scale and bias after the convs half of the time.
std::vector<JoinedKernel> RandomHardSwishNetwork(SplitMix64& rng);

/// The shape of one transformer encoder layer, as published small encoders have them (BERT-mini
/// and -small, ViT-tiny and -small, MobileViT's blocks): a sequence of `seq` tokens (16–1024) of
/// `hidden` features (64–1024, a multiple of 64 three times in four, of 32 otherwise), `heads`
/// heads (1–16, dividing `hidden`, each at least 16 wide), an MLP 4× as wide.
struct EncoderShape {
  std::int64_t seq = 0, hidden = 0, heads = 1;
  std::int64_t head_dim() const { return hidden / heads; }
  std::int64_t mlp() const { return 4 * hidden; }
};

/// One encoder shape from `rng`: the sequence length log-uniform in 16–1024, as often a multiple
/// of 16, one more than that (a class token: ViT's 197) or any length.
EncoderShape DrawEncoderShape(SplitMix64& rng);

/// The one-layer encoder model of a drawn shape, as profile/encoder_models writes it: ViT (a
/// patch size of 8, 14, 16 or 32 and the square grid of patches nearest to seq − 1, plus the class
/// token) for a length with a class token (a multiple of 16 plus one, or a square plus one), BERT
/// for any other (its embedding table of at most
/// 30522 rows and 4M values, its position table as long as the sequence when that is over 512); LayerNormalization whole (opset 17) or decomposed (opset 13), half
/// the time each.
encoders::EncoderConfig EncoderModelOf(const EncoderShape& shape, SplitMix64& rng);

/// A network of the graph-context campaigns' third family as drawn: a two-layer encoder model of
/// a drawn shape (EncoderModelOf, with its embeddings, norms and head). Shapes over
/// kMaxEncoderNetworkFlops a layer are drawn again, so that a network runs in tens of
/// milliseconds (BERT-mini at 384 tokens is 0.75 GFLOP a layer).
struct DrawnEncoderNetwork {
  encoders::EncoderConfig model;
  /// Whether the model has BERT's attention mask input (an int64 cast that oneDNN, without 64-bit
  /// integers, cannot run).
  bool HasAttentionMask() const;
  /// The model imported as a user's file would be; with `mask_of_ones`, its attention mask given as
  /// all ones (no padding, as a benchmark runs BERT with `--input-value`), so that the mask's cast
  /// and arithmetic fold at import.
  Expected<Graph> Import(bool mask_of_ones = false) const;
};
DrawnEncoderNetwork DrawEncoderNetwork(SplitMix64& rng);

/// DrawEncoderNetwork's model imported as drawn.
Expected<Graph> RandomEncoderNetwork(SplitMix64& rng);
inline constexpr double kMaxEncoderNetworkFlops = 1e9;

/// Kernels of transformer encoders, `config.max_kernels` distinct ones (by key) of the kinds
/// `kinds` (empty: all): one-layer encoder models drawn in turn under `config.seed`
/// (EncoderModelOf), each imported as a user's file would be, laid out as
/// `config.layout_backend` runs it and grouped into kernels by `config.fusion_rules`, so the
/// projections, bias and residual adds, heads' reshapes and transposes, attention's matmuls and
/// softmax, layer norms and gelus are the kernels a real encoder's prediction asks for. Shuffled
/// so a campaign cut short has seen every kind and size. Fewer when kMaxEncoderDraws models give
/// fewer.
Expected<std::vector<Kernel>> TransformerKernels(const SamplerConfig& config, const std::vector<Kernel>& kinds);
inline constexpr std::size_t kMaxEncoderDraws = 400;

/// Deterministic 64-bit generator (splitmix64): the same sequence on every platform and library,
/// unlike std:: distributions.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t Next();
  /// Uniform in [0, 1).
  double Uniform();
  /// Uniform integer in [0, n).
  std::uint64_t Below(std::uint64_t n);

 private:
  std::uint64_t state_;
};

}  // namespace latte
