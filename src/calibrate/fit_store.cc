#include "calibrate/fit_store.h"

#include "ir/fusion_rules.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>
#include <set>

#include <fmt/format.h>

#include "calibrate/drift_correction.h"
#include "core/device.h"
#include "core/stats.h"
#include "ir/fusion_rules.h"
#include "ir/kernel_graph.h"
#include "ir/nchwc_layout.h"
#include "predict/context_model.h"
#include "predict/network_interval.h"
#include "predict/predictors.h"
#include "run/backend_registry.h"

namespace latte {
namespace {

std::string JoinSet(const std::set<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : "; ") + item;
  return text;
}

// The layers measured in context with the measurements' device and backend configuration
// (profile/graph_context), in QueryGraphLayers' order.
Expected<std::vector<StoredGraphLayer>> ContextLayers(const Store& store, const StoredMeasurement& first) {
  MeasurementFilter filter;
  filter.backend = first.backend.name;
  filter.threads = first.backend.threads;
  filter.precision = first.backend.precision;
  filter.device = first.device.key;
  auto stored = store.QueryGraphLayers(filter);
  if (!stored.ok()) return stored.status();  // the store's errors name the file
  std::vector<StoredGraphLayer> layers;
  for (StoredGraphLayer& layer : *stored)
    if (layer.backend.version == first.backend.version) layers.push_back(std::move(layer));
  return layers;
}


// Fits an in-graph context on `layers` (one family's networks) into `context`, then calibrates
// `interval` on those networks with it; says in the notes what it did or why not.
void FitFamilyContext(const std::vector<StoredGraphLayer>& layers, const Expected<ContextCaches>& caches, const Pack& pack,
                      int nchwc_block, std::optional<ContextModel>& context, std::optional<NetworkInterval>& interval,
                      std::string& context_note, std::string& interval_note) {
  std::vector<MeasuredNetwork> networks = GroupNetworks(layers);
  const std::size_t unread = nchwc_block > 0 ? CountNchwcReorders(networks, nchwc_block) : 0;
  auto model = caches.ok() ? FitContextModel(networks, *caches, {TensorMemory::kArena}, nchwc_block)
                           : Expected<ContextModel>(caches.status());
  if (model.ok()) context = *model;

  // After the context: the interval is calibrated on the pack's predictions as PredictModel makes them.
  auto calibrated = CalibrateNetworkInterval(pack, context ? &*context : nullptr, networks);
  if (calibrated.ok()) {
    interval = *calibrated;
    interval_note = fmt::format(
        "90% interval: calibrated on {} random networks the pack never measured ({} left out: a layer it cannot "
        "predict); predicted / measured {:.3f}–{:.3f} from its predictors, {:.3f}–{:.3f} from their measured layers",
        calibrated->networks, calibrated->skipped, calibrated->predicted_lo, calibrated->predicted_hi,
        calibrated->measured_lo, calibrated->measured_hi);
  } else {
    interval_note = "interval: the kernels' spreads summed (not calibrated: " + calibrated.status().message() + ")";
  }
  if (!model.ok()) {
    context_note = "no in-graph context: " + model.status().message();
    return;
  }
  std::string layout_note;
  if (nchwc_block > 0) {
    layout_note = fmt::format(" + {:.4f} ms per MiB ONNX Runtime reorders between layouts, {:.4f} more on over 8 channel "
                              "planes of whole 4 KiB pages (NCHWc, block {}; {})",
                              model->layout_ms_per_mib, model->layout_paged_ms_per_mib, nchwc_block,
                              model->layout_measured ? "measured: the networks' reorders timed over their bytes"
                                                     : "fitted with the rest");
    if (unread > 0) layout_note += fmt::format(" ({} of {} networks not rebuilt: their reorders not counted)", unread, networks.size());
  }
  context_note = fmt::format(
      "in-graph context: {} + {:.4f} ms per layer + {:.4f} ms per MiB lost from L2 ({} KiB) + {:.4f} ms per MiB lost "
      "from L3 ({} MiB simulated; activations' memory: {}), for layers without weights {:.4f} and {:.4f}{}; fitted on {} "
      "layers of {} random networks, minimising each {}'s error; held-out networks' layer sums {:.1f}% RMSPE alone, {:.1f}% with it "
      "(one share {:.1f}%, a share per class of kernel {:.1f}%)",
      model->ShareText(), model->layer_ms, model->l2_ms_per_mib, model->l2_bytes >> 10, model->l3_ms_per_mib, model->l3_bytes >> 20,
      TensorMemoryName(model->memory), model->weightless_l2_ms_per_mib, model->weightless_l3_ms_per_mib, layout_note, model->layers,
      model->graphs, model->objective == ContextObjective::kNetworks ? "network" : "layer", model->cv_alone_rmspe_pct,
      model->cv_rmspe_pct, model->cv_one_share_rmspe_pct, model->cv_class_shares_rmspe_pct);
}

// Fits the pack's in-graph contexts and intervals: one on the CNN families' networks, and one on
// the transformer encoders' when they were measured (a model with attention is predicted with it).
Status FitContextAndInterval(const Store& store, const std::vector<StoredGraphLayer>& layers, int nchwc_block,
                             StoreFit& result) {
  if (layers.empty()) {
    result.context_note = "no layers measured in context on this configuration (latte calibrate measures them): the pack "
                          "predicts each layer as its kernel alone";
    result.interval_note = "interval: the kernels' spreads summed (no networks measured in context to calibrate it on)";
    return Status::Ok();
  }
  auto caches = ContextCachesOf(store, layers);
  if (!caches.ok() && caches.status().code() != StatusCode::kInvalidInput) return caches.status();
  LATTE_ASSIGN_OR_RETURN(const std::set<std::int64_t> encoder_campaigns, EncoderCampaigns(store));
  std::vector<StoredGraphLayer> cnn, encoders;
  for (const StoredGraphLayer& layer : layers) (encoder_campaigns.count(layer.campaign) ? encoders : cnn).push_back(layer);
  Pack& pack = result.fit.pack;
  FitFamilyContext(cnn, caches, pack, nchwc_block, pack.context, pack.interval, result.context_note, result.interval_note);
  if (!encoders.empty()) {
    std::string context_note, interval_note;
    FitFamilyContext(encoders, caches, pack, nchwc_block, pack.transformer_context, pack.transformer_interval, context_note,
                     interval_note);
    result.context_note += "\nfor models with attention, from transformer encoders: " + context_note;
    result.interval_note += "\nfor models with attention, from transformer encoders: " + interval_note;
  }
  return Status::Ok();
}

// Of the prior samples of each kind, the fitted predictors get at most as many as the store
// measured of that kind (at least kMinPriorFitted), evenly spread over their times from small to
// large, appended to `fitted`; returns how many it appended. A pack's 40,000 kernels fitted whole
// would make a 10-minute calibration's fit take half an hour, and outweigh what was measured here.
constexpr std::size_t kMinPriorFitted = 200;
std::size_t SplitPrior(std::vector<TrainingSample> prior, const std::map<std::string, std::size_t>& measured_per_kind,
                       std::vector<TrainingSample>& fitted) {
  const std::size_t before = fitted.size();
  std::map<std::string, std::vector<TrainingSample>> by_kind;
  for (TrainingSample& s : prior) by_kind[ModelKind(s.kernel)].push_back(std::move(s));
  for (auto& [kind, kind_prior] : by_kind) {
    auto measured = measured_per_kind.find(kind);
    const std::size_t keep =
        std::max(kMinPriorFitted, measured == measured_per_kind.end() ? std::size_t{0} : measured->second);
    std::sort(kind_prior.begin(), kind_prior.end(), [](const TrainingSample& a, const TrainingSample& b) {
      return a.p50_ms != b.p50_ms ? a.p50_ms < b.p50_ms : a.kernel.Key() < b.kernel.Key();
    });
    const double stride = kind_prior.size() > keep ? double(kind_prior.size()) / double(keep) : 1.0;
    double next = 0;
    for (std::size_t i = 0; i < kind_prior.size(); ++i) {
      if (double(i) < next) continue;
      fitted.push_back(std::move(kind_prior[i]));
      next += stride;
    }
  }
  return fitted.size() - before;
}

// The SIMD flags of the measurements' device, as its fingerprint recorded them; [] when it did
// not (a table imported from elsewhere).
std::vector<std::string> IsaFlagsOf(const nlohmann::json& device) {
  std::vector<std::string> flags;
  if (device.contains("isa_flags") && device.at("isa_flags").is_array())
    for (const nlohmann::json& flag : device.at("isa_flags"))
      if (flag.is_string()) flags.push_back(flag.get<std::string>());
  return flags;
}

}  // namespace

