// ONNX Runtime's NCHWc pass as ir/nchwc_layout models it: which residual adds (and relus after
// them) run inside the conv before them, on small graphs whose answer follows from the pass's
// rules; conditional fusion rules; and the one-kernel graph that makes ORT fuse a residual kind.

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "ir/fusion_rules.h"
#include "ir/graph_builder.h"
#include "ir/kernel_graph.h"
#include "ir/kernel_params.h"
#include "ir/nchwc_layout.h"

namespace latte {
namespace {

// Per layer, the bytes of the reorders NchwcReorders lists around it.
std::vector<std::int64_t> ReorderBytes(const Graph& graph, const NchwcPlan& plan, const std::vector<std::vector<NodeId>>& layers) {
  std::vector<std::int64_t> bytes;
  for (const std::vector<NchwcReorder>& layer : NchwcReorders(graph, plan, layers)) {
    bytes.push_back(0);
    for (const NchwcReorder& r : layer) bytes.back() += r.bytes;
  }
  return bytes;
}

// Builds NCHW graphs as an ONNX file gives them.
class Nchw {
 public:
  TensorId Input(std::int64_t c, std::int64_t hw = 8) { return b_.Input(fmt::format("x{}", n_++), {1, c, hw, hw}); }
  TensorId Conv(TensorId x, std::int64_t out_c, const std::string& activation = "none", std::int64_t k = 1,
                std::int64_t groups = 1) {
    const std::int64_t in_c = b_.graph().tensor(x).shape[1];
    TensorId w = b_.Constant(fmt::format("w{}", n_), {out_c, in_c / groups, k, k});
    Attributes a;
    if (groups > 1) a.Set("groups", groups);
    a.Set("layout", std::string("NCHW"));
    a.Set("filter_layout", std::string("OIHW"));
    a.Set("padding", std::string("same"));
    a.Set("strides", std::vector<std::int64_t>{1, 1});
    a.Set("activation", activation);
    return Op(OpKind::kConv2D, {x, w}, a);
  }
  TensorId Op(OpKind kind, std::vector<TensorId> inputs, Attributes a = {}) {
    const std::string name = fmt::format("{}{}", OpName(kind), n_++);
    TensorId out = b_.Op1(kind, name, std::move(inputs), std::move(a));
    const Tensor& first = b_.graph().tensor(b_.graph().node(Last()).inputs[0]);
    Tensor& t = b_.graph().mutable_tensor(out);
    t.shape = first.shape;  // every op here keeps its first input's shape but the convs (set below)
    t.shape_known = true;
    if (kind == OpKind::kConv2D) t.shape[1] = b_.graph().tensor(b_.graph().node(Last()).inputs[1]).shape[0];
    return out;
  }
  TensorId Pad(TensorId x) {  // zero channels appended: not an op the NCHWc pass converts
    Attributes a;
    a.Set("pads", std::vector<std::int64_t>{0, 0, 0, 0, 0, 0, 0, 0});
    return Op(OpKind::kPad, {x}, a);
  }
  NodeId Last() { return static_cast<NodeId>(b_.graph().num_nodes() - 1); }
  void SetShape(TensorId t, Shape shape) { b_.graph().mutable_tensor(t).shape = std::move(shape); }
  Graph Finish(TensorId out) {
    auto g = b_.Finish({out});
    EXPECT_TRUE(g.ok()) << g.status().message();
    return std::move(g).value();
  }

