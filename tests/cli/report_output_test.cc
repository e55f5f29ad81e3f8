// -o FILE on the commands that print reports: the file holds what stdout would, and an html page
// embeds what --format json prints (flag_checks_test: html without a writable -o is refused;
// tests/report/html_report_browser_test.py opens the pages in Chromium).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/run_latte.h"
#include "test_paths.h"

namespace latte {
namespace {

using ::latte::testing::ModelPath;
using ::latte::testing::ReadAll;
using ::latte::testing::RunLatte;
using ::latte::testing::RunResult;
using ::latte::testing::TempDir;

const std::string kModel = "face_detection_short_range.tflite";

std::string ShippedPack() { return std::string(LATTE_SOURCE_DIR) + "/data/packs/xnnpack-1thread-fp32.json.gz"; }

TEST(ReportOutput, OutputFileHoldsWhatStdoutWould) {
  LATTE_REQUIRE_MODEL(kModel);
  TempDir dir;
  const std::string out = (dir.path() / "inspect.json").string();
  RunResult to_file = RunLatte({"inspect", ModelPath(kModel), "--format", "json", "-o", out}, dir.path());
  ASSERT_EQ(to_file.exit_code, 0) << to_file.err;
  EXPECT_TRUE(to_file.out.empty());
  RunResult to_stdout = RunLatte({"inspect", ModelPath(kModel), "--format", "json"}, dir.path());
  ASSERT_EQ(to_stdout.exit_code, 0) << to_stdout.err;
  EXPECT_EQ(ReadAll(out), to_stdout.out);
}

// The page's data element, parsed.
nlohmann::json EmbeddedData(const std::string& page) {
  const std::string open = "<script type=\"application/json\" id=\"latte-data\">";
  const std::size_t begin = page.find(open);
  if (begin == std::string::npos) return nullptr;
  const std::size_t end = page.find("</script>", begin);
  return nlohmann::json::parse(page.substr(begin + open.size(), end - begin - open.size()));
}

TEST(ReportOutput, PredictPageEmbedsTheJsonOutputAndTheGraph) {
  LATTE_REQUIRE_MODEL(kModel);
  TempDir dir;
  const std::string page_path = (dir.path() / "predict.html").string();
  RunResult html = RunLatte({"predict", ModelPath(kModel), "--pack", ShippedPack(), "--format", "html", "-o", page_path},
                            dir.path());
  ASSERT_EQ(html.exit_code, 0) << html.err;
  EXPECT_TRUE(html.out.empty());
  RunResult json = RunLatte({"predict", ModelPath(kModel), "--pack", ShippedPack(), "--format", "json"}, dir.path());
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const std::string page = ReadAll(page_path);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  const nlohmann::json expected = nlohmann::json::parse(json.out);
  EXPECT_EQ(EmbeddedData(page), expected);
  // The graph: inspect's nodes, each covered node mapped to a layer of the prediction.
  const std::string open = "<script type=\"application/json\" id=\"latte-graphs\">";
  const std::size_t begin = page.find(open) + open.size();
  const nlohmann::json graphs = nlohmann::json::parse(page.substr(begin, page.find("</script>", begin) - begin));
  ASSERT_EQ(graphs.size(), 1u);
  const nlohmann::json& graph = graphs[0];
  ASSERT_EQ(graph["nodes"].size(), expected["coverage"]["total_nodes"].get<std::size_t>());
  std::vector<int> nodes_per_layer(expected["layers"].size(), 0);
  for (const auto& layer : graph["layer_of_node"]) {
    ASSERT_TRUE(layer.is_number()) << "every node of this model is predicted";
    ++nodes_per_layer.at(layer.get<std::size_t>());
  }
  for (std::size_t k = 0; k < nodes_per_layer.size(); ++k) {
    EXPECT_EQ(nodes_per_layer[k], static_cast<int>(expected["layers"][k]["nodes"].size())) << "layer " << k;
  }
}

}  // namespace
}  // namespace latte
