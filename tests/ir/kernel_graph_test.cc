#include "ir/kernel_graph.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "ir/graph_builder.h"
#include "ir/op_params.h"

namespace latte {
namespace {

Kernel MakeKernel(OpKind op, std::map<std::string, std::int64_t> params, std::vector<OpKind> fused = {}) {
  Kernel k;
  k.op = op;
  k.params = std::move(params);
  k.fused = std::move(fused);
  return k;
}

std::vector<NodeId> AllNodes(const Graph& g) {
  std::vector<NodeId> all(g.num_nodes());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<NodeId>(i);
  return all;
}

// BuildKernelGraph then KernelOfNodes must give back the kernel, and the graph must be valid.
void ExpectRoundTrip(const Kernel& k) {
  SCOPED_TRACE(k.Key());
  Expected<Graph> g = BuildKernelGraph(k, 7);
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_TRUE(g->Validate().ok());
  for (const Tensor& t : g->tensors()) {
    EXPECT_TRUE(t.fully_known()) << t.name;
    EXPECT_EQ(t.dtype == DataType::kFloat32 || t.dtype == DataType::kInt64 || t.dtype == DataType::kBool, true)
        << t.name;
  }
  for (const Node& n : g->nodes()) {
    const std::string layout = n.attrs.GetString("layout", "NHWC");
    EXPECT_EQ(layout, "NHWC") << n.name;
  }
  Expected<Kernel> back = KernelOfNodes(*g, AllNodes(*g));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->Key(), k.Key());
  EXPECT_EQ(*back, k);
}

std::map<std::string, std::int64_t> ConvParamsMap(std::int64_t ic, std::int64_t oc, std::int64_t g) {
  return {{"n", 1},  {"ih", 8}, {"iw", 9},  {"ic", ic}, {"oc", oc}, {"kh", 3}, {"kw", 2}, {"sh", 2}, {"sw", 1},
          {"dh", 1}, {"dw", 2}, {"g", g},   {"pt", 1},  {"pl", 0},   {"pb", 1}, {"pr", 1}, {"bias", 1}};
}

TEST(KernelGraphTest, ConvFamiliesRoundTrip) {
  ExpectRoundTrip(MakeKernel(OpKind::kConv2D, ConvParamsMap(4, 6, 2)));
  ExpectRoundTrip(MakeKernel(OpKind::kConv2D, ConvParamsMap(4, 6, 1), {OpKind::kRelu}));
  auto no_bias = ConvParamsMap(3, 5, 1);
  no_bias["bias"] = 0;
  ExpectRoundTrip(MakeKernel(OpKind::kConv2D, no_bias, {OpKind::kRelu6}));
  ExpectRoundTrip(MakeKernel(OpKind::kConv2D, ConvParamsMap(4, 6, 1), {OpKind::kAdd}));
  ExpectRoundTrip(MakeKernel(OpKind::kConv2D, ConvParamsMap(4, 6, 1), {OpKind::kAdd, OpKind::kRelu}));
  ExpectRoundTrip(MakeKernel(OpKind::kConv2D, ConvParamsMap(4, 6, 1), {OpKind::kRelu, OpKind::kAdd}));
  ExpectRoundTrip(MakeKernel(OpKind::kConv2D, ConvParamsMap(4, 6, 1), {OpKind::kHardSwish}));
  ExpectRoundTrip(MakeKernel(OpKind::kConv2D, ConvParamsMap(4, 6, 1), {OpKind::kClip}));
  ExpectRoundTrip(MakeKernel(OpKind::kConv2D, ConvParamsMap(4, 6, 1), {OpKind::kAdd, OpKind::kClip}));
  ExpectRoundTrip(MakeKernel(OpKind::kDepthwiseConv2D, ConvParamsMap(4, 8, 4), {OpKind::kRelu6}));
  ExpectRoundTrip(MakeKernel(OpKind::kDepthwiseConv2D, ConvParamsMap(4, 4, 4)));
  ExpectRoundTrip(MakeKernel(OpKind::kTransposeConv2D,
                             {{"n", 1}, {"ih", 4}, {"iw", 5}, {"ic", 3}, {"oc", 2}, {"kh", 3}, {"kw", 3}, {"sh", 2},
                              {"sw", 2}, {"dh", 1}, {"dw", 1}, {"g", 1}, {"pt", 1}, {"pl", 1}, {"pb", 1}, {"pr", 1},
                              {"bias", 1}, {"oh", 8}, {"ow", 10}},
                             {OpKind::kRelu}));
  ExpectRoundTrip(MakeKernel(OpKind::kTransposeConv2D,
                             {{"n", 2}, {"ih", 4}, {"iw", 4}, {"ic", 4}, {"oc", 2}, {"kh", 2}, {"kw", 2}, {"sh", 2},
                              {"sw", 2}, {"dh", 1}, {"dw", 1}, {"g", 2}, {"pt", 0}, {"pl", 0}, {"pb", 0}, {"pr", 0},
                              {"bias", 0}, {"oh", 8}, {"ow", 8}}));
}

TEST(KernelGraphTest, DenseAndPoolFamiliesRoundTrip) {
  ExpectRoundTrip(MakeKernel(OpKind::kFullyConnected, {{"m", 3}, {"k", 10}, {"n", 5}, {"bias", 1}}, {OpKind::kRelu}));
  ExpectRoundTrip(MakeKernel(OpKind::kFullyConnected, {{"m", 1}, {"k", 7}, {"n", 2}, {"bias", 0}}));
  ExpectRoundTrip(MakeKernel(OpKind::kMatMul, {{"b", 2}, {"m", 3}, {"k", 4}, {"n", 5}}));
  const std::map<std::string, std::int64_t> pool = {{"n", 1}, {"ih", 9}, {"iw", 8}, {"c", 3},  {"kh", 3}, {"kw", 2},
                                                    {"sh", 2}, {"sw", 2}, {"pt", 1}, {"pl", 0}, {"pb", 1}, {"pr", 0}};
  ExpectRoundTrip(MakeKernel(OpKind::kMaxPool2D, pool));
  ExpectRoundTrip(MakeKernel(OpKind::kAvgPool2D, pool, {OpKind::kRelu}));
  ExpectRoundTrip(MakeKernel(OpKind::kGlobalAvgPool, {{"n", 2}, {"h", 7}, {"w", 5}, {"c", 16}}));
  ExpectRoundTrip(MakeKernel(OpKind::kSquare, {{"n", 1}, {"h", 7}, {"w", 5}, {"c", 16}}));
  ExpectRoundTrip(MakeKernel(OpKind::kGlobalMaxPool, {{"n", 1}, {"h", 3}, {"w", 3}, {"c", 8}}));
}

TEST(KernelGraphTest, ElementwiseFamiliesRoundTrip) {
  const std::map<std::string, std::int64_t> nhwc = {{"n", 1}, {"h", 5}, {"w", 6}, {"c", 7}};
  for (OpKind kind : AllOpKinds()) {
    // One-tensor kinds; gelu (params of its own), logical_not (bool) and where (three shapes) below.
    if ((OpCategoryOf(kind) == OpCategory::kActivation || OpCategoryOf(kind) == OpCategory::kElementwise) &&
        !IsBinaryElementwise(kind) && kind != OpKind::kGelu && kind != OpKind::kLogicalNot && kind != OpKind::kWhere) {
      ExpectRoundTrip(MakeKernel(kind, nhwc));
    }
  }
  ExpectRoundTrip(MakeKernel(OpKind::kBatchNorm, nhwc));  // inference: a scale and shift per channel
  const std::map<std::string, std::int64_t> ab = {{"a0", 1}, {"a1", 4}, {"a2", 4}, {"a3", 8},
                                                  {"b0", 1}, {"b1", 1}, {"b2", 1}, {"b3", 8}};
  for (OpKind kind : {OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kDiv, OpKind::kPow, OpKind::kMaximum,
                      OpKind::kMinimum, OpKind::kSquaredDifference}) {
    ExpectRoundTrip(MakeKernel(kind, ab));
  }
  for (OpKind kind : {OpKind::kEqual, OpKind::kNotEqual, OpKind::kLess, OpKind::kLessEqual, OpKind::kGreater,
                      OpKind::kGreaterEqual})
    ExpectRoundTrip(MakeKernel(kind, ab));  // float32 operands, a bool output
  for (OpKind kind : {OpKind::kLogicalAnd, OpKind::kLogicalOr}) {
    Kernel logic = MakeKernel(kind, ab);
    logic.dtype = DataType::kBool;
    ExpectRoundTrip(logic);
    logic.dtype = DataType::kFloat32;
    EXPECT_EQ(BuildKernelGraph(logic).status().code(), StatusCode::kUnsupported) << "logic kernels are bool";
  }
  Kernel logical_not = MakeKernel(OpKind::kLogicalNot, nhwc);
  logical_not.dtype = DataType::kBool;
  ExpectRoundTrip(logical_not);
  for (std::int64_t tanh : {0, 1}) {
    auto p = nhwc;
    p["tanh"] = tanh;
    ExpectRoundTrip(MakeKernel(OpKind::kGelu, p));
  }
  // A cast: its input's type is the kernel's dtype, its output's the params' `to` (int64 to
  // float32, as an attention mask is cast, and back).
  for (auto [from, to] : {std::pair{DataType::kInt64, DataType::kFloat32}, std::pair{DataType::kFloat32, DataType::kInt64}}) {
    auto p = nhwc;
    p["to"] = static_cast<std::int64_t>(to);
    Kernel cast = MakeKernel(OpKind::kCast, p);
    cast.dtype = from;
    ExpectRoundTrip(cast);
    Expected<Graph> g = BuildKernelGraph(cast);
    ASSERT_TRUE(g.ok());
    EXPECT_EQ(g->tensor(g->inputs[0]).dtype, from);
    EXPECT_EQ(g->tensor(g->outputs[0]).dtype, to);
  }
  // A reshape may move int64 data (an attention mask's unsqueeze); a transpose may not.
  Kernel mask = MakeKernel(OpKind::kReshape, nhwc);
  mask.dtype = DataType::kInt64;
  ExpectRoundTrip(mask);
  Expected<Graph> reshaped = BuildKernelGraph(mask);
  ASSERT_TRUE(reshaped.ok()) << reshaped.status().message();
  EXPECT_EQ(reshaped->tensor(reshaped->outputs[0]).dtype, DataType::kInt64);
  Kernel int_transpose = MakeKernel(OpKind::kTranspose, nhwc);
  int_transpose.dtype = DataType::kInt64;
  EXPECT_EQ(BuildKernelGraph(int_transpose).status().code(), StatusCode::kUnsupported);
  auto no_type = nhwc;
  no_type["to"] = 99;
  EXPECT_EQ(BuildKernelGraph(MakeKernel(OpKind::kCast, no_type)).status().code(), StatusCode::kInvalidInput);
  ExpectRoundTrip(MakeKernel(OpKind::kWhere, {{"c0", 1}, {"c1", 1}, {"c2", 1}, {"c3", 8}, {"x0", 1}, {"x1", 4},
                                              {"x2", 4}, {"x3", 8}, {"y0", 1}, {"y1", 1}, {"y2", 1}, {"y3", 1}}));
  ExpectRoundTrip(MakeKernel(OpKind::kAdd, ab, {OpKind::kRelu}));
  ExpectRoundTrip(MakeKernel(OpKind::kAdd, ab, {OpKind::kSigmoid}));
  ExpectRoundTrip(MakeKernel(OpKind::kMaximum, ab, {OpKind::kRelu6}));  // not carried: a separate node
  ExpectRoundTrip(MakeKernel(OpKind::kMul, {{"a0", 1}, {"a1", 4}, {"a2", 4}, {"a3", 8},
                                            {"b0", 1}, {"b1", 4}, {"b2", 4}, {"b3", 8}},
                             {OpKind::kAdd, OpKind::kRelu6}));
}

TEST(KernelGraphTest, ReductionAndDataMovementFamiliesRoundTrip) {
  const std::map<std::string, std::int64_t> nhwc = {{"n", 1}, {"h", 4}, {"w", 6}, {"c", 8}};
  ExpectRoundTrip(MakeKernel(OpKind::kSoftmax, nhwc));
  ExpectRoundTrip(MakeKernel(OpKind::kLogSoftmax, nhwc));
  for (std::int64_t axes : {1, 6, 8, 15}) {
    auto p = nhwc;
    p["axes"] = axes;
    ExpectRoundTrip(MakeKernel(OpKind::kMean, p));
    ExpectRoundTrip(MakeKernel(OpKind::kReduceMax, p));
  }
  ExpectRoundTrip(MakeKernel(OpKind::kReduceSum, {{"n", 1}, {"h", 4}, {"w", 6}, {"c", 8}, {"axes", 8}}));
  ExpectRoundTrip(MakeKernel(OpKind::kReduceMin, {{"n", 1}, {"h", 4}, {"w", 6}, {"c", 8}, {"axes", 2}}));
  ExpectRoundTrip(MakeKernel(OpKind::kArgMax, {{"n", 1}, {"h", 4}, {"w", 6}, {"c", 8}, {"axes", 8}}));
  ExpectRoundTrip(MakeKernel(OpKind::kArgMin, {{"n", 1}, {"h", 4}, {"w", 6}, {"c", 8}, {"axes", 2}}));
  EXPECT_EQ(BuildKernelGraph(MakeKernel(OpKind::kArgMax, {{"n", 1}, {"h", 4}, {"w", 6}, {"c", 8}, {"axes", 6}}))
                .status()
                .message(),
            "param 'axes' (6) of an argmax kernel must name one axis");
  for (std::int64_t scale : {0, 1})
    for (std::int64_t bias : {0, 1})
      ExpectRoundTrip(MakeKernel(OpKind::kLayerNorm, {{"n", 1}, {"h", 1}, {"w", 12}, {"c", 16}, {"scale", scale}, {"bias", bias}}));
  ExpectRoundTrip(MakeKernel(OpKind::kGather, {{"outer", 1}, {"rows", 50}, {"inner", 16}, {"idx", 7}}));
  ExpectRoundTrip(MakeKernel(OpKind::kGather, {{"outer", 3}, {"rows", 5}, {"inner", 4}, {"idx", 2}}));
  for (std::int64_t axis = 0; axis < 4; ++axis) {
    auto out = nhwc;
    out[std::vector<std::string>{"n", "h", "w", "c"}[static_cast<size_t>(axis)]] = 9;
    out["axis"] = axis;
    out["inputs"] = 3;
    out["d0"] = 2, out["d1"] = 3, out["d2"] = 4;
    ExpectRoundTrip(MakeKernel(OpKind::kConcat, out));
  }
  ExpectRoundTrip(MakeKernel(OpKind::kResize, {{"n", 1}, {"ih", 4}, {"iw", 5}, {"c", 3}, {"oh", 8}, {"ow", 10}, {"mode", 0}}));
  ExpectRoundTrip(MakeKernel(OpKind::kResize, {{"n", 1}, {"ih", 4}, {"iw", 5}, {"c", 3}, {"oh", 7}, {"ow", 3}, {"mode", 1}}));
  auto pad = nhwc;
  for (int i = 0; i < 8; ++i) pad[std::string(1, 'p') + std::to_string(i)] = i % 3;
  pad["p6"] = -1;  // a crop
  ExpectRoundTrip(MakeKernel(OpKind::kPad, pad));
  ExpectRoundTrip(MakeKernel(OpKind::kReshape, nhwc));
  ExpectRoundTrip(MakeKernel(OpKind::kSlice, {{"n", 1}, {"h", 4}, {"w", 6}, {"c", 8}, {"on", 1}, {"oh", 2}, {"ow", 6}, {"oc", 3}}));
  auto perm = nhwc;
  perm["perm0"] = 0, perm["perm1"] = 3, perm["perm2"] = 1, perm["perm3"] = 2;
  ExpectRoundTrip(MakeKernel(OpKind::kTranspose, perm));
  ExpectRoundTrip(MakeKernel(OpKind::kDepthToSpace, {{"n", 1}, {"h", 3}, {"w", 5}, {"c", 8}, {"block", 2}}));
  ExpectRoundTrip(MakeKernel(OpKind::kSpaceToDepth, {{"n", 1}, {"h", 4}, {"w", 6}, {"c", 3}, {"block", 2}}));
}

TEST(KernelGraphTest, BuiltGraphsAreDeterministicPerSeed) {
  const Kernel k = MakeKernel(OpKind::kConv2D, ConvParamsMap(4, 6, 1));
  auto weights = [&](unsigned seed) {
    Expected<Graph> g = BuildKernelGraph(k, seed);
    EXPECT_TRUE(g.ok());
    std::vector<float> all;
    for (const Tensor& t : g->tensors())
      if (t.is_constant()) {
        auto v = ConstantFloats(t);
        all.insert(all.end(), v->begin(), v->end());
      }
    return all;
  };
  const std::vector<float> a = weights(1), b = weights(1), c = weights(2);
  ASSERT_EQ(a.size(), static_cast<size_t>(6 * 3 * 2 * 4 + 6));
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_TRUE(std::any_of(a.begin(), a.end(), [](float v) { return v != 0.0f; }));
  EXPECT_TRUE(std::all_of(a.begin(), a.end(), [](float v) { return v >= -1.0f && v <= 1.0f; }));
}

void ExpectInvalid(const Kernel& k, const std::string& needle, StatusCode code = StatusCode::kInvalidInput) {
  SCOPED_TRACE(k.Key());
  Expected<Graph> g = BuildKernelGraph(k);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().code(), code) << g.status().message();
  EXPECT_NE(g.status().message().find(needle), std::string::npos) << g.status().message();
}

