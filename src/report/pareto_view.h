#pragma once
// The `latte pareto` view: the op list, the predicted front (id, assignment, latency, memory),
// the all-on-one-backend references, what was left out and why, and the verified assignments
// beside their predictions; text, JSON (the on-device profilers' dump form plus Latte's fields),
// an SVG of the evaluated points, the predicted front and the measured one, and an HTML page.

#include <string>

#include <nlohmann/json.hpp>

#include "search/pareto.h"

namespace latte {

class ParetoView {
 public:
  explicit ParetoView(const ParetoResult& result) : result_(result) {}
  std::string Text() const;
  /// {"oplist", "solutions": [{"id", "time", "memory"}], "front": [ids], "configs": {"id": text},
  ///  "verify": [{"id", "predicted_time", "measured_time", "predicted_memory", "measured_memory"}], ...}
  /// (time in ms, memory in KB), plus "backends", "mode"-independent extras Latte adds.
  nlohmann::json Json() const;
  std::string Svg() const;
  /// A self-contained HTML page: the evaluated points, the front and the references, the front's
  /// table, and `user` (the model as imported, whose nodes the op list was built from) coloured
  /// by the backend each node gets in the assignment picked in the table.
  std::string Html(const Graph& user, const std::string& model) const;

 private:
  const ParetoResult& result_;
};

}  // namespace latte