 private:
  GraphBuilder b_;
  int n_ = 0;
};

Attributes Act(const std::string& activation) {
  Attributes a;
  a.Set("activation", activation);
  return a;
}

// y = conv_a(x) with `activation`, b = conv_b(y) with none: the operands of a residual add.
struct Operands {
  Nchw g;
  TensorId y = -1, b = -1;
  NodeId conv_b = -1;
};
Operands ResidualOperands(std::int64_t c, const std::string& activation = "relu",
                          const std::string& conv_b_activation = "none") {
  Operands o;
  o.y = o.g.Conv(o.g.Input(c), c, activation, 3);
  o.b = o.g.Conv(o.y, c, conv_b_activation);
  o.conv_b = o.g.Last();
  return o;
}

// y = conv_a(x) with a relu; z = relu(conv_b(y) + y): the residual block of a ResNet.
struct ResidualBlock {
  Graph graph;
  NodeId conv_b = -1, add = -1, relu = -1;
};
ResidualBlock Residual(std::int64_t c, const std::string& conv_b_activation = "none") {
  Operands o = ResidualOperands(c, "relu", conv_b_activation);
  Nchw& g = o.g;
  ResidualBlock block;
  block.conv_b = o.conv_b;
  TensorId sum = g.Op(OpKind::kAdd, {o.b, o.y});
  block.add = g.Last();
  TensorId out = g.Op(OpKind::kRelu, {sum});
  block.relu = g.Last();
  block.graph = g.Finish(out);
  return block;
}

TEST(NchwcLayout, AResidualAddAndTheReluAfterItRunInsideTheConvBeforeThem) {
  ResidualBlock block = Residual(32);
  auto plan = PlanNchwc(block.graph, 16);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->fused_into[block.add], block.conv_b);
  EXPECT_EQ(plan->fused_into[block.relu], block.conv_b);
  EXPECT_EQ(plan->fused_adds, 1u);
  EXPECT_TRUE(NchwcRunsAsOne(*plan, {block.conv_b, block.add, block.relu}));
  EXPECT_TRUE(NchwcRunsAsOne(*plan, {block.conv_b, block.add}));
  EXPECT_TRUE(plan->blocked[block.graph.node(block.relu).outputs[0]]);
}

// ONNX Runtime 1.29 pads a conv's channels to a whole block (its profile shows a 24-channel conv
// reading 32 blocked channels), so any plain or depthwise conv converts; a grouped conv needs whole
// blocks per group.
TEST(NchwcLayout, UnalignedChannelsArePaddedToAWholeBlockButGroupsNeedWholeBlocks) {
  EXPECT_EQ(PlanNchwc(Residual(8).graph, 16)->fused_adds, 1u);   // under 16: the conv reads NCHW directly
  EXPECT_EQ(PlanNchwc(Residual(24).graph, 16)->fused_adds, 1u);  // 24: padded to 32
  EXPECT_EQ(PlanNchwc(Residual(24).graph, 8)->fused_adds, 1u);   // a multiple of 8 (AVX2's block)
  for (auto [groups, blocked] : {std::pair{2, false}, std::pair{48, true}}) {  // 24 per group; depthwise
    Nchw g;
    const TensorId x = g.Input(48);
    const TensorId y = g.Conv(x, 48, "none", 3, groups);
    const Graph graph = g.Finish(y);
    auto plan = PlanNchwc(graph, 16);
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    EXPECT_EQ(plan->blocked[y], blocked) << groups << " groups";
    EXPECT_EQ(plan->runs_blocked[0], blocked) << groups << " groups";
  }
}

// What ORT reorders between layouts around each layer, in bytes at whole blocks of 16 channels
// (8×8 maps of float: 256 bytes a channel).
TEST(NchwcReorders, IntoAConvFromThePlainLayoutAndOutToAPlainReaderOrTheGraphOutput) {
  constexpr std::int64_t kChannel = 8 * 8 * 4;
  Nchw g;
  const TensorId x = g.Input(32);
  const TensorId a = g.Conv(x, 32);  // reads the graph input: a ReorderInput
  const NodeId conv_a = g.Last();
  const TensorId padded = g.Pad(a);   // a pad runs in the plain layout: a ReorderOutput of a
  const NodeId pad = g.Last();
  const TensorId b = g.Conv(padded, 24);  // from the plain layout again; 24 channels held as 32
  const NodeId conv_b = g.Last();
  const Graph graph = g.Finish(b);  // leaves the graph: a ReorderOutput
  auto plan = PlanNchwc(graph, 16);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(ReorderBytes(graph, *plan, {{conv_a}, {pad}, {conv_b}}),
            (std::vector<std::int64_t>{2 * 32 * kChannel, 0, 32 * kChannel + 32 * kChannel}));
  // One layer of all three: the same bytes, all its own.
  EXPECT_EQ(ReorderBytes(graph, *plan, {{conv_a, pad, conv_b}}), (std::vector<std::int64_t>{4 * 32 * kChannel}));
}

TEST(NchwcReorders, NoneInsideABlockedResidualBlockAndNoneIntoAConvReadingFewChannelsDirectly) {
  constexpr std::int64_t kChannel = 8 * 8 * 4;
  ResidualBlock block = Residual(32);
  auto plan = PlanNchwc(block.graph, 16);
  ASSERT_TRUE(plan.ok());
  // conv_a reads the graph input (a ReorderInput); conv_b, the add and the relu stay blocked until
  // the relu's output leaves the graph.
  EXPECT_EQ(ReorderBytes(block.graph, *plan, {{0}, {block.conv_b, block.add, block.relu}}),
            (std::vector<std::int64_t>{32 * kChannel, 32 * kChannel}));

  Nchw g;  // 8 input channels: read as NCHW; 8 output channels held as 16
  const TensorId y = g.Conv(g.Input(8), 8);
  const Graph few = g.Finish(y);
  auto few_plan = PlanNchwc(few, 16);
  ASSERT_TRUE(few_plan.ok());
  EXPECT_EQ(ReorderBytes(few, *few_plan, {{0}}), (std::vector<std::int64_t>{16 * kChannel}));
  EXPECT_TRUE(few_plan->runs_blocked[0]);
  EXPECT_TRUE(few_plan->reads_plain[0]);
  EXPECT_FALSE(plan->reads_plain[block.conv_b]);  // 32 input channels: read blocked
  EXPECT_FALSE(ConvReadsPlain(8, 8, 16));  // a depthwise conv of 8 channels reads them blocked
  EXPECT_TRUE(ConvReadsPlain(15, 1, 16));
  EXPECT_FALSE(ConvReadsPlain(16, 1, 16));
}

// An add carrying a relu6 runs blocked, and the exporter's clip after it in the plain layout: its
// output is reordered once, in the add's layer; its blocked operands are not.
TEST(NchwcReorders, AnAddCarryingAClampIsReorderedAfterItOnce) {
  constexpr std::int64_t kChannel = 8 * 8 * 4;
  Operands o = ResidualOperands(32, "relu", "relu");  // both operands end in an activation: no fused add
  TensorId sum = o.g.Op(OpKind::kAdd, {o.b, o.y}, Act("relu6"));
  const NodeId add = o.g.Last();
  const TensorId next = o.g.Conv(sum, 32, "relu");
  const Graph graph = o.g.Finish(next);
  auto plan = PlanNchwc(graph, 16);
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->runs_blocked[add]);
  EXPECT_FALSE(plan->blocked[sum]);
  EXPECT_EQ(ReorderBytes(graph, *plan, {{0}, {o.conv_b}, {add}, {add + 1}}),
            (std::vector<std::int64_t>{32 * kChannel, 0, 32 * kChannel, 2 * 32 * kChannel}));
}

