// The README's main command: the model and the pack it names exist, and predicting the model
// with the shipped pack covers every node with a source for each number.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "predict/pack.h"
#include "run_latte.h"

namespace latte {
namespace {

using testing::ReadAll;
using testing::RunLatte;
using testing::RunResult;
using testing::TempDir;

struct QuickStart {
  std::string model, pack;
};

// The quick-start line "    scripts/setup && build/latte predict MODEL --pack PACK".
QuickStart ReadQuickStart() {
  std::istringstream readme(ReadAll(std::string(LATTE_SOURCE_DIR) + "/README.md"));
  const std::string prefix = "    scripts/setup && build/latte predict ";
  std::string line;
  while (std::getline(readme, line)) {
    if (line.rfind(prefix, 0) != 0) continue;
    std::istringstream words(line.substr(prefix.size()));
    QuickStart q;
    std::string flag;
    words >> q.model >> flag >> q.pack;
    EXPECT_EQ(flag, "--pack") << line;
    return q;
  }
  ADD_FAILURE() << "README.md has no quick-start line starting with '" << prefix << "'";
  return {};
}

TEST(ShippedPack, TheReadmeMainCommandPredictsEveryNode) {
  const QuickStart q = ReadQuickStart();
  ASSERT_FALSE(q.pack.empty());
  const std::string root = LATTE_SOURCE_DIR;
  ASSERT_TRUE(std::filesystem::exists(root + "/" + q.pack)) << q.pack;
  ASSERT_TRUE(std::filesystem::exists(root + "/" + q.model)) << q.model << " (scripts/setup fetches it)";

  Expected<Pack> pack = Pack::Load(root + "/" + q.pack);
  ASSERT_TRUE(pack.ok()) << pack.status().message();
  EXPECT_EQ(pack->info.command.rfind("latte calibrate ", 0), 0u) << "the shipped pack is made by latte calibrate";

  TempDir dir;
  RunResult run = RunLatte({"predict", root + "/" + q.model, "--pack", root + "/" + q.pack, "--format", "json"},
                           dir.path());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  nlohmann::json result = nlohmann::json::parse(run.out);
  EXPECT_GT(result["total_ms"].get<double>(), 0);
  EXPECT_EQ(result["coverage"]["covered_nodes"], result["coverage"]["total_nodes"]) << result["coverage"].dump();
  EXPECT_TRUE(result["coverage"]["uncovered"].empty());
  ASSERT_FALSE(result["layers"].empty());
  double sum = 0;
  for (const auto& layer : result["layers"]) {
    EXPECT_FALSE(layer["source"].get<std::string>().empty());
    EXPECT_GT(layer["predicted_ms"].get<double>(), 0) << layer.dump();
    sum += layer["predicted_ms"].get<double>();
  }
  EXPECT_NEAR(sum, result["total_ms"].get<double>(), 1e-9 * sum + 1e-12);
  const auto& interval = result["interval_ms"];
  EXPECT_LE(interval[0].get<double>(), result["total_ms"].get<double>());
  EXPECT_GE(interval[1].get<double>(), result["total_ms"].get<double>());
}

// One --input-shape for two models, as compare takes it: it applies to the one with an input of
// that name (the ONNX classifier's x); a name neither model has is a typo, refused before measuring.
TEST(ShippedPack, ValidateTakesAnInputShapeOnlyOneOfTheModelsHas) {
  const std::string cls = std::string(LATTE_SOURCE_DIR) + "/models/ch_ppocr_mobile_v2.0_cls_infer.onnx";
  const std::string face = std::string(LATTE_SOURCE_DIR) + "/models/face_detection_short_range.tflite";
  ASSERT_TRUE(std::filesystem::exists(cls) && std::filesystem::exists(face)) << "scripts/setup fetches the models";
  const std::string pack = std::string(LATTE_SOURCE_DIR) + "/data/packs/xnnpack-1thread-fp32.json.gz";
  TempDir dir;
  RunResult run = RunLatte({"validate", cls, face, "--pack", pack, "--input-shape", "x=1x3x48x192", "--num-runs", "3",
                            "--min-secs", "0", "--warmup-runs", "1", "--format", "json"},
                           dir.path(), 240);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  nlohmann::json v = nlohmann::json::parse(run.out);
  ASSERT_EQ(v["models"].size(), 2u);
  EXPECT_EQ(v["models"][0]["model"], cls);
  EXPECT_EQ(v["models"][1]["model"], face);
  for (const auto& model : v["models"]) EXPECT_GT(model["measured_ms"].get<double>(), 0) << model["model"];

  RunResult typo = RunLatte({"validate", cls, face, "--pack", pack, "--input-shape", "x=1x3x48x192", "--input-shape",
                             "xx=1x3x48x192"},
                            dir.path());
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_TRUE(typo.out.empty()) << typo.out;
  EXPECT_NE(typo.err.find("--input-shape names 'xx', but no model has an input of that name"), std::string::npos)
      << typo.err;
}

}  // namespace
}  // namespace latte
