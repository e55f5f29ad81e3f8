#include "calibrate/adapt.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <ostream>

#include <fmt/format.h>

#include "core/device.h"
#include "core/stats.h"
#include "db/store.h"
#include "calibrate/fit_store.h"
#include "predict/model_prediction.h"
#include "profile/campaign.h"
#include "profile/space.h"
#include "run/backend_registry.h"

namespace latte {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Positions 1/2, 1/4, 3/4, 1/8, 3/8, ... of n sorted items, each once: any prefix of the order
// spans the sizes (van der Corput's sequence in base 2).
std::vector<std::size_t> SpreadOrder(std::size_t n) {
  std::vector<std::size_t> order;
  std::vector<bool> taken(n, false);
  for (std::size_t denominator = 2; order.size() < n && denominator <= 2 * n * n + 2; denominator *= 2) {
    for (std::size_t numerator = 1; numerator < denominator && order.size() < n; numerator += 2) {
      const auto i = static_cast<std::size_t>(static_cast<double>(numerator) / static_cast<double>(denominator) *
                                              static_cast<double>(n));
      if (i < n && !taken[i]) taken[i] = true, order.push_back(i);
    }
  }
  for (std::size_t i = 0; i < n; ++i)
    if (!taken[i]) order.push_back(i);
  return order;
}

// The pack's measured kernels per class at its thread count, each class in SpreadOrder of size.
std::map<std::string, std::vector<TrainingSample>> Candidates(const Pack& pack, const AdaptOptions& options) {
  std::map<std::string, std::vector<TrainingSample>> by_class;
  for (TrainingSample& entry : pack.MeasuredKernels()) {
    if (entry.threads != pack.info.threads || entry.p50_ms > options.max_kernel_ms) continue;
    by_class[std::string(KernelClassOf(entry.kernel))].push_back(std::move(entry));
  }
  for (auto& [name, samples] : by_class) {
    std::sort(samples.begin(), samples.end(), [](const TrainingSample& a, const TrainingSample& b) {
      return a.p50_ms != b.p50_ms ? a.p50_ms < b.p50_ms : a.kernel.Key() < b.kernel.Key();
    });
    std::vector<TrainingSample> ordered;
    for (std::size_t i : SpreadOrder(samples.size())) ordered.push_back(samples[i]);
    if (ordered.size() > options.max_per_class) ordered.resize(options.max_per_class);
    samples = std::move(ordered);
  }
  return by_class;
}

// The context's times that are not a share of a layer's (per MiB lost from a cache, all four
// terms, and per layer): this machine's time, moved by `factor`.
void ScaleCacheTerms(ContextModel& c, double factor) {
  for (double* coefficient :
       {&c.layer_ms, &c.l2_ms_per_mib, &c.l3_ms_per_mib, &c.weightless_l2_ms_per_mib, &c.weightless_l3_ms_per_mib})
    *coefficient *= factor;
}

}  // namespace

Status CheckAdaptOptions(const AdaptOptions& options) {
  if (!(options.budget_secs >= kMinAdaptSecs))
    return InvalidInput(fmt::format("--budget must be at least {:.0f}s: a few kernels of each class need it", kMinAdaptSecs));
  return Status::Ok();
}

