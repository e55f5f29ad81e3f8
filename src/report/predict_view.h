#pragma once
// The `latte predict` view: one row per predicted kernel (nodes, kind, geometry, predicted ms,
// spread, source), the total with its interval, and the coverage — as text, JSON, CSV or HTML (the
// CSV starts with the TFLite latency estimator's columns, then Latte's own).

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ir/graph.h"
#include "predict/model_prediction.h"
#include "predict/pack.h"
#include "predict/predictor.h"
#include "report/document.h"
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
  /// Json()'s content written through a document builder (report/document.h): Json() is
  /// Build(JsonDocument), the Python module's `Pack.predict` builds its dicts with it.
  template <class Doc>
  typename Doc::Value Build(Doc& doc) const;
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
/// What a layer computes in: the pack's precision, or with an int8 pack "int8" or "fp32".
std::string LayerPrecision(const LayerPrediction& layer, const Pack& pack);

template <class Doc>
typename Doc::Value PredictView::Build(Doc& doc) const {
  using Value = typename Doc::Value;
  const ModelPrediction& m = prediction_;
  Value layers = doc.Array(m.layers.size());
  for (const LayerPrediction& layer : m.layers) {
    Value row = doc.Object();
    doc.Set(row, "nodes", TextArray(doc, NodeNames(graph_, layer.nodes, layer.names)));
    doc.Set(row, "kernel", doc.Text(layer.kernel.Kind()));
    doc.Set(row, "key", doc.Text(layer.kernel.Key()));
    doc.Set(row, "geometry", doc.Text(DescribeKernel(layer.kernel)));
    doc.Set(row, "predicted_ms", doc.Number(layer.ms()));
    doc.Set(row, "kernel_ms", doc.Number(layer.prediction.ms));
    doc.Set(row, "context_ms", doc.Number(layer.context_ms));
    doc.Set(row, "spread_ms", doc.Number(layer.prediction.spread_ms));
    doc.Set(row, "source", doc.Text(PredictionSourceName(layer.prediction.source)));
    doc.Set(row, "outside_training_range", doc.Boolean(layer.prediction.outside_training_range));
    doc.Set(row, "precision", doc.Text(LayerPrecision(layer, pack_)));
    if (!layer.int8 && !layer.fp32_why.empty()) doc.Set(row, "fp32_why", doc.Text(layer.fp32_why));
    doc.Push(layers, std::move(row));
  }
  Value uncovered = doc.Array(m.uncovered.size());
  for (const UncoveredLayer& u : m.uncovered) {
    const std::vector<std::string> nodes = NodeNames(graph_, u.nodes, u.names);
    Value row = doc.Object();
    doc.Set(row, "node", doc.Text(nodes.front()));
    doc.Set(row, "nodes", TextArray(doc, nodes));
    doc.Set(row, "op", doc.Text(u.op));
    doc.Set(row, "why", doc.Text(u.why));
    doc.Push(uncovered, std::move(row));
  }
  Value out = doc.Object();
  doc.Set(out, "model", doc.Text(model_));
  Value pack = doc.Object();
  doc.Set(pack, "backend", doc.Text(pack_.info.backend));
  doc.Set(pack, "backend_version", doc.Text(pack_.info.backend_version));
  doc.Set(pack, "threads", doc.Integer(pack_.info.threads));
  doc.Set(pack, "precision", doc.Text(pack_.info.precision));
  doc.Set(pack, "device", doc.FromJson(pack_.info.device));
  doc.Set(out, "pack", std::move(pack));
  doc.Set(out, "machine_note", doc.Text(machine_note_));
  doc.Set(out, "total_ms", doc.Number(m.total_ms));
  doc.Set(out, "context_ms", doc.Number(m.context_ms));
  doc.Set(out, "context", m.context_applied ? doc.FromJson(m.context->ToJson()) : doc.Null());
  doc.Set(out, "context_fitted_on", m.context_applied ? doc.Text(m.context_family) : doc.Null());
  Value interval = doc.Array(2);
  doc.Push(interval, doc.Number(m.interval_lo_ms));
  doc.Push(interval, doc.Number(m.interval_hi_ms));
  doc.Set(out, "interval_ms", std::move(interval));
  doc.Set(out, "interval_level", doc.Number(kIntervalLevel));
  Value uncertainty = doc.Object();
  doc.Set(uncertainty, "kernels_sd_ms", doc.Number(m.uncertainty.kernels_sd_ms));
  doc.Set(uncertainty, "context_sd_ms", doc.Number(m.uncertainty.context_sd_ms));
  doc.Set(uncertainty, "machine_sd_ms", doc.Number(m.uncertainty.machine_sd_ms));
  doc.Set(uncertainty, "interval_networks", doc.Integer(static_cast<std::int64_t>(m.uncertainty.calibrated_networks)));
  doc.Set(uncertainty, "machine_known", doc.Boolean(pack_.info.reference_spread > 0));
  doc.Set(out, "uncertainty", std::move(uncertainty));
  Value by_source = doc.Object();
  for (const auto& [source, ms] : m.ms_by_source) doc.Set(by_source, source, doc.Number(ms));
  doc.Set(out, "ms_by_source", std::move(by_source));
  doc.Set(out, "outside_training_range", doc.Integer(static_cast<std::int64_t>(m.outside_range)));
  doc.Set(out, "layers", std::move(layers));
  Value coverage = doc.Object();
  doc.Set(coverage, "covered_nodes", doc.Integer(static_cast<std::int64_t>(m.covered_nodes)));
  doc.Set(coverage, "total_nodes", doc.Integer(static_cast<std::int64_t>(m.total_nodes)));
  doc.Set(coverage, "uncovered", std::move(uncovered));
  doc.Set(out, "coverage", std::move(coverage));
  return out;
}

}  // namespace latte
