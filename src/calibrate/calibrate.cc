#include "calibrate/calibrate.h"

#include <algorithm>
#include <chrono>
#include <ostream>

#include <fmt/format.h>

#include "core/device.h"
#include "ir/kernel_graph.h"
#include "calibrate/adapt.h"
#include "run/backend.h"
#include "run/backend_registry.h"

namespace latte {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Adaptive rounds: this many new kernels each, at most this many rounds.
constexpr std::size_t kAdaptiveRoundKernels = 60;
constexpr int kMaxAdaptiveRounds = 50;
// The networks measured in context: a campaign of this many (a budget ends it sooner), given this
// share of what the models' kernels leave of the budget (about 2 s a network on one core).
constexpr std::size_t kGraphContextNetworks = 80;
constexpr double kGraphContextShare = 0.5;
// Kernels of architectures like real ones (profile/architectures): this share of what the
// networks leave, drawn from more kernels than any budget here measures.
constexpr double kArchitectureShare = 0.5;
constexpr std::size_t kArchitectureKernels = 6000;

}  // namespace

std::optional<double> CalibratePhaseBudget(double left_secs, double share, std::size_t kernels_measured) {
  const double budget = std::max(left_secs, 0.0) * share;
  if (budget >= kMinCalibratePhaseSecs) return budget;
  if (kernels_measured > 0) return std::nullopt;
  return kMinCalibratePhaseSecs;
}

// pow, sqrt and matmul: the layer norms and attention of models exported from PyTorch and Paddle
// (PP-OCRv4's recognizer has all three). Standalone activations too: a relu is usually folded
// into the op before it, but not when the two run on different backends (latte pareto) or the op
// cannot carry it. Likewise batch_norm: folded into a conv before it at import, but not after a
// concat, an add or a pool.
std::vector<std::string> CalibrateOptions::DefaultCalibrationKinds() {
  return {"conv2d",     "depthwise_conv2d", "transpose_conv2d", "fully_connected", "add",
          "mul",        "max_pool2d",       "avg_pool2d",       "global_avg_pool", "mean",
          "concat",     "pad",              "resize",           "reshape",         "transpose",
          "softmax",    "hard_swish",       "sigmoid",          "prelu",           "relu",
          "relu6",      "hard_sigmoid",     "sub",              "div",             "batch_norm",
          "pow",        "sqrt",             "matmul",          "slice"};
}

Status CheckCalibrateOptions(const CalibrateOptions& options, const BackendRegistry& registry) {
  if (!(options.budget_secs >= kMinCalibrateSecs)) {
    return InvalidInput("--budget must be at least 30s: fusion detection and a useful sample of kernels need it");
  }
  if (options.from != nullptr) {
    const PackInfo& from = options.from->info;
    if (from.backend != options.backend || from.threads != options.num_threads) {
      return InvalidInput(fmt::format("{}: a pack for {} with {} thread(s), not {} with {}: calibrate --from needs the "
                                      "same backend and --num-threads",
                                      options.from_path, from.backend, from.threads, options.backend,
                                      options.num_threads));
    }
    if (from.precision != "fp32") {
      return InvalidInput(options.from_path + ": a pack of precision " + from.precision + "; calibrate measures fp32");
    }
  }
  const bool from_pack = options.from != nullptr || !options.from_path.empty();  // no fusion detection
  if (options.detect_fusion && !from_pack && options.budget_secs < kMinCalibrateWithFusionSecs) {
    return InvalidInput("--budget under 2m leaves no time after fusion detection (about 30 s on one core): "
                        "give at least 2m, or --no-detect-fusion");
  }
  if (registry.Find(options.backend) == nullptr) {
    RunOptions probe;
    return registry.Create(options.backend, probe).status();
  }
  return Status::Ok();
}

