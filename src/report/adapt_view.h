#pragma once
// The `latte adapt` view: per kernel class, how many of the pack's kernels were measured again
// and the factor this machine runs them at (small, middle and large kernels), as text and JSON.

#include <string>

#include <nlohmann/json.hpp>

#include "calibrate/adapt.h"

namespace latte {

std::string AdaptReportText(const AdaptResult& result);
/// {"classes": {NAME: {"kernels", "factor_small", "factor_middle", "factor_large", "slope", "spread"}},
///  "kernels": [{"kernel", "class", "pack_ms", "measured_ms"}], "skipped": [...], "reference_now_us", "secs"}.
nlohmann::json AdaptReportJson(const AdaptResult& result);

}  // namespace latte
