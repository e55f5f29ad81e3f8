// The transformer encoders of bench/encoders run whole on ONNX Runtime and on Latte's oneDNN
// executor (every node on oneDNN but what it lacks, which falls back to ORT by name), from the
// same random input: the outputs agree. Both opsets carry the same weights (the same seed, drawn
// in the same order), so the opset-13 form, whose layer norms and GELUs arrive decomposed and run
// as one node each, must compute what the opset-17 form computes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "encoders/onnx_encoders.h"
#include "import/import.h"
#include "run/executor.h"
#include "run/onednn/onednn_backend.h"
#include "run/ort/ort_backend.h"

namespace latte {
namespace {

using Outputs = std::vector<std::vector<float>>;
using encoders::EncoderConfig;

BackendRegistry& Registry() {
  static BackendRegistry registry = [] {
    BackendRegistry r;
    RegisterOnednnBackend(r);
    RegisterOrtBackend(r);
    return r;
  }();
  return registry;
}

Graph Import(const EncoderConfig& config) {
  const std::string bytes = encoders::ModelBytes(config);
  auto graph = ImportModelBytes({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()}, ModelFormat::kOnnx, {});
  EXPECT_TRUE(graph.ok()) << config.name << ": " << graph.status().message();
  return graph.ok() ? std::move(graph).value() : Graph{};
}

// Every output of `graph` on `backend` (falling back to `fallback` where it cannot run a node),
// and how many nodes fell back.
Outputs RunOn(const Graph& graph, const std::string& backend, const std::string& fallback, int* fell_back) {
  Placement placement;
  placement.default_backend = backend;
  placement.fallback = fallback;
  auto executor = Executor::Create(graph, placement, Registry(), RunOptions{});
  if (!executor.ok()) {
    ADD_FAILURE() << backend << ": " << executor.status().message();
    return {};
  }
  *fell_back = 0;
  for (const NodeAssignment& a : (*executor)->assignments()) *fell_back += a.fell_back ? 1 : 0;
  FillRandomInputs(graph, (*executor)->buffers(), 3);
  if (Status status = (*executor)->Run(); !status.ok()) {
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

void ExpectSame(const Outputs& got, const Outputs& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t o = 0; o < want.size(); ++o) {
    ASSERT_EQ(got[o].size(), want[o].size()) << what << " output " << o;
    ASSERT_FALSE(want[o].empty()) << what;
    float scale = 1.0f, worst = 0.0f;
    for (float v : want[o]) scale = std::max(scale, std::abs(v));
    for (size_t i = 0; i < want[o].size(); ++i) {
      ASSERT_TRUE(std::isfinite(got[o][i]) && std::isfinite(want[o][i])) << what << " output " << o << " element " << i;
      worst = std::max(worst, std::abs(got[o][i] - want[o][i]));
    }
    EXPECT_LE(worst, 1e-3f * scale) << what << " output " << o;
  }
}

EncoderConfig SmallBert(int opset) {
  EncoderConfig c;
  c.name = "bert_small";
  c.layers = 2, c.hidden = 32, c.heads = 2, c.sequence = 8, c.vocab = 100, c.opset = opset;
  return c;
}

EncoderConfig SmallVit(int opset) {
  EncoderConfig c;
  c.name = "vit_small";
  c.layers = 2, c.hidden = 32, c.heads = 2, c.image = 32, c.patch = 8, c.classes = 10, c.opset = opset;
  return c;
}

TEST(Encoders, BertRunsOnOnednnAndOrtAgreeAtBothOpsets) {
  int fell_back = 0;
  const Graph whole = Import(SmallBert(17));
  const Outputs ort = RunOn(whole, "ort", "", &fell_back);
  const Outputs onednn = RunOn(whole, "onednn", "ort", &fell_back);
  ExpectSame(onednn, ort, "bert opset 17, onednn against ort");
  const Graph decomposed = Import(SmallBert(13));
  ExpectSame(RunOn(decomposed, "ort", "", &fell_back), ort, "bert opset 13 against opset 17, ort");
  ExpectSame(RunOn(decomposed, "onednn", "ort", &fell_back), ort, "bert opset 13 on onednn against opset 17 on ort");
}

TEST(Encoders, VitRunsOnOnednnAndOrtAgreeAtBothOpsets) {
  int fell_back = 0;
  const Graph whole = Import(SmallVit(17));
  const Outputs ort = RunOn(whole, "ort", "", &fell_back);
  ExpectSame(RunOn(whole, "onednn", "ort", &fell_back), ort, "vit opset 17, onednn against ort");
  ExpectSame(RunOn(Import(SmallVit(13)), "onednn", "ort", &fell_back), ort, "vit opset 13 on onednn against opset 17 on ort");
}

}  // namespace
}  // namespace latte
