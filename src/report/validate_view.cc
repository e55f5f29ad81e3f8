#include "report/validate_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/stats.h"
#include "report/html_report.h"
#include "report/predict_view.h"
#include "report/svg_plot.h"
#include "report/text_table.h"

namespace latte {
namespace {

std::string Ms(double ms) { return fmt::format("{:.3f}", ms); }
std::string Pct(double pct) { return fmt::format("{:+.1f}%", pct); }
double ErrorPct(double predicted, double measured) { return 100.0 * (predicted - measured) / measured; }

std::string Metrics(const AccuracyMetrics& m) {
  return fmt::format("{} within ±5%: {:.1f}%, within ±10%: {:.1f}%, RMSPE {:.2f}%", m.n, m.within5_pct, m.within10_pct,
                     m.rmspe_pct);
}

// A model with uncovered nodes is never inside: its interval is around a total that lacks them.
bool InsideInterval(const ModelValidation& m) {
  return m.prediction.uncovered_nodes == 0 && m.measured_ms >= m.prediction.interval_lo_ms &&
         m.measured_ms <= m.prediction.interval_hi_ms;
}

}  // namespace

ValidateView::ValidateView(const std::vector<ModelValidation>& models, const Pack& pack, std::string machine_note,
                           DriftCheck drift)
    : models_(models), pack_(pack), machine_note_(std::move(machine_note)), drift_(std::move(drift)) {}

AccuracyMetrics ValidateView::DriftAdjustedMetrics(double factor) const {
  std::vector<double> predicted, measured;
  for (const ModelValidation& m : models_) predicted.push_back(m.predicted_ms * factor), measured.push_back(m.measured_ms);
  return ComputeAccuracy(predicted, measured);
}

double ValidateView::InsideIntervalPct() const {
  if (models_.empty()) return 0;
  const auto inside = std::count_if(models_.begin(), models_.end(), InsideInterval);
  return 100.0 * static_cast<double>(inside) / static_cast<double>(models_.size());
}

double ValidateView::MedianHalfIntervalPct() const {
  std::vector<double> half;
  for (const ModelValidation& m : models_)
    if (m.predicted_ms > 0) half.push_back(100 * (m.prediction.interval_hi_ms - m.prediction.interval_lo_ms) / 2 / m.predicted_ms);
  return Median(std::move(half));
}

AccuracyMetrics ValidateView::ModelMetrics() const {
  std::vector<double> predicted, measured;
  for (const ModelValidation& m : models_) predicted.push_back(m.predicted_ms), measured.push_back(m.measured_ms);
  return ComputeAccuracy(predicted, measured);
}

AccuracyMetrics ValidateView::LayerMetrics() const {
  std::vector<double> predicted, measured;
  for (const ModelValidation& m : models_)
    for (const LayerComparison& l : m.layers)
      if (l.measured_ms > 0) predicted.push_back(l.predicted_ms), measured.push_back(l.measured_ms);
  return ComputeAccuracy(predicted, measured);
}

std::string ValidateView::Text(bool per_layer) const {
  std::ostringstream out;
  out << "pack: " << DescribePack(pack_) << "\n";
  if (!machine_note_.empty()) out << "note: " << machine_note_ << "\n";
  out << "\n";
  TextTable table({{"model"}, {"predicted ms", TextTable::kRight}, {"measured ms", TextTable::kRight},
                   {"error", TextTable::kRight}, {"noise"}, {"coverage"}});
  for (const ModelValidation& m : models_) {
    std::string coverage = fmt::format("{}/{} nodes", m.prediction.covered_nodes, m.prediction.total_nodes);
    if (m.uncovered_measured_ms > 0) coverage += fmt::format(" ({} ms measured not predicted)", Ms(m.uncovered_measured_ms));
    if (m.kept_fp32_by_run > 0)
      coverage += fmt::format("; {} node{} kept fp32 by the run's scales, predicted so", m.kept_fp32_by_run, m.kept_fp32_by_run == 1 ? "" : "s");
    table.AddRow({KeepTail(m.model, 48), Ms(m.predicted_ms), Ms(m.measured_ms), Pct(m.error_pct),
                  m.bench.latency.contended ? (m.bench.latency.noise.noisy ? "noisy, host busy" : "host busy")
                                            : (m.bench.latency.noise.noisy ? "noisy" : "ok"),
                  coverage});
  }
  out << table.Render() << "\n";
  out << "models: " << Metrics(ModelMetrics()) << "\n";
  const auto incomplete = std::count_if(models_.begin(), models_.end(),
                                       [](const ModelValidation& m) { return m.prediction.uncovered_nodes > 0; });
  out << fmt::format("models measured inside their predicted {:.0f}% interval: {:.1f}% (median half-width ±{:.1f}%{})\n",
                     100 * kIntervalLevel, InsideIntervalPct(), MedianHalfIntervalPct(),
                     incomplete > 0 ? fmt::format("; {} with uncovered nodes counted outside", incomplete) : "");
  out << "kernels: " << Metrics(LayerMetrics()) << " (profiled per node)\n";
  if (drift_.measured) {
    const double pct = 100.0 * (drift_.Ratio() - 1.0);
    out << fmt::format("drift: the reference kernel ({}) takes {:.1f} us now, {:.1f} us when the pack was made: this "
                       "machine runs {:.1f}% {} now\n",
                       drift_.kernel.substr(0, drift_.kernel.find('|')), drift_.now_p50_us, drift_.pack_p50_us,
                       std::abs(pct), pct >= 0 ? "slower" : "faster");
    out << "models, predictions scaled by that drift: " << Metrics(DriftAdjustedMetrics(drift_.Ratio())) << "\n";
    if (drift_.follow != 1)
      out << fmt::format("models, scaled by {:.2f} of it (the share of the reference's changes the pack's measurements "
                         "followed, {:.3f}×): ",
                         drift_.follow, drift_.FollowedRatio())
          << Metrics(DriftAdjustedMetrics(drift_.FollowedRatio())) << "\n";
  } else if (!drift_.why.empty()) {
    out << "drift: not measured: " << drift_.why << "\n";
  }
  if (!per_layer) return out.str();
  for (const ModelValidation& m : models_) {
    out << "\n" << m.model << "\n";
    TextTable layers({{"#", TextTable::kRight}, {"kernel"}, {"geometry"}, {"predicted ms", TextTable::kRight},
                      {"measured ms", TextTable::kRight}, {"error", TextTable::kRight}, {"source"}, {"precision"}});
    for (const LayerComparison& l : m.layers) {
      const LayerPrediction& layer = m.prediction.layers[l.layer];
      layers.AddRow({std::to_string(l.layer), layer.kernel.Kind(), DescribeKernel(layer.kernel), Ms(l.predicted_ms),
                     Ms(l.measured_ms), l.measured_ms > 0 ? Pct(ErrorPct(l.predicted_ms, l.measured_ms)) : "n/a",
                     std::string(PredictionSourceName(layer.prediction.source)), LayerPrecision(layer, pack_)});
    }
    out << layers.Render();
  }
  return out.str();
}

nlohmann::json ValidateView::Json() const {
  nlohmann::json models = nlohmann::json::array();
  for (const ModelValidation& m : models_) {
    nlohmann::json layers = nlohmann::json::array();
    for (const LayerComparison& l : m.layers) {
      const LayerPrediction& layer = m.prediction.layers[l.layer];
      layers.push_back({{"nodes", NodeNames(m.plan.graph, layer.nodes, layer.names)},
                        {"kernel", layer.kernel.Kind()},
                        {"key", layer.kernel.Key()},
                        {"predicted_ms", l.predicted_ms},
                        {"context_ms", layer.context_ms},
                        {"measured_ms", l.measured_ms},
                        {"source", PredictionSourceName(layer.prediction.source)},
                        {"precision", LayerPrecision(layer, pack_)}});
    }
    const Stats& s = m.bench.latency.stats;
    models.push_back({{"model", m.model},
                      {"predicted_ms", m.predicted_ms},
                      {"context_ms", m.prediction.context_ms},
                      {"interval_ms", {m.prediction.interval_lo_ms, m.prediction.interval_hi_ms}},
                      {"measured_ms", m.measured_ms},
                      {"inside_interval", InsideInterval(m)},
                      {"complete", m.prediction.uncovered_nodes == 0},
                      {"measured_us", {{"n", s.n}, {"p10", s.p10}, {"p50", s.p50}, {"p90", s.p90}, {"std", s.std}}},
                      {"noisy", m.bench.latency.noise.noisy},
                      {"host_busy", m.bench.latency.contended},
                      {"error_pct", m.error_pct},
                      {"covered_nodes", m.prediction.covered_nodes},
                      {"total_nodes", m.prediction.total_nodes},
                      {"uncovered_measured_ms", m.uncovered_measured_ms},
                      {"kept_fp32_by_run", m.kept_fp32_by_run},
                      {"layers", layers}});
  }
  AccuracyMetrics model_metrics = ModelMetrics(), layer_metrics = LayerMetrics();
  return {{"pack", {{"backend", pack_.info.backend}, {"threads", pack_.info.threads}, {"precision", pack_.info.precision},
                    {"device", pack_.info.device}}},
          {"machine_note", machine_note_},
          {"models", models},
          {"within5_pct", model_metrics.within5_pct},
          {"within10_pct", model_metrics.within10_pct},
          {"rmspe_pct", model_metrics.rmspe_pct},
          {"interval_level", kIntervalLevel},
          {"inside_interval_pct", InsideIntervalPct()},
          {"median_half_interval_pct", MedianHalfIntervalPct()},
          {"drift", drift_.measured ? nlohmann::json{{"kernel", drift_.kernel},
                                                     {"pack_p50_us", drift_.pack_p50_us},
                                                     {"now_p50_us", drift_.now_p50_us},
                                                     {"ratio", drift_.Ratio()},
                                                     {"drift_adjusted", DriftAdjustedMetrics(drift_.Ratio()).ToJson()},
                                                     {"follow", drift_.follow},
                                                     {"followed_ratio", drift_.FollowedRatio()},
                                                     {"follow_adjusted", DriftAdjustedMetrics(drift_.FollowedRatio()).ToJson()}}
                                    : nlohmann::json{{"why", drift_.why}}},
          {"kernels", layer_metrics.ToJson()}};
}

std::vector<ValidationRecord> ValidateView::Records() const {
  std::vector<ValidationRecord> records;
  for (const ModelValidation& m : models_) {
    records.push_back({m.model, m.predicted_ms, m.measured_ms, m.prediction.interval_lo_ms, m.prediction.interval_hi_ms,
                       m.error_pct, static_cast<std::int64_t>(m.prediction.covered_nodes),
                       static_cast<std::int64_t>(m.prediction.total_nodes), m.uncovered_measured_ms});
  }
  return records;
}

std::string ValidateView::Svg() const {
  ScatterPlot plot;
  plot.title = "Latte: predicted vs measured (" + DescribePack(pack_) + ")";
  plot.x_label = "measured ms";
  plot.y_label = "predicted ms";
  plot.log_x = plot.log_y = true;
  plot.identity_line = true;
  plot.band = 0.10;
  ScatterSeries kernels{"kernels", "#9ab", {}, {}, {}, false};
  ScatterSeries models{"models", "#c33", {}, {}, {}, false};
  for (const ModelValidation& m : models_) {
    for (const LayerComparison& l : m.layers) {
      kernels.x.push_back(l.measured_ms), kernels.y.push_back(l.predicted_ms);
      kernels.titles.push_back(m.prediction.layers[l.layer].kernel.Kind());
    }
    models.x.push_back(m.measured_ms), models.y.push_back(m.predicted_ms);
    models.titles.push_back(fmt::format("{}: {} vs {} ms", m.model, Ms(m.predicted_ms), Ms(m.measured_ms)));
  }
  plot.series = {kernels, models};
  return plot.Render();
}

std::string ValidateView::Html(const std::vector<Graph>& user_graphs) const {
  nlohmann::json graphs = nlohmann::json::array();
  for (std::size_t i = 0; i < models_.size() && i < user_graphs.size(); ++i) {
    const ModelValidation& m = models_[i];
    graphs.push_back(ReportGraphJson(user_graphs[i], m.model, &m.plan, &m.prediction));
  }
  const std::string title = models_.size() == 1 ? "latte validate: " + models_[0].model
                                                 : "latte validate: " + std::to_string(models_.size()) + " models";
  return HtmlReport("validate", title, Json(), graphs);
}

}  // namespace latte
