#include "profile/graph_context.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/device.h"
#include "ir/cache_reuse.h"
#include "profile/profile.h"
#include "profile/space.h"
#include "profile/store_writer.h"
#include "run/benchmark.h"
#include "run/executor.h"
#include "run/graph_prep.h"

namespace latte {

MeasureOptions GraphContextOptions::GraphContextMeasureOptions() {
  return {.warmup_runs = 3, .num_runs = 30, .min_secs = 0.3, .max_secs = 20, .max_remeasures = 1};
}

Expected<std::vector<GraphLayerRecord>> MeasureGraphLayers(const Graph& graph, const std::string& name,
                                                           const FusionRules& rules, const CampaignOptions& campaign,
                                                           const MeasureOptions& graph_measure,
                                                           const BackendRegistry& registry) {
  RunOptions fp32 = campaign.run;
  fp32.precision = Precision::kFp32;
  LATTE_ASSIGN_OR_RETURN(GraphPlan plan, PlanGraphOnBackend(graph, campaign.backend, registry, fp32));
  if (campaign.run.precision == Precision::kBf16) LowerPlanToBf16(plan);  // as the executor runs it
  BenchOptions bench;
  bench.placement.default_backend = campaign.backend;
  bench.run = campaign.run;
  bench.measure = graph_measure;
  bench.op_profiling = true;
  bench.output_drift = false;
  LATTE_ASSIGN_OR_RETURN(BenchResult result, BenchmarkGraph(graph, bench, registry));
  if (campaign.run.precision == Precision::kInt8) {
    // The layers of an int8 network are the kernels of its int8 form, as prediction lowers it
    // (int8 kinds, the conversions where precisions meet, the kinds kept fp32), with the nodes
    // its run's calibrated scales kept fp32 kept fp32.
    Expected<GraphPlan> as_run = LowerPlanToInt8AsRun(plan, campaign.backend, registry, campaign.run, result.entries);
    if (!as_run.ok()) return as_run.status().WithContext(name);
    plan = std::move(*as_run);
  }
  LATTE_ASSIGN_OR_RETURN(KernelGrouping grouping, GroupIntoKernels(plan.graph, rules));
  if (!grouping.uncovered.empty()) {
    const UncoveredNode& node = grouping.uncovered.front();
    return Unsupported(fmt::format("{}: node {} ({}) is in no kernel: {}", name, node.node, node.op, node.why));
  }
  // The executor runs the plan's nodes in order: a kernel runs when its last node does.
  std::sort(grouping.kernels.begin(), grouping.kernels.end(),
            [](const KernelGroup& a, const KernelGroup& b) { return a.nodes.back() < b.nodes.back(); });
  std::vector<std::vector<NodeId>> layers;
  for (const KernelGroup& group : grouping.kernels) layers.push_back(group.nodes);
  const std::vector<LayerTraffic> traffic = LayerTrafficOf(plan.graph, layers);

  if (result.node_avg_us.size() != plan.graph.num_nodes()) {
    return Status(StatusCode::kInternal, fmt::format("{}: the executor ran {} nodes but the plan has {}", name,
                                                     result.node_avg_us.size(), plan.graph.num_nodes()));
  }
  std::vector<GraphLayerRecord> records;
  std::map<std::string, double> alone_us;  // a kernel repeated in the graph is measured once
  for (std::size_t i = 0; i < grouping.kernels.size(); ++i) {
    const KernelGroup& group = grouping.kernels[i];
    GraphLayerRecord record;
    record.graph = name;
    record.layer = static_cast<int>(i);
    record.kernel = group.kernel;
    for (NodeId id : group.nodes) record.in_graph_us += result.node_avg_us[static_cast<std::size_t>(id)];
    const std::string key = group.kernel.Key();
    if (!alone_us.count(key)) {
      Expected<Measurement> alone = MeasureKernel(group.kernel, campaign.backend, registry, campaign.run, campaign.measure);
      if (!alone.ok()) return alone.status().WithContext(fmt::format("{}: layer {} ({}) alone", name, i, key));
      // A whole-graph backend's kernel time is a run less the run's fixed cost (MeasureKernel): a
      // kernel smaller than that cost's noise comes to 0, as kernel campaigns store it. The layer
      // keeps its 0 (its time in the graph is then all context) rather than the network being
      // skipped: every encoder has such a layer (the pooler's one-row gather), and skipping them
      // left ONNX Runtime's graph context without encoders on a busy host.
      if (!(alone->stats.p50 >= 0)) {
        return Unsupported(fmt::format("{}: layer {} ({}) measured {} us alone on {}: no time alone to compare with",
                                       name, i, key, alone->stats.p50, campaign.backend));
      }
      alone_us[key] = alone->stats.p50;
    }
    record.alone_us = alone_us[key];
    record.traffic = traffic[i];
    record.graph_layout_us = result.layout_avg_us;
    records.push_back(std::move(record));
  }
  return records;
}

Expected<GraphContextResult> RunGraphContext(const GraphContextOptions& options, const BackendRegistry& registry,
                                             std::ostream& log) {
  LATTE_RETURN_IF_ERROR(options.graph_measure.Validate());
  LATTE_ASSIGN_OR_RETURN(FusionRules rules, FusionRules::FromKinds(options.fusion_rules));
  LATTE_ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, registry.Create(options.campaign.backend, options.campaign.run));
  CampaignStart start{options.campaign.backend, backend->Version(), options.campaign.run, options.graphs, 0};
  backend.reset();

