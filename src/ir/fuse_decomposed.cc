#include "ir/fuse_decomposed.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "ir/node_rewrite.h"

namespace latte {
namespace {

// Relative tolerance of a formula's constant: float32 rounding of √2, 1/√2, √(2/π), 0.044715.
constexpr double kTolerance = 1e-6;

bool Near(double value, double want) { return std::abs(value - want) <= kTolerance * std::abs(want); }

// A matched chain: its nodes (in no particular order), the op it computes and that op's node.
struct Chain {
  std::vector<NodeId> nodes;
  Node merged;
};

// Reads the graph around a candidate chain: producers, readers, constants.
class Matcher {
 public:
  Matcher(const Graph& graph, const std::vector<bool>& removed)
      : g_(graph), removed_(removed), consumers_(graph.num_tensors()), producer_(graph.num_tensors(), -1),
        is_output_(graph.num_tensors(), false) {
    for (NodeId id = 0; id < static_cast<NodeId>(graph.num_nodes()); ++id) {
      const Node& n = graph.node(id);
      for (TensorId t : n.inputs)
        if (Valid(t) && std::find(consumers_[t].begin(), consumers_[t].end(), id) == consumers_[t].end())
          consumers_[t].push_back(id);
      for (TensorId t : n.outputs)
        if (Valid(t)) producer_[t] = id;
    }
    for (TensorId t : graph.outputs)
      if (Valid(t)) is_output_[t] = true;
  }

  const Node& node(NodeId id) const { return g_.node(id); }

  // The node of `kind` (no fused activation, not yet merged) that is the only reader of inner
  // tensor `t` (not a graph output), or -1.
  NodeId OnlyReader(TensorId t, OpKind kind) const {
    if (!Valid(t) || is_output_[t] || consumers_[t].size() != 1) return -1;
    return Usable(consumers_[t][0], kind) ? consumers_[t][0] : -1;
  }
  // The readers of inner tensor `t`, or empty when it is a graph output.
  std::vector<NodeId> Readers(TensorId t) const {
    if (!Valid(t) || is_output_[t]) return {};
    return consumers_[t];
  }
  // The node of `kind` writing `t`, or -1.
  NodeId Writer(TensorId t, OpKind kind) const {
    if (!Valid(t) || producer_[t] < 0) return -1;
    return Usable(producer_[t], kind) ? producer_[t] : -1;
  }
  bool Usable(NodeId id, OpKind kind) const {
    const Node& n = g_.node(id);
    return !removed_[static_cast<size_t>(id)] && n.kind == kind && n.outputs.size() == 1 &&
           n.attrs.GetString("activation", "none") == "none" &&
           (KernelFamilyOf(kind) != KernelFamily::kBinary || n.inputs.size() == 2);
  }
  // The value of a constant of one float element.
  std::optional<double> Scalar(TensorId t) const {
    if (!Valid(t) || !g_.tensor(t).is_constant()) return std::nullopt;
    auto values = ConstantFloats(g_.tensor(t));
    if (!values.ok() || values->size() != 1) return std::nullopt;
    return (*values)[0];
  }
  // The operand of binary node `id` beside `known` (either side), or kNoTensor.
  TensorId Other(NodeId id, TensorId known) const {
    const Node& n = g_.node(id);
    if (n.inputs[0] == known) return n.inputs[1];
    if (n.inputs[1] == known) return n.inputs[0];
    return kNoTensor;
  }
  // Binary node `id` with a constant scalar operand near `want`: the other operand, or kNoTensor.
  TensorId WithConstant(NodeId id, double want) const {
    const Node& n = g_.node(id);
    for (size_t i = 0; i < 2; ++i) {
      auto v = Scalar(n.inputs[i]);
      if (v && Near(*v, want)) return n.inputs[1 - i];
    }
    return kNoTensor;
  }
  const Tensor& tensor(TensorId t) const { return g_.tensor(t); }

 private:
  bool Valid(TensorId t) const { return t >= 0 && static_cast<size_t>(t) < g_.num_tensors(); }

