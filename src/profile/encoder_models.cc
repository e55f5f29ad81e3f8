#include "profile/encoder_models.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace latte::encoders {
namespace {

using Ints = std::vector<std::int64_t>;

// Writes a graph node by node, naming tensors and nodes as the exporter does ("/encoder/layer.0/
// attention/self/MatMul"), with initializers of pseudo-random weights.
class Writer {
 public:
  explicit Writer(const EncoderConfig& config) : config_(config) {
    model_.set_ir_version(8);
    model_.set_producer_name("latte profile/encoder_models");
    auto* import = model_.add_opset_import();
    import->set_domain("");
    import->set_version(config.opset);
    model_.mutable_graph()->set_name(config.name);
  }

  void Input(const std::string& name, const Ints& dims, int type) { SetType(graph().add_input(), name, dims, type); }
  void Output(const std::string& name, const Ints& dims) {
    SetType(graph().add_output(), name, dims, onnx::TensorProto::FLOAT);
  }

  // A float initializer of `dims`: uniform in ±scale, or every value `fill` when scale is 0.
  std::string Weight(const std::string& name, const Ints& dims, float scale, float fill = 0) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    std::int64_t count = 1;
    for (std::int64_t d : dims) t->add_dims(d), count *= d;
    t->set_data_type(onnx::TensorProto::FLOAT);
    std::vector<float> values(static_cast<std::size_t>(count), fill);
    if (scale != 0)
      for (float& v : values) v = scale * static_cast<float>(2 * Uniform() - 1);
    t->set_raw_data(values.data(), values.size() * sizeof(float));
    return name;
  }
  // A constant the exporter writes as a Constant node (scalars, shapes, axes) in `scope`.
  std::string Constant(const std::string& scope, const std::vector<float>& values, const Ints& dims) {
    onnx::TensorProto* t = ConstantTensor(scope, dims);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (float v : values) t->add_float_data(v);
    return last_output_;
  }
  std::string Int64Constant(const std::string& scope, const Ints& values, const Ints& dims) {
    onnx::TensorProto* t = ConstantTensor(scope, dims);
    t->set_data_type(onnx::TensorProto::INT64);
    for (std::int64_t v : values) t->add_int64_data(v);
    return last_output_;
  }
  // An int64 initializer (a registered buffer).
  std::string Int64Weight(const std::string& name, const Ints& values, const Ints& dims) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    for (std::int64_t d : dims) t->add_dims(d);
    t->set_data_type(onnx::TensorProto::INT64);
    for (std::int64_t v : values) t->add_int64_data(v);
    return name;
  }

  onnx::NodeProto& Node(const std::string& op, const std::vector<std::string>& inputs, const std::string& output,
                        const std::string& name) {
    onnx::NodeProto* n = graph().add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const std::string& i : inputs) n->add_input(i);
    n->add_output(output);
    return *n;
  }
  // A node named `scope`/`op` (or `scope`/`op`_`index` after the first of its op in the scope)
  // writing `scope`/`op`_output_0, as the exporter names them; returns the output.
  std::string Op(const std::string& scope, const std::string& op, const std::vector<std::string>& inputs) {
    return OpNode(scope, op, inputs).output(0);
  }
  onnx::NodeProto& OpNode(const std::string& scope, const std::string& op, const std::vector<std::string>& inputs) {
    int& count = counts_[scope + "/" + op];
    std::string name = scope + "/" + op;
    if (count > 0) name.append("_").append(std::to_string(count));
    ++count;
    return Node(op, inputs, name + "_output_0", name);
  }

  onnx::TensorProto* ConstantTensor(const std::string& scope, const Ints& dims) {
    onnx::NodeProto& n = OpNode(scope, "Constant", {});
    last_output_ = n.output(0);
    onnx::TensorProto* t = Attribute(n, "value", onnx::AttributeProto::TENSOR)->mutable_t();
    for (std::int64_t d : dims) t->add_dims(d);
    return t;
  }

  static onnx::AttributeProto* Attribute(onnx::NodeProto& n, const std::string& name, onnx::AttributeProto::AttributeType type) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(type);
    return a;
  }
  static void Int(onnx::NodeProto& n, const std::string& name, std::int64_t v) {
    Attribute(n, name, onnx::AttributeProto::INT)->set_i(v);
  }
  static void IntList(onnx::NodeProto& n, const std::string& name, const Ints& v) {
    auto* a = Attribute(n, name, onnx::AttributeProto::INTS);
    for (std::int64_t x : v) a->add_ints(x);
  }
  static void Float(onnx::NodeProto& n, const std::string& name, float v) {
    Attribute(n, name, onnx::AttributeProto::FLOAT)->set_f(v);
  }

  std::string Bytes() const { return model_.SerializeAsString(); }
  const EncoderConfig& config() const { return config_; }

 private:
  onnx::GraphProto& graph() { return *model_.mutable_graph(); }
  static void SetType(onnx::ValueInfoProto* v, const std::string& name, const Ints& dims, int type) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(type);
    for (std::int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
  }
  // SplitMix64: the same weights on every machine.
  double Uniform() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return static_cast<double>(z >> 11) * 0x1.0p-53;
  }

  EncoderConfig config_;
  onnx::ModelProto model_;
  std::map<std::string, int> counts_;
  std::string last_output_;
  std::uint64_t state_ = 7;
};

