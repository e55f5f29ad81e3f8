#include "calibrate/calibrate.h"

#include <algorithm>
#include <chrono>
#include <ostream>

#include <fmt/format.h>

#include "core/device.h"
#include "ir/fusion_rules.h"
#include "ir/kernel_graph.h"
#include "ir/kernel_params.h"
#include "calibrate/adapt.h"
#include "predict/context_model.h"
#include "run/backend.h"
#include "run/backend_registry.h"
#include "run/executor.h"

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
// Kernels of transformer encoders (profile/space's TransformerKernels), on a backend that runs
// attention: this share of what architectures leave, so the conv kinds keep the random and
// adaptive phases after it; drawn from more kernels than that share measures.
constexpr double kTransformerShare = 0.25;
constexpr std::size_t kTransformerKernels = 600;

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
      return InvalidInput(options.from_path + ": a pack of precision " + from.precision + "; calibrate --from starts from an fp32 pack");
    }
  }
  if (options.precision != Precision::kFp32 && options.precision != Precision::kInt8 && options.precision != Precision::kBf16)
    return InvalidInput("calibrate makes fp32, bf16 and int8 packs, not " + std::string(PrecisionName(options.precision)));
  if (options.precision != Precision::kFp32 && (options.from != nullptr || !options.from_path.empty()))
    return InvalidInput("--from adapts an fp32 pack; calibrate --precision " + std::string(PrecisionName(options.precision)) +
                        " starts from nothing");
  const bool from_pack = options.from != nullptr || !options.from_path.empty();  // no fusion detection
  if (options.detect_fusion && !from_pack && options.budget_secs < kMinCalibrateWithFusionSecs) {
    return InvalidInput("--budget under 2m leaves no time after fusion detection (about 30 s on one core): "
                        "give at least 2m, or --no-detect-fusion");
  }
  RunOptions probe;
  probe.precision = options.precision;
  LATTE_ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, registry.Create(options.backend, probe));
  if (Support s = backend->RunsPrecision(options.precision); !s.ok()) return InvalidInput(s.why());
  return Status::Ok();
}

namespace {

// What a calibration that starts from a pack feeds its fit: the pack's kernels as adapted here.
struct Prior {
  std::vector<TrainingSample> samples;
  double reference_us = 0;  // the drift reference as the adaptation read it
};

bool Stopped(const CalibrateOptions& options) { return options.stop != nullptr && options.stop->load(); }

// Step 1 from a pack: its fusion rules (with what the backend fuses by construction, which a pack
// made before backends declared it may lack), and its kernels adapted to this machine.
Expected<Prior> StartFromPack(const CalibrateOptions& options, const BackendRegistry& registry, const RunOptions& run,
                              CalibrateResult& result, std::ostream& log) {
  log << "calibrate: starting from " << options.from_path << ": its fusion rules, and its kernels adapted here\n";
  result.fusion_rules = options.from->info.fusion_rules;
  {
    LATTE_ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, registry.Create(options.backend, run));
    for (const std::string& kind : backend->FusedByConstruction()) {
      if (std::find(result.fusion_rules.begin(), result.fusion_rules.end(), kind) == result.fusion_rules.end())
        result.fusion_rules.push_back(kind);
    }
  }
  AdaptOptions adapt;
  adapt.budget_secs = std::clamp(options.budget_secs * kFromAdaptShare, kMinAdaptSecs, kMaxFromAdaptSecs);
  adapt.command = options.command;
  adapt.stop = options.stop;
  LATTE_ASSIGN_OR_RETURN(AdaptResult adapted, RunAdapt(std::move(*options.from), adapt, registry, log));
  Prior prior;
  if (adapted.interrupted) {
    result.interrupted = true;
    return prior;
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
    prior.samples.push_back({entry.kernel, entry.threads, here->ms, here->spread_ms});
  }
  from.adapted = prior.samples.size();
  prior.reference_us = adapted.reference_now_us;
  return prior;
}

