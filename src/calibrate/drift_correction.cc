#include "calibrate/drift_correction.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>

#include <map>
#include <set>

#include <fmt/format.h>

namespace latte {

std::optional<double> ParseUtcTime(const std::string& text) {
  std::tm tm{};
  double seconds = 0;
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%lf%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &seconds, &consumed) != 6) {
    return std::nullopt;
  }
  const std::string rest = text.substr(static_cast<std::size_t>(consumed));
  if (!(rest.empty() || rest == "Z") || !std::isfinite(seconds) || seconds < 0 || seconds >= 61 || tm.tm_mon < 1 ||
      tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59) {
    return std::nullopt;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  const std::time_t whole = timegm(&tm);
  if (whole == static_cast<std::time_t>(-1)) return std::nullopt;
  return static_cast<double>(whole) + seconds;
}

bool ReferenceLevels::Add(std::int64_t campaign, const std::string& time, double p50_us) {
  const std::optional<double> seconds = ParseUtcTime(time);
  if (!seconds || !std::isfinite(p50_us) || p50_us <= 0) return false;
  std::vector<Reading>& readings = readings_[campaign];
  auto at = std::lower_bound(readings.begin(), readings.end(), *seconds,
                             [](const Reading& r, double t) { return r.seconds < t; });
  if (at == readings.end() || at->seconds != *seconds) at = readings.insert(at, Reading{*seconds});
  at->sum_us += p50_us;
  ++at->count;
  return true;
}

std::optional<double> ReferenceLevels::At(std::int64_t campaign, const std::string& time) const {
  const auto found = readings_.find(campaign);
  const std::optional<double> t = ParseUtcTime(time);
  if (found == readings_.end() || found->second.empty() || !t) return std::nullopt;
  const std::vector<Reading>& readings = found->second;
  const auto after = std::lower_bound(readings.begin(), readings.end(), *t,
                                      [](const Reading& r, double seconds) { return r.seconds < seconds; });
  if (after == readings.begin()) return readings.front().p50_us();
  if (after == readings.end()) return readings.back().p50_us();
  const Reading& before = *std::prev(after);
  const double w = (*t - before.seconds) / (after->seconds - before.seconds);  // times differ: merged in Add
  return before.p50_us() + w * (after->p50_us() - before.p50_us());
}

std::set<std::int64_t> CampaignsOf(const std::vector<StoredMeasurement>& measurements) {
  std::set<std::int64_t> campaigns;
  for (const StoredMeasurement& m : measurements)
    if (m.campaign) campaigns.insert(*m.campaign);
  return campaigns;
}

Expected<CampaignReference> ReadCampaignReference(const Store& store,
                                                  const std::vector<StoredMeasurement>& measurements) {
  return ReadCampaignReference(store, CampaignsOf(measurements));
}

Expected<CampaignReference> ReadCampaignReference(const Store& store, const std::set<std::int64_t>& campaigns) {
  CampaignReference reference;
  for (std::int64_t id : campaigns) {
    LATTE_ASSIGN_OR_RETURN(std::vector<ReferenceMeasurement> readings, store.ListReferences(id));
    for (const ReferenceMeasurement& r : readings) {
      if (reference.kernel.empty()) reference.kernel = r.kernel_key;
      if (r.kernel_key != reference.kernel || r.p50_us <= 0) continue;
      reference.readings.push_back(r.p50_us);
      reference.levels.Add(id, r.time, r.p50_us);
    }
  }
  std::sort(reference.readings.begin(), reference.readings.end());
  if (reference.readings.empty()) reference.kernel.clear();
  return reference;
}

std::string DriftCorrection::Describe() const {
  if (!requested) return "not drift-corrected: fitted on the measurements as stored";
  if (corrected == 0) {
    return level_us > 0 ? "not drift-corrected: no measurement could be placed among its campaign's reference readings"
                        : "not drift-corrected: no reading of the drift reference was taken with these measurements";
  }
  std::string text = fmt::format(
      "drift-corrected {} of {} measurements to the reference's {:.2f} µs (factors {:.3f}–{:.3f}, median {:.3f})",
      corrected, corrected + uncorrected, level_us, min_factor, max_factor, median_factor);
  if (follow) {
    text += fmt::format("; by {:.2f} of the reference's changes (the slope of {} measurements of {} kernels measured alone "
                        "in more than one network on its level, correlation {:.2f})",
                        exponent, follow->measurements, follow->kernels, follow->correlation);
  }
  if (uncorrected > 0) text += fmt::format("; {} left as measured (no reading of the reference taken with them)", uncorrected);
  return text;
}