// ReduceMean's axes: an attribute up to opset 17, an input from 18 on (these models stop at 17).
std::string Mean(Writer& w, const std::string& scope, const std::string& x) {
  onnx::NodeProto& n = w.OpNode(scope, "ReduceMean", {x});
  Writer::IntList(n, "axes", {-1});
  return n.output(0);
}

// The widths of one transformer layer (BERT's and ViT's from the config, MobileViT's its block's)
// and its MLP's activation.
struct LayerWidths {
  int hidden = 0;
  int heads = 1;
  int inner = 0;  // the MLP's width
  bool silu = false;  // MobileViT's SiLU; else GELU (BERT, ViT)
};

LayerWidths WidthsOf(const EncoderConfig& c) { return {c.hidden, c.heads, c.mlp_ratio * c.hidden, false}; }

// Layer norm over the last axis (`hidden` wide) with scale and bias `prefix`.weight / .bias:
// whole at opset 17, else as PyTorch decomposes it.
std::string LayerNorm(Writer& w, const std::string& scope, const std::string& prefix, const std::string& x, int hidden,
                      float epsilon) {
  const std::string scale = w.Weight(prefix + ".weight", {hidden}, 0, 1.0f);
  const std::string bias = w.Weight(prefix + ".bias", {hidden}, 0.02f);
  if (w.config().opset >= 17) {
    onnx::NodeProto& n = w.OpNode(scope, "LayerNormalization", {x, scale, bias});
    Writer::Int(n, "axis", -1);
    Writer::Float(n, "epsilon", epsilon);
    return n.output(0);
  }
  const std::string mean = Mean(w, scope, x);
  const std::string centered = w.Op(scope, "Sub", {x, mean});
  const std::string two = w.Constant(scope, {2.0f}, {});
  const std::string squared = w.Op(scope, "Pow", {centered, two});
  const std::string variance = Mean(w, scope, squared);
  const std::string eps = w.Constant(scope, {epsilon}, {});
  const std::string deviation = w.Op(scope, "Sqrt", {w.Op(scope, "Add", {variance, eps})});
  const std::string normalized = w.Op(scope, "Div", {centered, deviation});
  return w.Op(scope, "Add", {w.Op(scope, "Mul", {normalized, scale}), bias});
}

// x · W + b, the weight stored [in, out] as the exporter writes a Linear it transposed.
std::string Linear(Writer& w, const std::string& scope, const std::string& prefix, const std::string& x, int in, int out) {
  const std::string weight = w.Weight("onnx::MatMul_" + prefix, {in, out}, 1.0f / std::sqrt(static_cast<float>(in)));
  const std::string bias = w.Weight(prefix + ".bias", {out}, 0.02f);
  return w.Op(scope, "Add", {bias, w.Op(scope, "MatMul", {x, weight})});
}

// GELU as nn.GELU() exports below opset 20: x · 0.5 · (1 + erf(x / √2)), in the exporter's order.
std::string Gelu(Writer& w, const std::string& scope, const std::string& x) {
  const std::string root2 = w.Constant(scope, {1.41421354f}, {});
  const std::string erf = w.Op(scope, "Erf", {w.Op(scope, "Div", {x, root2})});
  const std::string one = w.Constant(scope, {1.0f}, {});
  const std::string half = w.Constant(scope, {0.5f}, {});
  return w.Op(scope, "Mul", {w.Op(scope, "Mul", {x, w.Op(scope, "Add", {erf, one})}), half});
}

// SiLU (swish) as nn.SiLU exports: x · sigmoid(x), Sigmoid then Mul.
std::string Silu(Writer& w, const std::string& scope, const std::string& x) {
  return w.Op(scope, "Mul", {x, w.Op(scope, "Sigmoid", {x})});
}

// One dim of `x`'s shape as a traced size (a scalar): Shape → Gather.
std::string Size(Writer& w, const std::string& scope, const std::string& x, std::int64_t index) {
  const std::string shape = w.Op(scope, "Shape", {x});
  const std::string at = w.Int64Constant(scope, {index}, {});
  onnx::NodeProto& gather = w.OpNode(scope, "Gather", {shape, at});
  Writer::Int(gather, "axis", 0);
  return gather.output(0);
}

// A scalar as a 1-element tensor, as the exporter writes a traced size inside a shape list.
std::string Unsqueeze0(Writer& w, const std::string& scope, const std::string& scalar) {
  const std::string axes = w.Int64Constant(scope, {0}, {1});
  return w.Op(scope, "Unsqueeze", {scalar, axes});  // axes as an input from opset 13 on
}