  LATTE_ASSIGN_OR_RETURN(Store store, Store::Open(options.db));
  const DeviceInfo device = DeviceInfoFrom(ReadDeviceFingerprint());
  LATTE_ASSIGN_OR_RETURN(std::int64_t device_id, store.UpsertDevice(device));
  LATTE_ASSIGN_OR_RETURN(std::int64_t backend_id, store.UpsertBackend(StoreBackendInfo(start)));
  // The campaign's identity: what runs the networks, which networks, how they are split and timed.
  const MeasureOptions& g = options.graph_measure;
  // The caches are part of it: a fit simulates the layers' traffic with the sizes of the machine
  // that ran them, whichever machine fits.
  const CacheSizes caches = ReadCacheSizes();
  // The first family's name is what campaigns called their networks before there were more.
  const char* graphs = options.family == NetworkFamily::kHardSwishSe ? "random-network-hswish-se"
                       : options.family == NetworkFamily::kEncoder   ? "random-encoder"
                                                                     : "random-network";
  // "generation" 2: random networks with lateral connections (a store's networks of generation 1
  // are another campaign's, not these).
  const nlohmann::json space = {{"graphs", graphs},            {"generation", 2}, {"count", options.graphs},
                                {"seed", options.seed},        {"fusion_rules", rules.ToJson()},
                                {"graph_runs", g.num_runs},    {"graph_min_secs", g.min_secs},
                                {"l2_bytes", caches.l2},       {"l3_bytes", caches.l3}};
  LATTE_ASSIGN_OR_RETURN(CampaignInfo campaign,
                         store.FindOrCreateCampaign(CampaignKeyOf(options.campaign, kGraphContextCampaign, space.dump()),
                                                    static_cast<std::int64_t>(options.graphs)));
  LATTE_ASSIGN_OR_RETURN(std::set<std::string> done, store.CampaignGraphs(campaign.id));