// Seen in ORT 1.29's profiles of MediaPipe models (bench/nchwc_walk_check.sh): a hard-swish after
// a blocked conv runs blocked (as a HardSigmoid and a Mul of the same shape), with no reorder around it.
TEST(NchwcReorders, AHardSwishBetweenBlockedConvsRunsBlocked) {
  constexpr std::int64_t kChannel = 8 * 8 * 4;
  Nchw g;
  const TensorId a = g.Conv(g.Input(32), 32);
  const TensorId swished = g.Op(OpKind::kHardSwish, {a});
  const NodeId swish = g.Last();
  const TensorId b = g.Conv(swished, 32);
  const Graph graph = g.Finish(b);
  auto plan = PlanNchwc(graph, 16);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_TRUE(plan->runs_blocked[swish]);
  // In from the graph input, out to the graph output: nothing around the hard-swish.
  EXPECT_EQ(ReorderBytes(graph, *plan, {{0}, {swish}, {swish + 1}}),
            (std::vector<std::int64_t>{32 * kChannel, 0, 32 * kChannel}));
  // A hard sigmoid alone keeps the blocked layout too (not a clamp).
  Nchw h;
  const TensorId c = h.Conv(h.Input(32), 32, "relu");
  const TensorId sig = h.Op(OpKind::kHardSigmoid, {c});
  const Graph graph2 = h.Finish(h.Conv(sig, 32));
  auto plan2 = PlanNchwc(graph2, 16);
  ASSERT_TRUE(plan2.ok());
  EXPECT_TRUE(plan2->blocked[sig]);
}

