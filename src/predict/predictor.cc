#include "predict/predictor.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "predict/pack_json.h"
#include "predict/predictors.h"

namespace latte {

namespace {
// The dtypes a pack keeps predictors of their own for, and the suffix of their kinds.
constexpr std::pair<DataType, std::string_view> kDtypeSuffixes[] = {{DataType::kInt8, "|int8"},
                                                                    {DataType::kBFloat16, "|bf16"}};
}  // namespace

std::string ModelKind(const Kernel& kernel) {
  for (const auto& [dtype, suffix] : kDtypeSuffixes)
    if (kernel.dtype == dtype) return kernel.Kind() + std::string(suffix);
  return kernel.Kind();
}

Expected<Kernel> ParseModelKind(std::string_view kind) {
  for (const auto& [dtype, suffix] : kDtypeSuffixes) {
    if (kind.size() <= suffix.size() || kind.substr(kind.size() - suffix.size()) != suffix) continue;
    LATTE_ASSIGN_OR_RETURN(Kernel kernel, ParseKernelKind(kind.substr(0, kind.size() - suffix.size())));
    kernel.dtype = dtype;
    return kernel;
  }
  return ParseKernelKind(kind);
}

const std::vector<PredictorType>& PredictorTypes() {
  using Options = const PredictorOptions&;
  static const std::vector<PredictorType> kTypes = {
      //  name      source                              fitted tree   few    fallback extrapolates_bytes
      {"table", PredictionSource::kTableHit, false, false, false, false, false,
       [](Options) -> std::unique_ptr<KernelPredictor> { return std::make_unique<TablePredictor>(); }},
      {"interp", PredictionSource::kInterpolation, true, false, true, false, false,
       [](Options o) -> std::unique_ptr<KernelPredictor> { return std::make_unique<InterpPredictor>(o.channel_tile); }},
      {"gbdt", PredictionSource::kTrees, true, true, false, false, false,
       [](Options o) -> std::unique_ptr<KernelPredictor> {
         return std::make_unique<TreePredictor>(TreePredictor::Mode::kBoosted, o);
       }},
      {"forest", PredictionSource::kForest, true, true, false, false, false,
       [](Options o) -> std::unique_ptr<KernelPredictor> {
         return std::make_unique<TreePredictor>(TreePredictor::Mode::kForest, o);
       }},
      {"traffic", PredictionSource::kTraffic, true, false, false, false, true,
       [](Options o) -> std::unique_ptr<KernelPredictor> { return std::make_unique<TrafficPredictor>(o.nchw_tensors); }},
      {"roofline", PredictionSource::kRoofline, true, false, true, true, false,
       [](Options o) -> std::unique_ptr<KernelPredictor> { return std::make_unique<RooflinePredictor>(o); }},
  };
  return kTypes;
}

const PredictorType* FindPredictorType(std::string_view name) {
  for (const PredictorType& type : PredictorTypes())
    if (type.name == name) return &type;
  return nullptr;
}

std::string_view PredictionSourceName(PredictionSource source) {
  if (source == PredictionSource::kSumOfParts) return "sum-of-parts";  // a pack's answer, not a predictor's
  for (const PredictorType& type : PredictorTypes())
    if (type.source == source) return type.name;
  return "unknown";
}

const std::vector<std::string>& FittedPredictorNames() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const PredictorType& type : PredictorTypes())
      if (type.fitted) names.emplace_back(type.name);
    return names;
  }();
  return kNames;
}

bool IsTreePredictor(std::string_view name) {
  const PredictorType* type = FindPredictorType(name);
  return type != nullptr && type->tree_model;
}

bool ExtrapolatesBytes(std::string_view name) {
  const PredictorType* type = FindPredictorType(name);
  return type != nullptr && type->extrapolates_bytes;
}

bool IsStreamingKernel(const Kernel& kernel) {
  switch (OpCategoryOf(kernel.op)) {
    case OpCategory::kElementwise:
    case OpCategory::kActivation:
    case OpCategory::kDataMovement: return true;
    default: return false;
  }
}

Expected<std::unique_ptr<KernelPredictor>> MakePredictor(std::string_view name, const PredictorOptions& options) {
  if (const PredictorType* type = FindPredictorType(name)) return type->make(options);
  std::vector<std::string_view> known;
  for (const PredictorType& type : PredictorTypes()) known.push_back(type.name);
  return InvalidInput(fmt::format("unknown predictor '{}' (known: {})", name, fmt::join(known, ", ")));
}

