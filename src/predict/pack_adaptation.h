#pragma once
// A pack corrected for the machine at hand (`latte adapt`): a few dozen of the pack's own measured
// kernels are measured again here, and per kernel class (dense convs, depthwise convs, matrix
// products, the memory-bound rest) the ratio of today's time to the pack's is fitted as a
// function of the kernel's size: factor(ms) = exp(log_scale + slope · ln ms), ms clamped to the
// range measured. Every prediction of the pack is then multiplied by its class's factor. What is
// fitted here is only this arithmetic; measuring lives in calibrate/adapt.

#include <map>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "ir/kernel.h"

namespace latte {

/// The class a kernel is corrected by: "conv" (conv2d and transpose_conv2d, grouped or not),
/// "depthwise", "dense" (fully_connected, matmul) or "memory" (everything else: elementwise ops,
/// pools, resizes, data movement). Machines differ by class: arithmetic, SIMD width and memory
/// bandwidth do not scale alike.
std::string_view KernelClassOf(const Kernel& kernel);
/// Every class KernelClassOf gives, in a fixed order.
const std::vector<std::string>& KernelClasses();

/// One kernel of a class measured again: the pack's time and today's.
struct AdaptationPoint {
  double pack_ms = 0;
  double measured_ms = 0;
};

/// The correction of one class.
struct ClassAdaptation {
  double log_scale = 0;  // ln of the factor at 1 ms (with slope 0: at every size)
  double slope = 0;      // d ln(factor) / d ln(ms)
  double lo_ms = 0, hi_ms = 0;  // the pack's times the points spanned (the factor is flat outside)
  std::size_t kernels = 0;
  /// The factor's own uncertainty: the points' robust relative spread about the fit over √n.
  double spread = 0;
  double Factor(double ms) const;
  bool operator==(const ClassAdaptation& other) const = default;
};

/// Fits a class from its points: a Theil–Sen line of ln(measured / pack) over ln(pack ms) when
/// there are at least kMinPointsForSlope points spanning a factor of 2 in size (slope clamped to
/// ±kMaxAdaptationSlope), else the median ratio. kInvalidInput without points or with a time ≤ 0.
Expected<ClassAdaptation> FitClassAdaptation(std::span<const AdaptationPoint> points);
inline constexpr std::size_t kMinPointsForSlope = 6;
inline constexpr double kMaxAdaptationSlope = 0.3;

/// What `latte adapt` did to a pack, kept in it (provenance and the factors).
struct PackAdaptation {
  std::map<std::string, ClassAdaptation> classes;  // by KernelClassOf; "all" for a class not measured
  std::string command;
  std::string created;                 // ISO 8601 UTC
  nlohmann::json from_device = nlohmann::json::object();  // the pack's machine before
  double from_reference_p50_us = 0;    // its reference reading before (0: none)
  /// Whole random networks measured here over their prediction by the kernels' factors: already
  /// folded into every class's log_scale (kept to say so); 1 and 0 when none were used.
  double network_factor = 1;
  std::size_t networks = 0;
  /// The factor for a kernel whose unadapted prediction is `ms`: its class's, or "all"'s when its
  /// class had no kernels measured, or 1 when neither exists.
  double Factor(const Kernel& kernel, double ms) const;
  const ClassAdaptation* ClassFor(const Kernel& kernel) const;
  nlohmann::json ToJson() const;
  /// Fails naming the field that is missing or impossible (a factor must be finite and > 0).
  static Expected<PackAdaptation> FromJson(const nlohmann::json& json);
};

}  // namespace latte