// A pointwise conv from 8 channels reads them in the plain layout (pose_landmark_lite's 8-channel
// blocks at 256×256): the blocked depthwise conv before it is reordered out for it, as a plain
// node's input would be; the conv itself writes blocked, and its output leaves the graph.
TEST(NchwcReorders, AConvReadingFewChannelsDirectlyTakesThemOutOfTheBlockedLayout) {
  constexpr std::int64_t kChannel = 8 * 8 * 4;
  Nchw g;
  const TensorId x = g.Input(8);
  const TensorId d = g.Conv(x, 8, "relu6", 3, 8);  // depthwise on 8 channels, held as 16
  const NodeId depthwise = g.Last();
  const TensorId y = g.Conv(d, 8);
  const NodeId pointwise = g.Last();
  const Graph graph = g.Finish(y);
  auto plan = PlanNchwc(graph, 16);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_TRUE(plan->runs_blocked[depthwise]);
  EXPECT_TRUE(plan->runs_blocked[pointwise]);
  const auto reorders = NchwcReorders(graph, *plan, {{depthwise}, {pointwise}});
  ASSERT_EQ(reorders.size(), 2u);
  // The depthwise conv: in from the graph input (a depthwise conv does not read NCHW directly), out for the pointwise.
  ASSERT_EQ(reorders[0].size(), 2u);
  EXPECT_EQ(reorders[0][0], (NchwcReorder{true, 8, 8, 8, 16 * kChannel}));
  EXPECT_EQ(reorders[0][1], (NchwcReorder{false, 8, 8, 8, 16 * kChannel}));
  // The pointwise conv: no reorder in; its output out to the graph.
  ASSERT_EQ(reorders[1].size(), 1u);
  EXPECT_EQ(reorders[1][0], (NchwcReorder{false, 8, 8, 8, 16 * kChannel}));
}

// A resize whose file gives sizes (TFLite) rather than scales runs blocked when the sizes are whole
// multiples: nearest with asymmetric coordinates, and (ORT 1.29's profiles of MediaPipe's 2×
// upsamplings) bilinear with half-pixel ones; bilinear with aligned corners is left plain.
TEST(NchwcLayout, AWholeUpsamplingRunsBlockedWhetherItsFileGivesSizesOrScales) {
  struct Case {
    std::string mode, coordinates;
    std::int64_t out;
    bool blocked;
  };
  for (const Case& c : {Case{"bilinear", "half_pixel", 16, true}, Case{"nearest", "asymmetric", 24, true},
                        Case{"bilinear", "align_corners", 16, false}, Case{"nearest", "asymmetric", 12, false},
                        Case{"bilinear", "half_pixel", 8, true}}) {
    Nchw g;
    const TensorId a = g.Conv(g.Input(32), 32);
    Attributes attrs;
    attrs.Set("mode", c.mode);
    attrs.Set("coordinate_transformation", c.coordinates);
    attrs.Set("layout", std::string("NCHW"));
    attrs.Set("sizes", std::vector<std::int64_t>{c.out, c.out});
    const TensorId r = g.Op(OpKind::kResize, {a}, attrs);
    g.SetShape(r, {1, 32, c.out, c.out});
    const Graph graph = g.Finish(r);
    auto plan = PlanNchwc(graph, 16);
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    EXPECT_EQ(plan->blocked[r], c.blocked) << c.mode << " " << c.coordinates << " to " << c.out;
  }
}

// A reorder aliases when its channel planes are whole 4 KiB pages (1,024 floats: 32×32, 64×64,
// 128×128, 256×144 are; 16×16, 120×120, 136×136, 28×28 are not) and it moves more than 8 channels
// (an L1 set's ways): 16 and 64 channels do, 8 do not.
TEST(NchwcReorders, AReorderAliasesOnWholePagePlanesOfMoreThanEightChannels) {
  for (auto [h, w, paged] : {std::tuple{32, 32, true}, std::tuple{64, 64, true}, std::tuple{128, 128, true},
                             std::tuple{256, 144, true}, std::tuple{16, 16, false}, std::tuple{120, 120, false},
                             std::tuple{136, 136, false}, std::tuple{28, 28, false}, std::tuple{0, 0, false}}) {
    EXPECT_EQ(NchwcReorderAliases(NchwcReorder{false, 16, h, w, 0}), paged) << h << "x" << w;
    EXPECT_EQ(NchwcReorderAliases(NchwcReorder{true, 64, h, w, 0}), paged) << h << "x" << w;
    EXPECT_FALSE(NchwcReorderAliases(NchwcReorder{false, 8, h, w, 0})) << h << "x" << w;
  }
}

