#pragma once
// Fitting a pack: per kernel kind, k-fold cross-validation of every fitted predictor type
// (RMSPE and the share within ±5% / ±10%), the best one selected, then every predictor refitted
// on all samples, with the table of exact measurements in front.

#include <atomic>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "predict/pack.h"
#include "predict/predictor.h"

namespace latte {

struct FitOptions {
  PredictorOptions predictor;
  int folds = 5;
  unsigned seed = 0;  // shuffles samples into folds
  /// Fitted predictor types to try (FittedPredictorNames() order); roofline always goes last
  /// unless it cross-validates best.
  std::vector<std::string> predictors = FittedPredictorNames();
  /// Below this many samples a kind is not cross-validated; only interp and roofline are fitted.
  std::size_t min_samples_for_cv = 10;
  /// Fit each kind on the samples of the kinds that differ from it only in the clamps that end
  /// them too (relu, relu6, relu_n1_to_1), as its own kind and never as table hits, where it has
  /// no sample of the same kernel; and a clamp-free kind only its clamped forms were measured of,
  /// on theirs. A fused clamp that runs inside the op costs about nothing beside it.
  bool pool_clamp_siblings = true;
  /// Main ops whose clamps the backend runs as a pass of their own (BackendFactory::clamps_run_apart;
  /// calibrate and `latte fit` set it from the backend): their kinds are never pooled.
  std::set<OpKind> clamps_run_apart;
  /// Main ops among the ones whose work PredictorOptions::channel_tile counts in whole vectors of
  /// channels that the backend computes otherwise (BackendFactory::channels_not_in_vectors): their
  /// kinds count it as is.
  std::set<OpKind> channels_not_in_vectors;
  /// Raised by a signal handler (a first Ctrl-C): the fit stops before its next predictor fit
  /// (seconds, where the whole fit of a large store takes minutes) and says it was interrupted.
  const std::atomic<bool>* stop = nullptr;
  bool stopped() const { return stop != nullptr && stop->load(); }
};

/// Cross-validated accuracy of one predictor type on one kind.
struct PredictorScore {
  std::string name;
  AccuracyMetrics cv;        // over the held-out samples it could predict
  std::size_t failed = 0;    // held-out samples it had no answer for
  std::string why;           // the first failure (or why it could not be fitted at all)
};

/// What FitPack did for one kind.
struct KindFitReport {
  std::string kind;
  std::size_t samples = 0;   // fitted on, its clamp siblings' included
  std::size_t borrowed = 0;  // of which from its clamp siblings (FitOptions::pool_clamp_siblings)
  std::vector<PredictorScore> scores;  // in FitOptions::predictors order
  std::string selected;                // "" when nothing could be fitted (the table still answers exact hits)
};

struct FitResult {
  Pack pack;
  std::vector<KindFitReport> report;
  std::size_t skipped_samples = 0;  // latency <= 0 or not finite
  bool interrupted = false;         // FitOptions::stop was raised: the pack is incomplete, not to be saved
};

/// Fits a pack on `samples` for `info` (copied into the pack). Fails when no sample is usable or
/// an option is invalid (unknown predictor name, folds < 2).
Expected<FitResult> FitPack(std::span<const TrainingSample> samples, const PackInfo& info, const FitOptions& options);

/// What FitPack ranks predictors by: the RMSPE of held-out predictions with each error capped at
/// ±100%. A kernel in a regime of its own (XNNPACK runs a batch_norm of one channel as a scalar
/// multiply, 150× faster than its 9-channel neighbours) is missed by every predictor that learns
/// from neighbours, and uncapped its one error outweighs hundreds of others: the roofline, which
/// knows no regimes and is 45% off everywhere, would be selected. Beyond 100% all are equally wrong.
/// The RMSPE reported (and the spread) stays uncapped.
double SelectionRmspePct(std::span<const double> predicted, std::span<const double> measured);

/// Held-out predictions of one predictor type by k-fold cross-validation: `predicted[i]` is the
/// prediction for samples[i] (NaN when it had none). Exposed for benchmarks and tests.
Expected<std::vector<double>> CrossValidate(std::span<const TrainingSample> samples, const std::string& predictor,
                                            const FitOptions& options, std::string* first_failure = nullptr);

}  // namespace latte
