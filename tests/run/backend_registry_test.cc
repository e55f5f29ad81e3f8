#include "run/backend_registry.h"

#include <gtest/gtest.h>

#include "ir/graph_builder.h"
#include "import/import.h"
#include "run/toy_backends.h"
#include "test_paths.h"

namespace latte {
namespace {

BackendRegistry MakeRegistry() {
  BackendRegistry registry;
  RegisterToyBackends(registry, /*with_sigmoid=*/false);
  return registry;
}

TEST(BackendRegistry, CreatesByNameAndRejectsUnknownNamesAndBadThreads) {
  BackendRegistry registry = MakeRegistry();
  EXPECT_EQ(registry.Names(), std::vector<std::string>{"relu-only"});
  RunOptions options;
  options.num_threads = 2;
  auto backend = registry.Create("relu-only", options);
  ASSERT_TRUE(backend.ok());
  EXPECT_EQ((*backend)->Version(), "1.0 threads=2");
  auto unknown = registry.Create("tpu", options);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(), "unknown backend 'tpu' (known: relu-only)");
  options.num_threads = 0;
  EXPECT_FALSE(registry.Create("relu-only", options).ok());
  EXPECT_FALSE(registry.Register({"relu-only", "again", nullptr}).ok());
}

// A backend's registration says its layout; plans convert an NCHW graph only for the backends that
// take NHWC (no backend is known by its name).
TEST(BackendRegistry, RegistrationSaysTheLayoutAndPlansConvertOnlyForNhwcBackends) {
  BackendRegistry registry = MakeRegistry();  // relu-only: the file's layout
  ASSERT_TRUE(registry
                  .Register({"nhwc-toy", "test backend", [](const RunOptions&) -> Expected<std::unique_ptr<Backend>> {
                               return Unsupported("not run here");
                             },
                             /*takes_nhwc=*/true})
                  .ok());
  EXPECT_EQ(registry.NhwcBackendNames(), NhwcBackends{"nhwc-toy"});
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 4, 6, 6});
  Attributes pool;
  pool.Set("layout", "NCHW");
  pool.Set("kernel", std::vector<std::int64_t>{2, 2});
  pool.Set("strides", std::vector<std::int64_t>{2, 2});
  pool.Set("padding", "valid");
  auto graph = b.Finish({b.Op1(OpKind::kMaxPool2D, "pool", {x}, pool)});
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  auto as_is = PlanGraphForBackends(*graph, {"relu-only"}, registry.NhwcBackendNames());
  ASSERT_TRUE(as_is.ok()) << as_is.status().message();
  EXPECT_EQ(as_is->graph.num_nodes(), 1u);
  auto converted = PlanGraphForBackends(*graph, {"nhwc-toy"}, registry.NhwcBackendNames());
  ASSERT_TRUE(converted.ok()) << converted.status().message();
  ASSERT_EQ(converted->graph.num_nodes(), 3u);  // transpose in, the pool in NHWC, transpose out
  EXPECT_EQ(converted->graph.node(1).attrs.GetString("layout", ""), "NHWC");
}

TEST(BackendRegistry, SupportAndPreparedRunOnBuffers) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 4});
  TensorId r = b.Op1(OpKind::kRelu, "relu", {x});
  TensorId s = b.Op1(OpKind::kSigmoid, "sigmoid", {r});
  auto g = b.Finish({s});
  ASSERT_TRUE(g.ok());
  auto backend = MakeRegistry().Create("relu-only", {});
  ASSERT_TRUE(backend.ok());
  EXPECT_TRUE((*backend)->Supports(*g, 0).ok());
  Support no = (*backend)->Supports(*g, 1);
  EXPECT_FALSE(no.ok());
  EXPECT_EQ(no.why(), "sigmoid is not relu");
  EXPECT_EQ((*backend)->Prepare(*g, 1).status().code(), StatusCode::kUnsupported);

  auto buffers = TensorBuffers::Allocate(*g);
  ASSERT_TRUE(buffers.ok()) << buffers.status().message();
  float* in = buffers->mutable_as<float>(x);
  ASSERT_NE(in, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(in) % 64, 0u);
  const float values[] = {-1, 2, -3, 4};
  std::copy(values, values + 4, in);
  auto prepared = (*backend)->Prepare(*g, 0);
  ASSERT_TRUE(prepared.ok());
  ASSERT_TRUE((*prepared)->Run(*buffers).ok());
  const float* out = buffers->as<float>(r);
  EXPECT_EQ(std::vector<float>(out, out + 4), (std::vector<float>{0, 2, 0, 4}));
  EXPECT_EQ(buffers->bytes(r), 16u);
  EXPECT_EQ(buffers->total_activation_bytes(), 48u);
}

