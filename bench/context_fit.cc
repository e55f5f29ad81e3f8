// How well the in-graph context model (predict/context_model) tells what a model's layers cost in
// the graph beyond their kernels alone, with each simulation of where the activations live
// (ir/cache_reuse: the executor's arena, or each tensor its own memory). Fits on a store's
// networks measured in context on one backend (xnnpack unless --backend=NAME), 1 thread (all of them: `latte fit` also keeps to one
// device and backend version), once per simulation and once choosing, and
// prints the held-out networks' error; then, for models measured layer by layer in their graph
// and alone (context_probe's output, one TSV per model), the measured context (layers in the
// graph minus alone) and each fit's, from the layers' measured times alone. No timing.
// Usage: context_fit DB [--backend=NAME] [PROBE.tsv ...]   (default xnnpack)
#include <algorithm>
#include <cmath>
#include <map>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "db/store.h"
#include "calibrate/fit_store.h"
#include "predict/context_model.h"

using namespace latte;

namespace {

struct ProbedModel {
  std::string name;
  std::vector<LayerTraffic> traffic;
  std::vector<double> graph_ms, alone_ms;
  std::vector<OpKind> ops;
};

// context_probe's rows: graph, layer, kind, graph_ms, alone_ms, weight_b, out_b, inputs, key.
Expected<ProbedModel> ReadProbe(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound(path + ": cannot open");
  ProbedModel model;
  std::string line;
  std::getline(in, line);  // header
  for (int row = 2; std::getline(in, line); ++row) {
    std::vector<std::string> cells;
    std::stringstream fields(line);
    for (std::string cell; std::getline(fields, cell, '\t');) cells.push_back(cell);
    if (cells.size() != 9) return InvalidInput(path + ": row " + std::to_string(row) + " has not 9 columns");
    model.name = cells[0];
    LayerTraffic traffic;
    traffic.weight_bytes = std::atoll(cells[5].c_str());
    traffic.output_bytes = std::atoll(cells[6].c_str());
    if (cells[7] != "-") {
      auto inputs = ParseInputsText(cells[7]);
      if (!inputs.ok()) return inputs.status().WithContext(path);
      traffic.inputs = *inputs;
    }
    model.traffic.push_back(traffic);
    auto kind = ParseKernelKind(cells[2]);
    if (!kind.ok()) return kind.status().WithContext(path + ": row " + std::to_string(row));
    model.ops.push_back(kind->op);
    model.graph_ms.push_back(std::atof(cells[3].c_str()));
    model.alone_ms.push_back(std::atof(cells[4].c_str()));
  }
  if (model.traffic.empty()) return InvalidInput(path + ": no layers");
  return model;
}

int Fail(const Status& status) {
  std::fprintf(stderr, "error: %s\n", status.message().c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: context_fit DB [--backend=NAME] [PROBE.tsv ...]\n");
    return 2;
  }
  auto store = Store::OpenReadOnly(argv[1]);
  if (!store.ok()) return Fail(store.status());
  int first_probe = 2;
  MeasurementFilter filter;
  filter.backend = "xnnpack";
  if (argc > 2 && std::string(argv[2]).rfind("--backend=", 0) == 0) {
    filter.backend = std::string(argv[2]).substr(10);
    first_probe = 3;
  }
  filter.threads = 1;
  auto layers = store->QueryGraphLayers(filter);
  if (!layers.ok()) return Fail(layers.status());
  auto caches = ContextCachesOf(*store, *layers);
  if (!caches.ok()) return Fail(caches.status());
  // Each family of random networks is a campaign of its own.
  std::map<std::int64_t, std::vector<StoredGraphLayer>> by_campaign;
  for (const StoredGraphLayer& layer : *layers) by_campaign[layer.campaign].push_back(layer);
  {
    // How much weight each campaign's networks carry against L2: a model whose weights are past
    // L2 loses them between inferences, and the fit can price that only from networks that do too.
    for (const auto& [campaign, rows] : by_campaign) {
      std::vector<double> mib;
      std::size_t past_l2 = 0;
      for (const MeasuredNetwork& n : GroupNetworks(rows)) {
        double bytes = 0;
        for (const LayerTraffic& t : n.traffic) bytes += static_cast<double>(t.weight_bytes);
        mib.push_back(bytes / (1 << 20));
        if (bytes > static_cast<double>(caches->l2_bytes)) ++past_l2;
      }
      std::sort(mib.begin(), mib.end());
      if (mib.empty()) continue;
      std::printf("campaign %lld, networks' weights (%zu networks): median %.2f MiB, p90 %.2f, max %.2f; %zu past the "
                  "%.1f MiB L2\n",
                  static_cast<long long>(campaign), mib.size(), mib[mib.size() / 2], mib[mib.size() * 9 / 10], mib.back(),
                  past_l2, static_cast<double>(caches->l2_bytes) / (1 << 20));
    }
  }
  std::vector<ProbedModel> models;
  for (int i = first_probe; i < argc; ++i) {
    auto model = ReadProbe(argv[i]);
    if (!model.ok()) return Fail(model.status());
    models.push_back(std::move(*model));
  }
  std::vector<ContextModel> fits;
  std::vector<std::string> names;
  for (const auto& [memories, name] :
       {std::pair{std::vector{TensorMemory::kOwnBuffers}, "own buffers"}, {std::vector{TensorMemory::kArena}, "arena"},
        {std::vector{TensorMemory::kArena, TensorMemory::kOwnBuffers}, "chosen"}}) {
    auto fit = FitContextModel(GroupNetworks(*layers), *caches, memories);
    if (!fit.ok()) return Fail(fit.status());
    std::printf("%-11s: %s, L3 %lld MiB, fitted on %s; %s + %.4f ms/MiB L2 + %.4f ms/MiB L3 (without weights %.4f, "
                "%.4f); held-out networks (%zu, %d folds) RMSPE %.2f%% alone, %.2f%% with context (one share %.2f%%, per class "
                "%.2f%%)\n",
                name, TensorMemoryName(fit->memory), static_cast<long long>(fit->l3_bytes >> 20),
                ContextObjectiveName(fit->objective), fit->ShareText().c_str(),
                fit->l2_ms_per_mib, fit->l3_ms_per_mib, fit->weightless_l2_ms_per_mib, fit->weightless_l3_ms_per_mib,
                fit->graphs, fit->folds, fit->cv_alone_rmspe_pct, fit->cv_rmspe_pct, fit->cv_one_share_rmspe_pct,
                fit->cv_class_shares_rmspe_pct);
    fits.push_back(*fit);
    names.push_back(name);
  }
  // Per campaign (each family of random networks is a campaign of its own): the networks' error
  // with the arena fit on every network, and with one fitted on the other campaigns only (the
  // family held out: how a family the context never saw is predicted).
  if (by_campaign.size() > 1) {
    auto stats = [](const std::vector<MeasuredNetwork>& networks, const ContextModel* model) {
      std::vector<double> errors;
      for (const MeasuredNetwork& n : networks) {
        double alone = 0, graph = 0, extra = 0;
        for (std::size_t i = 0; i < n.alone_ms.size(); ++i) alone += n.alone_ms[i], graph += n.in_graph_ms[i];
        if (model != nullptr)
          for (double e : model->ExtraMs(n.traffic, n.alone_ms, n.Ops())) extra += e;
        errors.push_back(100 * (alone + extra - graph) / graph);
      }
      std::vector<double> sorted = errors;
      std::sort(sorted.begin(), sorted.end());
      double sq = 0;
      for (double e : errors) sq += e * e;
      return std::pair{sorted[sorted.size() / 2], std::sqrt(sq / static_cast<double>(errors.size()))};
    };
    std::printf("\nper campaign: networks' sums, median error / RMSPE (%%): alone | arena fit on all | fit without the campaign\n");
    for (const auto& [campaign, own] : by_campaign) {
      std::vector<StoredGraphLayer> others;
      for (const auto& [c, rows] : by_campaign)
        if (c != campaign) others.insert(others.end(), rows.begin(), rows.end());
      const std::vector<MeasuredNetwork> networks = GroupNetworks(own);
      auto without = FitContextModel(GroupNetworks(others), *caches);
      const auto a = stats(networks, nullptr), all = stats(networks, &fits[1]);
      std::printf("campaign %lld (%zu networks): %+.1f / %.1f | %+.1f / %.1f", static_cast<long long>(campaign),
                  networks.size(), a.first, a.second, all.first, all.second);
      if (without.ok()) {
        const auto w = stats(networks, &*without);
        std::printf(" | %+.1f / %.1f (%s)\n", w.first, w.second, without->ShareText().c_str());
      } else {
        std::printf(" | %s\n", without.status().message().c_str());
      }
    }
  }
  if (models.empty()) return 0;
  std::printf("\n| model | alone ms | context measured ms |");
  for (const std::string& name : names) std::printf(" %s ms |", name.c_str());
  std::printf("\n| --- | ---: | ---: |");
  for (std::size_t i = 0; i < names.size(); ++i) std::printf(" ---: |");
  std::printf("\n");
  std::vector<double> sq(fits.size(), 0);
  for (const ProbedModel& model : models) {
    double alone = 0, graph = 0;
    for (std::size_t i = 0; i < model.alone_ms.size(); ++i) alone += model.alone_ms[i], graph += model.graph_ms[i];
    std::printf("| %s | %.3f | %.3f (%+.1f%%) |", model.name.c_str(), alone, graph - alone,
                100 * (graph - alone) / alone);
    for (std::size_t f = 0; f < fits.size(); ++f) {
      double extra = 0;
      for (double e : fits[f].ExtraMs(model.traffic, model.alone_ms, model.ops)) extra += e;
      const double error = (alone + extra - graph) / graph;
      sq[f] += error * error;
      std::printf(" %.3f (%+.1f%%) |", extra, 100 * error);
    }
    std::printf("\n");
  }
  std::printf("\nlayers in the graph, predicted as alone + context: RMSPE");
  for (std::size_t f = 0; f < fits.size(); ++f)
    std::printf(" %s %.2f%%", names[f].c_str(), 100 * std::sqrt(sq[f] / static_cast<double>(models.size())));
  std::printf("\n");
  return 0;
}