TEST(KernelGraphTest, BadParamsAreRejectedNamingTheParam) {
  auto conv = ConvParamsMap(4, 6, 1);
  auto p = conv;
  p["ih"] = 0;
  ExpectInvalid(MakeKernel(OpKind::kConv2D, p), "'ih'");
  p = conv;
  p["oc"] = -3;
  ExpectInvalid(MakeKernel(OpKind::kConv2D, p), "'oc'");
  p = conv;
  p["kh"] = 11;  // 8 + 1 + 1 padded
  ExpectInvalid(MakeKernel(OpKind::kConv2D, p), "'kh'");
  p = conv;
  p["dw"] = 10;  // kw 2 dilated 10 = 11 > 9 + 0 + 1
  ExpectInvalid(MakeKernel(OpKind::kConv2D, p), "'kw'");
  p = conv;
  p["g"] = 3;
  ExpectInvalid(MakeKernel(OpKind::kConv2D, p), "'g'");
  p = ConvParamsMap(4, 6, 2);
  ExpectInvalid(MakeKernel(OpKind::kDepthwiseConv2D, p), "'g'");
  p = conv;
  p["pt"] = -1;
  ExpectInvalid(MakeKernel(OpKind::kConv2D, p), "'pt'");
  p = conv;
  p["ih"] = 65536, p["iw"] = 65536, p["ic"] = 1024, p["oc"] = 1;
  ExpectInvalid(MakeKernel(OpKind::kConv2D, p), "2^31");
  p = conv;
  p["ic"] = 65536, p["oc"] = 65536;
  ExpectInvalid(MakeKernel(OpKind::kConv2D, p), "2^31");
  p = conv;
  p["ih"] = std::int64_t{1} << 40;
  ExpectInvalid(MakeKernel(OpKind::kConv2D, p), "'ih'");
  p = conv;
  p.erase("bias");
  ExpectInvalid(MakeKernel(OpKind::kConv2D, p), "'bias' is missing");
  p = conv;
  p["bias"] = 2;
  ExpectInvalid(MakeKernel(OpKind::kConv2D, p), "'bias'");
  p = conv;
  p["stride"] = 2;
  ExpectInvalid(MakeKernel(OpKind::kConv2D, p), "'stride'");
  ExpectInvalid(MakeKernel(OpKind::kTransposeConv2D,
                           {{"n", 1}, {"ih", 4}, {"iw", 5}, {"ic", 3}, {"oc", 2}, {"kh", 3}, {"kw", 3}, {"sh", 2},
                            {"sw", 2}, {"dh", 1}, {"dw", 1}, {"g", 1}, {"pt", 1}, {"pl", 1}, {"pb", 1}, {"pr", 1},
                            {"bias", 1}, {"oh", 12}, {"ow", 10}}),
                "'oh'");
  ExpectInvalid(MakeKernel(OpKind::kMaxPool2D, {{"n", 1}, {"ih", 2}, {"iw", 8}, {"c", 3}, {"kh", 3}, {"kw", 2},
                                                {"sh", 1}, {"sw", 1}, {"pt", 0}, {"pl", 0}, {"pb", 0}, {"pr", 0}}),
                "'kh'");
  ExpectInvalid(MakeKernel(OpKind::kFullyConnected, {{"m", 3}, {"k", 0}, {"n", 5}, {"bias", 1}}), "'k'");
  ExpectInvalid(MakeKernel(OpKind::kAdd, {{"a0", 1}, {"a1", 4}, {"a2", 4}, {"a3", 8},
                                          {"b0", 1}, {"b1", 3}, {"b2", 1}, {"b3", 8}}),
                "'a1'");
  ExpectInvalid(MakeKernel(OpKind::kConcat, {{"n", 1}, {"h", 2}, {"w", 2}, {"c", 9}, {"axis", 3}, {"inputs", 2},
                                             {"d0", 4}, {"d1", 4}}),
                "add up to 8");
  ExpectInvalid(MakeKernel(OpKind::kConcat, {{"n", 1}, {"h", 2}, {"w", 2}, {"c", 9}, {"axis", 4}, {"inputs", 1},
                                             {"d0", 9}}),
                "'axis'");
  ExpectInvalid(MakeKernel(OpKind::kTranspose, {{"n", 1}, {"h", 2}, {"w", 2}, {"c", 9}, {"perm0", 0}, {"perm1", 0},
                                                {"perm2", 1}, {"perm3", 2}}),
                "perm");
  ExpectInvalid(MakeKernel(OpKind::kMean, {{"n", 1}, {"h", 2}, {"w", 2}, {"c", 9}, {"axes", 0}}), "'axes'");
  ExpectInvalid(MakeKernel(OpKind::kDepthToSpace, {{"n", 1}, {"h", 2}, {"w", 2}, {"c", 6}, {"block", 2}}), "'c'");
  // The reshapes by other names are one kind, reshape.
  for (OpKind kind : {OpKind::kFlatten, OpKind::kSqueeze, OpKind::kUnsqueeze, OpKind::kIdentity})
    ExpectInvalid(MakeKernel(kind, {{"n", 1}, {"h", 2}, {"w", 2}, {"c", 6}}), "is a reshape kernel");
  ExpectInvalid(MakeKernel(OpKind::kSlice, {{"n", 1}, {"h", 2}, {"w", 2}, {"c", 6}, {"on", 1}, {"oh", 3}, {"ow", 2}, {"oc", 6}}),
                "param 'oh' is 3, must be in [1, 2]");
  ExpectInvalid(MakeKernel(OpKind::kConv2D, conv, {OpKind::kConcat}), "concat");

  Kernel int8 = MakeKernel(OpKind::kConv2D, conv);
  int8.dtype = DataType::kInt8;
  ExpectInvalid(int8, "float32", StatusCode::kUnsupported);
  ExpectInvalid(MakeKernel(OpKind::kSplit, {{"n", 1}}), "split", StatusCode::kUnsupported);
  ExpectInvalid(MakeKernel(OpKind::kGather, {{"idx", 4}, {"inner", 8}, {"outer", 1}}), "'rows' is missing");
  ExpectInvalid(MakeKernel(OpKind::kOpaque, {}), "opaque", StatusCode::kUnsupported);
}

