#include "ir/kernel_graph.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <random>

#include <fmt/format.h>

#include "ir/graph_builder.h"
#include "ir/op_params.h"
#include "ir/shape_inference.h"

namespace latte {
namespace {

// Largest tensor a one-kernel graph may hold: beyond this a "kernel" is a typo, not a workload.
constexpr std::int64_t kMaxElements = std::int64_t{1} << 31;

// Reads a kernel's params, checking each, and remembers which were read (the rest are unexpected).
class ParamReader {
 public:
  explicit ParamReader(const Kernel& kernel) : kernel_(kernel) {}

  /// The param, which must be present and within [min, 2^31].
  Expected<std::int64_t> Get(const std::string& name, std::int64_t min = 1, std::int64_t max = kMaxElements) {
    read_.insert(name);
    auto it = kernel_.params.find(name);
    if (it == kernel_.params.end()) return InvalidInput("param '" + name + "' is missing");
    if (it->second < min || it->second > max)
      return InvalidInput("param '" + name + "' is " + std::to_string(it->second) + ", must be in [" + std::to_string(min) +
                          ", " + std::to_string(max) + "]");
    return it->second;
  }
  Status CheckNoOthers() const {
    for (const auto& [name, value] : kernel_.params)
      if (!read_.count(name)) return InvalidInput("param '" + name + "' is not one of a " + std::string(OpName(kernel_.op)) + " kernel");
    return Status::Ok();
  }

 private:
  const Kernel& kernel_;
  std::set<std::string> read_;
};

// Fails when a tensor of these dims would exceed 2^31 elements, naming it.
Status CheckElements(const std::string& what, const Shape& shape) {
  std::int64_t n = 1;
  for (std::int64_t d : shape) {
    if (d < 1 || n > kMaxElements / d)
      return InvalidInput(what + " of shape " + ShapeToString(shape) + " has more than 2^31 elements");
    n *= d;
  }
  return Status::Ok();
}

// Deterministic values in [-scale, scale] (own mapping: std distributions differ between libraries).
std::vector<float> RandomValues(std::int64_t count, std::mt19937& rng, float scale) {
  std::vector<float> v(static_cast<size_t>(count));
  for (float& x : v) x = (static_cast<float>(rng() >> 8) * (1.0f / 16777216.0f) * 2.0f - 1.0f) * scale;
  return v;
}

// Builds the graph step by step, inferring each node's output shapes as it goes (so later steps
// can size their operands) and bounding every tensor.
class KernelGraphBuilder {
 public:
  explicit KernelGraphBuilder(unsigned seed) : rng_(seed) {}

  Expected<TensorId> Input(const std::string& name, const Shape& shape) {
    LATTE_RETURN_IF_ERROR(CheckElements("input '" + name + "'", shape));
    return b_.Input(name, shape);
  }
  Expected<TensorId> Weights(const std::string& name, const Shape& shape, std::int64_t fan_in) {
    LATTE_RETURN_IF_ERROR(CheckElements("constant '" + name + "'", shape));
    const float scale = 1.0f / std::sqrt(static_cast<float>(std::max<std::int64_t>(fan_in, 1)));
    return b_.Constant(name, shape, RandomValues(*ShapeElements(shape), rng_, scale));
  }
  Expected<TensorId> Constant(const std::string& name, const Shape& shape, float value) {
    LATTE_RETURN_IF_ERROR(CheckElements("constant '" + name + "'", shape));
    return b_.Constant(name, shape, std::vector<float>(static_cast<size_t>(*ShapeElements(shape)), value));
  }
  Expected<TensorId> Op(OpKind kind, const std::string& name, std::vector<TensorId> inputs, Attributes attrs) {
    TensorId out = b_.Op1(kind, name, std::move(inputs), std::move(attrs));
    const auto id = static_cast<NodeId>(b_.graph().num_nodes() - 1);
    LATTE_ASSIGN_OR_RETURN(std::vector<Shape> shapes, InferNodeShapes(b_.graph(), id));
    LATTE_RETURN_IF_ERROR(CheckElements("output of " + name, shapes.at(0)));
    Tensor& t = b_.graph().mutable_tensor(out);
    t.shape = shapes[0];
    t.shape_known = true;
    return out;
  }
  const Shape& ShapeOf(TensorId id) { return b_.graph().tensor(id).shape; }
  Expected<Graph> Finish(TensorId out) { return b_.Finish({out}); }