Expected<double> JsonNumber(const nlohmann::json& json, const char* field) {
  if (!json.is_object() || !json.contains(field)) return InvalidInput(std::string("missing field '") + field + "'");
  const nlohmann::json& value = json.at(field);
  if (!value.is_number()) return InvalidInput(std::string("field '") + field + "' is not a number");
  const double number = value.get<double>();
  if (!std::isfinite(number)) return InvalidInput(std::string("field '") + field + "' is not a finite number");
  return number;
}

Expected<int> JsonChannelTile(const nlohmann::json& json) {
  if (!json.is_object() || !json.contains("channel_tile")) return 1;
  LATTE_ASSIGN_OR_RETURN(const std::int64_t tile, JsonInteger(json.at("channel_tile"), "channel_tile", 1, 64));
  return static_cast<int>(tile);
}

Expected<double> JsonNonNegative(const nlohmann::json& json, const char* field) {
  LATTE_ASSIGN_OR_RETURN(double number, JsonNumber(json, field));
  if (number < 0) return InvalidInput(std::string("field '") + field + "' is negative");
  return number;
}

Expected<std::size_t> JsonCount(const nlohmann::json& json, const char* field) {
  if (!json.contains(field)) return InvalidInput(std::string("field '") + field + "' is missing");
  Expected<std::int64_t> count = JsonInteger(json.at(field), field, 0, std::numeric_limits<std::int64_t>::max());
  if (!count.ok()) return InvalidInput(std::string("field '") + field + "' is not a count (a whole number ≥ 0)");
  return static_cast<std::size_t>(*count);
}

Expected<std::int64_t> JsonInteger(const nlohmann::json& value, const std::string& what, std::int64_t lo,
                                   std::int64_t hi) {
  auto refuse = [&] { return InvalidInput(fmt::format("{} must be a whole number in {}..{}", what, lo, hi)); };
  if (!value.is_number_integer()) return refuse();
  if (value.is_number_unsigned()) {
    const std::uint64_t v = value.get<std::uint64_t>();
    if (hi < 0 || v > static_cast<std::uint64_t>(hi)) return refuse();
    const auto signed_v = static_cast<std::int64_t>(v);
    if (signed_v < lo) return refuse();
    return signed_v;
  }
  const std::int64_t v = value.get<std::int64_t>();
  if (v < lo || v > hi) return refuse();
  return v;
}

Expected<std::vector<std::int64_t>> JsonIntegers(const nlohmann::json& value, const std::string& what,
                                                 std::int64_t lo, std::int64_t hi) {
  if (std::optional<std::vector<std::int64_t>> packed = PackedIntegers(value)) {  // as read by ParsePackJson
    for (const std::int64_t v : *packed)
      if (v < lo || v > hi) return InvalidInput(fmt::format("{} must be a whole number in {}..{}", what, lo, hi));
    return std::move(*packed);
  }
  if (PackedDoubles(value)) return InvalidInput(fmt::format("{} must be a whole number in {}..{}", what, lo, hi));
  if (!value.is_array()) return InvalidInput(what + " must be an array");
  std::vector<std::int64_t> out;
  out.reserve(value.size());
  for (const nlohmann::json& item : value) {
    LATTE_ASSIGN_OR_RETURN(std::int64_t v, JsonInteger(item, what, lo, hi));
    out.push_back(v);
  }
  return out;
}

Expected<std::vector<float>> JsonFloats(const nlohmann::json& value, const std::string& what) {
  std::optional<std::vector<double>> packed = PackedDoubles(value);  // as read by ParsePackJson
  if (!packed) {
    if (std::optional<std::vector<std::int64_t>> integers = PackedIntegers(value))
      packed = std::vector<double>(integers->begin(), integers->end());
  }
  if (packed) {
    std::vector<float> out;
    out.reserve(packed->size());
    for (const double v : *packed) {
      if (!std::isfinite(v) || std::abs(v) > std::numeric_limits<float>::max())
        return InvalidInput(what + " must hold finite numbers a float can hold");
      out.push_back(static_cast<float>(v));
    }
    return out;
  }
  if (!value.is_array()) return InvalidInput(what + " must be an array");
  std::vector<float> out;
  out.reserve(value.size());
  for (const nlohmann::json& item : value) {
    const double v = item.is_number() ? item.get<double>() : std::nan("");
    if (!std::isfinite(v) || std::abs(v) > std::numeric_limits<float>::max()) {
      return InvalidInput(what + " must hold finite numbers a float can hold");
    }
    out.push_back(static_cast<float>(v));
  }
  return out;
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