TEST(NchwcLayout, AConvWithItsOwnActivationTakesNoAdd) {
  ResidualBlock block = Residual(32, "relu");
  auto plan = PlanNchwc(block.graph, 16);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->fused_into[block.add], -1);
  EXPECT_FALSE(NchwcRunsAsOne(*plan, {block.conv_b, block.add}));
  EXPECT_TRUE(plan->blocked[block.graph.node(block.add).outputs[0]]) << "both operands blocked: the add stays blocked";
}

TEST(NchwcLayout, AnOperandFromAPadIsNotBlockedSoTheAddRunsApart) {
  Operands o = ResidualOperands(32, "relu");
  Graph graph = o.g.Finish(o.g.Op(OpKind::kAdd, {o.b, o.g.Pad(o.y)}));
  const NodeId add = static_cast<NodeId>(graph.num_nodes() - 1);
  auto plan = PlanNchwc(graph, 16);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->fused_into[add], -1);
  EXPECT_FALSE(plan->blocked[graph.node(add).outputs[0]]);
  EXPECT_TRUE(plan->blocked[graph.node(o.conv_b).outputs[0]]);
}

TEST(NchwcLayout, AConvWhoseOutputIsReadTwiceTakesNoAdd) {
  Operands o = ResidualOperands(32, "relu");
  const TensorId sum = o.g.Op(OpKind::kAdd, {o.b, o.y});
  const NodeId add = o.g.Last();
  Graph graph = o.g.Finish(o.g.Op(OpKind::kMul, {sum, o.b}));  // conv_b's output read again
  auto plan = PlanNchwc(graph, 16);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->fused_into[add], -1);
  EXPECT_FALSE(NchwcRunsAsOne(*plan, {o.conv_b, add}));
}

TEST(NchwcLayout, AClampAfterTheAddRunsApartWhileTheAddStaysInside) {
  Operands o = ResidualOperands(32, "relu6");  // level-2 fusion: a clamp inside the conv keeps it blocked
  const TensorId sum = o.g.Op(OpKind::kAdd, {o.b, o.y});
  const NodeId add = o.g.Last();
  const TensorId out = o.g.Op(OpKind::kRelu6, {sum});
  const NodeId clamp = o.g.Last();
  Graph graph = o.g.Finish(out);
  auto plan = PlanNchwc(graph, 16);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->fused_into[add], o.conv_b);
  EXPECT_EQ(plan->fused_into[clamp], -1);
  EXPECT_TRUE(NchwcRunsAsOne(*plan, {o.conv_b, add}));
  EXPECT_FALSE(NchwcRunsAsOne(*plan, {o.conv_b, add, clamp}));
  EXPECT_FALSE(plan->blocked[graph.node(clamp).outputs[0]]);
}

TEST(NchwcLayout, AnAddsOwnReluSixAttributeLeavesItInsideTheConvAndUnblocksItsOutput) {
  Operands o = ResidualOperands(16, "relu");
  Graph graph = o.g.Finish(o.g.Op(OpKind::kAdd, {o.b, o.y}, Act("relu6")));
  const NodeId add = static_cast<NodeId>(graph.num_nodes() - 1);
  auto plan = PlanNchwc(graph, 16);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->fused_into[add], o.conv_b);
  EXPECT_FALSE(plan->blocked[graph.node(add).outputs[0]]);
}

TEST(NchwcLayout, OnlyABlockOfEightOrSixteenIsAccepted) {
  EXPECT_EQ(PlanNchwc(Residual(16).graph, 4).status().code(), StatusCode::kInvalidInput);
}

TEST(NchwcFusionRules, ARuleMayHoldOnlyWhereTheNchwcPassFuses) {
  auto rules = FusionRules::FromKinds({"conv2d+relu", "conv2d+add@nchwc16", "conv2d+add+relu@nchwc16"});
  ASSERT_TRUE(rules.ok()) << rules.status().message();
  EXPECT_TRUE(rules->Allows("conv2d+relu"));
  EXPECT_FALSE(rules->Allows("conv2d+add"));
  EXPECT_TRUE(rules->AllowsWhereNchwcFuses("conv2d+add"));
  EXPECT_EQ(rules->NchwcBlock(), 16);
  EXPECT_EQ(rules->ToJson(), nlohmann::json({"conv2d+relu", "conv2d+add@nchwc16", "conv2d+add+relu@nchwc16"}));
  auto again = FusionRules::FromJson(rules->ToJson());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *rules);
  EXPECT_EQ(FusionRuleKind("conv2d+add@nchwc16"), "conv2d+add");
  EXPECT_EQ(FusionRuleKind("conv2d+add"), "conv2d+add");

  auto unknown = FusionRules::FromKinds({"conv2d+add@always"});
  EXPECT_EQ(unknown.status().code(), StatusCode::kInvalidInput);
  EXPECT_NE(unknown.status().message().find("unknown condition 'always'"), std::string::npos) << unknown.status().message();
  EXPECT_FALSE(FusionRules::FromKinds({"conv2d+add@nchwc8", "conv2d+add+relu@nchwc16"}).ok());
}

