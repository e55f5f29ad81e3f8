// `latte compare` run as a user runs it: one row per model × backend × threads × precision,
// numbers where the configuration runs and the reason where it cannot; bad flags exit 2.
// Values are checked for shape and consistency only, never against a time.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/run_latte.h"
#include "run/onednn/onednn_backend.h"
#include "test_paths.h"

namespace latte {
namespace {

namespace fs = std::filesystem;
using ::latte::testing::ModelPath;
using ::latte::testing::RunLatte;
using ::latte::testing::RunResult;

class CliCompare : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_FALSE(tmp_.path().empty()); }
  ::latte::testing::TempDir tmp_;
  const fs::path& dir_ = tmp_.path();
};

const char* const kFast[] = {"--warmup-runs", "1", "--num-runs", "2", "--min-secs", "0"};

std::vector<std::string> Args(std::vector<std::string> args) {
  args.insert(args.end(), std::begin(kFast), std::end(kFast));
  return args;
}

TEST_F(CliCompare, JsonHasOneRowPerConfigurationWithNumbersOrWhy) {
  LATTE_REQUIRE_MODEL("hand_landmark_lite.tflite");
  const std::string model = ModelPath("hand_landmark_lite.tflite");
  RunResult r = RunLatte(Args({"compare", model, "--backends", "xnnpack,ort", "--num-threads", "1,2", "--precision",
                               "fp32,int8", "--format", "json"}),
                         dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j["rows"].is_array());
  ASSERT_EQ(j["rows"].size(), 2u * 2u * 2u);
  EXPECT_GT(j["baseline_rss_kb"].get<long>(), 0);
  std::set<std::string> seen;
  for (const auto& row : j["rows"]) {
    const std::string backend = row["backend"], precision = row["precision"];
    const int threads = row["threads"];
    seen.insert(backend + "/" + std::to_string(threads) + "/" + precision);
    EXPECT_EQ(row["model"], model);
    EXPECT_EQ(row["model_bytes"].get<long long>(), static_cast<long long>(fs::file_size(model)));
    if (precision == "int8") {
      // Latte quantizes it (xnnpack runs its int8 nodes, ORT the model in QDQ form): the drift
      // columns against fp32, and how many nodes ran int8.
      ASSERT_TRUE(row["ok"].get<bool>()) << row.dump();
      EXPECT_EQ(row["drift"]["reference"], "fp32") << row.dump();
      EXPECT_GT(row["drift"]["max_abs_diff"].get<double>(), 0.0) << row.dump();
      // hand_landmark_lite's world landmarks (values of a few hundredths) drift most: cosine ≈ 0.84.
      EXPECT_GT(row["drift"]["cosine"].get<double>(), 0.5) << row.dump();
      EXPECT_GT(row["int8_nodes"].get<int>(), 0) << row.dump();
      EXPECT_GE(row["fp32_nodes"].get<int>(), 0) << row.dump();
    }
    ASSERT_TRUE(row["ok"].get<bool>()) << row.dump();
    EXPECT_GT(row["p50_us"].get<double>(), 0.0);
    EXPECT_GE(row["runs"].get<int>(), 2);
    EXPECT_NEAR(row["throughput_per_s"].get<double>(), 1e6 / row["mean_us"].get<double>(), 1e-6);
    // Each configuration in its own process: at least the baseline, and a model's weights more.
    EXPECT_GT(row["peak_rss_kb"].get<long>(), j["baseline_rss_kb"].get<long>());
    EXPECT_TRUE(row["energy_mj_per_inference"].is_null() || row["energy_mj_per_inference"].get<double>() > 0);
    EXPECT_TRUE(row["contended"].is_boolean()) << row.dump();
    EXPECT_TRUE(row["host_other_cores"].is_null() || row["host_other_cores"].get<double>() >= 0) << row.dump();
    if (backend == "ort") {
      EXPECT_EQ(row["backend_version"].get<std::string>().rfind("ONNX Runtime 1.", 0), 0u);
    }
  }
  EXPECT_EQ(seen.size(), 8u);
}

