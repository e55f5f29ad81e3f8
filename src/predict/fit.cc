#include "predict/fit.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ir/fuse_activations.h"
#include "predict/predictors.h"

namespace latte {
namespace {

// The kernel without the clamps that end it ("depthwise_conv2d+relu6" -> "depthwise_conv2d").
Kernel ClampFree(Kernel kernel) {
  while (!kernel.fused.empty() && IsFoldedActivation(kernel.fused.back())) kernel.fused.pop_back();
  return kernel;
}
std::string ClampFreeKind(const Kernel& kernel) { return ModelKind(ClampFree(kernel)); }

// The samples `kind` is fitted on: its own, then those of its clamp siblings (ClampFreeKind), each
// as a kernel of `kind` (its clamps replaced by the kind's own), not measured as such (never a
// table hit), and only where no earlier sample has the same kernel. A fused clamp runs in the
// op's output loop (XNNPACK and oneDNN clamp as they store): the same kernel's time whatever the
// clamp, so a kind the sampler drew rarely (plain depthwise_conv2d beside its relu and relu6
// forms) is fitted on all of them instead of extrapolating from a few dozen, and a clamp-free
// kind it never drew (plain fully_connected beside fully_connected+relu) on theirs alone.
// `fused` is the kind's own fused ops.
std::vector<TrainingSample> WithClampSiblings(const std::vector<TrainingSample>& own, const std::vector<OpKind>& fused,
                                              const std::vector<const std::vector<TrainingSample>*>& siblings,
                                              std::size_t& borrowed) {
  std::vector<TrainingSample> samples = own;
  std::set<std::string> keys;
  for (const TrainingSample& s : own) keys.insert(TableKey(s.kernel, s.threads));
  for (const std::vector<TrainingSample>* sibling : siblings) {
    for (TrainingSample s : *sibling) {
      s.kernel.fused = fused;
      s.measured = false;
      if (keys.insert(TableKey(s.kernel, s.threads)).second) {
        samples.push_back(std::move(s));
        ++borrowed;
      }
    }
  }
  return samples;
}

// What a cross-validated fused kind was fitted on, and its selected predictor's held-out
// predictions of those samples (NaN where it had none).
struct FusedFit {
  std::vector<TrainingSample> samples;
  std::vector<double> held_out;
};

// A fused kind the pack has few measurements of is fitted on those few (the roofline predicted an
// int8 conv2d+add+relu of 24 channels at 64×64 in 37 µs from 29 samples; it took 84), while its
// parts, conv2d and add+relu, were measured by the hundred. Each fused kind's parts, predicted by
// their own kinds (never fitted on its samples: held out by construction, since only kinds that fuse
// more than clamps are decided so, and no part's kind pools those), are compared sample by
// sample with its selected predictor held out, and predict it when they come closer on most of its
// samples. Most, not a mean error: the parts' misses are a few odd kernels of a microsecond (+111%
// on a 7×7 conv of 4×4 pixels) where the fitted kind's are the common sizes, and an RMSPE ranked the
// roofline (19.7%, 7 of 29 within ±5%) over parts within ±5% on 16 of 29 (24.2%). Kinds with fewer
// fused ops are decided first: a kind's parts are then predicted as they will be.
void DecideFusedKindsByParts(const std::map<std::string, FusedFit>& fused_fits, FitResult& result) {
  if (fused_fits.empty()) return;
  // Scored without the tables: a part that fusion detection measured alone for this very kernel
  // would be a lookup, where an unseen kernel's parts are predicted. Put back before returning.
  std::map<std::string, std::unique_ptr<KernelPredictor>> tables;
  for (auto& [kind, model] : result.pack.kinds) tables[kind] = std::move(model.table);
  std::vector<std::pair<std::size_t, std::string>> order;
  for (const auto& [kind, fit] : fused_fits) order.emplace_back(fit.samples.front().kernel.fused.size(), kind);
  std::stable_sort(order.begin(), order.end());
  for (const auto& [fused_ops, kind] : order) {
    const FusedFit& fit = fused_fits.at(kind);
    std::vector<double> got, measured;
    bool answered = true;
    for (const TrainingSample& s : fit.samples) {
      Expected<Prediction> p = result.pack.PredictFromParts(s.kernel, s.threads);
      if (!p.ok()) {
        answered = false;
        break;
      }
      got.push_back(p->ms);
      measured.push_back(s.p50_ms);
    }
    if (!answered) continue;
    std::size_t closer = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      const double own = fit.held_out[i];
      closer += std::isnan(own) || std::abs(got[i] - measured[i]) < std::abs(own - measured[i]);
    }
    auto report = std::find_if(result.report.begin(), result.report.end(), [&](const KindFitReport& r) { return r.kind == kind; });
    PredictorScore score;
    score.name = std::string(PredictionSourceName(PredictionSource::kSumOfParts));
    score.cv = ComputeAccuracy(got, measured);
    score.why = fmt::format("closer than {} on {} of {}", report->selected, closer, got.size());
    report->scores.push_back(score);
    if (2 * closer <= got.size()) continue;
    KindModel& model = result.pack.kinds.at(kind);
    model.by_parts = true;
    model.cv[score.name] = score.cv;
    report->selected = score.name;
  }
  for (auto& [kind, table] : tables) result.pack.kinds.at(kind).table = std::move(table);
}

}  // namespace

