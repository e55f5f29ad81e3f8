// End to end: every node of a real TFLite model, in order, on one set of buffers.

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <random>

#include "import/import.h"
#include "run/tensor_buffers.h"
#include "run/xnnpack/xnnpack_backend.h"
#include "test_paths.h"

namespace latte {
namespace {

// Runs every node xnnpack supports, in order, on one set of buffers with a random input;
// fails if a supported node does not prepare or run, or writes a non-finite value. Returns
// the nodes it does not support, one a line, with the reason.
std::string RunModel(const std::string& file, int threads) {
  ImportOptions options;
  if (file.ends_with(".onnx")) options.input_shapes["x"] = file.find("_cls_") != std::string::npos ? Shape{1, 3, 48, 192} : Shape{1, 3, 64, 64};
  auto graph = ImportModel(latte::testing::ModelPath(file), options);
  if (!graph.ok()) {
    ADD_FAILURE() << file << ": " << graph.status().message();
    return {};
  }
  RunOptions run;
  run.num_threads = threads;
  auto backend = XnnpackBackend::Create(run);
  auto buffers = TensorBuffers::Allocate(*graph);
  if (!backend.ok() || !buffers.ok()) {
    ADD_FAILURE() << file << ": " << backend.status().message() << buffers.status().message();
    return {};
  }
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (TensorId input : graph->inputs) {
    float* data = buffers->mutable_as<float>(input);
    for (size_t i = 0; data != nullptr && i < buffers->bytes(input) / sizeof(float); ++i) data[i] = dist(rng);
  }
  std::string unsupported;
  for (NodeId n = 0; n < static_cast<NodeId>(graph->num_nodes()); ++n) {
    Support support = (*backend)->Supports(*graph, n);
    if (!support.ok()) {
      unsupported += "\n  " + DescribeNode(*graph, n) + ": " + support.why();
      continue;
    }
    auto prepared = (*backend)->Prepare(*graph, n);
    if (!prepared.ok()) {
      ADD_FAILURE() << file << ": " << DescribeNode(*graph, n) << ": " << prepared.status().message();
      continue;
    }
    Status status = (*prepared)->Run(*buffers);
    if (!status.ok()) {
      ADD_FAILURE() << file << ": " << DescribeNode(*graph, n) << ": " << status.message();
      continue;
    }
    for (TensorId out : graph->node(n).outputs) {
      const float* data = buffers->as<float>(out);
      for (size_t i = 0; i < buffers->bytes(out) / sizeof(float); ++i)
        if (!std::isfinite(data[i])) {
          ADD_FAILURE() << file << ": " << DescribeNode(*graph, n) << " output element " << i << " is " << data[i];
          break;
        }
    }
  }
  return unsupported;
}

TEST(XnnpackModel, RunsEveryNodeOfFaceDetection) {
  const char* file = "face_detection_short_range.tflite";
  LATTE_REQUIRE_MODEL(file);
  const std::string unsupported = RunModel(file, 2);
  EXPECT_TRUE(unsupported.empty()) << "nodes xnnpack does not run:" << unsupported;
}

// The other real models (the ONNX ones are NCHW): every node Supports() accepts must prepare and run (the "no"
// answers are printed, not failed: these models use ops beyond this backend's list).
TEST(XnnpackModel, SupportedNodesOfOtherModelsRun) {
  for (const char* file : {"selfie_segmentation.tflite", "hand_landmark_lite.tflite", "pose_landmark_lite.tflite",
                           "ch_ppocr_mobile_v2.0_cls_infer.onnx", "ch_PP-OCRv4_det_infer.onnx"}) {
    LATTE_REQUIRE_MODEL(file);
    const std::string unsupported = RunModel(file, 1);
    if (!unsupported.empty()) std::cout << file << ": nodes xnnpack does not run:" << unsupported << "\n";
  }
}

}  // namespace
}  // namespace latte
