#pragma once
// `latte compare`'s view: one table over models × backends × threads × precisions (p50 latency,
// throughput, model size, peak memory, energy), in the manner of runtime comparison studies,
// as text, JSON, CSV or an HTML page. The runner is run/compare.

#include <string>

#include <nlohmann/json.hpp>

#include "db/run_history.h"
#include "run/compare.h"

namespace latte {

class CompareView {
 public:
  explicit CompareView(const CompareResult& result) : result_(result) {}
  std::string Text() const;
  nlohmann::json Json() const;
  /// Each row's figures as Json() prints them, as the store keeps a run (db/run_history.h).
  std::vector<ComparisonRecord> Records() const;
  std::string Csv() const;
  /// A self-contained HTML page: a bar per configuration, grouped by model, and the table.
  std::string Html() const;

 private:
  const CompareResult& result_;
};

}  // namespace latte