TEST(KernelGraphTest, FusionRulesJsonRoundTripAndValidation) {
  const FusionRules rules = FusionRules::Default();
  EXPECT_TRUE(rules.Allows("conv2d+relu"));
  EXPECT_TRUE(rules.Allows("conv2d+add+relu"));
  EXPECT_FALSE(rules.Allows("conv2d"));
  const nlohmann::json json = rules.ToJson();
  ASSERT_TRUE(json.is_array());
  EXPECT_EQ(json.size(), rules.kinds().size());
  Expected<FusionRules> back = FusionRules::FromJson(nlohmann::json::parse(json.dump()));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(*back, rules);

  auto bad = FusionRules::FromJson(nlohmann::json::parse(R"(["conv2d+relu", "conv2d+bogus"])"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("bogus"), std::string::npos);
  bad = FusionRules::FromJson(nlohmann::json::parse(R"(["conv2d"])"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'conv2d' fuses nothing"), std::string::npos) << bad.status().message();
  bad = FusionRules::FromJson(nlohmann::json::parse(R"(["conv2d+relu", 3])"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("rule 1 is not a string"), std::string::npos) << bad.status().message();
  bad = FusionRules::FromJson(nlohmann::json::parse(R"({"rules": []})"));
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("array"), std::string::npos);
  bad = FusionRules::FromKinds({"conv2d+concat"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("concat cannot follow"), std::string::npos) << bad.status().message();
}

Attributes ConvAttrs(const std::string& layout, const std::string& filter_layout, std::int64_t groups,
                     const std::string& activation = "none") {
  Attributes a;
  a.Set("layout", layout);
  a.Set("filter_layout", filter_layout);
  a.Set("strides", std::vector<std::int64_t>{2, 1});
  a.Set("dilations", std::vector<std::int64_t>{1, 2});
  a.Set("padding", std::string("explicit"));
  a.Set("pads", std::vector<std::int64_t>{1, 0, 1, 1});
  a.Set("groups", groups);
  if (activation != "none") a.Set("activation", activation);
  return a;
}

TEST(KernelGraphTest, NchwGraphsGiveTheSameKernelsAsNhwc) {
  // The conv of ConvParamsMap(4, 6, 2) in ONNX layout, then an add of a per-channel constant, a softmax
  // over channels and a mean over H and W.
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 4, 8, 9});
  TensorId w = b.Constant("w", {6, 2, 3, 2});
  TensorId bias = b.Constant("b", {6});
  TensorId y = b.Op1(OpKind::kConv2D, "conv", {x, w, bias}, ConvAttrs("NCHW", "OIHW", 2));
  TensorId c = b.Constant("c", {6, 1, 1});
  TensorId z = b.Op1(OpKind::kAdd, "add", {y, c});
  Attributes sm;
  sm.Set("axis", std::int64_t{1});
  TensorId s = b.Op1(OpKind::kSoftmax, "softmax", {z}, sm);
  Attributes mean;
  mean.Set("axes", std::vector<std::int64_t>{2, 3});
  TensorId m = b.Op1(OpKind::kMean, "mean", {s}, mean);
  Attributes tr;
  tr.Set("perm", std::vector<std::int64_t>{0, 2, 3, 1});  // NCHW → NHWC data order
  TensorId t = b.Op1(OpKind::kTranspose, "transpose", {s}, tr);
  Attributes bn;  // a batch_norm not after a conv (after the softmax), in ONNX layout
  bn.Set("layout", std::string("NCHW"));
  bn.Set("epsilon", 1e-5);
  TensorId nb_out = b.Op1(OpKind::kBatchNorm, "bn", {s, b.Constant("scale", {6}), b.Constant("shift", {6}),
                                                     b.Constant("mean", {6}), b.Constant("var", {6})}, bn);
  Expected<Graph> g = b.Finish({m, t, nb_out});
  ASSERT_TRUE(g.ok()) << g.status().message();

  Expected<Kernel> conv = KernelOfNodes(*g, {0});
  ASSERT_TRUE(conv.ok()) << conv.status().message();
  EXPECT_EQ(*conv, MakeKernel(OpKind::kConv2D, ConvParamsMap(4, 6, 2)));
  Expected<Kernel> add = KernelOfNodes(*g, {1});
  ASSERT_TRUE(add.ok());
  EXPECT_EQ(add->params, (std::map<std::string, std::int64_t>{{"a0", 1}, {"a1", 4}, {"a2", 8}, {"a3", 6},
                                                               {"b0", 1}, {"b1", 1}, {"b2", 1}, {"b3", 6}}));
  Expected<Kernel> softmax = KernelOfNodes(*g, {2});
  ASSERT_TRUE(softmax.ok()) << softmax.status().message();
  EXPECT_EQ(softmax->params, (std::map<std::string, std::int64_t>{{"n", 1}, {"h", 4}, {"w", 8}, {"c", 6}}));
  Expected<Kernel> reduce = KernelOfNodes(*g, {3});
  ASSERT_TRUE(reduce.ok());
  EXPECT_EQ(reduce->Param("axes"), 0b0110);
  Expected<Kernel> transpose = KernelOfNodes(*g, {4});
  ASSERT_TRUE(transpose.ok());
  // A transpose is the movement the graph makes in memory, even in an NCHW graph (whose other
  // kernels are keyed in NHWC terms): [1,6,4,8] → [1,4,8,6], its channels moved innermost.
  EXPECT_EQ(transpose->params, (std::map<std::string, std::int64_t>{{"n", 1}, {"h", 6}, {"w", 4}, {"c", 8},
                                                                     {"perm0", 0}, {"perm1", 2}, {"perm2", 3}, {"perm3", 1}}));
  ExpectRoundTrip(*transpose);
  Expected<Kernel> norm = KernelOfNodes(*g, {5});
  ASSERT_TRUE(norm.ok()) << norm.status().message();
  EXPECT_EQ(*norm, MakeKernel(OpKind::kBatchNorm, {{"n", 1}, {"h", 4}, {"w", 8}, {"c", 6}}));

  // The same conv in TFLite layout gives the identical kernel.
  GraphBuilder nb;
  TensorId nx = nb.Input("x", {1, 8, 9, 4});
  TensorId nw = nb.Constant("w", {6, 3, 2, 2});
  TensorId nbias = nb.Constant("b", {6});
  TensorId ny = nb.Op1(OpKind::kConv2D, "conv", {nx, nw, nbias}, ConvAttrs("NHWC", "OHWI", 2));
  Expected<Graph> ng = nb.Finish({ny});
  ASSERT_TRUE(ng.ok()) << ng.status().message();
  EXPECT_EQ(KernelOfNodes(*ng, {0}).value(), *conv);
}

// A runtime that keeps images NCHW runs an ONNX file's layers as the file has them: the graph of
// WithNchwTensors(kernel) holds exactly the NCHW tensors the kernel came from (an add of a
// per-channel constant, a mean over H and W), where BuildKernelGraph of the NHWC key holds their
// NHWC views. A rank-3 add (a transformer's, padded to [1, 1, s, d]) and a conv stay as they are.
TEST(KernelGraphTest, WithNchwTensorsHoldsTheTensorsOfTheNchwFile) {
  GraphBuilder b;  // an ONNX file's: a conv in NCHW makes the graph one
  TensorId y = b.Op1(OpKind::kConv2D, "conv", {b.Input("x", {1, 4, 8, 9}), b.Constant("w", {6, 2, 3, 2}), b.Constant("b", {6})},
                     ConvAttrs("NCHW", "OIHW", 2));
  TensorId z = b.Op1(OpKind::kAdd, "add", {y, b.Constant("c", {6, 1, 1})});
  Attributes mean;
  mean.Set("axes", std::vector<std::int64_t>{2, 3});
  TensorId m = b.Op1(OpKind::kMean, "mean", {z}, mean);
  Expected<Graph> g = b.Finish({m});
  ASSERT_TRUE(g.ok()) << g.status().message();
  ASSERT_EQ(g->tensor(y).shape, (Shape{1, 6, 4, 8}));
  for (NodeId id : {NodeId{1}, NodeId{2}}) {
    Expected<Kernel> kernel = KernelOfNodes(*g, {id});
    ASSERT_TRUE(kernel.ok()) << kernel.status().message();
    Expected<Graph> nhwc = BuildKernelGraph(*kernel);
    Expected<Graph> nchw = BuildKernelGraph(WithNchwTensors(*kernel));
    ASSERT_TRUE(nhwc.ok() && nchw.ok());
    const Node& want = g->node(id);
    const Node& got = nchw->node(0);
    ASSERT_EQ(got.kind, want.kind);
    for (std::size_t i = 0; i < want.inputs.size(); ++i) {
      Shape shape = g->tensor(want.inputs[i]).shape;
      shape.insert(shape.begin(), 4 - shape.size(), 1);  // the constant's leading 1
      EXPECT_EQ(nchw->tensor(got.inputs[i]).shape, shape) << OpName(want.kind) << " input " << i;
    }
    EXPECT_EQ(nhwc->tensor(nhwc->node(0).inputs[0]).shape, (Shape{1, 4, 8, 6})) << OpName(want.kind);
    if (want.kind == OpKind::kMean) {
      EXPECT_EQ(nchw->node(0).attrs.GetInts("axes"), (std::vector<std::int64_t>{2, 3}));
      EXPECT_EQ(nhwc->node(0).attrs.GetInts("axes"), (std::vector<std::int64_t>{1, 2}));
    }
  }
  const Kernel rank3 = MakeKernel(OpKind::kAdd, {{"a0", 1}, {"a1", 1}, {"a2", 64}, {"a3", 256},
                                                 {"b0", 1}, {"b1", 1}, {"b2", 1}, {"b3", 256}});
  EXPECT_EQ(WithNchwTensors(rank3), rank3);
  const Kernel conv = MakeKernel(OpKind::kConv2D, ConvParamsMap(4, 6, 2));
  EXPECT_EQ(WithNchwTensors(conv), conv);
}

TEST(KernelGraphTest, SoftmaxOverANonChannelAxisIsUnsupported) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 4, 8, 9});
  Attributes sm;
  sm.Set("axis", std::int64_t{2});
  Attributes pool;
  pool.Set("layout", std::string("NCHW"));
  TensorId p = b.Op1(OpKind::kSoftmax, "softmax", {x}, sm);
  TensorId q = b.Op1(OpKind::kGlobalAvgPool, "pool", {p}, pool);
  Expected<Graph> g = b.Finish({q});
  ASSERT_TRUE(g.ok()) << g.status().message();
  Expected<Kernel> k = KernelOfNodes(*g, {0});
  ASSERT_FALSE(k.ok());
  EXPECT_EQ(k.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(k.status().message().find("'softmax'"), std::string::npos) << k.status().message();
  EXPECT_NE(k.status().message().find("channel"), std::string::npos) << k.status().message();
}

