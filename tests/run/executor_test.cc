#include "run/executor.h"

#include <gtest/gtest.h>

#include <cmath>

#include "ir/graph_builder.h"
#include "run/toy_backends.h"

namespace latte {
namespace {

// x → relu → sigmoid → relu
Graph Chain() {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 3});
  TensorId r1 = b.Op1(OpKind::kRelu, "relu1", {x});
  TensorId s = b.Op1(OpKind::kSigmoid, "sigmoid", {r1});
  TensorId r2 = b.Op1(OpKind::kRelu, "relu2", {s});
  auto g = b.Finish({r2});
  EXPECT_TRUE(g.ok());
  return *g;
}

BackendRegistry Registry() {
  BackendRegistry registry;
  RegisterToyBackends(registry, /*with_sigmoid=*/true);
  return registry;
}

TEST(Executor, PlacementByOpKindRunsEachNodeOnItsBackend) {
  Graph g = Chain();
  BackendRegistry registry = Registry();
  Placement placement;
  placement.default_backend = "relu-only";
  placement.by_op_kind[OpKind::kSigmoid] = "sigmoid-only";
  auto exec = Executor::Create(g, placement, registry, {});
  ASSERT_TRUE(exec.ok()) << exec.status().message();
  const auto& a = (*exec)->assignments();
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[0].backend, "relu-only");
  EXPECT_EQ(a[1].backend, "sigmoid-only");
  EXPECT_FALSE(a[1].fell_back);
  float* in = (*exec)->buffers().mutable_as<float>(g.inputs[0]);
  in[0] = -2, in[1] = 0, in[2] = 2;
  std::vector<double> node_us;
  ASSERT_TRUE((*exec)->RunProfiled(node_us).ok());
  EXPECT_EQ(node_us.size(), 3u);
  const float* out = (*exec)->buffers().as<float>(g.outputs[0]);
  EXPECT_FLOAT_EQ(out[0], 0.5f);
  EXPECT_FLOAT_EQ(out[1], 0.5f);
  EXPECT_FLOAT_EQ(out[2], 1.0f / (1.0f + std::exp(-2.0f)));
  EXPECT_EQ((*exec)->BackendVersions().size(), 2u);
}

TEST(Executor, FallbackIsNamedAndRecorded) {
  Graph g = Chain();
  BackendRegistry registry = Registry();
  Placement placement;
  placement.default_backend = "relu-only";
  placement.fallback = "sigmoid-only";
  auto exec = Executor::Create(g, placement, registry, {});
  ASSERT_TRUE(exec.ok()) << exec.status().message();
  const auto& a = (*exec)->assignments()[1];
  EXPECT_EQ(a.backend, "sigmoid-only");
  EXPECT_TRUE(a.fell_back);
  EXPECT_EQ(a.why, "sigmoid is not relu");
}

TEST(Executor, UnsupportedNodeWithoutFallbackIsAClearError) {
  Graph g = Chain();
  BackendRegistry registry = Registry();
  Placement placement;
  placement.default_backend = "relu-only";
  auto exec = Executor::Create(g, placement, registry, {});
  ASSERT_FALSE(exec.ok());
  EXPECT_EQ(exec.status().code(), StatusCode::kUnsupported);
  EXPECT_EQ(exec.status().message(), "node 1 'sigmoid' (sigmoid): relu-only cannot run it: sigmoid is not relu");
  placement.by_node[1] = "gpu";
  auto unknown = Executor::Create(g, placement, registry, {});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("unknown backend 'gpu'"), std::string::npos);
}

TEST(Executor, RandomInputsAreDeterministicAndInRange) {
  Graph g = Chain();
  auto a = TensorBuffers::Allocate(g), b = TensorBuffers::Allocate(g);
  ASSERT_TRUE(a.ok() && b.ok());
  FillRandomInputs(g, *a, 7);
  FillRandomInputs(g, *b, 7);
  const float* x = a->as<float>(g.inputs[0]);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(x[i], b->as<float>(g.inputs[0])[i]);
    EXPECT_GE(x[i], -1.0f);
    EXPECT_LT(x[i], 1.0f);
  }
}

}  // namespace
}  // namespace latte
