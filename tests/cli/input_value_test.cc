// --input-value as a user gives it: an ONNX model whose If selects on a scalar input (a sample
// rate) imports whole once the value is given, takes the branch the value selects, and says which
// input to give when it is not; a value that does not fit is one line and exit 2.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli/run_latte.h"
#include "db/store.h"
#include "import/onnx_test_builder.h"
#include "test_paths.h"

namespace latte::testing {
namespace {

// y = If(sr == 16000) { Relu(x) } else { Sigmoid(x) }.
std::string SampleRateModel() {
  ModelBuilder b(13);
  b.Input("sr", {}, onnx::TensorProto::INT64);
  b.Input("x", {1, 4});
  b.Int64s("rate", {}, {16000});
  b.Node("Equal", {"sr", "rate"}, {"is_16k"});
  auto& branch = b.Node("If", {"is_16k"}, {"y"}, "select");
  AddBody(branch, "then_branch", "Relu", "x", "out", {1, 4});
  AddBody(branch, "else_branch", "Sigmoid", "x", "out", {1, 4});
  b.Output("y");
  return b.model().SerializeAsString();
}

std::vector<std::string> Ops(const std::string& json) {
  std::vector<std::string> ops;
  const nlohmann::json report = nlohmann::json::parse(json);
  for (const auto& node : report["nodes"]) ops.push_back(node["op"].get<std::string>());
  return ops;
}

TEST(InputValue, TheGivenValueChoosesTheBranch) {
  TempDir dir;
  const std::string model = dir.Write("sr.onnx", SampleRateModel());
  RunResult r = RunLatte({"inspect", model, "--input-value", "sr=16000", "--format", "json"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Ops(r.out), (std::vector<std::string>{"relu"})) << r.out;
  r = RunLatte({"inspect", model, "--input-value", "sr=8000", "--format", "json"}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Ops(r.out), (std::vector<std::string>{"sigmoid"}));
}

TEST(InputValue, WithoutItTheIfSaysWhichInputToGive) {
  TempDir dir;
  const std::string model = dir.Write("sr.onnx", SampleRateModel());
  RunResult r = RunLatte({"inspect", model}, dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("give its value with --input-value sr=VALUE"), std::string::npos) << r.out;
}

TEST(InputValue, WhatDoesNotFitIsOneLineAndExitTwo) {
  TempDir dir;
  const std::string model = dir.Write("sr.onnx", SampleRateModel());
  const std::string tflite = ModelPath("face_detection_short_range.tflite");
  struct Case {
    std::vector<std::string> args;
    std::string err;
  };
  const Case cases[] = {
      {{"inspect", model, "--input-value", "sr=16k"}, model + ": --input-value sr: '16k' is not an int64"},
      {{"inspect", model, "--input-value", "rate=1"}, model + ": --input-value names 'rate', but the model's inputs are: sr, x"},
      {{"inspect", model, "--input-value", "sr=1,2"}, model + ": --input-value sr: 2 values given, but input 'sr' of shape scalar holds 1"},
      {{"inspect", model, "--input-value", "sr"}, "--input-value 'sr': expected NAME=VALUE[,VALUE...], like sr=16000"},
      {{"bench", model, "--input-value", "sr=1,,2"}, "--input-value 'sr=1,,2': an empty value between commas"},
      {{"inspect", model, "--input-value", "x=1,2,3,inf"}, model + ": --input-value x: 'inf' is not a finite float32"},
      {{"inspect", tflite, "--input-value", "input=1"},
       tflite + ": --input-value input: Latte takes input values for ONNX models only (a TFLite file has no If or shape "
                "subgraph to fold)"},
  };
  for (const Case& c : cases) {
    RunResult r = RunLatte(c.args, dir.path());
    EXPECT_EQ(r.exit_code, 2) << c.args.back() << ": " << r.err;
    EXPECT_EQ(r.err, "error: " + c.err + "\n");
  }
}

TEST(InputValue, EveryCommandThatTakesInputShapesTakesIt) {
  TempDir dir;
  for (const char* command : {"inspect", "predict", "bench", "pareto", "validate", "compare", "profile", "calibrate"}) {
    RunResult r = RunLatte({command, "--help"}, dir.path());
    EXPECT_EQ(r.exit_code, 0) << command;
    EXPECT_NE(r.out.find("--input-value"), std::string::npos) << command;
  }
}

// The kernels of a model profiled from it are those of the branch its value selects.
TEST(InputValue, ProfileMeasuresTheBranchTheValueSelects) {
  TempDir dir;
  const std::string model = dir.Write("sr.onnx", SampleRateModel());
  for (const auto& [rate, kind] : {std::pair<const char*, const char*>{"sr=16000", "relu"}, {"sr=8000", "sigmoid"}}) {
    const std::string db = (dir.path() / (std::string(kind) + ".db")).string();
    RunResult r = RunLatte({"profile", "--strategy", "from-models", "--models", model, "--input-value", rate,
                            "--no-neighbours", "--num-runs", "3", "--warmup-runs", "1", "--min-secs", "0", "--db", db,
                            "--format", "json"},
                           dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto store = Store::Open(db);
    ASSERT_TRUE(store.ok()) << store.status().message();
    auto rows = store->QueryMeasurements();
    ASSERT_TRUE(rows.ok());
    std::set<std::string> kinds;
    for (const StoredMeasurement& row : *rows) kinds.insert(row.kernel.Kind());
    EXPECT_TRUE(kinds.count(kind)) << rate;
    EXPECT_FALSE(kinds.count(std::string(kind) == "relu" ? "sigmoid" : "relu")) << rate;
  }
  // Without it the If stays opaque: the model has no kernel to profile, and says why.
  RunResult r = RunLatte({"profile", "--strategy", "from-models", "--models", model, "--no-neighbours", "--num-runs", "3",
                          "--min-secs", "0", "--db", (dir.path() / "none.db").string()},
                         dir.path());
  EXPECT_NE((r.out + r.err).find("--input-value sr=VALUE"), std::string::npos) << r.out << r.err;
}

}  // namespace
}  // namespace latte::testing