  const Graph& g_;
  const std::vector<bool>& removed_;
  std::vector<std::vector<NodeId>> consumers_;
  std::vector<NodeId> producer_;
  std::vector<bool> is_output_;
};

// The axis a reduction over the trailing dims [axis, rank) starts at, or nullopt for any other.
std::optional<std::int64_t> TrailingAxis(const Node& mean, std::int64_t rank) {
  auto axes = mean.attrs.GetInts("axes");
  if (!axes || axes->empty() || mean.attrs.GetInt("keepdims", 1) == 0) return std::nullopt;
  std::vector<std::int64_t> sorted;
  for (std::int64_t a : *axes) {
    if (a < -rank || a >= rank) return std::nullopt;
    sorted.push_back(a < 0 ? a + rank : a);
  }
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != rank - static_cast<std::int64_t>(sorted.size() - i)) return std::nullopt;
  return sorted.front();
}

// A constant that scales or shifts the normalized dims [axis, rank) of `x` alike in every row:
// its shape, leading 1s aside, no longer than those dims and broadcasting to them.
bool PerRowConstant(const Tensor& p, const Shape& x, std::int64_t axis) {
  if (!p.is_constant() || !p.fully_known()) return false;
  Shape s = p.shape;
  while (!s.empty() && s.front() == 1) s.erase(s.begin());
  const auto normalized = static_cast<std::int64_t>(x.size()) - axis;
  if (static_cast<std::int64_t>(s.size()) > normalized) return false;
  for (size_t i = 0; i < s.size(); ++i)
    if (s[s.size() - 1 - i] != 1 && s[s.size() - 1 - i] != x[x.size() - 1 - i]) return false;
  return true;
}

// ReduceMean → Sub → Pow 2 → ReduceMean → Add eps → Sqrt → Div [→ Mul scale] [→ Add bias],
// starting at the first ReduceMean.
std::optional<Chain> MatchLayerNorm(const Matcher& m, NodeId first) {
  using K = OpKind;
  if (!m.Usable(first, K::kMean) || m.node(first).inputs.size() != 1) return std::nullopt;
  const TensorId x = m.node(first).inputs[0];
  const Tensor& xt = m.tensor(x);
  if (!xt.fully_known() || xt.dtype != DataType::kFloat32) return std::nullopt;
  const auto rank = static_cast<std::int64_t>(xt.shape.size());
  const auto axis = TrailingAxis(m.node(first), rank);
  if (!axis) return std::nullopt;
  const TensorId mean = m.node(first).outputs[0];
  const NodeId sub = m.OnlyReader(mean, K::kSub);
  if (sub < 0 || m.node(sub).inputs[0] != x || m.node(sub).inputs[1] != mean) return std::nullopt;
  const TensorId centered = m.node(sub).outputs[0];
  // The centered values are read twice: squared, and divided by the deviation.
  const std::vector<NodeId> readers = m.Readers(centered);
  if (readers.size() != 2) return std::nullopt;
  NodeId pow = -1, div = -1;
  for (NodeId r : readers) {
    if (m.Usable(r, K::kPow) && m.node(r).inputs[0] == centered) {
      auto exponent = m.Scalar(m.node(r).inputs[1]);
      if (exponent && *exponent == 2.0) pow = r;
    } else if (m.Usable(r, K::kMul) && m.node(r).inputs[0] == centered && m.node(r).inputs[1] == centered) {
      pow = r;  // the square as a product (some exporters write x·x)
    } else if (m.Usable(r, K::kDiv) && m.node(r).inputs[0] == centered) {
      div = r;
    }
  }
  if (pow < 0 || div < 0) return std::nullopt;
  const NodeId var = m.OnlyReader(m.node(pow).outputs[0], K::kMean);
  if (var < 0 || TrailingAxis(m.node(var), rank) != axis) return std::nullopt;
  const NodeId add_eps = m.OnlyReader(m.node(var).outputs[0], K::kAdd);
  if (add_eps < 0) return std::nullopt;
  const TensorId eps_t = m.Other(add_eps, m.node(var).outputs[0]);
  const auto epsilon = m.Scalar(eps_t);
  if (!epsilon || !(*epsilon >= 0)) return std::nullopt;
  const NodeId sqrt = m.OnlyReader(m.node(add_eps).outputs[0], K::kSqrt);
  if (sqrt < 0) return std::nullopt;
  if (m.OnlyReader(m.node(sqrt).outputs[0], K::kDiv) != div || m.node(div).inputs[1] != m.node(sqrt).outputs[0])
    return std::nullopt;

  Chain chain;
  chain.nodes = {first, sub, pow, var, add_eps, sqrt, div};
  TensorId out = m.node(div).outputs[0];
  // The affine step after the normalisation, `kind` by a per-row constant, taken into the chain
  // when there is one: the constant, or kNoTensor.
  auto affine = [&](K kind) {
    const NodeId step = m.OnlyReader(out, kind);
    if (step < 0) return kNoTensor;
    const TensorId other = m.Other(step, out);
    if (other == kNoTensor || !PerRowConstant(m.tensor(other), xt.shape, *axis)) return kNoTensor;
    chain.nodes.push_back(step);
    out = m.node(step).outputs[0];
    return other;
  };
  const TensorId scale = affine(K::kMul);
  const TensorId bias = affine(K::kAdd);
  Node& ln = chain.merged;
  ln = m.node(first);
  ln.kind = K::kLayerNorm;
  ln.inputs = {x};
  if (scale != kNoTensor || bias != kNoTensor) ln.inputs.push_back(scale);
  if (bias != kNoTensor) ln.inputs.push_back(bias);
  ln.outputs = {out};
  ln.attrs = Attributes();
  ln.attrs.Set("axis", *axis);
  ln.attrs.Set("epsilon", *epsilon);
  return chain;
}

// The end every GELU form shares, from `one_plus` (1 + erf(..) or 1 + tanh(..)): times x and 0.5,
// in any of the orders exporters write: (x · p) · 0.5, (x · 0.5) · p, x · (p · 0.5).
std::optional<TensorId> MatchGeluTail(const Matcher& m, TensorId x, TensorId one_plus, std::vector<NodeId>& nodes) {
  using K = OpKind;
  const NodeId mul = m.OnlyReader(one_plus, K::kMul);
  if (mul < 0) return std::nullopt;
  const TensorId other = m.Other(mul, one_plus);
  if (other == x) {  // (x · p) · 0.5
    const NodeId half = m.OnlyReader(m.node(mul).outputs[0], K::kMul);
    if (half < 0 || m.WithConstant(half, 0.5) != m.node(mul).outputs[0]) return std::nullopt;
    nodes.insert(nodes.end(), {mul, half});
    return m.node(half).outputs[0];
  }
  if (m.WithConstant(mul, 0.5) == one_plus) {  // x · (p · 0.5)
    const NodeId times_x = m.OnlyReader(m.node(mul).outputs[0], K::kMul);
    if (times_x < 0 || m.Other(times_x, m.node(mul).outputs[0]) != x) return std::nullopt;
    nodes.insert(nodes.end(), {mul, times_x});
    return m.node(times_x).outputs[0];
  }
  // (x · 0.5) · p: the half is read only here.
  const NodeId half = m.Writer(other, K::kMul);
  if (half < 0 || m.OnlyReader(other, K::kMul) != mul || m.WithConstant(half, 0.5) != x) return std::nullopt;
  nodes.insert(nodes.end(), {half, mul});
  return m.node(mul).outputs[0];
}

Chain GeluChain(const Matcher& m, std::vector<NodeId> nodes, TensorId x, TensorId out, const char* approximate) {
  Chain chain;
  chain.nodes = std::move(nodes);
  Node& gelu = chain.merged;
  gelu = m.node(*std::min_element(chain.nodes.begin(), chain.nodes.end()));
  gelu.kind = OpKind::kGelu;
  gelu.inputs = {x};
  gelu.outputs = {out};
  gelu.attrs = Attributes();
  gelu.attrs.Set("approximate", std::string(approximate));
  return chain;
}

// x / √2 (or x · 1/√2) → Erf → + 1 → the tail, from the Erf.
std::optional<Chain> MatchGeluErf(const Matcher& m, NodeId erf) {
  using K = OpKind;
  if (!m.Usable(erf, K::kErf) || m.node(erf).inputs.size() != 1) return std::nullopt;
  const TensorId scaled = m.node(erf).inputs[0];
  if (m.OnlyReader(scaled, K::kErf) != erf) return std::nullopt;
  TensorId x = kNoTensor;
  NodeId scale = m.Writer(scaled, K::kDiv);
  if (scale >= 0) {
    auto d = m.Scalar(m.node(scale).inputs[1]);
    if (d && Near(*d, std::sqrt(2.0))) x = m.node(scale).inputs[0];
  } else if ((scale = m.Writer(scaled, K::kMul)) >= 0) {
    x = m.WithConstant(scale, 1.0 / std::sqrt(2.0));
  }
  if (x == kNoTensor || m.tensor(x).dtype != DataType::kFloat32) return std::nullopt;
  const NodeId plus = m.OnlyReader(m.node(erf).outputs[0], K::kAdd);
  if (plus < 0 || m.WithConstant(plus, 1.0) != m.node(erf).outputs[0]) return std::nullopt;
  std::vector<NodeId> nodes = {scale, erf, plus};
  auto out = MatchGeluTail(m, x, m.node(plus).outputs[0], nodes);
  if (!out) return std::nullopt;
  return GeluChain(m, std::move(nodes), x, *out, "none");
}

// x³ (Pow 3, or x · (x · x) either way round) → · 0.044715 → + x → · √(2/π) → Tanh → + 1 → the
// tail, from the Tanh.
std::optional<Chain> MatchGeluTanh(const Matcher& m, NodeId tanh) {
  using K = OpKind;
  if (!m.Usable(tanh, K::kTanh) || m.node(tanh).inputs.size() != 1) return std::nullopt;
  const TensorId scaled = m.node(tanh).inputs[0];
  if (m.OnlyReader(scaled, K::kTanh) != tanh) return std::nullopt;
  const NodeId scale = m.Writer(scaled, K::kMul);
  if (scale < 0) return std::nullopt;
  const TensorId inner = m.WithConstant(scale, 0.7978845608028654 /* √(2/π) */);
  if (inner == kNoTensor || m.OnlyReader(inner, K::kMul) != scale) return std::nullopt;
  const NodeId sum = m.Writer(inner, K::kAdd);
  if (sum < 0) return std::nullopt;
  for (size_t side = 0; side < 2; ++side) {  // which operand of the sum is x
    const TensorId x = m.node(sum).inputs[side], term = m.node(sum).inputs[1 - side];
    const NodeId kappa = m.Writer(term, K::kMul);
    if (kappa < 0 || m.OnlyReader(term, K::kAdd) != sum) continue;
    const TensorId cube = m.WithConstant(kappa, 0.044715);
    if (cube == kNoTensor || m.OnlyReader(cube, K::kMul) != kappa) continue;
    std::vector<NodeId> nodes;
    if (const NodeId pow = m.Writer(cube, K::kPow); pow >= 0) {
      auto e = m.Scalar(m.node(pow).inputs[1]);
      if (!e || *e != 3.0 || m.node(pow).inputs[0] != x) continue;
      nodes = {pow};
    } else if (const NodeId outer = m.Writer(cube, K::kMul); outer >= 0) {
      const TensorId square = m.Other(outer, x);
      const NodeId inner_mul = square == kNoTensor ? -1 : m.Writer(square, K::kMul);
      if (inner_mul < 0 || m.OnlyReader(square, K::kMul) != outer || m.node(inner_mul).inputs[0] != x ||
          m.node(inner_mul).inputs[1] != x)
        continue;
      nodes = {inner_mul, outer};
    } else {
      continue;
    }
    if (m.tensor(x).dtype != DataType::kFloat32) continue;
    const NodeId plus = m.OnlyReader(m.node(tanh).outputs[0], K::kAdd);
    if (plus < 0 || m.WithConstant(plus, 1.0) != m.node(tanh).outputs[0]) return std::nullopt;
    nodes.insert(nodes.end(), {kappa, sum, scale, tanh, plus});
    auto out = MatchGeluTail(m, x, m.node(plus).outputs[0], nodes);
    if (!out) return std::nullopt;
    return GeluChain(m, std::move(nodes), x, *out, "tanh");
  }
  return std::nullopt;
}

}  // namespace