DriftFollow MeasureDriftFollow(const ReferenceLevels& levels, const std::vector<StoredGraphLayer>& layers) {
  // Per kernel, its measurements alone (once a network) with the reference's log level then.
  std::map<std::string, std::vector<std::pair<double, double>>> by_kernel;
  std::set<std::string> seen;
  for (const StoredGraphLayer& layer : layers) {
    if (!(layer.record.alone_us > 0)) continue;
    const std::optional<double> level = levels.At(layer.campaign, layer.record.time);
    if (!level) continue;
    const std::string key = layer.record.kernel.Key();
    if (!seen.insert(key + "\n" + std::to_string(layer.campaign) + "\n" + layer.record.graph).second) continue;
    by_kernel[key].push_back({std::log(layer.record.alone_us), std::log(*level)});
  }
  DriftFollow follow;
  double sxx = 0, syy = 0, sxy = 0;
  for (const auto& [key, rows] : by_kernel) {
    if (rows.size() < 2) continue;
    double alone = 0, level = 0;
    for (const auto& [a, l] : rows) alone += a, level += l;
    alone /= static_cast<double>(rows.size());
    level /= static_cast<double>(rows.size());
    if (alone < std::log(kMinFollowUs)) continue;
    for (const auto& [a, l] : rows) {
      sxx += (l - level) * (l - level);
      syy += (a - alone) * (a - alone);
      sxy += (l - level) * (a - alone);
    }
    follow.measurements += rows.size();
    ++follow.kernels;
  }
  if (follow.measurements == 0) return follow;
  follow.kernel_rms = std::sqrt(syy / static_cast<double>(follow.measurements));
  follow.level_rms = std::sqrt(sxx / static_cast<double>(follow.measurements));
  if (sxx > 0 && syy > 0) {
    follow.slope = sxy / sxx;
    follow.correlation = sxy / std::sqrt(sxx * syy);
  }
  return follow;
}

std::optional<DriftFollow> EstimateDriftFollow(const ReferenceLevels& levels, const std::vector<StoredGraphLayer>& layers) {
  const DriftFollow follow = MeasureDriftFollow(levels, layers);
  if (follow.measurements < kMinFollowMeasurements || !(follow.kernel_rms > 0) || !(follow.level_rms >= kMinFollowLevelSpread))
    return std::nullopt;
  return follow;
}

void ScaleLayerTimes(StoredGraphLayer& layer, double factor) {
  layer.record.in_graph_us *= factor;
  layer.record.alone_us *= factor;
  layer.record.graph_layout_us *= factor;
}

DriftCorrector::DriftCorrector(const ReferenceLevels& levels, double level_us, bool requested,
                               std::optional<DriftFollow> follow)
    : levels_(levels),
      level_us_(level_us),
      requested_(requested),
      follow_(follow),
      exponent_(follow ? std::clamp(follow->slope, 0.0, 1.0) : 1.0) {}

double DriftCorrector::Factor(std::optional<std::int64_t> campaign, const std::string& time) {
  const std::optional<double> level =
      requested_ && campaign && level_us_ > 0 ? levels_.At(*campaign, time) : std::optional<double>{};
  if (!level) {
    ++uncorrected_;
    return 1;
  }
  factors_.push_back(std::pow(level_us_ / *level, exponent_));
  return factors_.back();
}

DriftCorrection DriftCorrector::Finish() const {
  DriftCorrection summary;
  summary.requested = requested_;
  summary.level_us = level_us_;
  summary.corrected = factors_.size();
  summary.uncorrected = uncorrected_;
  summary.exponent = exponent_;
  summary.follow = follow_;
  if (!factors_.empty()) {
    std::vector<double> sorted = factors_;
    std::sort(sorted.begin(), sorted.end());
    summary.min_factor = sorted.front();
    summary.max_factor = sorted.back();
    summary.median_factor = sorted[sorted.size() / 2];
  }
  return summary;
}

}  // namespace latte
