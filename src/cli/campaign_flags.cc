#include "cli/campaign_flags.h"

#include <memory>

#include "ir/fusion_rules.h"

namespace latte::cli {

void AddCampaignFlags(CLI::App& cmd, CampaignFlags& flags, const std::vector<std::string>& strategies) {
  cmd.add_option("--backend", flags.backend, "Backend that runs the kernels")->capture_default_str();
  cmd.add_option("--num-threads,--num_threads", flags.num_threads, "Threads")
      ->capture_default_str()
      ->check(IntegerIn(1, kMaxThreads));
  cmd.add_option("--precision", flags.precision, "Precision")
      ->check(PrecisionIn({Precision::kFp32, Precision::kInt8, Precision::kBf16}, cmd.get_name() == "submit" ? "lab submit" : cmd.get_name()))
      ->capture_default_str();
  cmd.add_option("--kernels", flags.kernels,
                 "Kernel kinds, comma-separated: op names or aliases (conv, dwconv2d, fc, ...), fused as conv2d+relu");
  cmd.add_option("--strategy", flags.strategy, "How to sample kernels")
      ->check(CLI::IsMember(strategies))
      ->capture_default_str();
  cmd.add_option("--grid", flags.grid, "Grid for --strategy grid (conv2d's default is tflite)")
      ->check(CLI::IsMember({"default", "tflite", "tensorrt"}))
      ->capture_default_str();
  cmd.add_option("--models", flags.models, "Model files for --strategy from-models");
  cmd.add_option("--fusion-rules", flags.fusion_rules,
                 "from-models, transformers: group nodes by these fused kinds, comma-separated, as a pack's "
                 "fusion_rules (default: what --backend fuses by construction)")
      ->delimiter(',');
  AddModelInputFlags(cmd, flags.inputs, "; for --models");
  cmd.add_flag("--no-neighbours", flags.no_neighbours, "from-models: only the models' own kernels");
  cmd.add_option("--max-kernels", flags.max_kernels, "At most this many kernels (random: how many to draw)")
      ->check(IntegerIn(1, kMaxRandomKernels));  // the random sampler's limit, for every strategy
  cmd.add_option("--seed", flags.seed, "Seed of the random draws and of the measuring order")->capture_default_str();
  AddProtocolFlags(cmd, flags.measure, " per kernel");
}

Expected<CampaignOptions> CampaignFromFlags(const CampaignFlags& flags, const BackendRegistry& registry) {
  CampaignOptions campaign;
  campaign.backend = flags.backend;
  campaign.run.num_threads = flags.num_threads;
  // int8: the backend runs each (fp32-described) kernel quantized; kinds it has no int8 kernel
  // for are recorded as unsupported with its reason.
  LATTE_ASSIGN_OR_RETURN(campaign.run.precision, ParsePrecision(flags.precision));
  campaign.measure = flags.measure;
  LATTE_RETURN_IF_ERROR(campaign.measure.Validate());
  if (registry.Find(flags.backend) == nullptr) return registry.Create(flags.backend, campaign.run).status();
  return campaign;
}

Expected<SamplerConfig> SamplerFromFlags(const CampaignFlags& flags, const BackendRegistry& registry) {
  SamplerConfig sampler;
  sampler.strategy = flags.strategy;
  sampler.grid = flags.grid;
  sampler.models = flags.models;
  sampler.neighbours = !flags.no_neighbours;
  const bool grouped = flags.strategy == "from-models" || flags.strategy == "transformers";
  if (!flags.fusion_rules.empty()) {
    if (!grouped) return InvalidInput("--fusion-rules applies to --strategy from-models and transformers, not " + flags.strategy);
    if (auto rules = FusionRules::FromKinds(flags.fusion_rules); !rules.ok()) return rules.status().WithContext("--fusion-rules");
  }
  // The models' kernels as the backend runs them (NHWC, activations folded), as predict asks.
  if (grouped) {
    const BackendFactory* factory = registry.Find(flags.backend);
    if (factory == nullptr) return InvalidInput("--backend: unknown backend '" + flags.backend + "'");
    sampler.layout_backend = flags.backend;
    sampler.layout_backend_takes_nhwc = factory->takes_nhwc;
    // Grouped by what the backend fuses by construction, as it runs them: no residual add inside
    // a conv on XNNPACK, and on ONNX Runtime only where its NCHWc pass blocks the add's operand
    // (not after a pad, as in face_detection_full_range). Calibrate's packs start from the same
    // declaration; what timing added to a pack's rules the user gives as --fusion-rules.
    if (!flags.fusion_rules.empty()) {
      sampler.fusion_rules = flags.fusion_rules;
    } else {
      RunOptions run;
      run.num_threads = flags.num_threads;
      LATTE_ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, registry.Create(flags.backend, run));
      sampler.fusion_rules = backend->FusedByConstruction();
    }
  }
  sampler.seed = flags.seed;
  sampler.max_kernels = flags.max_kernels;
  LATTE_ASSIGN_OR_RETURN(sampler.input_shapes, ParseInputShapes(flags.inputs.shapes));
  LATTE_ASSIGN_OR_RETURN(sampler.input_values, ParseInputValues(flags.inputs.values));
  if (!flags.kernels.empty()) {
    auto kinds = ParseKindList(flags.kernels);
    if (!kinds.ok()) return kinds.status().WithContext("--kernels");
    for (const Kernel& kind : *kinds) sampler.kinds.push_back(kind.Kind());
  } else if (flags.strategy != "from-models" && flags.strategy != "architectures" && flags.strategy != "transformers") {
    return InvalidInput("--kernels is required for --strategy " + flags.strategy);
  }
  return sampler;
}

}  // namespace latte::cli
