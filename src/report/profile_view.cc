#include "report/profile_view.h"

#include <fmt/format.h>

namespace latte {

std::string ProfileResultText(const ProfileResult& result, const std::string& db) {
  const CampaignSummary& s = result.summary;
  std::string text;
  for (const std::string& note : result.notes) text += "sample: " + note + "\n";
  text += fmt::format("campaign {}: {} kernels planned", result.campaign_id, s.planned);
  if (s.already_done > 0) text += fmt::format(", {} done in earlier runs (skipped)", s.already_done);
  text += "\n";
  text += fmt::format("measured {}, unsupported {}, remaining {}", s.measured, s.unsupported, s.remaining);
  if (s.budget_spent) text += " (budget spent: rerun the same command to continue)";
  if (s.interrupted) text += " (interrupted: rerun the same command to continue)";
  text += "\n";
  constexpr std::size_t kShown = 5;
  for (std::size_t i = 0; i < result.unsupported.size() && i < kShown; ++i) {
    text += "unsupported: " + result.unsupported[i].first + ": " + result.unsupported[i].second + "\n";
  }
  if (result.unsupported.size() > kShown) {
    text += fmt::format("unsupported: ... and {} more (all stored with their reasons)\n",
                        result.unsupported.size() - kShown);
  }
  text += fmt::format("stored {} measurements in {}\n", result.stored, db);
  if (!s.reference_error.empty()) text += "reference kernel not measured, no drift readings: " + s.reference_error + "\n";
  else text += fmt::format("reference kernel: {} readings\n", s.references);
  return text;
}

nlohmann::json ProfileResultJson(const ProfileResult& result, const std::string& db) {
  const CampaignSummary& s = result.summary;
  nlohmann::json unsupported = nlohmann::json::array();
  for (const auto& [kernel, why] : result.unsupported) unsupported.push_back({{"kernel", kernel}, {"why", why}});
  nlohmann::json json = {{"campaign", result.campaign_id}, {"command", result.command}, {"space", result.space},
                         {"notes", result.notes},          {"planned", s.planned},     {"done_earlier", s.already_done},
                         {"measured", s.measured},         {"unsupported", unsupported}, {"remaining", s.remaining},
                         {"budget_spent", s.budget_spent}, {"interrupted", s.interrupted}, {"stored", result.stored},
                         {"db", db},                       {"references", s.references}};
  json["reference_error"] = s.reference_error.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.reference_error);
  return json;
}

std::string FusionReportText(const FusionReport& report) {
  std::string text = fmt::format("fusion on {} ({} thread{}), alpha {}\n", report.backend, report.num_threads,
                                 report.num_threads == 1 ? "" : "s", report.alpha);
  for (const FusionDecision& d : report.decisions) {
    if (d.declared) {
      text += fmt::format("  {:<26} fused (by construction: declared by the backend, not timed)\n", d.kind);
      continue;
    }
    if (d.shapes_measured < 2) {
      std::string why = d.evidence.empty() ? std::string("stopped") : d.evidence.front().why_not_measured;
      if (why.empty()) {
        why = fmt::format("{} of {} shapes inconclusive (too noisy: rerun on a quiet machine or raise --num-runs)",
                          d.shapes_inconclusive, d.evidence.size());
      }
      text += fmt::format("  {:<26} undecided: {}\n", d.kind, why);
      continue;
    }
    text += fmt::format("  {:<26} {} ({} of {} conclusive shapes fused", d.kind, d.fused ? "fused" : "separate",
                        d.shapes_fused, d.shapes_measured);
    if (d.shapes_inconclusive > 0) text += fmt::format(", {} inconclusive", d.shapes_inconclusive);
    text += ")\n";
  }
  std::string rules;
  for (const std::string& r : report.rules) rules += (rules.empty() ? "" : ",") + r;
  text += "rules: " + (rules.empty() ? std::string("(none)") : rules) + "\n";
  return text;
}

nlohmann::json FusionReportJson(const FusionReport& report) {
  nlohmann::json chains = nlohmann::json::array();
  for (const FusionDecision& d : report.decisions) {
    nlohmann::json shapes = nlohmann::json::array();
    for (const FusionEvidence& e : d.evidence) {
      nlohmann::json shape = {{"kernel", e.chain.Key()}};
      if (!e.why_not_measured.empty()) {
        shape["why_not_measured"] = e.why_not_measured;
      } else {
        shape.update({{"parts_us", e.parts_us}, {"together_us", e.together_us}, {"noise_us", e.noise_us},
                      {"alpha", e.alpha}, {"saving_us", e.saving_us}, {"fused", e.fused},
                      {"verdict", e.verdict}});
      }
      shapes.push_back(shape);
    }
    chains.push_back({{"kind", d.kind}, {"fused", d.fused}, {"declared", d.declared}, {"shapes_fused", d.shapes_fused},
                      {"shapes_measured", d.shapes_measured}, {"shapes_inconclusive", d.shapes_inconclusive},
                      {"shapes", shapes}});
  }
  return {{"backend", report.backend}, {"num_threads", report.num_threads}, {"alpha", report.alpha},
          {"rules", report.rules}, {"chains", chains}};
}

}  // namespace latte