 private:
  GraphBuilder b_;
  std::mt19937 rng_;
};

Attributes SpatialAttrs(std::int64_t sh, std::int64_t sw, std::int64_t pt, std::int64_t pl, std::int64_t pb,
                        std::int64_t pr) {
  Attributes a;
  a.Set("layout", std::string("NHWC"));
  a.Set("strides", std::vector<std::int64_t>{sh, sw});
  a.Set("padding", std::string("explicit"));
  a.Set("pads", std::vector<std::int64_t>{pt, pl, pb, pr});
  return a;
}

Status WindowFits(const char* k_name, std::int64_t k, std::int64_t dilation, const char* in_name, std::int64_t in,
                  std::int64_t pad_begin, std::int64_t pad_end) {
  const std::int64_t effective = (k - 1) * dilation + 1;
  if (effective > in + pad_begin + pad_end)
    return InvalidInput("param '" + std::string(k_name) + "' (" + std::to_string(k) + ", " + std::to_string(effective) +
                        " dilated) is larger than the padded input " + in_name + " " +
                        std::to_string(in + pad_begin + pad_end));
  return Status::Ok();
}

// Builds the main node; returns its output. `act` is the fused activation the node carries.
Expected<TensorId> BuildMain(const Kernel& k, ParamReader& r, KernelGraphBuilder& b, const std::string& act) {
  using K = OpKind;
  const std::string name(OpName(k.op));
  auto with_act = [&](Attributes a) {
    if (!act.empty()) a.Set("activation", act);
    return a;
  };
  switch (KernelFamilyOf(k.op)) {
    case KernelFamily::kConv: {
      LATTE_ASSIGN_OR_RETURN(auto n, r.Get("n"));
      LATTE_ASSIGN_OR_RETURN(auto ih, r.Get("ih"));
      LATTE_ASSIGN_OR_RETURN(auto iw, r.Get("iw"));
      LATTE_ASSIGN_OR_RETURN(auto ic, r.Get("ic"));
      LATTE_ASSIGN_OR_RETURN(auto oc, r.Get("oc"));
      LATTE_ASSIGN_OR_RETURN(auto kh, r.Get("kh"));
      LATTE_ASSIGN_OR_RETURN(auto kw, r.Get("kw"));
      LATTE_ASSIGN_OR_RETURN(auto sh, r.Get("sh"));
      LATTE_ASSIGN_OR_RETURN(auto sw, r.Get("sw"));
      LATTE_ASSIGN_OR_RETURN(auto dh, r.Get("dh"));
      LATTE_ASSIGN_OR_RETURN(auto dw, r.Get("dw"));
      LATTE_ASSIGN_OR_RETURN(auto g, r.Get("g"));
      LATTE_ASSIGN_OR_RETURN(auto pt, r.Get("pt", 0));
      LATTE_ASSIGN_OR_RETURN(auto pl, r.Get("pl", 0));
      LATTE_ASSIGN_OR_RETURN(auto pb, r.Get("pb", 0));
      LATTE_ASSIGN_OR_RETURN(auto pr, r.Get("pr", 0));
      LATTE_ASSIGN_OR_RETURN(auto bias, r.Get("bias", 0, 1));
      if (ic % g != 0) return InvalidInput("param 'g' (" + std::to_string(g) + ") does not divide ic (" + std::to_string(ic) + ")");
      if (oc % g != 0) return InvalidInput("param 'g' (" + std::to_string(g) + ") does not divide oc (" + std::to_string(oc) + ")");
      Attributes a = with_act(SpatialAttrs(sh, sw, pt, pl, pb, pr));
      a.Set("dilations", std::vector<std::int64_t>{dh, dw});
      LATTE_ASSIGN_OR_RETURN(TensorId x, b.Input("x", {n, ih, iw, ic}));
      TensorId w;
      if (k.op == K::kDepthwiseConv2D) {
        if (g != ic) return InvalidInput("param 'g' (" + std::to_string(g) + ") must equal ic (" + std::to_string(ic) + ") for depthwise_conv2d");
        a.Set("filter_layout", std::string("1HWO"));
        a.Set("groups", ic);
        a.Set("depth_multiplier", oc / ic);
        LATTE_ASSIGN_OR_RETURN(w, b.Weights("w", {1, kh, kw, oc}, kh * kw));
      } else {
        a.Set("filter_layout", std::string("OHWI"));
        a.Set("groups", g);
        LATTE_ASSIGN_OR_RETURN(w, b.Weights("w", {oc, kh, kw, ic / g}, kh * kw * (ic / g)));
      }
      if (k.op == K::kTransposeConv2D) {
        LATTE_ASSIGN_OR_RETURN(auto oh, r.Get("oh"));
        LATTE_ASSIGN_OR_RETURN(auto ow, r.Get("ow"));
        // The output size is what the pads leave of the full output, plus output padding < stride.
        const std::int64_t extra_h = oh + pt + pb - ((ih - 1) * sh + (kh - 1) * dh + 1);
        const std::int64_t extra_w = ow + pl + pr - ((iw - 1) * sw + (kw - 1) * dw + 1);
        if (extra_h < 0 || extra_h >= std::max(sh, dh))
          return InvalidInput("param 'oh' (" + std::to_string(oh) + ") does not follow from ih, kh, sh, dh, pt and pb");
        if (extra_w < 0 || extra_w >= std::max(sw, dw))
          return InvalidInput("param 'ow' (" + std::to_string(ow) + ") does not follow from iw, kw, sw, dw, pl and pr");
        if (extra_h != 0 || extra_w != 0) a.Set("output_padding", std::vector<std::int64_t>{extra_h, extra_w});
      } else {
        LATTE_RETURN_IF_ERROR(WindowFits("kh", kh, dh, "height", ih, pt, pb));
        LATTE_RETURN_IF_ERROR(WindowFits("kw", kw, dw, "width", iw, pl, pr));
      }
      std::vector<TensorId> inputs = {x, w};
      if (bias) {
        LATTE_ASSIGN_OR_RETURN(TensorId bt, b.Weights("bias", {oc}, 1));
        inputs.push_back(bt);
      }
      return b.Op(k.op, name, inputs, a);
    }
    case KernelFamily::kFullyConnected: {
      LATTE_ASSIGN_OR_RETURN(auto m, r.Get("m"));
      LATTE_ASSIGN_OR_RETURN(auto kk, r.Get("k"));
      LATTE_ASSIGN_OR_RETURN(auto n, r.Get("n"));
      LATTE_ASSIGN_OR_RETURN(auto bias, r.Get("bias", 0, 1));
      LATTE_ASSIGN_OR_RETURN(TensorId x, b.Input("x", {m, kk}));
      LATTE_ASSIGN_OR_RETURN(TensorId w, b.Weights("w", {n, kk}, kk));
      std::vector<TensorId> inputs = {x, w};
      if (bias) {
        LATTE_ASSIGN_OR_RETURN(TensorId bt, b.Weights("bias", {n}, 1));
        inputs.push_back(bt);
      }
      Attributes a = with_act({});
      a.Set("weights_layout", std::string("OI"));
      return b.Op(k.op, name, inputs, a);
    }
    case KernelFamily::kMatMul: {
      LATTE_ASSIGN_OR_RETURN(auto batch, r.Get("b"));
      LATTE_ASSIGN_OR_RETURN(auto m, r.Get("m"));
      LATTE_ASSIGN_OR_RETURN(auto kk, r.Get("k"));
      LATTE_ASSIGN_OR_RETURN(auto n, r.Get("n"));
      LATTE_ASSIGN_OR_RETURN(TensorId a, b.Input("a", {batch, m, kk}));
      LATTE_ASSIGN_OR_RETURN(TensorId bm, b.Input("b", {batch, kk, n}));
      return b.Op(k.op, name, {a, bm}, with_act({}));
    }
    case KernelFamily::kPool: {
      LATTE_ASSIGN_OR_RETURN(auto n, r.Get("n"));
      LATTE_ASSIGN_OR_RETURN(auto ih, r.Get("ih"));
      LATTE_ASSIGN_OR_RETURN(auto iw, r.Get("iw"));
      LATTE_ASSIGN_OR_RETURN(auto c, r.Get("c"));
      LATTE_ASSIGN_OR_RETURN(auto kh, r.Get("kh"));
      LATTE_ASSIGN_OR_RETURN(auto kw, r.Get("kw"));
      LATTE_ASSIGN_OR_RETURN(auto sh, r.Get("sh"));
      LATTE_ASSIGN_OR_RETURN(auto sw, r.Get("sw"));
      LATTE_ASSIGN_OR_RETURN(auto pt, r.Get("pt", 0));
      LATTE_ASSIGN_OR_RETURN(auto pl, r.Get("pl", 0));
      LATTE_ASSIGN_OR_RETURN(auto pb, r.Get("pb", 0));
      LATTE_ASSIGN_OR_RETURN(auto pr, r.Get("pr", 0));
      LATTE_RETURN_IF_ERROR(WindowFits("kh", kh, 1, "height", ih, pt, pb));
      LATTE_RETURN_IF_ERROR(WindowFits("kw", kw, 1, "width", iw, pl, pr));
      LATTE_ASSIGN_OR_RETURN(TensorId x, b.Input("x", {n, ih, iw, c}));
      Attributes a = with_act(SpatialAttrs(sh, sw, pt, pl, pb, pr));
      a.Set("kernel", std::vector<std::int64_t>{kh, kw});
      return b.Op(k.op, name, {x}, a);
    }
    case KernelFamily::kGlobalPool: case KernelFamily::kUnary: case KernelFamily::kSoftmax: case KernelFamily::kReduce:
    case KernelFamily::kReshape: case KernelFamily::kTranspose: case KernelFamily::kPad: case KernelFamily::kDepthSpace: {
      LATTE_ASSIGN_OR_RETURN(auto n, r.Get("n"));
      LATTE_ASSIGN_OR_RETURN(auto h, r.Get("h"));
      LATTE_ASSIGN_OR_RETURN(auto w, r.Get("w"));
      LATTE_ASSIGN_OR_RETURN(auto c, r.Get("c"));
      const Shape shape = {n, h, w, c};
      Attributes a = with_act({});
      std::vector<TensorId> inputs;
      LATTE_ASSIGN_OR_RETURN(TensorId x, b.Input("x", shape));
      inputs.push_back(x);
      switch (KernelFamilyOf(k.op)) {
        case KernelFamily::kGlobalPool:
          a.Set("layout", std::string("NHWC"));
          break;
        case KernelFamily::kUnary:
          if (k.op == K::kClip) a.Set("min", 0.0), a.Set("max", 6.0);
          if (k.op == K::kLeakyRelu) a.Set("alpha", 0.2);
          if (k.op == K::kElu) a.Set("alpha", 1.0);
          if (k.op == K::kPRelu) {
            LATTE_ASSIGN_OR_RETURN(TensorId slope, b.Weights("slope", {c}, 1));
            inputs.push_back(slope);
          }
          if (k.op == K::kBatchNorm) {  // inference: scale, bias, mean, then a variance above 0
            for (const char* param : {"scale", "bias", "mean"}) {
              LATTE_ASSIGN_OR_RETURN(TensorId t, b.Weights(param, {c}, 1));
              inputs.push_back(t);
            }
            LATTE_ASSIGN_OR_RETURN(TensorId var, b.Constant("var", {c}, 1.0f));
            inputs.push_back(var);
            a.Set("epsilon", 1e-5);
            a.Set("layout", std::string("NHWC"));
          }
          break;
        case KernelFamily::kSoftmax:
          a.Set("axis", std::int64_t{3});
          break;
        case KernelFamily::kReduce: {
          LATTE_ASSIGN_OR_RETURN(auto bits, r.Get("axes", 1, 15));
          std::vector<std::int64_t> axes;
          for (std::int64_t i = 0; i < 4; ++i)
            if (bits & (std::int64_t{1} << i)) axes.push_back(i);
          a.Set("axes", axes);
          a.Set("keepdims", std::int64_t{1});
          break;
        }
        case KernelFamily::kReshape:
          a.Set("shape", std::vector<std::int64_t>{n, h * w * c});  // reshape alone (BuildKernelGraph)
          break;
        case KernelFamily::kTranspose: {
          std::vector<std::int64_t> perm;
          std::vector<bool> seen(4, false);
          for (int i = 0; i < 4; ++i) {
            LATTE_ASSIGN_OR_RETURN(auto v, r.Get("perm" + std::to_string(i), 0, 3));
            if (seen[static_cast<size_t>(v)]) return InvalidInput("params perm0..perm3 are not a permutation (repeat " + std::to_string(v) + ")");
            seen[static_cast<size_t>(v)] = true;
            perm.push_back(v);
          }
          a.Set("perm", perm);
          break;
        }
        case KernelFamily::kPad: {
          std::vector<std::int64_t> pads;
          for (int i = 0; i < 8; ++i) {
            LATTE_ASSIGN_OR_RETURN(auto v, r.Get("p" + std::to_string(i), -kMaxElements));
            pads.push_back(v);
          }
          for (size_t i = 0; i < 4; ++i)  // negative pads crop; they may not empty a dimension
            if (shape[i] + pads[i] + pads[i + 4] < 1)
              return InvalidInput("params 'p" + std::to_string(i) + "' and 'p" + std::to_string(i + 4) + "' (" +
                                  std::to_string(pads[i]) + ", " + std::to_string(pads[i + 4]) + ") leave dimension " +
                                  std::to_string(i) + " empty");
          a.Set("pads", pads);
          a.Set("mode", std::string("constant"));
          break;
        }
        case KernelFamily::kDepthSpace: {
          LATTE_ASSIGN_OR_RETURN(auto block, r.Get("block", 1, 4096));
          if (k.op == K::kDepthToSpace && c % (block * block) != 0)
            return InvalidInput("param 'c' (" + std::to_string(c) + ") is not divisible by block² (" + std::to_string(block * block) + ")");
          if (k.op == K::kSpaceToDepth && (h % block != 0 || w % block != 0))
            return InvalidInput("params 'h' and 'w' (" + std::to_string(h) + ", " + std::to_string(w) +
                                ") are not divisible by block (" + std::to_string(block) + ")");
          a.Set("layout", std::string("NHWC"));
          a.Set("block_size", block);
          a.Set("mode", std::string("DCR"));
          break;
        }
        default:
          break;
      }
      return b.Op(k.op, name, inputs, a);
    }
    case KernelFamily::kSlice: {  // the part at the start of each axis: where it starts costs nothing
      Shape in, out;
      std::vector<std::int64_t> starts, axes;
      const char* const in_names[4] = {"n", "h", "w", "c"};
      const char* const out_names[4] = {"on", "oh", "ow", "oc"};
      for (int i = 0; i < 4; ++i) {
        LATTE_ASSIGN_OR_RETURN(auto d, r.Get(in_names[i]));
        LATTE_ASSIGN_OR_RETURN(auto o, r.Get(out_names[i], 1, d));
        in.push_back(d);
        out.push_back(o);
        starts.push_back(0);
        axes.push_back(i);
      }
      Attributes a = with_act({});
      a.Set("starts", starts);
      a.Set("ends", out);
      a.Set("axes", axes);
      LATTE_ASSIGN_OR_RETURN(TensorId x, b.Input("x", in));
      return b.Op(k.op, name, {x}, a);
    }
    case KernelFamily::kBinary: {
      Shape as, bs;
      for (int i = 0; i < 4; ++i) {
        LATTE_ASSIGN_OR_RETURN(auto av, r.Get("a" + std::to_string(i)));
        LATTE_ASSIGN_OR_RETURN(auto bv, r.Get("b" + std::to_string(i)));
        if (av != bv && av != 1 && bv != 1)
          return InvalidInput("params 'a" + std::to_string(i) + "' (" + std::to_string(av) + ") and 'b" + std::to_string(i) +
                              "' (" + std::to_string(bv) + ") do not broadcast");
        as.push_back(av);
        bs.push_back(bv);
      }
      LATTE_ASSIGN_OR_RETURN(TensorId a, b.Input("a", as));
      LATTE_ASSIGN_OR_RETURN(TensorId bt, b.Input("b", bs));
      return b.Op(k.op, name, {a, bt}, with_act({}));
    }
    case KernelFamily::kConcat: {
      LATTE_ASSIGN_OR_RETURN(auto n, r.Get("n"));
      LATTE_ASSIGN_OR_RETURN(auto h, r.Get("h"));
      LATTE_ASSIGN_OR_RETURN(auto w, r.Get("w"));
      LATTE_ASSIGN_OR_RETURN(auto c, r.Get("c"));
      LATTE_ASSIGN_OR_RETURN(auto axis, r.Get("axis", 0, 3));
      LATTE_ASSIGN_OR_RETURN(auto count, r.Get("inputs", 1, 4096));
      const Shape out = {n, h, w, c};
      std::vector<TensorId> inputs;
      std::int64_t sum = 0;
      for (std::int64_t i = 0; i < count; ++i) {
        LATTE_ASSIGN_OR_RETURN(auto d, r.Get("d" + std::to_string(i)));
        sum += d;
        Shape s = out;
        s[static_cast<size_t>(axis)] = d;
        LATTE_ASSIGN_OR_RETURN(TensorId x, b.Input("x" + std::to_string(i), s));
        inputs.push_back(x);
      }
      if (sum != out[static_cast<size_t>(axis)])
        return InvalidInput("params d0..d" + std::to_string(count - 1) + " add up to " + std::to_string(sum) +
                            ", the output has " + std::to_string(out[static_cast<size_t>(axis)]) + " along axis " +
                            std::to_string(axis));
      Attributes a = with_act({});
      a.Set("axis", axis);
      return b.Op(k.op, name, inputs, a);
    }
    case KernelFamily::kResize: {
      LATTE_ASSIGN_OR_RETURN(auto n, r.Get("n"));
      LATTE_ASSIGN_OR_RETURN(auto ih, r.Get("ih"));
      LATTE_ASSIGN_OR_RETURN(auto iw, r.Get("iw"));
      LATTE_ASSIGN_OR_RETURN(auto c, r.Get("c"));
      LATTE_ASSIGN_OR_RETURN(auto oh, r.Get("oh"));
      LATTE_ASSIGN_OR_RETURN(auto ow, r.Get("ow"));
      LATTE_ASSIGN_OR_RETURN(auto mode, r.Get("mode", 0, 1));
      LATTE_ASSIGN_OR_RETURN(TensorId x, b.Input("x", {n, ih, iw, c}));
      Attributes a = with_act({});
      a.Set("layout", std::string("NHWC"));
      a.Set("mode", std::string(mode == 1 ? "bilinear" : "nearest"));
      // TFLite's usual semantics, which the backends run directly: half-pixel bilinear, flooring nearest.
      a.Set("coordinate_transformation", std::string(mode == 1 ? "half_pixel" : "asymmetric"));
      if (mode == 0) a.Set("nearest_mode", std::string("floor"));
      a.Set("sizes", std::vector<std::int64_t>{oh, ow});
      return b.Op(k.op, name, {x}, a);
    }
    case KernelFamily::kNone:
      break;
  }
  return NoKernelFamily(k.op);
}

}  // namespace

Expected<Graph> BuildKernelGraph(const Kernel& kernel, unsigned seed) {
  if (kernel.dtype != DataType::kFloat32)
    return Unsupported("kernel " + kernel.Kind() + " is " + std::string(DataTypeName(kernel.dtype)) +
                       ", only float32 kernels can be built");
  if (KernelFamilyOf(kernel.op) == KernelFamily::kNone) return NoKernelFamily(kernel.op);
  if (KernelFamilyOf(kernel.op) == KernelFamily::kReshape && kernel.op != OpKind::kReshape)
    return InvalidInput("a " + std::string(OpName(kernel.op)) +
                        " kernel is a reshape kernel: reshape, flatten, squeeze, unsqueeze and identity move data "
                        "alike, and are measured and predicted as reshape");
  for (OpKind f : kernel.fused)
    if (!IsFusableFollower(f))
      return InvalidInput("kernel " + kernel.Kind() + ": " + std::string(OpName(f)) + " cannot be fused after another op");

  // A leading activation rides on the main node as its attribute when the main op can carry it.
  size_t next = 0;
  std::string main_act;
  if (!kernel.fused.empty() && IsAttrActivation(kernel.fused[0]) && CanCarryActivation(kernel.op)) {
    main_act = std::string(OpName(kernel.fused[0]));
    next = 1;
  }
  ParamReader reader(kernel);
  KernelGraphBuilder b(seed);
  LATTE_ASSIGN_OR_RETURN(TensorId out, BuildMain(kernel, reader, b, main_act));
  LATTE_RETURN_IF_ERROR(reader.CheckNoOthers());
  for (size_t i = next; i < kernel.fused.size(); ++i) {
    const OpKind f = kernel.fused[i];
    const std::string name = "fused" + std::to_string(i) + ":" + std::string(OpName(f));
    Attributes a;
    if (KernelFamilyOf(f) == KernelFamily::kBinary) {
      LATTE_ASSIGN_OR_RETURN(TensorId other, b.Input("operand" + std::to_string(i), b.ShapeOf(out)));
      if (i + 1 < kernel.fused.size() && IsAttrActivation(kernel.fused[i + 1]) && CanCarryActivation(f)) {
        a.Set("activation", std::string(OpName(kernel.fused[i + 1])));
        ++i;
      }
      LATTE_ASSIGN_OR_RETURN(out, b.Op(f, name, {out, other}, a));
    } else {
      if (f == OpKind::kClip) a.Set("min", -2.0), a.Set("max", 2.0);  // not a relu's bounds: stays a clip
      if (f == OpKind::kLeakyRelu) a.Set("alpha", 0.2);
      if (f == OpKind::kElu) a.Set("alpha", 1.0);
      LATTE_ASSIGN_OR_RETURN(out, b.Op(f, name, {out}, a));
    }
  }
  LATTE_ASSIGN_OR_RETURN(Graph graph, b.Finish(out));
  LATTE_RETURN_IF_ERROR(graph.Validate());
  // Params the checks above let through but that do not describe one kernel (e.g. inconsistent
  // sizes) show up as a different kernel read back: refuse rather than measure something else.
  std::vector<NodeId> all(graph.num_nodes());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<NodeId>(i);
  LATTE_ASSIGN_OR_RETURN(Kernel built, KernelOfNodes(graph, all));
  if (!(built == kernel))
    return InvalidInput("kernel params do not describe one kernel: asked for " + kernel.Key() + ", built " + built.Key());
  return graph;
}


Expected<Graph> JoinKernels(const std::vector<JoinedKernel>& kernels) {
  if (kernels.empty()) return InvalidInput("no kernels to join");
  Graph joined;
  std::vector<TensorId> outputs;
  for (std::size_t ki = 0; ki < kernels.size(); ++ki) {
    LATTE_ASSIGN_OR_RETURN(Graph g, BuildKernelGraph(kernels[ki].kernel, static_cast<unsigned>(ki)));
    std::string prefix = "k";  // built in steps: GCC 12 warns (-Wrestrict) on "k" + to_string(ki) + ":"
    prefix += std::to_string(ki);
    prefix += ':';
    std::map<TensorId, TensorId> map;
    for (std::size_t i = 0; i < g.inputs.size() && i < kernels[ki].from.size(); ++i) {
      const int source = kernels[ki].from[i];
      if (source < 0) continue;
      if (static_cast<std::size_t>(source) >= ki) {
        return InvalidInput(fmt::format("kernel {} reads kernel {}: only earlier kernels can be read", ki, source));
      }
      const TensorId from = outputs[static_cast<std::size_t>(source)];
      if (joined.tensor(from).shape != g.tensor(g.inputs[i]).shape) {
        return InvalidInput(fmt::format("kernel {} input {} is {} but kernel {} writes {}", ki, i,
                                        ShapeToString(g.tensor(g.inputs[i]).shape), source,
                                        ShapeToString(joined.tensor(from).shape)));
      }
      map[g.inputs[i]] = from;
    }
    for (std::size_t t = 0; t < g.num_tensors(); ++t) {
      const TensorId id = static_cast<TensorId>(t);
      if (map.count(id)) continue;
      Tensor copy = g.tensor(id);
      copy.name = prefix + copy.name;
      map[id] = joined.AddTensor(copy);
      if (std::find(g.inputs.begin(), g.inputs.end(), id) != g.inputs.end()) joined.inputs.push_back(map[id]);
    }
    for (const Node& node : g.nodes()) {
      Node copy = node;
      copy.name = prefix + node.name;
      for (TensorId& t : copy.inputs)
        if (t != kNoTensor) t = map[t];
      for (TensorId& t : copy.outputs) t = map[t];
      joined.AddNode(copy);
    }
    outputs.push_back(map[g.outputs.front()]);
  }
  joined.outputs = {outputs.back()};
  LATTE_RETURN_IF_ERROR(joined.Validate());
  return joined;
}


}  // namespace latte