// One dim of `x`'s shape as a 1-element tensor: Shape → Gather → Unsqueeze.
std::string Dim(Writer& w, const std::string& scope, const std::string& x, std::int64_t index) {
  return Unsqueeze0(w, scope, Size(w, scope, x, index));
}

std::string Transpose(Writer& w, const std::string& scope, const std::string& x, const Ints& perm) {
  onnx::NodeProto& transpose = w.OpNode(scope, "Transpose", {x});
  Writer::IntList(transpose, "perm", perm);
  return transpose.output(0);
}

// The first token's state, x[:, 0] (a Gather on axis 1): what BERT's pooler and ViT's classifier
// read.
std::string FirstToken(Writer& w, const std::string& scope, const std::string& x) {
  const std::string first = w.Int64Constant(scope, {0}, {});
  onnx::NodeProto& gather = w.OpNode(scope, "Gather", {x, first});
  Writer::Int(gather, "axis", 1);
  return gather.output(0);
}

// [batch, tokens, hidden] → [batch, heads, tokens, head size] (or [.., head size, tokens] for the
// keys, `keys` true), as the exporter writes view(...) then permute(...).
std::string SplitHeads(Writer& w, const std::string& scope, const std::string& x, const LayerWidths& widths, bool keys) {
  const std::string heads = w.Int64Constant(scope, {widths.heads}, {1});
  const std::string size = w.Int64Constant(scope, {widths.hidden / widths.heads}, {1});
  onnx::NodeProto& concat = w.OpNode(scope, "Concat", {Dim(w, scope, x, 0), Dim(w, scope, x, 1), heads, size});
  Writer::Int(concat, "axis", 0);
  const std::string split = w.Op(scope, "Reshape", {x, concat.output(0)});
  return Transpose(w, scope, split, keys ? Ints{0, 2, 3, 1} : Ints{0, 2, 1, 3});
}

// Multi-head self-attention with its output projection; `mask` is additive ([1, 1, 1, tokens])
// or empty.
std::string Attention(Writer& w, const std::string& scope, const std::string& prefix, const std::string& x,
                      const std::string& mask, const LayerWidths& widths) {
  const int hidden = widths.hidden;
  const std::string self = scope + "/self";
  const std::string q = SplitHeads(w, self, Linear(w, self + "/query", prefix + ".query", x, hidden, hidden), widths, false);
  const std::string k = SplitHeads(w, self, Linear(w, self + "/key", prefix + ".key", x, hidden, hidden), widths, true);
  const std::string v = SplitHeads(w, self, Linear(w, self + "/value", prefix + ".value", x, hidden, hidden), widths, false);
  const std::string root = w.Constant(self, {std::sqrt(static_cast<float>(hidden / widths.heads))}, {});
  std::string scores = w.Op(self, "Div", {w.Op(self, "MatMul", {q, k}), root});
  if (!mask.empty()) scores = w.Op(self, "Add", {scores, mask});
  onnx::NodeProto& softmax = w.OpNode(self, "Softmax", {scores});
  Writer::Int(softmax, "axis", -1);
  const std::string context = w.Op(self, "MatMul", {softmax.output(0), v});
  const std::string merge = Transpose(w, self, context, {0, 2, 1, 3});
  const std::string width = w.Int64Constant(self, {hidden}, {1});
  onnx::NodeProto& shape = w.OpNode(self, "Concat", {Dim(w, self, merge, 0), Dim(w, self, merge, 1), width});
  Writer::Int(shape, "axis", 0);
  const std::string merged = w.Op(self, "Reshape", {merge, shape.output(0)});
  return Linear(w, scope + "/output/dense", prefix + ".output.dense", merged, hidden, hidden);
}

// The MLP: hidden → inner, GELU (or SiLU), → hidden.
std::string Mlp(Writer& w, const std::string& scope, const std::string& prefix, const std::string& x,
                const LayerWidths& widths) {
  const std::string up =
      Linear(w, scope + "/intermediate/dense", prefix + ".intermediate.dense", x, widths.hidden, widths.inner);
  const std::string act_scope = scope + "/intermediate/intermediate_act_fn";
  const std::string act = widths.silu ? Silu(w, act_scope, up) : Gelu(w, act_scope, up);
  return Linear(w, scope + "/output/dense", prefix + ".output.dense", act, widths.inner, widths.hidden);
}

// A pre-norm layer (ViT's and MobileViT's): x + attention(norm(x)), then x + mlp(norm(x)).
std::string PreNormLayer(Writer& w, const std::string& scope, const std::string& prefix, const std::string& x,
                         const LayerWidths& widths, float epsilon) {
  const std::string normed = LayerNorm(w, scope + "/layernorm_before", prefix + ".layernorm_before", x, widths.hidden, epsilon);
  const std::string h =
      w.Op(scope, "Add", {Attention(w, scope + "/attention", prefix + ".attention.attention", normed, "", widths), x});
  const std::string normed2 = LayerNorm(w, scope + "/layernorm_after", prefix + ".layernorm_after", h, widths.hidden, epsilon);
  return w.Op(scope, "Add", {Mlp(w, scope, prefix, normed2, widths), h});
}

