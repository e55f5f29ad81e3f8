// The ops real exports carry, end to end: small ONNX models built here, imported, shapes and
// dtypes inferred, exported again and run on ONNX Runtime (as one model, and node by node), each
// output checked against a reference computed in the test. Decomposed layer norms and GELUs run as
// one node whose profile entry names every user node.

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "import/onnx_test_builder.h"
#include "ir/graph_builder.h"
#include "ir/kernel_graph.h"
#include "ir/kernel_params.h"
#include "run/executor.h"
#include "run/graph_prep.h"
#include "run/ort/ort_backend.h"

namespace latte {
namespace {

using namespace ::latte::testing;  // NOLINT: the builder's vocabulary
using Bytes = std::vector<std::uint8_t>;

BackendRegistry& Registry() {
  static BackendRegistry registry = [] {
    BackendRegistry r;
    RegisterOrtBackend(r);
    return r;
  }();
  return registry;
}

template <class T>
Bytes AsBytes(const std::vector<T>& v) {
  Bytes b(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}
template <class T>
std::vector<T> FromBytes(const Bytes& b) {
  std::vector<T> v(b.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
  return v;
}

std::vector<float> RandomFloats(size_t n, unsigned seed, float lo = -2, float hi = 2) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}
// Small integers as floats, so that comparisons meet equal values.
std::vector<float> SmallInts(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(static_cast<int>(rng() % 4) - 1);
  return v;
}
std::vector<std::uint8_t> RandomBools(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<std::uint8_t> v(n);
  for (auto& x : v) x = static_cast<std::uint8_t>(rng() & 1);
  return v;
}

// The flat index in a tensor of `shape` (right-aligned, broadcast) of the output element `out`.
size_t BroadcastIndex(size_t out, const Ints& out_shape, const Ints& shape) {
  size_t index = 0, stride = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    const size_t d = shape.size() - 1 - i, od = out_shape.size() - 1 - i;
    std::int64_t outer = 1;
    for (size_t k = od + 1; k < out_shape.size(); ++k) outer *= out_shape[k];
    const auto coordinate = static_cast<std::int64_t>(out / static_cast<size_t>(outer)) % out_shape[od];
    if (shape[d] != 1) index += static_cast<size_t>(coordinate) * stride;
    stride *= static_cast<size_t>(shape[d]);
  }
  return index;
}
std::int64_t Count(const Ints& shape) {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

struct ModelRun {
  Graph graph;
  Bytes out;
  DataType out_type = DataType::kUnknown;
  Ints out_shape;
  std::vector<ProfileEntry> entries;
};

// Imports `b`, runs it on ORT as one model with `inputs` (the graph inputs in order, as bytes).
ModelRun RunModel(const ModelBuilder& b, const std::vector<Bytes>& inputs) {
  ModelRun run;
  auto g = ImportFull(b);
  if (!g.ok()) {
    ADD_FAILURE() << g.status().message();
    return run;
  }
  for (const Node& n : g->nodes()) EXPECT_NE(n.kind, OpKind::kOpaque) << n.name << ": " << n.unsupported_reason;
  run.graph = *g;
  RunOptions options;
  options.num_threads = 1;
  Placement placement;
  placement.default_backend = "ort";
  auto executor = Executor::Create(*g, placement, Registry(), options);
  if (!executor.ok()) {
    ADD_FAILURE() << executor.status().message();
    return run;
  }
  EXPECT_TRUE((*executor)->RunsWholeGraph());
  EXPECT_EQ(inputs.size(), g->inputs.size());
  for (size_t i = 0; i < inputs.size() && i < g->inputs.size(); ++i) {
    EXPECT_EQ((*executor)->buffers().bytes(g->inputs[i]), inputs[i].size()) << "input " << i;
    std::memcpy((*executor)->buffers().mutable_data(g->inputs[i]), inputs[i].data(),
                std::min(inputs[i].size(), (*executor)->buffers().bytes(g->inputs[i])));
  }
  Status s = (*executor)->Run();
  if (!s.ok()) {
    ADD_FAILURE() << s.message();
    return run;
  }
  const TensorId out = g->outputs[0];
  const std::uint8_t* data = (*executor)->buffers().data(out);
  run.out.assign(data, data + (*executor)->buffers().bytes(out));
  run.out_type = g->tensor(out).dtype;
  run.out_shape = g->tensor(out).shape;
  run.entries = (*executor)->entries();
  return run;
}

// The same graph's nodes each alone on ORT (one-node exported models), through the backend.
Bytes RunNodeByNode(const Graph& g, const std::vector<Bytes>& inputs) {
  auto backend = OrtBackend::Create(RunOptions{});
  if (!backend.ok()) {
    ADD_FAILURE() << backend.status().message();
    return {};
  }
  auto buffers = TensorBuffers::Allocate(g);
  if (!buffers.ok()) {
    ADD_FAILURE() << buffers.status().message();
    return {};
  }
  for (size_t i = 0; i < inputs.size(); ++i)
    std::memcpy(buffers->mutable_data(g.inputs[i]), inputs[i].data(), inputs[i].size());
  for (NodeId n = 0; n < static_cast<NodeId>(g.num_nodes()); ++n) {
    auto prepared = (*backend)->Prepare(g, n);
    if (!prepared.ok()) {
      ADD_FAILURE() << prepared.status().message();
      return {};
    }
    Status s = (*prepared)->Run(*buffers);
    if (!s.ok()) {
      ADD_FAILURE() << s.message();
      return {};
    }
  }
  const std::uint8_t* data = buffers->data(g.outputs[0]);
  return Bytes(data, data + buffers->bytes(g.outputs[0]));
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want, float tolerance, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tolerance) << what << " element " << i;
}

TEST(OrtOnnxOps, ComparisonsWriteBoolWithBroadcasting) {
  const Ints as = {2, 3, 4}, bs = {4};
  const std::vector<float> a = SmallInts(24, 1), bv = SmallInts(4, 2);
  const std::pair<const char*, std::function<bool(float, float)>> ops[] = {
      {"Equal", [](float x, float y) { return x == y; }},        {"Less", [](float x, float y) { return x < y; }},
      {"LessOrEqual", [](float x, float y) { return x <= y; }},  {"Greater", [](float x, float y) { return x > y; }},
      {"GreaterOrEqual", [](float x, float y) { return x >= y; }}};
  for (const auto& [op, fn] : ops) {
    SCOPED_TRACE(op);
    ModelBuilder b(13);
    b.Input("a", as);
    b.Input("b", bs);
    b.Node(op, {"a", "b"}, {"y"}, "cmp");
    b.Output("y");
    ModelRun run = RunModel(b, {AsBytes(a), AsBytes(bv)});
    EXPECT_EQ(run.out_type, DataType::kBool);
    EXPECT_EQ(run.out_shape, as);
    std::vector<std::uint8_t> want(24);
    for (size_t i = 0; i < 24; ++i) want[i] = fn(a[i], bv[BroadcastIndex(i, as, bs)]) ? 1 : 0;
    EXPECT_EQ(run.out, want);
    EXPECT_EQ(RunNodeByNode(run.graph, {AsBytes(a), AsBytes(bv)}), want);
  }
}

TEST(OrtOnnxOps, LogicNotAndOrAndNotEqual) {
  const Ints s = {3, 5};
  const auto p = RandomBools(15, 3), q = RandomBools(15, 4);
  ModelBuilder b(13);
  b.Input("p", s, onnx::TensorProto::BOOL);
  b.Input("q", s, onnx::TensorProto::BOOL);
  b.Node("And", {"p", "q"}, {"and"}, "and");
  b.Node("Not", {"q"}, {"not_q"}, "not");
  b.Node("Or", {"and", "not_q"}, {"y"}, "or");  // (p and q) or not q
  b.Output("y");
  ModelRun run = RunModel(b, {p, q});
  EXPECT_EQ(run.out_type, DataType::kBool);
  std::vector<std::uint8_t> want(15);
  for (size_t i = 0; i < 15; ++i) want[i] = ((p[i] && q[i]) || !q[i]) ? 1 : 0;
  EXPECT_EQ(run.out, want);

  // not_equal has no ONNX op: it is exported as Not(Equal).
  GraphBuilder gb;
  const TensorId y = gb.Op1(OpKind::kNotEqual, "ne", {gb.Input("a", {6}), gb.Input("b", {6})});
  auto g = gb.Finish({y});
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(g->tensor(y).dtype, DataType::kBool);
  const std::vector<float> a = SmallInts(6, 5), c = SmallInts(6, 6);
  std::vector<std::uint8_t> ne(6);
  for (size_t i = 0; i < 6; ++i) ne[i] = a[i] != c[i];
  EXPECT_EQ(RunNodeByNode(*g, {AsBytes(a), AsBytes(c)}), ne);
}

TEST(OrtOnnxOps, WhereBroadcastsItsThreeInputs) {
  const Ints cs = {2, 1, 4}, xs = {2, 3, 4}, ys = {1};
  const auto cond = RandomBools(8, 7);
  const auto x = RandomFloats(24, 8);
  const std::vector<float> fill = {-1e4f};
  ModelBuilder b(13);
  b.Input("c", cs, onnx::TensorProto::BOOL);
  b.Input("x", xs);
  b.Input("f", ys);
  b.Node("Where", {"c", "x", "f"}, {"y"}, "where");
  b.Output("y");
  ModelRun run = RunModel(b, {cond, AsBytes(x), AsBytes(fill)});
  EXPECT_EQ(run.out_type, DataType::kFloat32);
  EXPECT_EQ(run.out_shape, xs);
  std::vector<float> want(24);
  for (size_t i = 0; i < 24; ++i) want[i] = cond[BroadcastIndex(i, xs, cs)] ? x[i] : fill[0];
  EXPECT_EQ(FromBytes<float>(run.out), want);
  EXPECT_EQ(FromBytes<float>(RunNodeByNode(run.graph, {cond, AsBytes(x), AsBytes(fill)})), want);
}

TEST(OrtOnnxOps, ArgMaxAndArgMinWriteInt64) {
  const Ints xs = {2, 3, 4};
  const std::vector<float> x = SmallInts(24, 9);  // ties: select_last_index decides
  for (bool last : {false, true}) {
    SCOPED_TRACE(last);
    ModelBuilder b(13);
    b.Input("x", xs);
    auto& mx = b.Node("ArgMax", {"x"}, {"y"}, "argmax");
    SetInt(mx, "axis", -1);
    SetInt(mx, "keepdims", 0);
    SetInt(mx, "select_last_index", last ? 1 : 0);
    b.Output("y");
    ModelRun run = RunModel(b, {AsBytes(x)});
    EXPECT_EQ(run.out_type, DataType::kInt64);
    EXPECT_EQ(run.out_shape, (Ints{2, 3}));
    std::vector<std::int64_t> want(6);
    for (size_t r = 0; r < 6; ++r) {
      std::int64_t best = 0;
      for (std::int64_t k = 1; k < 4; ++k) {
        const float v = x[r * 4 + static_cast<size_t>(k)], w = x[r * 4 + static_cast<size_t>(best)];
        if (v > w || (last && v == w)) best = k;
      }
      want[r] = best;
    }
    EXPECT_EQ(FromBytes<std::int64_t>(run.out), want);
  }
  ModelBuilder b(13);
  b.Input("x", xs);
  SetInt(b.Node("ArgMin", {"x"}, {"y"}, "argmin"), "axis", 1);  // keepdims 1 by default
  b.Output("y");
  ModelRun run = RunModel(b, {AsBytes(x)});
  EXPECT_EQ(run.out_shape, (Ints{2, 1, 4}));
  std::vector<std::int64_t> want(8);
  for (std::int64_t n = 0; n < 2; ++n)
    for (std::int64_t c = 0; c < 4; ++c) {
      std::int64_t best = 0;
      for (std::int64_t k = 1; k < 3; ++k)
        if (x[static_cast<size_t>((n * 3 + k) * 4 + c)] < x[static_cast<size_t>((n * 3 + best) * 4 + c)]) best = k;
      want[static_cast<size_t>(n * 4 + c)] = best;
    }
  EXPECT_EQ(FromBytes<std::int64_t>(run.out), want);
}

std::vector<float> RefLayerNorm(const std::vector<float>& x, std::int64_t rows, std::int64_t cols,
                                const std::vector<float>& scale, const std::vector<float>& bias, double eps) {
  std::vector<float> y(x.size());
  for (std::int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (std::int64_t c = 0; c < cols; ++c) mean += x[static_cast<size_t>(r * cols + c)];
    mean /= static_cast<double>(cols);
    for (std::int64_t c = 0; c < cols; ++c) var += std::pow(x[static_cast<size_t>(r * cols + c)] - mean, 2);
    var /= static_cast<double>(cols);
    for (std::int64_t c = 0; c < cols; ++c) {
      const auto i = static_cast<size_t>(r * cols + c);
      double v = (x[i] - mean) / std::sqrt(var + eps);
      if (!scale.empty()) v *= scale[static_cast<size_t>(c)];
      if (!bias.empty()) v += bias[static_cast<size_t>(c)];
      y[i] = static_cast<float>(v);
    }
  }
  return y;
}

TEST(OrtOnnxOps, LayerNormalizationWholeAtOpset17) {
  const Ints xs = {2, 5, 8};
  const auto x = RandomFloats(80, 10), scale = RandomFloats(8, 11), bias = RandomFloats(8, 12);
  ModelBuilder b(17);
  b.Input("x", xs);
  b.Floats("scale", {8}, scale);
  b.Floats("bias", {8}, bias);
  auto& ln = b.Node("LayerNormalization", {"x", "scale", "bias"}, {"y"}, "ln");
  SetFloat(ln, "epsilon", 1e-3f);
  b.Output("y");
  ModelRun run = RunModel(b, {AsBytes(x)});
  ASSERT_EQ(run.graph.num_nodes(), 1u);
  EXPECT_EQ(run.graph.node(0).kind, OpKind::kLayerNorm);
  EXPECT_EQ(run.graph.node(0).attrs.GetInt("axis", 0), -1);
  ExpectNear(FromBytes<float>(run.out), RefLayerNorm(x, 10, 8, scale, bias, 1e-3f), 1e-4f, "layer_norm");
  ExpectNear(FromBytes<float>(RunNodeByNode(run.graph, {AsBytes(x)})), RefLayerNorm(x, 10, 8, scale, bias, 1e-3f), 1e-4f,
             "layer_norm alone");
}

// PyTorch's LayerNorm at opset ≤ 16, with the variance's exponent `exponent`.
ModelBuilder DecomposedLayerNormModel(const std::vector<float>& scale, const std::vector<float>& bias, float exponent) {
  ModelBuilder b(13);
  b.Input("x", {2, 5, 8});
  b.Floats("two", {}, {exponent});
  b.Floats("eps", {}, {1e-5f});
  b.Floats("scale", {8}, scale);
  b.Floats("bias", {8}, bias);
  SetInts(b.Node("ReduceMean", {"x"}, {"mean"}, "mean"), "axes", {-1});
  b.Node("Sub", {"x", "mean"}, {"centered"}, "sub");
  b.Node("Pow", {"centered", "two"}, {"squared"}, "pow");
  SetInts(b.Node("ReduceMean", {"squared"}, {"var"}, "var"), "axes", {-1});
  b.Node("Add", {"var", "eps"}, {"shifted"}, "add_eps");
  b.Node("Sqrt", {"shifted"}, {"dev"}, "sqrt");
  b.Node("Div", {"centered", "dev"}, {"normalized"}, "div");
  b.Node("Mul", {"normalized", "scale"}, {"scaled"}, "mul");
  b.Node("Add", {"scaled", "bias"}, {"y"}, "add");
  b.Output("y");
  return b;
}

TEST(OrtOnnxOps, DecomposedLayerNormRunsAsOneNodeNamingEveryUserNode) {
  const auto x = RandomFloats(80, 13), scale = RandomFloats(8, 14), bias = RandomFloats(8, 15);
  ModelRun run = RunModel(DecomposedLayerNormModel(scale, bias, 2.0f), {AsBytes(x)});
  EXPECT_EQ(run.graph.num_nodes(), 9u) << "the user's graph keeps its nodes";
  ASSERT_EQ(run.entries.size(), 1u);
  EXPECT_EQ(run.entries[0].op, "mean+sub+pow+mean+add+sqrt+div+mul+add");
  EXPECT_EQ(run.entries[0].sources.size(), 9u);
  ExpectNear(FromBytes<float>(run.out), RefLayerNorm(x, 10, 8, scale, bias, 1e-5), 1e-4f, "decomposed layer norm");
  // Its kernel, as prediction groups it: one layer_norm.
  auto plan = PlanGraphForBackends(run.graph, std::vector<std::string>(9, "ort"), {});
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  auto grouping = GroupIntoKernels(plan->graph, FusionRules());
  ASSERT_TRUE(grouping.ok()) << grouping.status().message();
  ASSERT_EQ(grouping->kernels.size(), 1u);
  EXPECT_EQ(grouping->kernels[0].kernel.Key(), "layer_norm|bias=1,c=8,h=2,n=1,scale=1,w=5|float32");

  // A near miss (the cube, not the square) stays nine nodes, and still computes what it says.
  ModelRun cube = RunModel(DecomposedLayerNormModel(scale, bias, 3.0f), {AsBytes(x)});
  EXPECT_EQ(cube.entries.size(), 9u);
}

float RefGelu(float x, bool tanh_form) {
  if (tanh_form) return 0.5f * x * (1.0f + std::tanh(0.7978845608f * (x + 0.044715f * x * x * x)));
  return 0.5f * x * (1.0f + std::erf(x / std::sqrt(2.0f)));
}

TEST(OrtOnnxOps, GeluWholeAtOpset20BothApproximations) {
  const auto x = RandomFloats(24, 16, -4, 4);
  for (bool tanh_form : {false, true}) {
    SCOPED_TRACE(tanh_form);
    ModelBuilder b(20);
    b.Input("x", {2, 12});
    SetString(b.Node("Gelu", {"x"}, {"y"}, "gelu"), "approximate", tanh_form ? "tanh" : "none");
    b.Output("y");
    ModelRun run = RunModel(b, {AsBytes(x)});
    ASSERT_EQ(run.graph.num_nodes(), 1u);
    EXPECT_EQ(run.graph.node(0).attrs.GetString("approximate", ""), tanh_form ? "tanh" : "none");
    std::vector<float> want(24);
    for (size_t i = 0; i < 24; ++i) want[i] = RefGelu(x[i], tanh_form);
    ExpectNear(FromBytes<float>(run.out), want, 1e-4f, "gelu");
    ExpectNear(FromBytes<float>(RunNodeByNode(run.graph, {AsBytes(x)})), want, 1e-4f, "gelu alone");
  }
}

TEST(OrtOnnxOps, DecomposedGeluRunsAsOneGelu) {
  const auto x = RandomFloats(24, 17, -4, 4);
  // Exact, as PyTorch exports F.gelu at opset 13.
  ModelBuilder b(13);
  b.Input("x", {2, 12});
  b.Floats("sqrt2", {}, {1.41421356f});
  b.Floats("one", {}, {1.0f});
  b.Floats("half", {}, {0.5f});
  b.Node("Div", {"x", "sqrt2"}, {"s"}, "div");
  b.Node("Erf", {"s"}, {"e"}, "erf");
  b.Node("Add", {"e", "one"}, {"p"}, "add");
  b.Node("Mul", {"x", "p"}, {"m"}, "mul");
  b.Node("Mul", {"m", "half"}, {"y"}, "mul_half");
  b.Output("y");
  ModelRun run = RunModel(b, {AsBytes(x)});
  ASSERT_EQ(run.entries.size(), 1u);
  EXPECT_EQ(run.entries[0].op, "div+erf+add+mul+mul");
  std::vector<float> want(24);
  for (size_t i = 0; i < 24; ++i) want[i] = RefGelu(x[i], false);
  ExpectNear(FromBytes<float>(run.out), want, 1e-4f, "decomposed gelu");
}

TEST(OrtOnnxOps, BatchedMatMulOfTwoActivationsAndSoftmaxOverTheLastAxis) {
  const Ints as = {2, 3, 4, 5}, bs = {1, 3, 5, 6};  // b's batch broadcast along the first dim
  const auto a = RandomFloats(120, 18), bv = RandomFloats(90, 19);
  ModelBuilder b(13);
  b.Input("a", as);
  b.Input("b", bs);
  b.Node("MatMul", {"a", "b"}, {"scores"}, "matmul");
  SetInt(b.Node("Softmax", {"scores"}, {"y"}, "softmax"), "axis", -1);
  b.Output("y");
  ModelRun run = RunModel(b, {AsBytes(a), AsBytes(bv)});
  EXPECT_EQ(run.graph.node(0).kind, OpKind::kMatMul);
  EXPECT_EQ(run.out_shape, (Ints{2, 3, 4, 6}));
  std::vector<float> want(144);
  for (std::int64_t n = 0; n < 2; ++n)
    for (std::int64_t h = 0; h < 3; ++h)
      for (std::int64_t i = 0; i < 4; ++i) {
        double row[6], max = -1e30, sum = 0;
        for (std::int64_t j = 0; j < 6; ++j) {
          double acc = 0;
          for (std::int64_t k = 0; k < 5; ++k)
            acc += a[static_cast<size_t>(((n * 3 + h) * 4 + i) * 5 + k)] * bv[static_cast<size_t>((h * 5 + k) * 6 + j)];
          row[j] = acc;
          max = std::max(max, acc);
        }
        for (double& v : row) sum += (v = std::exp(v - max));
        for (std::int64_t j = 0; j < 6; ++j) want[static_cast<size_t>(((n * 3 + h) * 4 + i) * 6 + j)] = static_cast<float>(row[j] / sum);
      }
  ExpectNear(FromBytes<float>(run.out), want, 1e-5f, "softmax(a·b)");
  // As kernels: a batched matmul (6 batches of 4×5 · 5×6) and a softmax over rows of 6.
  auto grouping = GroupIntoKernels(run.graph, FusionRules());
  ASSERT_TRUE(grouping.ok()) << grouping.status().message();
  ASSERT_EQ(grouping->kernels.size(), 2u);
  EXPECT_EQ(grouping->kernels[0].kernel.Key(), "matmul|b=6,k=5,m=4,n=6|float32");
  EXPECT_EQ(grouping->kernels[1].kernel.Key(), "softmax|c=6,h=3,n=2,w=4|float32");
}

TEST(OrtOnnxOps, GatherOfAnEmbeddingTable) {
  const auto table = RandomFloats(40, 20);  // 10 tokens × 4
  const std::vector<std::int64_t> ids = {3, 0, 9, 9, -1, 5};
  ModelBuilder b(13);
  b.Input("ids", {2, 3}, onnx::TensorProto::INT64);
  b.Floats("table", {10, 4}, table);
  b.Node("Gather", {"table", "ids"}, {"y"}, "embed");
  b.Output("y");
  ModelRun run = RunModel(b, {AsBytes(ids)});
  EXPECT_EQ(run.out_shape, (Ints{2, 3, 4}));
  std::vector<float> want;
  for (std::int64_t id : ids)
    for (std::int64_t c = 0; c < 4; ++c) want.push_back(table[static_cast<size_t>((id < 0 ? id + 10 : id) * 4 + c)]);
  EXPECT_EQ(FromBytes<float>(run.out), want);
  auto kernel = KernelOfNodes(run.graph, {0});
  ASSERT_TRUE(kernel.ok()) << kernel.status().message();
  EXPECT_EQ(kernel->Key(), "gather|idx=6,inner=4,outer=1,rows=10|float32");
}

TEST(OrtOnnxOps, ReductionsOverAnyAxesWithAxesAsAnInputAtOpset18) {
  const Ints xs = {2, 3, 4, 5};
  const auto x = RandomFloats(120, 21);
  struct Case {
    const char* op;
    Ints axes;
    std::int64_t keepdims;
    Ints shape;
  };
  for (const Case& c : {Case{"ReduceMax", {-1, 1}, 0, {2, 4}}, Case{"ReduceMean", {0, 2}, 1, {1, 3, 1, 5}},
                        Case{"ReduceSum", {-3}, 0, {2, 4, 5}}}) {
    SCOPED_TRACE(c.op);
    ModelBuilder b(18);
    b.Input("x", xs);
    b.Int64s("axes", {static_cast<std::int64_t>(c.axes.size())}, c.axes);
    SetInt(b.Node(c.op, {"x", "axes"}, {"y"}, "reduce"), "keepdims", c.keepdims);
    b.Output("y");
    ModelRun run = RunModel(b, {AsBytes(x)});
    EXPECT_EQ(run.out_shape, c.shape);
    // Reference: over every element, into the cell of the kept coordinates.
    std::vector<bool> reduced(4, false);
    for (auto a : c.axes) reduced[static_cast<size_t>(a < 0 ? a + 4 : a)] = true;
    const std::string op = c.op;
    std::vector<double> acc(static_cast<size_t>(Count(c.shape)), op == "ReduceMax" ? -1e30 : 0.0);
    std::int64_t per_cell = 1;
    for (size_t d = 0; d < 4; ++d)
      if (reduced[d]) per_cell *= xs[d];
    for (std::int64_t i = 0; i < 120; ++i) {
      std::int64_t rest = i, cell = 0, stride = 1;
      for (size_t d = 4; d-- > 0;) {
        const std::int64_t coordinate = rest % xs[d];
        rest /= xs[d];
        if (!reduced[d]) cell += coordinate * stride, stride *= xs[d];
      }
      double& a = acc[static_cast<size_t>(cell)];
      a = op == "ReduceMax" ? std::max(a, double(x[static_cast<size_t>(i)])) : a + x[static_cast<size_t>(i)];
    }
    std::vector<float> want;
    for (double a : acc) want.push_back(static_cast<float>(op == "ReduceMean" ? a / static_cast<double>(per_cell) : a));
    ExpectNear(FromBytes<float>(run.out), want, 1e-5f, c.op);
  }
}

TEST(OrtOnnxOps, CastErfExpLogNegAbsAndPowByAConstant) {
  const auto x = RandomFloats(12, 22, -2, 2);
  ModelBuilder b(13);
  b.Input("x", {3, 4});
  b.Floats("three", {}, {3.0f});
  b.Node("Erf", {"x"}, {"erf"}, "erf");
  b.Node("Exp", {"erf"}, {"exp"}, "exp");                   // e^erf(x) > 0
  b.Node("Log", {"exp"}, {"log"}, "log");                   // erf(x)
  b.Node("Neg", {"log"}, {"neg"}, "neg");                   // -erf(x)
  b.Node("Abs", {"neg"}, {"abs"}, "abs");                   // |erf(x)|
  b.Node("Pow", {"abs", "three"}, {"pow"}, "pow");          // |erf(x)|³
  SetInt(b.Node("Cast", {"pow"}, {"f64"}, "cast"), "to", onnx::TensorProto::DOUBLE);
  SetInt(b.Node("Cast", {"f64"}, {"y"}, "cast_back"), "to", onnx::TensorProto::FLOAT);
  b.Output("y");
  ModelRun run = RunModel(b, {AsBytes(x)});
  std::vector<float> want;
  for (float v : x) want.push_back(std::pow(std::abs(std::erf(v)), 3.0f));
  ExpectNear(FromBytes<float>(run.out), want, 1e-5f, "chain");
  const Node* cast = FindNode(run.graph, "cast");
  ASSERT_NE(cast, nullptr);
  EXPECT_EQ(run.graph.tensor(cast->outputs[0]).dtype, DataType::kFloat64);
}

// Each new kind's one-kernel graph, as `latte profile` builds it, runs on ORT with the inputs the
// protocol generates (bools, and indices within the table).
TEST(OrtOnnxOps, NewKernelKindsBuildAndRunForProfiling) {
  std::vector<Kernel> kernels;
  auto add = [&](OpKind op, auto params, DataType dtype = DataType::kFloat32) {
    Kernel k;
    k.op = op;
    k.dtype = dtype;
    WriteParams(params, k);
    kernels.push_back(k);
  };
  add(OpKind::kEqual, BinaryKernelParams{{1, 4, 4, 8}, {1, 1, 1, 8}});
  add(OpKind::kGreaterEqual, BinaryKernelParams{{1, 4, 4, 8}, {1, 4, 4, 8}});
  add(OpKind::kLogicalAnd, BinaryKernelParams{{1, 4, 4, 8}, {1, 4, 4, 8}}, DataType::kBool);
  add(OpKind::kLogicalNot, NhwcParams{1, 4, 4, 8}, DataType::kBool);
  add(OpKind::kWhere, WhereKernelParams{{1, 1, 1, 8}, {1, 4, 4, 8}, {1, 1, 1, 1}});
  add(OpKind::kArgMax, ReduceKernelParams{{1, 4, 4, 8}, 8});
  add(OpKind::kLayerNorm, LayerNormKernelParams{{1, 1, 16, 32}, 1, 1});
  add(OpKind::kLayerNorm, LayerNormKernelParams{{1, 1, 16, 32}, 0, 1});
  add(OpKind::kGelu, GeluKernelParams{{1, 1, 16, 32}, 1});
  add(OpKind::kGather, GatherKernelParams{1, 1000, 64, 32});
  add(OpKind::kSoftmax, NhwcParams{1, 2, 16, 16});
  add(OpKind::kMatMul, MatMulKernelParams{4, 16, 8, 16});
  for (const Kernel& k : kernels) {
    SCOPED_TRACE(k.Key());
    auto g = BuildKernelGraph(k);
    ASSERT_TRUE(g.ok()) << g.status().message();
    Placement placement;
    placement.default_backend = "ort";
    auto executor = Executor::Create(*g, placement, Registry(), RunOptions{});
    ASSERT_TRUE(executor.ok()) << executor.status().message();
    FillRandomInputs(*g, (*executor)->buffers(), 3);
    for (TensorId in : g->inputs) {
      if (g->tensor(in).dtype != DataType::kInt64) continue;
      const auto* ids = (*executor)->buffers().as<std::int64_t>(in);
      const size_t n = (*executor)->buffers().bytes(in) / sizeof(std::int64_t);
      EXPECT_TRUE(std::all_of(ids, ids + n, [](std::int64_t v) { return v >= 0 && v < 1000; }));
      EXPECT_TRUE(std::any_of(ids, ids + n, [](std::int64_t v) { return v > 0; })) << "indices are drawn, not zeros";
    }
    EXPECT_TRUE((*executor)->Run().ok());
  }
}

}  // namespace
}  // namespace latte
