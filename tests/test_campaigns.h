#pragma once
// A campaign key for tests that store rows under a campaign and do not care how it measured.

#include <string>
#include <string_view>

#include "db/campaign_key.h"

namespace latte {

/// `kind` is the campaign's kind ("profile", "graph-context") when it is one, else a profile
/// campaign of that backend name: distinct names give distinct campaigns.
inline CampaignKey TestCampaignKey(std::string_view kind, std::string space) {
  const bool known = kind == kProfileCampaign || kind == kGraphContextCampaign;
  return {known ? std::string(kind) : std::string(kProfileCampaign), known ? "xnnpack" : std::string(kind), 1, "fp32",
          MeasureSettings(1, 50, 1.0), std::move(space)};
}

}  // namespace latte