// MobileViT's pieces.

// A conv as MobileViTConvLayer exports in eval mode: its BatchNorm folded into the weights and a
// bias (named as the exporter names folded parameters), then SiLU; without the norm, no bias.
struct ConvSpec {
  int out = 0;
  int kernel = 1;
  int stride = 1;
  int groups = 1;
  bool norm = true;
  bool act = true;
};

std::string ConvLayer(Writer& w, const std::string& scope, const std::string& prefix, const std::string& x, int in,
                      const ConvSpec& spec) {
  const int fan_in = in / spec.groups * spec.kernel * spec.kernel;
  // Uniform in ±√(3 / fan-in): unit variance through the stack, so the outputs stay far from zero.
  const float scale = std::sqrt(3.0f / static_cast<float>(fan_in));
  const Ints dims = {spec.out, in / spec.groups, spec.kernel, spec.kernel};
  std::vector<std::string> inputs = {x};
  if (spec.norm) {
    inputs.push_back(w.Weight("onnx::Conv_" + prefix + ".weight", dims, scale));
    inputs.push_back(w.Weight("onnx::Conv_" + prefix + ".bias", {spec.out}, 0.02f));
  } else {
    inputs.push_back(w.Weight(prefix + ".convolution.weight", dims, scale));
  }
  onnx::NodeProto& conv = w.OpNode(scope + "/convolution", "Conv", inputs);
  const std::int64_t pad = (spec.kernel - 1) / 2;
  Writer::IntList(conv, "dilations", {1, 1});
  Writer::Int(conv, "group", spec.groups);
  Writer::IntList(conv, "kernel_shape", {spec.kernel, spec.kernel});
  Writer::IntList(conv, "pads", {pad, pad, pad, pad});
  Writer::IntList(conv, "strides", {spec.stride, spec.stride});
  return spec.act ? Silu(w, scope + "/activation", conv.output(0)) : conv.output(0);
}

// HF's make_divisible: to the nearest multiple of 8, never more than 10% below.
int MakeDivisible(int value) {
  int rounded = std::max(8, (value + 4) / 8 * 8);
  if (rounded < 0.9 * value) rounded += 8;
  return rounded;
}

// MobileNetV2's inverted residual (MobileViTInvertedResidual): 1×1 expansion, 3×3 depthwise
// (strided), 1×1 projection without activation, the input added back when the shape stays.
std::string InvertedResidual(Writer& w, const std::string& scope, const std::string& prefix, const std::string& x,
                             int in, int out, int stride) {
  const int expanded = MakeDivisible(in * w.config().expand_ratio);
  std::string h = ConvLayer(w, scope + "/expand_1x1", prefix + ".expand_1x1", x, in, {expanded, 1});
  h = ConvLayer(w, scope + "/conv_3x3", prefix + ".conv_3x3", h, expanded, {expanded, 3, stride, expanded});
  h = ConvLayer(w, scope + "/reduce_1x1", prefix + ".reduce_1x1", h, expanded, {out, 1, 1, 1, true, false});
  return stride == 1 && in == out ? w.Op(scope, "Add", {x, h}) : h;
}

// A shape list as the exporter writes one from traced sizes and Python ints: each traced size
// (a scalar) unsqueezed, each int a 1-element constant, joined by Concat on axis 0.
struct ShapePart {
  std::string traced;  // a scalar tensor, or empty for `value`
  std::int64_t value = 0;
};
ShapePart Traced(const std::string& scalar) { return {scalar, 0}; }
ShapePart Fixed(std::int64_t value) { return {"", value}; }

std::string ShapeList(Writer& w, const std::string& scope, const std::vector<ShapePart>& parts) {
  std::vector<std::string> pieces;
  for (const ShapePart& p : parts)
    pieces.push_back(p.traced.empty() ? w.Int64Constant(scope, {p.value}, {1}) : Unsqueeze0(w, scope, p.traced));
  onnx::NodeProto& concat = w.OpNode(scope, "Concat", pieces);
  Writer::Int(concat, "axis", 0);
  return concat.output(0);
}

// a · b of traced sizes, or a traced size times a Python int (a scalar Constant).
std::string SizeMul(Writer& w, const std::string& scope, const std::string& a, const std::string& b) {
  return w.Op(scope, "Mul", {a, b});
}
std::string SizeMul(Writer& w, const std::string& scope, const std::string& a, std::int64_t b) {
  return SizeMul(w, scope, a, w.Int64Constant(scope, {b}, {}));
}

