#include "ir/whole_window_pools.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/graph_builder.h"
#include "ir/op_params.h"

namespace latte {
namespace {

using Ints = std::vector<std::int64_t>;

Attributes PoolAttrs(Ints kernel, Ints strides, const std::string& padding, const std::string& layout = "NHWC") {
  Attributes a;
  a.Set("kernel", std::move(kernel));
  a.Set("strides", std::move(strides));
  a.Set("padding", padding);
  a.Set("layout", layout);
  return a;
}

TEST(WholeWindowAvgPoolsToGlobal, AnAveragePoolOverTheWholeMapIsAGlobalOne) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 7, 5, 16});
  TensorId whole = b.Op1(OpKind::kAvgPool2D, "squeeze", {x}, PoolAttrs({7, 5}, {7, 5}, "valid"));
  TensorId nchw = b.Op1(OpKind::kAvgPool2D, "nchw", {b.Input("y", {1, 8, 6, 6})}, PoolAttrs({6, 6}, {1, 1}, "valid", "NCHW"));
  TensorId windowed = b.Op1(OpKind::kAvgPool2D, "window", {x}, PoolAttrs({3, 3}, {2, 2}, "valid"));
  TensorId max = b.Op1(OpKind::kMaxPool2D, "max", {x}, PoolAttrs({7, 5}, {1, 1}, "valid"));
  Attributes padded = PoolAttrs({7, 5}, {1, 1}, "explicit");
  padded.Set("pads", Ints{1, 0, 0, 0});  // a window over the pad too: 2 rows out, not the mean
  TensorId pad = b.Op1(OpKind::kAvgPool2D, "padded", {x}, padded);
  auto g = b.Finish({whole, nchw, windowed, max, pad});
  ASSERT_TRUE(g.ok()) << g.status().message();
  Graph graph = *g;
  EXPECT_EQ(WholeWindowAvgPoolsToGlobal(graph), 2);
  ASSERT_EQ(graph.num_nodes(), 5u);
  const OpKind expected[] = {OpKind::kGlobalAvgPool, OpKind::kGlobalAvgPool, OpKind::kAvgPool2D, OpKind::kMaxPool2D,
                             OpKind::kAvgPool2D};
  for (NodeId i = 0; i < 5; ++i) EXPECT_EQ(graph.node(i).kind, expected[i]) << graph.node(i).name;
  for (NodeId i : {0, 1}) {
    const Node& global = graph.node(i);
    EXPECT_EQ(global.inputs, g->node(i).inputs);
    EXPECT_EQ(global.outputs, g->node(i).outputs);
    EXPECT_FALSE(global.attrs.GetInts("kernel").has_value());
    EXPECT_EQ(global.attrs.GetString("layout", ""), g->node(i).attrs.GetString("layout", ""));
    auto p = GetPoolParams(graph, global);
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_EQ(p->out_h, 1);
    EXPECT_EQ(p->out_w, 1);
  }
  EXPECT_EQ(graph.node(1).attrs.GetString("layout", ""), "NCHW");
  EXPECT_TRUE(graph.Validate().ok());
  EXPECT_EQ(WholeWindowAvgPoolsToGlobal(graph), 0);  // nothing left to turn
}

}  // namespace
}  // namespace latte