Expected<std::vector<double>> CrossValidate(std::span<const TrainingSample> samples, const std::string& name,
                                            const FitOptions& options, std::string* first_failure) {
  if (options.folds < 2) return InvalidInput("cross-validation needs 2 or more folds, not " + std::to_string(options.folds));
  std::vector<std::size_t> order(samples.size());
  std::iota(order.begin(), order.end(), 0);
  std::mt19937 rng(options.seed);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<double> predicted(samples.size(), std::numeric_limits<double>::quiet_NaN());
  for (int fold = 0; fold < options.folds; ++fold) {
    std::vector<TrainingSample> train;
    std::vector<std::size_t> test;
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (static_cast<int>(i % options.folds) == fold) test.push_back(order[i]);
      else train.push_back(samples[order[i]]);
    }
    if (test.empty() || train.empty()) continue;
    if (options.stopped()) break;  // the caller sees the flag and discards the fit
    LATTE_ASSIGN_OR_RETURN(std::unique_ptr<KernelPredictor> predictor, MakePredictor(name, options.predictor));
    Status fitted = predictor->Fit(train);
    if (!fitted.ok()) {
      if (first_failure && first_failure->empty()) *first_failure = fitted.message();
      continue;
    }
    for (std::size_t i : test) {
      Expected<Prediction> p = predictor->Predict(samples[i].kernel, samples[i].threads);
      if (p.ok()) predicted[i] = p->ms;
      else if (first_failure && first_failure->empty()) *first_failure = p.status().message();
    }
  }
  return predicted;
}

double SelectionRmspePct(std::span<const double> predicted, std::span<const double> measured) {
  return RmspePct(predicted, measured, 1.0);
}

