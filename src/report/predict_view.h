#pragma once
// The `latte predict` view: one row per predicted kernel (nodes, kind, geometry, predicted ms,
// spread, source), the total with its interval, and the coverage — as text, JSON, CSV or HTML (the
// CSV starts with the TFLite latency estimator's columns, then Latte's own).

#include <string>

#include <nlohmann/json.hpp>

#include "ir/graph.h"
#include "predict/model_prediction.h"
#include "predict/pack.h"
#include "run/graph_prep.h"

namespace latte {

class PredictView {
 public:
  /// `model` names the model in the report (usually its path); `machine_note` is a line saying how
  /// this machine differs from the pack's ("" when it does not).
  PredictView(const Graph& graph, const ModelPrediction& prediction, const Pack& pack, std::string model,
              std::string machine_note);
  std::string Text() const;
  nlohmann::json Json() const;
  std::string Csv() const;
  /// A self-contained HTML page: `user`, the model as imported, drawn as a graph coloured by each
  /// node's layer time (`plan` maps the predicted graph's nodes to the user's), and the layer table.
  std::string Html(const Graph& user, const GraphPlan& plan) const;

 private:
  const Graph& graph_;
  const ModelPrediction& prediction_;
  const Pack& pack_;
  std::string model_;
  std::string machine_note_;
};

/// The nodes of a layer by name: the user's (`user_names`, from NameUserNodes) when known, else
/// those of the planned `graph` the layer's ids refer to.
std::vector<std::string> NodeNames(const Graph& graph, const std::vector<NodeId>& nodes,
                                   const std::vector<std::string>& user_names);
/// "3x3 s2 32→64 @112x112": a kernel's key parameters in a few characters.
std::string DescribeKernel(const Kernel& kernel);
/// "xnnpack 1 thread fp32 on <device>": what a pack was fitted for.
std::string DescribePack(const Pack& pack);

}  // namespace latte