// Step 1 otherwise: the fusion rules detected by timing, or the default ones.
Status ChooseFusionRules(const CalibrateOptions& options, const BackendRegistry& registry,
                         const CampaignOptions& campaign, CalibrateResult& result, std::ostream& log) {
  if (!options.detect_fusion) {
    const FusionRules rules = FusionRules::Default();
    result.fusion_rules.assign(rules.kinds().begin(), rules.kinds().end());
    return Status::Ok();
  }
  log << "calibrate: detecting fusion on " << options.backend << "\n";
  FusionOptions fusion;
  fusion.campaign = campaign;
  // At int8 and bf16 too: XNNPACK's int8 operators take the same output clamps as its fp32 ones,
  // oneDNN's post-ops are the same at every precision.
  fusion.campaign.run.precision = Precision::kFp32;
  LATTE_ASSIGN_OR_RETURN(FusionReport report, DetectFusion(fusion, registry, log));
  result.fusion_rules = report.rules;
  result.fusion = std::move(report);
  return Status::Ok();
}

// Step 2: the profiling phases, each a resumable campaign with a share of what is left of the
// budget; what a phase does not use (it ran out of kernels) goes to the next.
class Phases {
 public:
  Phases(const CalibrateOptions& options, const BackendRegistry& registry, const CampaignOptions& campaign,
         double deadline, CalibrateResult& result, std::ostream& log)
      : options_(options), registry_(registry), campaign_(campaign), deadline_(deadline), result_(result), log_(log) {}

