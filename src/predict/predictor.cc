#include "predict/predictor.h"

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
  return value.get<double>();
}

Expected<std::string> JsonString(const nlohmann::json& json, const char* field) {
  if (!json.is_object() || !json.contains(field)) return InvalidInput(std::string("missing field '") + field + "'");
  const nlohmann::json& value = json.at(field);
  if (!value.is_string()) return InvalidInput(std::string("field '") + field + "' is not a string");
  return value.get<std::string>();
}

}  // namespace latte
