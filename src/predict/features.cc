#include "predict/features.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "ir/kernel_params.h"
#include "ir/op_kind.h"

namespace latte {
namespace {

bool HasKey(const Kernel& kernel, const std::string& key) { return kernel.params.count(key) > 0; }

// The keys whose presence says how a kernel of no other case is costed (the kinds of no family
// that tables measured elsewhere map, such as quantize, store an NHWC tensor).
struct PresenceKeys {
  std::string a0 = ParamKey(&BinaryKernelParams::a, 0), b0 = ParamKey(&BinaryKernelParams::b, 0);
  std::string a3 = ParamKey(&BinaryKernelParams::a, 3), b3 = ParamKey(&BinaryKernelParams::b, 3);
  std::string h = ParamKey(&NhwcParams::h), w = ParamKey(&NhwcParams::w), c = ParamKey(&NhwcParams::c);
};
const PresenceKeys& Keys() {
  static const PresenceKeys keys;
  return keys;
}

// Output extent of a window sliding over `in` (pads already explicit).
double WindowOut(double in, double pad_begin, double pad_end, double k, double stride, double dilation) {
  double span = dilation * (k - 1) + 1;
  double out = std::floor((in + pad_begin + pad_end - span) / std::max(1.0, stride)) + 1;
  return std::max(1.0, out);
}

// Traffic of the ops fused after the main one.
void AddFusedTraffic(const Kernel& kernel, double element_size, KernelCost& cost) {
  for (OpKind op : kernel.fused) {
    // A fused activation costs little next to the main op; a fused add reads a second operand.
    if (OpCategoryOf(op) == OpCategory::kElementwise) cost.in_bytes += cost.out_elements * element_size;
  }
}

}  // namespace

KernelCost ComputeKernelCost(const Kernel& k) {
  KernelCost c;
  const double s = std::max<std::size_t>(1, DataTypeSize(k.dtype));
  switch (k.op) {
    case OpKind::kConv2D:
    case OpKind::kDepthwiseConv2D:
    case OpKind::kTransposeConv2D: {
      const ConvKernelParams p = ReadParams<ConvKernelParams>(k);
      double n = p.n, ih = p.ih, iw = p.iw, ic = p.ic, oc = p.oc, kh = p.kh, kw = p.kw;
      double g = std::max<double>(1.0, p.g);
      if (k.op == OpKind::kTransposeConv2D) {
        c.oh = p.oh ? *p.oh : (ih - 1) * p.sh + kh;
        c.ow = p.ow ? *p.ow : (iw - 1) * p.sw + kw;
        c.macs = n * ih * iw * ic * kh * kw * oc / g;
      } else {
        c.oh = WindowOut(ih, p.pt.value_or(0), p.pb.value_or(0), kh, p.sh, p.dh.value_or(1));
        c.ow = WindowOut(iw, p.pl.value_or(0), p.pr.value_or(0), kw, p.sw, p.dw.value_or(1));
        c.macs = n * c.oh * c.ow * oc * kh * kw * ic / g;
      }
      c.out_elements = n * c.oh * c.ow * oc;
      c.in_bytes = n * ih * iw * ic * s;
      c.weight_bytes = (kh * kw * ic / g * oc + (p.bias.value_or(0) > 0 ? oc : 0)) * s;
      break;
    }
    case OpKind::kFullyConnected: {
      const FullyConnectedKernelParams p = ReadParams<FullyConnectedKernelParams>(k);
      double m = p.m, kk = p.k, nn = p.n;
      c.macs = m * kk * nn;
      c.out_elements = m * nn;
      c.in_bytes = m * kk * s;
      c.weight_bytes = (kk * nn + (p.bias > 0 ? nn : 0)) * s;
      break;
    }
    case OpKind::kMatMul: {
      const MatMulKernelParams p = ReadParams<MatMulKernelParams>(k);
      double b = p.b, m = p.m, kk = p.k, nn = p.n;
      c.macs = b * m * kk * nn;
      c.out_elements = b * m * nn;
      c.in_bytes = b * (m * kk + kk * nn) * s;
      break;
    }
    case OpKind::kMaxPool2D:
    case OpKind::kAvgPool2D: {
      const PoolKernelParams p = ReadParams<PoolKernelParams>(k);
      double n = p.n, ch = p.c, kh = p.kh, kw = p.kw;
      c.oh = WindowOut(p.ih, p.pt, p.pb, kh, p.sh, 1);
      c.ow = WindowOut(p.iw, p.pl, p.pr, kw, p.sw, 1);
      c.out_elements = n * c.oh * c.ow * ch;
      c.macs = c.out_elements * kh * kw;
      c.in_bytes = n * p.ih * p.iw * ch * s;
      break;
    }
    case OpKind::kSlice: {  // a copy of the part: read and written once, in runs along the axes kept whole
      const SliceKernelParams p = ReadParams<SliceKernelParams>(k);
      const std::array<double, 4> in = {double(p.n), double(p.h), double(p.w), double(p.c)};
      const std::array<double, 4> part = {double(p.on), double(p.oh), double(p.ow), double(p.oc)};
      double out = 1, run = 1;
      bool whole = true;
      for (int i = 3; i >= 0; --i) {
        const double d = in[static_cast<std::size_t>(i)], o = part[static_cast<std::size_t>(i)];
        out *= o;
        if (whole) run *= o;
        whole = whole && d == o;
      }
      c.out_elements = out;
      c.macs = out;
      c.in_bytes = out * s;
      c.runs = run > 0 ? out / run : 1;
      break;
    }
    case OpKind::kResize: {
      const ResizeKernelParams p = ReadParams<ResizeKernelParams>(k);
      double n = p.n, ch = p.c;
      c.oh = p.oh;
      c.ow = p.ow;
      c.out_elements = n * c.oh * c.ow * ch;
      c.macs = c.out_elements * (p.mode == 1 ? 4 : 1);
      c.in_bytes = n * p.ih * p.iw * ch * s;
      break;
    }
    case OpKind::kLayerNorm: {  // each row read, normalized, scaled and shifted: ~8 operations an element
      const LayerNormKernelParams p = ReadParams<LayerNormKernelParams>(k);
      const double in = double(p.n) * double(p.h) * double(p.w) * double(p.c);
      c.oh = p.h;
      c.ow = p.w;
      c.out_elements = in;
      c.macs = 8 * in;
      c.in_bytes = in * s;
      c.weight_bytes = double(p.scale + p.bias) * double(p.c) * s;
      break;
    }
    case OpKind::kWhere: {  // reads the condition (1 byte) and the two choices, broadcast
      const WhereKernelParams p = ReadParams<WhereKernelParams>(k);
      double cond = 1, x = 1, y = 1, out = 1;
      for (std::size_t i = 0; i < 4; ++i) {
        cond *= double(p.c[i]);
        x *= double(p.x[i]);
        y *= double(p.y[i]);
        out *= double(std::max({p.c[i], p.x[i], p.y[i]}));
      }
      c.out_elements = out;
      c.macs = out;
      c.in_bytes = cond + (x + y) * s;
      break;
    }
    case OpKind::kGather: {  // copies idx rows of inner values out of the table, reading the indices
      const GatherKernelParams p = ReadParams<GatherKernelParams>(k);
      const double out = double(p.outer) * double(p.idx) * double(p.inner);
      c.out_elements = out;
      c.macs = out;
      c.in_bytes = out * s + double(p.idx) * sizeof(std::int64_t);
      c.runs = double(p.outer) * double(p.idx);  // one contiguous row a look-up
      break;
    }
    case OpKind::kArgMax:
    case OpKind::kArgMin: {  // every element compared once; one index written per reduced line
      const ReduceKernelParams p = ReadParams<ReduceKernelParams>(k);
      const std::array<double, 4> dims = {double(p.n), double(p.h), double(p.w), double(p.c)};
      double in = 1, out = 1;
      for (std::size_t i = 0; i < 4; ++i) {
        in *= dims[i];
        if (!(p.axes & (std::int64_t{1} << i))) out *= dims[i];
      }
      c.oh = p.h;
      c.ow = p.w;
      c.out_elements = out;
      c.macs = in;
      c.in_bytes = in * s;
      break;
    }
    default: {
      if (OpCategoryOf(k.op) == OpCategory::kElementwise && HasKey(k, Keys().a0) && HasKey(k, Keys().b0)) {
        const BinaryKernelParams p = ReadParams<BinaryKernelParams>(k);
        // The stretch: the innermost dims the op walks in one inner loop, where both operands
        // agree (an add of [1,1,1,C] to [1,H,W,C]: C) or one of them stays put (a channel's scale
        // over its plane, [1,C,1,1] to [1,C,H,W]: H·W). Equal shapes, or a scalar operand, stream
        // in one stretch.
        enum class Stretch { kOpen, kShared, kAConstant, kBConstant, kClosed };
        Stretch mode = Stretch::kOpen;
        double a = 1, b = 1, out = 1, stretch = 1;
        for (int i = 3; i >= 0; --i) {
          const double ai = p.a[static_cast<std::size_t>(i)], bi = p.b[static_cast<std::size_t>(i)];
          a *= ai;
          b *= bi;
          out *= std::max(ai, bi);
          if (mode == Stretch::kClosed || (ai == 1 && bi == 1)) continue;
          const Stretch here = ai == bi ? Stretch::kShared : bi == 1 ? Stretch::kBConstant : Stretch::kAConstant;
          if (mode == Stretch::kOpen) mode = here;
          if (mode != here) {
            mode = Stretch::kClosed;
            continue;
          }
          stretch *= std::max(ai, bi);
        }
        if (stretch < out) c.runs = out / stretch;
        c.out_elements = out;
        c.macs = out;
        c.in_bytes = (a + b) * s;
      } else if (HasKey(k, Keys().h) && HasKey(k, Keys().w)) {
        const NhwcParams p = ReadParams<NhwcParams>(k);
        double n = p.n, h = p.h, w = p.w, ch = HasKey(k, Keys().c) ? p.c : 1;
        double in = n * h * w * ch, out = in;
        if (k.op == OpKind::kPad) {
          const std::array<std::int64_t, 8> pads = ReadParams<PadKernelParams>(k).p;
          out = (n + pads[0] + pads[4]) * (h + pads[1] + pads[5]) * (w + pads[2] + pads[6]) * (ch + pads[3] + pads[7]);
        } else if (k.op == OpKind::kGlobalAvgPool || k.op == OpKind::kGlobalMaxPool) {
          out = n * ch;
        }
        c.oh = h;
        c.ow = w;
        c.out_elements = out;
        c.macs = std::max(in, out);
        c.in_bytes = in * s;
      }
      break;
    }
  }
  // Comparisons write bool, argmax and argmin int64, whatever they read.
  const DataType out_type = FixedOutputType(k.op);
  c.out_bytes = c.out_elements * (out_type == DataType::kUnknown ? s : static_cast<double>(DataTypeSize(out_type)));
  AddFusedTraffic(k, s, c);
  return c;
}

double WorkScaleMs(const Kernel& kernel, int channel_tile) {
  return WorkScaleMs(ComputeKernelCost(kernel), ChannelTileFactor(kernel, channel_tile));
}

double WorkScaleMs(const KernelCost& c, double tile_factor) {
  constexpr double kFlopsPerMs = 100e9 / 1e3, kBytesPerMs = 20e9 / 1e3, kOverheadMs = 1e-3;
  return kOverheadMs + std::max(2 * c.macs * tile_factor / kFlopsPerMs, c.Bytes() / kBytesPerMs);
}

namespace {
bool Tiled(OpKind op) {
  return op == OpKind::kConv2D || op == OpKind::kDepthwiseConv2D || op == OpKind::kTransposeConv2D ||
         op == OpKind::kFullyConnected;
}
}  // namespace

double ChannelTileFactor(const Kernel& kernel, int channel_tile) {
  if (channel_tile <= 1 || !Tiled(kernel.op)) return 1;
  return ChannelTileFactor(kernel.op, VectorChannels(kernel), channel_tile);
}

double ChannelTileFactor(OpKind op, double vector_channels, int channel_tile) {
  if (channel_tile <= 1 || !Tiled(op) || !(vector_channels >= 1)) return 1;
  return std::ceil(vector_channels / channel_tile) * channel_tile / vector_channels;
}

double LogScale(double x) { return x >= 0 ? std::log2(1 + x) : -std::log2(1 - x); }

namespace {
constexpr int kLanes[] = {4, 8, 16, 32};
}  // namespace

const std::vector<std::string>& DerivedFeatureNames(int version) {
  static const std::vector<std::string> kVersion1 = {
      "log_macs", "log_bytes", "log_intensity", "log_out_elements", "log_in_bytes", "log_weight_bytes",
      "log_oh",   "log_ow",    "log_out_pixels", "threads",         "dtype_bytes",  "fused_ops"};
  static const std::vector<std::string> kVersion2 = [] {
    std::vector<std::string> names = kVersion1;
    for (int lanes : kLanes) names.push_back(fmt::format("lane_tail_{}", lanes));
    return names;
  }();
  static const std::vector<std::string> kVersion3 = [] {
    std::vector<std::string> names = kVersion2;
    for (const char* name : {"log_gemm_rows", "log_gemm_k", "gemm_m_tail_16", "gemm_k_tail_16", "gemm_n_tail_16",
                             "log_unit_bytes"})
      names.push_back(name);
    return names;
  }();
  return version <= 1 ? kVersion1 : version == 2 ? kVersion2 : kVersion3;
}

GemmShape GemmShapeOf(const Kernel& k) {
  const double s = std::max<std::size_t>(1, DataTypeSize(k.dtype));
  GemmShape g;
  if (k.op == OpKind::kFullyConnected || k.op == OpKind::kMatMul) {
    if (k.op == OpKind::kFullyConnected) {
      const FullyConnectedKernelParams p = ReadParams<FullyConnectedKernelParams>(k);
      g.m = p.m, g.k = p.k, g.n = p.n;
    } else {
      const MatMulKernelParams p = ReadParams<MatMulKernelParams>(k);
      g.batches = p.b, g.m = p.m, g.k = p.k, g.n = p.n;
    }
    g.unit_bytes = (g.m * g.k + g.k * g.n + g.m * g.n) * s;
    return g;
  }
  const KernelFamily family = KernelFamilyOf(k.op);
  if ((family == KernelFamily::kSoftmax || family == KernelFamily::kUnary) && HasKey(k, Keys().c)) {
    const NhwcParams p = ReadParams<NhwcParams>(k);
    g.m = static_cast<double>(p.n) * p.h * p.w;
    g.n = p.c;
    g.k = family == KernelFamily::kSoftmax ? p.c : 1;
    g.unit_bytes = (family == KernelFamily::kSoftmax ? 2 * g.n : 2 * g.m * g.n) * s;
  }
  return g;
}

double VectorChannels(const Kernel& k) {
  switch (k.op) {
    case OpKind::kConv2D:
    case OpKind::kTransposeConv2D: {
      const ConvKernelParams p = ReadParams<ConvKernelParams>(k);
      return static_cast<double>(p.oc) / std::max<double>(1.0, p.g);
    }
    case OpKind::kDepthwiseConv2D:
      return static_cast<double>(ReadParams<ConvKernelParams>(k).oc);
    case OpKind::kFullyConnected:
      return static_cast<double>(ReadParams<FullyConnectedKernelParams>(k).n);
    case OpKind::kMatMul:
      return static_cast<double>(ReadParams<MatMulKernelParams>(k).n);
    case OpKind::kGather:
      return static_cast<double>(ReadParams<GatherKernelParams>(k).inner);
    case OpKind::kWhere: {
      const WhereKernelParams p = ReadParams<WhereKernelParams>(k);
      return static_cast<double>(std::max({p.c[3], p.x[3], p.y[3]}));
    }
    default:
      // Every family with one channel count (pools, resize, NHWC tensors) stores it as NhwcParams' c.
      if (HasKey(k, Keys().c)) return static_cast<double>(ReadParams<NhwcParams>(k).c);
      if (HasKey(k, Keys().a3) && HasKey(k, Keys().b3)) {
        const BinaryKernelParams p = ReadParams<BinaryKernelParams>(k);
        return static_cast<double>(std::max(p.a[3], p.b[3]));
      }
      return 0;
  }
}

double LaneTail(double channels, int lanes) {
  if (!(channels >= 1) || lanes < 1) return 0;
  const double padded = std::ceil(channels / lanes) * lanes;
  return (padded - channels) / padded;
}

FeatureSchema FeatureSchema::FromKernels(const std::vector<const Kernel*>& kernels) {
  std::set<std::string> names;
  for (const Kernel* k : kernels)
    for (const auto& [name, value] : k->params) names.insert(name);
  // An elementwise kernel's time follows its elements, its channels and its broadcast, not how the
  // map's positions split into rows and columns; given them, a tree splits on a width the square
  // maps of calibration tie to their size, and reads a 3×96 map of PP-OCR's as a 96×96 one.
  const bool elementwise = !kernels.empty() && std::all_of(kernels.begin(), kernels.end(), [](const Kernel* k) {
    const KernelFamily family = KernelFamilyOf(k->op);
    return family == KernelFamily::kBinary || family == KernelFamily::kUnary;
  });
  if (elementwise) {
    for (const std::string& name : {ParamKey(&BinaryKernelParams::a, 1), ParamKey(&BinaryKernelParams::a, 2),
                                    ParamKey(&BinaryKernelParams::b, 1), ParamKey(&BinaryKernelParams::b, 2),
                                    ParamKey(&NhwcParams::h), ParamKey(&NhwcParams::w)})
      names.erase(name);
  }
  return FeatureSchema{{names.begin(), names.end()}};
}

std::size_t FeatureSchema::Size() const { return param_names.size() + DerivedFeatureNames(version).size(); }

std::vector<std::string> FeatureSchema::Names() const {
  std::vector<std::string> names = param_names;
  for (const std::string& d : DerivedFeatureNames(version)) names.push_back(d);
  return names;
}

KernelCost ComputeFeatures(const FeatureSchema& schema, const Kernel& kernel, int threads, std::vector<float>& out,
                           double* vector_channels) {
  out.clear();
  out.reserve(schema.Size());
  for (const std::string& name : schema.param_names) {
    auto it = kernel.params.find(name);
    out.push_back(static_cast<float>(LogScale(it == kernel.params.end() ? 0.0 : static_cast<double>(it->second))));
  }
  KernelCost c = ComputeKernelCost(kernel);
  out.push_back(static_cast<float>(LogScale(c.macs)));
  out.push_back(static_cast<float>(LogScale(c.Bytes())));
  out.push_back(static_cast<float>(LogScale(c.Intensity())));
  out.push_back(static_cast<float>(LogScale(c.out_elements)));
  out.push_back(static_cast<float>(LogScale(c.in_bytes)));
  out.push_back(static_cast<float>(LogScale(c.weight_bytes)));
  out.push_back(static_cast<float>(LogScale(c.oh)));
  out.push_back(static_cast<float>(LogScale(c.ow)));
  out.push_back(static_cast<float>(LogScale(c.oh * c.ow)));
  out.push_back(static_cast<float>(threads));
  out.push_back(static_cast<float>(DataTypeSize(kernel.dtype)));
  out.push_back(static_cast<float>(kernel.fused.size()));
  const double channels = schema.version >= 2 || vector_channels != nullptr ? VectorChannels(kernel) : 0;
  if (vector_channels != nullptr) *vector_channels = channels;
  if (schema.version >= 2)
    for (int lanes : kLanes) out.push_back(static_cast<float>(LaneTail(channels, lanes)));
  if (schema.version >= 3) {
    const GemmShape g = GemmShapeOf(kernel);
    out.push_back(static_cast<float>(LogScale(g.batches * g.m)));
    out.push_back(static_cast<float>(LogScale(g.k)));
    for (double d : {g.m, g.k, g.n}) out.push_back(static_cast<float>(LaneTail(d, 16)));
    out.push_back(static_cast<float>(LogScale(g.unit_bytes)));
  }
  return c;
}

}  // namespace latte
