#pragma once
// The `latte inspect` view: one row per node (shapes, conv geometry, MACs, params, bytes),
// totals, and the ops Latte does not know — as text, JSON or an HTML page.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/cost.h"
#include "ir/graph.h"

namespace latte {

class InspectView {
 public:
  /// `model` is how the report names the model (usually its path).
  InspectView(const Graph& graph, std::string model);
  std::string Text() const;
  nlohmann::json Json() const;
  /// A self-contained HTML page (report/html_report): the graph coloured by MACs, the node table.
  std::string Html() const;

 private:
  const Graph& graph_;
  std::string model_;
  std::vector<Expected<NodeCost>> costs_;  // one per node, computed once for every section
};

/// "k3x3 s2 d1 g1 pad=same(0,0,1,1) relu6": the geometry of a conv or pool node, "" otherwise.
std::string DescribeGeometry(const Graph& graph, const Node& node);
/// JSON text for output: names from model files may hold bytes that are not UTF-8, which
/// are replaced (U+FFFD) rather than aborting the report.
std::string DumpJson(const nlohmann::json& json, int indent = 2);
/// An attribute value as JSON.
nlohmann::json AttrToJson(const AttrValue& value);

}  // namespace latte