Expected<std::set<std::int64_t>> EncoderCampaigns(const Store& store) {
  auto campaigns = store.ListCampaigns();
  if (!campaigns.ok()) return campaigns.status();
  std::set<std::int64_t> ids;
  for (const CampaignInfo& campaign : *campaigns) {
    const nlohmann::json space = nlohmann::json::parse(campaign.space, nullptr, false);
    if (space.is_object() && space.value("graphs", "") == "random-encoder") ids.insert(campaign.id);
  }
  return ids;
}

std::vector<MeasuredNetwork> GroupNetworks(const std::vector<StoredGraphLayer>& layers) {
  std::map<std::pair<std::int64_t, std::string>, MeasuredNetwork> by_graph;
  for (const StoredGraphLayer& layer : layers) {  // ordered by campaign, graph, layer
    MeasuredNetwork& network = by_graph[{layer.campaign, layer.record.graph}];
    network.kernels.push_back(layer.record.kernel);
    network.traffic.push_back(layer.record.traffic);
    network.alone_ms.push_back(layer.record.alone_us / 1000);
    network.in_graph_ms.push_back(layer.record.in_graph_us / 1000);
    network.layout_ms = layer.record.graph_layout_us / 1000;  // the same on every layer
  }
  std::vector<MeasuredNetwork> networks;
  for (auto& [key, network] : by_graph) networks.push_back(std::move(network));
  return networks;
}

