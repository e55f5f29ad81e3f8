#include "profile/architectures.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "ir/fusion_rules.h"
#include "profile/space.h"

namespace latte {
namespace {

using I = std::int64_t;
constexpr OpKind kNoActivation = OpKind::kOpaque;

// Channels scaled by a width multiplier, to a multiple of 8 and not below 90% of the target, as
// the MobileNet and EfficientNet references round them.
I Divisible(double channels, I by = 8) {
  I v = std::max<I>(by, static_cast<I>(channels + by / 2.0) / by * by);
  if (static_cast<double>(v) < 0.9 * channels) v += by;
  return v;
}

// The map after a SAME-padded window of stride s.
I Strided(I h, I s) { return (h + s - 1) / s; }

template <typename T>
T Pick(SplitMix64& rng, const std::vector<T>& choices) {
  return choices[rng.Below(choices.size())];
}

// A network being built: the current map (rows h, columns w: square but for the families that
// run wide inputs), channels, and its kernels.
class Net {
 public:
  explicit Net(I resolution) : Net(resolution, resolution) {}
  Net(I rows, I cols) : h_(rows), w_(cols) {}
  I h() const { return h_; }
  I w() const { return w_; }
  I c() const { return c_; }
  std::vector<Kernel>& kernels() { return kernels_; }

  void Conv(I cout, I k, I s, OpKind act, I groups = 1) {
    Kernel kernel = ConvLike(OpKind::kConv2D, 1, h_, w_, c_, cout, k, k, s, s, groups);
    h_ = Strided(h_, s);
    w_ = Strided(w_, s);
    c_ = cout;
    linear_conv_.reset();
    if (act == kNoActivation) linear_conv_ = kernel;
    Emit(std::move(kernel), act);
  }
  // A depthwise conv of stride s, or s down the rows and sw across the columns (a text
  // recognizer's (2, 1)).
  void Depthwise(I k, I s, OpKind act, std::optional<I> cols_stride = std::nullopt) {
    const I sw = cols_stride.value_or(s);
    Kernel kernel = ConvLike(OpKind::kDepthwiseConv2D, 1, h_, w_, c_, c_, k, k, s, sw, c_);
    h_ = Strided(h_, s);
    w_ = Strided(w_, sw);
    Emit(std::move(kernel), act);
  }
  // A residual add of two maps of the current shape; after a conv with no activation of its own,
  // also that conv with the add (and the add's relu or relu6) fused: how a runtime that runs the
  // add inside the conv (ONNX Runtime's NCHWc pass) sees the pair. ArchitectureKernels keeps
  // those only when asked.
  void Add(OpKind act) {
    if (linear_conv_) {
      linear_conv_->fused = {OpKind::kAdd};
      if (act == OpKind::kRelu || act == OpKind::kRelu6) linear_conv_->fused.push_back(act);
      kernels_.push_back(std::move(*linear_conv_));
      linear_conv_.reset();
    }
    Emit(BinaryKernel(OpKind::kAdd, h_, w_, c_), act);
  }
  // The projection on a residual's skip path when the block changes shape (the net stays as is).
  void Shortcut(I h_in, I w_in, I c_in, I s) {
    if (s != 1 || c_in != c_) kernels_.push_back(ConvKernel(OpKind::kConv2D, h_in, w_in, c_in, c_, 1, s));
  }
  void MaxPool(I k, I s) {
    kernels_.push_back(PoolKernel(OpKind::kMaxPool2D, h_, w_, c_, k, s));
    h_ = Strided(h_, s);
    w_ = Strided(w_, s);
  }
  // Squeeze-and-excite: global average pool, 1×1 conv to `reduced` with relu, 1×1 conv back, the
  // gate, and the channel-wise multiply.
  void SqueezeExcite(I reduced, OpKind gate) {
    kernels_.push_back(NhwcKernel(OpKind::kGlobalAvgPool, h_, w_, c_));
    Kernel squeeze = ConvKernel(OpKind::kConv2D, 1, 1, c_, reduced, 1, 1);
    squeeze.fused = {OpKind::kRelu};
    kernels_.push_back(squeeze);
    kernels_.push_back(ConvKernel(OpKind::kConv2D, 1, 1, reduced, c_, 1, 1));
    kernels_.push_back(NhwcKernel(gate, 1, 1, c_));
    kernels_.push_back(BroadcastBinaryKernel(OpKind::kMul, h_, w_, c_, 'b', true));
  }
  // An inverted residual (MBConv): 1×1 expand, depthwise, optional squeeze-and-excite, linear 1×1
  // project, and the residual add when the shape allows.
  void InvertedResidual(I expanded, I k, I s, I cout, OpKind act, I se_reduced = 0,
                        OpKind gate = OpKind::kHardSigmoid) {
    const I c_in = c_;
    if (expanded != c_) Conv(expanded, 1, 1, act);
    Depthwise(k, s, act);
    if (se_reduced > 0) SqueezeExcite(se_reduced, gate);
    Conv(cout, 1, 1, kNoActivation);
    if (s == 1 && c_in == cout) Add(kNoActivation);
  }
  // Global average pool and a fully connected classifier.
  void Classifier(I classes) {
    kernels_.push_back(NhwcKernel(OpKind::kGlobalAvgPool, h_, w_, c_));
    kernels_.push_back(FcKernel(1, c_, classes));
  }