  GraphContextResult result;
  result.campaign_id = campaign.id;
  result.planned = options.graphs;
  // The drift reference before each network and after the last, as profile campaigns read it:
  // a fit scales the layers to the reference's level as it scales kernels, and a network
  // measured while the machine ran 20% faster is not read as a prediction 20% too slow.
  auto measure_reference = [&]() -> Status {
    const CampaignOptions& c = options.campaign;
    if (c.reference_every == 0) return Status::Ok();
    Expected<Measurement> reading = MeasureKernel(c.reference, c.backend, registry, c.run, c.measure);
    if (!reading.ok()) {  // a backend that cannot run the reference goes without readings
      result.reference_error = reading.status().message();
      return Status::Ok();
    }
    ++result.references;
    return store.RecordReference({campaign.id, "", reading->stats.p50, c.reference.Key()});
  };
  const double started = options.campaign.clock();
  SplitMix64 rng(options.seed);
  for (std::size_t i = 0; i < options.graphs; ++i) {
    // Every network is drawn, stored or not, so the i-th is the same in every run; it is built
    // only when it is measured.
    std::optional<DrawnEncoderNetwork> encoder;
    std::vector<JoinedKernel> joined;
    if (options.family == NetworkFamily::kEncoder) encoder = DrawEncoderNetwork(rng);
    else joined = options.family == NetworkFamily::kHardSwishSe ? RandomHardSwishNetwork(rng) : RandomNetwork(rng);
    const std::string name = fmt::format("random-net {}", i);
    if (done.count(name)) {
      ++result.done_before;
      continue;
    }
    if (options.campaign.stop != nullptr && options.campaign.stop->load()) {
      result.interrupted = true;
      break;
    }
    const std::size_t tried = result.done_before + result.measured + result.skipped.size();
    if (options.campaign.budget_secs > 0 && options.campaign.clock() - started >= options.campaign.budget_secs &&
        tried >= options.min_graphs) {
      result.budget_spent = true;
      break;
    }
    LATTE_RETURN_IF_ERROR(measure_reference());
    auto measure = [&](const Expected<Graph>& graph) -> Expected<std::vector<GraphLayerRecord>> {
      if (!graph.ok()) return graph.status();
      return MeasureGraphLayers(*graph, name, rules, options.campaign, options.graph_measure, registry);
    };
    Expected<std::vector<GraphLayerRecord>> layers = measure(encoder ? encoder->Import() : JoinKernels(joined));
    // A backend without 64-bit integers (oneDNN) cannot run BERT's attention mask: such a network
    // runs with the mask given as all ones, as a benchmark runs BERT there, rather than being
    // skipped (on oneDNN that was most of the family).
    if (!layers.ok() && layers.status().code() == StatusCode::kUnsupported && encoder && encoder->HasAttentionMask()) {
      const std::string refused = layers.status().message();
      layers = measure(encoder->Import(/*mask_of_ones=*/true));
      if (layers.ok()) log << fmt::format("graph context: {} with its attention mask as all ones ({})\n", name, refused);
    }
    if (!layers.ok()) {
      if (layers.status().code() == StatusCode::kInternal) return layers.status();
      result.skipped.push_back(name + ": " + layers.status().message());
      continue;
    }
    LATTE_ASSIGN_OR_RETURN(std::size_t stored, store.InsertGraphLayers(device_id, backend_id, campaign.id, *layers));
    result.layers_stored += stored;
    ++result.measured;
    double in_graph = 0, alone = 0;
    for (const GraphLayerRecord& layer : *layers) {
      in_graph += layer.in_graph_us;
      alone += layer.alone_us;
    }
    log << fmt::format("graph context: {} ({} layers): {:.3f} ms in the graph, {:.3f} ms alone ({:+.1f}%)\n", name,
                       layers->size(), in_graph / 1000, alone / 1000, 100 * (in_graph - alone) / alone);
  }
  if (result.measured > 0) LATTE_RETURN_IF_ERROR(measure_reference());
  const std::size_t finished = result.done_before + result.measured + result.skipped.size();
  LATTE_RETURN_IF_ERROR(store.UpdateCampaign(campaign.id, static_cast<std::int64_t>(result.done_before + result.measured),
                                             finished == options.graphs ? "done" : "stopped"));
  return result;
}

}  // namespace latte