std::size_t CountNchwcReorders(std::vector<MeasuredNetwork>& networks, int block) {
  std::size_t unread = 0;
  for (MeasuredNetwork& network : networks) {
    // The network again from its kernels and who reads whom (the traffic keeps each layer's
    // activation inputs in the order its kernel's graph takes them).
    std::vector<JoinedKernel> joined;
    for (std::size_t i = 0; i < network.kernels.size(); ++i) {
      JoinedKernel& k = joined.emplace_back();
      k.kernel = network.kernels[i];
      if (i < network.traffic.size())
        for (const auto& [from, bytes] : network.traffic[i].inputs) k.from.push_back(from);
    }
    std::vector<std::vector<NodeId>> nodes;
    Expected<Graph> graph = joined.empty() ? Expected<Graph>(InvalidInput("no layers")) : JoinKernels(joined, &nodes);
    Expected<NchwcPlan> plan = graph.ok() ? PlanNchwc(*graph, block) : Expected<NchwcPlan>(graph.status());
    if (!plan.ok()) {
      ++unread;
      continue;
    }
    SetLayoutBytes(NchwcReorders(*graph, *plan, nodes), network.traffic);
  }
  return unread;
}


Expected<ContextCaches> ContextCachesOf(const Store& store, const std::vector<StoredGraphLayer>& layers) {
  auto campaigns = store.ListCampaigns();
  if (!campaigns.ok()) return campaigns.status();
  std::set<std::pair<std::int64_t, std::int64_t>> caches;
  for (const CampaignInfo& campaign : *campaigns) {
    if (std::none_of(layers.begin(), layers.end(), [&](const StoredGraphLayer& l) { return l.campaign == campaign.id; }))
      continue;
    const nlohmann::json space = nlohmann::json::parse(campaign.space, nullptr, false);
    const bool known = space.is_object() && space.contains("l2_bytes") && space.contains("l3_bytes") &&
                       space["l2_bytes"].is_number_integer() && space["l3_bytes"].is_number_integer();
    caches.insert(known ? std::pair{space["l2_bytes"].get<std::int64_t>(), space["l3_bytes"].get<std::int64_t>()}
                        : std::pair<std::int64_t, std::int64_t>{0, 0});
  }
  if (caches.size() > 1) return InvalidInput("the networks measured in context ran with different cache sizes");
  if (caches.empty()) return ContextCaches{};
  return ContextCaches{caches.begin()->first, caches.begin()->second};
}

std::string DescribeLeftOut(const std::vector<DamagedMeasurement>& left_out, std::size_t shown) {
  std::string text;
  for (std::size_t i = 0; i < left_out.size() && i < shown; ++i) {
    text += fmt::format("{}measurement {}: {}", i == 0 ? "" : "; ", left_out[i].id, left_out[i].why);
  }
  if (left_out.size() > shown) text += fmt::format("; and {} more", left_out.size() - shown);
  return text;
}