// What unfolding() keeps for folding(): the batch and channels it traced, and the patch grid
// (num_patch_height = num_patch_width), which int(math.ceil(...)) made Python ints.
struct Patches {
  std::string tokens, batch, channels;
  std::int64_t grid = 0, patch = 0;
};

// HF MobileViTLayer.unfolding: [b, c, h, w] → [b · p², (h/p)(w/p), c], p×p patches, the feature
// map a whole number of them.
Patches Unfold(Writer& w, const std::string& scope, const std::string& x, std::int64_t size, std::int64_t patch) {
  Patches p;
  p.patch = patch, p.grid = size / patch;
  const std::int64_t area = patch * patch, count = p.grid * p.grid;
  p.batch = Size(w, scope, x, 0);
  p.channels = Size(w, scope, x, 1);
  // reshape(batch · channels · num_patch_height, patch, num_patch_width, patch)
  const std::string rows = SizeMul(w, scope, SizeMul(w, scope, p.batch, p.channels), p.grid);
  std::string h = w.Op(scope, "Reshape", {x, ShapeList(w, scope, {Traced(rows), Fixed(patch), Fixed(p.grid), Fixed(patch)})});
  h = Transpose(w, scope, h, {0, 2, 1, 3});  // transpose(1, 2)
  // reshape(batch, channels, num_patches, patch_area)
  h = w.Op(scope, "Reshape",
           {h, ShapeList(w, scope, {Traced(p.batch), Traced(p.channels), Fixed(count), Fixed(area)})});
  h = Transpose(w, scope, h, {0, 3, 2, 1});  // transpose(1, 3)
  // reshape(batch · patch_area, num_patches, -1)
  const std::string groups = SizeMul(w, scope, p.batch, area);
  p.tokens = w.Op(scope, "Reshape", {h, ShapeList(w, scope, {Traced(groups), Fixed(count), Fixed(-1)})});
  return p;
}

// HF MobileViTLayer.folding: unfolding's inverse, back to [b, c, h, w].
std::string Fold(Writer& w, const std::string& scope, const std::string& tokens, const Patches& p) {
  const std::int64_t area = p.patch * p.patch, count = p.grid * p.grid;
  // view(batch, patch_area, num_patches, -1); contiguous() writes no node
  std::string h = w.Op(scope, "Reshape",
                       {tokens, ShapeList(w, scope, {Traced(p.batch), Fixed(area), Fixed(count), Fixed(-1)})});
  h = Transpose(w, scope, h, {0, 3, 2, 1});  // transpose(1, 3)
  // reshape(batch · channels · num_patch_height, num_patch_width, patch, patch)
  const std::string rows = SizeMul(w, scope, SizeMul(w, scope, p.batch, p.channels), p.grid);
  h = w.Op(scope, "Reshape", {h, ShapeList(w, scope, {Traced(rows), Fixed(p.grid), Fixed(p.patch), Fixed(p.patch)})});
  h = Transpose(w, scope, h, {0, 2, 1, 3});  // transpose(1, 2)
  // reshape(batch, channels, num_patch_height · patch, num_patch_width · patch)
  return w.Op(scope, "Reshape", {h, ShapeList(w, scope, {Traced(p.batch), Traced(p.channels), Fixed(p.grid * p.patch),
                                                         Fixed(p.grid * p.patch)})});
}

// A MobileViT block (MobileViTLayer) at stride 2 on a `size`×`size` input: the downsampling
// inverted residual, the local 3×3 and 1×1 convs, patches through `layers` transformer layers and
// a layer norm, folded back, the 1×1 projection, concat with the block's input, the 3×3 fusion.
std::string MobileVitBlock(Writer& w, const std::string& scope, const std::string& prefix, const std::string& x,
                           int in, int out, int hidden, int layers, std::int64_t size) {
  const EncoderConfig& c = w.config();
  const std::string residual =
      InvertedResidual(w, scope + "/downsampling_layer", prefix + ".downsampling_layer", x, in, out, 2);
  std::string h = ConvLayer(w, scope + "/conv_kxk", prefix + ".conv_kxk", residual, out, {out, 3});
  h = ConvLayer(w, scope + "/conv_1x1", prefix + ".conv_1x1", h, out, {hidden, 1, 1, 1, false, false});
  const Patches patches = Unfold(w, scope, h, size / 2, c.patch);
  std::string tokens = patches.tokens;
  const LayerWidths widths = {hidden, c.heads, c.mlp_ratio * hidden, true};
  for (int l = 0; l < layers; ++l) {
    tokens = PreNormLayer(w, scope + "/transformer/layer." + std::to_string(l),
                          prefix + ".transformer.layer." + std::to_string(l), tokens, widths, 1e-5f);
  }
  tokens = LayerNorm(w, scope + "/layernorm", prefix + ".layernorm", tokens, hidden, 1e-5f);
  h = ConvLayer(w, scope + "/conv_projection", prefix + ".conv_projection", Fold(w, scope, tokens, patches), hidden,
                {out, 1});
  onnx::NodeProto& concat = w.OpNode(scope, "Concat", {residual, h});  // torch.cat((residual, features), dim=1)
  Writer::Int(concat, "axis", 1);
  return ConvLayer(w, scope + "/fusion", prefix + ".fusion", concat.output(0), 2 * out, {out, 3});
}

