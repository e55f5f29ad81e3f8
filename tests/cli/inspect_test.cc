// `latte inspect` on the six real models, run as a user runs it: the whole table, JSON that
// adds up, MACs that match the conv formula applied to the printed shapes, and parameter
// counts equal to the importer tests' independent counts of the files' constant buffers.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "cli/run_latte.h"
#include "profile/encoder_models.h"
#include "test_paths.h"

namespace latte {
namespace {

namespace fs = std::filesystem;
using ::latte::testing::RunLatte;
using ::latte::testing::RunResult;

struct ModelCase {
  const char* file;
  const char* input_shape;  // --input-shape for dynamic inputs, or ""
  std::int64_t nodes;
  std::int64_t params;      // elements of the weights, counted from the file by the importer tests
  std::vector<std::int64_t> first_output;
};

const ModelCase kCases[] = {
    {"face_detection_short_range.tflite", "", 90, 101390, {1, 896, 16}},
    {"selfie_segmentation.tflite", "", 136, 106401, {1, 256, 256, 1}},
    {"hand_landmark_lite.tflite", "", 65, 1011712, {1, 63}},
    {"pose_landmark_lite.tflite", "", 129, 1363089, {1, 195}},
    {"ch_ppocr_mobile_v2.0_cls_infer.onnx", "x=1x3x48x192", 180, 127256, {1, 2}},
    {"ch_PP-OCRv4_det_infer.onnx", "x=1x3x640x640", 328, 1171649, {1, 1, 640, 640}},
};

class InspectRealModel : public ::testing::TestWithParam<ModelCase> {
 protected:
  void SetUp() override { ASSERT_FALSE(tmp_.path().empty()); }
  RunResult Inspect(const std::string& format) {
    const ModelCase& c = GetParam();
    std::vector<std::string> args = {"inspect", ::latte::testing::ModelPath(c.file), "--format", format};
    if (*c.input_shape) args.insert(args.end(), {"--input-shape", c.input_shape});
    return RunLatte(args, dir_);
  }
  ::latte::testing::TempDir tmp_;
  const fs::path& dir_ = tmp_.path();
};

// MACs of a conv node from the shapes the report prints (independent of Latte's cost code).
std::int64_t ConvMacsFromShapes(const nlohmann::json& node) {
  const auto& out = node["outputs"][0]["shape"];
  const auto& in = node["inputs"][0]["shape"];
  const auto& w = node["inputs"][1]["shape"];
  const auto& attrs = node["attributes"];
  const std::string layout = attrs.value("layout", "NHWC");
  const std::string filter = attrs.value("filter_layout", "");
  std::int64_t out_elems = 1;
  for (auto d : out) out_elems *= d.get<std::int64_t>();
  const std::int64_t in_c = layout == "NHWC" ? in[3].get<std::int64_t>() : in[1].get<std::int64_t>();
  std::int64_t kh, kw;
  if (filter == "OIHW" || filter == "IOHW") kh = w[2], kw = w[3];
  else kh = w[1], kw = w[2];
  const std::string op = node["op"];
  if (op == "depthwise_conv2d") return out_elems * kh * kw;
  if (op == "transpose_conv2d") {
    std::int64_t in_elems = 1;
    for (auto d : in) in_elems *= d.get<std::int64_t>();
    const std::int64_t out_c = layout == "NHWC" ? out[3].get<std::int64_t>() : out[1].get<std::int64_t>();
    return in_elems * kh * kw * out_c / attrs.value("groups", std::int64_t{1});
  }
  return out_elems * kh * kw * in_c / attrs.value("groups", std::int64_t{1});
}

TEST_P(InspectRealModel, JsonAddsUpAndMatchesIndependentCounts) {
  const ModelCase& c = GetParam();
  LATTE_REQUIRE_MODEL(c.file);
  RunResult r = Inspect("json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  nlohmann::json j = nlohmann::json::parse(r.out);
  const auto& nodes = j["nodes"];
  ASSERT_EQ(static_cast<std::int64_t>(nodes.size()), c.nodes);
  EXPECT_EQ(j["totals"]["nodes"], c.nodes);
  EXPECT_EQ(j["totals"]["params"], c.params);
  EXPECT_EQ(j["totals"]["unsupported_nodes"], 0);
  EXPECT_TRUE(j["uncovered"].empty());
  EXPECT_EQ(j["outputs"][0]["shape"], nlohmann::json(c.first_output));

  std::int64_t macs = 0, conv_nodes = 0;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const auto& n = nodes[i];
    SCOPED_TRACE(n.dump().substr(0, 300));
    EXPECT_EQ(n["index"], static_cast<std::int64_t>(i));
    ASSERT_TRUE(n["macs"].is_number());
    ASSERT_TRUE(n["params"].is_number());
    for (const auto& t : n["outputs"]) ASSERT_TRUE(t["shape"].is_array());
    macs += n["macs"].get<std::int64_t>();
    const std::string op = n["op"];
    if (op == "conv2d" || op == "depthwise_conv2d" || op == "transpose_conv2d") {
      ++conv_nodes;
      EXPECT_EQ(n["macs"], ConvMacsFromShapes(n));
    }
  }
  EXPECT_GT(conv_nodes, 0);
  EXPECT_EQ(j["totals"]["macs"], macs);
}

TEST_P(InspectRealModel, TextPrintsEveryRowAndTheTotals) {
  const ModelCase& c = GetParam();
  LATTE_REQUIRE_MODEL(c.file);
  RunResult r = Inspect("text");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::int64_t rows = 0, next = 0;
  std::istringstream lines(r.out);
  std::string line;
  const std::regex row("^ *([0-9]+)  [a-z_0-9]+ .*");
  std::smatch m;
  while (std::getline(lines, line))
    if (std::regex_match(line, m, row)) {
      EXPECT_EQ(std::stoll(m[1]), next++) << line;
      ++rows;
    }
  EXPECT_EQ(rows, c.nodes);
  EXPECT_NE(r.out.find("totals: " + std::to_string(c.nodes) + " nodes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("coverage: every node is a known op with known shapes"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(SixModels, InspectRealModel, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<ModelCase>& info) {
                           std::string name = info.param.file;
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

TEST(InspectFlags, InputShapeChangesShapesDownstream) {
  LATTE_REQUIRE_MODEL("ch_ppocr_mobile_v2.0_cls_infer.onnx");
  ::latte::testing::TempDir tmp;
  RunResult small = RunLatte({"inspect", ::latte::testing::ModelPath("ch_ppocr_mobile_v2.0_cls_infer.onnx"),
                              "--format", "json", "--input-shape", "x=2x3x48x96"},
                             tmp.path());
  ASSERT_EQ(small.exit_code, 0) << small.err;
  auto j = nlohmann::json::parse(small.out);
  EXPECT_EQ(j["inputs"][0]["shape"], nlohmann::json({2, 3, 48, 96}));
  EXPECT_EQ(j["nodes"][0]["outputs"][0]["shape"][0], 2);
  EXPECT_EQ(j["outputs"][0]["shape"], nlohmann::json({2, 2}));
}

// MobileViT-xx-small at 256 pixels as PyTorch exports it (written by profile/encoder_models):
// inspect finds its attention, the matmuls of two activations, with their work from the shapes
// alone: 2 · 4 patch pixels · N² tokens · width a layer, N = 256, 64 and 16 in the blocks of
// widths 64, 80 and 96 and 2, 4 and 3 layers.
TEST(InspectEncoders, MobileVitsAttentionIsFound) {
  ::latte::testing::TempDir tmp;
  encoders::EncoderConfig config;
  for (const encoders::EncoderConfig& c : encoders::PublishedShapes(100))
    if (c.name == "mobilevit_xx_small_256_opset17") config = c;
  ASSERT_FALSE(config.name.empty());
  const std::string model = tmp.Write("mobilevit.onnx", encoders::ModelBytes(config));
  RunResult r = RunLatte({"inspect", model, "--format", "json"}, tmp.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["totals"]["unsupported_nodes"], 0);
  EXPECT_TRUE(j["uncovered"].empty());
  EXPECT_EQ(j["outputs"][0]["shape"], nlohmann::json({1, 1000}));
  std::int64_t attention = 0, attention_macs = 0, softmax = 0;
  for (const auto& n : j["nodes"]) {
    if (n["op"] == "softmax") ++softmax;
    if (n["op"] != "matmul") continue;
    bool activations = true;
    for (const auto& t : n["inputs"]) activations = activations && t.is_object() && !t.value("constant", false);
    if (!activations) continue;
    ++attention;
    attention_macs += n["macs"].get<std::int64_t>();
  }
  EXPECT_EQ(attention, 2 * 9);
  EXPECT_EQ(softmax, 9);
  const std::int64_t per_layer[3] = {2 * 4 * 256 * 256 * 64, 2 * 4 * 64 * 64 * 80, 2 * 4 * 16 * 16 * 96};
  EXPECT_EQ(attention_macs, 2 * per_layer[0] + 4 * per_layer[1] + 3 * per_layer[2]);
  EXPECT_GT(j["totals"]["macs"].get<std::int64_t>(), attention_macs);
}

}  // namespace
}  // namespace latte
