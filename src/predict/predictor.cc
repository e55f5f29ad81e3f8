#include "predict/predictor.h"

#include <cmath>

#include "predict/predictors.h"

namespace latte {

std::string_view PredictionSourceName(PredictionSource source) {
  switch (source) {
    case PredictionSource::kTableHit: return "table";
    case PredictionSource::kInterpolation: return "interp";
    case PredictionSource::kTrees: return "gbdt";
    case PredictionSource::kForest: return "forest";
    case PredictionSource::kRoofline: return "roofline";
  }
  return "unknown";
}

const std::vector<std::string>& FittedPredictorNames() {
  static const std::vector<std::string> kNames = {"interp", "gbdt", "forest", "roofline"};
  return kNames;
}

bool IsTreePredictor(std::string_view name) { return name == "gbdt" || name == "forest"; }

Expected<std::unique_ptr<KernelPredictor>> MakePredictor(std::string_view name, const PredictorOptions& options) {
  std::unique_ptr<KernelPredictor> predictor;
  if (name == "table") predictor = std::make_unique<TablePredictor>();
  else if (name == "interp") predictor = std::make_unique<InterpPredictor>();
  else if (name == "gbdt") predictor = std::make_unique<TreePredictor>(TreePredictor::Mode::kBoosted, options);
  else if (name == "forest") predictor = std::make_unique<TreePredictor>(TreePredictor::Mode::kForest, options);
  else if (name == "roofline") predictor = std::make_unique<RooflinePredictor>(options);
  else return InvalidInput("unknown predictor '" + std::string(name) + "' (known: table, interp, gbdt, forest, roofline)");
  return predictor;
}

Expected<double> JsonNumber(const nlohmann::json& json, const char* field) {
  if (!json.is_object() || !json.contains(field)) return InvalidInput(std::string("missing field '") + field + "'");
  const nlohmann::json& value = json.at(field);
  if (!value.is_number()) return InvalidInput(std::string("field '") + field + "' is not a number");
  const double number = value.get<double>();
  if (!std::isfinite(number)) return InvalidInput(std::string("field '") + field + "' is not a finite number");
  return number;
}

Expected<double> JsonNonNegative(const nlohmann::json& json, const char* field) {
  LATTE_ASSIGN_OR_RETURN(double number, JsonNumber(json, field));
  if (number < 0) return InvalidInput(std::string("field '") + field + "' is negative");
  return number;
}

Expected<std::size_t> JsonCount(const nlohmann::json& json, const char* field) {
  if (!json.contains(field)) return InvalidInput(std::string("field '") + field + "' is missing");
  const nlohmann::json& value = json.at(field);
  // Parsed text gives non-negative integers as unsigned; JSON built in code, as signed.
  if (!value.is_number_integer() || (!value.is_number_unsigned() && value.get<std::int64_t>() < 0)) return InvalidInput(std::string("field '") + field + "' is not a count (a whole number ≥ 0)");
  return value.get<std::size_t>();
}

std::string JsonErrorText(const std::exception& e) {
  std::string_view text = e.what();
  if (text.rfind("[json.exception.", 0) == 0) {
    const std::size_t end = text.find("] ");
    if (end != std::string_view::npos) text.remove_prefix(end + 2);
  }
  return std::string(text);
}

Expected<std::string> JsonString(const nlohmann::json& json, const char* field) {
  if (!json.is_object() || !json.contains(field)) return InvalidInput(std::string("missing field '") + field + "'");
  const nlohmann::json& value = json.at(field);
  if (!value.is_string()) return InvalidInput(std::string("field '") + field + "' is not a string");
  return value.get<std::string>();
}

}  // namespace latte