void Check(const EncoderConfig& c) {
  if (c.layers < 1 || c.hidden < 1 || c.heads < 1 || c.hidden % c.heads != 0 || c.mlp_ratio < 1)
    throw std::invalid_argument(c.name + ": layers, hidden, heads and mlp_ratio must be positive, heads dividing hidden");
}

}  // namespace

std::string BertModelBytes(const EncoderConfig& c) {
  Check(c);
  if (c.sequence < 1 || c.sequence > c.max_positions || c.vocab < 2)
    throw std::invalid_argument(c.name + ": BERT takes 1 to max_positions tokens and a vocabulary of at least 2");
  Writer w(c);
  const Ints tokens = {1, c.sequence};
  w.Input("input_ids", tokens, onnx::TensorProto::INT64);
  w.Input("attention_mask", tokens, onnx::TensorProto::INT64);
  w.Input("token_type_ids", tokens, onnx::TensorProto::INT64);

  // Embeddings: words, positions and token types.
  const std::string emb = "/embeddings";
  const std::string words = w.Weight("embeddings.word_embeddings.weight", {c.vocab, c.hidden}, 0.05f);
  const std::string positions = w.Weight("embeddings.position_embeddings.weight", {c.max_positions, c.hidden}, 0.05f);
  const std::string types = w.Weight("embeddings.token_type_embeddings.weight", {2, c.hidden}, 0.05f);
  // The positions 0..tokens−1: the slice of the registered position_ids buffer that the
  // exporter's constant folding leaves as an initializer.
  Ints ids(static_cast<std::size_t>(c.sequence));
  for (int i = 0; i < c.sequence; ++i) ids[static_cast<std::size_t>(i)] = i;
  const std::string position_ids = w.Int64Weight("/embeddings/Slice_output_0", ids, {1, c.sequence});
  const std::string summed = w.Op(emb, "Add", {w.Op(emb + "/word_embeddings", "Gather", {words, "input_ids"}),
                                               w.Op(emb + "/token_type_embeddings", "Gather", {types, "token_type_ids"})});
  std::string h = w.Op(emb, "Add", {summed, w.Op(emb + "/position_embeddings", "Gather", {positions, position_ids})});
  const LayerWidths widths = WidthsOf(c);
  h = LayerNorm(w, emb + "/LayerNorm", "embeddings.LayerNorm", h, c.hidden, 1e-12f);

  // The padding mask as an additive one: (1 − mask) · −10000, broadcast over heads and queries.
  const std::string m = "/extended_mask";
  const std::string axes = w.Int64Constant(m, {1, 2}, {2});
  onnx::NodeProto& cast = w.OpNode(m, "Cast", {w.Op(m, "Unsqueeze", {"attention_mask", axes})});
  Writer::Int(cast, "to", onnx::TensorProto::FLOAT);
  const std::string one = w.Constant(m, {1.0f}, {});
  const std::string low = w.Constant(m, {-10000.0f}, {});
  const std::string mask = w.Op(m, "Mul", {w.Op(m, "Sub", {one, cast.output(0)}), low});

  for (int l = 0; l < c.layers; ++l) {
    const std::string scope = "/encoder/layer." + std::to_string(l);
    const std::string prefix = "encoder.layer." + std::to_string(l);
    const std::string attended = Attention(w, scope + "/attention", prefix + ".attention.self", h, mask, widths);
    h = LayerNorm(w, scope + "/attention/output/LayerNorm", prefix + ".attention.output.LayerNorm",
                  w.Op(scope + "/attention/output", "Add", {attended, h}), c.hidden, 1e-12f);
    const std::string mlp = Mlp(w, scope, prefix, h, widths);
    h = LayerNorm(w, scope + "/output/LayerNorm", prefix + ".output.LayerNorm", w.Op(scope + "/output", "Add", {mlp, h}),
                  c.hidden, 1e-12f);
  }
  w.Node("Identity", {h}, "last_hidden_state", "/Identity");
  w.Output("last_hidden_state", {1, c.sequence, c.hidden});

  // The pooler: the first token's state through a dense layer and tanh.
  const std::string pooled = Linear(w, "/pooler/dense", "pooler.dense", FirstToken(w, "/pooler", h), c.hidden, c.hidden);
  w.Node("Tanh", {pooled}, "pooler_output", "/pooler/activation/Tanh");
  w.Output("pooler_output", {1, c.hidden});
  return w.Bytes();
}

std::int64_t ImageTokens(const EncoderConfig& c) {
  const std::int64_t grid = c.patch > 0 ? c.image / c.patch : 0;
  return grid * grid + 1;
}