TEST(KernelGraphTest, AClipWithReluBoundsFollowsAsThatRelu) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 4, 8, 8});
  TensorId w = b.Constant("w", {4, 4, 1, 1});
  Attributes a;
  a.Set("layout", std::string("NCHW"));
  a.Set("filter_layout", std::string("OIHW"));
  TensorId y = b.Op1(OpKind::kConv2D, "conv", {x, w}, a);
  Attributes clip;
  clip.Set("min", 0.0);
  clip.Set("max", 6.0);
  TensorId z = b.Op1(OpKind::kClip, "clip6", {y}, clip);
  TensorId y2 = b.Op1(OpKind::kConv2D, "conv2", {z, w}, a);
  clip.Set("max", 4.0);
  TensorId z2 = b.Op1(OpKind::kClip, "clip4", {y2}, clip);
  Expected<Graph> g = b.Finish({z2});
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(KernelOfNodes(*g, {0, 1}).value().Kind(), "conv2d+relu6");
  EXPECT_EQ(KernelOfNodes(*g, {2, 3}).value().Kind(), "conv2d+clip");
  Expected<KernelGrouping> grouping = GroupIntoKernels(*g, FusionRules::Default());
  ASSERT_TRUE(grouping.ok());
  ASSERT_EQ(grouping->kernels.size(), 3u);
  EXPECT_EQ(grouping->kernels[0].kernel.Kind(), "conv2d+relu6");
  EXPECT_EQ(grouping->kernels[1].kernel.Kind(), "conv2d");
  EXPECT_EQ(grouping->kernels[2].kernel.Kind(), "clip");
}

