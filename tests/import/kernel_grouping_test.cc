// Kernels of the real models: every node in exactly one kernel or listed as uncovered, conv
// params as op_params reads them, and every kernel rebuildable as a one-kernel graph.

#include <gtest/gtest.h>

#include <iostream>
#include <map>

#include "import/import.h"
#include "ir/kernel_graph.h"
#include "ir/op_params.h"
#include "test_paths.h"

namespace latte {
namespace {

Expected<Graph> Load(const std::string& file) {
  ImportOptions options;
  if (file == "ch_ppocr_mobile_v2.0_cls_infer.onnx") options.input_shapes["x"] = {1, 3, 48, 192};
  if (file == "ch_PP-OCRv4_det_infer.onnx") options.input_shapes["x"] = {1, 3, 96, 160};
  return ImportModel(testing::ModelPath(file), options);
}

void CheckModel(const std::string& file) {
  SCOPED_TRACE(file);
  Expected<Graph> graph = Load(file);
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  Expected<KernelGrouping> grouping = GroupIntoKernels(*graph, FusionRules::Default());
  ASSERT_TRUE(grouping.ok()) << grouping.status().message();

  std::vector<int> seen(graph->num_nodes(), 0);
  size_t conv_nodes = 0, conv_kernels = 0, fused_nodes = 0;
  for (const Node& node : graph->nodes())
    if (node.kind == OpKind::kConv2D || node.kind == OpKind::kDepthwiseConv2D || node.kind == OpKind::kTransposeConv2D)
      ++conv_nodes;
  for (const KernelGroup& group : grouping->kernels) {
    ASSERT_FALSE(group.nodes.empty());
    for (NodeId id : group.nodes) ++seen.at(static_cast<size_t>(id));
    fused_nodes += group.nodes.size() - 1;
    const Node& main = graph->node(group.nodes[0]);
    EXPECT_EQ(group.kernel.op, main.kind);
    // The group's kernel is what KernelOfNodes says of its nodes.
    Expected<Kernel> again = KernelOfNodes(*graph, group.nodes);
    ASSERT_TRUE(again.ok()) << again.status().message();
    EXPECT_EQ(*again, group.kernel);
    if (main.kind == OpKind::kConv2D || main.kind == OpKind::kDepthwiseConv2D || main.kind == OpKind::kTransposeConv2D) {
      ++conv_kernels;
      Expected<ConvParams> p = GetConvParams(*graph, main);
      ASSERT_TRUE(p.ok()) << p.status().message();
      const Kernel& k = group.kernel;
      EXPECT_EQ(k.Param("n"), p->batch);
      EXPECT_EQ(k.Param("ih"), p->in_h);
      EXPECT_EQ(k.Param("iw"), p->in_w);
      EXPECT_EQ(k.Param("ic"), p->in_c);
      EXPECT_EQ(k.Param("oc"), p->out_c);
      EXPECT_EQ(k.Param("kh"), p->kernel_h);
      EXPECT_EQ(k.Param("kw"), p->kernel_w);
      EXPECT_EQ(k.Param("sh"), p->stride_h);
      EXPECT_EQ(k.Param("sw"), p->stride_w);
      EXPECT_EQ(k.Param("dh"), p->dilation_h);
      EXPECT_EQ(k.Param("dw"), p->dilation_w);
      EXPECT_EQ(k.Param("g"), p->groups);
      EXPECT_EQ(k.Param("pt"), p->pads.top);
      EXPECT_EQ(k.Param("pl"), p->pads.left);
      EXPECT_EQ(k.Param("pb"), p->pads.bottom);
      EXPECT_EQ(k.Param("pr"), p->pads.right);
      EXPECT_EQ(k.Param("bias", -1), p->has_bias ? 1 : 0);
      // The fused activation attribute is always part of the kernel.
      if (p->activation != "none") {
        ASSERT_FALSE(k.fused.empty());
        EXPECT_EQ(OpName(k.fused[0]), p->activation);
      }
    }
    // Every float32 kernel of a real model builds as a one-kernel graph that reads back the same.
    if (group.kernel.dtype == DataType::kFloat32) {
      Expected<Graph> one = BuildKernelGraph(group.kernel);
      ASSERT_TRUE(one.ok()) << group.kernel.Key() << ": " << one.status().message();
      std::vector<NodeId> all(one->num_nodes());
      for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<NodeId>(i);
      Expected<Kernel> back = KernelOfNodes(*one, all);
      ASSERT_TRUE(back.ok()) << back.status().message();
      EXPECT_EQ(*back, group.kernel);
    }
  }
  for (const UncoveredNode& u : grouping->uncovered) {
    ++seen.at(static_cast<size_t>(u.node));
    EXPECT_EQ(u.op, NodeOpName(graph->node(u.node)));
    EXPECT_FALSE(u.why.empty());
  }
  for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], 1) << DescribeNode(*graph, static_cast<NodeId>(i));
  EXPECT_EQ(conv_kernels, conv_nodes);
  EXPECT_GT(fused_nodes, 0u);  // each of these models has conv + activation or residual chains
  std::map<std::string, int> kinds;
  for (const KernelGroup& group : grouping->kernels) ++kinds[group.kernel.Kind()];
  std::string summary;
  for (const auto& [kind, count] : kinds) summary += " " + kind + "×" + std::to_string(count);
  for (const UncoveredNode& u : grouping->uncovered) summary += "\n  uncovered " + u.op + ": " + u.why;
  std::cout << file << ": " << graph->num_nodes() << " nodes, " << grouping->kernels.size() << " kernels ("
            << fused_nodes << " nodes fused)," << summary << "\n";
}

TEST(KernelGroupingTest, FaceDetectionShortRange) {
  LATTE_REQUIRE_MODEL("face_detection_short_range.tflite");
  CheckModel("face_detection_short_range.tflite");
}

TEST(KernelGroupingTest, PoseLandmarkLite) {
  LATTE_REQUIRE_MODEL("pose_landmark_lite.tflite");
  CheckModel("pose_landmark_lite.tflite");
}

TEST(KernelGroupingTest, PaddleOcrClassifier) {
  LATTE_REQUIRE_MODEL("ch_ppocr_mobile_v2.0_cls_infer.onnx");
  CheckModel("ch_ppocr_mobile_v2.0_cls_infer.onnx");
}

TEST(KernelGroupingTest, AllRealModelsPartitionIntoKernels) {
  for (const char* file : testing::kRealModels) {
    LATTE_REQUIRE_MODEL(file);
    CheckModel(file);
  }
}

}  // namespace
}  // namespace latte
