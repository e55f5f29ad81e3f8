// `latte bench` run as a user runs it: the JSON carries the benchmark_model figures, op profiling
// and the trace cover every node, and bad flags or unsupported models are one-line errors.
// Figures are checked for consistency only, never against a time.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/run_latte.h"
#include "run/onednn/onednn_backend.h"
#include "test_paths.h"

namespace latte {
namespace {

namespace fs = std::filesystem;
using ::latte::testing::ModelPath;
using ::latte::testing::ReadAll;
using ::latte::testing::RunLatte;
using ::latte::testing::WriteNpy;
using ::latte::testing::RunResult;

class CliBench : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(tmp_.path().empty()); }
  ::latte::testing::TempDir tmp_;
  const fs::path& dir_ = tmp_.path();
};

// TFLite benchmark_model's snake_case flags are aliases of the kebab-case ones: accepted, and
// a bad value is reported under the flag's kebab-case name.
TEST_F(CliBench, SnakeCaseFlagsAreAliases) {
  LATTE_REQUIRE_MODEL("face_detection_short_range.tflite");
  const std::string model = ModelPath("face_detection_short_range.tflite");
  RunResult r = RunLatte({"bench", model, "--num_threads", "1", "--warmup_runs", "1", "--num_runs", "3", "--min_secs", "0",
                          "--enable_op_profiling", "--format", "json"},
                         dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_GE(j["latency_us"]["count"].get<int>(), 3);
  EXPECT_EQ(j["op_profile"].size(), 73u);  // --enable_op_profiling took effect
  RunResult bad = RunLatte({"bench", model, "--num_threads", "0"}, dir_);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "error: --num-threads: 0 is not in 1..1024 (see 'latte --help')\n");
}