TEST(TensorBuffers, ConstantsAreSharedAndLimitsHold) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 4});
  TensorId c = b.Constant("c", {4}, {1, 2, 3, 4});
  TensorId y = b.Op1(OpKind::kAdd, "add", {x, c});
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok());
  auto buffers = TensorBuffers::Allocate(*g);
  ASSERT_TRUE(buffers.ok());
  EXPECT_EQ(buffers->mutable_data(c), nullptr);  // constants are read-only
  EXPECT_EQ(buffers->as<float>(c)[3], 4.0f);
  EXPECT_EQ(buffers->data(c), g->tensor(c).data->data());
  auto tiny = TensorBuffers::Allocate(*g, 20);
  ASSERT_FALSE(tiny.ok());
  EXPECT_NE(tiny.status().message().find("more than 0 MiB"), std::string::npos) << tiny.status().message();
}

// x → relu1 → t1 → sigmoid → t2 → relu2 → y, 4 KB each. x lives throughout, t1 from relu1 to the
// sigmoid, t2 from the sigmoid to relu2, y from relu2 on: y may take t1's place, nothing else
// may share. Three 4 KB (+64 spare) slots instead of four.
TEST(TensorBuffers, ActivationsShareMemoryOnlyWhenTheirLifetimesDoNotOverlap) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1024});
  TensorId t1 = b.Op1(OpKind::kRelu, "relu1", {x});
  TensorId t2 = b.Op1(OpKind::kSigmoid, "sigmoid", {t1});
  TensorId y = b.Op1(OpKind::kRelu, "relu2", {t2});
  auto g = b.Finish({y});
  ASSERT_TRUE(g.ok());
  constexpr std::size_t kSlot = 4096 + 64;
  auto shared = TensorBuffers::Plan(*g);
  ASSERT_TRUE(shared.ok());
  EXPECT_EQ(shared->arena_bytes, 3 * kSlot);
  EXPECT_EQ(shared->tensor_bytes, 4 * 4096u);
  EXPECT_EQ(shared->offset[static_cast<std::size_t>(y)], shared->offset[static_cast<std::size_t>(t1)]);
  auto separate = TensorBuffers::Plan(*g, BufferSharing::kNone);
  ASSERT_TRUE(separate.ok());
  EXPECT_EQ(separate->arena_bytes, 4 * kSlot);

  auto buffers = TensorBuffers::Allocate(*g);
  ASSERT_TRUE(buffers.ok());
  EXPECT_EQ(buffers->arena_bytes(), 3 * kSlot);
  EXPECT_EQ(buffers->data(y), buffers->data(t1));
  EXPECT_NE(buffers->data(x), buffers->data(t2));
}

// On a real model: every two activations alive at the same node occupy disjoint memory.
TEST(TensorBuffers, NoTwoLiveActivationsOverlapInARealModel) {
  LATTE_REQUIRE_MODEL("selfie_segmentation.tflite");
  auto g = ImportModel(testing::ModelPath("selfie_segmentation.tflite"));
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto plan = TensorBuffers::Plan(*g);
  ASSERT_TRUE(plan.ok());
  const std::size_t n = g->num_tensors(), end = g->num_nodes() + 1;
  std::vector<std::size_t> first(n, end), last(n, 0);
  for (std::size_t k = 0; k < g->num_nodes(); ++k) {
    const Node& node = g->node(static_cast<NodeId>(k));
    for (TensorId t : node.inputs)
      if (t != kNoTensor) first[t] = std::min(first[t], k + 1), last[t] = std::max(last[t], k + 1);
    for (TensorId t : node.outputs) first[t] = std::min(first[t], k + 1), last[t] = std::max(last[t], k + 1);
  }
  for (TensorId t : g->inputs) first[t] = 0, last[t] = end;
  for (TensorId t : g->outputs) last[t] = end;
  std::size_t checked = 0;
  for (std::size_t a = 0; a < n; ++a) {
    if (plan->offset[a] == ArenaPlan::kNone) continue;
    const std::size_t a_end = plan->offset[a] + static_cast<std::size_t>(*g->tensor(static_cast<TensorId>(a)).num_bytes());
    EXPECT_LE(a_end, plan->arena_bytes);
    for (std::size_t b2 = a + 1; b2 < n; ++b2) {
      if (plan->offset[b2] == ArenaPlan::kNone || first[a] > last[b2] || first[b2] > last[a]) continue;
      const std::size_t b_end = plan->offset[b2] + static_cast<std::size_t>(*g->tensor(static_cast<TensorId>(b2)).num_bytes());
      EXPECT_TRUE(a_end <= plan->offset[b2] || b_end <= plan->offset[a]) << a << " and " << b2 << " overlap";
      ++checked;
    }
  }
  EXPECT_GT(checked, 100u);
  // Sharing is worth it: the arena is well below the sum of the activations.
  EXPECT_LT(plan->arena_bytes, plan->tensor_bytes / 2);
}

}  // namespace
}  // namespace latte
