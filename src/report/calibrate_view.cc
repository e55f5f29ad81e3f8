#include "report/calibrate_view.h"

#include <fmt/format.h>

#include "report/fit_view.h"
#include "report/profile_view.h"

namespace latte {

std::string CalibrateResultText(const CalibrateResult& result, int folds) {
  std::string out;
  if (result.from) {
    const CalibrateResult::FromPack& f = *result.from;
    out += fmt::format("started from {}: {} of its kernels measured again here ({:.0f} s), networks set the level "
                       "×{:.3f}; {} of its {} measured kernels adapted for the fit\n",
                       f.path, f.remeasured, f.secs, f.network_factor, f.adapted, f.kernels);
  }
  if (result.fusion) out += FusionReportText(*result.fusion);
  out += "fusion rules:";
  for (const std::string& rule : result.fusion_rules) out += " " + rule;
  out += result.fusion_rules.empty() ? " none" : "";
  out += result.fusion  ? "\n"
         : result.from ? " (the pack's, and what the backend fuses by construction)\n"
                       : " (the defaults, not measured)\n";
  for (const CalibratePhase& phase : result.phases) {
    const CampaignSummary& s = phase.result.summary;
    out += fmt::format("phase {}: campaign {}, measured {}, unsupported {}, done earlier {}, {} left for a later run ({} s)\n",
                       phase.name, phase.result.campaign_id, s.measured, s.unsupported, s.already_done, s.remaining,
                       static_cast<int>(phase.spent_secs));
  }
  for (const CalibrateResult::ContextPhase& phase : result.graph_contexts) {
    const GraphContextResult& g = phase.result;
    out += fmt::format("phase random networks in context ({}): campaign {}, measured {} networks ({} layers), done "
                       "earlier {}, skipped {}, drift readings {} ({} s)\n",
                       phase.family, g.campaign_id, g.measured, g.layers_stored, g.done_before, g.skipped.size(),
                       g.references, static_cast<int>(phase.secs));
    for (const std::string& why : g.skipped) out += "  skipped " + why + "\n";
    if (!g.reference_error.empty()) out += "  no drift readings: " + g.reference_error + "\n";
  }
  if (!result.interrupted) out += FitReportText(result.fit, folds);
  return out;
}

nlohmann::json CalibrateResultJson(const CalibrateResult& result, const std::string& db, const std::string& pack) {
  nlohmann::json json;
  if (result.from) {
    const CalibrateResult::FromPack& f = *result.from;
    json["from"] = {{"pack", f.path},         {"kernels", f.kernels},   {"adapted", f.adapted},
                    {"remeasured", f.remeasured}, {"network_factor", f.network_factor}, {"secs", f.secs}};
  } else {
    json["from"] = nullptr;
  }
  json["fusion"] = result.fusion ? FusionReportJson(*result.fusion) : nlohmann::json(nullptr);
  json["fusion_rules"] = result.fusion_rules;
  nlohmann::json phases = nlohmann::json::array();
  for (const CalibratePhase& phase : result.phases) {
    const CampaignSummary& s = phase.result.summary;
    phases.push_back({{"name", phase.name},          {"campaign", phase.result.campaign_id}, {"measured", s.measured},
                      {"unsupported", s.unsupported}, {"done_earlier", s.already_done},     {"remaining", s.remaining},
                      {"budget_secs", phase.budget_secs}, {"secs", phase.spent_secs}});
  }
  json["phases"] = phases;
  nlohmann::json contexts = nlohmann::json::array();
  for (const CalibrateResult::ContextPhase& phase : result.graph_contexts) {
    const GraphContextResult& g = phase.result;
    contexts.push_back({{"family", phase.family},     {"campaign", g.campaign_id}, {"networks", g.measured},
                        {"layers", g.layers_stored},   {"done_earlier", g.done_before}, {"skipped", g.skipped},
                        {"references", g.references}, {"secs", phase.secs}});
  }
  json["contexts"] = contexts;
  json["interrupted"] = result.interrupted;
  if (!result.interrupted) {
    nlohmann::json kinds = nlohmann::json::array();
    for (const KindFitReport& kind : result.fit.fit.report) {
      nlohmann::json scores = nlohmann::json::array();
      for (const PredictorScore& score : kind.scores) {
        nlohmann::json row = {{"predictor", score.name}, {"failed", score.failed}};
        row.update(score.cv.ToJson());
        if (!score.why.empty()) row["why"] = score.why;
        scores.push_back(row);
      }
      kinds.push_back({{"kind", kind.kind}, {"samples", kind.samples}, {"borrowed", kind.borrowed}, {"selected", kind.selected}, {"scores", scores}});
    }
    json["fit"] = {{"measurements", result.fit.measurements},
                   {"kinds", kinds},
                   {"context", result.fit.context_note},
                   {"interval", result.fit.interval_note}};
  } else {
    json["fit"] = nullptr;
  }
  json["db"] = db;
  json["pack"] = pack.empty() ? nlohmann::json(nullptr) : nlohmann::json(pack);
  return json;
}

}  // namespace latte
