#include "ir/graph.h"

#include <gtest/gtest.h>

#include "ir/graph_builder.h"

namespace latte {
namespace {

Tensor Activation(const std::string& name) {
  Tensor t;
  t.name = name;
  t.shape = {1, 4};
  t.shape_known = true;
  return t;
}

Node Relu(const std::string& name, TensorId in, TensorId out) {
  Node n;
  n.kind = OpKind::kRelu;
  n.name = name;
  n.inputs = {in};
  n.outputs = {out};
  return n;
}

TEST(Graph, SortKeepsValidOrderAndFixesReversedOne) {
  Graph g;
  TensorId a = g.AddTensor(Activation("a")), b = g.AddTensor(Activation("b")), c = g.AddTensor(Activation("c"));
  g.inputs = {a};
  g.outputs = {c};
  g.AddNode(Relu("second", b, c));
  g.AddNode(Relu("first", a, b));
  ASSERT_TRUE(g.Validate().ok());
  ASSERT_TRUE(g.SortTopologically().ok());
  EXPECT_EQ(g.node(0).name, "first");
  EXPECT_EQ(g.node(1).name, "second");
  ASSERT_TRUE(g.SortTopologically().ok());
  EXPECT_EQ(g.node(0).name, "first");
  EXPECT_EQ(g.Producer(c), 1);
  EXPECT_EQ(g.Producer(a), -1);
  EXPECT_EQ(g.Consumers(b), std::vector<NodeId>{1});
}

TEST(Graph, CycleIsReportedWithANode) {
  Graph g;
  TensorId a = g.AddTensor(Activation("a")), b = g.AddTensor(Activation("b"));
  g.AddNode(Relu("x", a, b));
  g.AddNode(Relu("y", b, a));
  g.outputs = {b};
  Status s = g.Validate();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidInput);
  EXPECT_NE(s.message().find("cycle"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("relu"), std::string::npos) << s.message();
  EXPECT_FALSE(g.SortTopologically().ok());
}

TEST(Graph, IndicesOutOfRangeAndDoubleWrites) {
  {
    Graph g;
    TensorId a = g.AddTensor(Activation("a"));
    g.AddNode(Relu("bad", a, 7));
    Status s = g.Validate();
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("out of range"), std::string::npos) << s.message();
  }
  {
    Graph g;
    TensorId a = g.AddTensor(Activation("a"));
    g.AddNode(Relu("bad", -5, a));
    EXPECT_FALSE(g.Validate().ok());
  }
  {
    Graph g;
    TensorId a = g.AddTensor(Activation("a")), b = g.AddTensor(Activation("b"));
    g.inputs = {a};
    g.AddNode(Relu("one", a, b));
    g.AddNode(Relu("two", a, b));
    Status s = g.Validate();
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("written by both"), std::string::npos) << s.message();
  }
  {
    Graph g;
    g.outputs = {3};
    EXPECT_FALSE(g.Validate().ok());
  }
}

TEST(Graph, ConstantDataMustMatchShape) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 4});
  TensorId w = b.Constant("w", {4, 4});
  b.graph().mutable_tensor(w).shape = {4, 5};  // 16 floats of data, shape says 20
  TensorId y = b.Op1(OpKind::kFullyConnected, "fc", {x, w});
  auto g = b.Finish({y});
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.status().message().find("bytes of data"), std::string::npos) << g.status().message();
}

TEST(Graph, RemoveUnusedDropsDeadNodesAndRenumbers) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 4});
  TensorId dead = b.Op1(OpKind::kSigmoid, "dead", {x});
  TensorId live = b.Op1(OpKind::kRelu, "live", {x});
  (void)dead;
  auto g = b.Finish({live});
  ASSERT_TRUE(g.ok());
  g->RemoveUnused();
  ASSERT_EQ(g->num_nodes(), 1u);
  EXPECT_EQ(g->node(0).name, "live");
  EXPECT_EQ(g->num_tensors(), 2u);
  EXPECT_TRUE(g->Validate().ok());
  EXPECT_EQ(g->tensor(g->outputs[0]).name, "live");
}

}  // namespace
}  // namespace latte