namespace {
// The ops FuseDecomposedOps starts a match at (its switch below).
bool StartsAChain(OpKind kind) { return kind == OpKind::kMean || kind == OpKind::kErf || kind == OpKind::kTanh; }
}  // namespace

bool MayHaveDecomposedOps(const Graph& graph) {
  for (const Node& node : graph.nodes())
    if (StartsAChain(node.kind)) return true;
  return false;
}

Graph FuseDecomposedOps(const Graph& graph, std::vector<std::vector<NodeId>>* sources,
                        const std::function<bool(const std::vector<NodeId>& chain)>& allow) {
  NodeRewrite rewrite(graph);
  const Matcher m(graph, rewrite.removed);
  for (NodeId id = 0; id < static_cast<NodeId>(graph.num_nodes()); ++id) {
    if (rewrite.removed[static_cast<size_t>(id)] || !StartsAChain(graph.node(id).kind)) continue;
    std::optional<Chain> chain;
    switch (graph.node(id).kind) {
      case OpKind::kMean: chain = MatchLayerNorm(m, id); break;
      case OpKind::kErf: chain = MatchGeluErf(m, id); break;
      case OpKind::kTanh: chain = MatchGeluTanh(m, id); break;
      default: break;
    }
    if (!chain) continue;
    // The merged node takes the place of the chain's earliest node: its inputs are ready there,
    // and whatever reads its output comes after the chain's last node.
    std::sort(chain->nodes.begin(), chain->nodes.end());
    if (std::any_of(chain->nodes.begin(), chain->nodes.end(),
                    [&](NodeId n) { return rewrite.removed[static_cast<size_t>(n)]; }))
      continue;
    if (allow && !allow(chain->nodes)) continue;
    const NodeId into = chain->nodes.front();
    chain->merged.name = graph.node(into).name;
    chain->merged.source_op = graph.node(into).source_op;
    // Attributes of the replaced node that say nothing of its op (a caller's tags) stay.
    Attributes attrs = graph.node(into).attrs;
    for (const char* op_attr : {"axes", "keepdims", "noop_with_empty_axes", "activation"}) attrs.Erase(op_attr);
    for (const auto& [name, value] : chain->merged.attrs.values()) attrs.Set(name, value);
    chain->merged.attrs = std::move(attrs);
    rewrite.nodes[static_cast<size_t>(into)] = std::move(chain->merged);
    for (size_t i = 1; i < chain->nodes.size(); ++i) rewrite.Merge(into, chain->nodes[i]);
  }
  return rewrite.Finish(graph, sources);
}

}  // namespace latte
