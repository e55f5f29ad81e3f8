// What a pack's 90% interval is made of: each random network measured in context (the ones
// CalibrateNetworkInterval calibrates on), its measured total and the pack's predicted / measured,
// and its layers' predicted times alone over their measured times alone (the kernels' share of
// the error), each drift-corrected as the fit corrects it (the factor shown; none for a pack fitted
// without), sorted by measured time, per family, and how the kernels' error follows the factor (CNN campaigns, transformer encoders), with the 5% and 95%
// quantiles over all of them and over the networks above each size. Whether the spread depends on
// a network's size says whether one interval suits a 0.2 ms network and a 200 ms model alike; each
// network's concentration in few distinct kernels and whether the networks' squared log errors
// grow with it (a width that follows it would narrow a model of hundreds of distinct kernels).
// No timing. Usage: interval_networks DB PACK [--backend=NAME]   (default ort)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "calibrate/drift_correction.h"
#include "calibrate/fit_store.h"
#include "core/stats.h"
#include "db/store.h"
#include "predict/network_interval.h"
#include "predict/pack.h"

using namespace latte;

namespace {

int Fail(const Status& status) {
  std::fprintf(stderr, "error: %s\n", status.message().c_str());
  return 2;
}

struct Row {
  std::string graph, time;
  double factor = 1;  // the drift correction the fit applied to the network's layers
  double measured_ms = 0, ratio = 0;
  double kernels_ratio = 0;  // the layers' predicted times alone over their measured times alone
  double concentration = 0;  // KernelConcentration of the predicted times alone
};

// How concentrated a total is in few distinct kernels: the sum over distinct kernels (by key) of
// the square of their share of the time. A kernel's error repeats wherever the kernel does, and
// distinct kernels' errors partly cancel, so if the kernels' errors were what sets an interval's
// width, networks spread over more distinct kernels would miss by less.
double KernelConcentration(const std::vector<Kernel>& kernels, const std::vector<double>& ms) {
  std::map<std::string, double> by_key;
  double total = 0;
  for (std::size_t i = 0; i < kernels.size() && i < ms.size(); ++i) by_key[kernels[i].Key()] += ms[i], total += ms[i];
  if (!(total > 0)) return 1;
  double sum = 0;
  for (const auto& [key, t] : by_key) sum += (t / total) * (t / total);
  return sum;
}

// The least-squares line of y on x: slope, intercept, the slope's standard error and the
// correlation; nullopt with fewer than 3 points or either without spread.
struct Line {
  double slope = 0, intercept = 0, slope_se = 0, correlation = 0;
};
std::optional<Line> FitLine(const std::vector<double>& x, const std::vector<double>& y) {
  const std::size_t n = std::min(x.size(), y.size());
  if (n < 3) return std::nullopt;
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < n; ++i) mx += x[i] / double(n), my += y[i] / double(n);
  double sxx = 0, sxy = 0, syy = 0;
  for (std::size_t i = 0; i < n; ++i)
    sxx += (x[i] - mx) * (x[i] - mx), sxy += (x[i] - mx) * (y[i] - my), syy += (y[i] - my) * (y[i] - my);
  if (!(sxx > 0 && syy > 0)) return std::nullopt;
  Line line;
  line.slope = sxy / sxx;
  line.intercept = my - line.slope * mx;
  double sse = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double e = y[i] - line.intercept - line.slope * x[i];
    sse += e * e;
  }
  line.slope_se = std::sqrt(sse / double(n - 2) / sxx);
  line.correlation = sxy / std::sqrt(sxx * syy);
  return line;
}

// The squared log(predicted / measured) about its median against the concentration.
void ConcentrationFit(const char* label, const std::vector<double>& log_ratios, const std::vector<double>& concentrations) {
  if (log_ratios.empty()) return;
  std::vector<double> sorted = log_ratios;
  std::sort(sorted.begin(), sorted.end());
  const double center = Percentile(sorted, 0.5);
  std::vector<double> squared;
  for (double r : log_ratios) squared.push_back((r - center) * (r - center));
  const std::optional<Line> line = FitLine(concentrations, squared);
  if (!line) return;
  std::printf("  %s: squared log error on concentration (%.3f–%.3f): slope %.4f ± %.4f, intercept %.4f, correlation %.2f\n",
              label, *std::min_element(concentrations.begin(), concentrations.end()),
              *std::max_element(concentrations.begin(), concentrations.end()), line->slope, line->slope_se,
              line->intercept, line->correlation);
}