TEST_F(CliBench, JsonProfileAndTraceOnARealModel) {
  LATTE_REQUIRE_MODEL("face_detection_short_range.tflite");
  const std::string trace = (dir_ / "trace.json").string();
  RunResult r = RunLatte({"bench", ModelPath("face_detection_short_range.tflite"), "--backend", "xnnpack",
                          "--num-threads", "1", "--warmup-runs", "1", "--num-runs", "5", "--min-secs", "0",
                          "--enable-op-profiling", "--format", "json", "--trace", trace},
                         dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const auto& lat = j["latency_us"];
  EXPECT_GE(lat["count"].get<int>(), 5);
  EXPECT_LE(lat["min"].get<double>(), lat["p50"].get<double>());
  EXPECT_LE(lat["p50"].get<double>(), lat["p90"].get<double>());
  EXPECT_LE(lat["p99"].get<double>(), lat["max"].get<double>());
  EXPECT_GT(lat["min"].get<double>(), 0);
  for (const char* key : {"avg", "std"}) EXPECT_TRUE(lat[key].is_number()) << key;
  EXPECT_NEAR(j["throughput_per_s"].get<double>(), 1e6 / lat["avg"].get<double>(), 1e-6 * j["throughput_per_s"].get<double>());
  EXPECT_GT(j["init_us"].get<double>(), 0);
  EXPECT_GT(j["first_inference_us"].get<double>(), 0);
  EXPECT_GT(j["peak_rss_kb"].get<long>(), 0);
  EXPECT_EQ(j["model_bytes"], static_cast<long long>(fs::file_size(ModelPath("face_detection_short_range.tflite"))));
  EXPECT_EQ(j["num_threads"], 1);
  EXPECT_FALSE(j["device"]["os"].get<std::string>().empty());
  // One row per node that runs: inspect shows 90 nodes, 17 of them relus folded into the conv or
  // add before them.
  ASSERT_EQ(j["op_profile"].size(), 73u);
  EXPECT_EQ(j["op_profile"][0]["op"], "conv2d+relu");
  EXPECT_EQ(j["op_profile"][0]["nodes"], nlohmann::json::array({0, 1}));
  EXPECT_EQ(j["op_profile"][0]["backend"], "xnnpack");
  EXPECT_TRUE(j["fallbacks"].empty());

  auto t = nlohmann::json::parse(ReadAll(trace));
  ASSERT_EQ(t["traceEvents"].size(), 73u);
  double ts = 0;
  for (const auto& e : t["traceEvents"]) {
    EXPECT_EQ(e["ph"], "X");
    EXPECT_DOUBLE_EQ(e["ts"].get<double>(), ts);  // laid end to end, in node order
    ts += e["dur"].get<double>();
  }
}

TEST_F(CliBench, TextReadsLikeBenchmarkModel) {
  LATTE_REQUIRE_MODEL("face_detection_short_range.tflite");
  RunResult r = RunLatte({"bench", ModelPath("face_detection_short_range.tflite"), "--num-runs", "3", "--min-secs", "0",
                          "--enable-op-profiling"},
                         dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* line : {"Initialized in ", "First inference: ", "Warmup: count=", "Inference timings in us: count=",
                           "Throughput: ", "Peak RSS: ", "Run Order", "Summary by node type", "times called"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
}

// --precision bf16: oneDNN runs the model with bfloat16 between nodes and reports how far its
// outputs are from fp32; a backend without bf16 refuses with one line saying why.
TEST_F(CliBench, Bf16RunsOnOnednnWithDriftAndXnnpackSaysWhyNot) {
  LATTE_REQUIRE_MODEL("face_detection_short_range.tflite");
  const std::string model = ModelPath("face_detection_short_range.tflite");
  RunResult refused = RunLatte({"bench", model, "--precision", "bf16", "--num-runs", "1", "--min-secs", "0"}, dir_);
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_EQ(std::count(refused.err.begin(), refused.err.end(), '\n'), 1) << refused.err;
  EXPECT_NE(refused.err.find("bf16 unsupported on xnnpack, because"), std::string::npos) << refused.err;
  if (Support bf16 = OnednnBf16Support(); !bf16.ok()) GTEST_SKIP() << "no bf16 on this CPU: " << bf16.why();
  RunResult r = RunLatte({"bench", model, "--backend", "onednn", "--precision", "bf16", "--warmup-runs", "1", "--num-runs",
                          "2", "--min-secs", "0", "--format", "json"},
                         dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["precision"], "bf16");
  EXPECT_EQ(j["drift"]["reference"], "fp32") << j["drift"].dump();
  EXPECT_GE(j["drift"]["cosine"].get<double>(), 0.99) << j["drift"].dump();
  RunResult text = RunLatte({"bench", model, "--backend", "onednn", "--precision", "bf16", "--warmup-runs", "1",
                             "--num-runs", "2", "--min-secs", "0"},
                            dir_);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("Precision: bf16 for all"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Output drift vs fp32"), std::string::npos) << text.out;
}

// --precision int8 on xnnpack: the fp32 model quantized post-training; the report says which
// nodes ran int8, names each kept at fp32 with why, and the drift against fp32.
TEST_F(CliBench, Int8OnXnnpackSaysWhichNodesRanInt8) {
  LATTE_REQUIRE_MODEL("face_detection_short_range.tflite");
  const std::string model = ModelPath("face_detection_short_range.tflite");
  RunResult r = RunLatte({"bench", model, "--precision", "int8", "--warmup-runs", "1", "--num-runs", "2", "--min-secs", "0",
                          "--enable-op-profiling", "--format", "json"},
                         dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["precision"], "int8");
  const auto& int8 = j["int8"];
  EXPECT_GT(int8["int8_nodes"].get<int>(), 0) << int8.dump();
  EXPECT_GT(int8["quantize_nodes"].get<int>(), 0) << int8.dump();
  EXPECT_GT(int8["dequantize_nodes"].get<int>(), 0) << int8.dump();
  ASSERT_EQ(int8["node_precisions"].size(), 90u);  // one per node of the model
  EXPECT_EQ(int8["kept_fp32"].size(), static_cast<size_t>(int8["fp32_nodes"].get<int>()));
  for (const auto& kept : int8["kept_fp32"]) EXPECT_FALSE(kept["why"].get<std::string>().empty()) << kept.dump();
  EXPECT_EQ(j["drift"]["reference"], "fp32");
  EXPECT_GT(j["drift"]["cosine"].get<double>(), 0.95) << j["drift"].dump();
  bool conv_int8 = false, inserted = false;
  for (const auto& e : j["op_profile"]) {
    conv_int8 = conv_int8 || (e["op"].get<std::string>().rfind("conv2d", 0) == 0 && e["precision"] == "int8");
    inserted = inserted || (e["inserted"].get<bool>() && e["op"] == "quantize");
  }
  EXPECT_TRUE(conv_int8);
  EXPECT_TRUE(inserted);
  RunResult text = RunLatte({"bench", model, "--precision", "int8", "--warmup-runs", "1", "--num-runs", "2", "--min-secs", "0"}, dir_);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("Precision: int8 for "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Output drift vs fp32"), std::string::npos) << text.out;
}

// --calibration-data: int8's activation ranges from the user's samples (two here, in one file
// along a first axis); the report says so. Without int8, or with a file that is not one, one line.
TEST_F(CliBench, Int8CalibratesOnTheSamplesGiven) {
  LATTE_REQUIRE_MODEL("face_detection_short_range.tflite");
  const std::string model = ModelPath("face_detection_short_range.tflite");
  const fs::path samples = dir_ / "faces.npy";
  std::vector<float> values(2 * 128 * 128 * 3);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 255) / 127.5f - 1.0f;
  WriteNpy(samples, {2, 1, 128, 128, 3}, values);
  RunResult r = RunLatte({"bench", model, "--precision", "int8", "--calibration-data", "input=" + samples.string(),
                          "--warmup-runs", "0", "--num-runs", "1", "--min-secs", "0", "--format", "json"},
                         dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["int8"]["calibration_runs"], 2) << j["int8"].dump();
  EXPECT_EQ(j["int8"]["calibration"], "2 fp32 runs on --calibration-data (input: " + samples.string() + ")");
  RunResult text = RunLatte({"bench", model, "--precision", "int8", "--warmup-runs", "0", "--num-runs", "1", "--min-secs", "0"}, dir_);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("from 4 fp32 runs on generated inputs"), std::string::npos) << text.out;

  const fs::path not_npy = dir_ / "notes.npy";
  std::ofstream(not_npy) << "just text";
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--calibration-data", "input=" + samples.string()},
       "error: --calibration-data: only --precision int8 calibrates (this run is fp32)\n"},
      {{"--precision", "int8", "--calibration-data", "input=" + not_npy.string()},
       "error: " + not_npy.string() + ": not a NumPy .npy file (no \\x93NUMPY magic)\n"},
      {{"--precision", "int8", "--calibration-data", samples.string()},
       "error: --calibration-data '" + samples.string() + "': expected NAME=FILE.npy, like x=samples.npy\n"},
      {{"--precision", "int8", "--calibration-data", "image=" + samples.string()},
       "error: " + model + ": --calibration-data gives no samples of input 'input' (1x128x128x3)\n"},
  };
  for (const auto& [flags, expected] : cases) {
    std::vector<std::string> args = {"bench", model, "--num-runs", "1", "--min-secs", "0"};
    args.insert(args.end(), flags.begin(), flags.end());
    RunResult bad = RunLatte(args, dir_);
    EXPECT_EQ(bad.exit_code, 2) << expected;
    EXPECT_EQ(bad.err, expected);
  }
}

TEST_F(CliBench, BadFlagsAndUnsupportedModelsAreOneLineErrors) {
  LATTE_REQUIRE_MODEL("face_detection_short_range.tflite");
  LATTE_REQUIRE_MODEL("ch_ppocr_mobile_v2.0_cls_infer.onnx");
  const std::string tflite = ModelPath("face_detection_short_range.tflite");
  struct Case {
    std::vector<std::string> args;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {{"bench", tflite, "--num-runs", "0"}, "error: --num-runs: 0 is not in 1..1000000 (see 'latte --help')\n"},
      {{"bench", tflite, "--backend", "tpu"}, "error: " + tflite + ": unknown backend 'tpu' (known: xnnpack, onednn, ort)\n"},
      {{"bench", tflite, "--num-threads", "0"}, "error: --num-threads: 0 is not in 1..1024 (see 'latte --help')\n"},
      {{"bench", tflite, "--precision", "fp64"}, "error: --precision: fp64 is not a precision (fp32, bf16, int8) (see 'latte --help')\n"},
      {{"bench", tflite, "--precision", "int8,fp32"}, "error: --precision: int8,fp32 is not a precision (fp32, bf16, int8) (see 'latte --help')\n"},
      {{"bench", tflite, "--precision", "bf16", "--backend", "ort"},
       "error: " + tflite + ": bf16 unsupported on ort, because Latte hands ONNX Runtime fp32 models only (no bf16 export)\n"},
      {{"bench", ModelPath("ch_ppocr_mobile_v2.0_cls_infer.onnx"), "--input-shape", "x=1x3x48"},
       "error: " + ModelPath("ch_ppocr_mobile_v2.0_cls_infer.onnx") +
           ": node 0 'p2o.Conv.0' (conv2d): input 'x' has shape 1x3x48, expected 4 known dims\n"},
  };
  for (const Case& c : cases) {
    RunResult r = RunLatte(c.args, dir_);
    EXPECT_EQ(r.exit_code, 2) << c.expected;
    EXPECT_EQ(r.err, c.expected);
  }
}

}  // namespace
}  // namespace latte
