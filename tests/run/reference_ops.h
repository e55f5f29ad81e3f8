#pragma once
// Naive fp32 reference kernels (NHWC, row-major) that backend tests compare against: slow,
// obvious loops, no shared code with any backend. Header-only so every test can use it.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "ir/op_params.h"

namespace latte::reference {

using Floats = std::vector<float>;

inline std::int64_t Product(const Shape& s) {
  std::int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

/// Applies a fused activation ("none", "relu", "relu6", "relu_n1_to_1") in place.
inline void Activate(Floats& y, const std::string& act) {
  float lo = -std::numeric_limits<float>::infinity(), hi = std::numeric_limits<float>::infinity();
  if (act == "relu") lo = 0;
  if (act == "relu6") lo = 0, hi = 6;
  if (act == "relu_n1_to_1") lo = -1, hi = 1;
  for (float& v : y) v = std::min(std::max(v, lo), hi);
}

/// conv2d (OHWI weights, groups) or depthwise_conv2d (1HWO weights) in NHWC.
inline Floats Conv2D(const Floats& x, const Floats& w, const Floats& bias, const ConvParams& p, bool depthwise) {
  Floats y(static_cast<size_t>(p.batch * p.out_h * p.out_w * p.out_c));
  const std::int64_t gin = p.in_c / p.groups, gout = p.out_c / p.groups;
  for (std::int64_t n = 0; n < p.batch; ++n)
    for (std::int64_t oy = 0; oy < p.out_h; ++oy)
      for (std::int64_t ox = 0; ox < p.out_w; ++ox)
        for (std::int64_t oc = 0; oc < p.out_c; ++oc) {
          double acc = bias.empty() ? 0.0 : bias[static_cast<size_t>(oc)];
          const std::int64_t g = oc / gout;
          for (std::int64_t ky = 0; ky < p.kernel_h; ++ky)
            for (std::int64_t kx = 0; kx < p.kernel_w; ++kx) {
              const std::int64_t iy = oy * p.stride_h - p.pads.top + ky * p.dilation_h;
              const std::int64_t ix = ox * p.stride_w - p.pads.left + kx * p.dilation_w;
              if (iy < 0 || iy >= p.in_h || ix < 0 || ix >= p.in_w) continue;
              const std::int64_t base = ((n * p.in_h + iy) * p.in_w + ix) * p.in_c;
              if (depthwise) {
                acc += x[static_cast<size_t>(base + g)] * w[static_cast<size_t>((ky * p.kernel_w + kx) * p.out_c + oc)];
                continue;
              }
              for (std::int64_t i = 0; i < gin; ++i)
                acc += x[static_cast<size_t>(base + g * gin + i)] *
                       w[static_cast<size_t>(((oc * p.kernel_h + ky) * p.kernel_w + kx) * gin + i)];
            }
          y[static_cast<size_t>(((n * p.out_h + oy) * p.out_w + ox) * p.out_c + oc)] = static_cast<float>(acc);
        }
  Activate(y, p.activation);
  return y;
}

/// transpose_conv2d with OHWI weights (TFLite): scatters each input pixel through the kernel.
inline Floats TransposeConv2D(const Floats& x, const Floats& w, const Floats& bias, const ConvParams& p) {
  std::vector<double> acc(static_cast<size_t>(p.batch * p.out_h * p.out_w * p.out_c), 0.0);
  const std::int64_t gin = p.in_c / p.groups, gout = p.out_c / p.groups;
  for (std::int64_t n = 0; n < p.batch; ++n)
    for (std::int64_t iy = 0; iy < p.in_h; ++iy)
      for (std::int64_t ix = 0; ix < p.in_w; ++ix)
        for (std::int64_t ky = 0; ky < p.kernel_h; ++ky)
          for (std::int64_t kx = 0; kx < p.kernel_w; ++kx) {
            const std::int64_t oy = iy * p.stride_h - p.pads.top + ky * p.dilation_h;
            const std::int64_t ox = ix * p.stride_w - p.pads.left + kx * p.dilation_w;
            if (oy < 0 || oy >= p.out_h || ox < 0 || ox >= p.out_w) continue;
            for (std::int64_t oc = 0; oc < p.out_c; ++oc) {
              const std::int64_t g = oc / gout;
              for (std::int64_t i = 0; i < gin; ++i)
                acc[static_cast<size_t>(((n * p.out_h + oy) * p.out_w + ox) * p.out_c + oc)] +=
                    x[static_cast<size_t>(((n * p.in_h + iy) * p.in_w + ix) * p.in_c + g * gin + i)] *
                    w[static_cast<size_t>(((oc * p.kernel_h + ky) * p.kernel_w + kx) * gin + i)];
            }
          }
  Floats y(acc.size());
  for (size_t i = 0; i < acc.size(); ++i)
    y[i] = static_cast<float>(acc[i] + (bias.empty() ? 0.0 : bias[i % static_cast<size_t>(p.out_c)]));
  Activate(y, p.activation);
  return y;
}

/// fully_connected: weights [out, in] ("OI") or [in, out] ("IO").
inline Floats FullyConnected(const Floats& x, const Floats& w, const Floats& bias, std::int64_t rows, std::int64_t in,
                             std::int64_t out, bool io) {
  Floats y(static_cast<size_t>(rows * out));
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t o = 0; o < out; ++o) {
      double acc = bias.empty() ? 0.0 : bias[static_cast<size_t>(o)];
      for (std::int64_t i = 0; i < in; ++i)
        acc += x[static_cast<size_t>(r * in + i)] * w[static_cast<size_t>(io ? i * out + o : o * in + i)];
      y[static_cast<size_t>(r * out + o)] = static_cast<float>(acc);
    }
  return y;
}

/// max or average pool in NHWC; padding never counts (TFLite semantics).
inline Floats Pool2D(const Floats& x, const PoolParams& p, bool max) {
  Floats y(static_cast<size_t>(p.batch * p.out_h * p.out_w * p.channels));
  for (std::int64_t n = 0; n < p.batch; ++n)
    for (std::int64_t oy = 0; oy < p.out_h; ++oy)
      for (std::int64_t ox = 0; ox < p.out_w; ++ox)
        for (std::int64_t c = 0; c < p.channels; ++c) {
          double acc = max ? -std::numeric_limits<double>::infinity() : 0.0;
          int count = 0;
          for (std::int64_t ky = 0; ky < p.kernel_h; ++ky)
            for (std::int64_t kx = 0; kx < p.kernel_w; ++kx) {
              const std::int64_t iy = oy * p.stride_h - p.pads.top + ky, ix = ox * p.stride_w - p.pads.left + kx;
              if (iy < 0 || iy >= p.in_h || ix < 0 || ix >= p.in_w) continue;
              const double v = x[static_cast<size_t>(((n * p.in_h + iy) * p.in_w + ix) * p.channels + c)];
              acc = max ? std::max(acc, v) : acc + v;
              ++count;
            }
          y[static_cast<size_t>(((n * p.out_h + oy) * p.out_w + ox) * p.channels + c)] =
              static_cast<float>(max ? acc : acc / count);
        }
  return y;
}

/// Index of `out_index` (in `out` shape) in a numpy-broadcast input of shape `in`.
inline std::int64_t BroadcastIndex(std::int64_t out_index, const Shape& out, const Shape& in) {
  std::int64_t index = 0, stride = 1;
  for (size_t k = 0; k < out.size(); ++k) {
    const size_t axis = out.size() - 1 - k;
    const std::int64_t coord = out_index % out[axis];
    out_index /= out[axis];
    if (k < in.size()) {
      const std::int64_t d = in[in.size() - 1 - k];
      index += (d == 1 ? 0 : coord) * stride;
      stride *= d;
    }
  }
  return index;
}

/// a OP b with numpy broadcasting into `out` shape.
template <typename F>
Floats Binary(const Floats& a, const Shape& as, const Floats& b, const Shape& bs, const Shape& out, F op) {
  Floats y(static_cast<size_t>(Product(out)));
  for (std::int64_t i = 0; i < Product(out); ++i)
    y[static_cast<size_t>(i)] =
        op(a[static_cast<size_t>(BroadcastIndex(i, out, as))], b[static_cast<size_t>(BroadcastIndex(i, out, bs))]);
  return y;
}

/// matmul of a (shape `as`) and b (`bs`), each of rank ≥ 2, batch dims broadcast as numpy does;
/// `ta` / `tb`: the last two dims of a / b are stored transposed. The output is the broadcast batch
/// dims, then m × n.
inline Floats MatMul(const Floats& a, Shape as, bool ta, const Floats& b, Shape bs, bool tb) {
  const size_t rank = std::max(as.size(), bs.size());
  as.insert(as.begin(), rank - as.size(), 1);
  bs.insert(bs.begin(), rank - bs.size(), 1);
  const std::int64_t m = ta ? as[rank - 1] : as[rank - 2], k = ta ? as[rank - 2] : as[rank - 1];
  const std::int64_t n = tb ? bs[rank - 2] : bs[rank - 1];
  Shape batch(rank - 2);
  for (size_t i = 0; i + 2 < rank; ++i) batch[i] = std::max(as[i], bs[i]);
  const Shape a_batch(as.begin(), as.end() - 2), b_batch(bs.begin(), bs.end() - 2);
  const std::int64_t batches = Product(batch);
  Floats y(static_cast<size_t>(batches * m * n));
  for (std::int64_t t = 0; t < batches; ++t) {
    const std::int64_t ab = BroadcastIndex(t, batch, a_batch) * m * k, bb = BroadcastIndex(t, batch, b_batch) * k * n;
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (std::int64_t l = 0; l < k; ++l)
          acc += double(a[static_cast<size_t>(ab + (ta ? l * m + i : i * k + l))]) *
                 double(b[static_cast<size_t>(bb + (tb ? j * k + l : l * n + j))]);
        y[static_cast<size_t>((t * m + i) * n + j)] = static_cast<float>(acc);
      }
  }
  return y;
}