Expected<CalibrateResult> RunCalibrate(const CalibrateOptions& options, const BackendRegistry& registry,
                                       std::ostream& log) {
  LATTE_RETURN_IF_ERROR(CheckCalibrateOptions(options, registry));
  const double start = Now();
  const double deadline = start + options.budget_secs;
  auto stopped = [&] { return options.stop != nullptr && options.stop->load(); };

  CampaignOptions campaign;
  campaign.backend = options.backend;
  campaign.run.num_threads = options.num_threads;
  campaign.stop = options.stop;

  CalibrateResult result;
  // 1. Which op chains the backend runs as one kernel: decides how models are split into kernels.
  // A pack to start from says already (and is adapted to this machine: its kernels join the fit).
  std::vector<TrainingSample> prior;
  double prior_reference_us = 0;  // the drift reference as the adaptation read it
  if (options.from != nullptr) {
    log << "calibrate: starting from " << options.from_path << ": its fusion rules, and its kernels adapted here\n";
    // The pack's rules, and what this backend fuses by construction (a pack made before backends
    // declared it may lack those kinds: calibration measures every kind its rules create).
    result.fusion_rules = options.from->info.fusion_rules;
    LATTE_ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, registry.Create(options.backend, campaign.run));
    for (const std::string& kind : backend->FusedByConstruction()) {
      if (std::find(result.fusion_rules.begin(), result.fusion_rules.end(), kind) == result.fusion_rules.end())
        result.fusion_rules.push_back(kind);
    }
    backend.reset();
    AdaptOptions adapt;
    adapt.budget_secs = std::clamp(options.budget_secs * kFromAdaptShare, kMinAdaptSecs, kMaxFromAdaptSecs);
    adapt.command = options.command;
    adapt.stop = options.stop;
    LATTE_ASSIGN_OR_RETURN(AdaptResult adapted, RunAdapt(std::move(*options.from), adapt, registry, log));
    if (adapted.interrupted) {
      result.interrupted = true;
      return result;
    }
    CalibrateResult::FromPack& from = result.from.emplace();
    from.path = options.from_path;
    from.remeasured = adapted.kernels.size();
    from.network_factor = adapted.network_factor;
    from.secs = adapted.secs;
    for (const TrainingSample& entry : adapted.pack.MeasuredKernels()) {
      ++from.kernels;
      if (entry.threads != options.num_threads) continue;
      Expected<Prediction> here = adapted.pack.Predict(entry.kernel, entry.threads);
      if (!here.ok() || !(here->ms > 0)) continue;
      prior.push_back({entry.kernel, entry.threads, here->ms, here->spread_ms});
    }
    from.adapted = prior.size();
    prior_reference_us = adapted.reference_now_us;
  } else if (options.detect_fusion) {
    log << "calibrate: detecting fusion on " << options.backend << "\n";
    FusionOptions fusion;
    fusion.campaign = campaign;
    LATTE_ASSIGN_OR_RETURN(FusionReport report, DetectFusion(fusion, registry, log));
    result.fusion_rules = report.rules;
    result.fusion = std::move(report);
  } else {
    const FusionRules rules = FusionRules::Default();
    result.fusion_rules.assign(rules.kinds().begin(), rules.kinds().end());
  }
  result.fusion_secs = Now() - start;
  if (stopped()) {
    result.interrupted = true;
    return result;
  }

  // 2. Profiling phases, each a resumable campaign with a share of what is left of the budget;
  // what a phase does not use (it ran out of kernels) goes to the next.
  std::size_t kernels_measured = 0;  // by the phases so far, or by earlier runs of their campaigns
  auto run_phase = [&](const std::string& name, SamplerConfig sampler, double share) -> Status {
    if (stopped()) return Status::Ok();
    const double left = deadline - Now();
    const std::optional<double> given = CalibratePhaseBudget(left, share, kernels_measured);
    if (!given) return Status::Ok();
    const double budget = *given;
    if (budget > left * share) {
      log << fmt::format("calibrate: {:.0f} s of the budget left and no kernel measured yet: {} gets {:.0f} s "
                         "past the budget\n",
                         std::max(left, 0.0), name, budget);
    }
    ProfileOptions profile;
    profile.sampler = std::move(sampler);
    profile.campaign = campaign;
    profile.campaign.budget_secs = budget;
    profile.db = options.db;
    profile.tty = options.tty;
    log << "calibrate: " << name << " (" << static_cast<int>(budget) << " s of the budget)\n";
    const double phase_start = Now();
    LATTE_ASSIGN_OR_RETURN(ProfileResult profiled, RunProfile(profile, registry, log));
    kernels_measured += profiled.summary.measured + profiled.summary.already_done;
    result.phases.push_back({name, budget, Now() - phase_start, std::move(profiled)});
    if (result.phases.back().result.summary.interrupted) result.interrupted = true;
    return Status::Ok();
  };
  std::vector<std::string> kinds = options.kinds;
  for (const std::string& rule : result.fusion_rules) {
    if (std::find(kinds.begin(), kinds.end(), rule) == kinds.end()) kinds.push_back(rule);
  }
  if (!options.models.empty()) {  // the kernels users asked about come first
    SamplerConfig sampler;
    sampler.strategy = "from-models";
    sampler.models = options.models;
    sampler.input_shapes = options.input_shapes;
    sampler.layout_backend = options.backend;
    sampler.layout_backend_takes_nhwc = registry.Find(options.backend)->takes_nhwc;
    sampler.fusion_rules = result.fusion_rules;
    sampler.seed = options.seed;
    LATTE_RETURN_IF_ERROR(run_phase("the models' kernels and their neighbours", sampler, 0.5));
  }
  // Random networks, layer by layer in the graph and alone: what the pack's context model is
  // fitted on. A share of what is left, after the models' kernels, split between the two families
  // (a family whose campaign is done leaves its share to the other).
  if (!stopped()) {
    const double context_deadline = Now() + (deadline - Now()) * kGraphContextShare;
    const std::pair<NetworkFamily, const char*> families[] = {
        {NetworkFamily::kInvertedResidual, "inverted residual"},
        {NetworkFamily::kHardSwishSe, "hard-swish, squeeze-and-excite"}};
    for (std::size_t f = 0; f < std::size(families); ++f) {
      const double budget = (context_deadline - Now()) / static_cast<double>(std::size(families) - f);
      if (budget < kMinCalibratePhaseSecs) continue;
      GraphContextOptions context;
      context.campaign = campaign;
      context.campaign.budget_secs = budget;
      // Shorter runs than the kernel campaigns' (both ways): the fit needs many networks more than
      // a precise time for each of their layers.
      context.campaign.measure.min_secs = 0.05;
      context.graph_measure.min_secs = 0.2;
      context.fusion_rules = result.fusion_rules;
      context.graphs = kGraphContextNetworks;
      context.family = families[f].first;
      context.seed = options.seed;
      context.db = options.db;
      log << "calibrate: random networks in context, " << families[f].second << " (" << static_cast<int>(budget)
          << " s of the budget)\n";
      const double phase_start = Now();
      LATTE_ASSIGN_OR_RETURN(GraphContextResult measured, RunGraphContext(context, registry, log));
      result.graph_contexts.push_back({families[f].second, std::move(measured), Now() - phase_start});
      if (result.graph_contexts.back().result.interrupted) {
        result.interrupted = true;
        return result;
      }
    }
  }
  {  // Kernels of networks like the ones people deploy: what a model the pack never saw is made of.
    SamplerConfig sampler;
    sampler.strategy = "architectures";
    sampler.seed = options.seed;
    sampler.max_kernels = kArchitectureKernels;
    LATTE_RETURN_IF_ERROR(run_phase("kernels of architectures like real networks", sampler, kArchitectureShare));
  }
  {  // Then every kind at random in its box: the kinds and shapes architectures do not reach.
    SamplerConfig sampler;
    sampler.strategy = "random";
    sampler.kinds = kinds;
    sampler.seed = options.seed;
    sampler.max_kernels = 200 * kinds.size();  // more than any budget here measures: the budget ends it
    LATTE_RETURN_IF_ERROR(run_phase("random kernels of " + std::to_string(kinds.size()) + " kinds", sampler, 0.6));
  }
  for (int round = 1; round <= kMaxAdaptiveRounds && !result.interrupted; ++round) {
    SamplerConfig sampler;
    sampler.strategy = "adaptive";
    sampler.kinds = kinds;
    sampler.seed = options.seed + static_cast<std::uint64_t>(round);
    sampler.max_kernels = kAdaptiveRoundKernels;
    sampler.skip_sparse_kinds = true;
    const std::size_t before = result.phases.size();
    LATTE_RETURN_IF_ERROR(run_phase("adaptive round " + std::to_string(round), sampler, 1.0));
    if (result.phases.size() == before || result.phases.back().result.summary.measured == 0) break;
  }
  if (result.interrupted) return result;

  // 3. The pack: every measurement of this machine and configuration, old and new.
  StoreFitRequest request;
  request.db = options.db;
  request.filter.backend = options.backend;
  request.backend_takes_nhwc = registry.Find(options.backend)->takes_nhwc;  // checked known at the start
  request.filter.threads = options.num_threads;
  request.filter.precision = "fp32";
  request.filter.device = ReadDeviceFingerprint().Key();
  request.options = options.fit;
  request.options.clamps_run_apart = registry.Find(options.backend)->clamps_run_apart;
  request.fusion_rules = result.fusion_rules;
  request.command = options.command;
  request.options.stop = options.stop;  // a first Ctrl-C during the fit: measurements kept, no pack
  request.prior = std::move(prior);
  request.prior_source = options.from_path;
  request.prior_reference_us = prior_reference_us;
  LATTE_ASSIGN_OR_RETURN(result.fit, FitFromStore(request));
  if (result.fit.fit.interrupted) result.interrupted = true;
  return result;
}

}  // namespace latte
