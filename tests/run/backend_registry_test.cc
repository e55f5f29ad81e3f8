#include "run/backend_registry.h"

#include <gtest/gtest.h>

#include "ir/graph_builder.h"
#include "run/toy_backends.h"

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
  EXPECT_NE(tiny.status().message().find("activations need more than"), std::string::npos);
}

}  // namespace
}  // namespace latte
