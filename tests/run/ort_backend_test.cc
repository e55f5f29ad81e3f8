// The ONNX Runtime backend: loading (and a clear error without the library), whole graphs on
// the six real models against XNNPACK on the same random input, single nodes in a mixed
// placement, and per-node times from ORT's profiler.

#include <gtest/gtest.h>

#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "import/import.h"
#include "ir/kernel_graph.h"
#include "ir/nchwc_layout.h"
#include "run/benchmark.h"
#include "executor_test_util.h"
#include "run/executor.h"
#include "run/onednn/onednn_backend.h"
#include "run/ort/ort_backend.h"
#include "run/xnnpack/xnnpack_backend.h"
#include "test_paths.h"

namespace latte {
namespace {

using latte::testing::ExpectOutputsClose;
using latte::testing::On;
using latte::testing::Outputs;

BackendRegistry& Registry() {
  static BackendRegistry registry = [] {
    BackendRegistry r;
    RegisterXnnpackBackend(r);
    RegisterOnednnBackend(r);
    RegisterOrtBackend(r);
    return r;
  }();
  return registry;
}

Expected<Graph> Load(const std::string& file) {
  ImportOptions options;
  if (file.ends_with(".onnx"))
    options.input_shapes["x"] = file.find("_cls_") != std::string::npos ? Shape{1, 3, 48, 192} : Shape{1, 3, 128, 128};
  return ImportModel(latte::testing::ModelPath(file), options);
}

// Runs `graph` once under `placement` (two threads) on random inputs; returns every output.
Expected<Outputs> RunGraph(const Graph& graph, const Placement& placement, std::vector<NodeAssignment>* assignments = nullptr) {
  LATTE_ASSIGN_OR_RETURN(latte::testing::GraphRun run, latte::testing::RunGraph(graph, placement, Registry(), 11, 2));
  if (assignments) *assignments = run.assignments;
  return std::move(run.outputs);
}

TEST(OrtBackend, LoadsAndSaysItsVersion) {
  auto backend = OrtBackend::Create(RunOptions{});
  ASSERT_TRUE(backend.ok()) << backend.status().message();
  EXPECT_EQ((*backend)->Name(), "ort");
  EXPECT_EQ((*backend)->Version().rfind("ONNX Runtime 1.", 0), 0u) << (*backend)->Version();
  EXPECT_NE((*backend)->Version().find("1 thread"), std::string::npos) << (*backend)->Version();
  EXPECT_TRUE((*backend)->RunsWholeGraphs());
}

TEST(OrtBackend, MissingLibraryIsAClearError) {
  const std::string missing = "/nonexistent/latte-test/libonnxruntime.so";
  ASSERT_EQ(setenv("LATTE_ORT_LIBRARY", missing.c_str(), 1), 0);
  auto backend = OrtBackend::Create(RunOptions{});
  unsetenv("LATTE_ORT_LIBRARY");
  ASSERT_FALSE(backend.ok());
  EXPECT_EQ(backend.status().code(), StatusCode::kNotFound);
  EXPECT_NE(backend.status().message().find(missing), std::string::npos) << backend.status().message();
  EXPECT_NE(backend.status().message().find("scripts/setup"), std::string::npos) << backend.status().message();
  // Through the registry, as `latte bench --backend ort` creates it.
  ASSERT_EQ(setenv("LATTE_ORT_LIBRARY", missing.c_str(), 1), 0);
  auto graph = Load("hand_landmark_lite.tflite");
  ASSERT_TRUE(graph.ok());
  auto run = RunGraph(*graph, On("ort"));
  unsetenv("LATTE_ORT_LIBRARY");
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.status().message().find("scripts/setup"), std::string::npos) << run.status().message();
}

TEST(OrtBackend, AFileThatIsNotOnnxRuntimeIsRefused) {
  // A real shared library without OrtGetApiBase.
  auto loaded = LoadOnnxRuntime(OrtLibraryPath() + ".not-there");
  EXPECT_EQ(loaded.status().code(), StatusCode::kNotFound);
  const std::string model = latte::testing::ModelPath("hand_landmark_lite.tflite");
  auto not_a_library = LoadOnnxRuntime(model);
  ASSERT_FALSE(not_a_library.ok());
  EXPECT_NE(not_a_library.status().message().find(model), std::string::npos) << not_a_library.status().message();
}

// int8 runs (tests/run/int8_test.cc); bf16 is refused, saying why.
TEST(OrtBackend, Bf16IsRefusedSayingWhy) {
  RunOptions options;
  options.precision = Precision::kBf16;
  auto backend = OrtBackend::Create(options);
  ASSERT_TRUE(backend.ok()) << backend.status().message();
  EXPECT_FALSE((*backend)->RunsPrecision(Precision::kBf16).ok());
  EXPECT_TRUE((*backend)->RunsPrecision(Precision::kInt8).ok());
  auto graph = Load("hand_landmark_lite.tflite");
  ASSERT_TRUE(graph.ok());
  Support support = (*backend)->Supports(*graph, 0);
  EXPECT_FALSE(support.ok());
  EXPECT_EQ(support.why(), "bf16 unsupported on ort, because Latte hands ONNX Runtime fp32 models only (no bf16 export)");
}

class OrtRealModel : public ::testing::TestWithParam<const char*> {};

// The whole model on ORT agrees with the same model on XNNPACK (the ONNX ones converted to NHWC
// by the executor); where XNNPACK cannot run a node, oneDNN is the reference instead.
TEST_P(OrtRealModel, WholeGraphAgreesWithXnnpack) {
  const std::string file = GetParam();
  LATTE_REQUIRE_MODEL(file);
  auto graph = Load(file);
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  std::vector<NodeAssignment> assignments;
  auto ort = RunGraph(*graph, On("ort"), &assignments);
  ASSERT_TRUE(ort.ok()) << ort.status().message();
  ASSERT_EQ(assignments.size(), graph->num_nodes());
  for (const auto& a : assignments) EXPECT_EQ(a.backend, "ort");
  auto reference = RunGraph(*graph, On("xnnpack"));
  std::string which = "xnnpack";
  if (!reference.ok()) {
    const std::string why = reference.status().message();
    reference = RunGraph(*graph, On("onednn", "xnnpack"));
    which = "onednn (xnnpack could not: " + why + ")";
  }
  ASSERT_TRUE(reference.ok()) << "no reference backend runs " << file << ": " << reference.status().message();
  ExpectOutputsClose(*ort, *reference, 2e-3, file + ": ort vs " + which);
}

INSTANTIATE_TEST_SUITE_P(SixModels, OrtRealModel, ::testing::ValuesIn(latte::testing::kRealModels),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

// Convs on ORT one node at a time (one-node models), the rest on XNNPACK: the same outputs.
TEST(OrtBackend, SingleNodesInAMixedPlacementAgreeWithXnnpack) {
  const char* file = "face_detection_short_range.tflite";
  LATTE_REQUIRE_MODEL(file);
  auto graph = Load(file);
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  Placement mixed = On("xnnpack");
  mixed.by_op_kind[OpKind::kConv2D] = "ort";
  std::vector<NodeAssignment> assignments;
  auto got = RunGraph(*graph, mixed, &assignments);
  ASSERT_TRUE(got.ok()) << got.status().message();
  int on_ort = 0;
  for (NodeId id = 0; id < static_cast<NodeId>(graph->num_nodes()); ++id)
    if (graph->node(id).kind == OpKind::kConv2D) on_ort += assignments[id].backend == "ort";
  EXPECT_GT(on_ort, 10);
  auto want = RunGraph(*graph, On("xnnpack"));
  ASSERT_TRUE(want.ok()) << want.status().message();
  ExpectOutputsClose(*got, *want, 1e-3, "mixed ort/xnnpack vs xnnpack");
}

TEST(OrtBackend, ProfiledRunsGiveEachComputeNodeItsOwnTime) {
  const char* file = "hand_landmark_lite.tflite";
  LATTE_REQUIRE_MODEL(file);
  auto graph = Load(file);
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  auto executor = Executor::Create(*graph, On("ort"), Registry(), RunOptions{});
  ASSERT_TRUE(executor.ok()) << executor.status().message();
  FillRandomInputs(*graph, (*executor)->buffers());
  std::vector<double> us;
  for (int i = 0; i < 2; ++i) ASSERT_TRUE((*executor)->RunProfiled(us).ok());
  const auto& entries = (*executor)->entries();
  ASSERT_EQ(us.size(), entries.size());
  int convs = 0, timed = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    EXPECT_GE(us[i], 0.0);
    if (entries[i].op.rfind("conv2d", 0) == 0 || entries[i].op.rfind("depthwise_conv2d", 0) == 0) {
      ++convs;
      timed += us[i] > 0.0;
    }
  }
  EXPECT_GT(convs, 20);
  EXPECT_EQ(timed, convs) << "conv nodes with no time from ORT's profiler";
}

TEST(OrtBackend, PerNodeTimesOfABenchmarkAddUpToTheUnprofiledRun) {
  const char* file = "hand_landmark_lite.tflite";
  LATTE_REQUIRE_MODEL(file);
  auto graph = Load(file);
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  BenchOptions options;
  options.placement = On("ort");
  options.op_profiling = true;
  options.measure.num_runs = 3;
  options.measure.min_secs = 0;
  auto result = BenchmarkGraph(*graph, options, Registry());
  ASSERT_TRUE(result.ok()) << result.status().message();
  double sum = 0;
  for (double us : result->node_avg_us) sum += us;
  EXPECT_NEAR(sum, result->latency.stats.p50, 1e-6 * result->latency.stats.p50);
  EXPECT_GT(result->layout_avg_us, 0.0) << "ORT runs the model's convs in its blocked layout";
  EXPECT_LT(result->layout_avg_us, sum);
}

// A global average pool alone on ORT: its exported Transposes (NHWC in, NCHW for ORT) are timed
// as layout, a part of the node's time.
TEST(OrtBackend, AKernelAloneCountsItsLayoutTransposesAsLayoutTime) {
  Kernel kernel;
  kernel.op = OpKind::kGlobalAvgPool;
  kernel.params = {{"n", 1}, {"h", 64}, {"w", 64}, {"c", 19}};
  auto graph = BuildKernelGraph(kernel);
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  auto executor = Executor::Create(*graph, On("ort"), Registry(), RunOptions{});
  ASSERT_TRUE(executor.ok()) << executor.status().message();
  FillRandomInputs(*graph, (*executor)->buffers());
  std::vector<double> us;
  LayoutUs layout;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE((*executor)->RunProfiled(us, &layout).ok());
  ASSERT_EQ(us.size(), 1u);
  EXPECT_GT(layout.transposes, 0.0);
  EXPECT_EQ(layout.reorders, 0.0) << "a pool on 19 channels does not run blocked";
  EXPECT_LT(layout.total(), us[0]);
}

// ONNX Runtime runs an elementwise op's clamp as a Clip node of its own (an add+relu6 costs 66%
// more than the add), its conv's inside FusedConv: packs for it pool no elementwise clamp siblings.
TEST(OrtBackend, SaysWhichOpsItClampsApart) {
  ASSERT_NE(Registry().Find("ort"), nullptr);
  EXPECT_EQ(Registry().Find("ort")->clamps_run_apart,
            (std::set<OpKind>{OpKind::kAdd, OpKind::kSub, OpKind::kMul, OpKind::kDiv}));
  EXPECT_TRUE(Registry().Find("xnnpack")->clamps_run_apart.empty());
  EXPECT_TRUE(Registry().Find("onednn")->clamps_run_apart.empty());
}

// The NCHWc pass as ir/nchwc_layout models it, checked against ORT itself: a residual add whose
// other operand is a graph input runs as a node of its own; fed from a blocked producer
// (BuildBlockedResidualGraph), ORT runs it inside the conv, and the add's node has no event.
TEST(OrtBackend, RunsAResidualAddInsideTheConvWhereTheNchwcPassHoldsBothOperandsBlocked) {
  const BackendFactory* ort = Registry().Find("ort");
  ASSERT_NE(ort, nullptr);
  if (ort->nchwc_block == 0) GTEST_SKIP() << "no NCHWc pass on this CPU";
  Kernel kernel;
  kernel.op = OpKind::kConv2D;
  kernel.params = {{"n", 1},  {"ih", 28}, {"iw", 28}, {"ic", 32}, {"oc", 32}, {"kh", 3}, {"kw", 3}, {"sh", 1},
                   {"sw", 1}, {"g", 1},   {"dh", 1},  {"dw", 1},  {"pt", 1},  {"pl", 1}, {"pb", 1}, {"pr", 1}, {"bias", 1}};
  kernel.fused = {OpKind::kAdd, OpKind::kRelu};
  auto add_us = [&](const Graph& graph) -> double {
    auto executor = Executor::Create(graph, On("ort"), Registry(), RunOptions{});
    EXPECT_TRUE(executor.ok()) << executor.status().message();
    if (!executor.ok()) return -1;
    FillRandomInputs(graph, (*executor)->buffers());
    std::vector<double> us;
    for (int i = 0; i < 3; ++i) EXPECT_TRUE((*executor)->RunProfiled(us).ok());
    for (std::size_t i = 0; i < (*executor)->entries().size(); ++i)
      for (NodeId source : (*executor)->entries()[i].sources)
        if (graph.node(source).kind == OpKind::kAdd) return us[i];
    ADD_FAILURE() << "no entry for the add";
    return -1;
  };
  auto plain = BuildKernelGraph(kernel);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_GT(add_us(*plain), 0.0) << "a graph input is never blocked: the add runs apart";
  auto blocked = BuildBlockedResidualGraph(kernel, ort->nchwc_block);
  ASSERT_TRUE(blocked.ok()) << blocked.status().message();
  EXPECT_EQ(add_us(blocked->graph), 0.0) << "both operands blocked: the add runs inside the conv";
}

// Events of one profiled run: a conv ORT wrapped in reorders, a hard-swish it split into two
// nodes of its own, an add. Node 1 (the hard-swish) has no event of its own.
TEST(OrtProfile, ReordersGoToTheNodesTheyServeAndSplitNodesToTheNodeTheyReplace) {
  const std::vector<OrtProfileEvent> events = {{-1, "ReorderInput", 3}, {0, "Conv", 10},    {-1, "ReorderOutput", 2},
                                               {-1, "HardSigmoid", 4},  {-1, "Mul", 5},      {2, "Add", 6},
                                               {-1, "ReorderInput", 1}, {-1, "ReorderOutput", 1}};
  std::vector<double> node_us(3, 0.0);
  LayoutUs layout;
  AttributeOrtEvents(events, node_us, layout);
  EXPECT_EQ(node_us, (std::vector<double>{15, 9, 8}));  // the trailing reorders go to the last node
  EXPECT_DOUBLE_EQ(layout.reorders, 7);
  EXPECT_DOUBLE_EQ(layout.transposes, 0);
  // Run again: times add up.
  AttributeOrtEvents(events, node_us, layout);
  EXPECT_EQ(node_us, (std::vector<double>{30, 18, 16}));
  EXPECT_DOUBLE_EQ(layout.reorders, 14);
}

// A pool exported alone keeps the Transposes around it (a model's neighbouring pairs cancel):
// they are its node's time, and layout time, apart from ORT's own reorders (the in-graph context
// sets a network's reorders, and only those, against the bytes ORT reorders).
TEST(OrtProfile, TheExportersLayoutTransposesAreLayoutTimeOfTheirNode) {
  OrtProfileEvent pre{0, "Transpose", 4}, post{0, "Transpose", 3};
  pre.layout_transpose = post.layout_transpose = true;
  const std::vector<OrtProfileEvent> events = {pre, {0, "GlobalAveragePool", 2}, post, {1, "Transpose", 5}};
  std::vector<double> node_us(2, 0.0);
  LayoutUs layout;
  AttributeOrtEvents(events, node_us, layout);
  EXPECT_EQ(node_us, (std::vector<double>{9, 5}));
  EXPECT_DOUBLE_EQ(layout.transposes, 7);  // node 1's Transpose is the model's own op
  EXPECT_DOUBLE_EQ(layout.reorders, 0);
  EXPECT_DOUBLE_EQ(layout.total(), 7);
}

TEST(OrtProfile, ANodeOrtMadeWithNoNodeToReplaceGoesToTheNextNode) {
  const std::vector<OrtProfileEvent> events = {{0, "Conv", 10}, {-1, "Transpose", 4}, {1, "Add", 6}};
  std::vector<double> node_us(2, 0.0);
  LayoutUs layout;
  AttributeOrtEvents(events, node_us, layout);
  EXPECT_EQ(node_us, (std::vector<double>{10, 10}));
  EXPECT_DOUBLE_EQ(layout.total(), 0);
}

}  // namespace
}  // namespace latte
