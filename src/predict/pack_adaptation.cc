#include "predict/pack_adaptation.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "core/stats.h"
#include "predict/predictor.h"

namespace latte {
namespace {

// 1.4826 · the median absolute deviation: a standard deviation that outliers do not inflate.
double RobustSd(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  const double center = Median(values);
  std::vector<double> deviations;
  for (double v : values) deviations.push_back(std::abs(v - center));
  return 1.4826 * Median(deviations);
}

}  // namespace

std::string_view KernelClassOf(const Kernel& kernel) {
  switch (kernel.op) {
    case OpKind::kConv2D: case OpKind::kTransposeConv2D: return "conv";
    case OpKind::kDepthwiseConv2D: return "depthwise";
    case OpKind::kFullyConnected: case OpKind::kMatMul: return "dense";
    default: return "memory";
  }
}

const std::vector<std::string>& KernelClasses() {
  static const std::vector<std::string> kClasses = {"conv", "depthwise", "dense", "memory"};
  return kClasses;
}

double ClassAdaptation::Factor(double ms) const {
  const double x = ms > 0 && lo_ms > 0 ? std::log(std::clamp(ms, lo_ms, std::max(lo_ms, hi_ms))) : 0;
  return std::exp(log_scale + slope * x);
}

Expected<ClassAdaptation> FitClassAdaptation(std::span<const AdaptationPoint> points) {
  if (points.empty()) return InvalidInput("no kernels measured to adapt by");
  std::vector<double> x, y;
  ClassAdaptation fit;
  for (const AdaptationPoint& p : points) {
    if (!(p.pack_ms > 0) || !(p.measured_ms > 0) || !std::isfinite(p.pack_ms) || !std::isfinite(p.measured_ms))
      return InvalidInput(fmt::format("a kernel's time is not a positive number (pack {} ms, measured {} ms)",
                                      p.pack_ms, p.measured_ms));
    x.push_back(std::log(p.pack_ms));
    y.push_back(std::log(p.measured_ms / p.pack_ms));
  }
  const auto [lo, hi] = std::minmax_element(x.begin(), x.end());
  fit.lo_ms = std::exp(*lo);
  fit.hi_ms = std::exp(*hi);
  fit.kernels = points.size();
  // Theil–Sen: the median of the pairwise slopes, pairs closer than a factor of 1.2 in size left
  // out (their slope is mostly noise); then the intercept that halves the residuals.
  if (points.size() >= kMinPointsForSlope && *hi - *lo >= std::log(2.0)) {
    std::vector<double> slopes;
    for (std::size_t i = 0; i < x.size(); ++i)
      for (std::size_t j = i + 1; j < x.size(); ++j)
        if (std::abs(x[j] - x[i]) >= std::log(1.2)) slopes.push_back((y[j] - y[i]) / (x[j] - x[i]));
    if (!slopes.empty()) fit.slope = std::clamp(Median(slopes), -kMaxAdaptationSlope, kMaxAdaptationSlope);
  }
  std::vector<double> residuals;
  for (std::size_t i = 0; i < x.size(); ++i) residuals.push_back(y[i] - fit.slope * x[i]);
  fit.log_scale = Median(residuals);
  for (double& r : residuals) r -= fit.log_scale;
  fit.spread = RobustSd(residuals) / std::sqrt(static_cast<double>(points.size()));
  return fit;
}

const ClassAdaptation* PackAdaptation::ClassFor(const Kernel& kernel) const {
  auto it = classes.find(std::string(KernelClassOf(kernel)));
  if (it == classes.end()) it = classes.find("all");
  return it == classes.end() ? nullptr : &it->second;
}

double PackAdaptation::Factor(const Kernel& kernel, double ms) const {
  const ClassAdaptation* c = ClassFor(kernel);
  return c == nullptr ? 1.0 : c->Factor(ms);
}

nlohmann::json PackAdaptation::ToJson() const {
  nlohmann::json out = {{"command", command}, {"created", created}, {"from_device", from_device},
                        {"from_reference_p50_us", from_reference_p50_us}, {"network_factor", network_factor},
                        {"networks", networks}};
  nlohmann::json c = nlohmann::json::object();
  for (const auto& [name, a] : classes) {
    c[name] = {{"log_scale", a.log_scale}, {"slope", a.slope}, {"ms_range", {a.lo_ms, a.hi_ms}},
               {"kernels", a.kernels}, {"spread", a.spread}};
  }
  out["classes"] = c;
  return out;
}

Expected<PackAdaptation> PackAdaptation::FromJson(const nlohmann::json& json) {
  if (!json.is_object()) return InvalidInput("adaptation: not an object");
  PackAdaptation a;
  LATTE_ASSIGN_OR_RETURN(a.command, JsonString(json, "command"));
  LATTE_ASSIGN_OR_RETURN(a.created, JsonString(json, "created"));
  if (!json.contains("from_device") || !json["from_device"].is_object())
    return InvalidInput("adaptation: missing object 'from_device'");
  a.from_device = json["from_device"];
  LATTE_ASSIGN_OR_RETURN(a.from_reference_p50_us, JsonNonNegative(json, "from_reference_p50_us"));
  LATTE_ASSIGN_OR_RETURN(a.network_factor, JsonNonNegative(json, "network_factor"));
  if (!(a.network_factor > 0)) return InvalidInput("adaptation: network_factor must be > 0");
  Expected<std::size_t> networks = JsonCount(json, "networks");
  if (!networks.ok()) return networks.status().WithContext("adaptation");
  a.networks = *networks;
  if (!json.contains("classes") || !json["classes"].is_object())
    return InvalidInput("adaptation: missing object 'classes'");
  for (const auto& [name, c] : json["classes"].items()) {
    const std::string where = "adaptation: class '" + name + "'";
    if (name != "all" && std::find(KernelClasses().begin(), KernelClasses().end(), name) == KernelClasses().end())
      return InvalidInput(where + " is not a kernel class (conv, depthwise, dense, memory, all)");
    if (!c.is_object()) return InvalidInput(where + ": not an object");
    ClassAdaptation ca;
    Expected<double> log_scale = JsonNumber(c, "log_scale");
    Expected<double> slope = JsonNumber(c, "slope");
    if (!log_scale.ok() || !slope.ok()) return InvalidInput(where + ": needs numbers 'log_scale' and 'slope'");
    // A factor beyond e^±10 (22,000×) is no machine's: a damaged pack.
    if (std::abs(*log_scale) > 10 || std::abs(*slope) > kMaxAdaptationSlope)
      return InvalidInput(fmt::format("{}: log_scale {} or slope {} out of range (|log_scale| ≤ 10, |slope| ≤ {})",
                                      where, *log_scale, *slope, kMaxAdaptationSlope));
    ca.log_scale = *log_scale;
    ca.slope = *slope;
    if (!c.contains("ms_range")) return InvalidInput(where + ": missing 'ms_range'");
    Expected<std::vector<float>> range = JsonFloats(c["ms_range"], where + ": ms_range");
    if (!range.ok()) return range.status();
    if (range->size() != 2 || !((*range)[0] > 0) || (*range)[1] < (*range)[0])
      return InvalidInput(where + ": ms_range must be [lo, hi] with 0 < lo ≤ hi");
    ca.lo_ms = c["ms_range"][0].get<double>();
    ca.hi_ms = c["ms_range"][1].get<double>();
    Expected<std::size_t> kernels = JsonCount(c, "kernels");
    if (!kernels.ok()) return kernels.status().WithContext(where);
    ca.kernels = *kernels;
    Expected<double> spread = JsonNonNegative(c, "spread");
    if (!spread.ok()) return spread.status().WithContext(where);
    ca.spread = *spread;
    a.classes[name] = ca;
  }
  return a;
}

}  // namespace latte