// A scale times a map and the map times the scale are one kernel (PP-OCRv4's affine blocks
// write the scale first): a commutative op is keyed with its larger operand first, whichever
// order the file has; a subtraction keeps its order.
TEST(KernelGraphTest, ACommutativeOpIsKeyedWithItsLargerOperandFirst) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 8, 8, 16});
  TensorId s = b.Constant("s", {1}, {0.5f});
  TensorId v = b.Constant("v", {16}, std::vector<float>(16, 2.0f));
  TensorId scale_first = b.Op1(OpKind::kMul, "scale_first", {s, x});
  TensorId map_first = b.Op1(OpKind::kMul, "map_first", {x, s});
  TensorId channels_first = b.Op1(OpKind::kMaximum, "channels_first", {v, x});
  TensorId minus = b.Op1(OpKind::kSub, "minus", {s, x});
  Expected<Graph> g = b.Finish({scale_first, map_first, channels_first, minus});
  ASSERT_TRUE(g.ok()) << g.status().message();
  const auto key = [&](NodeId n) { return KernelOfNodes(*g, {n}).value().Key(); };
  EXPECT_EQ(key(0), "mul|a0=1,a1=8,a2=8,a3=16,b0=1,b1=1,b2=1,b3=1|float32");
  EXPECT_EQ(key(1), key(0));
  EXPECT_EQ(key(2), "maximum|a0=1,a1=8,a2=8,a3=16,b0=1,b1=1,b2=1,b3=16|float32");
  EXPECT_EQ(key(3), "sub|a0=1,a1=1,a2=1,a3=1,b0=1,b1=8,b2=8,b3=16|float32");
  // The one-kernel graph of the key runs the map first.
  Expected<Graph> built = BuildKernelGraph(KernelOfNodes(*g, {0}).value());
  ASSERT_TRUE(built.ok()) << built.status().message();
  EXPECT_EQ(built->tensor(built->node(0).inputs[0]).shape, (Shape{1, 8, 8, 16}));
}