std::string NowUtcIso8601() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

void SetBackendTraits(const BackendFactory* backend, StoreFitRequest& request) {
  const BackendFactory none;
  const BackendFactory& traits = backend != nullptr ? *backend : none;
  request.backend_takes_nhwc = traits.takes_nhwc;
  request.nchwc_block = traits.nchwc_block;
  request.channels_in_vectors = traits.channels_in_vectors;
  request.options.clamps_run_apart = traits.clamps_run_apart;
  request.options.channels_not_in_vectors = traits.channels_not_in_vectors;
}

Expected<StoreFit> FitFromStore(const StoreFitRequest& request) {
  const std::string backend = request.filter.backend.value_or("");
  if (backend.empty()) return InvalidInput("a fit needs a backend");
  auto fail = [&](const Status& status) { return status.WithContext(MaskPassword(request.db)); };
  auto store = Store::OpenReadOnly(request.db);  // a fit only reads the store
  if (!store.ok()) return store.status();  // Open's errors name the file already
  // A row whose figures are no times is left out, and the report says which and why: one damaged
  // row does not stop a fit on thousands, nor is it fitted as a made-up number.
  std::vector<DamagedMeasurement> left_out;
  auto rows = store->QueryMeasurements(request.filter, &left_out);
  if (!rows.ok()) return rows.status();  // names the file already
  std::erase_if(*rows, [&](const StoredMeasurement& m) {
    if (m.stats.p50 > 0) return false;
    left_out.push_back({m.id, fmt::format("p50 is {}, not a positive time", m.stats.p50)});
    return true;
  });
  std::sort(left_out.begin(), left_out.end(),
            [](const DamagedMeasurement& a, const DamagedMeasurement& b) { return a.id < b.id; });
  if (rows->empty() && !left_out.empty()) {
    return fail(InvalidInput(fmt::format("none of the {} matching measurements can be fitted ({})", left_out.size(),
                                         DescribeLeftOut(left_out))));
  }
  if (rows->empty()) {
    return fail(NotFound("no measurements of backend '" + backend +
                         "' match (check --backend, --device, --num-threads, --precision)"));
  }
  // A pack is for one device + backend configuration: refuse to mix, and say how to choose.
  std::set<std::string> devices, configs;
  for (const StoredMeasurement& m : *rows) {
    devices.insert(m.device.key);
    configs.insert(m.backend.version + " threads=" + std::to_string(m.backend.threads) + " " + m.backend.precision);
  }
  if (devices.size() > 1) {
    return fail(InvalidInput("measurements from " + std::to_string(devices.size()) +
                             " devices; choose one with --device (" + JoinSet(devices) + ")"));
  }
  if (configs.size() > 1) {
    return fail(InvalidInput("measurements of several configurations of " + backend +
                             "; choose with --num-threads / --precision (" + JoinSet(configs) + ")"));
  }
  const StoredMeasurement& first = rows->front();
  PackInfo info;
  info.device = nlohmann::json::parse(first.device.fingerprint_json, nullptr, false);
  if (info.device.is_discarded() || !info.device.is_object()) info.device = nlohmann::json::object();
  info.device["key"] = first.device.key;
  info.device["description"] = first.device.description;
  info.backend = first.backend.name;
  info.backend_version = first.backend.version;
  info.backend_takes_nhwc = request.backend_takes_nhwc;
  info.threads = first.backend.threads;
  info.precision = first.backend.precision;
  info.command = request.command;
  info.created = NowUtcIso8601();
  info.latte_version = request.latte_version;

  // The drift reference as the campaigns behind these measurements and networks read it.
  LATTE_ASSIGN_OR_RETURN(std::vector<StoredGraphLayer> layers, ContextLayers(*store, first));
  std::set<std::int64_t> campaigns = CampaignsOf(*rows);
  for (const StoredGraphLayer& layer : layers) campaigns.insert(layer.campaign);
  LATTE_ASSIGN_OR_RETURN(const CampaignReference reference, ReadCampaignReference(*store, campaigns));
  info.reference_kernel = reference.kernel;
  if (!reference.readings.empty()) {
    info.reference_p50_us = reference.LevelUs();
    info.reference_readings = reference.readings.size();
    info.reference_spread = RobustRelativeSd(reference.readings);
  }

  // Each measurement scaled to the reference's median level (calibrate/drift_correction), unless
  // asked not to, by as much of the reference's changes as the kernels the networks measured
  // more than once shared (all of them without such kernels).
  const std::optional<DriftFollow> follow = EstimateDriftFollow(reference.levels, layers);
  DriftCorrector corrector(reference.levels, info.reference_p50_us, request.correct_drift, follow);
  std::set<std::string> fused_kinds;
  std::vector<TrainingSample> samples;
  samples.reserve(rows->size());
  for (const StoredMeasurement& m : *rows) {
    const double factor = corrector.Factor(m.campaign, m.time);
    // Spread, one standard deviation: estimated from the p10–p90 range where the source gave it,
    // else its standard deviation, else unknown.
    double spread_us = std::isfinite(m.stats.p90) && std::isfinite(m.stats.p10) ? (m.stats.p90 - m.stats.p10) / kP10ToP90Sds
                       : std::isfinite(m.stats.std)                            ? m.stats.std
                                                                               : 0;
    samples.push_back({m.kernel, m.backend.threads, factor * m.stats.p50 / 1000, factor * spread_us / 1000});
    if (!m.kernel.fused.empty())
      fused_kinds.insert(request.nchwc_block > 0 && IsResidualFusion(m.kernel) ? NchwcRule(m.kernel.Kind(), request.nchwc_block)
                                                                              : m.kernel.Kind());
  }
  if (request.fusion_rules) info.fusion_rules = *request.fusion_rules;
  else info.fusion_rules.assign(fused_kinds.begin(), fused_kinds.end());
  const DriftCorrection drift = corrector.Finish();
  info.reference_corrected = drift.corrected;
  if (drift.corrected > 0) info.reference_follow = drift.exponent;
  // The networks' layers likewise (both their times: each layer's ratio in the graph to alone
  // stays as measured); campaigns before graph-context readings stay as measured.
  DriftCorrector layer_corrector(reference.levels, info.reference_p50_us, request.correct_drift, follow);
  for (StoredGraphLayer& layer : layers) ScaleLayerTimes(layer, layer_corrector.Factor(layer.campaign, layer.record.time));

  StoreFit result;
  result.measurements = samples.size();
  // Samples from elsewhere where this store has none of the same kernel (and thread count): a
  // share of them, spread over sizes, join the fitted predictors (see SplitPrior), never the
  // tables (they are predictions, not measurements of this machine).
  if (!request.prior.empty()) {
    std::set<std::string> measured;
    std::map<std::string, std::size_t> measured_per_kind;
    for (const TrainingSample& s : samples) {
      measured.insert(TableKey(s.kernel, s.threads));
      ++measured_per_kind[ModelKind(s.kernel)];
    }
    // At the machine speed of the measurements: the reference's level over its reading then.
    const double scale = request.correct_drift && request.prior_reference_us > 0 && info.reference_p50_us > 0
                             ? info.reference_p50_us / request.prior_reference_us
                             : 1.0;
    std::vector<TrainingSample> prior;
    for (const TrainingSample& s : request.prior) {
      if (measured.count(TableKey(s.kernel, s.threads))) {
        ++result.prior_replaced;
        continue;
      }
      prior.push_back(s);
      prior.back().p50_ms *= scale;
      prior.back().spread_ms *= scale;
      prior.back().measured = false;
    }
    result.prior_scale = scale;
    result.prior_used = prior.size();
    result.prior_fitted = SplitPrior(std::move(prior), measured_per_kind, samples);
    result.prior_source = request.prior_source;
  }
  result.drift = drift;
  result.layers_drift = layer_corrector.Finish();
  result.left_out = std::move(left_out);
  result.device_key = first.device.key;
  FitOptions options = request.options;
  if (request.channels_in_vectors) options.predictor.channel_tile = FloatLanes(IsaFlagsOf(info.device));
  options.predictor.nchw_tensors = request.backend_takes_nhwc == false;
  auto fit = FitPack(samples, info, options);
  if (!fit.ok()) return fail(fit.status());
  result.fit = std::move(*fit);
  if (result.fit.interrupted) return result;
  LATTE_RETURN_IF_ERROR(FitContextAndInterval(*store, layers, request.nchwc_block, result));
  return result;
}

}  // namespace latte
