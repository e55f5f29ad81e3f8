#include "profile/encoder_models.h"

#include <onnx/onnx_pb.h>

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

std::string VitModelBytes(const EncoderConfig& c) {
  Check(c);
  if (c.patch < 1 || c.image < c.patch || c.image % c.patch != 0 || c.classes < 1)
    throw std::invalid_argument(c.name + ": the image must be a whole number of patches");
  Writer w(c);
  w.Input("pixel_values", {1, 3, c.image, c.image}, onnx::TensorProto::FLOAT);
  const std::int64_t grid = c.image / c.patch, tokens = grid * grid + 1;

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
  }
  return shapes;
}

std::string ModelBytes(const EncoderConfig& config) {
  return config.name.rfind("bert", 0) == 0 ? BertModelBytes(config) : VitModelBytes(config);
}

}  // namespace latte::encoders