std::string VitModelBytes(const EncoderConfig& c) {
  Check(c);
  if (c.patch < 1 || c.image < c.patch || c.image % c.patch != 0 || c.classes < 1)
    throw std::invalid_argument(c.name + ": the image must be a whole number of patches");
  Writer w(c);
  w.Input("pixel_values", {1, 3, c.image, c.image}, onnx::TensorProto::FLOAT);
  const std::int64_t grid = c.image / c.patch, tokens = ImageTokens(c);

  // Patches: a conv with the patch as kernel and stride, flattened and transposed to tokens.
  const std::string emb = "/vit/embeddings";
  const std::string pe = emb + "/patch_embeddings/projection";
  const std::string weight = w.Weight("vit.embeddings.patch_embeddings.projection.weight", {c.hidden, 3, c.patch, c.patch},
                                      1.0f / static_cast<float>(c.patch * 4));
  const std::string bias = w.Weight("vit.embeddings.patch_embeddings.projection.bias", {c.hidden}, 0.02f);
  onnx::NodeProto& conv = w.OpNode(pe, "Conv", {"pixel_values", weight, bias});
  Writer::IntList(conv, "kernel_shape", {c.patch, c.patch});
  Writer::IntList(conv, "strides", {c.patch, c.patch});
  Writer::IntList(conv, "pads", {0, 0, 0, 0});
  Writer::IntList(conv, "dilations", {1, 1});
  Writer::Int(conv, "group", 1);
  const std::string flat_shape = w.Int64Constant(emb + "/patch_embeddings", {1, c.hidden, grid * grid}, {3});
  const std::string flat = w.Op(emb + "/patch_embeddings", "Reshape", {conv.output(0), flat_shape});
  onnx::NodeProto& to_tokens = w.OpNode(emb + "/patch_embeddings", "Transpose", {flat});
  Writer::IntList(to_tokens, "perm", {0, 2, 1});

  // The class token, expanded to the batch, before the patches; then the position embeddings.
  const std::string cls = w.Weight("vit.embeddings.cls_token", {1, 1, c.hidden}, 0.02f);
  // expand(batch, -1, -1) as the exporter writes it: the -1s replaced by 1s through Equal and Where.
  const std::string minus_one = w.Int64Constant(emb, {-1}, {1});
  onnx::NodeProto& wanted = w.OpNode(emb, "Concat", {Dim(w, emb, "pixel_values", 0), minus_one, minus_one});
  Writer::Int(wanted, "axis", 0);
  onnx::NodeProto& ones = w.OpNode(emb, "ConstantOfShape", {w.Int64Constant(emb, {3}, {1})});
  onnx::TensorProto* one = Writer::Attribute(ones, "value", onnx::AttributeProto::TENSOR)->mutable_t();
  one->add_dims(1);
  one->set_data_type(onnx::TensorProto::INT64);
  one->add_int64_data(1);
  const std::string keep = w.Op(emb, "Equal", {wanted.output(0), minus_one});
  const std::string shape = w.Op(emb, "Where", {keep, ones.output(0), wanted.output(0)});
  const std::string expanded = w.Op(emb, "Expand", {cls, shape});
  onnx::NodeProto& concat = w.OpNode(emb, "Concat", {expanded, to_tokens.output(0)});
  Writer::Int(concat, "axis", 1);
  const std::string positions = w.Weight("vit.embeddings.position_embeddings", {1, tokens, c.hidden}, 0.02f);
  std::string h = w.Op(emb, "Add", {concat.output(0), positions});

  for (int l = 0; l < c.layers; ++l) {
    h = PreNormLayer(w, "/vit/encoder/layer." + std::to_string(l), "vit.encoder.layer." + std::to_string(l), h,
                     WidthsOf(c), 1e-12f);
  }
  h = LayerNorm(w, "/vit/layernorm", "vit.layernorm", h, c.hidden, 1e-12f);
  const std::string logits = Linear(w, "/classifier", "classifier", FirstToken(w, "", h), c.hidden, c.classes);
  w.Node("Identity", {logits}, "logits", "/Identity");
  w.Output("logits", {1, c.classes});
  return w.Bytes();
}

