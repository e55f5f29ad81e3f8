#pragma once
// Self-contained HTML reports: one file holding its styles, its script and its data (the view's
// JSON as `--format json` prints it), drawn in the browser by a small script of Latte's own (the
// model as a layered graph, a sortable table with bars, each command's chart). No network.

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "ir/graph.h"
#include "predict/model_prediction.h"
#include "run/graph_prep.h"

namespace latte {

/// `json` as text safe inside <script type="application/json">: `<`, `>`, `&`, U+2028 and U+2029
/// written as \u escapes, so a node named "</script>..." cannot end the element; the same value.
std::string JsonForScript(const nlohmann::json& json);

/// `text` safe as HTML text or inside a quoted attribute value.
std::string EscapeHtml(std::string_view text);

/// What a report draws a model's graph from: `user`'s nodes as `latte inspect --format json` has
/// them, and with a prediction (made on `plan.graph`), each user node's layer: "layer_of_node" (an
/// index into the prediction's layers, null for none) and "uncovered_of_node" (into its uncovered).
nlohmann::json ReportGraphJson(const Graph& user, const std::string& model, const GraphPlan* plan = nullptr,
                               const ModelPrediction* prediction = nullptr);

/// The page. `kind` ("inspect", "predict", "validate", "compare", "pareto") picks what the script
/// draws; `data` is the view's JSON; `graphs` an array of ReportGraphJson, one per model, or null
/// (inspect: `data` is the graph).
std::string HtmlReport(std::string_view kind, std::string_view title, const nlohmann::json& data,
                       const nlohmann::json& graphs);

}  // namespace latte