TEST(NchwcFusionRules, GroupingFusesTheResidualWhereThePassDoesAndNowhereElse) {
  auto rules = FusionRules::FromKinds({"conv2d+relu", "conv2d+add+relu@nchwc16", "conv2d+add@nchwc16"});
  ASSERT_TRUE(rules.ok());
  auto kinds = [&](const Graph& graph) {
    std::vector<std::string> out;
    auto grouping = GroupIntoKernels(graph, *rules);
    EXPECT_TRUE(grouping.ok()) << grouping.status().message();
    for (const KernelGroup& group : grouping->kernels) out.push_back(group.kernel.Kind());
    return out;
  };
  EXPECT_EQ(kinds(Residual(32).graph), (std::vector<std::string>{"conv2d+relu", "conv2d+add+relu"}));
  EXPECT_EQ(kinds(Residual(24).graph), (std::vector<std::string>{"conv2d+relu", "conv2d+add+relu"}))
      << "24 channels: ORT pads them to 32 and fuses the add as for 32";
  // A pad between the conv and the add: the operand is not blocked, so the add runs apart.
  Operands o = ResidualOperands(32);
  const TensorId padded = o.g.Pad(o.b);
  const TensorId sum = o.g.Op(OpKind::kAdd, {padded, o.y});
  EXPECT_EQ(kinds(o.g.Finish(sum)), (std::vector<std::string>{"conv2d+relu", "conv2d", "pad", "add"}));
}

Kernel ResidualKernel(std::int64_t channels) {
  Kernel kernel;
  kernel.op = OpKind::kConv2D;
  ConvKernelParams p;
  p.ih = p.iw = 14;
  p.ic = p.oc = channels;
  p.kh = p.kw = 3;
  p.dh = p.dw = 1;
  p.pt = p.pl = p.pb = p.pr = 1;
  p.bias = 1;
  WriteParams(p, kernel);
  kernel.fused = {OpKind::kAdd, OpKind::kRelu};
  return kernel;
}

TEST(NchwcResidualGraph, FeedsTheAddABlockedOperandFromAHelperNodeTheKernelDoesNotOwn) {
  const Kernel kernel = ResidualKernel(32);
  auto built = BuildBlockedResidualGraph(kernel, 16);
  ASSERT_TRUE(built.ok()) << built.status().message();
  const Graph& graph = built->graph;
  ASSERT_TRUE(graph.Validate().ok());
  ASSERT_EQ(built->helpers.size(), 3u);  // the residual's and the input's producers, the result's reader
  std::vector<NodeId> kernel_nodes;
  for (std::size_t i = 0; i < graph.num_nodes(); ++i) {
    const auto id = static_cast<NodeId>(i);
    if (std::find(built->helpers.begin(), built->helpers.end(), id) == built->helpers.end()) kernel_nodes.push_back(id);
    else EXPECT_EQ(graph.node(id).kind, OpKind::kConv2D);
  }
  auto again = KernelOfNodes(graph, kernel_nodes);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->Key(), kernel.Key());
  // The pass fuses the add (and the relu after it) into the kernel's conv, not into a helper.
  auto plan = PlanNchwc(graph, 16);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->fused_adds, 1u);
  EXPECT_TRUE(NchwcRunsAsOne(*plan, kernel_nodes));

  EXPECT_TRUE(BuildBlockedResidualGraph(ResidualKernel(24), 16).ok()) << "24 channels: padded to a whole block";
  Kernel grouped = ResidualKernel(48);
  ConvKernelParams p = ReadParams<ConvKernelParams>(grouped);
  p.g = 2;  // 24 channels a group: not whole blocks
  WriteParams(p, grouped);
  EXPECT_EQ(BuildBlockedResidualGraph(grouped, 16).status().code(), StatusCode::kUnsupported);
}

}  // namespace
}  // namespace latte