  Status Run() {
    std::vector<std::string> kinds = options_.kinds;
    for (const std::string& rule : result_.fusion_rules) {
      const std::string kind = FusionRuleKind(rule);  // a conditional rule's kind is measured as any other
      if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) kinds.push_back(kind);
    }
    // Encoder layers' kernels where matmul is asked for and the backend runs attention's matmul;
    // gelu and layer_norm then join the random and adaptive kinds (a decomposed layer norm in a
    // CNN's attention block, as PP-OCRv4 rec has, is one layer_norm kernel too).
    const bool transformers = std::find(kinds.begin(), kinds.end(), "matmul") != kinds.end() &&
                              BackendRunsAttention(campaign_.backend, registry_, campaign_.run);
    for (const char* kind : {"gelu", "layer_norm"})
      if (transformers && std::find(kinds.begin(), kinds.end(), kind) == kinds.end()) kinds.push_back(kind);
    if (!options_.models.empty()) {  // the kernels users asked about come first
      SamplerConfig sampler;
      sampler.strategy = "from-models";
      sampler.models = options_.models;
      sampler.input_shapes = options_.input_shapes;
      sampler.input_values = options_.input_values;
      sampler.layout_backend = options_.backend;
      sampler.layout_backend_takes_nhwc = registry_.Find(options_.backend)->takes_nhwc;
      sampler.fusion_rules = result_.fusion_rules;
      sampler.seed = options_.seed;
      LATTE_RETURN_IF_ERROR(KernelPhase("the models' kernels and their neighbours", sampler, 0.5));
    }
    LATTE_RETURN_IF_ERROR(ContextNetworks(transformers));
    if (result_.interrupted) return Status::Ok();
    {  // Kernels of networks like the ones people deploy: what a model the pack never saw is made of.
      SamplerConfig sampler;
      sampler.strategy = "architectures";
      sampler.seed = options_.seed;
      sampler.residual_fusions = std::any_of(kinds.begin(), kinds.end(), [](const std::string& kind) {
        Expected<Kernel> k = ParseKernelKind(kind);
        return k.ok() && IsResidualFusion(*k);
      });
      sampler.max_kernels = kArchitectureKernels;
      LATTE_RETURN_IF_ERROR(KernelPhase("kernels of architectures like real networks", sampler, kArchitectureShare));
    }
    if (transformers) {  // Encoders' kernels, from encoder models imported and grouped as predict does.
      SamplerConfig sampler;
      sampler.strategy = "transformers";
      sampler.layout_backend = options_.backend;
      sampler.layout_backend_takes_nhwc = registry_.Find(options_.backend)->takes_nhwc;
      sampler.fusion_rules = result_.fusion_rules;
      sampler.seed = options_.seed;
      sampler.max_kernels = kTransformerKernels;
      LATTE_RETURN_IF_ERROR(KernelPhase("kernels of transformer encoders", sampler, kTransformerShare));
    }
    {  // Then every kind at random in its box: the kinds and shapes architectures do not reach.
      SamplerConfig sampler;
      sampler.strategy = "random";
      sampler.kinds = kinds;
      sampler.seed = options_.seed;
      sampler.max_kernels = 200 * kinds.size();  // more than any budget here measures: the budget ends it
      LATTE_RETURN_IF_ERROR(KernelPhase("random kernels of " + std::to_string(kinds.size()) + " kinds", sampler, 0.6));
    }
    for (int round = 1; round <= kMaxAdaptiveRounds && !result_.interrupted; ++round) {
      SamplerConfig sampler;
      sampler.strategy = "adaptive";
      sampler.kinds = kinds;
      sampler.seed = options_.seed + static_cast<std::uint64_t>(round);
      sampler.max_kernels = kAdaptiveRoundKernels;
      sampler.skip_sparse_kinds = true;
      const std::size_t before = result_.phases.size();
      LATTE_RETURN_IF_ERROR(KernelPhase("adaptive round " + std::to_string(round), sampler, 1.0));
      if (result_.phases.size() == before || result_.phases.back().result.summary.measured == 0) break;
    }
    return Status::Ok();
  }

 private:

  // One campaign of kernels measured alone.
  Status KernelPhase(const std::string& name, SamplerConfig sampler, double share) {
    if (Stopped(options_)) return Status::Ok();
    const double left = deadline_ - Now();
    const std::optional<double> given = CalibratePhaseBudget(left, share, kernels_measured_);
    if (!given) return Status::Ok();
    const double budget = *given;
    if (budget > left * share) {
      log_ << fmt::format("calibrate: {:.0f} s of the budget left and no kernel measured yet: {} gets {:.0f} s "
                          "past the budget\n",
                          std::max(left, 0.0), name, budget);
    }
    ProfileOptions profile;
    profile.sampler = std::move(sampler);
    profile.campaign = campaign_;
    profile.campaign.budget_secs = budget;
    profile.db = options_.db;
    profile.tty = options_.tty;
    log_ << "calibrate: " << name << " (" << static_cast<int>(budget) << " s of the budget)\n";
    const double phase_start = Now();
    LATTE_ASSIGN_OR_RETURN(ProfileResult profiled, RunProfile(profile, registry_, log_));
    kernels_measured_ += profiled.summary.measured + profiled.summary.already_done;
    result_.phases.push_back({name, budget, Now() - phase_start, std::move(profiled)});
    if (result_.phases.back().result.summary.interrupted) result_.interrupted = true;
    return Status::Ok();
  }

  // Random networks, layer by layer in the graph and alone: what the pack's context model is
  // fitted on. A share of what is left, after the models' kernels, split between the families by
  // weight (a family whose campaign is done leaves its share to the next): the two CNN families
  // and, on a backend that runs attention, transformer encoders, whose networks the pack fits a
  // context and interval of its own on (a model with attention is predicted with them): a
  // context fitted on CNNs over-predicted encoders by a quarter. As much as a CNN family: the
  // interval needs 20 networks, and a 10-minute calibration measures about 25 in that time.
  Status ContextNetworks(bool transformers) {
    if (Stopped(options_)) return Status::Ok();
    const double context_deadline = Now() + (deadline_ - Now()) * kGraphContextShare;
    struct Family {
      NetworkFamily family;
      const char* name;
      double weight;
    };
    std::vector<Family> families = {{NetworkFamily::kInvertedResidual, "inverted residual", 1.0},
                                    {NetworkFamily::kHardSwishSe, "hard-swish, squeeze-and-excite", 1.0}};
    if (transformers) families.push_back({NetworkFamily::kEncoder, "transformer encoders", 1.0});
    for (std::size_t f = 0; f < families.size(); ++f) {
      double weights = 0;
      for (std::size_t g = f; g < families.size(); ++g) weights += families[g].weight;
      const double budget = (context_deadline - Now()) * families[f].weight / weights;
      if (budget < kMinCalibratePhaseSecs) continue;
      GraphContextOptions context;
      context.campaign = campaign_;
      context.campaign.budget_secs = budget;
      // Shorter runs than the kernel campaigns' (both ways): the fit needs many networks more than
      // a precise time for each of their layers.
      context.campaign.measure.min_secs = 0.05;
      context.graph_measure.min_secs = 0.2;
      context.fusion_rules = result_.fusion_rules;
      context.graphs = kGraphContextNetworks;
      // Each family's context is fitted on its own networks or, the two CNN families, together:
      // at least what one fit needs from each, even past this phase's share of a short budget.
      context.min_graphs = kMinContextNetworks;
      context.family = families[f].family;
      context.seed = options_.seed;
      context.db = options_.db;
      log_ << "calibrate: random networks in context, " << families[f].name << " (" << static_cast<int>(budget)
           << " s of the budget)\n";
      const double phase_start = Now();
      LATTE_ASSIGN_OR_RETURN(GraphContextResult measured, RunGraphContext(context, registry_, log_));
      result_.graph_contexts.push_back({families[f].name, std::move(measured), Now() - phase_start});
      if (result_.graph_contexts.back().result.interrupted) {
        result_.interrupted = true;
        return Status::Ok();
      }
    }
    return Status::Ok();
  }

  const CalibrateOptions& options_;
  const BackendRegistry& registry_;
  const CampaignOptions& campaign_;
  const double deadline_;
  CalibrateResult& result_;
  std::ostream& log_;
  std::size_t kernels_measured_ = 0;  // by the phases so far, or by earlier runs of their campaigns
};