TEST(KernelGraphTest, KernelOfNodesRejectsWhatIsNotAChain) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 8, 8, 4});
  TensorId w = b.Constant("w", {4, 1, 1, 4});
  Attributes a;
  a.Set("layout", std::string("NHWC"));
  a.Set("filter_layout", std::string("OHWI"));
  a.Set("activation", std::string("relu6"));
  TensorId y = b.Op1(OpKind::kConv2D, "conv", {x, w}, a);
  TensorId r = b.Op1(OpKind::kSigmoid, "sig", {x});  // does not read the conv
  TensorId s = b.Op1(OpKind::kAdd, "add", {y, r});
  TensorId m = b.Op1(OpKind::kMaxPool2D, "pool", {s}, [] {
    Attributes p;
    p.Set("kernel", std::vector<std::int64_t>{2, 2});
    return p;
  }());
  Expected<Graph> g = b.Finish({m});
  ASSERT_TRUE(g.ok()) << g.status().message();

  Expected<Kernel> conv = KernelOfNodes(*g, {0});
  ASSERT_TRUE(conv.ok());
  EXPECT_EQ(conv->Kind(), "conv2d+relu6");  // the fused activation attribute is always in the kernel
  EXPECT_EQ(KernelOfNodes(*g, {0, 2}).value().Kind(), "conv2d+relu6+add");
  Expected<Kernel> bad = KernelOfNodes(*g, {0, 1});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'sig'"), std::string::npos) << bad.status().message();
  bad = KernelOfNodes(*g, {2, 3});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("max_pool2d cannot be fused"), std::string::npos) << bad.status().message();
  EXPECT_FALSE(KernelOfNodes(*g, {}).ok());
  EXPECT_FALSE(KernelOfNodes(*g, {9}).ok());
}

// An attention block as PP-OCRv4's recognizer exports it, in an NCHW graph: rank-5 reshapes,
// transposes and slices are described at rank ≤ 4 as the same data movement, squeezes are
// reshapes, and a softmax over the scores' last axis is over contiguous rows.
TEST(KernelGraphTest, AttentionsDataMovementIsDescribedAtRankFour) {
  GraphBuilder b;
  TensorId img = b.Input("img", {1, 4, 6, 6});
  Attributes nchw;
  nchw.Set("layout", std::string("NCHW"));
  TensorId pooled = b.Op1(OpKind::kGlobalAvgPool, "gap", {img}, nchw);
  TensorId x = b.Input("x", {1, 40, 360});
  Attributes reshape, transpose, slice, squeeze, softmax;
  reshape.Set("shape", std::vector<std::int64_t>{1, 40, 3, 8, 15});
  transpose.Set("perm", std::vector<std::int64_t>{2, 0, 3, 1, 4});
  slice.Set("starts", std::vector<std::int64_t>{1});
  slice.Set("ends", std::vector<std::int64_t>{2});
  slice.Set("axes", std::vector<std::int64_t>{0});
  squeeze.Set("axes", std::vector<std::int64_t>{0});
  softmax.Set("axis", std::int64_t{-1});
  TensorId r = b.Op1(OpKind::kReshape, "reshape", {x}, reshape);
  TensorId t = b.Op1(OpKind::kTranspose, "transpose", {r}, transpose);   // 3x1x8x40x15
  TensorId s = b.Op1(OpKind::kSlice, "slice", {t}, slice);               // 1x1x8x40x15
  TensorId q = b.Op1(OpKind::kSqueeze, "squeeze", {s}, squeeze);         // 1x8x40x15
  TensorId scores = b.Input("scores", {1, 8, 40, 40});
  TensorId p = b.Op1(OpKind::kSoftmax, "softmax", {scores}, softmax);
  Expected<Graph> g = b.Finish({pooled, q, p});
  ASSERT_TRUE(g.ok()) << g.status().message();
  auto kernel = [&](NodeId id) {
    Expected<Kernel> k = KernelOfNodes(*g, {id});
    EXPECT_TRUE(k.ok()) << k.status().message();
    return k.ok() ? k->Key() : k.status().message();
  };
  EXPECT_EQ(kernel(1), "reshape|c=360,h=1,n=1,w=40|float32");  // rank 3 in, as before
  // [40,3,8,15] → [3,8,40,15]: axes 3 and 8 move together, 15 stays innermost: [40,24,15] → [24,40,15].
  EXPECT_EQ(kernel(2), "transpose|c=15,h=40,n=1,perm0=0,perm1=2,perm2=1,perm3=3,w=24|float32");
  // One of 3 blocks of 8·40·15 elements.
  EXPECT_EQ(kernel(3), "slice|c=4800,h=1,n=1,oc=4800,oh=1,on=1,ow=1,w=3|float32");
  EXPECT_EQ(kernel(4), "reshape|c=15,h=8,n=1,w=40|float32");  // rank 5 in: leading dims merged
  EXPECT_EQ(kernel(5), "softmax|c=40,h=8,n=1,w=40|float32");
  // Each kernel builds back into a graph of that kernel.
  for (NodeId id : {2, 3, 4, 5}) {
    Expected<Kernel> k = KernelOfNodes(*g, {id});
    ASSERT_TRUE(k.ok());
    ExpectRoundTrip(*k);
  }
}