// fp32 beside bf16 on oneDNN: each row carries the drift of its outputs from fp32 on the same
// inputs (an fp32 row is its own reference: 0 and 1), in JSON, text and CSV.
TEST_F(CliCompare, Bf16RowsCarryDriftAgainstFp32) {
  if (Support bf16 = OnednnBf16Support(); !bf16.ok()) GTEST_SKIP() << "no bf16 on this CPU: " << bf16.why();
  LATTE_REQUIRE_MODEL("face_detection_short_range.tflite");
  const std::string model = ModelPath("face_detection_short_range.tflite");
  RunResult r = RunLatte(Args({"compare", model, "--backends", "onednn", "--precision", "fp32,bf16", "--format", "json"}), dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 2u);
  for (const auto& row : j["rows"]) {
    ASSERT_TRUE(row["ok"].get<bool>()) << row.dump();
    const auto& drift = row["drift"];
    ASSERT_TRUE(drift.contains("max_abs_diff")) << row.dump();
    ASSERT_EQ(drift["outputs"].size(), 2u) << row.dump();  // the detector's boxes and scores
    if (row["precision"] == "fp32") {
      EXPECT_EQ(drift["max_abs_diff"].get<double>(), 0.0);
      EXPECT_EQ(drift["cosine"].get<double>(), 1.0);
    } else {
      EXPECT_EQ(row["precision"], "bf16");
      EXPECT_EQ(drift["reference"], "fp32");
      EXPECT_GT(drift["max_abs_diff"].get<double>(), 0.0) << row.dump();
      EXPECT_GE(drift["cosine"].get<double>(), 0.99) << row.dump();
      for (const auto& output : drift["outputs"]) EXPECT_GE(output["cosine"].get<double>(), 0.99) << row.dump();
    }
  }
  RunResult text = RunLatte(Args({"compare", model, "--backends", "onednn", "--precision", "fp32,bf16"}), dir_);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("max |diff|"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("cosine"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Drift:"), std::string::npos) << text.out;
  RunResult csv = RunLatte(Args({"compare", model, "--backends", "onednn", "--precision", "bf16", "--format", "csv"}), dir_);
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_NE(csv.out.find("energy_mj_per_inference,drift_max_abs_diff,drift_cosine,"), std::string::npos) << csv.out;
}

// fp32 beside int8 on xnnpack (the model quantized post-training by Latte): the int8 row carries
// the drift columns against fp32 in JSON, text and CSV, and how many nodes ran int8.
TEST_F(CliCompare, Int8RowsCarryDriftAgainstFp32) {
  LATTE_REQUIRE_MODEL("face_detection_short_range.tflite");
  const std::string model = ModelPath("face_detection_short_range.tflite");
  RunResult r = RunLatte(Args({"compare", model, "--backends", "xnnpack", "--precision", "fp32,int8", "--format", "json"}), dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 2u);
  const auto& fp32 = j["rows"][0];
  const auto& int8 = j["rows"][1];
  ASSERT_TRUE(fp32["ok"].get<bool>()) << fp32.dump();
  ASSERT_TRUE(int8["ok"].get<bool>()) << int8.dump();
  EXPECT_EQ(fp32["drift"]["max_abs_diff"].get<double>(), 0.0);
  EXPECT_FALSE(fp32.contains("int8_nodes"));
  EXPECT_EQ(int8["precision"], "int8");
  EXPECT_EQ(int8["drift"]["reference"], "fp32");
  ASSERT_EQ(int8["drift"]["outputs"].size(), 2u) << int8.dump();  // the detector's boxes and scores
  EXPECT_GT(int8["drift"]["max_abs_diff"].get<double>(), 0.0) << int8.dump();
  for (const auto& output : int8["drift"]["outputs"]) EXPECT_GE(output["cosine"].get<double>(), 0.95) << int8.dump();
  // Its convs, adds and pads run int8: most of the model.
  EXPECT_GT(int8["int8_nodes"].get<int>(), int8["fp32_nodes"].get<int>()) << int8.dump();
  RunResult text = RunLatte(Args({"compare", model, "--backends", "xnnpack", "--precision", "fp32,int8"}), dir_);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("int8 rows (post-training quantized by Latte"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(" nodes int8, "), std::string::npos) << text.out;
  RunResult csv = RunLatte(Args({"compare", model, "--backends", "xnnpack", "--precision", "int8", "--format", "csv"}), dir_);
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  const std::string row = csv.out.substr(csv.out.find('\n') + 1);
  EXPECT_NE(row.find(",int8,1,"), std::string::npos) << csv.out;
  EXPECT_EQ(row.find(",,,,"), std::string::npos) << csv.out;  // the drift columns are filled
}

// --calibration-data across models with differently named inputs: each model's int8 row
// calibrates on the samples of its own inputs (the detector's 'input'), or on generated inputs
// when none are given for it (the classifier's 'x'), and says which; fp32 rows ignore them. A
// name no model has, or samples without an int8 row, is one line.
TEST_F(CliCompare, Int8RowsCalibrateOnTheSamplesOfTheirOwnInputs) {
  LATTE_REQUIRE_MODEL("face_detection_short_range.tflite");
  LATTE_REQUIRE_MODEL("ch_ppocr_mobile_v2.0_cls_infer.onnx");
  const std::string faces = ModelPath("face_detection_short_range.tflite");
  const std::string cls = ModelPath("ch_ppocr_mobile_v2.0_cls_infer.onnx");
  const fs::path samples = dir_ / "faces.npy";
  std::vector<float> values(3 * 128 * 128 * 3);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 251) / 125.5f - 1.0f;
  ::latte::testing::WriteNpy(samples, {3, 1, 128, 128, 3}, values);
  const std::vector<std::string> models = {"compare", faces, cls, "--input-shape", "x=1x3x48x192", "--backends", "xnnpack"};
  std::vector<std::string> args = models;
  for (const char* flag : {"--precision", "fp32,int8", "--format", "json"}) args.push_back(flag);
  args.push_back("--calibration-data");
  args.push_back("input=" + samples.string());
  RunResult r = RunLatte(Args(args), dir_);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 4u);
  for (const auto& row : j["rows"]) {
    ASSERT_TRUE(row["ok"].get<bool>()) << row.dump();
    if (row["precision"] == "fp32") {
      EXPECT_FALSE(row.contains("int8_calibration")) << row.dump();
    } else if (row["model"] == faces) {
      EXPECT_EQ(row["int8_calibration"], "3 fp32 runs on --calibration-data (input: " + samples.string() + ")");
    } else {
      EXPECT_EQ(row["int8_calibration"], "4 fp32 runs on generated inputs");
    }
  }
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--precision", "int8", "--calibration-data", "image=" + samples.string()},
       "error: --calibration-data names input 'image', which no model has\n"},
      {{"--precision", "fp32,bf16", "--calibration-data", "input=" + samples.string()},
       "error: --calibration-data: only --precision int8 calibrates (this run is fp32,bf16)\n"},
  };
  for (const auto& [flags, expected] : cases) {
    std::vector<std::string> bad_args = models;
    bad_args.insert(bad_args.end(), flags.begin(), flags.end());
    RunResult bad = RunLatte(Args(bad_args), dir_);
    EXPECT_EQ(bad.exit_code, 2) << expected;
    EXPECT_EQ(bad.err, expected);
  }
}

