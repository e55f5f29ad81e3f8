// The transformer encoders of profile/encoder_models run whole on ONNX Runtime and on Latte's oneDNN
// executor (ViT and MobileViT whole, no fallback; BERT every node but its mask's int64 → float cast, which
// oneDNN 2.6 has no type for and falls back to ORT by name), from the same random input: the
// outputs agree. Both opsets carry the same weights (the same seed, drawn
// in the same order), so the opset-13 form, whose layer norms and GELUs arrive decomposed and run
// as one node each, must compute what the opset-17 form computes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "profile/encoder_models.h"
#include "import/import.h"
#include "executor_test_util.h"
#include "run/executor.h"
#include "run/onednn/onednn_backend.h"
#include "run/ort/ort_backend.h"

namespace latte {
namespace {

using latte::testing::Outputs;
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

// Every output of `graph` on `backend`, falling back to ORT only with `fallback` (on oneDNN:
// BERT's int64 → float cast of its mask, the one node that may, and must, fall back); the run's
// failure fails the test.
Outputs RunOn(const Graph& graph, const std::string& backend, bool fallback = false) {
  auto run = latte::testing::RunGraph(graph, latte::testing::On(backend, fallback ? "ort" : ""), Registry(), 3);
  if (!run.ok()) {
    ADD_FAILURE() << backend << ": " << run.status().message();
    return {};
  }
  int fell_back = 0;
  for (NodeId n = 0; n < static_cast<NodeId>(run->assignments.size()); ++n)
    if (run->assignments[static_cast<size_t>(n)].fell_back) {
      ++fell_back;
      EXPECT_EQ(graph.node(n).kind, OpKind::kCast) << backend << " fell back on " << DescribeNode(graph, n);
    }
  if (fallback) {
    EXPECT_EQ(fell_back, 1) << backend << ": only the mask's cast falls back";
  }
  return std::move(run->outputs);
}

void ExpectSame(const Outputs& got, const Outputs& want, const std::string& what) {
  latte::testing::ExpectOutputsClose(got, want, 1e-3, what);
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
  const Graph whole = Import(SmallBert(17));
  const Outputs ort = RunOn(whole, "ort");
  const Outputs onednn = RunOn(whole, "onednn", true);
  ExpectSame(onednn, ort, "bert opset 17, onednn against ort");
  const Graph decomposed = Import(SmallBert(13));
  ExpectSame(RunOn(decomposed, "ort"), ort, "bert opset 13 against opset 17, ort");
  ExpectSame(RunOn(decomposed, "onednn", true), ort, "bert opset 13 on onednn against opset 17 on ort");
}

TEST(Encoders, VitRunsOnOnednnAndOrtAgreeAtBothOpsets) {
  const Graph whole = Import(SmallVit(17));
  const Outputs ort = RunOn(whole, "ort");
  ExpectSame(RunOn(whole, "onednn"), ort, "vit opset 17, onednn against ort");
  ExpectSame(RunOn(Import(SmallVit(13)), "onednn"), ort, "vit opset 13 on onednn against opset 17 on ort");
}

// A MobileViT a tenth of xx-small's widths, one layer a block, on 64 pixels.
EncoderConfig SmallMobileVit(int opset) {
  EncoderConfig c;
  c.name = "mobilevit_small";
  c.channels = {8, 8, 16, 16, 24, 24, 32}, c.block_hidden = {16, 16, 24}, c.block_layers = {1, 1, 1};
  c.heads = 4, c.mlp_ratio = 2, c.image = 64, c.patch = 2, c.classes = 10, c.opset = opset;
  return c;
}

// MobileViT runs whole on oneDNN (no fallback): convs, SiLU, the patches' reshapes and transposes,
// attention, the mean over height and width.
TEST(Encoders, MobileVitRunsOnOnednnAndOrtAgreeAtBothOpsets) {
  const Graph whole = Import(SmallMobileVit(17));
  const Outputs ort = RunOn(whole, "ort");
  ASSERT_EQ(ort.size(), 1u);
  // Logits far from zero, so that agreeing within 1e-3 of the largest says something.
  float largest = 0;
  for (float v : ort[0]) largest = std::max(largest, std::abs(v));
  EXPECT_GT(largest, 0.05f);
  ExpectSame(RunOn(whole, "onednn"), ort, "mobilevit opset 17, onednn against ort");
  ExpectSame(RunOn(Import(SmallMobileVit(13)), "onednn"), ort, "mobilevit opset 13 on onednn against opset 17 on ort");
}

// The published shapes bench/make_encoders writes (BERT-mini at 128 tokens with its 30,522-row
// word table, ViT-tiny at 224 pixels, MobileViT-xx-small at its published 256; both opsets):
// oneDNN's outputs against ONNX Runtime's.
TEST(Encoders, PublishedShapesOnOnednnAgreeWithOrt) {
  int checked = 0;
  for (const EncoderConfig& config : encoders::PublishedShapes()) {
    const bool bert = config.name.rfind("bert", 0) == 0;
    const bool mobilevit = config.name.rfind("mobilevit", 0) == 0;
    if (bert ? config.sequence != 128 : config.image != (mobilevit ? 256 : 224)) continue;
    const Graph graph = Import(config);
    ExpectSame(RunOn(graph, "onednn", bert), RunOn(graph, "ort"), config.name + " on onednn against ort");
    ++checked;
  }
  EXPECT_EQ(checked, 6);
}

}  // namespace
}  // namespace latte
