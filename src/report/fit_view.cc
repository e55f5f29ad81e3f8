#include "report/fit_view.h"

#include <fmt/format.h>

#include "report/text_table.h"

namespace latte {

std::string FitReportText(const StoreFit& fit, int folds) {
  auto percent = [](double value) { return fmt::format("{:.1f}%", value); };
  TextTable table({{"kind"}, {"n", TextTable::kRight}, {"of siblings", TextTable::kRight}, {"predictor"},
                   {"RMSPE", TextTable::kRight}, {"±5%", TextTable::kRight}, {"±10%", TextTable::kRight}, {"note"}});
  for (const KindFitReport& kind : fit.fit.report) {
    for (const PredictorScore& score : kind.scores) {
      const bool scored = score.cv.n > 0;
      std::string note = score.name == kind.selected ? "selected" : "";
      if (score.failed > 0) note += (note.empty() ? "" : "; ") + std::to_string(score.failed) + " unpredicted";
      // The parts' row says how it compared with the kind's own selected predictor.
      if ((!scored || score.name == "sum-of-parts") && !score.why.empty()) note += (note.empty() ? "" : "; ") + score.why;
      table.AddRow({kind.kind, std::to_string(kind.samples), std::to_string(kind.borrowed), score.name, scored ? percent(score.cv.rmspe_pct) : "-",
                    scored ? percent(score.cv.within5_pct) : "-", scored ? percent(score.cv.within10_pct) : "-", note});
    }
  }
  const PackInfo& info = fit.fit.pack.info;
  // The header counts what was fitted; what was not is said right below it, with why.
  const std::size_t fitted = fit.measurements - fit.fit.skipped_samples;
  std::string text = fmt::format("{}-fold cross-validation on {} measurements ({}, {} {}, {} {}, {})\n", folds,
                                 fitted, fit.device_key, info.backend, info.backend_version, info.threads,
                                 info.threads == 1 ? "thread" : "threads", info.precision);
  if (!fit.left_out.empty()) {
    text += fmt::format("left out {} of {} matching measurements, whose figures are not times in the store: {}\n",
                        fit.left_out.size(), fit.measurements + fit.left_out.size(), DescribeLeftOut(fit.left_out));
  }
  if (fit.fit.skipped_samples > 0) {
    text += fmt::format("left out {} measurements with a latency <= 0\n", fit.fit.skipped_samples);
  }
  if (fit.prior_used + fit.prior_replaced > 0) {
    text += fmt::format("with {} of {} kernels of {} as adapted to this machine (×{:.3f} to the reference's level; "
                        "fitted, never table hits), spread over sizes ({} more it had were measured here: those "
                        "measurements are fitted instead)\n",
                        fit.prior_fitted, fit.prior_used, fit.prior_source, fit.prior_scale, fit.prior_replaced);
  }
  text += fit.drift.Describe() + "\n";
  if (fit.layers_drift.corrected + fit.layers_drift.uncorrected > 0)
    text += "layers of networks measured in context: " + fit.layers_drift.Describe() + "\n";
  text += table.Render();
  text += "(n counts the samples a kind was fitted on; 'of siblings' those of the kinds that differ from it only in "
          "the clamps that end them, relu, relu6 or relu_n1_to_1, run as one kernel: fitted as this kind, never table "
          "hits)\n";
  if (!fit.context_note.empty()) text += fit.context_note + "\n";
  if (!fit.interval_note.empty()) text += fit.interval_note + "\n";
  return text;
}

}  // namespace latte