Expected<AdaptResult> RunAdapt(Pack pack, const AdaptOptions& options, const BackendRegistry& registry,
                               std::ostream& log) {
  LATTE_RETURN_IF_ERROR(CheckAdaptOptions(options));
  RunOptions run;
  run.num_threads = std::max(1, pack.info.threads);
  LATTE_ASSIGN_OR_RETURN(run.precision, ParsePrecision(pack.info.precision));
  LATTE_ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, registry.Create(pack.info.backend, run));
  const std::string backend_version = backend->Version();
  backend.reset();

  std::map<std::string, std::vector<TrainingSample>> candidates = Candidates(pack, options);
  if (candidates.empty())
    return InvalidInput("the pack keeps no measured kernels (tables) at " + std::to_string(run.num_threads) +
                        " thread(s) under " + fmt::format("{}", options.max_kernel_ms) + " ms to measure again");

  const double start = Now();
  const double deadline = start + options.budget_secs;
  const double kernels_deadline = start + options.budget_secs * (1 - options.network_share);
  auto stopped = [&] { return options.stop != nullptr && options.stop->load(); };
  const MeasureOptions measure = KernelMeasureOptions();
  AdaptResult result;
  std::vector<double> reference_us;
  Expected<Kernel> reference = pack.info.reference_kernel.empty()
                                   ? Expected<Kernel>(NotFound("no reference"))
                                   : ParseKernelKey(pack.info.reference_kernel);
  auto read_reference = [&] {
    if (!reference.ok()) return;
    Expected<Measurement> m = MeasureKernel(*reference, pack.info.backend, registry, run, measure);
    if (m.ok()) reference_us.push_back(m->stats.p50);
    else log << "adapt: the reference kernel: " << m.status().message() << "\n";
  };
  read_reference();

  // Round robin over the classes, each from its middle size outwards, until the budget is spent.
  std::map<std::string, std::size_t> next;
  bool more = true;
  while (more && !stopped()) {
    more = false;
    for (auto& [name, samples] : candidates) {
      std::size_t& i = next[name];
      if (i >= samples.size()) continue;
      more = true;
      if (Now() >= kernels_deadline - 1.0 || stopped()) {  // a second kept for the closing reference reading
        more = false;
        break;
      }
      const TrainingSample& sample = samples[i++];
      Expected<Measurement> m = MeasureKernel(sample.kernel, pack.info.backend, registry, run, measure);
      if (!m.ok()) {
        result.skipped.push_back(sample.kernel.Key() + ": " + m.status().message());
        continue;
      }
      result.kernels.push_back({sample.kernel, name, sample.p50_ms, m->stats.p50 / 1000.0});
      log << fmt::format("adapt: {} {:.4f} ms here, {:.4f} ms in the pack ({:.2f}x)\n", sample.kernel.Key(),
                         result.kernels.back().measured_ms, sample.p50_ms, result.kernels.back().measured_ms / sample.p50_ms);
    }
  }
  if (stopped()) {
    result.interrupted = true;
    return result;
  }
  read_reference();
  result.secs = Now() - start;
  if (result.kernels.size() < 3) {
    return InvalidInput(fmt::format("only {} kernel(s) of the pack could be measured here in {:.0f} s{}: give a larger "
                                    "--budget",
                                    result.kernels.size(), options.budget_secs,
                                    result.skipped.empty() ? "" : " (" + result.skipped.front() + ")"));
  }

  PackAdaptation adaptation;
  std::map<std::string, std::vector<AdaptationPoint>> points;
  for (const AdaptedKernel& k : result.kernels) {
    points[k.kernel_class].push_back({k.pack_ms, k.measured_ms});
    points["all"].push_back({k.pack_ms, k.measured_ms});
  }
  for (const auto& [name, class_points] : points) {
    LATTE_ASSIGN_OR_RETURN(adaptation.classes[name], FitClassAdaptation(class_points));
  }
  // Adapting an adapted pack replaces the correction: the ratios are to the pack's own tables.
  adaptation.from_device = pack.adaptation ? pack.adaptation->from_device : pack.info.device;
  adaptation.from_reference_p50_us =
      pack.adaptation ? pack.adaptation->from_reference_p50_us : pack.info.reference_p50_us;
  adaptation.command = options.command;
  adaptation.created = NowUtcIso8601();

  // The in-graph context's time per MiB lost from a cache is memory time: it moves as the
  // memory-bound class does (its share of each layer's time moves with the layer itself).
  if (pack.context) {
    const ClassAdaptation& memory =
        adaptation.classes.count("memory") ? adaptation.classes.at("memory") : adaptation.classes.at("all");
    ScaleCacheTerms(*pack.context, memory.Factor(std::sqrt(memory.lo_ms * memory.hi_ms)));
  }
  pack.adaptation = std::move(adaptation);

  // Whole networks: predicted with the class factors, measured here; the median ratio scales every
  // class and the context's cache terms, so that the pack's totals speak of models on this machine.
  SplitMix64 rng(kAdaptNetworkSeed);
  MeasureOptions network_measure = measure;
  network_measure.min_secs = 0.2;
  std::size_t drawn = 0, incomplete = 0;
  while (result.networks.size() < options.max_networks && drawn < 4 * options.max_networks && Now() < deadline - 1.0 &&
         !stopped()) {
    const std::vector<JoinedKernel> network = (drawn++ % 2 == 0) ? RandomNetwork(rng) : RandomHardSwishNetwork(rng);
    Expected<Graph> graph = JoinKernels(network);
    if (!graph.ok()) continue;
    Expected<GraphPlan> plan = PlanGraphForPrediction(*graph, pack, &registry);
    if (!plan.ok()) continue;
    Expected<ModelPrediction> predicted = PredictModel(plan->graph, pack);
    if (!predicted.ok() || predicted->uncovered_nodes > 0 || !(predicted->total_ms > 0)) {
      ++incomplete;  // a network whose total lacks nodes says nothing of the level
      continue;
    }
    Expected<Measurement> m = MeasureGraph(*graph, pack.info.backend, registry, run, network_measure);
    if (!m.ok()) {
      ++incomplete;
      continue;
    }
    result.networks.push_back({graph->num_nodes(), predicted->total_ms, m->stats.p50 / 1000.0});
    log << fmt::format("adapt: random network of {} nodes: {:.3f} ms here, {:.3f} ms predicted by the kernels' factors\n",
                       graph->num_nodes(), result.networks.back().measured_ms, predicted->total_ms);
  }
  if (stopped()) {
    result.interrupted = true;
    return result;
  }
  if (result.networks.size() >= kMinAdaptNetworks) {
    std::vector<double> ratios;
    for (const AdaptedNetwork& n : result.networks) ratios.push_back(n.measured_ms / n.predicted_ms);
    result.network_factor = Median(std::move(ratios));
    for (auto& [name, c] : pack.adaptation->classes) c.log_scale += std::log(result.network_factor);
    pack.adaptation->network_factor = result.network_factor;
    pack.adaptation->networks = result.networks.size();
    if (pack.context) ScaleCacheTerms(*pack.context, result.network_factor);
  } else {
    result.network_note = fmt::format("{} random network(s) measured whole, {} needed ({} the pack could not predict whole "
                                      "or run): the kernels' factors stand alone",
                                      result.networks.size(), kMinAdaptNetworks, incomplete);
    log << "adapt: " << result.network_note << "\n";
  }

  // The pack now speaks of this machine: its fingerprint, backend version and reference level.
  const DeviceFingerprint here = ReadDeviceFingerprint();
  nlohmann::json device = nlohmann::json::parse(DeviceInfoFrom(here).fingerprint_json, nullptr, false);
  if (!device.is_object()) device = nlohmann::json::object();
  device["key"] = here.Key();
  device["description"] = here.Describe();
  pack.info.device = device;
  pack.info.backend_version = backend_version;
  if (!reference_us.empty()) {
    result.reference_now_us = Median(reference_us);
    pack.info.reference_p50_us = result.reference_now_us;
    pack.info.reference_readings = reference_us.size();
  }
  result.pack = std::move(pack);
  return result;
}

}  // namespace latte