// A strided slice, and a transpose that keeps five axes apart, have no kernel params.
TEST(KernelGraphTest, WhatKernelParamsCannotDescribeIsSaid) {
  GraphBuilder b;
  TensorId x = b.Input("x", {2, 3, 4, 5, 6});
  Attributes strided, transpose;
  strided.Set("starts", std::vector<std::int64_t>{0});
  strided.Set("ends", std::vector<std::int64_t>{4});
  strided.Set("axes", std::vector<std::int64_t>{2});
  strided.Set("steps", std::vector<std::int64_t>{2});
  transpose.Set("perm", std::vector<std::int64_t>{4, 3, 2, 1, 0});
  TensorId s = b.Op1(OpKind::kSlice, "slice", {x}, strided);
  TensorId t = b.Op1(OpKind::kTranspose, "transpose", {x}, transpose);
  Expected<Graph> g = b.Finish({s, t});
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(KernelOfNodes(*g, {0}).status().message(),
            "node 0 'slice' (slice): a slice with steps other than 1 has no kernel params");
  EXPECT_EQ(KernelOfNodes(*g, {1}).status().message(),
            "node 1 'transpose' (transpose): transpose of 2x3x4x5x6 moves 5 axes apart, kernels describe at most 4");
}

// x → c1[relu] → t1 → c2 → relu → c3 → add(·, t1) → relu → opaque → sigmoid (output)
//                 (t1 also feeds the add)
struct TestNet {
  Graph graph;
  NodeId c1, c2, r2, c3, add, r3, opaque, sig;
};

TestNet MakeTestNet(bool c2_is_output) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 8, 8, 4});
  auto conv = [&](const std::string& name, TensorId in, const std::string& act) {
    Attributes a;
    a.Set("layout", std::string("NHWC"));
    a.Set("filter_layout", std::string("OHWI"));
    a.Set("padding", std::string("same"));
    if (!act.empty()) a.Set("activation", act);
    return b.Op1(OpKind::kConv2D, name, {in, b.Constant(name + ":w", {4, 3, 3, 4}), b.Constant(name + ":b", {4})}, a);
  };
  TensorId t1 = conv("c1", x, "relu");
  TensorId t2 = conv("c2", t1, "");
  TensorId t3 = b.Op1(OpKind::kRelu, "r2", {t2});
  TensorId t5 = conv("c3", t3, "");
  TensorId t6 = b.Op1(OpKind::kAdd, "add", {t5, t1});
  TensorId t7 = b.Op1(OpKind::kRelu, "r3", {t6});
  TensorId t8 = b.Op1(OpKind::kOpaque, "custom", {t7});
  b.graph().mutable_node(static_cast<NodeId>(b.graph().num_nodes() - 1)).source_op = "MyCustomOp";
  b.graph().mutable_node(static_cast<NodeId>(b.graph().num_nodes() - 1)).unsupported_reason = "custom op 'MyCustomOp'";
  b.graph().mutable_tensor(t8).shape = {1, 8, 8, 4};
  b.graph().mutable_tensor(t8).shape_known = true;
  TensorId t9 = b.Op1(OpKind::kSigmoid, "sig", {t8});
  std::vector<TensorId> outputs = {t9};
  if (c2_is_output) outputs.push_back(t2);
  Expected<Graph> g = b.Finish(outputs);
  EXPECT_TRUE(g.ok()) << g.status().message();
  TestNet net{std::move(g).value(), 0, 0, 0, 0, 0, 0, 0, 0};
  auto find = [&](const std::string& name) {
    for (size_t i = 0; i < net.graph.num_nodes(); ++i)
      if (net.graph.node(static_cast<NodeId>(i)).name == name) return static_cast<NodeId>(i);
    return NodeId{-1};
  };
  net.c1 = find("c1"), net.c2 = find("c2"), net.r2 = find("r2"), net.c3 = find("c3");
  net.add = find("add"), net.r3 = find("r3"), net.opaque = find("custom"), net.sig = find("sig");
  return net;
}

// Every node exactly once, in a kernel or uncovered.
void ExpectPartition(const Graph& g, const KernelGrouping& grouping) {
  std::vector<int> seen(g.num_nodes(), 0);
  for (const KernelGroup& k : grouping.kernels)
    for (NodeId id : k.nodes) ++seen.at(static_cast<size_t>(id));
  for (const UncoveredNode& u : grouping.uncovered) ++seen.at(static_cast<size_t>(u.node));
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], 1) << DescribeNode(g, static_cast<NodeId>(i));
}

TEST(KernelGraphTest, GroupingFusesByTheRulesAndListsOpaqueNodes) {
  TestNet net = MakeTestNet(false);
  Expected<KernelGrouping> grouping = GroupIntoKernels(net.graph, FusionRules::Default());
  ASSERT_TRUE(grouping.ok()) << grouping.status().message();
  ExpectPartition(net.graph, *grouping);
  ASSERT_EQ(grouping->kernels.size(), 4u);
  EXPECT_EQ(grouping->kernels[0].nodes, std::vector<NodeId>{net.c1});
  EXPECT_EQ(grouping->kernels[0].kernel.Kind(), "conv2d+relu");
  EXPECT_EQ(grouping->kernels[1].nodes, (std::vector<NodeId>{net.c2, net.r2}));
  EXPECT_EQ(grouping->kernels[1].kernel.Kind(), "conv2d+relu");
  EXPECT_EQ(grouping->kernels[2].nodes, (std::vector<NodeId>{net.c3, net.add, net.r3}));
  EXPECT_EQ(grouping->kernels[2].kernel.Kind(), "conv2d+add+relu");
  EXPECT_EQ(grouping->kernels[3].nodes, std::vector<NodeId>{net.sig});
  EXPECT_EQ(grouping->kernels[3].kernel.Kind(), "sigmoid");
  ASSERT_EQ(grouping->uncovered.size(), 1u);
  EXPECT_EQ(grouping->uncovered[0].node, net.opaque);
  EXPECT_EQ(grouping->uncovered[0].op, "MyCustomOp");
  EXPECT_NE(grouping->uncovered[0].why.find("custom op 'MyCustomOp'"), std::string::npos) << grouping->uncovered[0].why;

  // The fused kernel's params are the conv's own, and it builds and reads back.
  Expected<Kernel> alone = KernelOfNodes(net.graph, {net.c3});
  ASSERT_TRUE(alone.ok());
  EXPECT_EQ(grouping->kernels[2].kernel.params, alone->params);
  ExpectRoundTrip(grouping->kernels[2].kernel);
}

