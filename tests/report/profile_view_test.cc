// What `latte profile` and `latte calibrate` print: the fusion verdicts, a campaign's summary and
// calibrate's JSON, from results built by hand.
#include "report/profile_view.h"

#include <gtest/gtest.h>

#include "report/calibrate_view.h"

namespace latte {
namespace {

FusionReport DeclaredAndMeasured() {
  FusionReport report;
  report.backend = "xnnpack";
  FusionDecision declared;
  declared.kind = "conv2d+relu";
  declared.fused = declared.declared = true;
  report.decisions.push_back(declared);
  FusionDecision d;
  d.kind = "conv2d+add";
  d.fused = true;
  d.shapes_fused = d.shapes_measured = 2;
  FusionEvidence e;
  e.chain = (*FusionShapes("conv2d+add"))[0];
  e.parts_us = {10, 2};
  e.together_us = 10;
  DecideFusion(e, 0.5);
  d.evidence = {e, e};
  report.decisions.push_back(d);
  report.rules = {"conv2d+relu", "conv2d+add"};
  return report;
}

TEST(FusionView, JsonListsRulesAndEvidenceAndTextSaysHowEachWasDecided) {
  const FusionReport report = DeclaredAndMeasured();
  const nlohmann::json json = FusionReportJson(report);
  EXPECT_EQ(json["rules"], nlohmann::json::array({"conv2d+relu", "conv2d+add"}));
  EXPECT_TRUE(json["chains"][0]["declared"].get<bool>());
  EXPECT_TRUE(json["chains"][0]["shapes"].empty());  // nothing timed
  EXPECT_EQ(json["chains"][1]["shapes"][0]["saving_us"], 2.0);
  EXPECT_TRUE(FusionRules::FromJson(json["rules"]).ok());  // the rules are what FusionRules reads
  const std::string text = FusionReportText(report);
  EXPECT_NE(text.find("conv2d+relu                fused (by construction"), std::string::npos) << text;
  EXPECT_NE(text.find("conv2d+add                 fused (2 of 2 conclusive shapes fused)"), std::string::npos) << text;
  EXPECT_NE(text.find("rules: conv2d+relu,conv2d+add"), std::string::npos) << text;
}

TEST(ProfileView, TextAndJsonSayTheSameCounts) {
  ProfileResult result;
  result.campaign_id = 7;
  result.summary.planned = 10;
  result.summary.measured = 8;
  result.summary.unsupported = 1;
  result.summary.remaining = 1;
  result.summary.budget_spent = true;
  result.summary.references = 2;
  result.stored = 8;
  result.unsupported = {{"pow|n=1", "pow not implemented"}};
  const std::string text = ProfileResultText(result, "s.db");
  EXPECT_NE(text.find("campaign 7: 10 kernels planned"), std::string::npos) << text;
  EXPECT_NE(text.find("measured 8, unsupported 1, remaining 1 (budget spent"), std::string::npos) << text;
  EXPECT_NE(text.find("stored 8 measurements in s.db"), std::string::npos) << text;
  const nlohmann::json json = ProfileResultJson(result, "s.db");
  EXPECT_EQ(json["campaign"], 7);
  EXPECT_EQ(json["measured"], 8);
  EXPECT_EQ(json["remaining"], 1);
  EXPECT_TRUE(json["budget_spent"].get<bool>());
  EXPECT_EQ(json["unsupported"][0]["why"], "pow not implemented");
  EXPECT_TRUE(json["reference_error"].is_null());
}

TEST(CalibrateView, JsonHasEveryPhaseAndNoPackWhenInterrupted) {
  CalibrateResult result;
  result.fusion = DeclaredAndMeasured();
  result.fusion_rules = result.fusion->rules;
  CalibratePhase phase;
  phase.name = "random kernels of 2 kinds";
  phase.result.campaign_id = 3;
  phase.result.summary.measured = 40;
  phase.spent_secs = 12;
  result.phases.push_back(phase);
  result.interrupted = true;
  const nlohmann::json json = CalibrateResultJson(result, "s.db", "");
  EXPECT_TRUE(json["from"].is_null());
  EXPECT_EQ(json["fusion_rules"], nlohmann::json::array({"conv2d+relu", "conv2d+add"}));
  EXPECT_EQ(json["phases"][0]["campaign"], 3);
  EXPECT_EQ(json["phases"][0]["measured"], 40);
  EXPECT_TRUE(json["interrupted"].get<bool>());
  EXPECT_TRUE(json["fit"].is_null());
  EXPECT_TRUE(json["pack"].is_null());
  const std::string text = CalibrateResultText(result, 5);
  EXPECT_NE(text.find("fusion rules: conv2d+relu conv2d+add\n"), std::string::npos) << text;
  EXPECT_NE(text.find("phase random kernels of 2 kinds: campaign 3, measured 40"), std::string::npos) << text;
  EXPECT_EQ(text.find("cross-validation"), std::string::npos) << text;  // nothing fitted
}

}  // namespace
}  // namespace latte
