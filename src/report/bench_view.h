#pragma once
// The `latte bench` view, reading like TFLite's benchmark_model: init, first inference, warmup,
// timing percentiles, throughput, memory, and with op profiling the "Run Order" and "Summary by
// node type" tables. JSON for programs, and a Chrome trace that Perfetto opens.

#include <string>

#include <nlohmann/json.hpp>

#include "ir/graph.h"
#include "run/benchmark.h"

namespace latte {

class BenchView {
 public:
  BenchView(const Graph& graph, const BenchResult& result, const BenchOptions& options, std::string model,
            long long model_bytes);
  std::string Text() const;
  nlohmann::json Json() const;
  /// Chrome trace events of one average run (per-node times laid end to end); needs op profiling.
  nlohmann::json Trace() const;

 private:
  // At --precision int8: which nodes ran int8, and each one kept at fp32 with why.
  std::string Int8Text() const;
  nlohmann::json Int8Json() const;
  const Graph& graph_;
  const BenchResult& result_;
  const BenchOptions& options_;
  std::string model_;
  long long model_bytes_;
};

}  // namespace latte
