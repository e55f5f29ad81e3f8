#pragma once
// Drift correction of stored measurements. This host runs 5–10% faster or slower from one hour
// to the next, and a store gathers campaigns from many hours: a kernel measured at 10:00 and its
// neighbour measured at 18:00 disagree by the machine's drift, not by their shapes. Every
// campaign reads the drift reference kernel at its start, every 100 kernels and at its end
// (profile/campaign); a measurement is scaled by
//   (the pack's reference level) / (the reference's level at the measurement's time)
// where the level at a time is interpolated linearly between the campaign's readings either side
// (the nearest reading before its first or after its last), raised to the power of how far the
// store's own repeated kernels follow the reference (EstimateDriftFollow). All measurements then
// speak of one machine speed: the one the pack records and `latte validate`'s drift check compares
// with.
// Whether it makes repeated measurements of one kernel in different campaigns agree is measured
// by bench/probes/repeat_agreement (figures in BENCHMARKS.md).

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/status.h"
#include "db/store.h"

namespace latte {

/// Seconds since the epoch of an ISO 8601 UTC time as Latte stores them ("2026-11-23T10:05:58.785Z",
/// fraction and 'Z' optional); nullopt for anything else.
std::optional<double> ParseUtcTime(const std::string& text);

/// The drift reference's readings of each campaign, in time order.
class ReferenceLevels {
 public:
  /// A reading of `campaign` at `time` (stored text; a reading whose time cannot be parsed is not
  /// kept and Add returns false) of `p50_us` (> 0, else not kept).
  bool Add(std::int64_t campaign, const std::string& time, double p50_us);

  /// The reference's level in `campaign` at `time`: interpolated between the readings either side,
  /// the nearest one outside them; nullopt when the campaign has no reading or the time cannot be
  /// parsed.
  std::optional<double> At(std::int64_t campaign, const std::string& time) const;

 private:
  struct Reading {
    double seconds = 0;
    double sum_us = 0;  // readings taken at the same time are averaged
    int count = 0;
    double p50_us() const { return sum_us / count; }
  };
  std::map<std::int64_t, std::vector<Reading>> readings_;  // by campaign, in time order
};

/// The drift reference as the campaigns of some measurements read it.
struct CampaignReference {
  std::string kernel;             // the first reference kernel their readings name (empty: none)
  std::vector<double> readings;   // its readings' p50s (µs), sorted
  ReferenceLevels levels;
  /// The lower median of the readings (a reading taken); 0 when there is none.
  double LevelUs() const { return readings.empty() ? 0 : readings[(readings.size() - 1) / 2]; }
};

/// Reads the reference readings of the campaigns `measurements` belong to. Fails (naming the
/// store's row) on a damaged reading.
Expected<CampaignReference> ReadCampaignReference(const Store& store, const std::vector<StoredMeasurement>& measurements);
/// The campaigns `measurements` were taken in (those without one left out).
std::set<std::int64_t> CampaignsOf(const std::vector<StoredMeasurement>& measurements);
/// The same for campaigns given by id (the measurements' and the networks' measured in context).
Expected<CampaignReference> ReadCampaignReference(const Store& store, const std::set<std::int64_t>& campaigns);

/// How much of the reference's changes the measurements share: over the kernels the random
/// networks measured alone in more than one network (each of kMinFollowUs or more, once a
/// network), the least-squares slope of a measurement's log deviation from its kernel's mean on
/// the reference's log level at its time, and their correlation. On a steady host the reference
/// and the kernels move together (slope 1: correct by the reference in full); on a shared one a
/// reading is partly its own noise (the Xeon of sessions 40–43: slopes −0.54 to 0.72 over eight
/// stores), and scaling by (level / level then)^slope is the least-squares correction.
struct DriftFollow {
  double slope = 1, correlation = 0;
  std::size_t measurements = 0, kernels = 0;
  /// RMS of the measurements' log deviations from their kernel's mean, and of the reference's log
  /// level beside them from its mean: how far one kernel alone moves within the store, and how far
  /// the reference does.
  double kernel_rms = 0, level_rms = 0;
};
inline constexpr double kMinFollowUs = 50;  // below, the run's fixed cost subtracted dominates
inline constexpr std::size_t kMinFollowMeasurements = 30;  // fewer: no estimate
/// The reference's level must have moved by this RMS (in log) beside them: a level that stayed
/// put tells nothing of how far the kernels follow it (its deviations are rounding).
inline constexpr double kMinFollowLevelSpread = 1e-3;
/// The figures over whatever such measurements there are (slope 1, correlation 0 without any
/// deviation to fit: none, or a level that did not move).
DriftFollow MeasureDriftFollow(const ReferenceLevels& levels, const std::vector<StoredGraphLayer>& layers);
/// MeasureDriftFollow's, or nullopt with fewer than kMinFollowMeasurements such measurements, or a
/// level that moved by less than kMinFollowLevelSpread beside them (the correction is then in
/// full, as without networks): what the fit applies.
std::optional<DriftFollow> EstimateDriftFollow(const ReferenceLevels& levels, const std::vector<StoredGraphLayer>& layers);

/// Scales a layer measured in context by a drift factor: its time in the graph, its time alone and
/// its layout time alike, so that its ratio in the graph to alone stays as measured.
void ScaleLayerTimes(StoredGraphLayer& layer, double factor);

/// What correcting a fit's measurements did, for the fit's report.
struct DriftCorrection {
  bool requested = true;             // false: the fit was asked not to correct
  double level_us = 0;               // the level all were scaled to (the pack's reference p50)
  std::size_t corrected = 0;         // measurements scaled
  std::size_t uncorrected = 0;       // no reading of their campaign (imported tables, old stores)
  double min_factor = 1, median_factor = 1, max_factor = 1;  // over the corrected ones
  /// The reference's changes were applied to this power (DriftFollow's slope, clamped to 0–1; 1
  /// without an estimate), and what it was estimated on.
  double exponent = 1;
  std::optional<DriftFollow> follow;

  /// "drift-corrected 33075 of 33075 measurements to the reference's 71.45 µs (factors
  /// 0.809–1.083, median 1.002)", or why none were.
  std::string Describe() const;
};

/// Scales measurements to `level_us` with `levels` (which must outlive it), counting what it did.
class DriftCorrector {
 public:
  /// `requested` false: every factor is 1 (the fit was asked not to correct). With `follow`, each
  /// factor is (level / level then) to the power of its slope clamped to 0–1.
  DriftCorrector(const ReferenceLevels& levels, double level_us, bool requested = true,
                 std::optional<DriftFollow> follow = std::nullopt);
  /// The factor of a measurement taken at `time` in `campaign`; 1 (counted as uncorrected) when
  /// the campaign has no reading or the time cannot be parsed.
  double Factor(std::optional<std::int64_t> campaign, const std::string& time);
  DriftCorrection Finish() const;

 private:
  const ReferenceLevels& levels_;
  double level_us_;
  bool requested_;
  std::optional<DriftFollow> follow_;
  double exponent_ = 1;
  std::size_t uncorrected_ = 0;
  std::vector<double> factors_;
};

}  // namespace latte