std::string MobileVitModelBytes(const EncoderConfig& c) {
  auto positive = [](const std::vector<int>& v, std::size_t n) {
    return v.size() == n && std::all_of(v.begin(), v.end(), [](int x) { return x > 0; });
  };
  if (!positive(c.channels, 7) || !positive(c.block_hidden, 3) || !positive(c.block_layers, 3) || c.heads < 1 ||
      c.mlp_ratio < 1 || c.expand_ratio < 1 || c.patch < 1 || c.classes < 1)
    throw std::invalid_argument(c.name + ": MobileViT takes 7 channel counts, 3 block widths and layer counts, all positive");
  if (std::any_of(c.block_hidden.begin(), c.block_hidden.end(), [&](int h) { return h % c.heads != 0; }))
    throw std::invalid_argument(c.name + ": the heads must divide every block's width");
  if (c.image < 32 * c.patch || c.image % (32 * c.patch) != 0)
    throw std::invalid_argument(c.name + ": the image must be a multiple of 32 · patch (HF interpolates other sizes)");
  Writer w(c);
  w.Input("pixel_values", {1, 3, c.image, c.image}, onnx::TensorProto::FLOAT);
  const std::vector<int>& ch = c.channels;
  const std::string model = "/mobilevit", weights = "mobilevit";

  std::string h = ConvLayer(w, model + "/conv_stem", weights + ".conv_stem", "pixel_values", 3, {ch[0], 3, 2});
  std::int64_t size = c.image / 2;
  // Stages 1 and 2 (MobileViTMobileNetLayer): one inverted residual at stride 1, three from stride 2.
  const int stage_blocks[2] = {1, 3}, stage_stride[2] = {1, 2};
  for (int s = 0; s < 2; ++s) {
    for (int b = 0; b < stage_blocks[s]; ++b) {
      const std::string at = "/encoder/layer." + std::to_string(s) + "/layer." + std::to_string(b);
      const std::string name = ".encoder.layer." + std::to_string(s) + ".layer." + std::to_string(b);
      const int in = b == 0 ? ch[static_cast<std::size_t>(s)] : ch[static_cast<std::size_t>(s) + 1];
      h = InvertedResidual(w, model + at, weights + name, h, in, ch[static_cast<std::size_t>(s) + 1],
                           b == 0 ? stage_stride[s] : 1);
    }
    size /= stage_stride[s];
  }
  // Stages 3 to 5: MobileViT blocks, each halving the size.
  for (std::size_t s = 2; s < 5; ++s) {
    h = MobileVitBlock(w, model + "/encoder/layer." + std::to_string(s), weights + ".encoder.layer." + std::to_string(s), h,
                       ch[s], ch[s + 1], c.block_hidden[s - 2], c.block_layers[s - 2], size);
    size /= 2;
  }
  h = ConvLayer(w, model + "/conv_1x1_exp", weights + ".conv_1x1_exp", h, ch[5], {ch[6], 1});
  // torch.mean(x, dim=[-2, -1]), then the classifier: a Linear on a matrix exports as Gemm.
  onnx::NodeProto& pool = w.OpNode(model, "ReduceMean", {h});
  Writer::IntList(pool, "axes", {-2, -1});
  Writer::Int(pool, "keepdims", 0);
  const std::string weight = w.Weight("classifier.weight", {c.classes, ch[6]}, std::sqrt(3.0f / static_cast<float>(ch[6])));
  const std::string bias = w.Weight("classifier.bias", {c.classes}, 0.02f);
  onnx::NodeProto& gemm = w.Node("Gemm", {pool.output(0), weight, bias}, "logits", "/classifier/Gemm");
  Writer::Float(gemm, "alpha", 1.0f);
  Writer::Float(gemm, "beta", 1.0f);
  Writer::Int(gemm, "transB", 1);
  w.Output("logits", {1, c.classes});
  return w.Bytes();
}

std::vector<EncoderConfig> PublishedShapes(int vocab) {
  std::vector<EncoderConfig> shapes;
  for (int opset : {17, 13}) {
    const std::string suffix = "_opset" + std::to_string(opset);
    for (int sequence : {64, 128, 384}) {
      EncoderConfig bert;
      bert.name = "bert_mini_seq" + std::to_string(sequence) + suffix;
      bert.layers = 4, bert.hidden = 256, bert.heads = 4, bert.sequence = sequence, bert.vocab = vocab, bert.opset = opset;
      shapes.push_back(bert);
    }
    for (int image : {160, 224}) {
      EncoderConfig vit;
      vit.name = "vit_tiny_" + std::to_string(image) + suffix;
      vit.layers = 12, vit.hidden = 192, vit.heads = 3, vit.image = image, vit.patch = 16, vit.opset = opset;
      shapes.push_back(vit);
    }
    for (int image : {192, 256}) {  // 160 is not a multiple of 64: its last block would interpolate
      EncoderConfig mobilevit;     // apple/mobilevit-xx-small: the widths are the config's defaults
      mobilevit.name = "mobilevit_xx_small_" + std::to_string(image) + suffix;
      mobilevit.heads = 4, mobilevit.mlp_ratio = 2, mobilevit.image = image, mobilevit.patch = 2, mobilevit.opset = opset;
      shapes.push_back(mobilevit);
    }
  }
  return shapes;
}

std::string ModelBytes(const EncoderConfig& config) {
  if (config.name.rfind("bert", 0) == 0) return BertModelBytes(config);
  if (config.name.rfind("mobilevit", 0) == 0) return MobileVitModelBytes(config);
  return VitModelBytes(config);
}

}  // namespace latte::encoders
