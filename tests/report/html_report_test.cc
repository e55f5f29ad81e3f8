#include "report/html_report.h"

#include <gtest/gtest.h>

#include "ir/graph_builder.h"
#include "report/inspect_view.h"

namespace latte {
namespace {

const std::string kHostile = "</script><img src=x onerror=alert(1)>";

std::size_t Count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// A one-node graph whose node (and output tensor) bear `name`.
Graph NamedGraph(const std::string& name) {
  GraphBuilder b;
  TensorId x = b.Input("x", {1, 4, 4, 8});
  TensorId y = b.Op1(OpKind::kRelu, name, {x});
  auto g = b.Finish({y});
  EXPECT_TRUE(g.ok()) << g.status().message();
  return *g;
}

TEST(HtmlReport, JsonForScriptEscapesWhatCouldEndTheElement) {
  const nlohmann::json value = {{"name", kHostile + " & <!-- \u2028\u2029 done"}, {"n", 1.5}};
  const std::string text = JsonForScript(value);
  EXPECT_EQ(text.find('<'), std::string::npos) << text;
  EXPECT_EQ(text.find('>'), std::string::npos) << text;
  EXPECT_EQ(text.find('&'), std::string::npos) << text;
  EXPECT_EQ(text.find("\u2028"), std::string::npos);
  EXPECT_EQ(text.find("\u2029"), std::string::npos);
  EXPECT_NE(text.find("\\u003c/script\\u003e\\u003cimg"), std::string::npos) << text;
  EXPECT_NE(text.find("\\u2028\\u2029"), std::string::npos) << text;
  // Still the same JSON value.
  EXPECT_EQ(nlohmann::json::parse(text), value);
}

TEST(HtmlReport, JsonForScriptKeepsOtherUnicodeAndReplacesBadBytes) {
  const nlohmann::json value = {{"geometry", "3x3 s2 3→16 @224x224"}, {"bad", std::string("a\xff" "b")}};
  const std::string text = JsonForScript(value);
  EXPECT_NE(text.find("3→16"), std::string::npos) << text;
  EXPECT_EQ(nlohmann::json::parse(text)["bad"], "a\uFFFDb");
}

TEST(HtmlReport, EscapeHtmlEscapesMarkupAndQuotes) {
  EXPECT_EQ(EscapeHtml("a<b>&\"'c"), "a&lt;b&gt;&amp;&quot;&#39;c");
  EXPECT_EQ(EscapeHtml("plain → text"), "plain → text");
}

TEST(HtmlReport, HostileNodeNameStaysInertInThePage) {
  const Graph graph = NamedGraph(kHostile);
  const std::string page = InspectView(graph, kHostile + ".onnx").Html();
  // The page's own three script elements end where they should: the name ends none of them.
  EXPECT_EQ(Count(page, "<script"), 3u);
  EXPECT_EQ(Count(page, "</script>"), 3u);
  EXPECT_EQ(Count(page, "<img"), 0u);
  // The title (the model's path) is escaped as text.
  EXPECT_NE(page.find("<title>latte inspect: &lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;.onnx</title>"),
            std::string::npos);
  // The data block parses back to the view's JSON, hostile name included.
  const std::string open = "<script type=\"application/json\" id=\"latte-data\">";
  const std::size_t begin = page.find(open) + open.size();
  const std::size_t end = page.find("</script>", begin);
  const nlohmann::json data = nlohmann::json::parse(page.substr(begin, end - begin));
  EXPECT_EQ(data, InspectView(graph, kHostile + ".onnx").Json());
  EXPECT_EQ(data["nodes"][0]["name"], kHostile);
}

TEST(HtmlReport, PageIsSelfContained) {
  const std::string page = InspectView(NamedGraph("relu"), "m.tflite").Html();
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  // Nothing fetched: no external scripts, styles, images or links.
  for (const char* fetch : {"src=", "href=", "http://", "https://", "url(", "@import"}) {
    // The SVG namespace is an identifier, not a fetch.
    std::string rest = page;
    for (std::size_t at; (at = rest.find("http://www.w3.org/2000/svg")) != std::string::npos;) rest.erase(at, 26);
    EXPECT_EQ(rest.find(fetch), std::string::npos) << fetch;
  }
  EXPECT_NE(page.find("Content-Security-Policy"), std::string::npos);
  EXPECT_NE(page.find("data-kind=\"inspect\""), std::string::npos);
}

TEST(HtmlReport, GraphJsonMapsUserNodesToLayers) {
  // Without a prediction: inspect's JSON as it is.
  const Graph graph = NamedGraph("relu");
  EXPECT_EQ(ReportGraphJson(graph, "m"), InspectView(graph, "m").Json());
  // A plan whose node 0 runs user node 0, predicted as layer 0.
  GraphPlan plan{graph, {{0}}};
  ModelPrediction prediction;
  prediction.layers.push_back({});
  prediction.layers[0].nodes = {0};
  const nlohmann::json j = ReportGraphJson(graph, "m", &plan, &prediction);
  EXPECT_EQ(j["layer_of_node"], nlohmann::json::array({0}));
  EXPECT_EQ(j["uncovered_of_node"], nlohmann::json::array({nullptr}));
  // The same node uncovered instead.
  ModelPrediction uncovered;
  uncovered.uncovered.push_back({{0}, {}, "relu", "no predictor"});
  const nlohmann::json u = ReportGraphJson(graph, "m", &plan, &uncovered);
  EXPECT_EQ(u["layer_of_node"], nlohmann::json::array({nullptr}));
  EXPECT_EQ(u["uncovered_of_node"], nlohmann::json::array({0}));
}

}  // namespace
}  // namespace latte
