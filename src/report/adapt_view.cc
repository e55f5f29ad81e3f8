#include "report/adapt_view.h"

#include <cmath>

#include <fmt/format.h>

#include "report/text_table.h"

namespace latte {
namespace {

// The factor at the smallest, middle (geometric) and largest kernel the class measured.
struct ClassFactors {
  double small = 1, middle = 1, large = 1;
};
ClassFactors FactorsOf(const ClassAdaptation& c) {
  return {c.Factor(c.lo_ms), c.Factor(std::sqrt(c.lo_ms * c.hi_ms)), c.Factor(c.hi_ms)};
}

}  // namespace

std::string AdaptReportText(const AdaptResult& result) {
  if (!result.pack.adaptation) return "adapt: interrupted, nothing adapted\n";
  const PackAdaptation& a = *result.pack.adaptation;
  TextTable table({{"class"}, {"kernels", TextTable::kRight}, {"pack ms range"}, {"factor small", TextTable::kRight},
                   {"middle", TextTable::kRight}, {"large", TextTable::kRight}, {"±", TextTable::kRight}});
  for (const auto& [name, c] : a.classes) {
    const ClassFactors f = FactorsOf(c);
    table.AddRow({name, std::to_string(c.kernels), fmt::format("{:.4f}–{:.4f}", c.lo_ms, c.hi_ms),
                  fmt::format("{:.3f}", f.small), fmt::format("{:.3f}", f.middle), fmt::format("{:.3f}", f.large),
                  fmt::format("{:.1f}%", 100 * c.spread)});
  }
  std::string text = fmt::format("adapted on this machine: {} of the pack's kernels measured again in {:.0f} s\n",
                                 result.kernels.size(), result.secs);
  text += table.Render();
  text += "(a class with no kernel of its own takes the factor of \"all\")\n";
  if (a.networks > 0) {
    text += fmt::format("whole random networks: {} measured here at {:.3f}x what the kernels' factors predict (median); "
                        "every factor above includes it\n",
                        a.networks, a.network_factor);
  } else if (!result.network_note.empty()) {
    text += "whole random networks: " + result.network_note + "\n";
  }
  if (result.reference_now_us > 0 && a.from_reference_p50_us > 0) {
    text += fmt::format("reference kernel: {:.1f} us here, {:.1f} us when the pack was measured ({:.2f}x)\n",
                        result.reference_now_us, a.from_reference_p50_us, result.reference_now_us / a.from_reference_p50_us);
  }
  if (!result.skipped.empty())
    text += fmt::format("{} kernel(s) could not run here and were left out, e.g. {}\n", result.skipped.size(),
                        result.skipped.front());
  return text;
}

nlohmann::json AdaptReportJson(const AdaptResult& result) {
  nlohmann::json classes = nlohmann::json::object();
  if (result.pack.adaptation) {
    for (const auto& [name, c] : result.pack.adaptation->classes) {
      const ClassFactors f = FactorsOf(c);
      classes[name] = {{"kernels", c.kernels}, {"factor_small", f.small}, {"factor_middle", f.middle},
                       {"factor_large", f.large}, {"slope", c.slope}, {"spread", c.spread},
                       {"ms_range", {c.lo_ms, c.hi_ms}}};
    }
  }
  nlohmann::json kernels = nlohmann::json::array();
  for (const AdaptedKernel& k : result.kernels)
    kernels.push_back({{"kernel", k.kernel.Key()}, {"class", k.kernel_class}, {"pack_ms", k.pack_ms},
                       {"measured_ms", k.measured_ms}});
  nlohmann::json networks = nlohmann::json::array();
  for (const AdaptedNetwork& n : result.networks)
    networks.push_back({{"nodes", n.nodes}, {"predicted_ms", n.predicted_ms}, {"measured_ms", n.measured_ms}});
  return {{"classes", classes}, {"kernels", kernels}, {"networks", networks}, {"network_factor", result.network_factor},
          {"network_note", result.network_note}, {"skipped", result.skipped},
          {"reference_now_us", result.reference_now_us}, {"secs", result.secs}, {"interrupted", result.interrupted}};
}

}  // namespace latte
