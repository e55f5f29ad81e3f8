#pragma once
// Layers measured inside graphs: what a kernel costs in a model beyond its time alone. Inside a
// model a layer finds its weights and output buffer as the rest of the model left the caches
// (ir/cache_reuse); alone, run after run, it finds them where its own last run left them. Random
// networks of three families (space's RandomNetwork, RandomHardSwishNetwork and
// RandomEncoderNetwork, never the models a pack is judged on) are run
// whole with a per-node profile and each of their kernels alone right after, minutes apart at
// most; each layer's two times and its traffic go to the store, and a pack's in-graph context
// model is fitted on them (predict/context_model).

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "core/status.h"
#include "db/store.h"
#include "ir/kernel_graph.h"
#include "profile/campaign.h"

namespace latte {

class BackendRegistry;

/// The random networks a campaign measures: MobileNetV2-like (relu6, inverted residuals),
/// MobileNetV3-like (hard-swish, squeeze-and-excite) or two-layer transformer encoders (BERT and
/// ViT as PyTorch exports them, for backends that run attention).
enum class NetworkFamily { kInvertedResidual, kHardSwishSe, kEncoder };

struct GraphContextOptions {
  CampaignOptions campaign;               // backend, threads, stop; kernels alone use its measure options
  std::vector<std::string> fusion_rules;  // how the graphs are split into kernels (the pack's rules)
  std::size_t graphs = 40;                // random networks to measure (the campaign's size)
  /// Networks tried (stored by this run or before, or skipped) even once the budget is spent:
  /// the fewest a context fit needs, so that a short budget on a slow or busy machine does not
  /// spend its share on networks that fit nothing. 0: the budget alone decides.
  std::size_t min_graphs = 0;
  NetworkFamily family = NetworkFamily::kInvertedResidual;
  std::uint64_t seed = 0;
  std::string db;
  MeasureOptions graph_measure = GraphContextMeasureOptions();  // whole-graph runs, per-node profile
  /// Whole runs of a network: enough profiled runs for stable per-node means, short enough that
  /// a 10-minute calibration measures a few dozen networks.
  static MeasureOptions GraphContextMeasureOptions();
};

struct GraphContextResult {
  std::int64_t campaign_id = 0;
  std::size_t planned = 0;
  std::size_t done_before = 0;   // graphs stored by an earlier run of the same campaign
  std::size_t measured = 0;      // graphs measured and stored by this run
  std::size_t layers_stored = 0;
  std::vector<std::string> skipped;  // "random-net 3: why" for a network that could not be measured
  std::size_t references = 0;        // readings of the drift reference (before each network, after the last)
  std::string reference_error;       // why the reference could not be measured, if it could not
  bool budget_spent = false;
  bool interrupted = false;
};

/// The layers of `graph` run on `campaign.backend` (its plan, split by `rules`, in execution order),
/// each with its time in the graph's per-node profile (mean over the profiled runs) and its
/// kernel's time alone (p50, campaign protocol) measured right after. Fails naming the node when
/// a node is in no kernel, and passes on the backend's reason when a kernel cannot run.
Expected<std::vector<GraphLayerRecord>> MeasureGraphLayers(const Graph& graph, const std::string& name,
                                                           const FusionRules& rules, const CampaignOptions& campaign,
                                                           const MeasureOptions& graph_measure,
                                                           const BackendRegistry& registry);

/// Measures `options.graphs` random networks (seeded) within the campaign's budget as a resumable
/// campaign of the store: the same options run again continue with the networks not yet stored.
/// Each network's layers are stored in one transaction. Progress lines go to `log`.
Expected<GraphContextResult> RunGraphContext(const GraphContextOptions& options, const BackendRegistry& registry,
                                             std::ostream& log);

}  // namespace latte