// The commas of a CSV line outside quoted fields (a backend version may hold one).
std::size_t Separators(const std::string& line) {
  std::size_t commas = 0;
  bool quoted = false;
  for (char c : line) {
    if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) ++commas;
  }
  return commas;
}

TEST_F(CliCompare, TextAndCsvNameEveryConfiguration) {
  LATTE_REQUIRE_MODEL("ch_ppocr_mobile_v2.0_cls_infer.onnx");
  LATTE_REQUIRE_MODEL("face_detection_short_range.tflite");
  // One --input-shape for two models: it applies to the one with an input named x.
  const std::vector<std::string> base = {"compare", ModelPath("ch_ppocr_mobile_v2.0_cls_infer.onnx"),
                                         ModelPath("face_detection_short_range.tflite"), "--input-shape",
                                         "x=1x3x48x192", "--backends", "ort"};
  std::vector<std::string> text_args = base;
  RunResult text = RunLatte(Args(text_args), dir_);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("ch_ppocr_mobile_v2.0_cls_infer.onnx"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("face_detection_short_range.tflite"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("p50 ms"), std::string::npos);
  EXPECT_NE(text.out.find("Energy:"), std::string::npos);

  std::vector<std::string> csv_args = base;
  csv_args.insert(csv_args.end(), {"--format", "csv"});
  RunResult csv = RunLatte(Args(csv_args), dir_);
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  std::istringstream lines(csv.out);
  std::string line;
  std::vector<std::string> rows;
  while (std::getline(lines, line)) rows.push_back(line);
  ASSERT_EQ(rows.size(), 3u) << csv.out;
  EXPECT_EQ(rows[0].rfind("model,backend,threads,precision,ok,p50_us", 0), 0u);
  // The JSON's fields, why last.
  EXPECT_NE(rows[0].find(",contended,backend_version,runs,why"), std::string::npos) << rows[0];
  for (size_t i = 1; i < rows.size(); ++i) {
    EXPECT_NE(rows[i].find(",ort,1,fp32,1,"), std::string::npos) << rows[i];
    EXPECT_NE(rows[i].find(",\"ONNX Runtime 1."), std::string::npos) << rows[i];
    EXPECT_EQ(Separators(rows[i]), Separators(rows[0])) << rows[i];
  }
}

TEST_F(CliCompare, BadFlagsAndFilesExit2WithOneLine) {
  LATTE_REQUIRE_MODEL("hand_landmark_lite.tflite");
  const std::string model = ModelPath("hand_landmark_lite.tflite");
  auto expect_error = [&](const std::vector<std::string>& args, const std::string& says) {
    RunResult r = RunLatte(args, dir_);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
  };
  expect_error({"compare", model, "--backends", "xnnpack,tensorrt"}, "unknown backend 'tensorrt'");
  expect_error({"compare", model, "--num-threads", "1,0"}, "num-threads");
  expect_error({"compare", model, "--precision", "fp16"}, "precision");
  expect_error({"compare", model, "--backends", "xnnpack,onednn,xnnpack"}, "--backends: xnnpack is given twice");
  expect_error({"compare", model, "--num-threads", "1,2,1"}, "--num-threads: 1 is given twice");
  expect_error({"compare", model, model}, "MODEL: " + model + " is given twice");
  expect_error({"compare", model, "--format", "xml"}, "format");
  expect_error({"compare", model, "--num-runs", "0"}, "num-runs");
  expect_error({"compare"}, "models");
  // An input name no model has: a typo, not a shape for some other model.
  expect_error({"compare", model, "--input-shape", "inptu=1x224x224x3"},
               "--input-shape names 'inptu', but no model has an input of that name");
  const std::string missing = (dir_ / "missing.tflite").string();
  expect_error({"compare", missing}, missing);
}

}  // namespace
}  // namespace latte
