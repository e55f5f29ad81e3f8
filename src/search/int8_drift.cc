#include "search/int8_drift.h"

#include <algorithm>
#include <memory>

#include "run/executor.h"
#include "run/output_drift.h"
#include "run/process.h"

namespace latte {
namespace {

// One int8 choice's pass, in the child: {"drift": [per entry]} or {"error": why}.
Expected<nlohmann::json> MeasureChoice(const Graph& graph, const OpList& ops, const std::vector<BackendChoice>& choices,
                                       std::size_t b, const NodeMemory& memory, const BackendRegistry& registry,
                                       RunOptions run) {
  Placement placement;
  placement.default_backend = choices[b].backend;
  placement.fallback = choices[0].backend;
  run.precision = Precision::kFp32;
  LATTE_ASSIGN_OR_RETURN(std::unique_ptr<Executor> reference, Executor::Create(graph, placement, registry, run));
  FillRandomInputs(graph, reference->buffers());
  LATTE_RETURN_IF_ERROR(reference->Run().WithContext("the fp32 reference on " + choices[b].backend));
  run.precision = Precision::kInt8;
  nlohmann::json drift = nlohmann::json::array();
  std::size_t runs = 0;
  for (std::size_t e = 0; e < ops.keys.size(); ++e) {
    Placement one = placement;
    bool any = false;
    for (std::size_t i = 0; i < graph.num_nodes(); ++i) {
      const bool in_entry = ops.key_of_node[i] == e;
      any = any || (in_entry && memory.per_node[i][b].int8);
      if (!in_entry) one.fp32_nodes.insert(static_cast<NodeId>(i));
    }
    if (!any) {
      drift.push_back(0.0);
      continue;
    }
    const std::string what = ops.keys[e] + " at int8 on " + choices[b].backend;
    ++runs;
    auto executor = Executor::Create(graph, one, registry, run);
    if (!executor.ok()) return executor.status().WithContext(what);
    FillRandomInputs(graph, (*executor)->buffers());
    LATTE_RETURN_IF_ERROR((*executor)->Run().WithContext(what));
    LATTE_ASSIGN_OR_RETURN(RunDrift compared, CompareOutputs(graph, reference->buffers(), (*executor)->buffers(), "fp32"));
    drift.push_back(DriftFigure(compared));
  }
  return nlohmann::json{{"drift", drift}, {"runs", runs}};
}

}  // namespace

double DriftFigure(const RunDrift& drift) {
  return drift.nonfinite_mismatches > 0 ? 2.0 : std::max(0.0, 1.0 - drift.cosine);
}

double Int8Drift::Estimate(const std::vector<int>& digits) const {
  double sum = 0;
  for (std::size_t e = 0; e < digits.size() && e < per_entry.size(); ++e)
    sum += per_entry[e][static_cast<std::size_t>(digits[e])];
  return sum;
}

Expected<Int8Drift> MeasureInt8Drift(const Graph& graph, const OpList& ops, const std::vector<BackendChoice>& choices,
                                     const NodeMemory& memory, const BackendRegistry& registry, const RunOptions& run) {
  Int8Drift result;
  result.per_entry.assign(ops.keys.size(), std::vector<double>(choices.size(), 0.0));
  for (std::size_t b = 0; b < choices.size(); ++b) {
    if (choices[b].precision != Precision::kInt8) continue;
    result.measured = true;
    LATTE_ASSIGN_OR_RETURN(nlohmann::json report, RunInChild([&]() -> nlohmann::json {
                             auto measured = MeasureChoice(graph, ops, choices, b, memory, registry, run);
                             if (!measured.ok()) return {{"error", measured.status().message()}};
                             return *measured;
                           }));
    if (report.contains("error"))
      return Unsupported("measuring each op's drift at " + choices[b].Label() + ": " + report["error"].get<std::string>());
    const nlohmann::json drift = report.value("drift", nlohmann::json());
    if (!drift.is_array() || drift.size() != ops.keys.size())
      return Internal("measuring each op's drift at " + choices[b].Label() + ": a malformed report");
    for (std::size_t e = 0; e < ops.keys.size(); ++e) result.per_entry[e][b] = drift[e].get<double>();
    result.runs += report.value("runs", std::size_t{0});
  }
  return result;
}

}  // namespace latte
