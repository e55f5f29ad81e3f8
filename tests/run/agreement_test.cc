// The six real models on xnnpack and on onednn, each backend running every node (no fallback),
// from the same random input: every output must agree. Two independent kernel libraries agreeing
// on whole models is the end-to-end check that layout conversion, activation folding and each
// backend's kernels compute what the model means.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "import/import.h"
#include "run/executor.h"
#include "run/onednn/onednn_backend.h"
#include "run/xnnpack/xnnpack_backend.h"
#include "test_paths.h"

namespace latte {
namespace {

using Outputs = std::vector<std::vector<float>>;

ImportOptions OptionsFor(const std::string& file) {
  ImportOptions options;
  // The PaddleOCR inputs are dynamic: the sizes their documentation uses (detection at 640 is
  // slow on one thread; 320 exercises the same graph).
  if (file == "ch_ppocr_mobile_v2.0_cls_infer.onnx") options.input_shapes["x"] = {1, 3, 48, 192};
  if (file == "ch_PP-OCRv4_det_infer.onnx") options.input_shapes["x"] = {1, 3, 320, 320};
  return options;
}

// Every output of `graph` run on `backend` alone; records a failure (and returns {}) when the
// backend cannot run every node.
Outputs RunAll(const Graph& graph, const std::string& backend, const BackendRegistry& registry, int* entries) {
  Placement placement;
  placement.default_backend = backend;
  auto executor = Executor::Create(graph, placement, registry, RunOptions{});
  if (!executor.ok()) {
    ADD_FAILURE() << backend << ": " << executor.status().message();
    return {};
  }
  *entries = static_cast<int>((*executor)->entries().size());
  FillRandomInputs(graph, (*executor)->buffers(), 5);
  Status status = (*executor)->Run();
  if (!status.ok()) {
    ADD_FAILURE() << backend << ": " << status.message();
    return {};
  }
  Outputs out;
  for (TensorId id : graph.outputs) {
    const float* data = (*executor)->buffers().as<float>(id);
    out.emplace_back(data, data + (*executor)->buffers().bytes(id) / sizeof(float));
  }
  return out;
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
  int xnn_entries = 0, dnnl_entries = 0;
  const Outputs want = RunAll(*graph, "xnnpack", registry, &xnn_entries);
  const Outputs got = RunAll(*graph, "onednn", registry, &dnnl_entries);
  ASSERT_EQ(want.size(), graph->outputs.size()) << file;
  ASSERT_EQ(got.size(), want.size()) << file;
  EXPECT_EQ(xnn_entries, dnnl_entries) << file << ": both backends run the same prepared graph";
  for (size_t o = 0; o < want.size(); ++o) {
    const std::string& name = graph->tensor(graph->outputs[o]).name;
    ASSERT_EQ(got[o].size(), want[o].size()) << file << " output " << name;
    ASSERT_FALSE(want[o].empty()) << file << " output " << name;
    // Tolerance relative to the output's scale: both run fp32, but sum in different orders (and
    // approximate exp differently) through dozens of layers.
    float scale = 1.0f, worst = 0.0f;
    size_t at = 0;
    for (float v : want[o]) scale = std::max(scale, std::abs(v));
    for (size_t i = 0; i < want[o].size(); ++i) {
      ASSERT_TRUE(std::isfinite(want[o][i]) && std::isfinite(got[o][i])) << file << " output " << name << " element " << i;
      const float err = std::abs(got[o][i] - want[o][i]);
      if (err > worst) worst = err, at = i;
    }
    EXPECT_LE(worst, 1e-3f * scale) << file << " output " << name << ": element " << at << " is " << got[o][at]
                                    << " on onednn, " << want[o][at] << " on xnnpack";
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
