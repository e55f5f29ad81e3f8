#pragma once
// What `latte profile` prints: a campaign's summary (what was measured, what was unsupported and
// why, where the rows went, what is left), or a fusion detection's verdict per chain; as text,
// and as JSON (`--format json`, and `--fusion-out`).

#include <string>

#include <nlohmann/json.hpp>

#include "profile/fusion.h"
#include "profile/profile.h"

namespace latte {

/// The summary printed after a profile campaign into the store `db`.
std::string ProfileResultText(const ProfileResult& result, const std::string& db);
/// The same as JSON: {"campaign", "command", "space", "notes", "planned", "done_earlier", "measured",
/// "unsupported": [{"kernel", "why"}], "remaining", "budget_spent", "interrupted", "stored", "db",
/// "references", "reference_error"}.
nlohmann::json ProfileResultJson(const ProfileResult& result, const std::string& db);

/// One line per chain kind (fused, separate, undecided and why) and the rules.
std::string FusionReportText(const FusionReport& report);
/// {"backend", "num_threads", "alpha", "rules": [...], "chains": [{"kind", "fused", "shapes": [...]}]}.
nlohmann::json FusionReportJson(const FusionReport& report);

}  // namespace latte