/// GELU, exact: x · Φ(x) = ½x(1 + erf(x/√2)); `tanh`: ½x(1 + tanh(√(2/π)(x + 0.044715x³))).
inline float Gelu(float x, bool tanh) {
  const double v = x;
  if (!tanh) return static_cast<float>(0.5 * v * (1 + std::erf(v / std::sqrt(2.0))));
  return static_cast<float>(0.5 * v * (1 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v))));
}

/// Bilinear resize of NHWC `x` to out_h × out_w; coords "half_pixel", "align_corners", "asymmetric".
inline Floats ResizeBilinear(const Floats& x, const Shape& s, std::int64_t out_h, std::int64_t out_w, const std::string& coords) {
  const std::int64_t n_ = s[0], h = s[1], w = s[2], c = s[3];
  auto source = [&](std::int64_t o, std::int64_t in, std::int64_t out) {
    double v;
    if (coords == "align_corners") v = out > 1 ? o * double(in - 1) / double(out - 1) : 0.0;
    else if (coords == "half_pixel") v = (o + 0.5) * double(in) / double(out) - 0.5;
    else v = o * double(in) / double(out);
    return std::min(std::max(v, 0.0), double(in - 1));
  };
  Floats y(static_cast<size_t>(n_ * out_h * out_w * c));
  for (std::int64_t n = 0; n < n_; ++n)
    for (std::int64_t oy = 0; oy < out_h; ++oy)
      for (std::int64_t ox = 0; ox < out_w; ++ox) {
        const double sy = source(oy, h, out_h), sx = source(ox, w, out_w);
        const auto y0 = static_cast<std::int64_t>(std::floor(sy)), x0 = static_cast<std::int64_t>(std::floor(sx));
        const std::int64_t y1 = std::min(y0 + 1, h - 1), x1 = std::min(x0 + 1, w - 1);
        const double fy = sy - y0, fx = sx - x0;
        for (std::int64_t ch = 0; ch < c; ++ch) {
          auto at = [&](std::int64_t yy, std::int64_t xx) { return double(x[static_cast<size_t>(((n * h + yy) * w + xx) * c + ch)]); };
          const double top = at(y0, x0) * (1 - fx) + at(y0, x1) * fx, bottom = at(y1, x0) * (1 - fx) + at(y1, x1) * fx;
          y[static_cast<size_t>(((n * out_h + oy) * out_w + ox) * c + ch)] = static_cast<float>(top * (1 - fy) + bottom * fy);
        }
      }
  return y;
}

