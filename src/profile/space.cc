#include "profile/space.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "import/import.h"
#include "ir/kernel_graph.h"
#include "ir/kernel_params.h"
#include "profile/architectures.h"
#include "run/graph_prep.h"

namespace latte {
namespace {

using I = std::int64_t;

// How the samplers draw a kind: its kernel family (op_kinds.def), with every kernel of one NHWC
// tensor (activations, reductions over H and W, softmax, transpose, depth/space) drawn alike.
// layer_norm is drawn as encoders run it: rows of a sequence, each a hidden vector.
enum class Family {
  kConv, kTransposeConv, kFullyConnected, kMatMul, kPool, kNhwc, kBinary, kConcat, kResize, kPad, kSlice,
  kLayerNorm, kWhere, kGather, kNone
};

Family FamilyOf(OpKind op) {
  switch (KernelFamilyOf(op)) {
    case KernelFamily::kConv: return op == OpKind::kTransposeConv2D ? Family::kTransposeConv : Family::kConv;
    case KernelFamily::kFullyConnected: return Family::kFullyConnected;
    case KernelFamily::kMatMul: return Family::kMatMul;
    case KernelFamily::kPool: return Family::kPool;
    case KernelFamily::kBinary: return Family::kBinary;
    case KernelFamily::kConcat: return Family::kConcat;
    case KernelFamily::kResize: return Family::kResize;
    case KernelFamily::kPad: return Family::kPad;
    case KernelFamily::kSlice: return Family::kSlice;
    case KernelFamily::kLayerNorm: return Family::kLayerNorm;
    case KernelFamily::kWhere: return Family::kWhere;
    case KernelFamily::kGather: return Family::kGather;
    case KernelFamily::kGlobalPool: case KernelFamily::kUnary: case KernelFamily::kSoftmax: case KernelFamily::kReduce:
    case KernelFamily::kTranspose: case KernelFamily::kDepthSpace:
      return Family::kNhwc;
    // Flatten, squeeze, unsqueeze and identity are reshapes by another name: reshape is drawn for them.
    case KernelFamily::kReshape: return op == OpKind::kReshape ? Family::kNhwc : Family::kNone;
    case KernelFamily::kNone: return Family::kNone;
  }
  return Family::kNone;
}

// Short names users type, beside every op's own name.
const std::vector<std::pair<std::string_view, std::string_view>>& Aliases() {
  static const std::vector<std::pair<std::string_view, std::string_view>> aliases = {
      {"conv", "conv2d"},
      {"dwconv", "depthwise_conv2d"},
      {"dwconv2d", "depthwise_conv2d"},
      {"depthwise", "depthwise_conv2d"},
      {"tconv", "transpose_conv2d"},
      {"deconv", "transpose_conv2d"},
      {"conv2d_transpose", "transpose_conv2d"},
      {"fc", "fully_connected"},
      {"dense", "fully_connected"},
      {"linear", "fully_connected"},
      {"maxpool", "max_pool2d"},
      {"max_pool", "max_pool2d"},
      {"avgpool", "avg_pool2d"},
      {"avg_pool", "avg_pool2d"},
      {"gap", "global_avg_pool"},
      {"gmp", "global_max_pool"},
      {"hswish", "hard_swish"},
      {"hardswish", "hard_swish"},
      {"hsigmoid", "hard_sigmoid"},
      {"upsample", "resize"},
  };
  return aliases;
}

std::optional<OpKind> OpFromAlias(std::string_view text) {
  for (const auto& [alias, name] : Aliases()) {
    if (alias == text) return OpFromName(name);
  }
  return OpFromName(text);
}

// A kernel of `op` with `params` (a family's typed struct, kernel_params.h).
template <class T>
Kernel KernelOf(OpKind op, const T& params) {
  Kernel kernel;
  kernel.op = op;
  WriteParams(params, kernel);
  return kernel;
}

// A conv's params with a bias and no dilation, its output size left to the caller.
ConvKernelParams ConvParamsOf(I n, I ih, I iw, I ic, I oc, I kh, I kw, I sh, I sw, I groups) {
  ConvKernelParams p;
  p.n = n, p.ih = ih, p.iw = iw, p.ic = ic, p.oc = oc, p.kh = kh, p.kw = kw, p.sh = sh, p.sw = sw, p.g = groups;
  p.dh = p.dw = 1;
  p.bias = 1;
  return p;
}

// `kernel` with its params read as P, changed by `change` and written back.
template <class P, class Change>
Kernel Changed(const Kernel& kernel, Change change) {
  P params = ReadParams<P>(kernel);
  change(params);
  Kernel changed = kernel;
  WriteParams(params, changed);
  return changed;
}

Kernel WithFused(Kernel kernel, const Kernel& kind) {
  kernel.fused = kind.fused;
  kernel.dtype = kind.dtype;
  return kernel;
}

// Encoders' sequence lengths and hidden sizes (BERT-mini to BERT-large, ViT-tiny to ViT-large).
const std::vector<I> kSequenceLengths = {16, 64, 128, 256, 512, 1024};
const std::vector<I> kHiddenSizes = {64, 128, 256, 384, 512, 768, 1024};

// A masked fill as attention writes it: x where the condition holds, else a scalar; the
// condition has x's shape, or is one row broadcast down the columns (`row_mask`).
Kernel WhereKernel(I h, I w, I c, bool row_mask) {
  WhereKernelParams p;
  p.x = {1, h, w, c};
  p.c = row_mask ? std::array<I, 4>{1, 1, 1, c} : p.x;
  p.y = {1, 1, 1, 1};
  Kernel kernel;
  kernel.op = OpKind::kWhere;
  WriteParams(p, kernel);
  return kernel;
}

// An embedding's look-up: `idx` token ids into a vocabulary × width table.
Kernel GatherKernel(I vocabulary, I width, I idx) {
  Kernel kernel;
  kernel.op = OpKind::kGather;
  WriteParams(GatherKernelParams{1, vocabulary, width, idx}, kernel);
  return kernel;
}

}  // namespace

// Constructors for each family, exactly the params kernel.h documents.
Kernel ConvLike(OpKind op, I n, I ih, I iw, I ic, I oc, I kh, I kw, I sh, I sw, I groups) {
  ConvKernelParams p = ConvParamsOf(n, ih, iw, ic, oc, kh, kw, sh, sw, groups);
  std::tie(p.pt, p.pb) = SamePads(ih, kh, sh);
  std::tie(p.pl, p.pr) = SamePads(iw, kw, sw);
  return KernelOf(op, p);
}

Kernel FcKernel(I m, I k, I n) { return KernelOf(OpKind::kFullyConnected, FullyConnectedKernelParams{m, k, n, 1}); }

Kernel PoolKernel(OpKind op, I h, I w, I c, I k, I s) {
  const auto [pt, pb] = SamePads(h, k, s);
  const auto [pl, pr] = SamePads(w, k, s);
  return KernelOf(op, PoolKernelParams{1, h, w, c, k, k, s, s, pt, pl, pb, pr});
}

Kernel ResizeKernel(I h, I w, I c, I scale, I mode) {
  return KernelOf(OpKind::kResize, ResizeKernelParams{1, h, w, c, h * scale, w * scale, mode});
}

Kernel TransposeConvKernel(I h, I w, I ic, I oc, I k, I s) {
  ConvKernelParams p = ConvParamsOf(1, h, w, ic, oc, k, k, s, s, 1);
  // No padding: the output is (in - 1) × stride + kernel.
  p.pt = p.pl = p.pb = p.pr = 0;
  p.oh = (h - 1) * s + k;
  p.ow = (w - 1) * s + k;
  return KernelOf(OpKind::kTransposeConv2D, p);
}

namespace {

Kernel MatMulKernel(I b, I m, I k, I n) { return KernelOf(OpKind::kMatMul, MatMulKernelParams{b, m, k, n}); }

Kernel ConcatKernel(I h, I w, I c0, I c1) {
  return KernelOf(OpKind::kConcat, ConcatKernelParams{{1, h, w, c0 + c1}, 3, {c0, c1}});
}

// A slice of an n h w c input to on oh ow oc, the params as kernel grouping reduces them (kernel_params.h).
Kernel SliceKernel(std::array<I, 4> in, std::array<I, 4> out) {
  return KernelOf(OpKind::kSlice, SliceKernelParams{{in[0], in[1], in[2], in[3]}, out[0], out[1], out[2], out[3]});
}

Kernel PadKernel(I h, I w, I c) {
  // One pixel around the spatial dims (the pad before a stride-2 valid conv).
  return KernelOf(OpKind::kPad, PadKernelParams{{1, h, w, c}, {0, 1, 1, 0, 0, 1, 1, 0}});
}

// The grids behind --grid; values chosen as DESIGN.md describes the original systems.
const std::vector<I> kTfliteKernels = {1, 2, 3, 5};
const std::vector<I> kTfliteFilters = {16, 32, 64, 128, 256};
const std::vector<I> kTfliteSizes = {8, 16, 32, 64};
const std::vector<I> kTfliteCin = {16, 32, 48};
const std::vector<I> kTfliteStrides = {1, 2, 3};
const std::vector<I> kTensorrtKernels = {1, 3, 5, 7};
const std::vector<I> kTensorrtStrides = {1, 2};
const std::vector<I> kTensorrtCout = {16, 32, 64, 128, 256};
const std::vector<double> kTensorrtRatios = {4, 2, 1, 0.5, 0.25};
const std::vector<I> kCnnSizes = {7, 14, 28, 56, 112};
const std::vector<I> kChannels = {16, 32, 64, 128, 256, 512};

// H log-spaced from 7 to 256 in 8 steps: 7 12 20 33 55 92 153 256.
std::vector<I> TensorrtSizes() {
  std::vector<I> sizes;
  for (int i = 0; i < 8; ++i) sizes.push_back(std::llround(7 * std::pow(256.0 / 7.0, i / 7.0)));
  return sizes;
}

std::string Joined(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

// Log-uniform integer in [lo, hi].
I LogUniform(SplitMix64& rng, I lo, I hi) {
  const double x = std::exp(std::log(static_cast<double>(lo)) +
                            rng.Uniform() * (std::log(static_cast<double>(hi)) - std::log(static_cast<double>(lo))));
  return std::clamp<I>(std::llround(x), lo, hi);
}

// A random channel count in [lo, hi] (lo ≥ 8): half the draws a multiple of 8, as real networks'
// channels are, half any count. The kinds architectures do not draw (batch norms, activations,
// elementwise, pads, resizes, concats) are measured only here, and libraries take their vector
// paths on whole vectors of channels: oneDNN's batch norm on an NHWC map runs a JIT kernel for a
// multiple of 8 (24 channels on 320×320: 0.6 ns an element) and a plain loop otherwise (about
// 3 ns), so a pack fitted on arbitrary counts alone priced PP-OCRv4 det's one batch norm 11× high.
I DrawChannels(SplitMix64& rng, I lo, I hi) {
  const I c = LogUniform(rng, lo, hi);
  if (rng.Below(2) == 0) return c;
  return std::clamp<I>((c + 4) / 8 * 8, (lo + 7) / 8 * 8, hi / 8 * 8);
}

template <typename T>
T Pick(SplitMix64& rng, const std::vector<T>& choices) {
  return choices[rng.Below(choices.size())];
}

// A random feature map's height and width: half the draws square (side log-uniform in [lo, 2·hi]),
// half wide or tall (a long side log-uniform in [8, 2·hi], the short one in [1, long/4], either
// way round), as text and sequence models have them (PaddleOCR's classifier runs 5×5 depthwise
// convs on 2×96 and 3×96 maps): trees fitted on square maps alone predict those 15–30% low.
// Square maps reach 2·hi too: detectors and segmenters at 640×640 run their first layers on
// 320×320 maps, and with squares up to hi alone the trees met those only as long thin maps (a
// 16-channel 3×3 depthwise on 320×320 predicted 1.3× its time).
std::pair<I, I> DrawSpatial(SplitMix64& rng, I lo, I hi) {
  if (rng.Below(2) == 0) {
    const I side = LogUniform(rng, lo, 2 * hi);
    return {side, side};
  }
  const I longer = LogUniform(rng, 8, 2 * hi);
  const I shorter = LogUniform(rng, 1, std::max<I>(1, longer / 4));
  return rng.Below(2) == 0 ? std::pair<I, I>{shorter, longer} : std::pair<I, I>{longer, shorter};
}

// One random kernel of `op`'s family (not yet checked for size).
std::optional<Kernel> DrawKernel(OpKind op, SplitMix64& rng) {
  switch (FamilyOf(op)) {
    case Family::kConv: {
      const auto [h, w] = DrawSpatial(rng, 4, 224);
      const I k = Pick<I>(rng, {1, 3, 5, 7});
      I sh = Pick<I>(rng, {1, 2}), sw = sh;
      if (h != w && rng.Below(3) == 0) {  // a third of non-square draws stride 2 one way only
        const bool along_h = rng.Below(2) == 0;
        sh = along_h ? 2 : 1;
        sw = along_h ? 1 : 2;
      }
      if (op == OpKind::kDepthwiseConv2D) {
        const I c = LogUniform(rng, 8, 1024);
        const I kd = k == 1 ? 3 : k;
        return ConvLike(op, 1, h, w, c, c, kd, kd, sh, sw, c);
      }
      return ConvLike(op, 1, h, w, LogUniform(rng, 3, 512), LogUniform(rng, 8, 512), k, k, sh, sw, 1);
    }
    case Family::kTransposeConv: {
      const I h = LogUniform(rng, 4, 64);
      return TransposeConvKernel(h, h, LogUniform(rng, 8, 256), LogUniform(rng, 8, 256), Pick<I>(rng, {2, 3, 4}),
                                 Pick<I>(rng, {1, 2}));
    }
    case Family::kFullyConnected:
      return FcKernel(Pick<I>(rng, {1, 1, 1, 8, 32}), LogUniform(rng, 16, 4096), LogUniform(rng, 16, 4096));
    case Family::kMatMul:
      return MatMulKernel(1, LogUniform(rng, 8, 1024), LogUniform(rng, 8, 1024), LogUniform(rng, 8, 1024));
    case Family::kPool: {
      const auto [h, w] = DrawSpatial(rng, 4, 224);
      return PoolKernel(op, h, w, DrawChannels(rng, 8, 512), Pick<I>(rng, {2, 3}), Pick<I>(rng, {1, 2}));
    }
    case Family::kNhwc: {
      I h = LogUniform(rng, 2, 224), c = DrawChannels(rng, 8, 1024);
      if (op == OpKind::kSpaceToDepth) h += h % 2;
      if (op == OpKind::kDepthToSpace) c = (c + 3) / 4 * 4;
      return NhwcKernel(op, h, h, c);
    }
    case Family::kBinary: {
      // A third on equal shapes, a third with one operand a scalar, a third with one a vector of
      // channels (1×1×1×C), either side (a commutative op's keyed with the larger first): models
      // multiply by constants and scale channels, and such an op reads one full tensor, not two.
      const I h = LogUniform(rng, 2, 224), c = DrawChannels(rng, 8, 1024);
      const std::uint64_t shape = rng.Below(3);
      if (shape == 0) return BinaryKernel(op, h, h, c);
      Kernel kernel = BroadcastBinaryKernel(op, h, h, c, rng.Below(2) == 0 ? 'a' : 'b', shape == 2);
      WriteParams(CanonicalOperandOrder(op, ReadParams<BinaryKernelParams>(kernel)), kernel);  // as a model's is keyed
      return kernel;
    }
    case Family::kConcat: {
      const I h = LogUniform(rng, 4, 112);
      return ConcatKernel(h, h, DrawChannels(rng, 8, 512), DrawChannels(rng, 8, 512));
    }
    case Family::kResize: {
      const I h = LogUniform(rng, 4, 112);
      return ResizeKernel(h, h, DrawChannels(rng, 8, 256), 2, Pick<I>(rng, {0, 1}));
    }
    case Family::kPad: {
      const I h = LogUniform(rng, 4, 112);
      return PadKernel(h, h, DrawChannels(rng, 8, 256));
    }
    case Family::kLayerNorm:  // a sequence of hidden vectors
      return NhwcKernel(op, 1, LogUniform(rng, 16, 1024), LogUniform(rng, 64, 1024));
    case Family::kWhere: {
      const I h = LogUniform(rng, 2, 128), c = LogUniform(rng, 8, 1024);
      return WhereKernel(h, h, c, rng.Below(2) == 0);
    }
    case Family::kGather:
      return GatherKernel(LogUniform(rng, 100, 50000), LogUniform(rng, 64, 1024), LogUniform(rng, 1, 1024));
    case Family::kSlice: {
      // A third split channels (halves to quarters), a third take one of 2-4 blocks off a leading
      // axis (attention's q, k and v), a third crop the middle axis of three.
      const I h = LogUniform(rng, 2, 224), c = LogUniform(rng, 8, 1024), parts = Pick<I>(rng, {2, 3, 4});
      switch (rng.Below(3)) {
        case 0: return SliceKernel({1, 1, h * h, c}, {1, 1, h * h, std::max<I>(1, c / parts)});
        case 1: return SliceKernel({1, 1, parts, h * c}, {1, 1, 1, h * c});
        default: return SliceKernel({1, h, h, c}, {1, h, std::max<I>(1, h / parts), c});
      }
    }
    case Family::kNone:
      break;
  }
  return std::nullopt;
}

// Random draws stay runnable in a campaign: at most 16M elements in a tensor, 4 GMAC in a conv.
bool SmallEnough(const Kernel& k) {
  constexpr I kMaxElements = I{1} << 24;
  const Family family = FamilyOf(k.op);
  if (family == Family::kConv) {
    const ConvKernelParams p = ReadParams<ConvKernelParams>(k);
    const I oh = (p.ih + p.sh - 1) / p.sh;
    const I ow = (p.iw + p.sw - 1) / p.sw;
    const I macs = oh * ow * p.oc * p.kh * p.kw * p.ic / p.g;
    return p.ih * p.iw * p.ic <= kMaxElements && oh * ow * p.oc <= kMaxElements && macs <= I{4} * 1000 * 1000 * 1000;
  }
  if (family == Family::kTransposeConv) {
    const ConvKernelParams p = ReadParams<ConvKernelParams>(k);
    return p.oh.value_or(0) * p.ow.value_or(0) * p.oc <= kMaxElements;
  }
  if (family == Family::kMatMul) {
    const MatMulKernelParams p = ReadParams<MatMulKernelParams>(k);
    return p.m * p.k * p.n <= I{1} << 30;
  }
  if (family == Family::kBinary) {  // the larger operand (the other may be broadcast)
    const auto [a, b] = ReadParams<BinaryKernelParams>(k);
    return std::max(a[1], b[1]) * std::max(a[2], b[2]) * std::max(a[3], b[3]) <= kMaxElements;
  }
  if (family == Family::kNhwc) {
    const NhwcParams p = ReadParams<NhwcParams>(k);
    return p.h * p.h * p.c <= kMaxElements;
  }
  if (family == Family::kSlice || family == Family::kLayerNorm) {
    const NhwcParams p = ReadParams<NhwcParams>(k);
    return p.n * p.h * p.w * p.c <= kMaxElements;
  }
  if (family == Family::kWhere) {
    const WhereKernelParams p = ReadParams<WhereKernelParams>(k);
    return p.x[0] * p.x[1] * p.x[2] * p.x[3] <= kMaxElements;
  }
  if (family == Family::kGather) {  // the table, and what the look-up writes
    const GatherKernelParams p = ReadParams<GatherKernelParams>(k);
    return p.outer * p.rows * p.inner <= kMaxElements && p.outer * p.idx * p.inner <= kMaxElements;
  }
  return true;
}

// Channel and size steps of NeighbourKernels.
constexpr I kChannelStep = 8;
I SizeStep(I size) { return std::max<I>(1, size / 8); }

// A conv's or pool's window along H and W (a conv without pads or dilations read as 0 and 1).
struct Window {
  I ih, iw, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
};
Window WindowOf(const Kernel& k) {
  if (FamilyOf(k.op) == Family::kPool) {
    const PoolKernelParams p = ReadParams<PoolKernelParams>(k);
    return {p.ih, p.iw, p.kh, p.kw, p.sh, p.sw, 1, 1, p.pt, p.pl, p.pb, p.pr};
  }
  const ConvKernelParams p = ReadParams<ConvKernelParams>(k);
  return {p.ih, p.iw, p.kh, p.kw, p.sh, p.sw, p.dh.value_or(1), p.dw.value_or(1),
          p.pt.value_or(0), p.pl.value_or(0), p.pb.value_or(0), p.pr.value_or(0)};
}

// Sets the spatial size of a conv or pool kernel (P: its params), and `pads` when given.
template <class P>
void SetSpatial(Kernel& k, I ih, I iw, const std::optional<std::array<I, 4>>& pads) {
  P p = ReadParams<P>(k);
  p.ih = ih;
  p.iw = iw;
  if (pads) p.pt = (*pads)[0], p.pb = (*pads)[1], p.pl = (*pads)[2], p.pr = (*pads)[3];
  WriteParams(p, k);
}

// Sets the spatial size of a conv or pool kernel and recomputes SAME pads if it had them.
void ResizeSpatial(Kernel& k, I ih, I iw) {
  const Window o = WindowOf(k);
  const auto [opt, opb] = SamePads(o.ih, o.kh, o.sh, o.dh);
  const auto [opl, opr] = SamePads(o.iw, o.kw, o.sw, o.dw);
  std::optional<std::array<I, 4>> pads;
  if (o.pt == opt && o.pb == opb && o.pl == opl && o.pr == opr) {
    const auto [pt, pb] = SamePads(ih, o.kh, o.sh, o.dh);
    const auto [pl, pr] = SamePads(iw, o.kw, o.sw, o.dw);
    pads = std::array<I, 4>{pt, pb, pl, pr};
  }
  if (FamilyOf(k.op) == Family::kPool) SetSpatial<PoolKernelParams>(k, ih, iw, pads);
  else SetSpatial<ConvKernelParams>(k, ih, iw, pads);
}

// True when the window fits the padded input (an output of at least one pixel).
bool WindowFits(const Kernel& k) {
  const Window w = WindowOf(k);
  return w.ih + w.pt + w.pb >= (w.kh - 1) * w.dh + 1 && w.iw + w.pl + w.pr >= (w.kw - 1) * w.dw + 1;
}

bool AllPositive(const Kernel& k) {
  // Pads, flags, axes, permutations and modes may be 0; every size must be positive.
  for (const auto& [name, value] : k.params)
    if (value <= 0 && !ParamMayBeZero(name)) return false;
  // A TensorRT library conv's elmt_fused=0 too stops a step: its lines are not stepped from.
  return KernelFamilyOf(k.op) != KernelFamily::kConv || ReadParams<ConvKernelParams>(k).elmt_fused.value_or(1) > 0;
}

// Random draws per kind (RandomShares): a binary kind has three operand shapes to cover.
std::size_t RandomWeight(const Kernel& kind) { return FamilyOf(kind.op) == Family::kBinary ? 3 : 1; }

}  // namespace

Kernel NhwcKernel(OpKind op, I h, I w, I c) {
  const NhwcParams x{1, h, w, c};
  switch (op) {
    case OpKind::kMean: case OpKind::kReduceSum: case OpKind::kReduceMax: case OpKind::kReduceMin:
      return KernelOf(op, ReduceKernelParams{x, 6});  // H and W: the global-pooling reduction models use
    case OpKind::kArgMax: case OpKind::kArgMin:
      return KernelOf(op, ReduceKernelParams{x, 8});  // over the channels: a classifier's or a token's scores
    case OpKind::kGelu:
      return KernelOf(op, GeluKernelParams{x, 0});  // the exact form, PyTorch's default
    case OpKind::kCast: {  // int64 to float32: the attention mask's cast exporters write
      Kernel k = KernelOf(op, CastKernelParams{x, static_cast<I>(DataType::kFloat32)});
      k.dtype = DataType::kInt64;
      return k;
    }
    case OpKind::kLayerNorm:
      return KernelOf(op, LayerNormKernelParams{x, 1, 1});  // with scale and bias, as models have it
    case OpKind::kTranspose:  // NHWC → NCHW, the transpose models insert most
      return KernelOf(op, TransposeKernelParams{x, {0, 3, 1, 2}});
    case OpKind::kDepthToSpace: case OpKind::kSpaceToDepth:
      return KernelOf(op, DepthSpaceKernelParams{x, 2});
    default:
      return KernelOf(op, x);
  }
}

Kernel BinaryKernel(OpKind op, I h, I w, I c) { return KernelOf(op, BinaryKernelParams{{1, h, w, c}, {1, h, w, c}}); }

Kernel BroadcastBinaryKernel(OpKind op, I h, I w, I c, char side, bool per_channel) {
  BinaryKernelParams p{{1, h, w, c}, {1, h, w, c}};
  std::array<I, 4>& operand = side == 'a' ? p.a : p.b;
  operand[1] = operand[2] = 1;
  if (!per_channel) operand[3] = 1;
  return KernelOf(op, p);
}

std::uint64_t SplitMix64::Next() {
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double SplitMix64::Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }

std::uint64_t SplitMix64::Below(std::uint64_t n) { return n == 0 ? 0 : Next() % n; }

Expected<Kernel> ParseKindAlias(std::string_view text) {
  Kernel kernel;
  size_t start = 0;
  bool first = true;
  while (true) {
    const size_t end = text.find('+', start);
    const std::string_view part = text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    std::optional<OpKind> op = OpFromAlias(part);
    if (!op || *op == OpKind::kOpaque) {
      return InvalidInput("unknown kernel kind '" + std::string(part) + "' in '" + std::string(text) +
                          "' (an op name such as conv2d, or one of: " + KindAliasHelp() + ")");
    }
    if (first) kernel.op = *op;
    else kernel.fused.push_back(*op);
    if (first && IsLogic(*op)) kernel.dtype = DataType::kBool;  // logic kernels are bool kernels
    first = false;
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return kernel;
}

Expected<std::vector<Kernel>> ParseKindList(std::string_view list) {
  std::vector<Kernel> kinds;
  std::set<std::string> seen;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t end = std::min(list.find(',', start), list.size());
    std::string_view item = list.substr(start, end - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.empty()) return InvalidInput("empty kernel kind in '" + std::string(list) + "'");
    LATTE_ASSIGN_OR_RETURN(Kernel kind, ParseKindAlias(item));
    if (seen.insert(kind.Kind()).second) kinds.push_back(kind);
    start = end + 1;
  }
  return kinds;
}

std::string KindAliasHelp() {
  std::map<std::string, std::vector<std::string>> by_name;
  for (const auto& [alias, name] : Aliases()) by_name[std::string(name)].push_back(std::string(alias));
  std::vector<std::string> items;
  for (const auto& [name, aliases] : by_name) {
    std::string item;
    for (const std::string& alias : aliases) item += (item.empty() ? "" : "/") + alias;
    items.push_back(item + " (" + name + ")");
  }
  return Joined(items);
}

std::pair<I, I> SamePads(I in, I kernel, I stride, I dilation) {
  const I out = (in + stride - 1) / stride;
  const I effective = (kernel - 1) * dilation + 1;
  const I total = std::max<I>(0, (out - 1) * stride + effective - in);
  return {total / 2, total - total / 2};
}

Kernel ConvKernel(OpKind op, I h, I w, I cin, I cout, I k, I stride) {
  return ConvLike(op, 1, h, w, cin, cout, k, k, stride, stride, op == OpKind::kDepthwiseConv2D ? cin : 1);
}

std::string GridNameFor(const Kernel& kind, std::string_view grid) {
  if (grid == "tflite" && kind.op == OpKind::kConv2D) return "tflite";
  if (grid == "tensorrt" && (kind.op == OpKind::kConv2D || kind.op == OpKind::kDepthwiseConv2D)) return "tensorrt";
  if (kind.op == OpKind::kConv2D) return "tflite";  // conv2d's default grid is the estimator's
  return "default";
}

Expected<std::vector<Kernel>> GridKernels(const Kernel& kind, std::string_view grid) {
  if (grid != "default" && grid != "tflite" && grid != "tensorrt") {
    return InvalidInput("unknown grid '" + std::string(grid) + "' (default, tflite, tensorrt)");
  }
  const std::string name = GridNameFor(kind, grid);
  const OpKind op = kind.op;
  std::vector<Kernel> kernels;
  auto add = [&](Kernel k) { kernels.push_back(WithFused(std::move(k), kind)); };
  if (name == "tflite") {
    // kernel × filters × H=W × Cin × stride, SAME padding (the estimator's generated models).
    for (I k : kTfliteKernels)
      for (I filters : kTfliteFilters)
        for (I h : kTfliteSizes)
          for (I cin : kTfliteCin)
            for (I s : kTfliteStrides) add(ConvKernel(op, h, h, cin, filters, k, s));
    return kernels;
  }
  if (name == "tensorrt") {
    // kernel × stride × H × Cout × Cin/Cout ratio (depthwise: Cin = Cout), batch 1.
    for (I k : kTensorrtKernels)
      for (I s : kTensorrtStrides)
        for (I h : TensorrtSizes())
          for (I cout : kTensorrtCout) {
            if (op == OpKind::kDepthwiseConv2D) {
              add(ConvKernel(op, h, h, cout, cout, k, s));
              continue;
            }
            for (double ratio : kTensorrtRatios) {
              add(ConvKernel(op, h, h, std::max<I>(1, std::llround(ratio * static_cast<double>(cout))), cout, k, s));
            }
          }
    return kernels;
  }
  switch (FamilyOf(op)) {
    case Family::kConv:  // depthwise: kernel × channels × H × stride
      for (I k : {3, 5, 7})
        for (I c : kChannels)
          for (I h : kCnnSizes)
            for (I s : {1, 2}) add(ConvKernel(op, h, h, c, c, k, s));
      break;
    case Family::kTransposeConv:
      for (I k : {2, 3, 4})
        for (I h : {7, 14, 28})
          for (I cin : {16, 32, 64})
            for (I cout : {16, 32, 64}) add(TransposeConvKernel(h, h, cin, cout, k, 2));
      break;
    case Family::kFullyConnected:
      for (I k : {64, 128, 256, 512, 1024, 2048})
        for (I n : {64, 128, 256, 512, 1024, 2048}) add(FcKernel(1, k, n));
      break;
    case Family::kMatMul:
      for (I m : {16, 64, 256})
        for (I k : {16, 64, 256})
          for (I n : {16, 64, 256}) add(MatMulKernel(1, m, k, n));
      break;
    case Family::kPool:
      for (I k : {2, 3})
        for (I s : {1, 2})
          for (I h : kCnnSizes)
            for (I c : {16, 32, 64, 128, 256}) add(PoolKernel(op, h, h, c, k, s));
      break;
    case Family::kNhwc:
      // space_to_depth needs even sizes: the power-of-two ladder instead of the CNN one.
      for (I h : op == OpKind::kSpaceToDepth ? std::vector<I>{8, 16, 32, 64, 128} : kCnnSizes)
        for (I c : kChannels) add(NhwcKernel(op, h, h, c));
      break;
    case Family::kBinary:
      for (I h : kCnnSizes)
        for (I c : kChannels) add(BinaryKernel(op, h, h, c));
      break;
    case Family::kConcat:
      for (I h : {7, 14, 28, 56})
        for (I c0 : {16, 32, 64, 128})
          for (I c1 : {16, 32, 64, 128}) add(ConcatKernel(h, h, c0, c1));
      break;
    case Family::kResize:
      for (I h : {7, 14, 28, 56})
        for (I c : {16, 32, 64, 128})
          for (I mode : {0, 1}) add(ResizeKernel(h, h, c, 2, mode));
      break;
    case Family::kPad:
      for (I h : kCnnSizes)
        for (I c : kChannels) add(PadKernel(h, h, c));
      break;
    case Family::kLayerNorm:
      for (I s : kSequenceLengths)
        for (I c : kHiddenSizes) add(NhwcKernel(op, 1, s, c));
      break;
    case Family::kWhere:
      for (I h : kCnnSizes)
        for (I c : kChannels)
          for (bool row_mask : {false, true}) add(WhereKernel(h, h, c, row_mask));
      break;
    case Family::kGather:
      for (I vocabulary : {1000, 8000, 30522})
        for (I width : {128, 256, 512, 768})
          for (I idx : {16, 128, 512}) add(GatherKernel(vocabulary, width, idx));
      break;
    case Family::kSlice:  // channels halved
      for (I h : kCnnSizes)
        for (I c : kChannels) add(SliceKernel({1, 1, h * h, c}, {1, 1, h * h, c / 2}));
      break;
    case Family::kNone:
      return Unsupported("no built-in grid for kernel kind '" + kind.Kind() + "'");
  }
  return kernels;
}

Expected<std::vector<Kernel>> RandomKernels(const Kernel& kind, std::size_t count, std::uint64_t seed) {
  if (FamilyOf(kind.op) == Family::kNone) {
    return Unsupported("no sampling ranges for kernel kind '" + kind.Kind() + "'");
  }
  // Each kind gets its own stream, so adding a kind to --kernels does not change the others' draws.
  std::uint64_t kind_seed = seed;
  for (char c : kind.Kind()) kind_seed = kind_seed * 131 + static_cast<unsigned char>(c);
  SplitMix64 rng(kind_seed);
  std::vector<Kernel> kernels;
  std::set<std::string> seen;
  // Small spaces (few distinct draws) end early rather than loop forever.
  for (std::size_t attempt = 0; kernels.size() < count && attempt < count * 50 + 100; ++attempt) {
    std::optional<Kernel> k = DrawKernel(kind.op, rng);
    if (!k || !SmallEnough(*k)) continue;
    Kernel kernel = WithFused(std::move(*k), kind);
    if (seen.insert(kernel.Key()).second) kernels.push_back(std::move(kernel));
  }
  return kernels;
}

std::vector<Kernel> NeighbourKernels(const Kernel& kernel) {
  std::vector<Kernel> out;
  auto keep = [&](const Kernel& k) {
    if (!AllPositive(k) || k == kernel) return;
    const Family family = FamilyOf(k.op);
    if ((family == Family::kConv || family == Family::kPool || family == Family::kTransposeConv) && !WindowFits(k)) return;
    out.push_back(k);
  };
  const Family family = FamilyOf(kernel.op);
  for (I delta : {-1, 1}) {
    switch (family) {
      case Family::kConv:
      case Family::kTransposeConv: {
        using P = ConvKernelParams;
        const P p = ReadParams<P>(kernel);
        if (p.g == p.ic && p.g > 1) {  // depthwise: channels move together, multiplier kept
          keep(Changed<P>(kernel, [&](P& q) {
            q.ic = q.g = p.ic + delta * kChannelStep;
            q.oc = q.ic * (p.oc / p.ic);
          }));
        } else if (p.g == 1) {
          keep(Changed<P>(kernel, [&](P& q) { q.ic = p.ic + delta * kChannelStep; }));
          keep(Changed<P>(kernel, [&](P& q) { q.oc = p.oc + delta * kChannelStep; }));
        }
        Kernel k = kernel;
        ResizeSpatial(k, p.ih + delta * SizeStep(p.ih), p.iw + delta * SizeStep(p.iw));
        if (family == Family::kTransposeConv) {  // keep the output's extra rows (output padding)
          k = Changed<P>(k, [&](P& q) {
            q.oh = p.oh.value_or(0) + (q.ih - p.ih) * p.sh;
            q.ow = p.ow.value_or(0) + (q.iw - p.iw) * p.sw;
          });
        }
        keep(k);
        break;
      }
      case Family::kFullyConnected: {
        using P = FullyConnectedKernelParams;
        const P p = ReadParams<P>(kernel);
        keep(Changed<P>(kernel, [&](P& q) { q.k = p.k + delta * kChannelStep; }));
        keep(Changed<P>(kernel, [&](P& q) { q.n = p.n + delta * kChannelStep; }));
        break;
      }
      case Family::kPool: {
        using P = PoolKernelParams;
        const P p = ReadParams<P>(kernel);
        keep(Changed<P>(kernel, [&](P& q) { q.c = p.c + delta * kChannelStep; }));
        Kernel k = kernel;
        ResizeSpatial(k, p.ih + delta * SizeStep(p.ih), p.iw + delta * SizeStep(p.iw));
        keep(k);
        break;
      }
      case Family::kNhwc: {
        if (kernel.op == OpKind::kDepthToSpace || kernel.op == OpKind::kSpaceToDepth) break;  // divisibility
        using P = NhwcParams;
        const P p = ReadParams<P>(kernel);
        keep(Changed<P>(kernel, [&](P& q) { q.c = p.c + delta * kChannelStep; }));
        if (p.h > 1 || p.w > 1) {
          keep(Changed<P>(kernel, [&](P& q) {
            q.h = p.h + delta * SizeStep(p.h);
            q.w = p.w + delta * SizeStep(p.w);
          }));
        }
        break;
      }
      case Family::kBinary: {
        // Move a dim of both operands where they agree; a broadcast dim (1) stays.
        using P = BinaryKernelParams;
        const P p = ReadParams<P>(kernel);
        for (int dim : {3, 1}) {
          keep(Changed<P>(kernel, [&](P& q) {
            for (std::size_t d : dim == 3 ? std::vector<std::size_t>{3} : std::vector<std::size_t>{1, 2}) {
              const I step = dim == 3 ? kChannelStep : SizeStep(p.a[d]);
              if (p.a[d] > 1) q.a[d] = p.a[d] + delta * step;
              if (p.b[d] == p.a[d] && p.b[d] > 1) q.b[d] = q.a[d];
            }
          }));
        }
        break;
      }
      default:
        break;
    }
  }
  return out;
}

nlohmann::json SamplerConfig::ToJson() const {
  nlohmann::json json = {{"strategy", strategy}, {"kinds", kinds}, {"max_kernels", max_kernels}};
  // The seed draws and shuffles grid and random kernels. A from-models sample does not use it: left
  // out, a calibration with another seed resumes the models' campaign instead of measuring it again.
  if (strategy != "from-models") json["seed"] = seed;
  if (strategy == "grid") json["grid"] = grid;
  if (strategy == "architectures" && residual_fusions) json["residual_fusions"] = true;  // absent: as before
  if (strategy == "from-models") {
    json["models"] = models;
    json["neighbours"] = neighbours;
    nlohmann::json shapes = nlohmann::json::object();
    for (const auto& [name, shape] : input_shapes) shapes[name] = shape;
    json["input_shapes"] = shapes;
    if (!input_values.empty()) json["input_values"] = input_values;  // absent: as before
  }
  if (strategy == "from-models" || strategy == "transformers") {
    if (!layout_backend.empty()) json["layout_backend"] = layout_backend;
    if (fusion_rules) json["fusion_rules"] = *fusion_rules;
  }
  // Kernels of whole encoder models imported and grouped: not the layers' eight kernels once
  // drawn, so a store's campaign of those is not resumed as this one.
  if (strategy == "transformers") json["encoders"] = "models";
  return json;
}

namespace {

// The rules a sample groups models' nodes by: the config's, or FusionRules::Default().
Expected<FusionRules> RulesOf(const SamplerConfig& config) {
  if (!config.fusion_rules) return FusionRules::Default();
  return FusionRules::FromKinds(*config.fusion_rules);
}

// `graph` laid out as config.layout_backend runs it (when set: NHWC, activations folded, as
// prediction lays a model out) and grouped into kernels by `rules`.
Expected<KernelGrouping> GroupAsRun(Graph& graph, const SamplerConfig& config, const FusionRules& rules) {
  if (!config.layout_backend.empty()) {
    const NhwcBackends nhwc = config.layout_backend_takes_nhwc ? NhwcBackends{config.layout_backend} : NhwcBackends{};
    LATTE_ASSIGN_OR_RETURN(auto plan,
                           PlanGraphForBackends(graph, std::vector<std::string>(graph.num_nodes(), config.layout_backend), nhwc));
    graph = std::move(plan.graph);
  }
  return GroupIntoKernels(graph, rules);
}

// Whether `kernel` is of one of `kinds` (none: every kernel is): a plain kind ("conv2d") takes
// every kernel with that main op, a fused kind only itself.
bool Wanted(const std::vector<Kernel>& kinds, const Kernel& kernel) {
  return kinds.empty() || std::any_of(kinds.begin(), kinds.end(), [&](const Kernel& kind) {
           return kind.fused.empty() ? kind.op == kernel.op : kind.Kind() == kernel.Kind();
         });
}

}  // namespace

std::vector<std::size_t> RandomShares(const std::vector<Kernel>& kinds, std::size_t count) {
  std::size_t total = 0;
  for (const Kernel& kind : kinds) total += RandomWeight(kind);
  std::vector<std::size_t> shares;
  std::size_t given = 0;
  for (const Kernel& kind : kinds) {
    shares.push_back(count * RandomWeight(kind) / std::max<std::size_t>(1, total));
    given += shares.back();
  }
  for (std::size_t i = 0; given < count && !shares.empty(); i = (i + 1) % shares.size(), ++given) ++shares[i];
  return shares;
}

Expected<Sample> SampleKernels(const SamplerConfig& config) {
  Sample sample;
  std::vector<Kernel> kinds;
  for (const std::string& text : config.kinds) {
    LATTE_ASSIGN_OR_RETURN(Kernel kind, ParseKindAlias(text));
    kinds.push_back(kind);
  }
  std::set<std::string> seen;
  // Each kernel once, into the list given (grid and random: a kind's own, spread after).
  auto add_to = [&](std::vector<Kernel>& into, const Kernel& k) {
    if (seen.insert(k.Key()).second) into.push_back(k);
  };
  auto add = [&](const Kernel& k) { add_to(sample.kernels, k); };
  if (config.strategy == "grid" || config.strategy == "random") {
    if (kinds.empty()) return InvalidInput("no kernel kinds to sample (--kernels)");
    if (config.strategy == "random" && config.max_kernels == 0) {
      return InvalidInput("the random strategy needs a count (--max-kernels)");
    }
    if (config.strategy == "random" && config.max_kernels > kMaxRandomKernels) {
      return InvalidInput(fmt::format("--max-kernels {} is more than the random strategy draws (at most {})",
                                      config.max_kernels, kMaxRandomKernels));
    }
    const std::vector<std::size_t> shares = RandomShares(kinds, config.max_kernels);
    // Each kind's kernels shuffled, then spread evenly over the campaign: the i-th of a kind's n
    // kernels at (i + u) / n, u a random offset of the kind's, all kinds' merged by that place. A
    // campaign its budget stops has then measured every kind in proportion to its share, and every
    // kind at least once past the first few kernels of each (a plain shuffle of all kinds together
    // left ORT seed 71's random phase, stopped after 203 of 10,000 kernels, without a slice: a
    // kind the models use went unpredicted).
    SplitMix64 rng(config.seed);
    std::vector<std::pair<double, Kernel>> placed;
    for (std::size_t index = 0; index < kinds.size(); ++index) {
      const Kernel& kind = kinds[index];
      auto kernels = config.strategy == "grid" ? GridKernels(kind, config.grid)
                                               : RandomKernels(kind, shares[index], config.seed);
      if (!kernels.ok()) return kernels.status();
      std::vector<Kernel> own;
      for (const Kernel& k : *kernels) add_to(own, k);
      for (std::size_t i = own.size(); i > 1; --i) std::swap(own[i - 1], own[rng.Below(i)]);
      const double offset = rng.Uniform();
      for (std::size_t i = 0; i < own.size(); ++i)
        placed.push_back({(static_cast<double>(i) + offset) / static_cast<double>(own.size()), std::move(own[i])});
      sample.notes.push_back(kind.Kind() + ": " + std::to_string(kernels->size()) + " kernels" +
                             (config.strategy == "grid" ? " (" + GridNameFor(kind, config.grid) + " grid)" : ""));
    }
    std::stable_sort(placed.begin(), placed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [place, kernel] : placed) sample.kernels.push_back(std::move(kernel));
  } else if (config.strategy == "from-models") {
    if (config.models.empty()) return InvalidInput("the from-models strategy needs model files (--models)");
    ImportOptions import_options;
    import_options.input_shapes = config.input_shapes;
    import_options.input_values = config.input_values;
    import_options.skip_unknown_input_names = config.models.size() > 1;  // one list for all models
    std::set<std::string> shape_names_used;
    LATTE_ASSIGN_OR_RETURN(const FusionRules rules, RulesOf(config));
    std::vector<Kernel> neighbours;
    for (const std::string& path : config.models) {
      auto graph = ImportModel(path, import_options);
      if (!graph.ok()) return graph.status().WithContext(path);
      for (TensorId id : graph->inputs) shape_names_used.insert(graph->tensor(id).name);
      auto grouping = GroupAsRun(*graph, config, rules);
      if (!grouping.ok()) return grouping.status().WithContext(path);
      std::size_t taken = 0;
      for (const KernelGroup& group : grouping->kernels) {
        if (!Wanted(kinds, group.kernel)) continue;
        ++taken;
        add(group.kernel);
        if (config.neighbours) {
          for (const Kernel& n : NeighbourKernels(group.kernel)) neighbours.push_back(n);
        }
      }
      sample.notes.push_back(path + ": " + std::to_string(taken) + " of " + std::to_string(grouping->kernels.size()) +
                             " kernels taken");
      for (const UncoveredNode& node : grouping->uncovered) {
        sample.notes.push_back(path + ": " + DescribeNode(*graph, node.node) + " is in no kernel, not profiled: " + node.why);
      }
    }
    LATTE_RETURN_IF_ERROR(CheckInputShapesNamed(config.input_shapes, shape_names_used));
    const std::size_t model_kernels = sample.kernels.size();
    for (const Kernel& n : neighbours) add(n);
    sample.notes.push_back(std::to_string(model_kernels) + " distinct model kernels, " +
                           std::to_string(sample.kernels.size() - model_kernels) + " neighbours");
  } else if (config.strategy == "architectures") {
    if (config.max_kernels == 0) return InvalidInput("the architectures strategy needs a count (--max-kernels)");
    // A plain kind ("conv2d") takes every kernel with that main op; a fused kind only itself.
    std::map<std::string, std::size_t> per_kind;
    // Residual fusions only where asked for by kind (a backend whose rules fuse them): the draw
    // for everyone else stays as it was.
    const bool residual_fusions = config.residual_fusions || std::any_of(kinds.begin(), kinds.end(), [](const Kernel& kind) {
                                    return IsResidualFusion(kind);
                                  });
    for (const Kernel& k : ArchitectureKernels(config.seed, config.max_kernels, residual_fusions)) {
      if (!Wanted(kinds, k)) continue;
      add(k);
      ++per_kind[k.Kind()];
    }
    for (const auto& [kind, n] : per_kind) sample.notes.push_back(kind + ": " + std::to_string(n) + " kernels");
  } else if (config.strategy == "transformers") {
    if (config.max_kernels == 0) return InvalidInput("the transformers strategy needs a count (--max-kernels)");
    LATTE_ASSIGN_OR_RETURN(std::vector<Kernel> drawn, TransformerKernels(config, kinds));
    std::map<std::string, std::size_t> per_kind;
    for (const Kernel& k : drawn) {
      add(k);
      ++per_kind[k.Kind()];
    }
    for (const auto& [kind, n] : per_kind) sample.notes.push_back(kind + ": " + std::to_string(n) + " kernels");
  } else if (config.strategy == "adaptive") {
    // It samples from the store's measurements: profile/adaptive.h, called by RunProfile.
    return InvalidInput("the adaptive strategy samples from a store: use AdaptiveSample (profile/adaptive.h)");
  } else {
    return InvalidInput("unknown strategy '" + config.strategy +
                        "' (grid, random, from-models, architectures, transformers, adaptive)");
  }
  if (config.max_kernels > 0 && sample.kernels.size() > config.max_kernels) {
    sample.notes.push_back("kept the first " + std::to_string(config.max_kernels) + " of " +
                           std::to_string(sample.kernels.size()) + " kernels (--max-kernels)");
    sample.kernels.resize(config.max_kernels);
  }
  return sample;
}

EncoderShape DrawEncoderShape(SplitMix64& rng) {
  EncoderShape shape;
  const I length = LogUniform(rng, 16, 1024);
  switch (rng.Below(3)) {
    case 0: shape.seq = std::max<I>(16, length / 16 * 16); break;
    case 1: shape.seq = std::min<I>(1024, std::max<I>(16, length / 16 * 16) + 1); break;  // a class token
    default: shape.seq = length; break;
  }
  const I step = rng.Below(4) == 0 ? 32 : 64;
  shape.hidden = std::clamp<I>((LogUniform(rng, 64, 1024) + step / 2) / step * step, 64, 1024);
  std::vector<I> heads;
  for (I h = 1; h <= 16; ++h)
    if (shape.hidden % h == 0 && shape.hidden / h >= 16) heads.push_back(h);
  shape.heads = Pick(rng, heads);
  return shape;
}

encoders::EncoderConfig EncoderModelOf(const EncoderShape& shape, SplitMix64& rng) {
  encoders::EncoderConfig model;
  model.layers = 1;
  model.hidden = static_cast<int>(shape.hidden);
  model.heads = static_cast<int>(shape.heads);
  model.opset = rng.Below(2) == 0 ? 17 : 13;
  const I grid = std::max<I>(2, std::llround(std::sqrt(static_cast<double>(shape.seq - 1))));
  if (shape.seq % 16 == 1 || grid * grid == shape.seq - 1) {  // a class token: an image encoder's patches
    model.name = "vit";
    model.patch = static_cast<int>(Pick<I>(rng, {8, 14, 16, 32}));
    model.image = static_cast<int>(grid) * model.patch;
    model.classes = 1000;
  } else {
    model.name = "bert";
    model.sequence = static_cast<int>(shape.seq);
    model.max_positions = std::max(512, model.sequence);
    // The embedding table's rows barely change a gather's time; its size changes the draw's.
    model.vocab = static_cast<int>(std::clamp<I>((I{1} << 22) / shape.hidden, 1000, 30522));
  }
  return model;
}

DrawnEncoderNetwork DrawEncoderNetwork(SplitMix64& rng) {
  EncoderShape shape = DrawEncoderShape(rng);
  // Projections and MLP (12 S·H² multiply-adds), attention's scores and context (2 S²·H).
  auto flops = [](const EncoderShape& s) {
    const double seq = static_cast<double>(s.seq), hidden = static_cast<double>(s.hidden);
    return 2 * (12 * seq * hidden * hidden + 2 * seq * seq * hidden);
  };
  while (flops(shape) > kMaxEncoderNetworkFlops) shape = DrawEncoderShape(rng);
  DrawnEncoderNetwork drawn{EncoderModelOf(shape, rng)};
  drawn.model.layers = 2;
  return drawn;
}

bool DrawnEncoderNetwork::HasAttentionMask() const { return model.name.rfind("bert", 0) == 0; }

Expected<Graph> DrawnEncoderNetwork::Import(bool mask_of_ones) const {
  ImportOptions options;
  if (mask_of_ones && HasAttentionMask())
    options.input_values["attention_mask"] = std::vector<std::string>(static_cast<std::size_t>(model.sequence), "1");
  const std::string bytes = encoders::ModelBytes(model);
  auto graph = ImportModelBytes({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()}, ModelFormat::kOnnx,
                                options);
  if (!graph.ok()) {
    return graph.status().WithContext(fmt::format("the drawn encoder {} ({} tokens, {} wide, opset {})", model.name,
                                                  HasAttentionMask() ? model.sequence : encoders::ImageTokens(model),
                                                  model.hidden, model.opset));
  }
  return graph;
}

Expected<Graph> RandomEncoderNetwork(SplitMix64& rng) { return DrawEncoderNetwork(rng).Import(); }

Expected<std::vector<Kernel>> TransformerKernels(const SamplerConfig& config, const std::vector<Kernel>& kinds) {
  LATTE_ASSIGN_OR_RETURN(const FusionRules rules, RulesOf(config));
  SplitMix64 rng(config.seed ^ 0x7472616e73666d72ULL);  // its own stream: not the random box's draws
  std::vector<Kernel> kernels;
  std::set<std::string> seen;
  for (std::size_t draw = 0; draw < kMaxEncoderDraws && kernels.size() < config.max_kernels; ++draw) {
    const encoders::EncoderConfig model = EncoderModelOf(DrawEncoderShape(rng), rng);
    const std::string bytes = encoders::ModelBytes(model);
    const std::string what = "the drawn encoder " + model.name + " (" + std::to_string(model.hidden) + " wide, opset " +
                             std::to_string(model.opset) + ")";
    auto graph = ImportModelBytes({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()}, ModelFormat::kOnnx, {});
    if (!graph.ok()) return graph.status().WithContext(what);
    auto grouping = GroupAsRun(*graph, config, rules);
    if (!grouping.ok()) return grouping.status().WithContext(what);
    for (const KernelGroup& group : grouping->kernels)
      if (kernels.size() < config.max_kernels && Wanted(kinds, group.kernel) && seen.insert(group.kernel.Key()).second)
        kernels.push_back(group.kernel);
  }
  for (std::size_t i = kernels.size(); i > 1; --i) std::swap(kernels[i - 1], kernels[rng.Below(i)]);
  return kernels;
}

namespace {

// A random network's block: expansion (one of `expansions`), stride (2 a third of the time while
// the map is over 8), output channels (grown by 1–2× at a stride, to a multiple of 8, at most
// 320), depthwise window (3 twice as often as 5).
struct BlockDraw {
  I expand, stride, out_channels, window;
};
BlockDraw DrawBlock(SplitMix64& rng, I h, I c, const std::vector<I>& expansions) {
  BlockDraw block;
  block.expand = Pick<I>(rng, expansions);
  block.stride = (h > 8 && rng.Uniform() < 0.35) ? 2 : 1;
  block.out_channels = c;
  if (block.stride == 2) block.out_channels = std::min<I>(320, (c * Pick<I>(rng, {2, 3, 4}) / 2 + 7) / 8 * 8);
  block.window = Pick<I>(rng, {3, 3, 5});
  return block;
}

}  // namespace

std::vector<JoinedKernel> RandomNetwork(SplitMix64& rng) {
  std::vector<JoinedKernel> net;
  auto last = [&] { return static_cast<int>(net.size()) - 1; };
  auto relu6 = [](Kernel k) {
    k.fused = {OpKind::kRelu6};
    return k;
  };
  const I r = Pick<I>(rng, {64, 96, 128, 160, 192, 224, 256});
  I c = Pick<I>(rng, {8, 16, 24, 32});
  const I stem_stride = Pick<I>(rng, {1, 2});
  // MobileNet v2's residual is a plain add; MediaPipe's blocks (BlazeFace, BlazePose) clamp it with
  // a relu6, which ONNX Runtime runs outside its blocked layout, reordering around it.
  const bool clamped_residual = rng.Below(2) == 0;
  // Decoders read the encoder's maps of their size (a lateral 1×1 conv, added), as FPN-like
  // detectors and U-Net-like segmenters do, in two networks of three: a tensor written early and
  // read many layers later, which only such networks show the context fit.
  const bool laterals = rng.Below(3) != 0;
  net.push_back({relu6(ConvKernel(OpKind::kConv2D, r, r, 3, c, 3, stem_stride)), {-1}});
  I h = (r + stem_stride - 1) / stem_stride;
  std::map<I, std::pair<int, I>> skips;  // map side → the encoder's last layer at that side, its channels
  skips[h] = {last(), c};
  const int blocks = 4 + static_cast<int>(rng.Below(9));
  for (int b = 0; b < blocks; ++b) {
    const auto [t, stride, cout, k] = DrawBlock(rng, h, c, {1, 2, 4, 6});
    const int in = last();
    I mid = c;
    if (t > 1) {
      mid = c * t;
      net.push_back({relu6(ConvKernel(OpKind::kConv2D, h, h, c, mid, 1, 1)), {last()}});
    }
    net.push_back({relu6(ConvKernel(OpKind::kDepthwiseConv2D, h, h, mid, mid, k, stride)), {last()}});
    h = (h + stride - 1) / stride;
    net.push_back({ConvKernel(OpKind::kConv2D, h, h, mid, cout, 1, 1), {last()}});
    if (stride == 1 && cout == c) {
      Kernel add = BinaryKernel(OpKind::kAdd, h, h, c);
      if (clamped_residual) add.fused = {OpKind::kRelu6};
      net.push_back({add, {last(), in}});
    }
    c = cout;
    skips[h] = {last(), c};
  }
  const int ups = static_cast<int>(rng.Below(3));
  for (int u = 0; u < ups && 2 * h <= r; ++u) {
    net.push_back({ResizeKernel(h, h, c, 2, 1), {last()}});
    h *= 2;
    const I cout = std::max<I>(8, c / 2 / 8 * 8);
    net.push_back({relu6(ConvKernel(OpKind::kConv2D, h, h, c, cout, 1, 1)), {last()}});
    c = cout;
    if (auto skip = skips.find(h); laterals && skip != skips.end()) {
      const int decoded = last();
      net.push_back({ConvKernel(OpKind::kConv2D, h, h, skip->second.second, c, 1, 1), {skip->second.first}});
      net.push_back({BinaryKernel(OpKind::kAdd, h, h, c), {decoded, last()}});
    }
  }
  return net;
}

std::vector<JoinedKernel> RandomHardSwishNetwork(SplitMix64& rng) {
  std::vector<JoinedKernel> net;
  auto last = [&] { return static_cast<int>(net.size()) - 1; };
  // The network's hard-swish: one op (TFLite, ONNX HardSwish), or x · relu6(x + 3) / 6 in three
  // (as some converters export it: a scalar add with relu6, a multiply, a scalar divide).
  const bool decomposed = rng.Uniform() < 0.5;
  auto hard_swish = [&](I h, I c) {
    const int x = last();
    if (!decomposed) {
      net.push_back({NhwcKernel(OpKind::kHardSwish, h, h, c), {x}});
      return;
    }
    Kernel shifted = BroadcastBinaryKernel(OpKind::kAdd, h, h, c, 'b', false);
    shifted.fused = {OpKind::kRelu6};
    net.push_back({shifted, {x, -1}});
    net.push_back({BinaryKernel(OpKind::kMul, h, h, c), {x, last()}});
    net.push_back({BroadcastBinaryKernel(OpKind::kDiv, h, h, c, 'b', false), {last(), -1}});
  };
  // A learnable per-tensor scale and bias after a conv (scalar multiply, scalar add), some of the time.
  const double affine = Pick<double>(rng, {0.0, 0.0, 0.5});
  auto conv = [&](const Kernel& kernel, I h, I c, bool activate) {
    net.push_back({kernel, {last()}});
    if (rng.Uniform() < affine) {
      net.push_back({BroadcastBinaryKernel(OpKind::kMul, h, h, c, 'a', false), {-1, last()}});
      net.push_back({BroadcastBinaryKernel(OpKind::kAdd, h, h, c, 'b', false), {last(), -1}});
    }
    if (activate) hard_swish(h, c);
  };
  const I r = Pick<I>(rng, {96, 128, 160, 192, 224, 256, 320});
  I c = Pick<I>(rng, {8, 16, 24});
  I h = (r + 1) / 2;
  net.push_back({ConvKernel(OpKind::kConv2D, r, r, 3, c, 3, 2), {-1}});
  hard_swish(h, c);
  const int blocks = 4 + static_cast<int>(rng.Below(9));
  for (int b = 0; b < blocks; ++b) {
    const auto [t, stride, cout, k] = DrawBlock(rng, h, c, {1, 2, 3, 4, 6});
    const int in = last();
    I mid = c;
    if (t > 1) {
      mid = c * t;
      conv(ConvKernel(OpKind::kConv2D, h, h, c, mid, 1, 1), h, mid, true);
    }
    net.push_back({ConvKernel(OpKind::kDepthwiseConv2D, h, h, mid, mid, k, stride), {last()}});
    h = (h + stride - 1) / stride;
    hard_swish(h, mid);
    if (rng.Uniform() < 0.5) {  // squeeze-and-excite: channel weights from the map's mean
      const int x = last();
      const I squeezed = std::max<I>(8, mid / 4 / 8 * 8);
      net.push_back({NhwcKernel(OpKind::kGlobalAvgPool, h, h, mid), {x}});
      Kernel reduce = ConvKernel(OpKind::kConv2D, 1, 1, mid, squeezed, 1, 1);
      reduce.fused = {OpKind::kRelu};
      net.push_back({reduce, {last()}});
      net.push_back({ConvKernel(OpKind::kConv2D, 1, 1, squeezed, mid, 1, 1), {last()}});
      net.push_back({NhwcKernel(OpKind::kHardSigmoid, 1, 1, mid), {last()}});
      net.push_back({BroadcastBinaryKernel(OpKind::kMul, h, h, mid, 'b', true), {x, last()}});
    }
    conv(ConvKernel(OpKind::kConv2D, h, h, mid, cout, 1, 1), h, cout, false);
    if (stride == 1 && cout == c) net.push_back({BinaryKernel(OpKind::kAdd, h, h, c), {last(), in}});
    c = cout;
  }
  // A decoder head: each step upsamples ×2 (nearest) and applies a 1×1 conv.
  const int ups = static_cast<int>(rng.Below(3));
  for (int u = 0; u < ups && 2 * h <= r / 2; ++u) {
    const int up = static_cast<int>(net.size());
    net.push_back({ResizeKernel(h, h, c, 2, 0), {last()}});
    h *= 2;
    const I cout = std::max<I>(8, c / 2 / 8 * 8);
    net.push_back({ConvKernel(OpKind::kConv2D, h, h, c, cout, 1, 1), {up}});
    hard_swish(h, cout);
    c = cout;
  }
  return net;
}

}  // namespace latte
