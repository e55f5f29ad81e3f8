#pragma once
// What `latte calibrate` prints: where it started from, the fusion verdicts and rules, each
// phase's campaign, the networks measured in context, and the fit's cross-validation table; as
// text, or as one JSON document (`--format json`).

#include <string>

#include <nlohmann/json.hpp>

#include "calibrate/calibrate.h"

namespace latte {

/// Everything but the last line ("wrote PACK ..."), which the command prints once the pack is saved.
std::string CalibrateResultText(const CalibrateResult& result, int folds);
/// {"from", "fusion", "fusion_rules", "phases", "contexts", "interrupted", "fit": {"measurements",
/// "kinds": [{"kind", "samples", "selected", "scores": [{"predictor", "n", "rmspe_pct", ...}]}],
/// "context", "interval"}, "db", "pack"}: `pack` is null when none was written (interrupted).
nlohmann::json CalibrateResultJson(const CalibrateResult& result, const std::string& db, const std::string& pack);

}  // namespace latte
