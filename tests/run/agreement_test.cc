// The six real models on xnnpack and on onednn, each backend running every node (no fallback),
// from the same random input: every output must agree. Two independent kernel libraries agreeing
// on whole models is the end-to-end check that layout conversion, activation folding and each
// backend's kernels compute what the model means.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "import/import.h"
#include "executor_test_util.h"
#include "run/executor.h"
#include "run/onednn/onednn_backend.h"
#include "run/ort/ort_backend.h"
#include "run/xnnpack/xnnpack_backend.h"
#include "test_paths.h"

namespace latte {
namespace {

ImportOptions OptionsFor(const std::string& file) {
  ImportOptions options;
  // The PaddleOCR inputs are dynamic: the sizes their documentation uses (detection at 640 is
  // slow on one thread; 320 exercises the same graph).
  if (file == "ch_ppocr_mobile_v2.0_cls_infer.onnx") options.input_shapes["x"] = {1, 3, 48, 192};
  if (file == "ch_PP-OCRv4_det_infer.onnx") options.input_shapes["x"] = {1, 3, 320, 320};
  if (file == "ch_PP-OCRv4_rec_infer.onnx") options.input_shapes["x"] = {1, 3, 48, 320};
  return options;
}

class Agreement : public ::testing::TestWithParam<const char*> {};

TEST_P(Agreement, XnnpackAndOnednnGiveTheSameOutputs) {
  const std::string file = GetParam();
  LATTE_REQUIRE_MODEL(file);
  auto graph = ImportModel(latte::testing::ModelPath(file), OptionsFor(file));
  ASSERT_TRUE(graph.ok()) << file << ": " << graph.status().message();
  BackendRegistry registry;
  RegisterXnnpackBackend(registry);
  RegisterOnednnBackend(registry);
  // Each backend alone (no fallback): a node one of them cannot run fails the test.
  auto want = latte::testing::RunGraph(*graph, latte::testing::On("xnnpack"), registry, 5);
  ASSERT_TRUE(want.ok()) << file << " on xnnpack: " << want.status().message();
  auto got = latte::testing::RunGraph(*graph, latte::testing::On("onednn"), registry, 5);
  ASSERT_TRUE(got.ok()) << file << " on onednn: " << got.status().message();
  ASSERT_EQ(want->outputs.size(), graph->outputs.size()) << file;
  EXPECT_EQ(want->entries, got->entries) << file << ": both backends run the same prepared graph";
  // Both run fp32, but sum in different orders (and approximate exp differently) through dozens
  // of layers.
  latte::testing::ExpectOutputsClose(got->outputs, want->outputs, 1e-3, file + ": onednn vs xnnpack");
}

// Two more models oneDNN runs whole, each against a backend that runs it whole too: the sparse
// face detector (its classifier's depth_to_space) against xnnpack, and PP-OCRv4's recogniser (its
// attention's slices, matmuls, layer norms) against ONNX Runtime (xnnpack has no batched matmul).
TEST(AgreementOnednn, SparseFaceDetectionAndPpOcrRecognition) {
  for (const auto& [file, reference] : {std::pair<std::string, std::string>{"face_detection_full_range_sparse.tflite", "xnnpack"},
                                        std::pair<std::string, std::string>{"ch_PP-OCRv4_rec_infer.onnx", "ort"}}) {
    LATTE_REQUIRE_MODEL(file);
    auto graph = ImportModel(latte::testing::ModelPath(file), OptionsFor(file));
    ASSERT_TRUE(graph.ok()) << file << ": " << graph.status().message();
    BackendRegistry registry;
    RegisterXnnpackBackend(registry);
    RegisterOnednnBackend(registry);
    RegisterOrtBackend(registry);
    auto want = latte::testing::RunGraph(*graph, latte::testing::On(reference), registry, 5);
    ASSERT_TRUE(want.ok()) << file << " on " << reference << ": " << want.status().message();
    auto got = latte::testing::RunGraph(*graph, latte::testing::On("onednn"), registry, 5);
    ASSERT_TRUE(got.ok()) << file << " on onednn: " << got.status().message();
    latte::testing::ExpectOutputsClose(got->outputs, want->outputs, 1e-3, file + ": onednn vs " + reference);
  }
}

INSTANTIATE_TEST_SUITE_P(RealModels, Agreement, ::testing::ValuesIn(latte::testing::kRealModels),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           std::string name = info.param;
                           std::replace_if(name.begin(), name.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
                           return name;
                         });

}  // namespace
}  // namespace latte