void Quantiles(const char* label, std::vector<double> ratios) {
  if (ratios.size() < 2) return;
  std::sort(ratios.begin(), ratios.end());
  std::printf("  %-26s n %3zu: predicted / measured 5%% %.3f, median %.3f, 95%% %.3f\n", label, ratios.size(),
              Percentile(ratios, kIntervalLowQuantile), Percentile(ratios, 0.5), Percentile(ratios, kIntervalHighQuantile));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: interval_networks DB PACK [--backend=NAME]\n");
    return 2;
  }
  auto store = Store::OpenReadOnly(argv[1]);
  if (!store.ok()) return Fail(store.status());
  auto pack = Pack::Load(argv[2]);
  if (!pack.ok()) return Fail(pack.status());
  MeasurementFilter filter;
  filter.backend = argc > 3 && std::string(argv[3]).rfind("--backend=", 0) == 0 ? std::string(argv[3]).substr(10) : "ort";
  filter.threads = 1;
  auto layers = store->QueryGraphLayers(filter);
  if (!layers.ok()) return Fail(layers.status());
  auto encoder_campaigns = EncoderCampaigns(*store);
  if (!encoder_campaigns.ok()) return Fail(encoder_campaigns.status());
  // Drift-corrected as FitFromStore corrects them: to the pack's reference level, by the reference's
  // readings in each network's campaign at its time.
  std::set<std::int64_t> ids;
  for (const StoredGraphLayer& layer : *layers) ids.insert(layer.campaign);
  auto reference = ReadCampaignReference(*store, ids);
  if (!reference.ok()) return Fail(reference.status());
  // A pack fitted with --no-drift-correction: the layers as stored, the factor shown all the same
  // (whether the reference's reading beside a network tells how its kernels ran is then the
  // correlation printed per family).
  const bool corrected = pack->info.reference_corrected > 0;
  DriftCorrector corrector(reference->levels, pack->info.reference_p50_us, pack->info.reference_p50_us > 0,
                           EstimateDriftFollow(reference->levels, *layers));
  std::map<std::string, std::pair<std::string, double>> factor_of;  // "campaign/graph" -> time, factor
  for (StoredGraphLayer& layer : *layers) {
    const double factor = corrector.Factor(layer.campaign, layer.record.time);
    ScaleLayerTimes(layer, corrected ? factor : 1.0);
    factor_of.emplace(std::to_string(layer.campaign) + "/" + layer.record.graph, std::pair{layer.record.time, factor});
  }
  std::vector<StoredGraphLayer> cnn, encoders;
  for (const StoredGraphLayer& layer : *layers) (encoder_campaigns->count(layer.campaign) ? encoders : cnn).push_back(layer);
  const int block = pack->context ? pack->context->layout_block : 0;
  for (const auto& [family, rows, context] :
       {std::tuple{"CNN networks", &cnn, pack->context ? &*pack->context : nullptr},
        std::tuple{"transformer encoders", &encoders, pack->transformer_context ? &*pack->transformer_context : nullptr}}) {
    if (rows->empty()) continue;
    std::vector<MeasuredNetwork> networks = GroupNetworks(*rows);
    // GroupNetworks keeps the rows' order: the networks' names in the same order.
    std::vector<std::string> names;
    for (const StoredGraphLayer& layer : *rows) {
      const std::string name = std::to_string(layer.campaign) + "/" + layer.record.graph;
      if (names.empty() || names.back() != name) names.push_back(name);
    }
    std::size_t index = 0;
    if (block > 0) CountNchwcReorders(networks, block);
    std::vector<Row> table;
    for (const MeasuredNetwork& network : networks) {
      const std::string name = index < names.size() ? names[index] : "?";
      ++index;
      double measured = 0;
      for (double ms : network.in_graph_ms) measured += ms;
      const std::optional<std::vector<double>> alone = measured > 0 ? PredictLayersAloneMs(*pack, network) : std::nullopt;
      if (!alone) continue;
      double predicted_alone = 0, measured_alone = 0;
      for (double ms : *alone) predicted_alone += ms;
      for (double ms : network.alone_ms) measured_alone += ms;
      const double total = NetworkTotalMs(network, *alone, context);
      const double kernels_ratio = predicted_alone / measured_alone;
      const auto& [time, factor] = factor_of[name];
      table.push_back({name, time, factor, measured, total / measured, kernels_ratio, KernelConcentration(network.kernels, *alone)});
    }
    std::sort(table.begin(), table.end(), [](const Row& a, const Row& b) { return a.measured_ms < b.measured_ms; });
    std::printf("%s (%zu networks the pack predicts):\n", family, table.size());
    std::printf("  %-24s %-24s %6s %10s  %9s  %9s  %s\n", "network", "measured at", "drift", "measured", "predicted",
                "kernels / alone", "concentration");
    for (const Row& row : table)
      std::printf("  %-24s %-24s %6.3f %7.3f ms  %9.3f  %15.3f  %.3f\n", row.graph.c_str(), row.time.c_str(), row.factor,
                  row.measured_ms, row.ratio, row.kernels_ratio, row.concentration);
    for (double above : {0.0, 0.5, 1.0, 2.0, 5.0}) {
      std::vector<double> ratios;
      for (const Row& row : table)
        if (row.measured_ms >= above) ratios.push_back(row.ratio);
      Quantiles(("networks of ≥ " + std::to_string(above).substr(0, 3) + " ms").c_str(), ratios);
    }
    std::vector<double> kernels;
    for (const Row& row : table) kernels.push_back(row.kernels_ratio);
    Quantiles("kernels predicted / alone", kernels);
    // Whether networks spread over more distinct kernels miss by less: the totals', and their
    // kernels' alone.
    std::vector<double> log_ratios, log_kernels, concentrations;
    for (const Row& row : table) {
      log_ratios.push_back(std::log(row.ratio));
      log_kernels.push_back(std::log(row.kernels_ratio));
      concentrations.push_back(row.concentration);
    }
    ConcentrationFit("predicted / measured", log_ratios, concentrations);
    ConcentrationFit("kernels predicted / alone", log_kernels, concentrations);
    // log(kernels predicted / alone) against log(drift factor): slope 1 and a high correlation
    // when the reading beside a network tells how fast its kernels ran (uncorrected pack), 0
    // when the readings' jumps are their own noise.
    std::vector<double> log_factors;
    for (const Row& row : table) log_factors.push_back(std::log(row.factor));
    if (const std::optional<Line> line = FitLine(log_factors, log_kernels))
      std::printf("  log kernels predicted / alone on log drift factor (%s): slope %.2f, correlation %.2f\n",
                  corrected ? "applied" : "not applied", line->slope, line->correlation);
  }
  return 0;
}