TEST(KernelGraphTest, GroupingFollowsOnlyAllowedKindsAndKeepsGraphOutputs) {
  TestNet net = MakeTestNet(true);
  Expected<KernelGrouping> grouping = GroupIntoKernels(net.graph, FusionRules::Default());
  ASSERT_TRUE(grouping.ok());
  ExpectPartition(net.graph, *grouping);
  // c2's output is a graph output: the relu after it is a kernel of its own.
  std::vector<std::string> kinds;
  for (const KernelGroup& k : grouping->kernels) kinds.push_back(k.kernel.Kind());
  EXPECT_EQ(kinds, (std::vector<std::string>{"conv2d+relu", "conv2d", "relu", "conv2d+add+relu", "sigmoid"}));

  // Rules allowing only conv2d+add: the trailing relu stays apart.
  Expected<FusionRules> rules = FusionRules::FromKinds({"conv2d+add"});
  ASSERT_TRUE(rules.ok());
  grouping = GroupIntoKernels(net.graph, *rules);
  ASSERT_TRUE(grouping.ok());
  ExpectPartition(net.graph, *grouping);
  kinds.clear();
  for (const KernelGroup& k : grouping->kernels) kinds.push_back(k.kernel.Kind());
  EXPECT_EQ(kinds, (std::vector<std::string>{"conv2d+relu", "conv2d", "relu", "conv2d+add", "relu", "sigmoid"}));

  // No rules: every node is its own kernel (the attribute activation still fused).
  grouping = GroupIntoKernels(net.graph, FusionRules());
  ASSERT_TRUE(grouping.ok());
  EXPECT_EQ(grouping->kernels.size(), 7u);
  EXPECT_EQ(grouping->kernels[0].kernel.Kind(), "conv2d+relu");
}

}  // namespace
}  // namespace latte

namespace latte {
namespace {

Kernel Conv3x3(std::int64_t h, std::int64_t c) {
  Kernel k;
  k.op = OpKind::kConv2D;
  k.params = {{"n", 1},  {"ih", h},  {"iw", h},  {"ic", c},  {"oc", c},  {"kh", 3},  {"kw", 3},  {"sh", 1}, {"sw", 1},
              {"dh", 1}, {"dw", 1},  {"g", 1},   {"pt", 1},  {"pl", 1},  {"pb", 1},  {"pr", 1},  {"bias", 1}};
  return k;
}

Kernel AddOf(std::int64_t h, std::int64_t c) {
  Kernel k;
  k.op = OpKind::kAdd;
  k.params = {{"a0", 1}, {"a1", h}, {"a2", h}, {"a3", c}, {"b0", 1}, {"b1", h}, {"b2", h}, {"b3", c}};
  return k;
}

TEST(KernelGraphTest, JoinedKernelsReadWhatTheySayAndNothingElse) {
  // conv → conv → add(second conv, first conv): a residual block.
  auto joined = JoinKernels({{Conv3x3(8, 4), {}}, {Conv3x3(8, 4), {0}}, {AddOf(8, 4), {1, 0}}});
  ASSERT_TRUE(joined.ok()) << joined.status().message();
  ASSERT_EQ(joined->num_nodes(), 3u);
  EXPECT_EQ(joined->inputs.size(), 1u);  // only the first conv's input
  const Node& add = joined->node(2);
  EXPECT_EQ(joined->Producer(add.inputs[0]), 1);
  EXPECT_EQ(joined->Producer(add.inputs[1]), 0);
  EXPECT_EQ(joined->outputs, add.outputs);
  auto grouping = GroupIntoKernels(*joined, FusionRules());
  ASSERT_TRUE(grouping.ok());
  ASSERT_EQ(grouping->kernels.size(), 3u);
  EXPECT_EQ(grouping->kernels[2].kernel, AddOf(8, 4));
}

TEST(KernelGraphTest, ACommutativeKernelWiredSmallerOperandFirstJoinsItsSourcesSwapped) {
  // A squeeze-and-excite scale: mul(scale, map) as a network wires it, keyed map first
  // (CanonicalOperandOrder); its sources listed in the network's order, scale first.
  Kernel pool;
  pool.op = OpKind::kGlobalAvgPool;
  pool.params = {{"n", 1}, {"h", 8}, {"w", 8}, {"c", 4}};
  Kernel mul;
  mul.op = OpKind::kMul;
  mul.params = {{"a0", 1}, {"a1", 8}, {"a2", 8}, {"a3", 4}, {"b0", 1}, {"b1", 1}, {"b2", 1}, {"b3", 4}};
  std::vector<std::vector<NodeId>> nodes;
  auto joined = JoinKernels({{Conv3x3(8, 4), {}}, {pool, {0}}, {mul, {1, 0}}}, &nodes);
  ASSERT_TRUE(joined.ok()) << joined.status().message();
  const Node& product = joined->node(nodes[2].front());
  EXPECT_EQ(joined->Producer(product.inputs[0]), nodes[0].front());  // the map, from the conv
  EXPECT_EQ(joined->Producer(product.inputs[1]), nodes[1].front());  // the scale, from the pool
  // A kernel that is not commutative is never swapped: sub(scale, map) does not fit.
  Kernel sub = mul;
  sub.op = OpKind::kSub;
  auto refused = JoinKernels({{Conv3x3(8, 4), {}}, {pool, {0}}, {sub, {1, 0}}});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("kernel 2 input 0 is 1x8x8x4 but kernel 1 writes 1x1x1x4"), std::string::npos)
      << refused.status().message();
}

TEST(KernelGraphTest, JoiningRefusesLaterKernelsAndMismatchedShapes) {
  auto later = JoinKernels({{Conv3x3(8, 4), {1}}, {Conv3x3(8, 4), {}}});
  ASSERT_FALSE(later.ok());
  EXPECT_NE(later.status().message().find("kernel 0 reads kernel 1"), std::string::npos);
  auto shapes = JoinKernels({{Conv3x3(8, 4), {}}, {Conv3x3(8, 8), {0}}});
  ASSERT_FALSE(shapes.ok());
  EXPECT_NE(shapes.status().message().find("1x8x8x8 but kernel 0 writes 1x8x8x4"), std::string::npos)
      << shapes.status().message();
  EXPECT_FALSE(JoinKernels({}).ok());
}

}  // namespace
}  // namespace latte
