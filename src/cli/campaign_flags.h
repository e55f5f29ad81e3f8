#pragma once
// The flags that say what a profiling campaign measures and how, shared by `latte profile` and
// `latte lab submit` (which hands the same campaign out to many machines): the backend
// configuration, the sampler and the measurement protocol.

#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "cli/cli_common.h"
#include "profile/campaign.h"
#include "profile/space.h"

namespace latte::cli {

struct CampaignFlags {
  std::string backend = "xnnpack", precision = "fp32", kernels, strategy = "grid", grid = "default";
  std::vector<std::string> models;
  /// from-models, transformers: group the models' nodes by these fused kinds (a pack's
  /// fusion_rules) instead of what the backend fuses by construction. Empty: the backend's.
  std::vector<std::string> fusion_rules;
  ModelInputFlags inputs;
  int num_threads = 1;
  MeasureOptions measure = KernelMeasureOptions();
  std::size_t max_kernels = 0;
  std::uint64_t seed = 0;
  bool no_neighbours = false;
};

/// --backend, --num-threads, --precision, --kernels, --strategy (of `strategies`), --grid, --models,
/// --fusion-rules, --input-shape/--input-value, --no-neighbours, --max-kernels, --seed and the protocol's flags.
void AddCampaignFlags(CLI::App& cmd, CampaignFlags& flags, const std::vector<std::string>& strategies);

/// The campaign's backend configuration and protocol (budget and stop flag left to the caller);
/// an unknown backend is "unknown backend 'x' (known: ...)".
Expected<CampaignOptions> CampaignFromFlags(const CampaignFlags& flags, const BackendRegistry& registry);

/// The sampler of the flags (the backend checked by CampaignFromFlags first).
Expected<SamplerConfig> SamplerFromFlags(const CampaignFlags& flags, const BackendRegistry& registry);

}  // namespace latte::cli
