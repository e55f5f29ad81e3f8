// A zero pad folded into the conv after it (run/graph_prep) computes what the pad and the conv
// compute apart: the same conv on XNNPACK with the pad folded (both on xnnpack) and not folded
// (the pad placed on oneDNN).

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "ir/graph_builder.h"
#include "run/executor.h"
#include "run/onednn/onednn_backend.h"
#include "run/xnnpack/xnnpack_backend.h"

namespace latte {
namespace {

using Ints = std::vector<std::int64_t>;

Graph PadConv(OpKind kind) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  auto random = [&](std::size_t n) {
    std::vector<float> v(n);
    for (float& f : v) f = dist(rng);
    return v;
  };
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 9, 8, 4});
  Attributes pad;
  pad.Set("pads", Ints{0, 1, 2, 0, 0, 3, 1, 0});  // top 1, left 2, bottom 3, right 1
  TensorId p = b.Op1(OpKind::kPad, "pad", {x}, pad);
  Attributes conv;
  conv.Set("layout", std::string("NHWC"));
  conv.Set("padding", std::string("same"));
  conv.Set("strides", Ints{2, 1});
  TensorId w, bias;
  if (kind == OpKind::kDepthwiseConv2D) {
    conv.Set("filter_layout", std::string("1HWO"));
    w = b.Constant("w", {1, 3, 3, 4}, random(36));
    bias = b.Constant("b", {4}, random(4));
  } else {
    conv.Set("filter_layout", std::string("OHWI"));
    w = b.Constant("w", {6, 3, 3, 4}, random(216));
    bias = b.Constant("b", {6}, random(6));
  }
  TensorId y = b.Op1(kind, "conv", {p, w, bias}, conv);
  y = b.Op1(OpKind::kRelu, "relu", {y});
  auto g = b.Finish({y});
  EXPECT_TRUE(g.ok()) << g.status().message();
  return std::move(g).value();
}

std::vector<float> RunOnce(const Graph& g, const Placement& placement, std::size_t* entries) {
  BackendRegistry registry;
  RegisterXnnpackBackend(registry);
  RegisterOnednnBackend(registry);
  auto executor = Executor::Create(g, placement, registry, RunOptions{});
  if (!executor.ok()) {
    ADD_FAILURE() << executor.status().message();
    return {};
  }
  *entries = (*executor)->entries().size();
  FillRandomInputs(g, (*executor)->buffers(), 7);
  Status status = (*executor)->Run();
  EXPECT_TRUE(status.ok()) << status.message();
  const float* y = (*executor)->buffers().as<float>(g.outputs[0]);
  return std::vector<float>(y, y + (*executor)->buffers().bytes(g.outputs[0]) / sizeof(float));
}

TEST(FoldPadsRun, FoldedAndUnfoldedGiveTheSameOutput) {
  for (OpKind kind : {OpKind::kConv2D, OpKind::kDepthwiseConv2D}) {
    SCOPED_TRACE(std::string(OpName(kind)));
    Graph g = PadConv(kind);
    Placement folded;
    folded.default_backend = "xnnpack";
    Placement apart = folded;
    apart.by_node[0] = "onednn";  // the pad
    std::size_t folded_entries = 0, apart_entries = 0;
    const std::vector<float> want = RunOnce(g, apart, &apart_entries);
    const std::vector<float> got = RunOnce(g, folded, &folded_entries);
    EXPECT_EQ(apart_entries, 2u);   // pad, conv+relu
    EXPECT_EQ(folded_entries, 1u);  // conv+relu reading x with the pad's padding added
    ASSERT_EQ(got.size(), want.size());
    ASSERT_FALSE(want.empty());
    for (std::size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got[i], want[i], 1e-5f) << "element " << i;
  }
}

}  // namespace
}  // namespace latte
