#include "search/encoding.h"

#include <gtest/gtest.h>

#include "ir/graph_builder.h"

namespace latte {
namespace {

// relu(x) -> add(relu, x) -> relu -> add with a bigger input: two kinds, three (kind, size) pairs.
Graph SmallGraph() {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 8, 8, 4});
  TensorId big = b.Input("big", {1, 16, 16, 4});
  TensorId r1 = b.Op1(OpKind::kRelu, "r1", {x});
  TensorId a1 = b.Op1(OpKind::kAdd, "a1", {r1, x});
  TensorId r2 = b.Op1(OpKind::kRelu, "r2", {a1});
  TensorId a2 = b.Op1(OpKind::kAdd, "a2", {big, big});
  auto g = b.Finish({r2, a2});
  EXPECT_TRUE(g.ok()) << g.status().message();
  return std::move(*g);
}

TEST(OpList, NameModeHasOneEntryPerKindIndexModePerKindAndInputSize) {
  Graph g = SmallGraph();
  OpList names = BuildOpList(g, OpListMode::kName);
  EXPECT_EQ(names.keys, (std::vector<std::string>{"relu", "add"}));
  EXPECT_EQ(names.key_of_node, (std::vector<std::size_t>{0, 1, 0, 1}));
  OpList index = BuildOpList(g, OpListMode::kIndex);
  EXPECT_EQ(index.keys, (std::vector<std::string>{"relu@1024", "add@1024", "add@4096"}));
  EXPECT_EQ(index.key_of_node, (std::vector<std::size_t>{0, 1, 0, 2}));
  EXPECT_TRUE(ParseOpListMode("index").ok());
  EXPECT_FALSE(ParseOpListMode("kind").ok());
}

TEST(AssignmentCodec, LeastSignificantDigitFirstAndRoundTrips) {
  auto codec = AssignmentCodec::Create(3, 4);
  ASSERT_TRUE(codec.ok());
  EXPECT_EQ(codec->Count(), 81u);
  // digits {2, 0, 1, 0}: 2 + 0*3 + 1*9 + 0*27 = 11.
  EXPECT_EQ(*codec->Encode(std::vector<int>{2, 0, 1, 0}), 11u);
  for (std::uint64_t id = 0; id < codec->Count(); ++id) {
    auto digits = codec->Decode(id);
    ASSERT_TRUE(digits.ok());
    EXPECT_EQ(*codec->Encode(*digits), id);
  }
  EXPECT_FALSE(codec->Decode(81).ok());
  EXPECT_FALSE(codec->Encode(std::vector<int>{0, 0, 3, 0}).ok());
  EXPECT_FALSE(codec->Encode(std::vector<int>{0, 0}).ok());
}

TEST(AssignmentCodec, SpacesBeyond63BitsHaveExactDecimalIdsButNoIntegerOnes) {
  auto fits = AssignmentCodec::Create(2, 63);
  ASSERT_TRUE(fits.ok());
  EXPECT_TRUE(fits->fits());
  auto big = AssignmentCodec::Create(2, 70);  // index mode on a real model
  ASSERT_TRUE(big.ok());
  EXPECT_FALSE(big->fits());
  EXPECT_EQ(big->CountText(), "2^70");
  std::vector<int> ones(70, 1);
  EXPECT_EQ(big->IdText(ones), "1180591620717411303423");  // 2^70 - 1
  auto no_integer = big->Encode(ones);
  ASSERT_FALSE(no_integer.ok());
  EXPECT_NE(no_integer.status().message().find("2^70"), std::string::npos) << no_integer.status().message();
  std::vector<int> low(70, 0);
  low[0] = 1, low[3] = 1;  // least significant first: 1 + 8
  EXPECT_EQ(big->IdText(low), "9");
  EXPECT_FALSE(AssignmentCodec::Create(3, 40)->fits());  // 3^40 > 2^63
  // Where it fits, the text is the integer.
  auto small = AssignmentCodec::Create(3, 4);
  for (std::uint64_t id : {0ull, 5ull, 80ull}) EXPECT_EQ(small->IdText(*small->Decode(id)), std::to_string(id));
  EXPECT_FALSE(AssignmentCodec::Create(0, 4).ok());
  EXPECT_FALSE(AssignmentCodec::Create(2, 0).ok());
}

TEST(Assignment, TextAndPlacementFollowTheOpList) {
  Graph g = SmallGraph();
  OpList ops = BuildOpList(g, OpListMode::kName);
  const std::vector<std::string> backends = {"xnnpack", "onednn"};
  const std::vector<int> digits = {1, 0};  // relu on onednn, add on xnnpack
  EXPECT_EQ(AssignmentText(ops, digits, backends), "relu:onednn add:xnnpack");
  Placement placement = PlacementFor(g, ops, digits, backends);
  for (NodeId id = 0; id < static_cast<NodeId>(g.num_nodes()); ++id) {
    EXPECT_EQ(placement.BackendFor(g, id), g.node(id).kind == OpKind::kRelu ? "onednn" : "xnnpack") << id;
  }
}

}  // namespace
}  // namespace latte