// Step 3: the pack, from every measurement of this machine and configuration, old and new.
Expected<StoreFit> FitCalibration(const CalibrateOptions& options, const BackendRegistry& registry,
                                  const CalibrateResult& result, Prior prior) {
  StoreFitRequest request;
  request.db = options.db;
  request.filter.backend = options.backend;
  request.filter.threads = options.num_threads;
  request.filter.precision = std::string(PrecisionName(options.precision));
  request.filter.device = ReadDeviceFingerprint().Key();
  request.options = options.fit;
  SetBackendTraits(registry.Find(options.backend), request);  // checked known at the start
  request.fusion_rules = result.fusion_rules;
  request.command = options.command;
  request.options.stop = options.stop;  // a first Ctrl-C during the fit: measurements kept, no pack
  request.prior = std::move(prior.samples);
  request.prior_source = options.from_path;
  request.prior_reference_us = prior.reference_us;
  return FitFromStore(request);
}

}  // namespace

bool BackendRunsAttention(const std::string& backend, const BackendRegistry& registry, const RunOptions& run) {
  Kernel scores;
  scores.op = OpKind::kMatMul;
  WriteParams(MatMulKernelParams{2, 16, 16, 16}, scores);
  Expected<Graph> graph = BuildKernelGraph(scores);
  if (!graph.ok()) return false;
  // Asked of the matmul as a model at this precision runs it: at bf16 between casts, its
  // activations bfloat16 (asked of the float32 graph, a bf16 backend refused it, and a bf16
  // calibration measured no encoder kernel: no layer_norm for PP-OCRv4 rec's layer norms).
  Expected<GraphPlan> plan = PlanGraphOnBackend(*graph, backend, registry, run);
  Expected<std::unique_ptr<Backend>> created = registry.Create(backend, run);
  if (!plan.ok() || !created.ok()) return false;
  for (NodeId n = 0; n < static_cast<NodeId>(plan->graph.num_nodes()); ++n)
    if (!(*created)->Supports(plan->graph, n).ok()) return false;
  return true;
}

Expected<CalibrateResult> RunCalibrate(const CalibrateOptions& options, const BackendRegistry& registry,
                                       std::ostream& log) {
  LATTE_RETURN_IF_ERROR(CheckCalibrateOptions(options, registry));
  const double start = Now();
  CampaignOptions campaign;
  campaign.backend = options.backend;
  campaign.run.num_threads = options.num_threads;
  campaign.run.precision = options.precision;
  campaign.stop = options.stop;

  CalibrateResult result;
  // 1. Which op chains the backend runs as one kernel: decides how models are split into kernels.
  // A pack to start from says already (and is adapted to this machine: its kernels join the fit).
  Prior prior;
  if (options.from != nullptr) {
    LATTE_ASSIGN_OR_RETURN(prior, StartFromPack(options, registry, campaign.run, result, log));
  } else {
    LATTE_RETURN_IF_ERROR(ChooseFusionRules(options, registry, campaign, result, log));
  }
  result.fusion_secs = Now() - start;
  if (Stopped(options)) result.interrupted = true;
  if (result.interrupted) return result;

  // 2. The measurements, within the budget.
  LATTE_RETURN_IF_ERROR(Phases(options, registry, campaign, start + options.budget_secs, result, log).Run());
  if (result.interrupted) return result;

  // 3. The pack.
  LATTE_ASSIGN_OR_RETURN(result.fit, FitCalibration(options, registry, result, std::move(prior)));
  if (result.fit.fit.interrupted) result.interrupted = true;
  return result;
}

}  // namespace latte