/// Softmax over the last axis of size `c`.
inline Floats Softmax(const Floats& x, std::int64_t c) {
  Floats y(x.size());
  for (size_t r = 0; r < x.size() / static_cast<size_t>(c); ++r) {
    const float* in = &x[r * static_cast<size_t>(c)];
    const float m = *std::max_element(in, in + c);
    double sum = 0;
    for (std::int64_t i = 0; i < c; ++i) sum += std::exp(double(in[i] - m));
    for (std::int64_t i = 0; i < c; ++i) y[r * static_cast<size_t>(c) + static_cast<size_t>(i)] = static_cast<float>(std::exp(double(in[i] - m)) / sum);
  }
  return y;
}

/// Mean over the middle of [outer, reduced, inner].
inline Floats MeanMiddle(const Floats& x, std::int64_t outer, std::int64_t reduced, std::int64_t inner) {
  Floats y(static_cast<size_t>(outer * inner));
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i) {
      double acc = 0;
      for (std::int64_t r = 0; r < reduced; ++r) acc += x[static_cast<size_t>((o * reduced + r) * inner + i)];
      y[static_cast<size_t>(o * inner + i)] = static_cast<float>(acc / reduced);
    }
  return y;
}

/// Constant pad of a tensor of shape `s` with ONNX-ordered `pads` [begins..., ends...].
inline Floats Pad(const Floats& x, const Shape& s, const std::vector<std::int64_t>& pads, float value) {
  const size_t rank = s.size();
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) out[i] = s[i] + pads[i] + pads[i + rank];
  Floats y(static_cast<size_t>(Product(out)), value);
  for (std::int64_t i = 0; i < Product(s); ++i) {
    std::int64_t rest = i, o = 0, stride = 1;
    for (size_t k = 0; k < rank; ++k) {
      const size_t axis = rank - 1 - k;
      o += (rest % s[axis] + pads[axis]) * stride;
      rest /= s[axis];
      stride *= out[axis];
    }
    y[static_cast<size_t>(o)] = x[static_cast<size_t>(i)];
  }
  return y;
}

/// depth_to_space NHWC, DCR: out[n, h*b+i, w*b+j, c] = in[n, h, w, (i*b + j)*C_out + c].
inline Floats DepthToSpace(const Floats& x, const Shape& s, std::int64_t b) {
  const std::int64_t n_ = s[0], h = s[1], w = s[2], c = s[3], oc = c / (b * b);
  Floats y(x.size());
  for (std::int64_t n = 0; n < n_; ++n)
    for (std::int64_t yy = 0; yy < h * b; ++yy)
      for (std::int64_t xx = 0; xx < w * b; ++xx)
        for (std::int64_t ch = 0; ch < oc; ++ch)
          y[static_cast<size_t>(((n * h * b + yy) * w * b + xx) * oc + ch)] =
              x[static_cast<size_t>(((n * h + yy / b) * w + xx / b) * c + ((yy % b) * b + xx % b) * oc + ch)];
  return y;
}

}  // namespace latte::reference