 private:
  // relu and relu6 fold into the op before them (as the executor folds them); any other
  // activation runs as its own kernel on the op's output.
  void Emit(Kernel kernel, OpKind act) {
    if (act == OpKind::kRelu || act == OpKind::kRelu6) kernel.fused = {act};
    kernels_.push_back(std::move(kernel));
    if (act != kNoActivation && act != OpKind::kRelu && act != OpKind::kRelu6)
      kernels_.push_back(NhwcKernel(act, h_, w_, c_));
  }

  I h_, w_;
  I c_ = 3;
  std::vector<Kernel> kernels_;
  std::optional<Kernel> linear_conv_;  // the last conv, while it had no activation and nothing came after it
};

Architecture MobileNetV1(SplitMix64& rng) {
  const double width = Pick<double>(rng, {0.25, 0.5, 0.75, 1.0});
  const I res = Pick<I>(rng, {128, 160, 192, 224});
  Net net(res);
  net.Conv(Divisible(32 * width), 3, 2, OpKind::kRelu6);
  const std::pair<I, I> blocks[] = {{64, 1},  {128, 2}, {128, 1}, {256, 2}, {256, 1}, {512, 2}, {512, 1},
                                    {512, 1}, {512, 1}, {512, 1}, {512, 1}, {1024, 2}, {1024, 1}};
  for (const auto& [channels, stride] : blocks) {
    net.Depthwise(3, stride, OpKind::kRelu6);
    net.Conv(Divisible(static_cast<double>(channels) * width), 1, 1, OpKind::kRelu6);
  }
  net.Classifier(1000);
  return {fmt::format("mobilenet_v1 x{} @{}", width, res), std::move(net.kernels())};
}

// MobileNet v2, or with `searched` a MnasNet/FBNet-like block per stage (expansion 3/4/6,
// window 3/5/7, relu or relu6).
Architecture MobileNetV2(SplitMix64& rng, bool searched) {
  const double width = Pick<double>(rng, {0.35, 0.5, 0.75, 1.0, 1.3, 1.4});
  const I res = Pick<I>(rng, {96, 128, 160, 192, 224});
  const OpKind act = searched ? Pick<OpKind>(rng, {OpKind::kRelu, OpKind::kRelu6}) : OpKind::kRelu6;
  // A searched space's stem may be 5×5 too (BlazeFace's is): on 3 channels a stem's speed is its
  // own (an int8 XNNPACK pack that had seen only 3×3 stems predicted BlazeFace's 2.4× too fast).
  const I stem = searched ? Pick<I>(rng, {3, 5}) : 3;
  Net net(res);
  net.Conv(Divisible(32 * width), stem, 2, act);
  struct Stage {
    I t, c, n, s;
  };
  const Stage stages[] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2}, {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  for (std::size_t j = 0; j < std::size(stages); ++j) {
    const Stage& st = stages[j];
    const I t = searched && j > 0 ? Pick<I>(rng, {3, 4, 6}) : st.t;
    const I k = searched ? Pick<I>(rng, {3, 5, 7}) : 3;
    const I cout = Divisible(static_cast<double>(st.c) * width);
    for (I i = 0; i < st.n; ++i) net.InvertedResidual(Divisible(static_cast<double>(net.c() * t)), k, i == 0 ? st.s : 1, cout, act);
  }
  net.Conv(width > 1 ? Divisible(1280 * width) : 1280, 1, 1, act);
  net.Classifier(1000);
  return {fmt::format("{} x{} @{}", searched ? "mnasnet_like" : "mobilenet_v2", width, res), std::move(net.kernels())};
}

Architecture MobileNetV3(SplitMix64& rng) {
  const bool large = rng.Below(2) == 0;
  const double width = Pick<double>(rng, {0.75, 1.0});
  const I res = Pick<I>(rng, {128, 160, 192, 224});
  // One in four on a wide strip, as a text-direction classifier runs it (PP-OCR's cls: 48×192).
  const bool strip = rng.Below(4) == 0;
  const I rows = strip ? Pick<I>(rng, {32, 48}) : res, cols = strip ? Pick<I>(rng, {160, 192, 256}) : res;
  struct Block {
    I k, exp, out;
    bool se, hswish;
    I s;
  };
  static const std::vector<Block> kLarge = {
      {3, 16, 16, false, false, 1},   {3, 64, 24, false, false, 2},  {3, 72, 24, false, false, 1},
      {5, 72, 40, true, false, 2},    {5, 120, 40, true, false, 1},  {5, 120, 40, true, false, 1},
      {3, 240, 80, false, true, 2},   {3, 200, 80, false, true, 1},  {3, 184, 80, false, true, 1},
      {3, 184, 80, false, true, 1},   {3, 480, 112, true, true, 1},  {3, 672, 112, true, true, 1},
      {5, 672, 160, true, true, 2},   {5, 960, 160, true, true, 1},  {5, 960, 160, true, true, 1}};
  static const std::vector<Block> kSmall = {
      {3, 16, 16, true, false, 2},   {3, 72, 24, false, false, 2}, {3, 88, 24, false, false, 1},
      {5, 96, 40, true, true, 2},    {5, 240, 40, true, true, 1},  {5, 240, 40, true, true, 1},
      {5, 120, 48, true, true, 1},   {5, 144, 48, true, true, 1},  {5, 288, 96, true, true, 2},
      {5, 576, 96, true, true, 1},   {5, 576, 96, true, true, 1}};
  Net net(rows, cols);
  net.Conv(16, 3, 2, OpKind::kHardSwish);
  for (const Block& b : large ? kLarge : kSmall) {
    const I expanded = Divisible(static_cast<double>(b.exp) * width);
    const OpKind act = b.hswish ? OpKind::kHardSwish : OpKind::kRelu;
    net.InvertedResidual(expanded, b.k, b.s, Divisible(static_cast<double>(b.out) * width), act,
                         b.se ? Divisible(static_cast<double>(expanded) / 4) : 0);
  }
  net.Conv(Divisible((large ? 960.0 : 576.0) * width), 1, 1, OpKind::kHardSwish);
  net.kernels().push_back(NhwcKernel(OpKind::kGlobalAvgPool, net.h(), net.w(), net.c()));
  const I head = large ? 1280 : 1024;
  net.kernels().push_back(FcKernel(1, net.c(), head));
  net.kernels().push_back(NhwcKernel(OpKind::kHardSwish, 1, 1, head));
  net.kernels().push_back(FcKernel(1, head, 1000));
  return {fmt::format("mobilenet_v3_{} x{} @{}", large ? "large" : "small", width,
                      strip ? fmt::format("{}x{}", rows, cols) : std::to_string(res)),
          std::move(net.kernels())};
}

Architecture EfficientNetLite(SplitMix64& rng) {
  struct Scale {
    double width, depth;
    I res;
  };
  const Scale scale = Pick<Scale>(rng, {{1.0, 1.0, 224}, {1.0, 1.1, 240}, {1.1, 1.2, 260}, {1.2, 1.4, 280}, {1.4, 1.8, 300}});
  struct Stage {
    I t, k, s, c, n;
  };
  const Stage stages[] = {{1, 3, 1, 16, 1}, {6, 3, 2, 24, 2}, {6, 5, 2, 40, 2}, {6, 3, 2, 80, 3},
                          {6, 5, 1, 112, 3}, {6, 5, 2, 192, 4}, {6, 3, 1, 320, 1}};
  Net net(scale.res);
  net.Conv(32, 3, 2, OpKind::kRelu6);  // the lite models keep the stem and head fixed
  for (std::size_t j = 0; j < std::size(stages); ++j) {
    const Stage& st = stages[j];
    const I repeats = (j == 0 || j + 1 == std::size(stages)) ? st.n : static_cast<I>(std::ceil(scale.depth * st.n));
    const I cout = Divisible(static_cast<double>(st.c) * scale.width);
    for (I i = 0; i < repeats; ++i) net.InvertedResidual(net.c() * st.t, st.k, i == 0 ? st.s : 1, cout, OpKind::kRelu6);
  }
  net.Conv(1280, 1, 1, OpKind::kRelu6);
  net.Classifier(1000);
  return {fmt::format("efficientnet_lite w{} d{} @{}", scale.width, scale.depth, scale.res), std::move(net.kernels())};
}

// ResNet-like: basic blocks (18/34) or bottlenecks (50), at half or full width.
Architecture ResNet(SplitMix64& rng) {
  const bool bottleneck = rng.Below(2) == 0;
  const double width = Pick<double>(rng, {0.5, 1.0});
  const I res = Pick<I>(rng, {128, 160, 224});
  const std::vector<I> depths = bottleneck || rng.Below(2) == 0 ? std::vector<I>{3, 4, 6, 3} : std::vector<I>{2, 2, 2, 2};
  Net net(res);
  net.Conv(Divisible(64 * width), 7, 2, OpKind::kRelu);
  net.MaxPool(3, 2);
  for (std::size_t j = 0; j < depths.size(); ++j) {
    const I mid = Divisible(64.0 * width * static_cast<double>(I{1} << j));
    const I out = bottleneck ? 4 * mid : mid;
    for (I i = 0; i < depths[j]; ++i) {
      const I s = (i == 0 && j > 0) ? 2 : 1;
      const I h_in = net.h(), w_in = net.w(), c_in = net.c();
      if (bottleneck) {
        net.Conv(mid, 1, 1, OpKind::kRelu);
        net.Conv(mid, 3, s, OpKind::kRelu);
        net.Conv(out, 1, 1, kNoActivation);
      } else {
        net.Conv(out, 3, s, OpKind::kRelu);
        net.Conv(out, 3, 1, kNoActivation);
      }
      net.Shortcut(h_in, w_in, c_in, s);
      net.Add(OpKind::kRelu);
    }
  }
  net.Classifier(1000);
  return {fmt::format("resnet_like {} x{} @{}", bottleneck ? "bottleneck" : "basic", width, res), std::move(net.kernels())};
}

// RegNet-like: four stages of grouped 3×3 bottlenecks, widths growing by a drawn factor and
// rounded to the group width.
Architecture RegNet(SplitMix64& rng) {
  const I group_width = Pick<I>(rng, {8, 16, 24, 32});
  const I w0 = Pick<I>(rng, {24, 32, 48, 64});
  const double growth = Pick<double>(rng, {1.8, 2.0, 2.5});
  const I res = Pick<I>(rng, {160, 192, 224});
  Net net(res);
  net.Conv(32, 3, 2, OpKind::kRelu);
  double w = static_cast<double>(w0);
  for (int j = 0; j < 4; ++j, w *= growth) {
    const I width = std::max<I>(group_width, static_cast<I>(std::lround(w / static_cast<double>(group_width))) * group_width);
    const I depth = 1 + static_cast<I>(rng.Below(4));
    for (I i = 0; i < depth; ++i) {
      const I s = i == 0 ? 2 : 1;
      const I h_in = net.h(), w_in = net.w(), c_in = net.c();
      net.Conv(width, 1, 1, OpKind::kRelu);
      net.Conv(width, 3, s, OpKind::kRelu, width / group_width);
      net.Conv(width, 1, 1, kNoActivation);
      net.Shortcut(h_in, w_in, c_in, s);
      net.Add(OpKind::kRelu);
    }
  }
  net.Classifier(1000);
  return {fmt::format("regnet_like g{} w{} x{} @{}", group_width, w0, growth, res), std::move(net.kernels())};
}

// A detector: a MobileNet v2 backbone on a 256–640 input, SSD-lite extra levels down to 1×1 and a
// depthwise + 1×1 prediction head at the last five levels (boxes and classes for 6 anchors), or an
// FPN-like top-down path (nearest ×2 resize, add) back to stride 8.
Architecture Detector(SplitMix64& rng) {
  const double width = Pick<double>(rng, {0.5, 0.75, 1.0});
  const I res = Pick<I>(rng, {256, 320, 384, 512, 640});
  const I classes = Pick<I>(rng, {1, 2, 21, 91});
  const bool fpn = rng.Below(2) == 0;
  const I stem = Pick<I>(rng, {3, 5});  // BlazeFace-like detectors start 5×5
  Net net(res);
  net.Conv(Divisible(32 * width), stem, 2, OpKind::kRelu6);
  struct Stage {
    I t, c, n, s;
  };
  const Stage stages[] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2}, {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  std::vector<std::pair<I, I>> levels;  // (map, channels) at strides 8, 16, 32
  for (std::size_t j = 0; j < std::size(stages); ++j) {
    const Stage& st = stages[j];
    const I cout = Divisible(static_cast<double>(st.c) * width);
    for (I i = 0; i < st.n; ++i) net.InvertedResidual(net.c() * st.t, 3, i == 0 ? st.s : 1, cout, OpKind::kRelu6);
    if (j == 2 || j == 4 || j == 6) levels.push_back({net.h(), net.c()});
  }
  std::vector<Kernel>& k = net.kernels();
  auto head = [&](I h, I c) {
    Kernel dw = ConvKernel(OpKind::kDepthwiseConv2D, h, h, c, c, 3, 1);
    dw.fused = {OpKind::kRelu6};
    k.push_back(dw);
    k.push_back(ConvKernel(OpKind::kConv2D, h, h, c, 6 * 4, 1, 1));
    k.push_back(ConvKernel(OpKind::kConv2D, h, h, c, 6 * classes, 1, 1));
  };
  if (fpn) {
    const I c = Divisible(128 * width);
    I h = levels.back().first;
    Kernel lateral = ConvKernel(OpKind::kConv2D, h, h, levels.back().second, c, 1, 1);
    k.push_back(lateral);
    for (int l = static_cast<int>(levels.size()) - 2; l >= 0; --l) {
      k.push_back(ResizeKernel(h, h, c, 2, 0));
      h = levels[static_cast<std::size_t>(l)].first;
      k.push_back(ConvKernel(OpKind::kConv2D, h, h, levels[static_cast<std::size_t>(l)].second, c, 1, 1));
      k.push_back(BinaryKernel(OpKind::kAdd, h, h, c));
      head(h, c);
    }
  } else {
    head(levels[1].first, levels[1].second);
    head(levels[2].first, levels[2].second);
    while (net.h() > 1) {  // SSD-lite extra levels: 1×1 down, depthwise stride 2, 1×1 up
      const I c = net.c();
      net.Conv(Divisible(static_cast<double>(c) / 2), 1, 1, OpKind::kRelu6);
      net.Depthwise(3, 2, OpKind::kRelu6);
      net.Conv(c, 1, 1, OpKind::kRelu6);
      head(net.h(), net.c());
    }
  }
  return {fmt::format("{} detector x{} @{} ({} classes)", fpn ? "fpn" : "ssdlite", width, res, classes), std::move(k)};
}

// An encoder–decoder for dense prediction (segmentation masks, keypoint heatmaps): a MobileNet v2
// encoder to stride 32, then a top-down path back to the output stride (1, 2 or 4). Each level
// up: a 1×1 conv to the level's channels and a ×2 resize (nearest or bilinear), or a 2×2 stride-2
// transposed conv doing both; the encoder's map of that size through a 1×1 lateral conv, added;
// a refining block (depthwise 3×3 and 1×1, or a plain 3×3). Channels halve toward the output,
// down to 8–32 at the output stride, as mask and heatmap decoders keep them few at high
// resolution. The head: a 1×1 or 3×3 conv to 1–2 mask channels (then a sigmoid) or 17–39
// keypoint heatmaps; in a decoder of transposed convs, half the time the last one (2×2, stride
// 2) to them instead, at twice the side. Added after the 2026-11-25 leave-models-out run: the
// pose models' misses were tiny-channel kernels at 256×256, which no other family draws; the
// transposed head after the 2026-11-28 one, whose calibrations had no transposed conv to fewer
// than 8 channels, where XNNPACK's costs as much as one to 16.
Architecture DenseDecoder(SplitMix64& rng) {
  const double width = Pick<double>(rng, {0.35, 0.5, 0.75, 1.0});
  const I res = Pick<I>(rng, {128, 160, 192, 224, 256, 320, 384, 512});
  const I out_stride = Pick<I>(rng, {1, 2, 4});
  const I finest = Pick<I>(rng, {8, 16, 24, 32});  // the decoder's channels at the output stride
  const I upsample = Pick<I>(rng, {0, 1, 2});        // nearest resize, bilinear resize, transposed conv
  const bool depthwise_refine = rng.Below(2) == 0;
  const bool mask = rng.Below(2) == 0;
  const I outputs = mask ? Pick<I>(rng, {1, 2}) : Pick<I>(rng, {17, 21, 33, 39});
  const OpKind act = Pick<OpKind>(rng, {OpKind::kRelu, OpKind::kRelu6});
  Net net(res);
  std::map<I, I> skips;  // map side → the encoder's channels there (the last block of that size)
  net.Conv(Divisible(32 * width), 3, 2, act);
  skips[net.h()] = net.c();
  struct Stage {
    I t, c, n, s;
  };
  const Stage stages[] = {{1, 16, 1, 1}, {6, 24, 2, 2}, {6, 32, 3, 2}, {6, 64, 4, 2}, {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  for (const Stage& st : stages) {
    const I cout = Divisible(static_cast<double>(st.c) * width);
    for (I i = 0; i < st.n; ++i) net.InvertedResidual(net.c() * st.t, 3, i == 0 ? st.s : 1, cout, act);
    skips[net.h()] = net.c();
  }
  // Channels at stride s (a multiple of the output stride): `finest` doubled per level, at most 128.
  auto channels_at = [&](I stride) { return std::min<I>(128, finest * (stride / out_stride)); };
  std::vector<Kernel>& k = net.kernels();
  I h = net.h(), stride = 32;
  I c = channels_at(stride);
  Kernel lateral_top = ConvKernel(OpKind::kConv2D, h, h, net.c(), c, 1, 1);
  lateral_top.fused = {act};
  k.push_back(lateral_top);
  const bool transposed_head = upsample == 2 && rng.Below(2) == 0;
  while (stride > (transposed_head ? 2 * out_stride : out_stride)) {
    const I next = channels_at(stride / 2);
    if (upsample == 2) {
      k.push_back(TransposeConvKernel(h, h, c, next, 2, 2));
    } else {
      if (next != c) k.push_back(ConvKernel(OpKind::kConv2D, h, h, c, next, 1, 1));
      k.push_back(ResizeKernel(h, h, next, 2, upsample));
    }
    h *= 2;
    stride /= 2;
    c = next;
    if (const auto skip = skips.find(h); skip != skips.end()) {
      k.push_back(ConvKernel(OpKind::kConv2D, h, h, skip->second, c, 1, 1));
      Kernel add = BinaryKernel(OpKind::kAdd, h, h, c);
      add.fused = {act};
      k.push_back(add);
    }
    if (depthwise_refine) {
      Kernel dw = ConvKernel(OpKind::kDepthwiseConv2D, h, h, c, c, 3, 1);
      dw.fused = {act};
      k.push_back(dw);
      Kernel pw = ConvKernel(OpKind::kConv2D, h, h, c, c, 1, 1);
      pw.fused = {act};
      k.push_back(pw);
    } else {
      Kernel conv = ConvKernel(OpKind::kConv2D, h, h, c, c, 3, 1);
      conv.fused = {act};
      k.push_back(conv);
    }
  }
  if (transposed_head) {  // the last level up draws the outputs
    k.push_back(TransposeConvKernel(h, h, c, outputs, 2, 2));
    h *= 2;
  } else {
    k.push_back(ConvKernel(OpKind::kConv2D, h, h, c, outputs, Pick<I>(rng, {1, 3}), 1));
  }
  if (mask) k.push_back(NhwcKernel(OpKind::kSigmoid, h, h, outputs));
  return {fmt::format("{} decoder x{} @{} /{} ({} up, {} outputs{})", mask ? "mask" : "heatmap", width, res, out_stride,
                      upsample == 0 ? "nearest" : upsample == 1 ? "bilinear" : "transposed", outputs,
                      transposed_head ? " drawn by the last" : ""),
          std::move(k)};
}

// A text recognizer's backbone (CRNN / PP-OCR rec-like, PP-LCNet blocks): a strip of text 32 or
// 48 rows high and 100–320 columns wide, a 3×3 stem of stride 2, then depthwise-separable blocks
// (depthwise 3×3 or 5×5, hard-swish, 1×1) whose later strides halve the rows only, (2, 1), so the
// columns stay many for the sequence read along them; squeeze-and-excite in the last blocks, and a
// 2×2 max pool at the end. Every map is wide and short, as in no other family.
Architecture TextRecognizer(SplitMix64& rng) {
  const double width = Pick<double>(rng, {0.5, 1.0});
  const I rows = Pick<I>(rng, {32, 48});
  const I cols = Pick<I>(rng, {100, 192, 256, 320});
  Net net(rows, cols);
  net.Conv(Divisible(32 * width), 3, 2, OpKind::kHardSwish);
  struct Block {
    I c, k, row_stride;  // the columns' stride is always 1
    bool se;
  };
  const Block blocks[] = {{64, 3, 1, false},  {128, 3, 1, false}, {128, 3, 2, false}, {256, 3, 1, false},
                          {256, 3, 2, false}, {512, 5, 1, false}, {512, 5, 1, false}, {512, 5, 1, false},
                          {512, 5, 2, false}, {1024, 5, 1, true}, {1024, 5, 2, true}};
  for (const Block& b : blocks) {
    net.Depthwise(b.k, b.row_stride, OpKind::kHardSwish, 1);
    if (b.se) net.SqueezeExcite(Divisible(static_cast<double>(net.c()) / 4), OpKind::kHardSigmoid);
    net.Conv(Divisible(static_cast<double>(b.c) * width), 1, 1, OpKind::kHardSwish);
  }
  net.MaxPool(2, 2);
  return {fmt::format("text_recognizer x{} @{}x{}", width, rows, cols), std::move(net.kernels())};
}

}  // namespace

Architecture DrawArchitecture(std::uint64_t seed, std::uint64_t index) {
  SplitMix64 rng(seed * 0x9E3779B97F4A7C15ull + index);
  rng.Next();
  // Mobile families most often: they are what on-device models are made of.
  switch (rng.Below(13)) {
    case 0: return MobileNetV1(rng);
    case 1: case 2: return MobileNetV2(rng, false);
    case 3: return MobileNetV2(rng, true);
    case 4: case 5: return MobileNetV3(rng);
    case 6: return EfficientNetLite(rng);
    case 7: return ResNet(rng);
    case 8: return RegNet(rng);
    case 9: return Detector(rng);
    case 12: return TextRecognizer(rng);
    default: return DenseDecoder(rng);
  }
}

std::vector<Kernel> ArchitectureKernels(std::uint64_t seed, std::size_t count, bool residual_fusions) {
  std::vector<Kernel> kernels;
  std::set<std::string> seen;
  // Twice what is asked, then shuffled: the first architectures do not fill the whole sample.
  for (std::uint64_t index = 0; kernels.size() < 2 * count && index < kMaxArchitectures; ++index) {
    for (Kernel& k : DrawArchitecture(seed, index).kernels)
      if ((residual_fusions || !IsResidualFusion(k)) && seen.insert(k.Key()).second) kernels.push_back(std::move(k));
  }
  SplitMix64 rng(seed ^ 0xA5C4u);
  for (std::size_t i = kernels.size(); i > 1; --i) std::swap(kernels[i - 1], kernels[rng.Below(i)]);
  if (kernels.size() > count) kernels.resize(count);
  return kernels;
}

}  // namespace latte
