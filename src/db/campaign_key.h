#pragma once
// A campaign's identity in the store, as columns: what kind of campaign, on which backend
// configuration, measured how, over which space. Resuming a campaign finds it by these fields,
// never by the text of a command line, so the way flags are spelled can change freely.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace latte {

/// The kinds of campaign a store holds.
inline constexpr std::string_view kProfileCampaign = "profile";             // kernels measured alone
inline constexpr std::string_view kGraphContextCampaign = "graph-context";  // networks, layer by layer
inline constexpr std::string_view kImportCampaign = "import";               // a table measured elsewhere
inline constexpr std::string_view kLabCampaign = "lab";  // one device's share of a lab submission (db/lab_queue.h)

struct CampaignKey {
  std::string kind;       // one of the kinds above
  std::string backend;    // the backend's name as given
  std::int64_t threads = 0;
  std::string precision;  // "fp32", "fp16", ...
  /// How the campaign measured, as JSON with sorted keys: {"min_secs", "num_runs", "warmup_runs"}
  /// for a profile or graph-context campaign; {"backend_version", "device", "format"} for an import;
  /// a lab campaign's adds {"device", "device_class"} to a profile's (LabCampaignSettings).
  std::string settings;
  /// What it measured, as JSON (the sampler's config space, the networks, an imported file's digest).
  std::string space;

  /// The space's "strategy" (a sampler's) or "graphs" (a graph-context campaign's networks), and
  /// its "seed": stored as columns of their own to query by, derived from `space` (empty / nullopt
  /// when it has none).
  std::string Strategy() const;
  std::optional<std::int64_t> Seed() const;

  /// The campaign as the command line text the store's `command` column shows (the text campaigns
  /// were identified by before schema version 4, kept byte for byte so old and new rows read alike).
  std::string CommandText() const;

  bool operator==(const CampaignKey& other) const = default;
};

/// The settings JSON of a profile or graph-context campaign.
std::string MeasureSettings(int warmup_runs, int num_runs, double min_secs);

/// The settings JSON of a lab campaign: `measure_settings` (MeasureSettings) with the device that
/// measured and the class of devices the work was submitted for. The device is part of the
/// campaign's identity, so two devices never share a campaign.
std::string LabCampaignSettings(const std::string& measure_settings, const std::string& device,
                                const std::string& device_class);

/// The key of a campaign stored before schema version 4, from its command text and space; nullopt
/// when the text is none of the forms Latte wrote (such a campaign is kept, and never resumed).
std::optional<CampaignKey> ParseCampaignCommand(std::string_view command, std::string_view space);

}  // namespace latte