Expected<FitResult> FitPack(std::span<const TrainingSample> samples, const PackInfo& info, const FitOptions& options) {
  for (const std::string& name : options.predictors) {
    const PredictorType* type = FindPredictorType(name);
    if (type == nullptr || !type->fitted)
      return InvalidInput(fmt::format("unknown predictor '{}' (fitted predictors: {})", name,
                                      fmt::join(FittedPredictorNames(), ", ")));
  }
  if (options.folds < 2) return InvalidInput("--folds must be 2 or more, not " + std::to_string(options.folds));
  FitResult result;
  result.pack.info = info;
  std::map<std::string, std::vector<TrainingSample>> by_kind;
  for (const TrainingSample& s : samples) {
    if (!(s.p50_ms > 0) || !std::isfinite(s.p50_ms)) {
      ++result.skipped_samples;
      continue;
    }
    by_kind[ModelKind(s.kernel)].push_back(s);
  }
  if (by_kind.empty()) return InvalidInput("no usable measurements to fit (" + std::to_string(samples.size()) + " given)");
  std::map<std::string, std::vector<std::string>> clamp_siblings;  // clamp-free kind -> its kinds
  std::map<std::string, Kernel> clamp_free;                         // clamp-free kind -> a kernel of it
  for (const auto& [kind, kind_samples] : by_kind) {
    const Kernel base = ClampFree(kind_samples.front().kernel);
    clamp_siblings[ModelKind(base)].push_back(kind);
    clamp_free.emplace(ModelKind(base), base);
  }
  // Every kind to fit, with a kernel of it: the measured ones, and (pooling) each clamp-free kind
  // of which only clamped forms were measured.
  std::map<std::string, Kernel> kinds;
  for (const auto& [kind, kind_samples] : by_kind) kinds.emplace(kind, kind_samples.front().kernel);
  auto pools = [&](const Kernel& kernel) { return options.pool_clamp_siblings && !options.clamps_run_apart.count(kernel.op); };
  for (const auto& [kind, kernel] : clamp_free)
    if (pools(kernel)) kinds.emplace(kind, kernel);
  const std::vector<TrainingSample> none;
  // Whether a fused kind's parts predict it better is decided once every kind is fitted.
  std::map<std::string, FusedFit> fused_fits;

  FitOptions scalar_channels = options;  // for a main op the backend does not vectorize by channels
  scalar_channels.predictor.channel_tile = 1;

  for (const auto& [kind, kind_kernel] : kinds) {
    if (options.stopped()) {
      result.interrupted = true;
      return result;
    }
    const FitOptions& kind_options = options.channels_not_in_vectors.count(kind_kernel.op) ? scalar_channels : options;
    auto own_it = by_kind.find(kind);
    const std::vector<TrainingSample>& own_samples = own_it != by_kind.end() ? own_it->second : none;
    KindModel model;
    model.kind = kind;
    model.samples = own_samples.size();
    // The table answers only what was measured: a sample from elsewhere is no exact hit.
    std::vector<TrainingSample> measured;
    for (const TrainingSample& s : own_samples)
      if (s.measured) measured.push_back(s);
    std::vector<const std::vector<TrainingSample>*> siblings;
    if (pools(kind_kernel))
      for (const std::string& sibling : clamp_siblings.at(ClampFreeKind(kind_kernel)))
        if (sibling != kind) siblings.push_back(&by_kind.at(sibling));
    std::size_t borrowed = 0;
    const std::vector<TrainingSample> kind_samples = WithClampSiblings(own_samples, kind_kernel.fused, siblings, borrowed);
    for (const TrainingSample& s : kind_samples) model.ranges.Extend(s.kernel, s.threads);
    if (!measured.empty()) {
      auto table = std::make_unique<TablePredictor>();
      LATTE_RETURN_IF_ERROR(table->Fit(measured));
      model.table = std::move(table);
    }

    KindFitReport report;
    report.kind = kind;
    report.samples = kind_samples.size();
    report.borrowed = borrowed;
    bool cross_validate = kind_samples.size() >= options.min_samples_for_cv;
    std::vector<std::pair<double, std::string>> ranked;  // (SelectionRmspePct, name)
    std::map<std::string, std::vector<double>> held_out;  // each predictor's cross-validated predictions
    for (const std::string& name : options.predictors) {
      const PredictorType& type = *FindPredictorType(name);  // checked above
      PredictorScore score;
      score.name = name;
      double selection_pct = 0;
      if (!cross_validate && !type.fits_few_samples) {
        score.why = "too few samples (" + std::to_string(kind_samples.size()) + ") to fit";
        report.scores.push_back(score);
        continue;
      }
      if (cross_validate) {
        LATTE_ASSIGN_OR_RETURN(std::vector<double> predicted, CrossValidate(kind_samples, name, kind_options, &score.why));
        held_out[name] = predicted;
        std::vector<double> got, measured;
        for (std::size_t i = 0; i < predicted.size(); ++i) {
          if (std::isnan(predicted[i])) {
            ++score.failed;
          } else {
            got.push_back(predicted[i]);
            measured.push_back(kind_samples[i].p50_ms);
          }
        }
        score.cv = ComputeAccuracy(got, measured);
        selection_pct = SelectionRmspePct(got, measured);
      }
      if (options.stopped()) {
        result.interrupted = true;
        return result;
      }
      LATTE_ASSIGN_OR_RETURN(std::unique_ptr<KernelPredictor> predictor, MakePredictor(name, kind_options.predictor));
      Status fitted = predictor->Fit(kind_samples);
      if (!fitted.ok()) {
        if (score.why.empty()) score.why = fitted.message();
        report.scores.push_back(score);
        continue;
      }
      if (!cross_validate) {
        score.why = fmt::format("not cross-validated: {} samples (cross-validation needs {})", kind_samples.size(),
                                options.min_samples_for_cv);
      }
      // One standard deviation of relative error, as cross-validation saw it.
      predictor->set_relative_spread(score.cv.rmspe_pct / 100);
      if (cross_validate) model.cv[name] = score.cv;
      // A predictor that failed on held-out samples ranks after every one that answered all.
      double failed_share = score.cv.n + score.failed > 0 ? double(score.failed) / double(score.cv.n + score.failed) : 0;
      // Without cross-validation, the registry's order ranks them.
      double key = cross_validate ? selection_pct + (failed_share > 0 ? 1e6 * failed_share : 0)
                                  : static_cast<double>(&type - PredictorTypes().data());
      ranked.emplace_back(key, name);
      model.fitted[name] = std::move(predictor);
      report.scores.push_back(score);
    }
    std::stable_sort(ranked.begin(), ranked.end(), [](auto& a, auto& b) { return a.first < b.first; });
    for (const auto& [key, name] : ranked) model.order.push_back(name);
    // A fallback (roofline) goes last, unless it is the best there is.
    auto fallback = std::find_if(model.order.begin(), model.order.end(),
                                 [](const std::string& name) { return FindPredictorType(name)->fallback; });
    if (fallback != model.order.end() && fallback != model.order.begin())
      std::rotate(fallback, fallback + 1, model.order.end());
    // Trees answer every kernel, so whatever comes after the first tree model is never reached:
    // not kept (a pack then carries one tree ensemble per kind, not two; the report keeps all
    // scores). But beyond the sizes a tree was fitted on it answers the time per unit of work of the
    // largest it saw, in whatever regime their other parameters put them: a streaming kind keeps
    // the first predictor after it that extrapolates in bytes, for the kernels interpolation
    // declines (Pack::PredictUnadapted). ONNX Runtime's same-shape muls at twice the store's
    // largest map were 3-5 times their time by the gbdt.
    auto tree = std::find_if(model.order.begin(), model.order.end(), [](const std::string& name) { return IsTreePredictor(name); });
    if (tree != model.order.end()) {
      auto kept = tree + 1;
      if (IsStreamingKernel(kind_kernel)) {
        auto extrapolator = std::find_if(tree + 1, model.order.end(), [](const std::string& name) { return ExtrapolatesBytes(name); });
        if (extrapolator != model.order.end()) std::iter_swap(kept++, extrapolator);
      }
      for (auto it = kept; it != model.order.end(); ++it) model.fitted.erase(*it);
      model.order.erase(kept, model.order.end());
    }
    report.selected = model.order.empty() ? "" : model.order.front();
    // Only a kind that fuses more than clamps: a clamp's kind pools its clamp-free kind's samples
    // and the other way round, so conv2d's predictor was fitted on conv2d+relu6's very samples
    // and would "predict" them as parts in-sample.
    if (cross_validate && !ClampFree(kind_kernel).fused.empty() && !ranked.empty())
      fused_fits[kind] = {kind_samples, held_out[ranked.front().second]};
    result.report.push_back(std::move(report));
    result.pack.kinds[kind] = std::move(model);
  }
  DecideFusedKindsByParts(fused_fits, result);
  return result;
}

}  // namespace latte
