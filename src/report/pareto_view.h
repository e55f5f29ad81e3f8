#pragma once
// The `latte pareto` view: the op list, the predicted front (id, assignment, latency, memory),
// the all-on-one-backend references, what was left out and why, and the verified assignments
// beside their predictions; text, JSON (the on-device profilers' dump form plus Latte's fields),
// and an SVG of the evaluated points, the predicted front and the measured one.

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

 private:
  const ParetoResult& result_;
};

}  // namespace latte
