#include "ir/fuse_decomposed.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ir/graph_builder.h"
#include "ir/kernel_graph.h"

namespace latte {
namespace {

using Ints = std::vector<std::int64_t>;

Attributes Mean(Ints axes) {
  Attributes a;
  a.Set("axes", std::move(axes));
  a.Set("keepdims", std::int64_t{1});
  return a;
}

// What a layer norm decomposition may differ in, to build near misses.
struct LayerNormForm {
  float exponent = 2.0f;
  bool square_by_mul = false;  // centered · centered instead of Pow 2
  Ints variance_axes = {-1};
  bool affine = true;
  bool centered_read_elsewhere = false;
};

// PyTorch's LayerNorm at opset ≤ 16 over the last axis of [2, 5, 8]: ReduceMean → Sub → Pow →
// ReduceMean → Add eps → Sqrt → Div → Mul scale → Add bias.
Expected<Graph> DecomposedLayerNorm(const LayerNormForm& form = {}) {
  GraphBuilder b;
  const TensorId x = b.Input("x", {2, 5, 8});
  const TensorId mean = b.Op1(OpKind::kMean, "mean", {x}, Mean({-1}));
  const TensorId centered = b.Op1(OpKind::kSub, "sub", {x, mean});
  const TensorId squared = form.square_by_mul
                              ? b.Op1(OpKind::kMul, "square", {centered, centered})
                              : b.Op1(OpKind::kPow, "pow", {centered, b.Constant("two", {}, {form.exponent})});
  const TensorId var = b.Op1(OpKind::kMean, "var", {squared}, Mean(form.variance_axes));
  const TensorId shifted = b.Op1(OpKind::kAdd, "add_eps", {var, b.Constant("eps", {}, {1e-5f})});
  const TensorId dev = b.Op1(OpKind::kSqrt, "sqrt", {shifted});
  TensorId y = b.Op1(OpKind::kDiv, "div", {centered, dev});
  if (form.affine) {
    y = b.Op1(OpKind::kMul, "scale", {y, b.Constant("gamma", {8}, std::vector<float>(8, 1.5f))});
    y = b.Op1(OpKind::kAdd, "shift", {b.Constant("beta", {8}, std::vector<float>(8, 0.25f)), y});
  }
  std::vector<TensorId> outputs = {y};
  if (form.centered_read_elsewhere) outputs.push_back(b.Op1(OpKind::kRelu, "other", {centered}));
  return b.Finish(outputs);
}

TEST(FuseDecomposed, PyTorchsLayerNormIsOneNode) {
  auto g = DecomposedLayerNorm();
  ASSERT_TRUE(g.ok()) << g.status().message();
  std::vector<std::vector<NodeId>> sources;
  const Graph f = FuseDecomposedOps(*g, &sources);
  ASSERT_TRUE(f.Validate().ok());
  ASSERT_EQ(f.num_nodes(), 1u);
  const Node& ln = f.node(0);
  EXPECT_EQ(ln.kind, OpKind::kLayerNorm);
  EXPECT_EQ(ln.attrs.GetInt("axis", 0), 2);
  EXPECT_NEAR(ln.attrs.GetFloat("epsilon", 0), 1e-5, 1e-11);
  ASSERT_EQ(ln.inputs.size(), 3u);
  EXPECT_EQ(f.tensor(ln.inputs[1]).name, "gamma");
  EXPECT_EQ(f.tensor(ln.inputs[2]).name, "beta");
  EXPECT_EQ(ln.outputs[0], g->outputs[0]);
  ASSERT_EQ(sources.size(), 1u);
  EXPECT_EQ(sources[0].size(), 9u) << "every user node is named in the profile";
  EXPECT_EQ(g->node(sources[0][0]).name, "mean");
  // As a kernel: rows of 8 values, with scale and bias.
  auto kernel = KernelOfNodes(f, {0});
  ASSERT_TRUE(kernel.ok()) << kernel.status().message();
  EXPECT_EQ(kernel->Key(), "layer_norm|bias=1,c=8,h=2,n=1,scale=1,w=5|float32");
}

TEST(FuseDecomposed, LayerNormWithoutScaleAndBiasOrWithTheSquareAsAProduct) {
  LayerNormForm form;
  form.affine = false;
  auto g = DecomposedLayerNorm(form);
  ASSERT_TRUE(g.ok()) << g.status().message();
  const Graph f = FuseDecomposedOps(*g);
  ASSERT_EQ(f.num_nodes(), 1u);
  EXPECT_EQ(f.node(0).kind, OpKind::kLayerNorm);
  EXPECT_EQ(f.node(0).inputs.size(), 1u);
  LayerNormForm product;
  product.square_by_mul = true;
  auto p = DecomposedLayerNorm(product);
  ASSERT_TRUE(p.ok()) << p.status().message();
  const Graph fp = FuseDecomposedOps(*p);
  ASSERT_EQ(fp.num_nodes(), 1u);
  EXPECT_EQ(fp.node(0).kind, OpKind::kLayerNorm);
}

TEST(FuseDecomposed, NearMissesOfLayerNormStayAsTheyAre) {
  LayerNormForm cube;
  cube.exponent = 3.0f;  // not a variance
  LayerNormForm other_axis;
  other_axis.variance_axes = {1};
  LayerNormForm shared;
  shared.centered_read_elsewhere = true;  // the centered values are needed outside
  for (const LayerNormForm& form : {cube, other_axis, shared}) {
    auto g = DecomposedLayerNorm(form);
    ASSERT_TRUE(g.ok()) << g.status().message();
    const Graph f = FuseDecomposedOps(*g);
    EXPECT_EQ(f.num_nodes(), g->num_nodes());
    for (const Node& n : f.nodes()) EXPECT_NE(n.kind, OpKind::kLayerNorm);
  }
}

TEST(FuseDecomposed, AChainAllowNothingSaysNoIsKept) {
  auto g = DecomposedLayerNorm();
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(FuseDecomposedOps(*g, nullptr, [](const std::vector<NodeId>&) { return false; }).num_nodes(),
            g->num_nodes());
}

// GELU written out in one of the orders exporters use.
enum class GeluForm { kDivThenHalfLast, kMulInvSqrt2HalfFirst, kHalfOfSum, kTanhCubeByMuls, kTanhPow3 };

Expected<Graph> DecomposedGelu(GeluForm form, float one = 1.0f, float sqrt2 = 1.41421356f) {
  GraphBuilder b;
  const TensorId x = b.Input("x", {2, 6});
  auto c = [&](const std::string& name, float v) { return b.Constant(name, {}, {v}); };
  TensorId one_plus;
  if (form == GeluForm::kTanhCubeByMuls || form == GeluForm::kTanhPow3) {
    TensorId cube;
    if (form == GeluForm::kTanhPow3) {
      cube = b.Op1(OpKind::kPow, "cube", {x, c("three", 3.0f)});
    } else {
      cube = b.Op1(OpKind::kMul, "cube", {x, b.Op1(OpKind::kMul, "square", {x, x})});
    }
    const TensorId k = b.Op1(OpKind::kMul, "kappa", {c("k", 0.044715f), cube});
    const TensorId inner = b.Op1(OpKind::kAdd, "inner", {x, k});
    const TensorId scaled = b.Op1(OpKind::kMul, "beta", {c("b", 0.7978845608f), inner});
    one_plus = b.Op1(OpKind::kAdd, "plus", {c("one", one), b.Op1(OpKind::kTanh, "tanh", {scaled})});
    return b.Finish({b.Op1(OpKind::kMul, "half", {c("h", 0.5f), b.Op1(OpKind::kMul, "times_x", {x, one_plus})})});
  }
  const TensorId scaled = form == GeluForm::kDivThenHalfLast
                              ? b.Op1(OpKind::kDiv, "div", {x, c("sqrt2", sqrt2)})
                              : b.Op1(OpKind::kMul, "div", {c("inv_sqrt2", 1.0f / sqrt2), x});
  one_plus = b.Op1(OpKind::kAdd, "plus", {b.Op1(OpKind::kErf, "erf", {scaled}), c("one", one)});
  switch (form) {
    case GeluForm::kDivThenHalfLast:
      return b.Finish({b.Op1(OpKind::kMul, "half", {b.Op1(OpKind::kMul, "times_x", {x, one_plus}), c("h", 0.5f)})});
    case GeluForm::kMulInvSqrt2HalfFirst:
      return b.Finish({b.Op1(OpKind::kMul, "times", {one_plus, b.Op1(OpKind::kMul, "half", {x, c("h", 0.5f)})})});
    default:
      return b.Finish({b.Op1(OpKind::kMul, "times_x", {x, b.Op1(OpKind::kMul, "half", {one_plus, c("h", 0.5f)})})});
  }
}

TEST(FuseDecomposed, EveryGeluFormIsOneNodeSayingItsApproximation) {
  const std::pair<GeluForm, const char*> forms[] = {{GeluForm::kDivThenHalfLast, "none"},
                                                    {GeluForm::kMulInvSqrt2HalfFirst, "none"},
                                                    {GeluForm::kHalfOfSum, "none"},
                                                    {GeluForm::kTanhCubeByMuls, "tanh"},
                                                    {GeluForm::kTanhPow3, "tanh"}};
  for (const auto& [form, approximate] : forms) {
    SCOPED_TRACE(static_cast<int>(form));
    auto g = DecomposedGelu(form);
    ASSERT_TRUE(g.ok()) << g.status().message();
    std::vector<std::vector<NodeId>> sources;
    const Graph f = FuseDecomposedOps(*g, &sources);
    ASSERT_TRUE(f.Validate().ok());
    ASSERT_EQ(f.num_nodes(), 1u);
    EXPECT_EQ(f.node(0).kind, OpKind::kGelu);
    EXPECT_EQ(f.node(0).attrs.GetString("approximate", ""), approximate);
    EXPECT_EQ(f.node(0).inputs, (std::vector<TensorId>{g->inputs[0]}));
    EXPECT_EQ(f.node(0).outputs, g->outputs);
    EXPECT_EQ(sources[0].size(), g->num_nodes());
  }
}

TEST(FuseDecomposed, NearMissesOfGeluStayAsTheyAre) {
  for (auto g : {DecomposedGelu(GeluForm::kDivThenHalfLast, 2.0f), DecomposedGelu(GeluForm::kDivThenHalfLast, 1.0f, 1.41f),
                 DecomposedGelu(GeluForm::kTanhPow3, 2.0f)}) {
    ASSERT_TRUE(g.ok()) << g.status().message();
    const Graph f = FuseDecomposedOps(*g);
    EXPECT_EQ(f.num_nodes(), g->num_nodes());
  }
}

}  // namespace
}  // namespace latte
